/* The shadow map pass: the light's matrices fitted to the box, a depth-only render target,
 * and the particles drawn into it as sphere sprites (fluid_depth.frag writes their depth),
 * then the view's cloth, ropes and shapes (draw_extra) seen from the light. */
#include "demo_shadow.h"
#include "demo_camera.h"
#include "demo_renderer.h"
#include "demo_shader.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* normalize(-0.3, 0.8, 0.4), as the sun of fluid_shade.frag's sky. */
const float pbfcl_demo_sun_dir[3] = {-0.3f / 0.9433981f, 0.8f / 0.9433981f, 0.4f / 0.9433981f};

static void normalize3(float v[3])
{
    float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; i++)
        v[i] /= l;
}

void pbfcl_demo_shadow_matrices(const float lo[3], const float hi[3], float view[16],
                                float proj[16], float light[16])
{
    float c[3], radius = 0.0f;
    for (int i = 0; i < 3; i++) {
        c[i] = 0.5f * (lo[i] + hi[i]);
        radius += 0.25f * (hi[i] - lo[i]) * (hi[i] - lo[i]);
    }
    radius = sqrtf(radius) * 1.05f;
    /* the light's axes: z towards the light, x horizontal, y = z x x */
    const float *z = pbfcl_demo_sun_dir;
    float x[3] = {z[2], 0.0f, -z[0]}, y[3];
    normalize3(x);
    y[0] = z[1] * x[2] - z[2] * x[1], y[1] = z[2] * x[0] - z[0] * x[2];
    y[2] = z[0] * x[1] - z[1] * x[0];
    float eye[3] = {c[0] + 2.0f * radius * z[0], c[1] + 2.0f * radius * z[1],
                    c[2] + 2.0f * radius * z[2]};
    memset(view, 0, 16 * sizeof(float));
    for (int i = 0; i < 3; i++) {
        view[4 * i + 0] = x[i], view[4 * i + 1] = y[i], view[4 * i + 2] = z[i];
    }
    view[12] = -(x[0] * eye[0] + x[1] * eye[1] + x[2] * eye[2]);
    view[13] = -(y[0] * eye[0] + y[1] * eye[1] + y[2] * eye[2]);
    view[14] = -(z[0] * eye[0] + z[1] * eye[1] + z[2] * eye[2]);
    view[15] = 1.0f;
    /* orthographic: x, y in -radius..radius, depth from radius to 3 radius ahead */
    float n = radius, f = 3.0f * radius;
    memset(proj, 0, 16 * sizeof(float));
    proj[0] = proj[5] = 1.0f / radius;
    proj[10] = -2.0f / (f - n);
    proj[14] = -(f + n) / (f - n);
    proj[15] = 1.0f;
    const float bias[16] = {0.5f, 0, 0, 0, 0, 0.5f, 0, 0, 0, 0, 0.5f, 0, 0.5f, 0.5f, 0.5f, 1.0f};
    float pv[16];
    pbfcl_demo_mat4_mul(pv, proj, view);
    pbfcl_demo_mat4_mul(light, bias, pv);
}

pbfcl_status pbfcl_demo_shadow_create(pbfcl_demo_shadow *s, const char *shader_dir)
{
    memset(s, 0, sizeof *s);
    PBFCL_TRY(
        pbfcl_demo_shader_program(shader_dir, "shadow.vert", "fluid_depth.frag", &s->program));
    s->u_view = glGetUniformLocation(s->program, "u_view");
    s->u_proj = glGetUniformLocation(s->program, "u_proj");
    s->u_radius = glGetUniformLocation(s->program, "u_radius");
    s->u_point_scale = glGetUniformLocation(s->program, "u_point_scale");
    while (glGetError() != GL_NO_ERROR)
        ;
    glGenTextures(1, &s->depth_tex);
    glBindTexture(GL_TEXTURE_2D, s->depth_tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT24, PBFCL_SHADOW_SIZE, PBFCL_SHADOW_SIZE, 0,
                 GL_DEPTH_COMPONENT, GL_FLOAT, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_MODE, GL_COMPARE_REF_TO_TEXTURE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_FUNC, GL_LEQUAL);
    glBindTexture(GL_TEXTURE_2D, 0);
    glGenFramebuffers(1, &s->fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, s->fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_TEXTURE_2D, s->depth_tex, 0);
    glDrawBuffer(GL_NONE);
    glReadBuffer(GL_NONE);
    GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    GLenum err = glGetError();
    s->enabled = status == GL_FRAMEBUFFER_COMPLETE && err == GL_NO_ERROR;
    if (!s->enabled)
        fprintf(stderr,
                "pbfcl demo: warning: no shadows: %s cannot render into a %dx%d 24-bit depth "
                "texture (framebuffer status 0x%04x, GL error 0x%04x)\n",
                (const char *)glGetString(GL_RENDERER), PBFCL_SHADOW_SIZE, PBFCL_SHADOW_SIZE,
                (unsigned)status, (unsigned)err);
    return PBFCL_OK;
}

void pbfcl_demo_shadow_destroy(pbfcl_demo_shadow *s)
{
    if (!s)
        return;
    if (s->fbo)
        glDeleteFramebuffers(1, &s->fbo);
    if (s->depth_tex)
        glDeleteTextures(1, &s->depth_tex);
    if (s->program)
        glDeleteProgram(s->program);
    memset(s, 0, sizeof *s);
}

void pbfcl_demo_shadow_draw(pbfcl_demo_shadow *s, pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    if (!s->enabled)
        return;
    float view[16], proj[16];
    pbfcl_demo_shadow_matrices(v->box_min, v->box_max, view, proj, s->light);
    glBindFramebuffer(GL_FRAMEBUFFER, s->fbo);
    glViewport(0, 0, PBFCL_SHADOW_SIZE, PBFCL_SHADOW_SIZE);
    glClearDepth(1.0);
    glDepthMask(GL_TRUE);
    glClear(GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glUseProgram(s->program);
    glUniformMatrix4fv(s->u_view, 1, GL_FALSE, view);
    glUniformMatrix4fv(s->u_proj, 1, GL_FALSE, proj);
    glUniform1f(s->u_radius, v->particle_radius);
    glUniform1f(s->u_point_scale, v->particle_radius * proj[0] * (float)PBFCL_SHADOW_SIZE);
    glBindVertexArray(r->particle_vao);
    glDrawArrays(GL_POINTS, 0, (GLsizei)pbfcl_demo_renderer_particle_count(r, v));
    glBindVertexArray(0);
    if (v->draw_extra) { /* the cloth, ropes and shapes from the light: only their depth lands */
        pbfcl_demo_view from_sun = *v;
        memcpy(from_sun.view, view, sizeof view);
        memcpy(from_sun.proj, proj, sizeof proj);
        v->draw_extra(v->extra, &from_sun);
    }
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
}
