/* The multilevel coarse correction of the density constraint (cl/pbf/multilevel.cl): after the
 * first solver.multilevel iterations of a substep, the fluid's compression (its SPH density at
 * x*) is gathered into cells of h over the box, lap(phi) = compression is solved by V-cycles
 * over cells of h, 2h, 4h, ... and every fluid particle moves by grad(phi). A Jacobi iteration
 * carries a correction about one h; this carries it through the whole fluid, so that the
 * iterations a column needs do not grow with its height (docs/PERFORMANCE.md, "The scaling law
 * of the density solve"). Off (solver.multilevel 0) it builds and launches nothing. */
#include "pbf/constraint.h"
#include "pbf/multilevel.h"

#include "runtime/programs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    ML_CLEAR,
    ML_GATHER,
    ML_SETUP,
    ML_SMOOTH,
    ML_COARSEST,
    ML_RESIDUAL,
    ML_RESTRICT,
    ML_PROLONG,
    ML_CORRECT
};
static const char *const ml_kernel_names[] = {"ml_clear",    "ml_gather",   "ml_setup",
                                              "ml_smooth",   "ml_coarsest", "ml_residual",
                                              "ml_restrict", "ml_prolong",  "ml_correct"};
#define ML_KERNELS ((int)(sizeof ml_kernel_names / sizeof ml_kernel_names[0]))

/* One grid: phi (float), its ping-pong partner and the residual (tmp, float), the right-hand
 * side (float), the flags (uint: 1 fluid, 0 air). */
typedef struct ml_level {
    cl_uint4 dims; /* nx, ny, nz, cells */
    float dx;      /* cell size, m */
    cl_mem phi_buf, tmp_buf, rhs_buf, flag_buf;
} ml_level;

typedef struct ml_state {
    cl_program program; /* built on the first use */
    cl_kernel k[ML_KERNELS];
    int levels;
    ml_level lv[PBFCL_ML_MAX_LEVELS];
    cl_mem sum_buf, count_buf; /* int, uint: the finest grid's compression and particles */
    float built_for[7];        /* box and h the grids were made for */
    int warned;                /* the warning of a correction that cannot move was given */
} ml_state;

void pbfcl_ml_grids(const float box_min[3], const float box_max[3], float h, int *levels,
                    unsigned dims[][3])
{
    int l = 0;
    for (int a = 0; a < 3; a++) {
        double cells = ceil(((double)box_max[a] - box_min[a]) / h);
        dims[0][a] = cells < 1.0 ? 1u : (unsigned)cells;
    }
    while (l + 1 < PBFCL_ML_MAX_LEVELS &&
           (dims[l][0] > 2 || dims[l][1] > 2 || dims[l][2] > 2)) { /* down to 2 x 2 x 2 */
        for (int a = 0; a < 3; a++)
            dims[l + 1][a] = (dims[l][a] + 1) / 2;
        l++;
    }
    *levels = l + 1;
}

static void release_grids(ml_state *m)
{
    for (int l = 0; l < m->levels; l++) {
        pbfcl_cl_release_buffer(&m->lv[l].phi_buf);
        pbfcl_cl_release_buffer(&m->lv[l].tmp_buf);
        pbfcl_cl_release_buffer(&m->lv[l].rhs_buf);
        pbfcl_cl_release_buffer(&m->lv[l].flag_buf);
    }
    pbfcl_cl_release_buffer(&m->sum_buf);
    pbfcl_cl_release_buffer(&m->count_buf);
    m->levels = 0;
}

static void ml_destroy(void *state)
{
    ml_state *m = state;
    release_grids(m);
    for (int k = 0; k < ML_KERNELS; k++)
        if (m->k[k])
            clReleaseKernel(m->k[k]);
    if (m->program)
        clReleaseProgram(m->program);
    free(m);
}

static pbfcl_status ml_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    (void)v;
    (void)program; /* its own program, built when first used */
    return (*state = calloc(1, sizeof(ml_state))) ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
}

static pbfcl_status build_program(const pbfcl_sim_view *v, ml_state *m)
{
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_MULTILEVEL);
    pbfcl_build_config cfg;
    pbfcl_sim_kernel_config(&v->cl->dev, &cfg);
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    PBFCL_TRY(pbfcl_cl_build(v->cl, desc->files, desc->nfiles, options, &m->program));
    for (int k = 0; k < ML_KERNELS; k++)
        PBFCL_TRY(pbf_kernel(v, m->program, ml_kernel_names[k], &m->k[k]));
    return PBFCL_OK;
}

