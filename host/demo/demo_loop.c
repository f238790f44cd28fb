/* The demo's main loop: sets up the window, renderer, pbfcl context and solver (through the
 * public API, include/pbfcl.h), then each frame handles input, advances the simulation by at
 * most one step, moves positions into the vertex buffer, draws the scene (as a fluid surface
 * or as spheres) and the HUD, and swaps. */
#include "app_env.h"
#include "demo.h"
#include "demo_camera.h"
#include "demo_diffuse.h"
#include "demo_fluid.h"
#include "demo_hud.h"
#include "demo_input.h"
#include "demo_interop.h"
#include "demo_mesh.h"
#include "demo_params.h"
#include "demo_pick.h"
#include "demo_record.h"
#include "demo_renderer.h"
#include "demo_screenshot.h"
#include "demo_shader.h"
#include "demo_shadow.h"
#include "demo_text.h"
#include "demo_view.h"
#include "demo_window.h"
#include "pbfcl.h"
#include "runtime/pbfcl_error.h"
#include "run_paths.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything the running demo holds. */
typedef struct demo {
    const pbfcl_demo_options *opt;
    pbfcl_scene_options scene_opt; /* the current scene name and particle count */
    pbfcl_demo_window win;
    pbfcl_demo_renderer ren;
    pbfcl_demo_fluid fluid;
    pbfcl_demo_mesh mesh; /* cloth, ropes and shapes */
    pbfcl_demo_shadow shadow;
    pbfcl_demo_diffuse diffuse; /* spray, foam and bubbles */
    bool diffuse_on;            /* the solver makes them (--no-diffuse, D) */
    double diffuse_ms;          /* their stage's device time per step, smoothed */
    pbfcl_demo_render render_mode;
    pbfcl_demo_text text;
    pbfcl_demo_camera cam;
    pbfcl_demo_input in;
    pbfcl_context *ctx;
    char device_full[256]; /* "platform / device", for the console */
    char device_name[256]; /* the device's own name, for the HUD */
    bool sharing;
    char why_copy[256];
    char scene_name[64];
    pbfcl_scene_params scene; /* the scene's own (gravity before tilting and shaking) */
    pbfcl_solver *solver;
    pbfcl_scene_setup *setup; /* the scene's, kept for its emitters and drains */
    bool flow;                /* the scene has emitters or drains: run them after each step */
    int substeps;             /* of the last step */
    pbfcl_demo_interop ip;
    size_t n;        /* active particles */
    size_t filled;   /* particles at the start of the scene (before emitters and drains) */
    size_t capacity; /* particles the solver, the GL buffers and density hold (emitters add) */
    float *density;  /* host copy for density colouring, in the caller's particle order */
    bool paused, tilted, help, dirty, pushing;
    int grabbed;               /* the collision shape being dragged (ctrl + left), or -1 */
    float grab_depth;          /* its distance in front of the camera when picked, m */
    bool stepped;              /* this frame advanced the simulation */
    double shake_until;        /* simulated time at which a shake ends, s */
    double time;               /* simulated time since the scene was built, s */
    float dt;                  /* simulated time per step, s */
    float gravity_pitch;       /* degrees gravity is turned about x (arrow keys) */
    float gravity_roll;        /* degrees gravity is turned about z (arrow keys; T adds 20) */
    pbfcl_solver_params tuned; /* iterations, viscosity, vorticity as the keys set them */
    bool tuned_set;            /* the keys changed them: kept across rebuilds */
    bool recording;            /* --record is on and no write has failed */
    bool record_failed;        /* a recorded frame could not be written: exit status 1 */
    long recorded;             /* frames written to the --record folder */
    pbfcl_demo_color color;
    double fps, sim_ms, render_ms;
    double first_frame_end, last_frame_end;      /* for the --frames summary's frame time */
    GLuint queries[PBFCL_FLUID_QUERY_FRAMES];    /* render time, a ring as the passes' */
    GLsync frame_done[PBFCL_FLUID_QUERY_FRAMES]; /* a fence after each frame of the ring */
    long frame;
    char message[200];
} demo;

