/* Screen-space fluid rendering: the scene, depth, smoothing, thickness and shading passes,
 * the render targets they write (remade when the window's size changes) and the timestamp
 * queries that time each pass without stalling the pipeline. */
#include "demo_fluid.h"
#include "demo_camera.h"
#include "demo_shader.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const pbfcl_demo_fluid_pass_names[PBFCL_FLUID_PASS_COUNT] = {
    "sun", "scene", "depth", "thickness", "smooth", "shade"};

/* Filter radius and depth tolerance of the smoothing, in particle radii. */
#define SMOOTH_RADIUS_R 5.0f
#define SMOOTH_DEPTH_SIGMA_R 2.0f
/* Widest gap between spheres the first filter pair fills, in particle radii: along an axis
 * through the hole at the corner of four touching spheres the gap is 2 radii. */
#define SMOOTH_FILL_GAP_R 2.5f
/* Default number of horizontal + vertical filter pairs. */
#define SMOOTH_ITERATIONS 2
/* Default curvature flow steps, their size and the most one step may move the depth. */
#define FLOW_ITERATIONS 40
#define FLOW_DT_SCALE 0.4f
#define FLOW_MAX_STEP_R 0.25f

static pbfcl_status build_programs(pbfcl_demo_fluid *f, const char *dir)
{
    PBFCL_TRY(
        pbfcl_demo_shader_program(dir, "fluid_depth.vert", "fluid_depth.frag", &f->depth_program));
    PBFCL_TRY(
        pbfcl_demo_shader_program(dir, "fullscreen.vert", "fluid_smooth.frag", &f->smooth_program));
    PBFCL_TRY(pbfcl_demo_shader_program(dir, "fullscreen.vert", "fluid_curvature.frag",
                                        &f->flow_program));
    PBFCL_TRY(pbfcl_demo_shader_program(dir, "fluid_depth.vert", "fluid_thickness.frag",
                                        &f->thickness_program));
    PBFCL_TRY(
        pbfcl_demo_shader_program(dir, "fullscreen.vert", "fluid_shade.frag", &f->shade_program));
    GLuint p = f->depth_program;
    f->u_d_view = glGetUniformLocation(p, "u_view");
    f->u_d_proj = glGetUniformLocation(p, "u_proj");
    f->u_d_radius = glGetUniformLocation(p, "u_radius");
    f->u_d_point_scale = glGetUniformLocation(p, "u_point_scale");
    p = f->thickness_program;
    f->u_t_view = glGetUniformLocation(p, "u_view");
    f->u_t_proj = glGetUniformLocation(p, "u_proj");
    f->u_t_radius = glGetUniformLocation(p, "u_radius");
    f->u_t_point_scale = glGetUniformLocation(p, "u_point_scale");
    p = f->smooth_program;
    f->u_s_depth = glGetUniformLocation(p, "u_depth");
    f->u_s_rotation = glGetUniformLocation(p, "u_rotation");
    f->u_s_world_radius = glGetUniformLocation(p, "u_world_radius");
    f->u_s_pixel_scale = glGetUniformLocation(p, "u_pixel_scale");
    f->u_s_depth_sigma = glGetUniformLocation(p, "u_depth_sigma");
    f->u_s_fill_gap = glGetUniformLocation(p, "u_fill_gap");
    f->u_s_thickness = glGetUniformLocation(p, "u_thickness");
    p = f->flow_program;
    f->u_f_depth = glGetUniformLocation(p, "u_depth");
    f->u_f_c = glGetUniformLocation(p, "u_c");
    f->u_f_dt_scale = glGetUniformLocation(p, "u_dt_scale");
    f->u_f_max_step = glGetUniformLocation(p, "u_max_step");
    p = f->shade_program;
    f->u_c_depth = glGetUniformLocation(p, "u_depth");
    f->u_c_thickness = glGetUniformLocation(p, "u_thickness");
    f->u_c_scene = glGetUniformLocation(p, "u_scene");
    f->u_c_proj = glGetUniformLocation(p, "u_proj");
    f->u_c_view = glGetUniformLocation(p, "u_view");
    f->u_c_absorb = glGetUniformLocation(p, "u_absorb");
    f->u_c_refract = glGetUniformLocation(p, "u_refract");
    f->u_c_fold = glGetUniformLocation(p, "u_fold");
    f->u_c_edge = glGetUniformLocation(p, "u_edge");
    f->u_c_light = glGetUniformLocation(p, "u_light");
    f->u_c_shadow = glGetUniformLocation(p, "u_shadow");
    f->u_c_shadowed = glGetUniformLocation(p, "u_shadowed");
    f->u_c_shadow_bias = glGetUniformLocation(p, "u_shadow_bias");
    f->u_c_sun = glGetUniformLocation(p, "u_sun");
    f->u_c_shadow_soft = glGetUniformLocation(p, "u_shadow_soft");
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_fluid_create(pbfcl_demo_fluid *f, const char *shader_dir)
{
    memset(f, 0, sizeof *f);
    pbfcl_status s = build_programs(f, shader_dir);
    if (s != PBFCL_OK) {
        pbfcl_demo_fluid_destroy(f);
        return s;
    }
    glGenVertexArrays(1, &f->fullscreen_vao);
    glGenQueries(PBFCL_FLUID_QUERY_FRAMES * (PBFCL_FLUID_PASS_COUNT + 1), &f->queries[0][0]);
    f->smooth_iterations = SMOOTH_ITERATIONS;
    f->flow_iterations = FLOW_ITERATIONS;
    return PBFCL_OK;
}

/* Deletes the render targets (not the programs). */
static void destroy_targets(pbfcl_demo_fluid *f)
{
    GLuint fbos[] = {f->scene_fbo, f->depth_fbo, f->smooth_fbo, f->thickness_fbo};
    GLuint texs[] = {f->scene_tex, f->depth_tex, f->smooth_tex, f->thickness_tex};
    for (int i = 0; i < 4; i++) {
        if (fbos[i])
            glDeleteFramebuffers(1, &fbos[i]);
        if (texs[i])
            glDeleteTextures(1, &texs[i]);
    }
    if (f->depth_rb)
        glDeleteRenderbuffers(1, &f->depth_rb);
    f->scene_fbo = f->depth_fbo = f->smooth_fbo = f->thickness_fbo = 0;
    f->scene_tex = f->depth_tex = f->smooth_tex = f->thickness_tex = 0;
    f->depth_rb = 0;
    f->width = f->height = 0;
}

void pbfcl_demo_fluid_destroy(pbfcl_demo_fluid *f)
{
    if (!f)
        return;
    destroy_targets(f);
    GLuint programs[] = {f->depth_program, f->smooth_program, f->flow_program, f->thickness_program,
                         f->shade_program};
    for (int i = 0; i < 5; i++)
        if (programs[i])
            glDeleteProgram(programs[i]);
    if (f->fullscreen_vao)
        glDeleteVertexArrays(1, &f->fullscreen_vao);
    if (f->queries[0][0])
        glDeleteQueries(PBFCL_FLUID_QUERY_FRAMES * (PBFCL_FLUID_PASS_COUNT + 1), &f->queries[0][0]);
    memset(f, 0, sizeof *f);
}

/* A w x h texture of the given format, nearest or linear filtered, clamped at the edges. */
static GLuint make_texture(GLenum internal, GLenum format, GLenum type, int w, int h, GLenum filter)
{
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, w, h, 0, format, type, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, (GLint)filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, (GLint)filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    return t;
}

/* A framebuffer drawing into tex (and into the depth renderbuffer rb if non-zero). */
static GLuint make_fbo(GLuint tex, GLuint rb)
{
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    if (rb)
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, rb);
    return fbo;
}