/* The grids of the box at cell size h (again when either changed). */
static pbfcl_status make_grids(const pbfcl_sim_view *v, ml_state *m)
{
    const pbfcl_constants *p = v->params;
    float key[7] = {p->box_min[0], p->box_min[1], p->box_min[2], p->box_max[0],
                    p->box_max[1], p->box_max[2], p->h};
    if (m->levels > 0 && memcmp(key, m->built_for, sizeof key) == 0)
        return PBFCL_OK;
    release_grids(m);
    memcpy(m->built_for, key, sizeof key);
    unsigned dims[PBFCL_ML_MAX_LEVELS][3];
    int levels;
    pbfcl_ml_grids(p->box_min, p->box_max, p->h, &levels, dims);
    for (int l = 0; l < levels; l++) {
        ml_level *g = &m->lv[l];
        size_t cells = (size_t)dims[l][0] * dims[l][1] * dims[l][2];
        g->dims = (cl_uint4){{dims[l][0], dims[l][1], dims[l][2], (cl_uint)cells}};
        g->dx = ldexpf(p->h, l);
        m->levels = l + 1;
        PBFCL_TRY(
            pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells * 4, "multilevel phi", &g->phi_buf));
        PBFCL_TRY(
            pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells * 4, "multilevel phi", &g->tmp_buf));
        PBFCL_TRY(
            pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells * 4, "multilevel rhs", &g->rhs_buf));
        PBFCL_TRY(
            pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells * 4, "multilevel flags", &g->flag_buf));
    }
    size_t cells0 = m->lv[0].dims.s[3];
    PBFCL_TRY(
        pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells0 * 4, "multilevel sums", &m->sum_buf));
    return pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells0 * 4, "multilevel counts",
                           &m->count_buf);
}

#define ML_ARG(kernel, idx, v) PBF_ARG(kernel, idx, v)

/* Sets arguments idx .. idx + 2 to the cells per axis of g (three uints: Oclgrind 21.10 read a
 * uint4 argument wrong in ml_restrict and crashed on it in its uninitialised-value check). */
static pbfcl_status set_dims(cl_kernel k, cl_uint idx, ml_level *g)
{
    for (cl_uint a = 0; a < 3; a++)
        ML_ARG(k, idx + a, g->dims.s[a]);
    return PBFCL_OK;
}

static pbfcl_status launch(const pbfcl_sim_view *v, cl_kernel k, size_t items, pbfcl_profile *prof)
{
    return pbfcl_cl_launch(v->cl, k, items, v->wg, prof, PBFCL_STAGE_SOLVE);
}

/* The finest grid from the particles: sums, counts, then rhs, flags and phi = 0. */
static pbfcl_status gather(const pbfcl_sim_view *v, ml_state *m, pbfcl_profile *prof)
{
    ml_level *g = &m->lv[0];
    cl_uint cells = g->dims.s[3], n = (cl_uint)v->n;
    cl_kernel k = m->k[ML_CLEAR];
    ML_ARG(k, 0, m->sum_buf);
    ML_ARG(k, 1, m->count_buf);
    ML_ARG(k, 2, cells);
    PBFCL_TRY(launch(v, k, cells, prof));
    k = m->k[ML_GATHER];
    cl_float inv_dx = 1.0f / g->dx;
    ML_ARG(k, 0, v->params_buf);
    ML_ARG(k, 1, n);
    ML_ARG(k, 2, *v->pred);
    ML_ARG(k, 3, v->grid->neighbor_count_buf);
    ML_ARG(k, 4, v->grid->neighbor_buf);
    ML_ARG(k, 5, v->wall_scale);
    ML_ARG(k, 6, v->solids);
    ML_ARG(k, 7, v->phase_buf);
    ML_ARG(k, 8, inv_dx);
    PBFCL_TRY(set_dims(k, 9, g));
    ML_ARG(k, 12, m->sum_buf);
    ML_ARG(k, 13, m->count_buf);
    PBFCL_TRY(launch(v, k, n, prof));
    k = m->k[ML_SETUP];
    cl_float scale = v->params->volume / (g->dx * g->dx * g->dx) / 65536.0f; /* ML_FIXED */
    ML_ARG(k, 0, m->sum_buf);
    ML_ARG(k, 1, m->count_buf);
    ML_ARG(k, 2, g->rhs_buf);
    ML_ARG(k, 3, g->flag_buf);
    ML_ARG(k, 4, g->phi_buf);
    ML_ARG(k, 5, scale);
    ML_ARG(k, 6, cells);
    return launch(v, k, cells, prof);
}