static double now_s(void)
{
    return (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency();
}

/* A solver holding the n particles at pos, with the setup's parameters; its name to name. */
static pbfcl_status create_solver(demo *d, const pbfcl_scene_setup *setup, const float *pos,
                                  size_t n, pbfcl_solver **out, char *name, size_t name_size)
{
    pbfcl_solver_desc desc;
    pbfcl_solver_desc_defaults(&desc);
    PBFCL_TRY(pbfcl_scene_setup_capacity(setup, &desc.capacity)); /* the fill and the emitters' */
    desc.capacity = desc.capacity > n ? desc.capacity : (n ? n : 1);
    PBFCL_TRY(pbfcl_scene_setup_get_params(setup, &desc.scene, &desc.solver));
    if (d->tuned_set) { /* the keys' settings outlive the solver they were made on */
        desc.solver.iterations = d->tuned.iterations;
        desc.solver.viscosity = d->tuned.viscosity;
        desc.solver.vorticity = d->tuned.vorticity;
    }
    PBFCL_TRY(pbfcl_scene_setup_name(setup, name, name_size));
    PBFCL_TRY(pbfcl_solver_create(d->ctx, &desc, out));
    pbfcl_status s = pbfcl_solver_add(*out, pos, NULL, n);
    if (s == PBFCL_OK)
        s = pbfcl_scene_setup_apply_bodies(setup, *out);
    if (s != PBFCL_OK) {
        pbfcl_solver_destroy(*out);
        *out = NULL;
    }
    return s;
}

/* The diffuse particles a solver of n fluid particles makes room for: a dam break of n makes
 * well under n at once. */
static size_t diffuse_capacity(size_t n)
{
    return n < 8192 ? 16384 : 2 * n;
}

/* Turns the solver's spray, foam and bubbles on or off as d->diffuse_on says. */
static pbfcl_status apply_diffuse(demo *d, pbfcl_solver *solver, size_t n)
{
    d->diffuse_ms = 0.0;
    return pbfcl_solver_set_diffuse(solver, d->diffuse_on ? diffuse_capacity(n) : 0);
}

/* Gives the renderer the particles' phases once per scene (they do not change while it runs), or
 * none when every particle is fluid, so that a fluid-only frame reads nothing more than before;
 * the particles of cloth and ropes are marked to be drawn as meshes (demo_mesh.h). */
static pbfcl_status upload_phases(demo *d)
{
    if (d->n == 0)
        return pbfcl_demo_renderer_set_phases(&d->ren, NULL, 0);
    int *phases = malloc(d->n * sizeof *phases);
    if (!phases) {
        pbfcl_errorf("out of host memory for the phases of %zu particles", d->n);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    pbfcl_status s = pbfcl_solver_get_phases(d->solver, phases, d->n);
    bool solids = false; /* bodies or obstacles */
    for (size_t i = 0; s == PBFCL_OK && i < d->n && !solids; i++)
        solids = phases[i] != PBFCL_PHASE_FLUID;
    bool meshes = false;
    if (s == PBFCL_OK)
        s = pbfcl_demo_mesh_set_solver(&d->mesh, d->solver, d->n, d->scene.particle_radius, phases,
                                       &meshes);
    solids = solids || meshes;
    if (s == PBFCL_OK)
        s = pbfcl_demo_renderer_set_phases(&d->ren, solids ? phases : NULL, d->n);
    free(phases);
    return s;
}

/* Builds the scene that d->scene_opt names and a solver of it, replacing the current ones
 * only if everything succeeds. */
static pbfcl_status build_scene(demo *d, bool refit_camera)
{
    pbfcl_scene_setup *setup = NULL;
    float *pos = NULL;
    size_t n = 0;
    pbfcl_solver *solver = NULL;
    char name[sizeof d->scene_name];
    PBFCL_TRY(pbfcl_scene_options_build(&d->scene_opt, &setup, &pos, &n));
    pbfcl_status s = create_solver(d, setup, pos, n, &solver, name, sizeof name);
    pbfcl_free(pos);
    int emitters = 0, drains = 0;
    size_t capacity = n;
    if (s == PBFCL_OK)
        s = pbfcl_scene_setup_flow_count(setup, &emitters, &drains);
    if (s == PBFCL_OK)
        s = pbfcl_scene_setup_capacity(setup, &capacity);
    if (s == PBFCL_OK)
        s = apply_diffuse(d, solver, capacity);
    float *density = s == PBFCL_OK ? malloc((capacity ? capacity : 1) * sizeof *density) : NULL;
    if (!density) {
        pbfcl_solver_destroy(solver);
        pbfcl_scene_setup_destroy(setup);
        return s != PBFCL_OK ? s : PBFCL_ERR_OUT_OF_MEMORY;
    }
    pbfcl_demo_interop_destroy(&d->ip);
    pbfcl_solver_destroy(d->solver);
    pbfcl_scene_setup_destroy(d->setup);
    free(d->density);
    d->solver = solver, d->n = n, d->density = density;
    d->setup = setup, d->capacity = capacity, d->flow = emitters + drains > 0, d->filled = n;
    pbfcl_solver_params vp;
    pbfcl_solver_get_params(solver, &d->scene, &vp);
    d->substeps = vp.substeps; /* the HUD's until the first step */
    d->dt = vp.dt;
    snprintf(d->scene_name, sizeof d->scene_name, "%s", name);
    PBFCL_TRY(pbfcl_demo_renderer_reserve(&d->ren, capacity));
    PBFCL_TRY(upload_phases(d));
    PBFCL_TRY(pbfcl_demo_interop_create(&d->ip, d->ctx, d->sharing, d->ren.position_vbo, capacity));
    pbfcl_demo_renderer_set_box(&d->ren, d->scene.domain_min, d->scene.domain_max);
    if (refit_camera)
        pbfcl_demo_camera_fit(&d->cam, d->scene.domain_min, d->scene.domain_max);
    d->tilted = false;
    d->grabbed = -1;
    d->shake_until = 0.0;
    d->time = 0.0;
    d->dirty = true;
    return PBFCL_OK;
}

static pbfcl_status setup(demo *d)
{
    char shader_dir[1024];
    bool vsync = !d->opt->no_vsync && d->opt->frames == 0;
    PBFCL_TRY(pbfcl_demo_shader_find_dir(shader_dir, sizeof shader_dir));
    PBFCL_TRY(pbfcl_demo_window_create(&d->win, "pbfcl", d->opt->width, d->opt->height, vsync));
    PBFCL_TRY(pbfcl_demo_renderer_create(&d->ren, shader_dir));
    PBFCL_TRY(pbfcl_demo_fluid_create(&d->fluid, shader_dir));
    PBFCL_TRY(pbfcl_demo_mesh_create(&d->mesh, shader_dir));
    PBFCL_TRY(pbfcl_demo_shadow_create(&d->shadow, shader_dir));
    PBFCL_TRY(pbfcl_demo_diffuse_create(&d->diffuse, shader_dir));
    d->shadow.enabled = d->shadow.enabled && !d->opt->no_shadows;
    d->paused = d->opt->paused;
    d->fluid.curvature_flow = d->opt->curvature_flow;
    PBFCL_TRY(pbfcl_demo_text_create(&d->text, shader_dir));
    glGenQueries(PBFCL_FLUID_QUERY_FRAMES, d->queries);
    PBFCL_TRY(pbfcl_demo_interop_open_cl(&d->ctx, d->scene_opt.device, !d->opt->no_gl_sharing,
                                         &d->sharing, d->why_copy, sizeof d->why_copy));
    PBFCL_TRY(pbfcl_context_device_name(d->ctx, d->device_full, sizeof d->device_full));
    cl_device_id device = NULL;
    PBFCL_TRY(pbfcl_context_cl(d->ctx, NULL, &device, NULL));
    PBFCL_CL_CHECK(
        clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof d->device_name - 1, d->device_name, NULL));
    PBFCL_TRY(build_scene(d, true));
    printf("pbfcl demo: %s, %zu particles on %s\n", d->scene_name, d->n, d->device_full);
    printf("pbfcl demo: OpenGL %s on %s, %dx%d pixels, vsync %s\n",
           (const char *)glGetString(GL_VERSION), pbfcl_demo_gl_renderer(), d->win.draw_width,
           d->win.draw_height, d->win.vsync ? "on" : "off");
    bool why = !d->ip.shared && d->why_copy[0];
    printf("pbfcl demo: positions reach OpenGL by %s%s%s%s\n", pbfcl_demo_interop_path(&d->ip),
           why ? " (" : "", why ? d->why_copy : "", why ? ")" : "");
    fflush(stdout);
    return PBFCL_OK;
}

static void teardown(demo *d)
{
    pbfcl_demo_interop_destroy(&d->ip);
    pbfcl_solver_destroy(d->solver);
    pbfcl_scene_setup_destroy(d->setup);
    pbfcl_context_destroy(d->ctx);
    free(d->density);
    if (d->queries[0])
        glDeleteQueries(PBFCL_FLUID_QUERY_FRAMES, d->queries);
    for (int i = 0; i < PBFCL_FLUID_QUERY_FRAMES; i++)
        if (d->frame_done[i])
            glDeleteSync(d->frame_done[i]);
    pbfcl_demo_text_destroy(&d->text);
    pbfcl_demo_shadow_destroy(&d->shadow);
    pbfcl_demo_diffuse_destroy(&d->diffuse);
    pbfcl_demo_fluid_destroy(&d->fluid);
    pbfcl_demo_mesh_destroy(&d->mesh);
    pbfcl_demo_renderer_destroy(&d->ren);
    pbfcl_demo_window_destroy(&d->win);
}

/* Rebuilds after a key press; on failure keeps the running scene and shows why. */
static void rebuild(demo *d, const char *scene_name, long long particles, bool refit)
{
    pbfcl_scene_options previous = d->scene_opt;
    d->scene_opt.scene = scene_name;
    d->scene_opt.particles = particles;
    if (particles > 0)
        d->scene_opt.radius_set = false; /* a count replaces a --radius given at start */
    if (build_scene(d, refit) == PBFCL_OK) {
        d->message[0] = '\0';
        printf("pbfcl demo: %s, %zu particles\n", d->scene_name, d->n);
        return;
    }
    d->scene_opt = previous;
    snprintf(d->message, sizeof d->message, "could not build %s with %lld particles (see console)",
             scene_name, particles);
    if (!d->solver || d->ip.n != d->capacity) /* the old one is gone too: rebuild it */
        if (build_scene(d, refit) != PBFCL_OK)
            d->in.quit = true;
}

/* A scene key: the k-th built-in scene (k > 0), or the one after (cycle +1) or before (-1)
 * the current in --scene's list, with the particle count or radius asked for so far. */
static void switch_scene(demo *d, int k, int cycle)
{
    const char *const *names = pbfcl_scene_builtin_names();
    int count = 0, current = -1;
    for (; names[count]; count++)
        if (d->scene_opt.scene && !strcmp(names[count], d->scene_opt.scene))
            current = count;
    if (k > count) {
        snprintf(d->message, sizeof d->message, "there are %d built-in scenes (Tab cycles them)",
                 count);
        return;
    }
    int next = k > 0 ? k - 1 : current < 0 ? 0 : (current + cycle + count) % count;
    rebuild(d, names[next], d->scene_opt.particles, true);
}

/* A key changed a solver parameter: the simulation takes the changed scene from the next
 * step; the HUD says the new value or why it stays. */
static void tune(demo *d)
{
    pbfcl_solver_params p;
    if (pbfcl_solver_get_params(d->solver, NULL, &p) != PBFCL_OK)
        return;
    if (!pbfcl_demo_tune_step(&p, d->in.tune, d->in.tune_notch, d->message, sizeof d->message))
        return;
    if (pbfcl_solver_set_params(d->solver, NULL, &p) != PBFCL_OK) {
        snprintf(d->message, sizeof d->message, "the solver refused the change (see console)");
        return;
    }
    d->tuned = p;
    d->tuned_set = true;
    printf("pbfcl demo: %s\n", d->message);
}

static float clamp_degrees(float a)
{
    return a < -90.0f ? -90.0f : a > 90.0f ? 90.0f : a;
}

static void handle_actions(demo *d)
{
    pbfcl_demo_input *in = &d->in;
    if (in->tune_notch)
        tune(d);
    d->gravity_pitch = clamp_degrees(d->gravity_pitch + in->turn_pitch);
    d->gravity_roll = clamp_degrees(d->gravity_roll + in->turn_roll);
    if (in->pause)
        d->paused = !d->paused;
    if (in->help)
        d->help = !d->help;
    if (in->color) {
        bool speed = d->color == PBFCL_DEMO_COLOR_SPEED;
        d->color = speed ? PBFCL_DEMO_COLOR_DENSITY : PBFCL_DEMO_COLOR_SPEED;
        d->dirty = true; /* densities must be read for the next draw */
    }
    if (in->render) {
        bool fluid = d->render_mode == PBFCL_DEMO_RENDER_FLUID;
        d->render_mode = fluid ? PBFCL_DEMO_RENDER_SPHERES : PBFCL_DEMO_RENDER_FLUID;
        d->render_ms = 0.0; /* the two modes' times do not mix */
    }
    if (in->smooth_method)
        d->fluid.curvature_flow = !d->fluid.curvature_flow;
    if (in->diffuse) {
        d->diffuse_on = !d->diffuse_on;
        if (apply_diffuse(d, d->solver, d->capacity) != PBFCL_OK) {
            d->diffuse_on = false;
            snprintf(d->message, sizeof d->message, "spray, foam and bubbles failed (see console)");
        }
        printf("pbfcl demo: spray, foam and bubbles %s\n", d->diffuse_on ? "on" : "off");
        d->dirty = true;
    }
    if (in->smooth_change)
        pbfcl_demo_fluid_change_smoothing(&d->fluid, in->smooth_change);
    if (in->tilt)
        d->tilted = !d->tilted;
    if (in->shake)
        d->shake_until = d->time + 1.5;
    if (in->reset)
        rebuild(d, d->scene_opt.scene, d->scene_opt.particles, false);
    if (in->scene || in->scene_cycle)
        switch_scene(d, in->scene, in->scene_cycle);
    if (in->count_change) {
        double f = in->count_change > 0 ? 1.5 : 1.0 / 1.5;
        long long target = (long long)((double)d->n * f);
        if (target < 100)
            snprintf(d->message, sizeof d->message, "already at the fewest particles");
        else
            rebuild(d, d->scene_opt.scene, target, false);
    }
}

/* The scene's gravity turned by the arrow keys' angles (and 20 degrees about z more while
 * tilted with T). */
static void turned_gravity(const demo *d, float g[3])
{
    float roll = d->gravity_roll + (d->tilted ? 20.0f : 0.0f);
    pbfcl_demo_gravity_turn(d->scene.gravity, d->gravity_pitch, roll, g);
}

/* Gravity turned as the keys set it and shaken sideways while a shake lasts; on simulated
 * time, so a shake is the same motion at any frame rate. */
static pbfcl_status update_gravity(demo *d)
{
    float g[3];
    turned_gravity(d, g);
    float mag = sqrtf(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    if (d->time < d->shake_until) {
        float phase = (float)(d->time * 2.0 * 3.14159265 * 2.5);
        g[0] += 1.5f * mag * sinf(phase);
        g[2] += 0.75f * mag * cosf(phase);
    }
    pbfcl_scene_params scene = d->scene;
    memcpy(scene.gravity, g, sizeof g);
    return pbfcl_solver_set_params(d->solver, &scene, NULL);
}

/* Right drag: pushes along the drag direction around the cursor ray. */
static pbfcl_status update_push(demo *d)
{
    pbfcl_demo_input *in = &d->in;
    float origin[3], dir[3], right[3], up[3], push[3] = {0, 0, 0};
    float len = sqrtf(in->push_dx * in->push_dx + in->push_dy * in->push_dy);
    if (!in->right || len == 0.0f) {
        bool was = d->pushing;
        d->pushing = false;
        return was ? pbfcl_solver_set_push(d->solver, push, push, push, 0.0f, 0.0f) : PBFCL_OK;
    }
    pbfcl_demo_camera_ray(&d->cam, (float)in->mouse_x, (float)in->mouse_y, d->win.width,
                          d->win.height, origin, dir);
    pbfcl_demo_camera_basis(&d->cam, right, up);
    for (int k = 0; k < 3; k++)
        push[k] = (right[k] * in->push_dx - up[k] * in->push_dy) / len;
    float g = sqrtf(d->scene.gravity[0] * d->scene.gravity[0] +
                    d->scene.gravity[1] * d->scene.gravity[1] +
                    d->scene.gravity[2] * d->scene.gravity[2]);
    float strength = fminf(len * 0.5f, 8.0f) * (g > 0.0f ? g : 9.81f);
    d->pushing = true;
    return pbfcl_solver_set_push(d->solver, origin, dir, push, 0.12f * d->cam.scene_size, strength);
}

/* The camera's forward vector (unit length) and tan of half its vertical field of view in
 * this window (widened in portrait ones, as the projection is). */
static float camera_forward(const demo *d, float forward[3])
{
    float eye[3], len = 0.0f;
    pbfcl_demo_camera_eye(&d->cam, eye);
    for (int k = 0; k < 3; k++) {
        forward[k] = d->cam.target[k] - eye[k];
        len += forward[k] * forward[k];
    }
    len = sqrtf(len);
    for (int k = 0; k < 3; k++)
        forward[k] /= len > 0.0f ? len : 1.0f;
    float aspect = d->win.height > 0 ? (float)d->win.width / (float)d->win.height : 1.0f;
    float t = tanf(0.5f * d->cam.fovy);
    return aspect > 0.0f && aspect < 1.0f ? t / aspect : t;
}

/* The world offset of this frame's drag of the grabbed shape. */
static void drag_offset(demo *d, float move[3])
{
    float forward[3], right[3], up[3];
    float tan_half = camera_forward(d, forward);
    pbfcl_demo_camera_basis(&d->cam, right, up);
    pbfcl_demo_drag_offset(right, up, tan_half, d->win.height, d->grab_depth, d->in.grab_dx,
                           d->in.grab_dy, move);
}

/* Picks the shape under the cursor, if any, as the one to drag. */
static void grab_shape(demo *d)
{
    float forward[3], origin[3], dir[3], t = 0.0f;
    camera_forward(d, forward);
    pbfcl_demo_camera_ray(&d->cam, (float)d->in.mouse_x, (float)d->in.mouse_y, d->win.width,
                          d->win.height, origin, dir);
    d->grabbed = pbfcl_demo_mesh_pick(&d->mesh, origin, dir, &t);
    if (d->grabbed < 0)
        return;
    d->grab_depth = t * (dir[0] * forward[0] + dir[1] * forward[1] + dir[2] * forward[2]);
    printf("pbfcl demo: dragging shape %d\n", d->grabbed);
    fflush(stdout);
}

/* Moves the grabbed shape by move and stops it there. */
static pbfcl_status place_shape(demo *d, const float move[3])
{
    static const float still[3] = {0.0f, 0.0f, 0.0f};
    float p[3];
    PBFCL_TRY(pbfcl_shape_get_pose(d->solver, d->grabbed, p, NULL));
    for (int k = 0; k < 3; k++)
        p[k] += move[k];
    d->dirty = true;
    return pbfcl_shape_set_motion(d->solver, d->grabbed, p, NULL, still, still);
}

/* Ctrl + left drag: the collision shape under the cursor follows it in the plane facing the
 * camera; while the simulation runs by a velocity that covers the frame's drag in one step (so
 * that it pushes and carries the particles it touches), while paused, and for the drag of the
 * frame it is let go in, by moving it there. Let go, it stands still. */
static pbfcl_status drag_shape(demo *d)
{
    if (d->grabbed < 0 && d->in.grab)
        grab_shape(d);
    if (d->grabbed < 0)
        return PBFCL_OK;
    float move[3];
    drag_offset(d, move);
    if (d->in.grab && !d->paused) {
        static const float still[3] = {0.0f, 0.0f, 0.0f};
        float v[3] = {move[0] / d->dt, move[1] / d->dt, move[2] / d->dt};
        return pbfcl_shape_set_motion(d->solver, d->grabbed, NULL, NULL, v, still);
    }
    PBFCL_TRY(place_shape(d, move));
    if (d->in.grab)
        return PBFCL_OK;
    float p[3];
    PBFCL_TRY(pbfcl_shape_get_pose(d->solver, d->grabbed, p, NULL));
    printf("pbfcl demo: let go of shape %d at %.3f %.3f %.3f\n", d->grabbed, (double)p[0],
           (double)p[1], (double)p[2]);
    fflush(stdout);
    d->grabbed = -1;
    return PBFCL_OK;
}

/* The scene's drains and emitters after a step: particles removed and appended, so the count
 * and (with obstacles or bodies) the phases by index change. */
static pbfcl_status run_flow(demo *d)
{
    size_t removed = 0, added = 0;
    PBFCL_TRY(pbfcl_scene_setup_flow(d->setup, d->solver, d->time, NULL, &removed, &added));
    if (removed == 0 && added == 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_solver_count(d->solver, &d->n));
    return upload_phases(d);
}

/* Advances one step with the gravity and push of this frame; the step's device time (or wall
 * time) goes to the HUD. */
static pbfcl_status step(demo *d)
{
    PBFCL_TRY(update_gravity(d));
    PBFCL_TRY(update_push(d));
    pbfcl_timers timers;
    double t0 = now_s();
    PBFCL_TRY(pbfcl_solver_step(d->solver, 0.0f, &timers)); /* waits for the device */
    size_t n = d->n;
    PBFCL_TRY(pbfcl_solver_count(d->solver, &n));
    if (n != d->n) { /* a tearing cloth's new particles, at the end: phases and meshes anew */
        d->n = n;
        PBFCL_TRY(upload_phases(d));
    }
    d->substeps = timers.substeps;
    d->time += d->dt;
    d->stepped = true;
    if (d->flow)
        PBFCL_TRY(run_flow(d));
    double wall = (now_s() - t0) * 1e3;
    double sample = timers.total > 0.0 ? timers.total : wall;
    d->sim_ms = d->sim_ms > 0.0 ? 0.9 * d->sim_ms + 0.1 * sample : sample;
    double diffuse = 0.0; /* 0 while off: the stage did not run */
    PBFCL_TRY(pbfcl_solver_timer_ms(d->solver, "diffuse", &diffuse));
    d->diffuse_ms = d->diffuse_ms > 0.0 ? 0.9 * d->diffuse_ms + 0.1 * diffuse : diffuse;
    d->dirty = true;
    return PBFCL_OK;
}

/* Moves positions (and densities when they colour the particles) into the GL buffers. */
static pbfcl_status transfer(demo *d)
{
    if (!d->dirty)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_demo_interop_update(&d->ip, d->solver));
    PBFCL_TRY(pbfcl_demo_diffuse_update(&d->diffuse, d->solver));
    PBFCL_TRY(pbfcl_demo_mesh_update(&d->mesh, d->solver));
    if (d->color == PBFCL_DEMO_COLOR_DENSITY) {
        PBFCL_TRY(pbfcl_solver_get_densities(d->solver, d->density, d->n));
        pbfcl_demo_renderer_upload_density(&d->ren, d->density, d->n);
    }
    d->dirty = false;
    return PBFCL_OK;
}

/* The render time of the oldest frame in the ring from a GL timer query (no stall: read
 * only when available). The previous frame's alone is not enough: a driver may still be
 * drawing it (NVIDIA's, without vsync, never had it ready). The first frame's is left out:
 * it pays for warm-up, and llvmpipe reports a clock reading instead of its duration. */
static void read_render_time(demo *d)
{
    if (d->frame <= PBFCL_FLUID_QUERY_FRAMES)
        return;
    GLuint q = d->queries[d->frame % PBFCL_FLUID_QUERY_FRAMES];
    GLint available = 0;
    glGetQueryObjectiv(q, GL_QUERY_RESULT_AVAILABLE, &available);
    if (!available)
        return;
    GLuint64 ns = 0;
    glGetQueryObjectui64v(q, GL_QUERY_RESULT, &ns);
    double ms = (double)ns * 1e-6;
    d->render_ms = d->render_ms > 0.0 ? 0.9 * d->render_ms + 0.1 * ms : ms;
}

/* The times of fluid passes from..to-1 as a short HUD line: "PASSES SUN 0.4 SCE 1.2 ...". */
static void format_passes(const demo *d, int from, int to, const char *head, char *line,
                          size_t size)
{
    int k = snprintf(line, size, "%s", head);
    for (int i = from; i < to && k > 0 && (size_t)k < size; i++)
        k += snprintf(line + k, size - (size_t)k, " %.3s %.1f", pbfcl_demo_fluid_pass_names[i],
                      d->fluid.pass_ms[i]);
}

static pbfcl_status render(demo *d)
{
    pbfcl_demo_view v;
    pbfcl_demo_view_scene(&v, &d->scene, d->color, d->win.draw_width, d->win.draw_height, d->n,
                          &d->shadow);
    pbfcl_demo_camera_matrices(&d->cam, (float)v.width / (float)v.height, v.view, v.proj);
    v.draw_extra = pbfcl_demo_mesh_draw;
    v.extra = &d->mesh;
    bool fluid = d->render_mode == PBFCL_DEMO_RENDER_FLUID;
    read_render_time(d);
    glBeginQuery(GL_TIME_ELAPSED, d->queries[d->frame % PBFCL_FLUID_QUERY_FRAMES]);
    pbfcl_status s = PBFCL_OK;
    if (fluid) {
        s = pbfcl_demo_fluid_draw(&d->fluid, &d->ren, &d->shadow, &v);
        if (s == PBFCL_OK && d->diffuse_on)
            pbfcl_demo_diffuse_draw(&d->diffuse, &v);
    } else {
        pbfcl_demo_shadow_draw(&d->shadow, &d->ren, &v);
        pbfcl_demo_renderer_draw(&d->ren, &v);
    }
    glEndQuery(GL_TIME_ELAPSED);
    PBFCL_TRY(s);
    char passes[2][120], smoothing[64], settings[160], gravity_line[80], diffuse_line[120];
    const pbfcl_demo_diffuse *df = &d->diffuse;
    if (d->diffuse_on)
        snprintf(diffuse_line, sizeof diffuse_line, "DIFFUSE %zu %.2f MS", df->count,
                 d->diffuse_ms);
    else
        snprintf(diffuse_line, sizeof diffuse_line, "DIFFUSE OFF (D)");
    int half = PBFCL_FLUID_PASS_COUNT / 2;
    format_passes(d, 0, half, "PASSES", passes[0], sizeof passes[0]);
    format_passes(d, half, PBFCL_FLUID_PASS_COUNT, "      ", passes[1], sizeof passes[1]);
    float gravity[3];
    turned_gravity(d, gravity);
    pbfcl_solver_params live;
    memset(&live, 0, sizeof live);
    pbfcl_solver_get_params(d->solver, NULL, &live);
    pbfcl_demo_tune_describe(&live, settings, sizeof settings);
    snprintf(gravity_line, sizeof gravity_line, "GRAVITY %.1f %.1f %.1f M/S2", (double)gravity[0],
             (double)gravity[1], (double)gravity[2]);
    pbfcl_demo_fluid_describe(&d->fluid, smoothing, sizeof smoothing);

    pbfcl_demo_hud hud = {
        .scene = d->scene_name,
        .fps = d->fps,
        .sim_ms = d->sim_ms,
        .render_ms = d->render_ms,
        .particles = d->n,
        .substeps = d->substeps,
        .method = pbfcl_method_name(live.method),
        .device = d->device_name,
        .path = pbfcl_demo_interop_path(&d->ip),
        .color = d->color == PBFCL_DEMO_COLOR_SPEED ? "SPEED" : "DENSITY",
        .render = fluid ? "FLUID" : "SPHERES",
        .smoothing = smoothing,
        .passes = fluid ? passes[0] : NULL,
        .passes2 = fluid ? passes[1] : NULL,
        .settings = settings,
        .gravity = gravity_line,
        .diffuse = diffuse_line,
        .legend = !fluid,
        .color_mode = d->color,
        .range = {v.range[0], v.range[1]},
        .paused = d->paused,
        .tilted = d->tilted,
        .help = d->help,
        .recording = d->recording ? d->recorded : -1,
        .message = d->message[0] ? d->message : NULL,
    };
    pbfcl_demo_hud_draw(&d->text, &hud, v.width, v.height, pbfcl_demo_window_pixel_scale(&d->win));
    return PBFCL_OK;
}

/* One frame; returns non-OK only for errors that end the demo. */
static pbfcl_status frame(demo *d)
{
    pbfcl_demo_input_begin_frame(&d->in);
    d->stepped = false;
    pbfcl_demo_input_poll(&d->in, &d->cam, &d->win);
    handle_actions(d);
    if (d->in.quit)
        return PBFCL_OK;
    if (drag_shape(d) != PBFCL_OK)
        snprintf(d->message, sizeof d->message, "the shape could not be moved (see console)");
    if (d->win.minimized && d->opt->frames == 0) {
        SDL_Delay(50); /* nothing to draw: do not spin, and leave the simulation paused */
        return PBFCL_OK;
    }
    if (!d->paused || d->in.step) {
        pbfcl_status s = step(d);
        if (s != PBFCL_OK) {
            if (d->opt->frames > 0)
                return s;
            d->paused = true;
            snprintf(d->message, sizeof d->message, "step failed: %s - press R to reset",
                     pbfcl_status_message(s));
        }
    }
    PBFCL_TRY(transfer(d));
    return render(d);
}

static void update_fps(demo *d, double *t_last, long *frames_since)
{
    (*frames_since)++;
    double t = now_s();
    if (t - *t_last >= 0.5) {
        d->fps = (double)*frames_since / (t - *t_last);
        *t_last = t;
        *frames_since = 0;
    }
}

/* The --frames run's closing line: step and render times, and the fluid passes'. */
static void print_summary(const demo *d)
{
    printf("pbfcl demo: %ld frames, %.2f ms/step (simulation), %.2f ms (render, %s)\n", d->frame,
           d->sim_ms, d->render_ms,
           d->render_mode == PBFCL_DEMO_RENDER_FLUID ? "fluid" : "spheres");
    if (d->flow)
        printf("pbfcl demo: %zu particles after %.4f s of emitters and drains (%zu at the start)\n",
               d->n, d->time, d->filled);
    if (d->frame > 1) /* the first frame pays for warm-up: it is left out */
        printf("pbfcl demo: %.2f ms per frame (frames 2 to %ld, step + transfer + draw + swap), "
               "positions by %s\n",
               (d->last_frame_end - d->first_frame_end) * 1e3 / (double)(d->frame - 1), d->frame,
               pbfcl_demo_interop_path(&d->ip));
    const pbfcl_demo_diffuse *df = &d->diffuse;
    if (d->diffuse_on)
        printf("pbfcl demo: diffuse particles %zu (spray %zu, foam %zu, bubbles %zu), %.2f ms per "
               "step\n",
               df->count, df->by_type[0], df->by_type[1], df->by_type[2], d->diffuse_ms);
    else
        printf("pbfcl demo: diffuse particles off\n");
    if (d->render_mode != PBFCL_DEMO_RENDER_FLUID)
        return;
    char smoothing[64];
    pbfcl_demo_fluid_describe(&d->fluid, smoothing, sizeof smoothing);
    printf("pbfcl demo: fluid passes (ms, %dx%d, %s):", d->win.draw_width, d->win.draw_height,
           smoothing);
    for (int i = 0; i < PBFCL_FLUID_PASS_COUNT; i++)
        printf(" %s %.2f", pbfcl_demo_fluid_pass_names[i], d->fluid.pass_ms[i]);
    printf(", total %.2f\n", pbfcl_demo_fluid_total_ms(&d->fluid));
}

/* The screenshot key: the frame just drawn to a new pbfcl-shot-NNNN.png in the current
 * folder; the HUD says where it went or why it did not. */
static void take_shot(demo *d)
{
    char path[64];
    if (!pbfcl_demo_shot_path(path, sizeof path, ".")) {
        snprintf(d->message, sizeof d->message, "no free screenshot name in this folder");
        return;
    }
    if (pbfcl_demo_screenshot(path, d->win.draw_width, d->win.draw_height) != PBFCL_OK) {
        snprintf(d->message, sizeof d->message, "screenshot failed (see console)");
        return;
    }
    printf("pbfcl demo: wrote %s (%dx%d)\n", path + 2, d->win.draw_width, d->win.draw_height);
    fflush(stdout);
    snprintf(d->message, sizeof d->message, "wrote %s", path + 2);
}

/* --record: the frame just drawn, if it shows a new simulation step, as the next frame file;
 * a failed write (a full disk) stops the recording with a message and leaves the frames
 * written so far whole. */
static void record_frame(demo *d)
{
    if (!d->recording || !d->stepped)
        return;
    char path[4200];
    pbfcl_status s = PBFCL_ERR_BAD_ARGUMENT;
    if (pbfcl_demo_record_path(path, sizeof path, d->opt->record, d->recorded))
        s = pbfcl_demo_screenshot(path, d->win.draw_width, d->win.draw_height);
    if (s == PBFCL_OK) {
        d->recorded++;
        return;
    }
    d->recording = false;
    d->record_failed = true;
    fprintf(stderr, "pbfcl demo: recording stopped after %ld frames in %s\n", d->recorded,
            d->opt->record);
    snprintf(d->message, sizeof d->message, "recording stopped after %ld frames (see console)",
             d->recorded);
}

/* Keeps at most PBFCL_FLUID_QUERY_FRAMES frames queued on the GPU: waits for the fence of
 * the frame that used this slot of the ring. A window's swap usually throttles the loop, but
 * an off-screen surface's (SDL's offscreen driver) does not, and without this a paused demo
 * would queue frames faster than the GPU draws them. */
static void wait_frame_slot(demo *d)
{
    GLsync *fence = &d->frame_done[d->frame % PBFCL_FLUID_QUERY_FRAMES];
    if (!*fence)
        return;
    glClientWaitSync(*fence, GL_SYNC_FLUSH_COMMANDS_BIT, 5000000000ull); /* at most 5 s */
    glDeleteSync(*fence);
    *fence = NULL;
}

static pbfcl_status run_loop(demo *d)
{
    double t_fps = now_s();
    long frames_since = 0;
    while (!d->in.quit) {
        wait_frame_slot(d);
        PBFCL_TRY(frame(d));
        if (d->in.quit || (d->win.minimized && d->opt->frames == 0))
            continue;
        d->frame++;
        record_frame(d);
        if (d->in.shot)
            take_shot(d);
        bool last = d->opt->frames > 0 && d->frame >= d->opt->frames;
        if (last && d->opt->screenshot) {
            PBFCL_TRY(
                pbfcl_demo_screenshot(d->opt->screenshot, d->win.draw_width, d->win.draw_height));
            printf("pbfcl demo: wrote %s (%dx%d) after %ld frames\n", d->opt->screenshot,
                   d->win.draw_width, d->win.draw_height, d->frame);
        }
        SDL_GL_SwapWindow(d->win.window);
        d->frame_done[(d->frame - 1) % PBFCL_FLUID_QUERY_FRAMES] =
            glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        d->last_frame_end = now_s();
        if (d->frame == 1)
            d->first_frame_end = d->last_frame_end;
        update_fps(d, &t_fps, &frames_since);
        if (last)
            break;
    }
    return PBFCL_OK;
}

/* Catches what can be caught before a window opens: a screenshot that is the scene file or
 * a recorded frame's file (run_paths.h), no PNG support, an unwritable screenshot or
 * recording folder, a recording folder holding frames, an unknown device, a scene that does
 * not load or validate. */
static pbfcl_status check_before_window(const pbfcl_demo_options *o)
{
    const char *scene = pbfcl_scene_is_file(o->scene.scene) ? o->scene.scene : NULL;
    const path_role roles[] = {{"--screenshot", o->screenshot, NULL, NULL},
                               {"--record", o->record, NULL, NULL},
                               {"--scene", scene, "scene file", NULL}};
    const path_folder frames = {1, pbfcl_demo_record_is_frame_name, "frame_NNNNNN.png"};
    PBFCL_TRY(paths_check(roles, 3, &frames)); /* before the folder is created */
    const char *png = o->screenshot ? o->screenshot : o->record;
    if (png && !pbfcl_demo_screenshot_supported())
        return pbfcl_demo_screenshot(png, 0, 0);
    if (o->record)
        PBFCL_TRY(pbfcl_demo_record_prepare(o->record, o->force));
    if (o->screenshot) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", o->screenshot);
        char *slash = strrchr(dir, '/');
        if (slash)
            slash[slash == dir ? 1 : 0] = '\0';
        if (access(slash ? dir : ".", W_OK) != 0) {
            pbfcl_errorf("cannot write screenshot %s: folder %s is missing or not writable",
                         o->screenshot, slash ? dir : ".");
            return PBFCL_ERR_IO;
        }
    }
    pbfcl_scene_setup *setup = NULL;
    float *pos = NULL;
    size_t n = 0;
    PBFCL_TRY(pbfcl_scene_options_build(&o->scene, &setup, &pos, &n));
    pbfcl_scene_setup_destroy(setup);
    pbfcl_free(pos);
    return pbfcl_device_find(o->scene.device ? o->scene.device : app_env_device(), NULL);
}

int pbfcl_demo_run(const pbfcl_demo_options *o)
{
    if (check_before_window(o) != PBFCL_OK)
        return 1;
    demo *d = calloc(1, sizeof *d);
    if (!d) {
        pbfcl_errorf("out of memory starting the demo");
        return 1;
    }
    d->opt = o;
    d->scene_opt = o->scene;
    if (!d->scene_opt.scene)
        d->scene_opt.scene = PBFCL_DEFAULT_SCENE;
    d->color = o->color;
    d->render_mode = o->render;
    d->diffuse_on = !o->no_diffuse;
    d->recording = o->record != NULL;
    pbfcl_status s = setup(d);
    if (s == PBFCL_OK)
        s = run_loop(d);
    if (s == PBFCL_OK && o->frames > 0)
        print_summary(d);
    if (o->record)
        printf("pbfcl demo: recorded %ld frames (%.4g s of simulated time each) in %s\n",
               d->recorded, (double)d->dt, o->record);
    if (d->record_failed)
        s = PBFCL_ERR_IO;
    teardown(d);
    free(d);
    return s == PBFCL_OK ? 0 : 1;
}
