/* Spray, foam and bubbles as soft point sprites (demo_diffuse.h; shaders/diffuse.*). */
#include "demo_diffuse.h"
#include "demo_shader.h"

#include <stdlib.h>
#include <string.h>

pbfcl_status pbfcl_demo_diffuse_create(pbfcl_demo_diffuse *df, const char *shader_dir)
{
    memset(df, 0, sizeof *df);
    PBFCL_TRY(pbfcl_demo_shader_program(shader_dir, "diffuse.vert", "diffuse.frag", &df->program));
    df->u_view = glGetUniformLocation(df->program, "u_view");
    df->u_proj = glGetUniformLocation(df->program, "u_proj");
    df->u_radius = glGetUniformLocation(df->program, "u_radius");
    df->u_point_scale = glGetUniformLocation(df->program, "u_point_scale");
    df->u_types = glGetUniformLocation(df->program, "u_types");
    df->u_lift = glGetUniformLocation(df->program, "u_lift");
    glGenVertexArrays(1, &df->vao);
    glGenBuffers(1, &df->vbo);
    glBindVertexArray(df->vao);
    glBindBuffer(GL_ARRAY_BUFFER, df->vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 16, (void *)0);
    glBindVertexArray(0);
    return PBFCL_OK;
}

void pbfcl_demo_diffuse_destroy(pbfcl_demo_diffuse *df)
{
    if (df->vbo)
        glDeleteBuffers(1, &df->vbo);
    if (df->vao)
        glDeleteVertexArrays(1, &df->vao);
    if (df->program)
        glDeleteProgram(df->program);
    free(df->host);
    memset(df, 0, sizeof *df);
}

pbfcl_status pbfcl_demo_diffuse_update(pbfcl_demo_diffuse *df, pbfcl_solver *solver)
{
    size_t count = 0;
    PBFCL_TRY(pbfcl_solver_diffuse_count(solver, &count, NULL));
    if (count > df->host_cap) {
        size_t cap = count + count / 2;
        float *grown = realloc(df->host, cap * 16);
        if (!grown) {
            pbfcl_errorf("out of host memory for %zu diffuse particles", cap);
            return PBFCL_ERR_OUT_OF_MEMORY;
        }
        df->host = grown, df->host_cap = cap;
        glBindBuffer(GL_ARRAY_BUFFER, df->vbo);
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(cap * 16), NULL, GL_STREAM_DRAW);
    }
    df->count = count;
    memset(df->by_type, 0, sizeof df->by_type);
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_solver_get_diffuse(solver, df->host, NULL, count));
    for (size_t i = 0; i < count; i++) {
        int t = (int)df->host[4 * i + 3];
        df->by_type[t >= 0 && t < 3 ? t : 0]++;
    }
    glBindBuffer(GL_ARRAY_BUFFER, df->vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(count * 16), df->host);
    return PBFCL_OK;
}

void pbfcl_demo_diffuse_draw(const pbfcl_demo_diffuse *df, const pbfcl_demo_view *v)
{
    if (df->count == 0)
        return;
    glUseProgram(df->program);
    glUniformMatrix4fv(df->u_view, 1, GL_FALSE, v->view);
    glUniformMatrix4fv(df->u_proj, 1, GL_FALSE, v->proj);
    glUniform1f(df->u_radius, v->particle_radius);
    glUniform1f(df->u_point_scale, (float)v->height * v->proj[5]);
    glBindVertexArray(df->vao);
    glEnable(GL_PROGRAM_POINT_SIZE);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDepthMask(GL_FALSE);
    /* bubbles: under the surface, seen through it (no depth test: they are inside the fluid) */
    glDisable(GL_DEPTH_TEST);
    glUniform1i(df->u_types, 1 << 2);
    glUniform1f(df->u_lift, 0.0f);
    glDrawArrays(GL_POINTS, 0, (GLsizei)df->count);
    /* foam on the surface (lifted by 2 radii so the surface's depth does not hide it) and
     * spray in the air, both hidden behind nearer surface */
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glUniform1i(df->u_types, (1 << 0) | (1 << 1));
    glUniform1f(df->u_lift, 2.0f * v->particle_radius);
    glDrawArrays(GL_POINTS, 0, (GLsizei)df->count);
    glDepthFunc(GL_LESS);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    glBindVertexArray(0);
}
