/* The multilevel coarse correction of the density constraint (cl/pbf/multilevel.cl): after the
 * first solver.multilevel iterations of a substep, the fluid's compression (its SPH density at
 * x*) is gathered into cells of h over the box, lap(phi) = compression is solved by V-cycles
 * over cells of h, 2h, 4h, ... and every fluid particle moves by grad(phi). A Jacobi iteration
 * carries a correction about one h; this carries it through the whole fluid, so that the
 * iterations a column needs do not grow with its height (docs/PERFORMANCE.md, "The scaling law
 * of the density solve"). The grids small enough for one work-group's local memory are solved by
 * one launch of ml_group; the larger ones by a launch per sweep, restriction and prolongation.
 * Off (solver.multilevel 0) it builds and launches nothing. */
#include "pbf/constraint.h"
#include "pbf/multilevel.h"
#include "pbf/pbf_colliders.h"
#include "sim/exchange.h"

#include "runtime/programs.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    ML_GATHER,
    ML_GATHER_SHAPES,
    ML_SETUP,
    ML_SMOOTH,
    ML_COARSEST,
    ML_RESTRICT,
    ML_PROLONG_SMOOTH,
    ML_GROUP,
    ML_CORRECT,
    ML_SOLIDS,
    ML_SHAPE_PUSH,
    ML_COMPRESSION
};
static const char *const ml_kernel_names[] = {
    "ml_gather",   "ml_gather_shapes", "ml_setup",          "ml_smooth",
    "ml_coarsest", "ml_restrict",      "ml_prolong_smooth", "ml_group",
    "ml_correct",  "ml_solids",        "ml_shape_push",     "ml_compression"};
#define ML_KERNELS ((int)(sizeof ml_kernel_names / sizeof ml_kernel_names[0]))

/* The first sweep after a prolongation adds the coarse correction (ml_prolong_smooth). */
_Static_assert(PBFCL_ML_POST_SWEEPS >= 1, "the prolongation is fused into the first post sweep");
/* A warm start takes part of the last phi: all of it over-corrects (multilevel.h). */
_Static_assert(PBFCL_ML_WARM > 0.0f && PBFCL_ML_WARM < 1.0f, "a warm start keeps a part of phi");

/* One grid: phi (float), its ping-pong partner and the residual (tmp, float), the right-hand
 * side (float), the flags (uint: 0 air, 1 fluid, 2 and up solid: ML_AIR, ... in multilevel.cl). */
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
    cl_mem touch_buf;          /* uint: the sides its fluid touches a shape on (ML_TOUCH_BITS) */
    float built_for[7];        /* box and h the grids were made for */
    size_t group_max_wg;       /* ml_group's most work-items (kernel and device) */
    size_t group_width;        /* of them, how many run at once (pbfcl_ml_group_first) */
    cl_ulong group_local;      /* the local memory ml_group may take (device less its own) */
    size_t local_cap;          /* pbfcl_pbf_multilevel_group_limit's cap on it */
    int group_first;           /* the first grid ml_group solves (levels: none) */
    size_t group_wg;           /* its work-items */
    bool phi_kept;             /* the finest phi holds the last correction's (warm starts) */
    cl_mem ghost_buf;          /* split over devices: a uchar a particle, 1 for a ghost */
    size_t ghost_cap;          /* its particles */
    pbfcl_colliders_solid_view shapes; /* this correction's collision shapes (count 0: none) */
    cl_mem own_buf, share_buf; /* split with shapes: this device's counts, its cells' share */
    /* The compression a substep left (ml_compression), read without blocking for the next one's
     * choice of corrections (pbfcl_ml_adds): */
    cl_mem part_buf;    /* float2 a work-group: the sum of compressions, fluid particles */
    pbfcl_pinned part;  /* its copy (floats), valid once read_done has completed */
    pbfcl_cl *part_cl;  /* the context part was made in */
    cl_event read_done; /* the read in flight or done, not yet taken; NULL: none */
    size_t part_groups; /* work-groups of ml_compression, part's float2s */
    bool adds;          /* this substep's later iterations end with a correction too */
    bool split_warned;  /* split over devices, the limit's warning was given */
} ml_state;