/* sweeps weighted Jacobi sweeps on grid g (an even count leaves phi in phi_buf). */
static pbfcl_status smooth(const pbfcl_sim_view *v, ml_state *m, ml_level *g, int sweeps,
                           pbfcl_profile *prof)
{
    cl_kernel k = m->k[ML_SMOOTH];
    cl_float dx2 = g->dx * g->dx, weight = PBFCL_ML_WEIGHT;
    ML_ARG(k, 2, g->rhs_buf);
    ML_ARG(k, 3, g->flag_buf);
    PBFCL_TRY(set_dims(k, 4, g));
    ML_ARG(k, 7, dx2);
    ML_ARG(k, 8, weight);
    for (int s = 0; s < sweeps; s++) {
        ML_ARG(k, 0, g->phi_buf);
        ML_ARG(k, 1, g->tmp_buf);
        PBFCL_TRY(launch(v, k, g->dims.s[3], prof));
        pbf_swap(&g->phi_buf, &g->tmp_buf);
    }
    return PBFCL_OK;
}

/* PBFCL_ML_COARSEST_SWEEPS sweeps on the coarsest grid g (at most 2 x 2 x 2), in one launch. */
static pbfcl_status solve_coarsest(const pbfcl_sim_view *v, ml_state *m, ml_level *g,
                                   pbfcl_profile *prof)
{
    cl_kernel k = m->k[ML_COARSEST];
    cl_float dx2 = g->dx * g->dx, weight = PBFCL_ML_WEIGHT;
    cl_uint sweeps = PBFCL_ML_COARSEST_SWEEPS;
    ML_ARG(k, 0, g->phi_buf);
    ML_ARG(k, 1, g->tmp_buf);
    ML_ARG(k, 2, g->rhs_buf);
    ML_ARG(k, 3, g->flag_buf);
    PBFCL_TRY(set_dims(k, 4, g));
    ML_ARG(k, 7, dx2);
    ML_ARG(k, 8, weight);
    ML_ARG(k, 9, sweeps);
    return launch(v, k, 1, prof);
}

/* The residual of grid l into the right-hand side of grid l + 1 (phi there 0). */
static pbfcl_status restrict_residual(const pbfcl_sim_view *v, ml_state *m, int l,
                                      pbfcl_profile *prof)
{
    ml_level *g = &m->lv[l], *c = &m->lv[l + 1];
    cl_kernel k = m->k[ML_RESIDUAL];
    cl_float inv_dx2 = 1.0f / (g->dx * g->dx);
    ML_ARG(k, 0, g->phi_buf);
    ML_ARG(k, 1, g->rhs_buf);
    ML_ARG(k, 2, g->flag_buf);
    PBFCL_TRY(set_dims(k, 3, g));
    ML_ARG(k, 6, inv_dx2);
    ML_ARG(k, 7, g->tmp_buf);
    PBFCL_TRY(launch(v, k, g->dims.s[3], prof));
    k = m->k[ML_RESTRICT];
    ML_ARG(k, 0, g->tmp_buf);
    ML_ARG(k, 1, g->flag_buf);
    PBFCL_TRY(set_dims(k, 2, g));
    ML_ARG(k, 5, c->rhs_buf);
    ML_ARG(k, 6, c->flag_buf);
    ML_ARG(k, 7, c->phi_buf);
    PBFCL_TRY(set_dims(k, 8, c));
    return launch(v, k, c->dims.s[3], prof);
}

static pbfcl_status prolong(const pbfcl_sim_view *v, ml_state *m, int l, pbfcl_profile *prof)
{
    ml_level *g = &m->lv[l], *c = &m->lv[l + 1];
    cl_kernel k = m->k[ML_PROLONG];
    ML_ARG(k, 0, g->phi_buf);
    ML_ARG(k, 1, g->flag_buf);
    PBFCL_TRY(set_dims(k, 2, g));
    ML_ARG(k, 5, c->phi_buf);
    PBFCL_TRY(set_dims(k, 6, c));
    return launch(v, k, g->dims.s[3], prof);
}