static pbfcl_status check_fbo(GLuint fbo, const char *what, int w, int h)
{
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status == GL_FRAMEBUFFER_COMPLETE)
        return PBFCL_OK;
    pbfcl_errorf("the fluid renderer's %s target (%dx%d) is incomplete (status 0x%04x) on %s; "
                 "use --render spheres",
                 what, w, h, (unsigned)status, (const char *)glGetString(GL_RENDERER));
    return PBFCL_ERR_UNSUPPORTED;
}

pbfcl_status pbfcl_demo_fluid_resize(pbfcl_demo_fluid *f, int w, int h)
{
    if (w == f->width && h == f->height)
        return PBFCL_OK;
    destroy_targets(f);
    int hw = w / 2 > 0 ? w / 2 : 1, hh = h / 2 > 0 ? h / 2 : 1;
    while (glGetError() != GL_NO_ERROR)
        ;
    f->scene_tex = make_texture(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, w, h, GL_LINEAR);
    f->depth_tex = make_texture(GL_R32F, GL_RED, GL_FLOAT, w, h, GL_LINEAR);
    f->smooth_tex = make_texture(GL_R32F, GL_RED, GL_FLOAT, w, h, GL_LINEAR);
    f->thickness_tex = make_texture(GL_R16F, GL_RED, GL_FLOAT, hw, hh, GL_LINEAR);
    glGenRenderbuffers(1, &f->depth_rb);
    glBindRenderbuffer(GL_RENDERBUFFER, f->depth_rb);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, w, h);
    f->scene_fbo = make_fbo(f->scene_tex, 0);
    f->depth_fbo = make_fbo(f->depth_tex, f->depth_rb);
    f->smooth_fbo = make_fbo(f->smooth_tex, 0);
    f->thickness_fbo = make_fbo(f->thickness_tex, 0);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glBindTexture(GL_TEXTURE_2D, 0);
    f->width = w, f->height = h;
    pbfcl_status s = PBFCL_OK;
    if (glGetError() == GL_OUT_OF_MEMORY) {
        pbfcl_errorf("OpenGL cannot allocate the fluid renderer's %dx%d targets; use a smaller "
                     "window or --render spheres",
                     w, h);
        s = PBFCL_ERR_OUT_OF_MEMORY;
    }
    const char *names[] = {"scene", "depth", "smoothing", "thickness"};
    GLuint fbos[] = {f->scene_fbo, f->depth_fbo, f->smooth_fbo, f->thickness_fbo};
    for (int i = 0; i < 4 && s == PBFCL_OK; i++)
        s = check_fbo(fbos[i], names[i], i == 3 ? hw : w, i == 3 ? hh : h);
    if (s != PBFCL_OK)
        destroy_targets(f);
    return s;
}