void pbfcl_ml_grids(const float box_min[3], const float box_max[3], float h, int *levels,
                    unsigned dims[][3])
{
    int l = 0;
    for (int a = 0; a < 3; a++) {
        double cells = ceil(((double)box_max[a] - box_min[a]) / h - PBFCL_ML_GRID_SLACK);
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

size_t pbfcl_ml_group_bytes(int levels, const unsigned dims[][3], int first)
{
    if (first >= levels)
        return 0;
    size_t cells = 0, top = (size_t)dims[first][0] * dims[first][1] * dims[first][2];
    for (int l = first; l < levels; l++)
        cells += (size_t)dims[l][0] * dims[l][1] * dims[l][2];
    /* phi, rhs (float), flags (uchar) of every grid, tmp (float) of the top; each array of
     * ml_group's local arguments rounded up to 16 bytes */
    return 2 * (cells * 4 + 15) / 16 * 16 + (cells + 15) / 16 * 16 + (top * 4 + 15) / 16 * 16;
}

int pbfcl_ml_group_first(int levels, const unsigned dims[][3], size_t local_bytes, size_t width)
{
    int first = levels;
    while (first > 0) {
        int l = first - 1;
        size_t cells = (size_t)dims[l][0] * dims[l][1] * dims[l][2];
        if (cells > PBFCL_ML_GROUP_CELLS_PER_ITEM * width ||
            pbfcl_ml_group_bytes(levels, dims, l) > local_bytes)
            break;
        first = l;
    }
    return first;
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
    pbfcl_cl_release_buffer(&m->touch_buf);
    pbfcl_cl_release_buffer(&m->own_buf);
    pbfcl_cl_release_buffer(&m->share_buf);
    m->levels = 0;
}

static void ml_destroy(void *state)
{
    ml_state *m = state;
    if (m->read_done) { /* the read writes m->part until it completes */
        clWaitForEvents(1, &m->read_done);
        clReleaseEvent(m->read_done);
    }
    if (m->part_cl)
        pbfcl_pinned_release(m->part_cl, &m->part);
    pbfcl_cl_release_buffer(&m->part_buf);
    release_grids(m);
    pbfcl_cl_release_buffer(&m->ghost_buf);
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
    ml_state *m = calloc(1, sizeof(ml_state));
    if (!m)
        return PBFCL_ERR_OUT_OF_MEMORY;
    m->local_cap = SIZE_MAX;
    *state = m;
    return PBFCL_OK;
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
    /* ml_group's limits: its work-items, and the local memory left beside its own */
    cl_ulong own = 0;
    PBFCL_CL_CHECK(clGetKernelWorkGroupInfo(m->k[ML_GROUP], v->cl->dev.device,
                                            CL_KERNEL_LOCAL_MEM_SIZE, sizeof own, &own, NULL));
    m->group_max_wg = pbfcl_cl_kernel_max_wg(v->cl, m->k[ML_GROUP]);
    /* a GPU runs a group's work-items at once; a CPU runs a group on one core, its SIMD lanes
     * (the preferred multiple) at once */
    size_t lanes = 1;
    PBFCL_CL_CHECK(clGetKernelWorkGroupInfo(m->k[ML_GROUP], v->cl->dev.device,
                                            CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                            sizeof lanes, &lanes, NULL));
    m->group_width = (v->cl->dev.type & CL_DEVICE_TYPE_CPU) ? lanes : m->group_max_wg;
    m->group_local = own < v->cl->dev.local_mem ? v->cl->dev.local_mem - own : 0;
    return PBFCL_OK;
}

/* Which grids ml_group solves (group_first: the first; levels: none) and its work-items: the
 * most grids from the coarsest up whose local memory fits the device's (and the cap) with at
 * most PBFCL_ML_GROUP_CELLS_PER_ITEM cells of the top per work-item that runs at once; its
 * launch checked against the kernel's limits. */
static pbfcl_status plan_group(const pbfcl_sim_view *v, ml_state *m, const unsigned dims[][3])
{
    size_t local = m->group_local < m->local_cap ? (size_t)m->group_local : m->local_cap;
    m->group_first = pbfcl_ml_group_first(m->levels, dims, local, m->group_width);
    if (m->group_first >= m->levels)
        return PBFCL_OK;
    size_t top = m->lv[m->group_first].dims.s[3], granule = v->wg < m->group_max_wg ? v->wg : 1;
    size_t wg = (top + granule - 1) / granule * granule;
    m->group_wg = wg < m->group_max_wg ? wg : m->group_max_wg;
    return pbfcl_cl_check_launch(v->cl, m->k[ML_GROUP], "ml_group", m->group_wg,
                                 pbfcl_ml_group_bytes(m->levels, dims, m->group_first));
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
    m->phi_kept = false;
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
    PBFCL_TRY(
        pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells0 * 4, "multilevel counts", &m->count_buf));
    PBFCL_TRY(
        pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, cells0 * 4, "multilevel touch", &m->touch_buf));
    /* zero for the first gather; ml_setup zeroes them for each next one */
    PBFCL_TRY(pbfcl_cl_write_zeros(v->cl, m->sum_buf, cells0 * 4));
    PBFCL_TRY(pbfcl_cl_write_zeros(v->cl, m->count_buf, cells0 * 4));
    PBFCL_TRY(pbfcl_cl_write_zeros(v->cl, m->touch_buf, cells0 * 4));
    return plan_group(v, m, dims);
}

