/* Weakly compressible SPH (Becker & Teschner 2007) with velocity Verlet integration, seed
 * 002's phase II on the core's neighbour pipeline: the method's constants and scene checks,
 * its kernels (cl/sph/sph.cl) and one host wrapper per stage, its step and its time step. */
#include "sph/sph.h"

#include "runtime/programs.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* What sph's create makes: its program, kernels and constants. */
typedef struct sph_state {
    cl_program program;
    cl_kernel density, force, verlet_x, verlet_v;
    cl_mem params_buf;   /* pbfcl_sph_params, __constant */
    cl_mem accel_buf;    /* float4: a of the last force stage */
    cl_mem vel_half_buf; /* float4: v + a dt / 2 */
    cl_mem pressure_buf; /* float: p / rho^2 */
    pbfcl_sph_params params;
    int warned_steps; /* the frame needed more steps than sph_max_steps (said once) */
} sph_state;

static const char *const sph_kernel_names[] = {"sph_density", "sph_force", "sph_verlet_x",
                                               "sph_verlet_v"};

#define SPH_KERNEL_COUNT ((int)(sizeof sph_kernel_names / sizeof sph_kernel_names[0]))

static cl_kernel *sph_kernel_slot(sph_state *st, int k)
{
    cl_kernel *slots[] = {&st->density, &st->force, &st->verlet_x, &st->verlet_v};
    return slots[k];
}

/* Sets kernel argument idx to the value v (an lvalue). */
#define SPH_ARG(kernel, idx, v) PBFCL_CL_CHECK(clSetKernelArg((kernel), (idx), sizeof(v), &(v)))

/* |g| and the box's extent along gravity (its diagonal without gravity). */
static void gravity_height(const pbfcl_scene *s, double *g, double *height)
{
    double g2 = 0.0, diag2 = 0.0, along = 0.0;
    for (int a = 0; a < 3; a++)
        g2 += (double)s->gravity[a] * s->gravity[a];
    *g = sqrt(g2);
    for (int a = 0; a < 3; a++) {
        double e = (double)s->domain_max[a] - s->domain_min[a];
        diag2 += e * e;
        along += *g > 0.0 ? fabs(s->gravity[a] / *g) * e : 0.0;
    }
    *height = *g > 0.0 ? along : sqrt(diag2);
}

double pbfcl_sph_sound_speed(const pbfcl_scene *scene, double *min_out)
{
    double g, height;
    gravity_height(scene, &g, &height);
    double least = 10.0 * sqrt(2.0 * g * height);
    if (min_out)
        *min_out = least;
    if (scene->solver.speed_of_sound > 0.0f)
        return scene->solver.speed_of_sound;
    return 10.0 * sqrt(2.0 * (g > 0.0 ? g : 9.81) * height);
}

/* M = sum_j V (x_j - x_i)_x dW/dx_i over the rest lattice (spacing 2r, V = m / rho0 with
 * sph's mass) with Spiky's gradient dW/dx = spiky_grad (h - r)^2 x / r: what the sum of the
 * pressure force makes of the gradient of a linear field, 1 in the continuum. */
static double lattice_gradient_moment(const pbfcl_pbf_params *p)
{
    double s = p->min_dist, h = p->h, sum = 0.0;
    int reach = (int)ceil(h / s);
    for (int i = -reach; i <= reach; i++)
        for (int j = -reach; j <= reach; j++)
            for (int k = -reach; k <= reach; k++) {
                double r = s * sqrt((double)(i * i + j * j + k * k)), dx = i * s;
                sum += r < h && r > 0.0 ? -p->spiky_grad * (h - r) * (h - r) / r * dx * dx : 0.0;
            }
    return sum * p->mass / p->rest_density;
}

void pbfcl_sph_params_from_scene(const pbfcl_scene *scene, const pbfcl_pbf_params *p,
                                 pbfcl_sph_params *s)
{
    double c = pbfcl_sph_sound_speed(scene, NULL), hs = 0.5 * p->h; /* smoothing length */
    memset(s, 0, sizeof *s);
    s->gamma = (float)PBFCL_SPH_GAMMA;
    s->sound_speed = (float)c;
    s->stiffness = (float)(scene->rest_density * c * c / PBFCL_SPH_GAMMA);
    s->alpha = scene->solver.artificial_viscosity;
    s->visc_eps = (float)(0.01 * hs * hs);
    s->wall_density = scene->rest_density;
    s->grad_scale = (float)(1.0 / lattice_gradient_moment(p));
}

