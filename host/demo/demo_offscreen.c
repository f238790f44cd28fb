/* The headless renderer (demo_offscreen.h): per frame, the solver's particles into the
 * renderer's buffers through the public API, the demo's passes into the EGL pbuffer, and
 * glReadPixels of its colour and depth, flipped to top-down rows. */
#include "demo_offscreen.h"
#include "demo_camera.h"
#include "demo_diffuse.h"
#include "demo_egl.h"
#include "demo_fluid.h"
#include "demo_mesh.h"
#include "demo_renderer.h"
#include "demo_shader.h"
#include "demo_shadow.h"
#include "demo_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pbfcl_offscreen {
    pbfcl_demo_egl egl;
    pbfcl_demo_renderer ren;
    pbfcl_demo_fluid fluid;
    pbfcl_demo_shadow shadow;
    pbfcl_demo_diffuse diffuse;
    pbfcl_demo_mesh mesh; /* cloth, ropes and shapes */
    float *host;          /* positions, velocities (3 floats each), then float4 for the buffer */
    int *phases;          /* the particles' phases */
    size_t host_cap;      /* particles host and phases hold */
};

pbfcl_status pbfcl_offscreen_create(pbfcl_offscreen **out, const char *shader_dir)
{
    *out = NULL;
    char dir[1024];
    if (shader_dir)
        snprintf(dir, sizeof dir, "%s", shader_dir);
    else
        PBFCL_TRY(pbfcl_demo_shader_find_dir(dir, sizeof dir));
    pbfcl_offscreen *o = calloc(1, sizeof *o);
    if (!o) {
        pbfcl_errorf("out of host memory for the renderer");
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    pbfcl_status s = pbfcl_demo_egl_create(&o->egl);
    if (s == PBFCL_OK)
        s = pbfcl_demo_renderer_create(&o->ren, dir);
    if (s == PBFCL_OK)
        s = pbfcl_demo_fluid_create(&o->fluid, dir);
    if (s == PBFCL_OK)
        s = pbfcl_demo_shadow_create(&o->shadow, dir);
    if (s == PBFCL_OK)
        s = pbfcl_demo_diffuse_create(&o->diffuse, dir);
    if (s == PBFCL_OK)
        s = pbfcl_demo_mesh_create(&o->mesh, dir);
    if (s != PBFCL_OK) {
        pbfcl_offscreen_destroy(o);
        return s;
    }
    *out = o;
    return PBFCL_OK;
}

void pbfcl_offscreen_destroy(pbfcl_offscreen *o)
{
    if (!o)
        return;
    if (o->egl.context && pbfcl_demo_egl_use(&o->egl, o->egl.width, o->egl.height) == PBFCL_OK) {
        pbfcl_demo_mesh_destroy(&o->mesh);
        pbfcl_demo_diffuse_destroy(&o->diffuse);
        pbfcl_demo_shadow_destroy(&o->shadow);
        pbfcl_demo_fluid_destroy(&o->fluid);
        pbfcl_demo_renderer_destroy(&o->ren);
    }
    pbfcl_demo_egl_destroy(&o->egl);
    pbfcl_solver_mesh_free(&o->mesh.topo); /* if the context was gone: the host's part */
    free(o->mesh.pos);
    free(o->mesh.vdata);
    free(o->host);
    free(o->phases);
    free(o);
}

static bool finite3(const float v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static float dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* v / |v|; false if v is (nearly) zero. */
static bool unit3(const float v[3], float out[3])
{
    float len = sqrtf(dot3(v, v));
    if (!(len > 1e-20f) || !isfinite(len))
        return false;
    for (int k = 0; k < 3; k++)
        out[k] = v[k] / len;
    return true;
}

/* The camera's basis: back (from the target to the eye), right and up, orthonormal. */
static bool camera_basis(const pbfcl_offscreen_camera *c, float right[3], float up[3],
                         float back[3])
{
    float d[3] = {c->eye[0] - c->target[0], c->eye[1] - c->target[1], c->eye[2] - c->target[2]};
    float u[3], r[3];
    if (!unit3(d, back) || !unit3(c->up, u))
        return false;
    cross3(u, back, r);
    if (!(sqrtf(dot3(r, r)) > 1e-4f) || !unit3(r, right))
        return false;
    cross3(back, right, up);
    return true;
}

pbfcl_status pbfcl_offscreen_check_camera(const pbfcl_offscreen_camera *c)
{
    const char *bad = NULL;
    float right[3], up[3], back[3], d[3], u[3];
    if (c->width < 1 || c->width > PBFCL_OFFSCREEN_MAX_SIZE)
        bad = "width";
    else if (c->height < 1 || c->height > PBFCL_OFFSCREEN_MAX_SIZE)
        bad = "height";
    if (bad) {
        pbfcl_errorf("%s = %d is out of range: it must be 1 to %d pixels", bad,
                     bad[0] == 'w' ? c->width : c->height, PBFCL_OFFSCREEN_MAX_SIZE);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    const char *fields[3] = {"eye", "target", "up"};
    const float *values[3] = {c->eye, c->target, c->up};
    for (int i = 0; i < 3; i++)
        if (!finite3(values[i])) {
            pbfcl_errorf("%s = (%g, %g, %g) is not a point of finite numbers", fields[i],
                         (double)values[i][0], (double)values[i][1], (double)values[i][2]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    if (!(c->fov > 0.0f && c->fov < 180.0f)) {
        pbfcl_errorf("fov = %g is out of range: it must be a number > 0 and < 180, in degrees",
                     (double)c->fov);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int k = 0; k < 3; k++)
        d[k] = c->eye[k] - c->target[k];
    if (!unit3(d, back))
        bad = "eye and target are the same point: the camera has no direction";
    else if (!unit3(c->up, u))
        bad = "up is the zero vector: give the direction that is up in the image, e.g. (0, 1, 0)";
    else if (!camera_basis(c, right, up, back))
        bad = "up is along the view (target - eye): give a direction across it, e.g. (0, 1, 0)";
    if (bad) {
        pbfcl_errorf("%s", bad);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_offscreen_fit(const pbfcl_solver *solver, float eye[3], float target[3])
{
    pbfcl_scene_params scene;
    PBFCL_TRY(pbfcl_solver_get_params(solver, &scene, NULL));
    pbfcl_demo_camera cam;
    pbfcl_demo_camera_fit(&cam, scene.domain_min, scene.domain_max);
    pbfcl_demo_camera_eye(&cam, eye);
    memcpy(target, cam.target, sizeof cam.target);
    return PBFCL_OK;
}

/* Room for n particles in the host copies and the GL buffers. */
static pbfcl_status reserve(pbfcl_offscreen *o, size_t n)
{
    if (n > o->host_cap) {
        float *host = realloc(o->host, n * 6 * sizeof *host);
        if (host)
            o->host = host;
        int *phases = host ? realloc(o->phases, n * sizeof *phases) : NULL;
        if (!phases) {
            pbfcl_errorf("out of host memory for the positions of %zu particles", n);
            return PBFCL_ERR_OUT_OF_MEMORY;
        }
        o->phases = phases;
        o->host_cap = n;
    }
    if (o->ren.capacity < n || o->ren.capacity == 0)
        PBFCL_TRY(pbfcl_demo_renderer_reserve(&o->ren, n));
    return PBFCL_OK;
}

/* The solver's n particles into the renderer: float4 (x, y, z, speed) and, where a particle
 * is not fluid, the phases (bodies and obstacles are drawn in their colours); its cloth, ropes
 * and shapes (read again each frame: a solver's may change between renders) into the mesh. */
static pbfcl_status upload_particles(pbfcl_offscreen *o, pbfcl_solver *solver, size_t n,
                                     float radius)
{
    PBFCL_TRY(reserve(o, n));
    float *x = o->host, *v = o->host + 3 * n;
    if (n) {
        PBFCL_TRY(pbfcl_solver_get_positions(solver, x, n));
        PBFCL_TRY(pbfcl_solver_get_velocities(solver, v, n));
        PBFCL_TRY(pbfcl_solver_get_phases(solver, o->phases, n));
    }
    float *xs = malloc((n ? n : 1) * 4 * sizeof *xs);
    if (!xs) {
        pbfcl_errorf("out of host memory for the positions of %zu particles", n);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    bool solids = false;
    pbfcl_status st = pbfcl_demo_mesh_set_solver(&o->mesh, solver, n, radius, o->phases, &solids);
    if (st == PBFCL_OK)
        st = pbfcl_demo_mesh_update(&o->mesh, solver);
    if (st != PBFCL_OK) {
        free(xs);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(xs + 4 * i, x + 3 * i, 3 * sizeof *xs);
        xs[4 * i + 3] = sqrtf(dot3(v + 3 * i, v + 3 * i));
        solids = solids || o->phases[i] != PBFCL_PHASE_FLUID;
    }
    glBindBuffer(GL_ARRAY_BUFFER, o->ren.position_vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(n * 4 * sizeof *xs), xs);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    free(xs);
    PBFCL_TRY(pbfcl_demo_renderer_set_phases(&o->ren, solids ? o->phases : NULL, n));
    return pbfcl_demo_diffuse_update(&o->diffuse, solver);
}

/* View and projection of camera c over the box of scene; the near and far planes as the
 * demo's camera sets them (from the box's size and the eye's distance to its centre). */
static void camera_matrices(const pbfcl_offscreen_camera *c, const pbfcl_scene_params *scene,
                            pbfcl_demo_view *v, float *znear, float *zfar)
{
    float right[3], up[3], back[3], size[3], to_centre[3];
    camera_basis(c, right, up, back);
    pbfcl_demo_view_matrix(c->eye, right, up, back, v->view);
    for (int k = 0; k < 3; k++) {
        size[k] = scene->domain_max[k] - scene->domain_min[k];
        to_centre[k] = 0.5f * (scene->domain_max[k] + scene->domain_min[k]) - c->eye[k];
    }
    float diagonal = sqrtf(dot3(size, size));
    *znear = 0.01f * diagonal;
    *zfar = sqrtf(dot3(to_centre, to_centre)) + 4.0f * diagonal;
    float t = tanf(0.5f * c->fov * 3.14159265f / 180.0f);
    pbfcl_demo_perspective(t, (float)c->width / (float)c->height, *znear, *zfar, v->proj);
}

/* The pbuffer's colour and depth, bottom row first in GL, as top-down arrays. */
static pbfcl_status read_back(int w, int h, float znear, float zfar, unsigned char *rgb,
                              float *depth)
{
    size_t row = (size_t)w * 3, pixels = (size_t)w * (size_t)h;
    unsigned char *bottom_up =
        malloc(pixels * 3 > pixels * sizeof(float) ? pixels * 3 : pixels * sizeof(float));
    if (!bottom_up) {
        pbfcl_errorf("out of host memory reading a %dx%d frame", w, h);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, bottom_up);
    for (int y = 0; y < h; y++)
        memcpy(rgb + (size_t)y * row, bottom_up + (size_t)(h - 1 - y) * row, row);
    if (depth) {
        float *d = (float *)(void *)bottom_up;
        glReadPixels(0, 0, w, h, GL_DEPTH_COMPONENT, GL_FLOAT, d);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                float win = d[(size_t)(h - 1 - y) * (size_t)w + (size_t)x];
                float ndc = 2.0f * win - 1.0f; /* perspective: back to the eye's distance */
                depth[(size_t)y * (size_t)w + (size_t)x] =
                    win >= 1.0f ? INFINITY
                                : 2.0f * znear * zfar / (zfar + znear - ndc * (zfar - znear));
            }
    }
    free(bottom_up);
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        pbfcl_errorf("OpenGL error 0x%x while drawing or reading a %dx%d frame", err, w, h);
        return PBFCL_ERR_UNSUPPORTED;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_offscreen_render(pbfcl_offscreen *o, pbfcl_solver *solver,
                                    const pbfcl_offscreen_camera *c, unsigned char *rgb,
                                    float *depth)
{
    PBFCL_TRY(pbfcl_offscreen_check_camera(c));
    pbfcl_scene_params scene;
    size_t n = 0;
    PBFCL_TRY(pbfcl_solver_get_params(solver, &scene, NULL));
    PBFCL_TRY(pbfcl_solver_count(solver, &n));
    PBFCL_TRY(pbfcl_demo_egl_use(&o->egl, c->width, c->height));
    while (glGetError() != GL_NO_ERROR)
        ;
    pbfcl_status uploaded = upload_particles(o, solver, n, scene.particle_radius);
    if (uploaded != PBFCL_OK) {
        pbfcl_demo_egl_release(&o->egl);
        return uploaded;
    }
    pbfcl_demo_renderer_set_box(&o->ren, scene.domain_min, scene.domain_max);
    pbfcl_demo_view v;
    float znear, zfar;
    pbfcl_demo_view_scene(&v, &scene, PBFCL_DEMO_COLOR_SPEED, c->width, c->height, n, &o->shadow);
    camera_matrices(c, &scene, &v, &znear, &zfar);
    v.draw_extra = pbfcl_demo_mesh_draw;
    v.extra = &o->mesh;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    pbfcl_status s = PBFCL_OK;
    if (c->spheres) {
        pbfcl_demo_shadow_draw(&o->shadow, &o->ren, &v);
        pbfcl_demo_renderer_draw(&o->ren, &v);
    } else {
        s = pbfcl_demo_fluid_draw(&o->fluid, &o->ren, &o->shadow, &v);
        if (s == PBFCL_OK)
            pbfcl_demo_diffuse_draw(&o->diffuse, &v);
    }
    if (s == PBFCL_OK)
        s = read_back(c->width, c->height, znear, zfar, rgb, depth);
    pbfcl_demo_egl_release(&o->egl); /* the next frame may be drawn from another thread */
    return s;
}