#define ML_ARG(kernel, idx, v) PBF_ARG(kernel, idx, v)

/* The kernels' weight of a face to air (ml_face_weight: phi = 0 on the face). */
static const cl_float ml_surface = PBFCL_ML_SURFACE_WEIGHT;

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

/* Split over devices: which particles are ghosts, from the layer (PBFCL_SYNC_ML_GHOSTS), in
 * m->ghost_buf; else none (NULL). */
static pbfcl_status ghosts(pbfcl_sim *sim, const pbfcl_sim_view *v, ml_state *m, cl_mem *out)
{
    *out = NULL;
    if (!pbfcl_sim_split(sim))
        return PBFCL_OK;
    if (m->ghost_cap < v->n || !m->ghost_buf) {
        pbfcl_cl_release_buffer(&m->ghost_buf);
        m->ghost_cap = v->n > 0 ? v->n : 1;
        PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, m->ghost_cap, "multilevel ghosts",
                                  &m->ghost_buf));
    }
    size_t elem = 1;
    PBFCL_TRY(pbfcl_sim_sync(sim, PBFCL_SYNC_ML_GHOSTS, &m->ghost_buf, &elem, 1));
    *out = m->ghost_buf;
    return PBFCL_OK;
}

/* The finest grid from the particles: sums, counts (zero before; split over devices, each
 * device's owned particles, then added over the devices by the layer), then rhs, flags and
 * phi = keep x the last phi where a cell is fluid (keep 0: phi = 0), and the sums and counts
 * zero again. */