/* Floor, box and bodies (as spheres) into the window, then their colour copied for the
 * refraction lookups: bodies are seen through the fluid, not as part of it. */
static void pass_scene(pbfcl_demo_fluid *f, pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    pbfcl_demo_renderer_draw_backdrop(r, v);
    pbfcl_demo_renderer_draw_bodies(r, v);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, f->scene_fbo);
    glBlitFramebuffer(0, 0, v->width, v->height, 0, 0, v->width, v->height, GL_COLOR_BUFFER_BIT,
                      GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

/* Draws the particles as point sprites with program p (depth or thickness). */
static void draw_sprites(pbfcl_demo_renderer *r, const pbfcl_demo_view *v, GLint u_view,
                         GLint u_proj, GLint u_radius, GLint u_point_scale, int target_height)
{
    glUniformMatrix4fv(u_view, 1, GL_FALSE, v->view);
    glUniformMatrix4fv(u_proj, 1, GL_FALSE, v->proj);
    glUniform1f(u_radius, v->particle_radius);
    glUniform1f(u_point_scale, (float)target_height * v->proj[5]);
    glBindVertexArray(r->particle_vao);
    glDrawArrays(GL_POINTS, 0, (GLsizei)pbfcl_demo_renderer_particle_count(r, v));
}

/* The eye-space distance of the nearest sphere surface per pixel (0 where there is none). */
static void pass_depth(pbfcl_demo_fluid *f, pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    glBindFramebuffer(GL_FRAMEBUFFER, f->depth_fbo);
    glViewport(0, 0, f->width, f->height);
    glClearColor(0.0f, 0.0f, 0.0f, 0.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glUseProgram(f->depth_program);
    draw_sprites(r, v, f->u_d_view, f->u_d_proj, f->u_d_radius, f->u_d_point_scale, f->height);
}

/* Limits the screen-space passes to the pixels the domain box (plus a particle) covers; the
 * whole viewport where a corner is behind the camera. */
static void scissor_to_box(const pbfcl_demo_fluid *f, const pbfcl_demo_view *v)
{
    float mvp[16], lo[2] = {1e30f, 1e30f}, hi[2] = {-1e30f, -1e30f}, wmin = 1e30f;
    pbfcl_demo_mat4_mul(mvp, v->proj, v->view);
    for (int c = 0; c < 8; c++) {
        float p[3] = {c & 1 ? v->box_max[0] : v->box_min[0], c & 2 ? v->box_max[1] : v->box_min[1],
                      c & 4 ? v->box_max[2] : v->box_min[2]};
        float clip[4];
        for (int k = 0; k < 4; k++)
            clip[k] = mvp[k] * p[0] + mvp[4 + k] * p[1] + mvp[8 + k] * p[2] + mvp[12 + k];
        if (clip[3] <= 1e-6f) {
            glDisable(GL_SCISSOR_TEST);
            return;
        }
        wmin = fminf(wmin, clip[3]);
        for (int k = 0; k < 2; k++) {
            lo[k] = fminf(lo[k], clip[k] / clip[3]);
            hi[k] = fmaxf(hi[k], clip[k] / clip[3]);
        }
    }
    float margin = 2.0f * v->particle_radius * 0.5f * (float)f->height * v->proj[5] / wmin + 2.0f;
    int x0 = (int)floorf((lo[0] * 0.5f + 0.5f) * (float)f->width - margin);
    int y0 = (int)floorf((lo[1] * 0.5f + 0.5f) * (float)f->height - margin);
    int x1 = (int)ceilf((hi[0] * 0.5f + 0.5f) * (float)f->width + margin);
    int y1 = (int)ceilf((hi[1] * 0.5f + 0.5f) * (float)f->height + margin);
    x0 = x0 < 0 ? 0 : x0, y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > f->width ? f->width : x1, y1 = y1 > f->height ? f->height : y1;
    glEnable(GL_SCISSOR_TEST);
    glScissor(x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0);
}

/* One pass of the program in use (a filter pass or a curvature flow step), from texture src
 * into framebuffer dst. */
static void smooth_once(GLuint src, GLuint dst)
{
    glBindFramebuffer(GL_FRAMEBUFFER, dst);
    glBindTexture(GL_TEXTURE_2D, src);
    glDrawArrays(GL_TRIANGLES, 0, 3);
}

/* Smooths depth_tex in place (through smooth_tex) by flow_iterations (rounded up to even)
 * steps of curvature flow. */
static void smooth_by_flow(pbfcl_demo_fluid *f, const pbfcl_demo_view *v)
{
    glUseProgram(f->flow_program);
    glUniform1i(f->u_f_depth, 0);
    glUniform2f(f->u_f_c, 2.0f / ((float)f->width * v->proj[0]),
                2.0f / ((float)f->height * v->proj[5]));
    glUniform1f(f->u_f_dt_scale, FLOW_DT_SCALE);
    glUniform1f(f->u_f_max_step, FLOW_MAX_STEP_R * v->particle_radius);
    for (int i = 0; i < (f->flow_iterations + 1) / 2; i++) {
        smooth_once(f->depth_tex, f->smooth_fbo);
        smooth_once(f->smooth_tex, f->depth_fbo);
    }
}

/* Smooths depth_tex in place (through smooth_tex): smooth_iterations pairs of passes of the
 * bilateral filter, or curvature flow. The first pass fills the gaps between spheres; each
 * pass turns the filter's tap pattern, so that no pattern repeats from pass to pass. */
static void pass_smooth(pbfcl_demo_fluid *f, const pbfcl_demo_view *v)
{
    glViewport(0, 0, f->width, f->height);
    glDisable(GL_DEPTH_TEST);
    glUseProgram(f->smooth_program);
    glUniform1i(f->u_s_depth, 0);
    glUniform1i(f->u_s_thickness, 1);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, f->thickness_tex);
    glUniform1f(f->u_s_world_radius, SMOOTH_RADIUS_R * v->particle_radius);
    glUniform1f(f->u_s_pixel_scale, 0.5f * (float)f->height * v->proj[5]);
    glUniform1f(f->u_s_depth_sigma, SMOOTH_DEPTH_SIGMA_R * v->particle_radius);
    glActiveTexture(GL_TEXTURE0);
    glBindVertexArray(f->fullscreen_vao);
    glBindFramebuffer(GL_FRAMEBUFFER, f->smooth_fbo);
    glClear(GL_COLOR_BUFFER_BIT); /* the filter reads a little outside the scissor box */
    scissor_to_box(f, v);
    if (f->curvature_flow)
        smooth_by_flow(f, v);
    for (int i = 0; i < f->smooth_iterations && !f->curvature_flow; i++) {
        glUniform1f(f->u_s_fill_gap, i == 0 ? SMOOTH_FILL_GAP_R * v->particle_radius : 0.0f);
        glUniform1f(f->u_s_rotation, 2.0f * (float)i);
        smooth_once(f->depth_tex, f->smooth_fbo);
        glUniform1f(f->u_s_fill_gap, 0.0f);
        glUniform1f(f->u_s_rotation, 2.0f * (float)i + 1.0f);
        smooth_once(f->smooth_tex, f->depth_fbo);
    }
    glDisable(GL_SCISSOR_TEST);
    glBindTexture(GL_TEXTURE_2D, 0);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, 0);
    glActiveTexture(GL_TEXTURE0);
}

