/* The scene renderer: one vertex buffer of particle positions (written by OpenCL through
 * sharing or by a host copy; the drawing is the same either way), point sprites that shade
 * and depth-correct themselves as spheres, box edges and a floor. */
#include "demo_renderer.h"
#include "demo_ramp.h"
#include "demo_camera.h"
#include "demo_shader.h"

#include <stdlib.h>
#include <string.h>

static pbfcl_status build_programs(pbfcl_demo_renderer *r, const char *dir)
{
    PBFCL_TRY(
        pbfcl_demo_shader_program(dir, "particle.vert", "particle.frag", &r->particle_program));
    PBFCL_TRY(pbfcl_demo_shader_program(dir, "line.vert", "line.frag", &r->line_program));
    PBFCL_TRY(pbfcl_demo_shader_program(dir, "floor.vert", "floor.frag", &r->floor_program));
    r->u_p_view = glGetUniformLocation(r->particle_program, "u_view");
    r->u_p_proj = glGetUniformLocation(r->particle_program, "u_proj");
    r->u_p_radius = glGetUniformLocation(r->particle_program, "u_radius");
    r->u_p_point_scale = glGetUniformLocation(r->particle_program, "u_point_scale");
    r->u_p_mode = glGetUniformLocation(r->particle_program, "u_color_mode");
    r->u_p_range = glGetUniformLocation(r->particle_program, "u_range");
    r->u_p_ramp = glGetUniformLocation(r->particle_program, "u_ramp");
    r->u_p_only_bodies = glGetUniformLocation(r->particle_program, "u_only_bodies");
    r->u_l_mvp = glGetUniformLocation(r->line_program, "u_mvp");
    r->u_l_color = glGetUniformLocation(r->line_program, "u_color");
    r->u_f_mvp = glGetUniformLocation(r->floor_program, "u_mvp");
    r->u_f_cell = glGetUniformLocation(r->floor_program, "u_cell");
    r->u_f_center = glGetUniformLocation(r->floor_program, "u_center");
    r->u_f_extent = glGetUniformLocation(r->floor_program, "u_extent");
    r->u_f_light = glGetUniformLocation(r->floor_program, "u_light");
    r->u_f_shadow = glGetUniformLocation(r->floor_program, "u_shadow");
    r->u_f_shadowed = glGetUniformLocation(r->floor_program, "u_shadowed");
    r->u_f_shadow_soft = glGetUniformLocation(r->floor_program, "u_shadow_soft");
    return PBFCL_OK;
}

/* A VAO with one vec3 attribute at location 0 reading vbo. */
static void make_vec3_vao(GLuint *vao, GLuint *vbo)
{
    glGenVertexArrays(1, vao);
    glGenBuffers(1, vbo);
    glBindVertexArray(*vao);
    glBindBuffer(GL_ARRAY_BUFFER, *vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), (void *)0);
    glBindVertexArray(0);
}

pbfcl_status pbfcl_demo_renderer_create(pbfcl_demo_renderer *r, const char *shader_dir)
{
    memset(r, 0, sizeof *r);
    pbfcl_status s = build_programs(r, shader_dir);
    if (s != PBFCL_OK) {
        pbfcl_demo_renderer_destroy(r);
        return s;
    }
    glGenVertexArrays(1, &r->particle_vao);
    glGenBuffers(1, &r->position_vbo);
    glGenBuffers(1, &r->density_vbo);
    glGenBuffers(1, &r->phase_vbo);
    glBindVertexArray(r->particle_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->position_vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 4 * sizeof(float), (void *)0);
    glBindBuffer(GL_ARRAY_BUFFER, r->density_vbo);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 1, GL_FLOAT, GL_FALSE, sizeof(float), (void *)0);
    /* phases (location 2): an array only in scenes with bodies or obstacles, else the constant 0
     * (fluid) */
    glBindBuffer(GL_ARRAY_BUFFER, r->phase_vbo);
    glVertexAttribPointer(2, 1, GL_FLOAT, GL_FALSE, sizeof(float), (void *)0);
    glVertexAttrib1f(2, 0.0f);
    glBindVertexArray(0);
    make_vec3_vao(&r->box_vao, &r->box_vbo);
    make_vec3_vao(&r->floor_vao, &r->floor_vbo);
    glEnable(GL_DEPTH_TEST);
    glEnable(GL_PROGRAM_POINT_SIZE);
    return PBFCL_OK;
}