static pbfcl_status gather(pbfcl_sim *sim, const pbfcl_sim_view *v, ml_state *m, cl_float keep,
                           pbfcl_profile *prof)
{
    cl_mem ghost;
    PBFCL_TRY(ghosts(sim, v, m, &ghost));
    ml_level *g = &m->lv[0];
    cl_uint cells = g->dims.s[3], n = (cl_uint)v->n;
    cl_mem planes, shapes, push; /* the shapes' part of the density (none: NULL) */
    pbfcl_colliders_planes(pbfcl_pbf_colliders(sim), &planes, &shapes, &push);
    cl_kernel k = m->k[planes ? ML_GATHER_SHAPES : ML_GATHER];
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
    ML_ARG(k, 14, ghost);
    if (planes) {
        ML_ARG(k, 15, planes);
        ML_ARG(k, 16, shapes);
        ML_ARG(k, 17, m->touch_buf);
    }
    PBFCL_TRY(launch(v, k, n, prof));
    bool shared = ghost && m->shapes.count > 0; /* split: each device's share of a shape's push */
    if (shared) {
        if (!m->own_buf) {
            PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, (size_t)cells * 4,
                                      "multilevel own counts", &m->own_buf));
            PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, (size_t)cells * 4,
                                      "multilevel shares", &m->share_buf));
        }
        PBFCL_CL_CHECK(clEnqueueCopyBuffer(v->cl->queue, m->count_buf, m->own_buf, 0, 0,
                                           (size_t)cells * 4, 0, NULL, NULL));
    }
    /* the touch words add over the devices as the counts do (a field counts devices) */
    cl_mem sums[3] = {m->sum_buf, m->count_buf, m->touch_buf};
    size_t bytes[3] = {(size_t)cells * 4, (size_t)cells * 4, (size_t)cells * 4};
    PBFCL_TRY(pbfcl_sim_sync(sim, PBFCL_SYNC_ML_SUMS, sums, bytes, planes ? 3 : 2));
    cl_uint flags_set = m->shapes.count > 0 && planes;
    if (flags_set) { /* the flags: the empty cells the fluid touches a shape across solid */
        k = m->k[ML_SOLIDS];
        ML_ARG(k, 0, v->params_buf);
        ML_ARG(k, 1, m->count_buf);
        ML_ARG(k, 2, m->touch_buf);
        ML_ARG(k, 3, g->flag_buf);
        PBFCL_TRY(set_dims(k, 4, g));
        ML_ARG(k, 7, g->dx);
        ML_ARG(k, 8, m->shapes.shapes);
        ML_ARG(k, 9, m->shapes.planes);
        ML_ARG(k, 10, m->shapes.count);
        PBFCL_TRY(launch(v, k, cells, prof));
    }
    k = m->k[ML_SETUP];
    cl_float scale = v->params->volume / (g->dx * g->dx * g->dx) / 65536.0f; /* ML_FIXED */
    ML_ARG(k, 0, m->sum_buf);
    ML_ARG(k, 1, m->count_buf);
    ML_ARG(k, 2, g->rhs_buf);
    ML_ARG(k, 3, g->flag_buf);
    ML_ARG(k, 4, g->phi_buf);
    ML_ARG(k, 5, scale);
    ML_ARG(k, 6, cells);
    ML_ARG(k, 7, keep);
    cl_mem own = shared ? m->own_buf : NULL, share = shared ? m->share_buf : NULL;
    ML_ARG(k, 8, own);
    ML_ARG(k, 9, share);
    ML_ARG(k, 10, flags_set);
    cl_mem touch = planes ? m->touch_buf : NULL; /* ml_setup zeroes what the gather wrote */
    double per_axis = g->dx / (2.0 * v->params->radius);
    cl_float full = (cl_float)(per_axis * per_axis * per_axis); /* the rest lattice's in a cell */
    ML_ARG(k, 11, touch);
    ML_ARG(k, 12, full);
    return launch(v, k, cells, prof);
}

/* sweeps weighted Jacobi sweeps on grid g (an even count leaves phi in phi_buf); the first
 * adds the coarse correction of grid c before it where c is given (ml_prolong_smooth). */