/* Summed sphere thickness along each line of sight, at half resolution. */
static void pass_thickness(pbfcl_demo_fluid *f, pbfcl_demo_renderer *r, const pbfcl_demo_view *v)
{
    int hw = f->width / 2 > 0 ? f->width / 2 : 1, hh = f->height / 2 > 0 ? f->height / 2 : 1;
    glBindFramebuffer(GL_FRAMEBUFFER, f->thickness_fbo);
    glViewport(0, 0, hw, hh);
    glClearColor(0.0f, 0.0f, 0.0f, 0.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE);
    glUseProgram(f->thickness_program);
    pbfcl_demo_view wide = *v; /* Gaussian splats twice the particle's radius */
    wide.particle_radius = 2.0f * v->particle_radius;
    draw_sprites(r, &wide, f->u_t_view, f->u_t_proj, f->u_t_radius, f->u_t_point_scale, hh);
    glDisable(GL_BLEND);
}

/* Shades the smoothed surface into the window over the floor and box, depth-tested. */
static void pass_shade(pbfcl_demo_fluid *f, const pbfcl_demo_view *v)
{
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, v->width, v->height);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glUseProgram(f->shade_program);
    GLuint textures[4] = {f->depth_tex, f->thickness_tex, f->scene_tex, v->shadow_tex};
    GLint units[4] = {f->u_c_depth, f->u_c_thickness, f->u_c_scene, f->u_c_shadow};
    for (int i = 0; i < 4; i++) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)i);
        glBindTexture(GL_TEXTURE_2D, textures[i]);
        glUniform1i(units[i], i);
    }
    glUniformMatrix4fv(f->u_c_proj, 1, GL_FALSE, v->proj);
    glUniformMatrix4fv(f->u_c_view, 1, GL_FALSE, v->view);
    glUniform3f(f->u_c_absorb, 30.0f, 10.0f, 3.5f);
    glUniform1f(f->u_c_refract, 0.15f);
    glUniform1f(f->u_c_fold, 4.0f * v->particle_radius);
    glUniform1f(f->u_c_edge, 3.0f * v->particle_radius);
    glUniformMatrix4fv(f->u_c_light, 1, GL_FALSE, v->light);
    glUniform1i(f->u_c_shadowed, v->shadow_tex != 0);
    glUniform3fv(f->u_c_sun, 1, pbfcl_demo_sun_dir);
    glUniform1f(f->u_c_shadow_soft, v->shadow_soft);
    /* the smoothed surface lies up to a particle diameter below the sphere tops the light saw;
     * in shadow-map depth units (the light's depth range is 2 box radii, demo_shadow.c) */
    float box = 0.0f;
    for (int i = 0; i < 3; i++)
        box += (v->box_max[i] - v->box_min[i]) * (v->box_max[i] - v->box_min[i]);
    glUniform1f(f->u_c_shadow_bias, 3.0f * v->particle_radius / (1.05f * sqrtf(box)));
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glBindVertexArray(f->fullscreen_vao);
    scissor_to_box(f, v);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_BLEND);
    for (int i = 3; i >= 0; i--) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)i);
        glBindTexture(GL_TEXTURE_2D, 0);
    }
    glBindVertexArray(0);
}