/* x rounded to 3 significant digits, up (dir > 0) or down, for the values messages suggest. */
static double round3(double x, int dir)
{
    if (!(x > 0.0))
        return x;
    double unit = pow(10.0, floor(log10(x)) - 2.0);
    return (dir > 0 ? ceil(x / unit * (1.0 - 1e-12)) : floor(x / unit * (1.0 + 1e-12))) * unit;
}

/* The largest step the CFL condition allows at flow speed v. */
static double cfl_step(const pbfcl_scene *scene, const pbfcl_pbf_params *p, double c, double v)
{
    return scene->solver.sph_cfl * p->h / (c + v);
}

/* sph's derive: the speed of sound against the scene's flow speed; the frame against the CFL
 * condition. */
static pbfcl_status sph_derive(const pbfcl_scene *scene, pbfcl_constants *p)
{
    const pbfcl_solver_settings *v = &scene->solver;
    double least, c = pbfcl_sph_sound_speed(scene, &least);
    if (v->speed_of_sound > 0.0f && v->speed_of_sound < least) {
        pbfcl_errorf("solver.speed_of_sound %g m/s is below 10 times the free-fall speed "
                     "sqrt(2 |g| H) = %.4g m/s over the box's height H along gravity: the density "
                     "error of the Tait equation, about (v / c)^2, would exceed 1 %%; use "
                     "solver.speed_of_sound >= %g, or 0 to derive it",
                     v->speed_of_sound, least / 10.0, round3(least, 1));
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    double step = cfl_step(scene, p, c, least / 10.0);
    double steps = ceil(v->dt / step);
    if (steps > v->sph_max_steps) {
        double dt_ok = round3(step * v->sph_max_steps, -1);
        pbfcl_errorf("solver.dt %g s needs %.0f velocity Verlet steps per frame: the CFL condition "
                     "allows steps of at most sph_cfl h / (c + sqrt(2 |g| H)) = %.3g s (c = %.4g "
                     "m/s, h = %.4g m), and solver.sph_max_steps is %d; use solver.dt <= %g, or "
                     "solver.sph_max_steps >= %.0f",
                     v->dt, steps, step, c, p->h, v->sph_max_steps, dt_ok, steps);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* sph's kernels and constants (its program compiles cl/pbf/pbf.cl before cl/sph/sph.cl for the
 * kernel functions and walls it shares with pbf). */
static pbfcl_status sph_create(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    sph_state *st = calloc(1, sizeof *st);
    if (!st)
        return PBFCL_ERR_OUT_OF_MEMORY;
    *v.method_state = st;
    pbfcl_build_config cfg;
    pbfcl_solver_sph()->build_config(&v.cl->dev, &cfg);
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_SPH);
    PBFCL_TRY(pbfcl_cl_build(v.cl, desc->files, desc->nfiles, options, &st->program));
    for (int k = 0; k < SPH_KERNEL_COUNT; k++) {
        cl_kernel *slot = sph_kernel_slot(st, k);
        PBFCL_TRY(pbfcl_cl_kernel(st->program, sph_kernel_names[k], slot));
        size_t local = *slot == st->verlet_v ? cfg.wg_size * sizeof(float) : 0;
        PBFCL_TRY(pbfcl_cl_check_launch(v.cl, *slot, sph_kernel_names[k], cfg.wg_size, local));
    }
    pbfcl_sph_params_from_scene(v.scene, v.params, &st->params);
    PBFCL_TRY(pbfcl_cl_buffer(v.cl, CL_MEM_READ_ONLY, sizeof st->params, "sph parameters",
                              &st->params_buf));
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(v.cl->queue, st->params_buf, CL_TRUE, 0, sizeof st->params,
                                        &st->params, 0, NULL, NULL));
    return pbfcl_sim_method_buffers_make(sim);
}

static void sph_destroy(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    sph_state *st = *v.method_state;
    if (st) {
        for (int k = 0; k < SPH_KERNEL_COUNT; k++)
            if (*sph_kernel_slot(st, k))
                clReleaseKernel(*sph_kernel_slot(st, k));
        if (st->program)
            clReleaseProgram(st->program);
        pbfcl_cl_release_buffer(&st->params_buf);
        pbfcl_sim_method_buffers_release(sim);
        free(st);
        *v.method_state = NULL;
    }
}

static sph_state *state_of(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    pbfcl_sim_view_get(sim, v);
    return *v->method_state;
}