static pbfcl_status smooth(const pbfcl_sim_view *v, ml_state *m, ml_level *g, int sweeps,
                           ml_level *c, pbfcl_profile *prof)
{
    cl_float dx2 = g->dx * g->dx, weight = PBFCL_ML_WEIGHT;
    for (int s = 0; s < sweeps; s++) {
        cl_kernel k = m->k[s == 0 && c ? ML_PROLONG_SMOOTH : ML_SMOOTH];
        ML_ARG(k, 0, g->phi_buf);
        ML_ARG(k, 1, g->tmp_buf);
        ML_ARG(k, 2, g->rhs_buf);
        ML_ARG(k, 3, g->flag_buf);
        PBFCL_TRY(set_dims(k, 4, g));
        ML_ARG(k, 7, dx2);
        ML_ARG(k, 8, weight);
        if (s == 0 && c) {
            ML_ARG(k, 9, c->phi_buf);
            PBFCL_TRY(set_dims(k, 10, c));
            ML_ARG(k, 13, ml_surface);
        } else {
            ML_ARG(k, 9, ml_surface);
        }
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
    ML_ARG(k, 10, ml_surface);
    return launch(v, k, 1, prof);
}

/* The residual of grid l (formed in the kernel) into the right-hand side of grid l + 1 (phi
 * there 0). */
static pbfcl_status restrict_residual(const pbfcl_sim_view *v, ml_state *m, int l,
                                      pbfcl_profile *prof)
{
    ml_level *g = &m->lv[l], *c = &m->lv[l + 1];
    cl_kernel k = m->k[ML_RESTRICT];
    cl_float inv_dx2 = 1.0f / (g->dx * g->dx);
    ML_ARG(k, 0, g->phi_buf);
    ML_ARG(k, 1, g->rhs_buf);
    ML_ARG(k, 2, g->flag_buf);
    PBFCL_TRY(set_dims(k, 3, g));
    ML_ARG(k, 6, inv_dx2);
    ML_ARG(k, 7, c->rhs_buf);
    ML_ARG(k, 8, c->flag_buf);
    ML_ARG(k, 9, c->phi_buf);
    PBFCL_TRY(set_dims(k, 10, c));
    ML_ARG(k, 13, ml_surface);
    return launch(v, k, c->dims.s[3], prof);
}

/* The V-cycle from grid first down, in one work-group (ml_group): the grids' arrays in local
 * memory, as plan_group sized them. */
static pbfcl_status solve_group(const pbfcl_sim_view *v, ml_state *m, int first,
                                pbfcl_profile *prof)
{
    ml_level *g = &m->lv[first];
    cl_kernel k = m->k[ML_GROUP];
    size_t cells = 0, top = g->dims.s[3];
    for (int l = first; l < m->levels; l++)
        cells += m->lv[l].dims.s[3];
    cl_uint levels = (cl_uint)(m->levels - first), pre = PBFCL_ML_PRE_SWEEPS,
            post = PBFCL_ML_POST_SWEEPS, coarsest = PBFCL_ML_COARSEST_SWEEPS;
    cl_float dx2 = g->dx * g->dx, inv_dx2 = 1.0f / (g->dx * g->dx), weight = PBFCL_ML_WEIGHT;
    ML_ARG(k, 0, g->phi_buf);
    ML_ARG(k, 1, g->rhs_buf);
    ML_ARG(k, 2, g->flag_buf);
    PBFCL_TRY(set_dims(k, 3, g));
    ML_ARG(k, 6, levels);
    ML_ARG(k, 7, dx2);
    ML_ARG(k, 8, inv_dx2);
    ML_ARG(k, 9, weight);
    ML_ARG(k, 10, pre);
    ML_ARG(k, 11, post);
    ML_ARG(k, 12, coarsest);
    size_t local[4] = {(cells * 4 + 15) / 16 * 16, (cells * 4 + 15) / 16 * 16,
                       (cells + 15) / 16 * 16, (top * 4 + 15) / 16 * 16};
    for (cl_uint a = 0; a < 4; a++)
        PBFCL_CL_CHECK(clSetKernelArg(k, 13 + a, local[a], NULL));
    ML_ARG(k, 17, ml_surface);
    return pbfcl_cl_launch(v->cl, k, m->group_wg, m->group_wg, prof, PBFCL_STAGE_SOLVE);
}

/* One V-cycle from grid 0 (its rhs, phi = 0) down to the coarsest and back: the grids above
 * group_first by launches per level, those from it by ml_group (or the coarsest alone by
 * ml_coarsest where no grid fits the group). */
static pbfcl_status v_cycle(const pbfcl_sim_view *v, ml_state *m, pbfcl_profile *prof)
{
    int last = m->levels - 1, first = m->group_first <= last ? m->group_first : last;
    for (int l = 0; l < first; l++) {
        PBFCL_TRY(smooth(v, m, &m->lv[l], PBFCL_ML_PRE_SWEEPS, NULL, prof));
        PBFCL_TRY(restrict_residual(v, m, l, prof));
    }
    if (m->group_first <= last)
        PBFCL_TRY(solve_group(v, m, first, prof));
    else
        PBFCL_TRY(solve_coarsest(v, m, &m->lv[last], prof));
    for (int l = first - 1; l >= 0; l--)
        PBFCL_TRY(smooth(v, m, &m->lv[l], PBFCL_ML_POST_SWEEPS, &m->lv[l + 1], prof));
    return PBFCL_OK;
}

/* The most a coarse correction moves a particle: PBFCL_ML_SUPPORT |g| dt^2 of the substep (at
 * most PBF_MAX_CORRECTION r, cl/pbf/pbf.cl). Holding a resting fluid takes |g| dt^2 per substep,
 * what gravity moved it; a larger move removes a compression the fluid had before the substep
 * (the SPH estimate's offsets at walls, a lattice settling) at once, as a velocity. While the
 * coarse grids lost the free surface (fluid where any child was) and 4 V-cycles solved them, a
 * column 60 particles tall left the floor at 1 m/s and blew up within 20 frames without this
 * limit; now that they keep it, a resting column never reaches it, and an impact goes beyond
 * it only against the particles' motion (PBFCL_ML_REACH, ml_correct). Without gravity the
 * correction would move nothing, and it is not run: the plain iterations hold the density alone. */
static float max_move(const pbfcl_sim_view *v)
{
    double g2 = 0.0, dt = v->params->dt;
    for (int a = 0; a < 3; a++)
        g2 += (double)v->gravity.s[a] * v->gravity.s[a];
    return (float)fmin(0.5 * v->params->radius, PBFCL_ML_SUPPORT * sqrt(g2) * dt * dt);
}

/* x* += grad(phi) of the finest grid (within the limits of ml_correct). */
static pbfcl_status correct(const pbfcl_sim_view *v, ml_state *m, pbfcl_profile *prof)
{
    ml_level *g = &m->lv[0];
    cl_kernel k = m->k[ML_CORRECT];
    cl_uint n = (cl_uint)v->n;
    cl_float inv_dx = 1.0f / g->dx, limit = max_move(v);
    cl_float reach_dx = (cl_float)(PBFCL_ML_REACH * g->dx);
    ML_ARG(k, 0, v->params_buf);
    ML_ARG(k, 1, n);
    ML_ARG(k, 2, *v->pred);
    ML_ARG(k, 3, *v->pos);
    ML_ARG(k, 4, v->solids);
    ML_ARG(k, 5, v->phase_buf);
    ML_ARG(k, 6, g->phi_buf);
    ML_ARG(k, 7, g->rhs_buf);
    ML_ARG(k, 8, g->flag_buf);
    ML_ARG(k, 9, inv_dx);
    PBFCL_TRY(set_dims(k, 10, g));
    ML_ARG(k, 13, limit);
    ML_ARG(k, 14, reach_dx);
    ML_ARG(k, 15, ml_surface);
    ML_ARG(k, 16, v->gravity);
    ML_ARG(k, 17, v->density_buf);
    cl_uint matched = (cl_uint)pbfcl_shape_match_count(v->bodies);
    ML_ARG(k, 18, matched);
    ML_ARG(k, 19, v->inv_mass_buf);
    return launch(v, k, n, prof);
}

/* The correction's push on each shape with solid cells (ml_shape_push) into the colliders'
 * pressure sums, in the work-groups a shape that colliders_force reads. */
static pbfcl_status shape_push(const pbfcl_sim_view *v, ml_state *m, bool shared,
                               pbfcl_profile *prof)
{
    ml_level *g = &m->lv[0];
    cl_kernel k = m->k[ML_SHAPE_PUSH];
    cl_float scale = v->params->rest_density * g->dx * g->dx;
    cl_mem share = shared ? m->share_buf : NULL;
    ML_ARG(k, 0, g->phi_buf);
    ML_ARG(k, 1, g->flag_buf);
    PBFCL_TRY(set_dims(k, 2, g));
    ML_ARG(k, 5, scale);
    ML_ARG(k, 6, share);
    ML_ARG(k, 7, m->shapes.pressure);
    PBFCL_CL_CHECK(clSetKernelArg(k, 8, v->wg * 16, NULL));
    PBFCL_TRY(pbfcl_cl_check_launch(v->cl, k, "ml_shape_push", v->wg, v->wg * 16));
    size_t global[2] = {m->shapes.groups * v->wg, m->shapes.count};
    size_t local[2] = {v->wg, 1};
    cl_event ev = NULL;
    PBFCL_TRY(pbfcl_cl_pay_owed(v->cl));
    PBFCL_CL_CHECK(clEnqueueNDRangeKernel(v->cl->queue, k, 2, NULL, global, local, 0, NULL,
                                          prof ? &ev : NULL));
    if (ev)
        pbfcl_profile_add(prof, PBFCL_STAGE_SOLVE, ev, k);
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_multilevel(pbfcl_sim *sim, bool warm, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    ml_state *m = pbf_constraint_state(ps, &pbf_multilevel_constraint);
    bool split = pbfcl_sim_split(sim); /* each device gathers its part of every grid's sums */
    if (v.n == 0 && !split)
        return PBFCL_OK;
    if (max_move(&v) <= 0.0f) /* without gravity it would move nothing: nothing launched */
        return PBFCL_OK;
    if (!m->program)
        PBFCL_TRY(build_program(&v, m));
    PBFCL_TRY(make_grids(&v, m)); /* new grids keep no phi */
    /* The shapes close cells to the grid (ml_solids: beside the fluid those it touches a shape
     * across, away from it those inside a primitive or an SDF), so a mesh needs no case of its own:
     * while its cells were air, a correction with a mesh started cold, put phi = 0 at the air
     * cells' centres and left out the surface cell's rule (else it pushed particles of
     * mesh-container through its tank's floor), and a column at rest in a mesh tank heaped its
     * surface (docs/PERFORMANCE.md, "A mesh closes the cells beyond it"). */
    pbfcl_colliders_solids(pbfcl_pbf_colliders(sim), &m->shapes);
    warm = warm && m->phi_kept;
    PBFCL_TRY(gather(sim, &v, m, warm ? PBFCL_ML_WARM : 0.0f, prof));
    for (int c = 0; c < (warm ? PBFCL_ML_WARM_CYCLES : PBFCL_ML_CYCLES); c++)
        PBFCL_TRY(v_cycle(&v, m, prof));
    m->phi_kept = true; /* the V-cycles leave the finest phi in its own buffer */
    if (m->shapes.count > 0)
        PBFCL_TRY(shape_push(&v, m, split, prof));
    return correct(&v, m, prof); /* split: a ghost moves as its owner (the same phi, x*, x) */
}

pbfcl_status pbfcl_pbf_multilevel_group_limit(pbfcl_sim *sim, size_t local_bytes)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    ml_state *m = pbf_constraint_state(ps, &pbf_multilevel_constraint);
    m->local_cap = local_bytes;
    m->built_for[6] = -1.0f; /* plan again (with the grids) at the next correction */
    return PBFCL_OK;
}

/* Enqueues ml_compression over the particles' densities as the last density pass left them (in
 * at most `most` work-groups, PBFCL_ML_COMPRESSION_GROUPS) and a read of its sums that does not
 * block (m->read_done). */
static pbfcl_status measure(const pbfcl_sim_view *v, ml_state *m, size_t most, pbfcl_profile *prof)
{
    size_t groups = (v->n + v->wg - 1) / v->wg;
    groups = groups < most ? groups : most;
    if (groups == 0)
        return PBFCL_OK;
    size_t bytes = PBFCL_ML_COMPRESSION_GROUPS * 2 * sizeof(float);
    if (!m->part_buf) { /* pinned: NVIDIA's OpenCL reads into pageable memory through a copy */
        m->part_cl = v->cl;
        PBFCL_TRY(pbfcl_pinned_reserve(v->cl, &m->part, bytes));
        PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, bytes, "multilevel compression sums",
                                  &m->part_buf));
    }
    if (m->read_done) { /* not taken (a frame's first substep): the queue orders the reads */
        clReleaseEvent(m->read_done);
        m->read_done = NULL;
    }
    cl_kernel k = m->k[ML_COMPRESSION];
    cl_uint n = (cl_uint)v->n;
    cl_float inv_rho = v->params->inv_rest_density;
    ML_ARG(k, 0, n);
    ML_ARG(k, 1, inv_rho);
    ML_ARG(k, 2, v->density_buf);
    ML_ARG(k, 3, v->solids);
    ML_ARG(k, 4, v->phase_buf);
    ML_ARG(k, 5, m->part_buf);
    PBFCL_CL_CHECK(clSetKernelArg(k, 6, v->wg * 8, NULL));
    PBFCL_TRY(pbfcl_cl_check_launch(v->cl, k, "ml_compression", v->wg, v->wg * 8));
    PBFCL_TRY(launch(v, k, groups * v->wg, prof));
    m->part_groups = groups;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(v->cl->queue, m->part_buf, CL_FALSE, 0,
                                       groups * 2 * sizeof(float), m->part.ptr, 0, NULL,
                                       &m->read_done));
    return PBFCL_OK;
}