/* Reads the timestamps of the oldest frame in the ring, if they are ready. */
static void read_times(pbfcl_demo_fluid *f)
{
    if (f->frame < PBFCL_FLUID_QUERY_FRAMES)
        return;
    GLuint *q = f->queries[f->frame % PBFCL_FLUID_QUERY_FRAMES];
    GLint available = 0;
    glGetQueryObjectiv(q[PBFCL_FLUID_PASS_COUNT], GL_QUERY_RESULT_AVAILABLE, &available);
    if (!available)
        return;
    GLuint64 t[PBFCL_FLUID_PASS_COUNT + 1];
    for (int i = 0; i <= PBFCL_FLUID_PASS_COUNT; i++)
        glGetQueryObjectui64v(q[i], GL_QUERY_RESULT, &t[i]);
    for (int i = 0; i < PBFCL_FLUID_PASS_COUNT; i++) {
        double ms = t[i + 1] > t[i] ? (double)(t[i + 1] - t[i]) * 1e-6 : 0.0;
        f->pass_ms[i] = f->pass_ms[i] > 0.0 ? 0.9 * f->pass_ms[i] + 0.1 * ms : ms;
    }
}

pbfcl_status pbfcl_demo_fluid_draw(pbfcl_demo_fluid *f, pbfcl_demo_renderer *r,
                                   pbfcl_demo_shadow *shadow, const pbfcl_demo_view *v)
{
    PBFCL_TRY(pbfcl_demo_fluid_resize(f, v->width, v->height));
    read_times(f);
    GLuint *q = f->queries[f->frame % PBFCL_FLUID_QUERY_FRAMES];
    glQueryCounter(q[0], GL_TIMESTAMP);
    pbfcl_demo_shadow_draw(shadow, r, v);
    glQueryCounter(q[1], GL_TIMESTAMP);
    pass_scene(f, r, v);
    glQueryCounter(q[2], GL_TIMESTAMP);
    pass_depth(f, r, v);
    glQueryCounter(q[3], GL_TIMESTAMP);
    pass_thickness(f, r, v);
    glQueryCounter(q[4], GL_TIMESTAMP);
    pass_smooth(f, v);
    glQueryCounter(q[5], GL_TIMESTAMP);
    pass_shade(f, v);
    glQueryCounter(q[6], GL_TIMESTAMP);
    f->frame++;
    return PBFCL_OK;
}

void pbfcl_demo_fluid_change_smoothing(pbfcl_demo_fluid *f, int steps)
{
    int *n = f->curvature_flow ? &f->flow_iterations : &f->smooth_iterations;
    int most = f->curvature_flow ? 200 : 16;
    *n += steps * (f->curvature_flow ? 10 : 1);
    *n = *n < 0 ? 0 : *n > most ? most : *n;
}

void pbfcl_demo_fluid_describe(const pbfcl_demo_fluid *f, char *text, size_t size)
{
    if (f->curvature_flow)
        snprintf(text, size, "curvature flow x%d", f->flow_iterations);
    else
        snprintf(text, size, "bilateral x%d", f->smooth_iterations);
}

double pbfcl_demo_fluid_total_ms(const pbfcl_demo_fluid *f)
{
    double total = 0.0;
    for (int i = 0; i < PBFCL_FLUID_PASS_COUNT; i++)
        total += f->pass_ms[i];
    return total;
}