const pbfcl_sph_params *pbfcl_sph_params_of(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    return &state_of(sim, &v)->params;
}

/* The constants of the scene now (pbfcl_sim_set_scene may have changed it between frames),
 * uploaded when they differ from the last ones. */
static pbfcl_status sync_params(sph_state *st, const pbfcl_sim_view *v)
{
    pbfcl_sph_params now;
    pbfcl_sph_params_from_scene(v->scene, v->params, &now);
    if (!memcmp(&now, &st->params, sizeof now))
        return PBFCL_OK;
    st->params = now;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(v->cl->queue, st->params_buf, CL_TRUE, 0, sizeof now, &now,
                                        0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sph_density(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    cl_kernel k = st->density;
    cl_uint n = (cl_uint)v.n;
    SPH_ARG(k, 0, v.params_buf);
    SPH_ARG(k, 1, st->params_buf);
    SPH_ARG(k, 2, n);
    SPH_ARG(k, 3, v.pos_buf);
    SPH_ARG(k, 4, v.grid->neighbor_count_buf);
    SPH_ARG(k, 5, v.grid->neighbor_buf);
    SPH_ARG(k, 6, v.density_buf);
    SPH_ARG(k, 7, st->pressure_buf);
    SPH_ARG(k, 8, v.wall_scale);
    return pbfcl_cl_launch(v.cl, k, v.n, v.wg, prof, PBFCL_STAGE_DENSITY);
}

pbfcl_status pbfcl_sph_force(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    cl_kernel k = st->force;
    cl_uint n = (cl_uint)v.n;
    SPH_ARG(k, 0, v.params_buf);
    SPH_ARG(k, 1, st->params_buf);
    SPH_ARG(k, 2, n);
    SPH_ARG(k, 3, v.pos_buf);
    SPH_ARG(k, 4, v.vel_buf);
    SPH_ARG(k, 5, v.density_buf);
    SPH_ARG(k, 6, st->pressure_buf);
    SPH_ARG(k, 7, v.grid->neighbor_count_buf);
    SPH_ARG(k, 8, v.grid->neighbor_buf);
    SPH_ARG(k, 9, st->accel_buf);
    SPH_ARG(k, 10, v.wall_scale);
    SPH_ARG(k, 11, v.gravity);
    SPH_ARG(k, 12, v.push_origin);
    SPH_ARG(k, 13, v.push_dir);
    SPH_ARG(k, 14, v.push);
    return pbfcl_cl_launch(v.cl, k, v.n, v.wg, prof, PBFCL_STAGE_FORCE);
}

pbfcl_status pbfcl_sph_verlet_x(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    cl_kernel k = st->verlet_x;
    cl_uint n = (cl_uint)v.n;
    SPH_ARG(k, 0, v.params_buf);
    SPH_ARG(k, 1, n);
    SPH_ARG(k, 2, v.pos_buf);
    SPH_ARG(k, 3, v.vel_buf);
    SPH_ARG(k, 4, st->vel_half_buf);
    SPH_ARG(k, 5, st->accel_buf);
    return pbfcl_cl_launch(v.cl, k, v.n, v.wg, prof, PBFCL_STAGE_INTEGRATE);
}

pbfcl_status pbfcl_sph_verlet_v(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    cl_kernel k = st->verlet_v;
    cl_uint n = (cl_uint)v.n;
    SPH_ARG(k, 0, v.params_buf);
    SPH_ARG(k, 1, n);
    SPH_ARG(k, 2, v.pos_buf);
    SPH_ARG(k, 3, v.vel_buf);
    SPH_ARG(k, 4, st->vel_half_buf);
    SPH_ARG(k, 5, st->accel_buf);
    SPH_ARG(k, 6, v.accel_max_buf);
    return pbfcl_cl_launch(v.cl, k, v.n, v.wg, prof, PBFCL_STAGE_INTEGRATE);
}

pbfcl_status pbfcl_sph_read(pbfcl_sim *sim, float *pressure_term, float *accel3)
{
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    cl_command_queue q = v.cl->queue;
    if (v.n == 0)
        return PBFCL_OK;
    if (pressure_term)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(q, st->pressure_buf, CL_TRUE, 0, v.n * sizeof(float),
                                           pressure_term, 0, NULL, NULL));
    if (!accel3)
        return PBFCL_OK;
    float *tmp = malloc(v.n * 4 * sizeof *tmp);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = clEnqueueReadBuffer(q, st->accel_buf, CL_TRUE, 0, v.n * 4 * sizeof *tmp, tmp, 0,
                                     NULL, NULL);
    for (size_t i = 0; err == CL_SUCCESS && i < v.n; i++)
        memcpy(accel3 + 3 * i, tmp + 4 * i, 3 * sizeof *tmp);
    free(tmp);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clEnqueueReadBuffer", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

/* The neighbour grid of x; split over devices, the particles change devices and the ghosts
 * are made anew before it and take their new slots after (sim.h, "a simulation split"). */
static pbfcl_status sph_neighbours(pbfcl_sim *sim, pbfcl_profile *prof)
{
    PBFCL_TRY(pbfcl_sim_sync(sim, PBFCL_SYNC_SEARCH, NULL, NULL, 0));
    PBFCL_TRY(pbfcl_sim_neighbours_x(sim, prof));
    return pbfcl_sim_sync(sim, PBFCL_SYNC_SORTED, NULL, NULL, 0);
}

/* The density pass; split, the ghosts then take their owners' rho and p, which the force reads
 * of the neighbours. */
static pbfcl_status sph_density_synced(pbfcl_sim *sim, pbfcl_profile *prof)
{
    PBFCL_TRY(pbfcl_sph_density(sim, prof));
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    const cl_mem bufs[] = {v.density_buf, st->pressure_buf};
    const size_t elem[] = {4, 4};
    return pbfcl_sim_sync(sim, PBFCL_SYNC_DENSITY, bufs, elem, 2);
}

/* One step of seed 002's outline: the neighbour grid of x (hash, sort, reorder, cells,
 * neighbour lists), then velocity Verlet with two force evaluations: the force of (x, v),
 * the new position and the velocity v* = v + a dt, the force of (x', v*), the new velocity.
 * The lists of x serve x' too: a step moves a particle at most sph_cfl h (c + v) / v of h,
 * about 2 % of h at the default, and a pair entering the kernel's support in between has W
 * and grad W near 0 there. */
static pbfcl_status sph_substep(pbfcl_sim *sim, pbfcl_profile *prof)
{
    PBFCL_TRY(sph_neighbours(sim, prof));     /* hash, sort, reorder, cells, neighbours */
    PBFCL_TRY(sph_density_synced(sim, prof)); /* rho, p of x */
    PBFCL_TRY(pbfcl_sph_force(sim, prof));    /* a(x, v) */
    PBFCL_TRY(pbfcl_sph_verlet_x(sim, prof)); /* x += v dt + a dt^2 / 2, v* = v + a dt */
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    const cl_mem moved[] = {v.pos_buf, v.vel_buf}; /* split: the ghosts' x' and v* their owners' */
    const size_t elem[] = {16, 16, 16};
    PBFCL_TRY(pbfcl_sim_sync(sim, PBFCL_SYNC_UPDATE, moved, elem, 2));
    PBFCL_TRY(sph_density_synced(sim, prof));                                  /* rho, p of x' */
    PBFCL_TRY(pbfcl_sph_force(sim, prof));                                     /* a(x', v*) */
    PBFCL_TRY(pbfcl_sim_sync(sim, PBFCL_SYNC_FORCE, &st->accel_buf, elem, 1)); /* their max |a| */
    return pbfcl_sph_verlet_v(sim, prof); /* v = v + (a + a') dt / 2 */
}

/* The steps of the next frame: the time step is the least of the CFL condition sph_cfl h /
 * (c + max |v|) and the force condition PBFCL_SPH_FORCE_FACTOR sqrt((h / 2) / max |a|), with
 * max |v| from the last frame's bounds and max |a| the largest of its steps (|g| at least),
 * and the frame is cut into at least solver.substeps and at most solver.sph_max_steps equal
 * steps (beyond, a warning: the scene's checks keep the acoustic condition within it). Clears
 * max |a| for the frame to come. */
static pbfcl_status sph_choose_substeps(pbfcl_sim *sim, int *out)
{
    pbfcl_sim_view v;
    sph_state *st = state_of(sim, &v);
    const pbfcl_solver_settings *s = &v.scene->solver;
    PBFCL_TRY(sync_params(st, &v)); /* the scene may have changed since the last frame */
    cl_uint bits[4];
    float b[4]; /* max |v|, reach down and up along gravity, max |a| */
    cl_command_queue q = v.cl->queue;
    PBFCL_CL_CHECK(
        clEnqueueReadBuffer(q, v.bounds_buf, CL_FALSE, 0, 3 * sizeof *bits, bits, 0, NULL, NULL));
    PBFCL_CL_CHECK(
        clEnqueueReadBuffer(q, v.accel_max_buf, CL_TRUE, 0, sizeof *bits, bits + 3, 0, NULL, NULL));
    memcpy(b, bits, sizeof b);
    double g =
        sqrt((double)v.gravity.s[0] * v.gravity.s[0] + (double)v.gravity.s[1] * v.gravity.s[1] +
             (double)v.gravity.s[2] * v.gravity.s[2]);
    double a = fmax(b[3], g), c = st->params.sound_speed;
    double step = cfl_step(v.scene, v.params, c, b[0]);
    if (a > 0.0)
        step = fmin(step, PBFCL_SPH_FORCE_FACTOR * sqrt(0.5 * v.params->h / a));
    double want = ceil(s->dt / step);
    int most = s->sph_max_steps > s->substeps ? s->sph_max_steps : s->substeps;
    if (want > most && !st->warned_steps) {
        pbfcl_warnf("the flow (max |v| %.3g m/s, max |a| %.3g m/s^2) needs %.0f steps per frame, "
                    "more than solver.sph_max_steps %d: the steps break the CFL condition; "
                    "lower solver.dt or raise solver.sph_max_steps",
                    b[0], a, want, s->sph_max_steps);
        st->warned_steps = 1;
    }
    *out = want > most ? most : (want < s->substeps ? s->substeps : (int)want);
    static const cl_uint zero = 0; /* static: the write need not block */
    PBFCL_CL_CHECK(
        clEnqueueWriteBuffer(q, v.accel_max_buf, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL));
    return PBFCL_OK;
}

/* sph's compute_density: the neighbour lists and density of the current positions. */
static pbfcl_status sph_compute_density(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    PBFCL_TRY(sync_params(state_of(sim, &v), &v));
    PBFCL_TRY(sph_neighbours(sim, NULL));
    return pbfcl_sph_density(sim, NULL);
}

/* The build options: the particle kernels' (the program includes cl/pbf/pbf.cl). */
static void sph_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    pbfcl_sim_kernel_config(dev, cfg);
}

static const pbfcl_stage sph_stages[] = {
    PBFCL_STAGE_HASH,  PBFCL_STAGE_SORT,       PBFCL_STAGE_REORDER,
    PBFCL_STAGE_CELLS, PBFCL_STAGE_NEIGHBOURS, PBFCL_STAGE_DENSITY,
    PBFCL_STAGE_FORCE, PBFCL_STAGE_INTEGRATE,  PBFCL_STAGE_OTHER};

/* sph's own per-particle buffers, written in a substep before they are read. */
static const pbfcl_method_buffer sph_buffers[] = {
    {"accelerations", 16, offsetof(sph_state, accel_buf), PBFCL_NOT_REORDERED, PBFCL_INIT_UNSET,
     PBFCL_SORT_CARRY, PBFCL_SCRATCH, false},
    {"half_step_velocities", 16, offsetof(sph_state, vel_half_buf), PBFCL_NOT_REORDERED,
     PBFCL_INIT_UNSET, PBFCL_SORT_CARRY, PBFCL_SCRATCH, false},
    {"pressure_terms", 4, offsetof(sph_state, pressure_buf), PBFCL_NOT_REORDERED, PBFCL_INIT_UNSET,
     PBFCL_SORT_CARRY, PBFCL_SCRATCH, false},
};

/* sph's buffer_table: sph_buffers[], owned by its state. */
static bool sph_buffer_table(pbfcl_sim *sim, int t, pbfcl_buffer_table *out)
{
    pbfcl_sim_view v;
    *out = (pbfcl_buffer_table){PBFCL_BUFFER_ROWS(sph_buffers), sim ? state_of(sim, &v) : NULL};
    return t == 0;
}

static const pbfcl_solver_method sph_method = {
    .name = "sph",
    .build_config = sph_build_config,
    .create = sph_create,
    .destroy = sph_destroy,
    .substep = sph_substep,
    .choose_substeps = sph_choose_substeps,
    .compute_density = sph_compute_density,
    .derive = sph_derive,
    .stages = sph_stages,
    .stage_count = (int)(sizeof sph_stages / sizeof sph_stages[0]),
    .buffer_table = sph_buffer_table,
};

const pbfcl_solver_method *pbfcl_solver_sph(void)
{
    return &sph_method;
}