/* The fluid's mean compression the last substep left, from its read (waited for: the device
 * has long passed it, the host being a substep ahead); -1 without one. */
static double measured(ml_state *m)
{
    if (!m->read_done)
        return -1.0;
    cl_int err = clWaitForEvents(1, &m->read_done);
    clReleaseEvent(m->read_done);
    m->read_done = NULL;
    if (err != CL_SUCCESS)
        return -1.0;
    const float *part = m->part.ptr;
    double sum = 0.0, fluid = 0.0;
    for (size_t g = 0; g < m->part_groups; g++) {
        sum += part[2 * g];
        fluid += part[2 * g + 1];
    }
    return fluid > 0.0 ? sum / fluid : -1.0;
}

pbfcl_status pbfcl_pbf_multilevel_compression(pbfcl_sim *sim, size_t groups, double *mean)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    ml_state *m = pbf_constraint_state(ps, &pbf_multilevel_constraint);
    if (!m->program)
        PBFCL_TRY(build_program(&v, m));
    if (groups < 1 || groups > PBFCL_ML_COMPRESSION_GROUPS)
        groups = PBFCL_ML_COMPRESSION_GROUPS;
    PBFCL_TRY(measure(&v, m, groups, NULL));
    *mean = measured(m);
    return PBFCL_OK;
}