/* One V-cycle from grid 0 (its rhs, phi = 0) down to the coarsest and back. */
static pbfcl_status v_cycle(const pbfcl_sim_view *v, ml_state *m, pbfcl_profile *prof)
{
    int last = m->levels - 1;
    for (int l = 0; l < last; l++) {
        PBFCL_TRY(smooth(v, m, &m->lv[l], PBFCL_ML_PRE_SWEEPS, prof));
        PBFCL_TRY(restrict_residual(v, m, l, prof));
    }
    PBFCL_TRY(solve_coarsest(v, m, &m->lv[last], prof));
    for (int l = last - 1; l >= 0; l--) {
        PBFCL_TRY(prolong(v, m, l, prof));
        PBFCL_TRY(smooth(v, m, &m->lv[l], PBFCL_ML_POST_SWEEPS, prof));
    }
    return PBFCL_OK;
}

/* The most a coarse correction moves a particle: PBFCL_ML_SUPPORT |g| dt^2 of the substep (at
 * most PBF_MAX_CORRECTION r, cl/pbf/pbf.cl). Holding a resting fluid takes |g| dt^2 per substep,
 * what gravity moved it; a larger move removes a compression the fluid had before the substep
 * (the SPH estimate's offsets at walls, a lattice settling) at once, as a velocity. While the
 * coarse grids lost the free surface (fluid where any child was) and 4 V-cycles solved them, a
 * column 60 particles tall left the floor at 1 m/s and blew up within 20 frames without this
 * limit; now that they keep it, the columns and the dam break of docs/PERFORMANCE.md never
 * reach it, and it stays as a guard. Without gravity the correction moves nothing. */
static float max_move(const pbfcl_sim_view *v)
{
    double g2 = 0.0, dt = v->params->dt;
    for (int a = 0; a < 3; a++)
        g2 += (double)v->gravity.s[a] * v->gravity.s[a];
    return (float)fmin(0.5 * v->params->radius, PBFCL_ML_SUPPORT * sqrt(g2) * dt * dt);
}

/* x* += grad(phi) of the finest grid. */
static pbfcl_status correct(const pbfcl_sim_view *v, ml_state *m, pbfcl_profile *prof)
{
    ml_level *g = &m->lv[0];
    cl_kernel k = m->k[ML_CORRECT];
    cl_uint n = (cl_uint)v->n;
    cl_float inv_dx = 1.0f / g->dx, limit = max_move(v);
    ML_ARG(k, 0, v->params_buf);
    ML_ARG(k, 1, n);
    ML_ARG(k, 2, *v->pred);
    ML_ARG(k, 3, v->solids);
    ML_ARG(k, 4, v->phase_buf);
    ML_ARG(k, 5, g->phi_buf);
    ML_ARG(k, 6, g->flag_buf);
    ML_ARG(k, 7, inv_dx);
    PBFCL_TRY(set_dims(k, 8, g));
    ML_ARG(k, 11, limit);
    return launch(v, k, n, prof);
}

pbfcl_status pbfcl_pbf_multilevel(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    ml_state *m = pbf_constraint_state(ps, &pbf_multilevel_constraint);
    if (v.n == 0)
        return PBFCL_OK;
    if (max_move(&v) <= 0.0f && !m->warned) {
        m->warned = 1;
        pbfcl_warnf("solver.multilevel %d: without gravity the coarse correction moves nothing "
                    "(its moves are limited to %g |g| dt^2); set solver.multilevel to 0",
                    v.scene->solver.multilevel, PBFCL_ML_SUPPORT);
    }
    if (!m->program)
        PBFCL_TRY(build_program(&v, m));
    PBFCL_TRY(make_grids(&v, m));
    PBFCL_TRY(gather(&v, m, prof));
    for (int c = 0; c < PBFCL_ML_CYCLES; c++)
        PBFCL_TRY(v_cycle(&v, m, prof));
    return correct(&v, m, prof);
}

/* After iteration it's density and contact corrections (x* = q): the first solver.multilevel
 * iterations end with a coarse correction of what they left. */
static pbfcl_status ml_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    (void)state;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    if (it >= v.scene->solver.multilevel)
        return PBFCL_OK;
    return pbfcl_pbf_multilevel(sim, prof);
}

const pbf_constraint_kind pbf_multilevel_constraint = {
    .name = "multilevel",
    .pass = PBF_PASS_POSITIONS,
    .create = ml_create,
    .destroy = ml_destroy,
    .project = ml_project,
};