void pbfcl_demo_renderer_destroy(pbfcl_demo_renderer *r)
{
    if (!r)
        return;
    GLuint buffers[] = {r->position_vbo, r->density_vbo, r->phase_vbo, r->box_vbo, r->floor_vbo};
    GLuint arrays[] = {r->particle_vao, r->box_vao, r->floor_vao};
    for (int i = 0; i < 5; i++)
        if (buffers[i])
            glDeleteBuffers(1, &buffers[i]);
    for (int i = 0; i < 3; i++)
        if (arrays[i])
            glDeleteVertexArrays(1, &arrays[i]);
    if (r->particle_program)
        glDeleteProgram(r->particle_program);
    if (r->line_program)
        glDeleteProgram(r->line_program);
    if (r->floor_program)
        glDeleteProgram(r->floor_program);
    memset(r, 0, sizeof *r);
}

pbfcl_status pbfcl_demo_renderer_reserve(pbfcl_demo_renderer *r, size_t n)
{
    size_t count = n ? n : 1;
    while (glGetError() != GL_NO_ERROR)
        ;
    glBindBuffer(GL_ARRAY_BUFFER, r->position_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(count * 4 * sizeof(float)), NULL, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, r->density_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(count * sizeof(float)), NULL, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    if (glGetError() == GL_OUT_OF_MEMORY) {
        pbfcl_errorf("OpenGL cannot allocate vertex buffers for %zu particles (%.1f MiB); use "
                     "fewer particles",
                     n, (double)count * 20.0 / 1048576.0);
        r->capacity = 0;
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    r->capacity = n;
    return PBFCL_OK;
}

void pbfcl_demo_renderer_set_box(pbfcl_demo_renderer *r, const float lo[3], const float hi[3])
{
    float lines[24][3];
    int k = 0;
    for (int axis = 0; axis < 3; axis++) {
        int a = (axis + 1) % 3, b = (axis + 2) % 3;
        for (int corner = 0; corner < 4; corner++) {
            for (int end = 0; end < 2; end++) {
                lines[k][axis] = end ? hi[axis] : lo[axis];
                lines[k][a] = (corner & 1) ? hi[a] : lo[a];
                lines[k][b] = (corner & 2) ? hi[b] : lo[b];
                k++;
            }
        }
    }
    glBindBuffer(GL_ARRAY_BUFFER, r->box_vbo);
    glBufferData(GL_ARRAY_BUFFER, sizeof lines, lines, GL_STATIC_DRAW);

    float span = 0.0f;
    for (int i = 0; i < 3; i += 2)
        span = hi[i] - lo[i] > span ? hi[i] - lo[i] : span;
    float m = 0.6f * span, y = lo[1] - 1e-3f * span;
    float cx = 0.5f * (lo[0] + hi[0]), cz = 0.5f * (lo[2] + hi[2]);
    float x0 = cx - 0.5f * (hi[0] - lo[0]) - m, x1 = cx + 0.5f * (hi[0] - lo[0]) + m;
    float z0 = cz - 0.5f * (hi[2] - lo[2]) - m, z1 = cz + 0.5f * (hi[2] - lo[2]) + m;
    float floor[6][3] = {{x0, y, z0}, {x1, y, z1}, {x1, y, z0},
                         {x0, y, z0}, {x0, y, z1}, {x1, y, z1}};
    glBindBuffer(GL_ARRAY_BUFFER, r->floor_vbo);
    glBufferData(GL_ARRAY_BUFFER, sizeof floor, floor, GL_STATIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    r->floor_center[0] = cx, r->floor_center[1] = y, r->floor_center[2] = cz;
    r->floor_extent = 0.5f * ((x1 - x0) < (z1 - z0) ? (x1 - x0) : (z1 - z0));
    r->floor_cell = span / 8.0f;
}

void pbfcl_demo_renderer_upload_density(pbfcl_demo_renderer *r, const float *density, size_t n)
{
    if (n > r->capacity)
        n = r->capacity;
    glBindBuffer(GL_ARRAY_BUFFER, r->density_vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(n * sizeof(float)), density);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

size_t pbfcl_demo_renderer_particle_count(const pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    return v->count < r->capacity ? v->count : r->capacity;
}

pbfcl_status pbfcl_demo_renderer_set_phases(pbfcl_demo_renderer *r, const int *phases, size_t n)
{
    r->bodies = false;
    glBindVertexArray(r->particle_vao);
    glDisableVertexAttribArray(2);
    glBindVertexArray(0);
    glVertexAttrib1f(2, 0.0f);
    if (!phases || n == 0)
        return PBFCL_OK;
    if (n > r->capacity)
        n = r->capacity;
    float *f = malloc(n * sizeof *f);
    if (!f) {
        pbfcl_errorf("out of host memory for the phases of %zu particles", n);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; i++)
        f[i] = (float)phases[i]; /* exact: phases are small integers */
    while (glGetError() != GL_NO_ERROR)
        ;
    glBindBuffer(GL_ARRAY_BUFFER, r->phase_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(n * sizeof *f), f, GL_STATIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    free(f);
    if (glGetError() == GL_OUT_OF_MEMORY) {
        pbfcl_errorf("OpenGL cannot allocate the phase buffer for %zu particles; use fewer "
                     "particles",
                     n);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    glBindVertexArray(r->particle_vao);
    glEnableVertexAttribArray(2);
    glBindVertexArray(0);
    r->bodies = true;
    return PBFCL_OK;
}

static void draw_particles(pbfcl_demo_renderer *r, const pbfcl_demo_view *v, bool only_bodies)
{
    size_t n = pbfcl_demo_renderer_particle_count(r, v);
    if (n == 0)
        return;
    glUseProgram(r->particle_program);
    glUniformMatrix4fv(r->u_p_view, 1, GL_FALSE, v->view);
    glUniformMatrix4fv(r->u_p_proj, 1, GL_FALSE, v->proj);
    glUniform1f(r->u_p_radius, v->particle_radius);
    glUniform1f(r->u_p_point_scale, (float)v->height * v->proj[5]);
    glUniform1i(r->u_p_mode, (int)v->color);
    glUniform2f(r->u_p_range, v->range[0], v->range[1]);
    glUniform3fv(r->u_p_ramp, 3, &pbfcl_demo_ramp_stops(v->color)[0][0]);
    glUniform1i(r->u_p_only_bodies, only_bodies);
    glBindVertexArray(r->particle_vao);
    glDrawArrays(GL_POINTS, 0, (GLsizei)n);
}

void pbfcl_demo_renderer_draw_backdrop(pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    float mvp[16];
    pbfcl_demo_mat4_mul(mvp, v->proj, v->view);
    glViewport(0, 0, v->width, v->height);
    glClearColor(0.17f, 0.17f, 0.18f, 1.0f);
    glClearDepth(1.0);
    glDepthMask(GL_TRUE);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);

    glUseProgram(r->floor_program);
    glUniformMatrix4fv(r->u_f_mvp, 1, GL_FALSE, mvp);
    glUniform1f(r->u_f_cell, r->floor_cell);
    glUniform3fv(r->u_f_center, 1, r->floor_center);
    glUniform1f(r->u_f_extent, r->floor_extent);
    glUniformMatrix4fv(r->u_f_light, 1, GL_FALSE, v->light);
    glUniform1i(r->u_f_shadowed, v->shadow_tex != 0);
    glUniform1f(r->u_f_shadow_soft, v->shadow_soft);
    glUniform1i(r->u_f_shadow, 0);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, v->shadow_tex);
    glBindVertexArray(r->floor_vao);
    glDrawArrays(GL_TRIANGLES, 0, 6);
    glBindTexture(GL_TEXTURE_2D, 0);

    glUseProgram(r->line_program);
    glUniformMatrix4fv(r->u_l_mvp, 1, GL_FALSE, mvp);
    glUniform4f(r->u_l_color, 0.75f, 0.75f, 0.75f, 1.0f);
    glBindVertexArray(r->box_vao);
    glDrawArrays(GL_LINES, 0, 24);
    glBindVertexArray(0);
}

void pbfcl_demo_renderer_draw(pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    pbfcl_demo_renderer_draw_backdrop(r, v);
    draw_particles(r, v, false);
    if (v->draw_extra)
        v->draw_extra(v->extra, v);
    glBindVertexArray(0);
}

void pbfcl_demo_renderer_draw_bodies(pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    if (r->bodies)
        draw_particles(r, v, true);
    if (v->draw_extra)
        v->draw_extra(v->extra, v);
    glBindVertexArray(0);
}