/* After iteration it's density and contact corrections (x* = q): the first solver.multilevel
 * iterations end with a coarse correction of what they left. With no iterations (the positions'
 * pass still runs once, for the bodies) there is none. With one correction a substep, those of
 * a frame's later substeps start warm (PBFCL_ML_WARM). Where the corrections leave iterations after
 * them, a frame's later substeps end those with a correction too when the substep before left the
 * fluid more compressed, on the mean, than solver.multilevel_limit (pbfcl_ml_adds): an impact the
 * first corrections cannot hold gets more, the rest of the run does not pay for them. */
static pbfcl_status ml_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    ml_state *m = state;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    const pbfcl_solver_settings *s = &v.scene->solver;
    bool limited = pbfcl_ml_adapts(s), adapts = limited && !pbfcl_sim_split(sim);
    if (limited && !adapts && !m->split_warned) {
        m->split_warned = true;
        pbfcl_warnf("solver.multilevel_limit %g %% is not applied to a simulation split over "
                    "devices (each would choose its corrections alone): its iterations after the "
                    "first %d end with no correction; set --multilevel to the iterations for "
                    "them all",
                    s->multilevel_limit, s->multilevel);
    }
    if (adapts && it == s->multilevel)
        m->adds = v.substep > 0 && pbfcl_ml_adds(s, measured(m));
    if (pbfcl_ml_corrects(s, it)) {
        bool warm = s->multilevel == 1 && v.substep > 0;
        PBFCL_TRY(pbfcl_pbf_multilevel(sim, warm, prof));
    } else if (adapts && m->adds && it < s->iterations) {
        PBFCL_TRY(pbfcl_pbf_multilevel(sim, false, prof));
        m->phi_kept = false; /* the next substep's first correction starts cold */
    }
    if (adapts && it == s->iterations - 1 && m->program) /* none ran (no gravity): no measure */
        PBFCL_TRY(measure(&v, m, PBFCL_ML_COMPRESSION_GROUPS, prof));
    return PBFCL_OK;
}

const pbf_constraint_kind pbf_multilevel_constraint = {
    .name = "multilevel",
    .pass = PBF_PASS_POSITIONS,
    .create = ml_create,
    .destroy = ml_destroy,
    .project = ml_project,
};
