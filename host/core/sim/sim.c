/* The Position Based Fluids simulation (Macklin & Mueller 2013): the particle buffers on
 * the device, the solver constants derived from the scene, and the step of seed 001's
 * outline with one host wrapper per kernel of cl/pbf.cl; stats, bounds and the render copy
 * are the solver-neutral passes of particles.c. */
#include "sim/sim.h"

#include "runtime/build_options.h"
#include "sim/particles.h"
#include "runtime/programs.h"
#include "bodies/shape_match.h"
#include "sim/solver_method.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PBFCL_PI 3.14159265358979323846

/* Adaptive substeps (a CFL condition, see choose_substeps): in one substep no particle may
 * move more than solver.cfl * h, and the solver's signal speed must stay ahead of the
 * free-fall speed sqrt(2 g H) over the fluid's height H. At most PBFCL_SIM_MAX_SUBSTEPS (or
 * the scene's count if larger). */
#define PBFCL_SIM_MAX_SUBSTEPS 64

/* Chebyshev acceleration starts after this many plain Jacobi iterations (Wang 2015's delay
 * S): the first iterations of a substep remove the prediction's large local errors, which
 * over-relaxation would amplify. */
#define PBFCL_SIM_CHEBYSHEV_DELAY 2

/* The near part of the neighbour lists, which the contact constraint (pbf_collide) reads, holds
 * the neighbours within the contact distance 2r plus a skin at the neighbour search (on x*,
 * after predict): this many r per solver iteration between collision passes
 * (solver.contact_interval). While no particle has moved half the skin since the search, no
 * pair outside the near part can be in contact; delta reports a larger move in the moved flags
 * of the grid's regions around the mover (grid.moved_buf) and collide then reads the whole
 * lists there, so no contact is ever missed. At h = 4r a skin of 0.75r
 * keeps the near part to the 6 face neighbours of the rest lattice (r would add the 12 edge
 * neighbours). Without the report, contacts were missed: 250 pairs in one substep of a
 * 28K-particle dam break with a skin of 0.5r, 2 in 60 frames with 0.75r; the 300-frame 1M run's
 * fastest particle went from 12.2 to 16.7 m/s, and with collisions every second iteration and
 * Chebyshev weights a 4M dam break needed 17.9 substeps per frame instead of 9.65. */
#define PBFCL_SIM_CONTACT_SKIN 0.75f

/* Largest work-group size tried (a power of two; the device may allow less). */
#define PBFCL_SIM_WG_MAX 256u

struct pbfcl_sim {
    const pbfcl_solver_method *method; /* the method that moves the particles (PBF) */
    pbfcl_cl *cl;
    pbfcl_scene scene;
    size_t n;        /* active particles */
    size_t capacity; /* particles the buffers hold */
    pbfcl_pbf_params params;
    pbfcl_grid grid;
    cl_program program;
    cl_kernel predict, lambda, delta, collide, update, vorticity_viscosity, body_contacts;
    pbfcl_particles particles; /* stats, bounds, copy_positions (cl/particles.cl) */
    size_t wg;
    cl_float4 gravity, push_origin, push_dir, push;    /* predict's arguments; push.w = radius */
    cl_mem params_buf;                                 /* pbfcl_pbf_params, __constant */
    cl_mem pos_buf, pred_buf, vel_buf, vort_force_buf; /* float4 per particle */
    cl_mem pos_tmp_buf, pred_tmp_buf, vel_tmp_buf, vort_force_tmp_buf; /* reorder targets */
    cl_mem q_buf, q_tmp_buf;   /* float4: x* + dx (delta, collide), ping-pong in collide */
    cl_mem omega_buf;          /* float4: vorticity */
    int vort_force_stale;      /* vort_force_buf may hold a force (zeroed when vorticity is off) */
    cl_mem lambda_buf;         /* float4 (x*, lambda): delta reads both at once */
    cl_mem density_buf;        /* float */
    cl_mem search_buf;         /* float4: x* at the neighbour search (lambda, first iteration) */
    void *method_state;        /* what the method's create made (sph.c), or NULL */
    cl_mem id_buf, id_tmp_buf; /* uint: each particle's persistent id, carried by reorder */
    cl_mem phase_buf, phase_tmp_buf;       /* uint: PBFCL_SIM_PHASE_FLUID or body + 1 */
    cl_mem inv_mass_buf, inv_mass_tmp_buf; /* float: m_fluid / m, the relative inverse mass */
    size_t statics; /* particles of inverse mass 0 (obstacles'; phase PBFCL_SIM_PHASE_STATIC) */
    pbfcl_shape_match *bodies; /* rigid and soft bodies; NULL until the first are set */
    pbfcl_kinematic *paths;    /* static particles on paths (kinematic.h); NULL until set */
    cl_mem accel_max_buf;      /* sph: 1 uint, max |a| of the last frame's steps (float bits) */
    int lists_fresh;           /* neighbours ran and no lambda since: lambda records x* */
    /* the id-to-slot map (particles.slot_buf, particles.h) holds the particles' order now: set
     * by the sort's reorder_solids (which writes it) and body_slots, cleared by every other
     * reorder, change of ids (new, appended, renumbered or loaded) or of bodies, and at the
     * start of a step; body_slots and the next substep's body_predict then launch no
     * particles_slots (15.9 us each with 1.128M particles on an H200) */
    int slots_current;
    int q_from_delta; /* q_buf was written by delta (collide may read the near lists) */
    /* the bodies' friction with other solids: 1 from the neighbour search to the substep's
     * first collide pass, before which body_contacts measures each contact over the whole
     * substep (how far it slid and closed since x); 2 from then to the projection that applies
     * it; 0 after */
    int body_friction;
    int substeps;     /* substeps of the last frame (params.dt = dt / substeps) */
    float wall_scale; /* lambda and delta: pbfcl_pbf_wall_scale */
    float omega;      /* delta: the Chebyshev weight of this iteration (1: plain Jacobi) */
};

/* What a per-particle buffer holds when a particle is created or appended. */
typedef enum sim_initial {
    SIM_INIT_ZERO,         /* zeros */
    SIM_INIT_POSITION,     /* the given position, w = 0 */
    SIM_INIT_VELOCITY,     /* the given velocity (zero if none), w = 0 */
    SIM_INIT_REST_DENSITY, /* the rest density (one float) */
    SIM_INIT_ID,           /* the particle's id (one uint) */
    SIM_INIT_ONE,          /* 1.0f (one float): the fluid's relative inverse mass */
    SIM_INIT_FLUID_PHASE   /* PBFCL_SIM_PHASE_FLUID (one uint) */
} sim_initial;

/* Whether a reordered buffer is carried through the sort of every substep (a compaction
 * carries them all). */
typedef enum sim_sort {
    SIM_SORT_CARRY = 0, /* yes */
    SIM_SORT_SKIP,      /* no: read before the sort and written whole after it each substep */
    SIM_SORT_SOLIDS     /* only with bodies or static particles (else all alike: 0 or 1) */
} sim_sort;

/* Whether checkpoints carry a buffer (pbfcl_sim_state_save / load, a section of its name). */
typedef enum sim_saved {
    SIM_SCRATCH = 0, /* no: each substep writes it before reading it */
    SIM_SAVED        /* yes: what a substep reads first, and what a frame overwrites before
                      * reading, so that a restored simulation is the saved one whatever the
                      * stages read first */
} sim_saved;

/* One per-particle buffer: its name (the only spelling: allocation messages and its section in
 * a checkpoint), bytes per particle (16: float4, 4: float or uint), where its handle lives,
 * where its reorder target lives if the reorder carries it (state that outlives a substep),
 * its initial value, the methods that use it (a bit per pbfcl_method; the others do not
 * allocate it), whether each substep's sort carries it and whether checkpoints do. */
typedef struct sim_buffer {
    const char *name;
    size_t elem;
    size_t field;       /* offsetof(pbfcl_sim, ..._buf) */
    size_t reorder_tmp; /* offsetof the reorder target, or SIM_NOT_REORDERED */
    sim_initial init;
    unsigned methods; /* SIM_PBF, SIM_SPH or both */
    sim_sort sort;
    sim_saved saved;
} sim_buffer;

#define SIM_PBF (1u << PBFCL_METHOD_PBF)
#define SIM_SPH (1u << PBFCL_METHOD_SPH)
#define SIM_ALL (SIM_PBF | SIM_SPH)

#define SIM_NOT_REORDERED ((size_t)-1)
#define SIM_BUF(f) offsetof(pbfcl_sim, f)

/* Every per-particle buffer, once: allocation, the byte estimate, creation and appending,
 * the reorder and destroy all read this table. */
static const sim_buffer sim_buffers[] = {
    {"positions", 16, SIM_BUF(pos_buf), SIM_BUF(pos_tmp_buf), SIM_INIT_POSITION, SIM_ALL,
     SIM_SORT_CARRY, SIM_SAVED},
    {"predicted_positions", 16, SIM_BUF(pred_buf), SIM_BUF(pred_tmp_buf), SIM_INIT_POSITION,
     SIM_PBF, SIM_SORT_CARRY, SIM_SAVED},
    {"velocities", 16, SIM_BUF(vel_buf), SIM_BUF(vel_tmp_buf), SIM_INIT_VELOCITY, SIM_ALL,
     SIM_SORT_CARRY, SIM_SAVED},
    /* predict reads the force before the sort, vorticity_viscosity writes it after: at 1M
     * particles on an H200 the sort's copy cost 13 us a substep for nothing */
    {"vorticity_forces", 16, SIM_BUF(vort_force_buf), SIM_BUF(vort_force_tmp_buf), SIM_INIT_ZERO,
     SIM_PBF, SIM_SORT_SKIP, SIM_SAVED},
    {"ids", 4, SIM_BUF(id_buf), SIM_BUF(id_tmp_buf), SIM_INIT_ID, SIM_ALL, SIM_SORT_CARRY,
     SIM_SAVED},
    {"phases", 4, SIM_BUF(phase_buf), SIM_BUF(phase_tmp_buf), SIM_INIT_FLUID_PHASE, SIM_ALL,
     SIM_SORT_SOLIDS, SIM_SAVED},
    {"inverse_masses", 4, SIM_BUF(inv_mass_buf), SIM_BUF(inv_mass_tmp_buf), SIM_INIT_ONE, SIM_ALL,
     SIM_SORT_SOLIDS, SIM_SAVED},
    {"corrected_positions", 16, SIM_BUF(q_buf), SIM_NOT_REORDERED, SIM_INIT_ZERO, SIM_PBF,
     SIM_SORT_CARRY, SIM_SAVED},
    {"corrected_positions_collide", 16, SIM_BUF(q_tmp_buf), SIM_NOT_REORDERED, SIM_INIT_ZERO,
     SIM_PBF, SIM_SORT_CARRY, SIM_SCRATCH},
    {"vorticity", 16, SIM_BUF(omega_buf), SIM_NOT_REORDERED, SIM_INIT_ZERO, SIM_PBF, SIM_SORT_CARRY,
     SIM_SAVED},
    {"lambdas", 16, SIM_BUF(lambda_buf), SIM_NOT_REORDERED, SIM_INIT_ZERO, SIM_PBF, SIM_SORT_CARRY,
     SIM_SAVED},
    {"densities", 4, SIM_BUF(density_buf), SIM_NOT_REORDERED, SIM_INIT_REST_DENSITY, SIM_ALL,
     SIM_SORT_CARRY, SIM_SAVED},
    {"search_positions", 16, SIM_BUF(search_buf), SIM_NOT_REORDERED, SIM_INIT_ZERO, SIM_PBF,
     SIM_SORT_CARRY, SIM_SCRATCH},
};

#define SIM_BUFFER_COUNT (sizeof sim_buffers / sizeof sim_buffers[0])

/* True if method (a pbfcl_method) uses buffer d. */
static bool buffer_used(int method, const sim_buffer *d)
{
    return (d->methods >> method) & 1u;
}

/* The handle of a buffer of the table, or of its reorder target. */
static cl_mem *sim_buf(pbfcl_sim *sim, size_t offset)
{
    return (cl_mem *)((char *)sim + offset);
}

/* Sets kernel argument idx to the value v (an lvalue). */
#define SIM_ARG(kernel, idx, v) PBFCL_CL_CHECK(clSetKernelArg((kernel), (idx), sizeof(v), &(v)))

static float poly6_at(const pbfcl_pbf_params *p, float r)
{
    float d = p->h2 - r * r;
    return r < p->h ? p->poly6 * d * d * d : 0.0f;
}

/* Neighbours of a particle of the rest lattice (spacing 2r) closer than h = h_ratio * r. */
static unsigned rest_neighbours(float h_ratio)
{
    if (!(h_ratio > 0.0f) || !(h_ratio <= 64.0f))
        return h_ratio > 0.0f ? UINT32_MAX : 0;
    int reach = (int)ceil(h_ratio / 2.0);
    unsigned count = 0;
    for (int i = -reach; i <= reach; i++)
        for (int j = -reach; j <= reach; j++)
            for (int k = -reach; k <= reach; k++) {
                double d = 2.0 * sqrt((double)(i * i + j * j + k * k));
                count += (d > 0.0 && d < h_ratio);
            }
    return count;
}

pbfcl_status pbfcl_sim_constants(const pbfcl_scene *s, const pbfcl_solver_method *m,
                                 pbfcl_pbf_params *p)
{
    const pbfcl_solver_settings *v = &s->solver;
    if (!(s->particle_radius > 0.0f) || !(s->rest_density > 0.0f)) {
        pbfcl_errorf("the solver needs particle_radius > 0 and rest_density > 0 (got r = %g, "
                     "rho0 = %g)",
                     s->particle_radius, s->rest_density);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_solver_params_check(v)); /* the one validator of the solver parameters */
    unsigned rest = rest_neighbours(v->h_ratio);
    if (!(v->h_ratio > 2.0f) || rest > PBFCL_SIM_MAX_NEIGHBORS * 2 / 3) {
        pbfcl_errorf("solver h_ratio %g gives %u neighbours per particle at rest (lattice "
                     "spacing 2r); the kernel radius h = h_ratio * r must reach past the spacing "
                     "(h_ratio > 2) and the neighbour lists (%u entries) need a third of room for "
                     "compression: use an h_ratio above 2 and at most %.3f (default 4)",
                     v->h_ratio, rest, PBFCL_SIM_MAX_NEIGHBORS, PBFCL_MAX_H_RATIO);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    memset(p, 0, sizeof *p);
    for (int a = 0; a < 3; a++) {
        p->box_min[a] = s->domain_min[a];
        p->box_max[a] = s->domain_max[a];
    }
    double r = s->particle_radius, h = v->h_ratio * r, spacing = 2.0 * r;
    p->dt = (float)(v->dt / v->substeps);
    p->inv_dt = 1.0f / p->dt;
    p->h = (float)h;
    p->h2 = (float)(h * h);
    p->rest_density = s->rest_density;
    p->inv_rest_density = 1.0f / s->rest_density;
    p->mass = (float)(s->rest_density * spacing * spacing * spacing);
    p->volume = (float)(spacing * spacing * spacing);
    p->poly6 = (float)(315.0 / (64.0 * PBFCL_PI * pow(h, 9.0)));
    p->spiky_grad = (float)(-45.0 / (PBFCL_PI * pow(h, 6.0)));
    p->self_density = (float)(p->mass * p->poly6 * pow(h, 6.0));
    p->epsilon = (float)(v->relaxation / (h * h));
    p->scorr_k = (float)(v->scorr_k * h * h);
    p->scorr_inv_wdq = 1.0f / poly6_at(p, (float)(v->scorr_dq * h));
    p->scorr_n = (pbfcl_uint)v->scorr_n;
    p->radius = s->particle_radius;
    p->min_dist = (float)spacing;
    p->vorticity = v->vorticity;
    p->viscosity = v->viscosity;
    p->contact_slop = v->contact_slop;
    p->friction_static = v->friction_static;
    p->friction_dynamic = v->friction_dynamic;
    return m->derive ? m->derive(s, p) : PBFCL_OK; /* the method's own conditions */
}

/* The Poly6 density, in units of rho0, of the rest lattice (spacing 2r) at a particle of it:
 * all of the lattice if !half, else only its layers at or above the particle's own. */
static double lattice_density(const pbfcl_pbf_params *p, int half)
{
    double s = p->min_dist, h = p->h, sum = 0.0;
    int reach = (int)ceil(h / s);
    for (int i = -reach; i <= reach; i++)
        for (int j = half ? 0 : -reach; j <= reach; j++)
            for (int k = -reach; k <= reach; k++) {
                double r2 = s * s * (i * i + j * j + k * k), d = p->h2 - r2;
                sum += r2 < p->h2 ? p->poly6 * d * d * d : 0.0;
            }
    return sum * s * s * s;
}

double pbfcl_pbf_lattice_density(const pbfcl_pbf_params *p)
{
    return lattice_density(p, 0);
}

double pbfcl_pbf_wall_scale(const pbfcl_pbf_params *p)
{
    double h = p->h, d = p->radius, h2 = h * h, d2 = d * d;
    double fd = d * (h2 * h2 * h2 * h2 - 4.0 / 3.0 * h2 * h2 * h2 * d2 + 1.2 * h2 * h2 * d2 * d2 -
                     4.0 / 7.0 * h2 * d2 * d2 * d2 + d2 * d2 * d2 * d2 / 9.0);
    double phi = p->poly6 * PBFCL_PI / 4.0 * (128.0 / 315.0 * pow(h, 9.0) - fd);
    return phi > 0.0 ? (lattice_density(p, 0) - lattice_density(p, 1)) / phi : 0.0;
}

/* The grid over the box with cells of edge h. */
static pbfcl_status grid_params_for(const pbfcl_scene *s, const pbfcl_pbf_params *p,
                                    pbfcl_grid_params *out)
{
    return pbfcl_grid_params_fit(s->domain_min, s->domain_max, p->h, out);
}

unsigned long long pbfcl_sim_bytes_needed_with(const pbfcl_scene *scene,
                                               const pbfcl_solver_method *m, size_t n)
{
    pbfcl_pbf_params p;
    pbfcl_grid_params g;
    unsigned grid_bits = 0;
    if (pbfcl_sim_constants(scene, m, &p) == PBFCL_OK && grid_params_for(scene, &p, &g) == PBFCL_OK)
        grid_bits = g.grid_bits;
    unsigned long long per_particle = 0;
    for (size_t b = 0; b < SIM_BUFFER_COUNT; b++)
        if (buffer_used(scene->solver.method, &sim_buffers[b]))
            per_particle +=
                sim_buffers[b].elem * (sim_buffers[b].reorder_tmp != SIM_NOT_REORDERED ? 2 : 1);
    for (int b = 0; b < m->buffer_count; b++) /* the method's own */
        per_particle += m->buffers[b].elem;
    return n * per_particle + pbfcl_grid_bytes_needed(n, PBFCL_SIM_MAX_NEIGHBORS, grid_bits) +
           pbfcl_particles_bytes_needed(n);
}

static const char *const kernel_names[] = {"pbf_predict",      "pbf_lambda",
                                           "pbf_delta",        "pbf_collide",
                                           "pbf_update",       "pbf_vorticity_viscosity",
                                           "pbf_body_contacts"};

static cl_kernel *kernel_slot(pbfcl_sim *sim, int k)
{
    cl_kernel *slots[] = {&sim->predict,      &sim->lambda, &sim->delta,
                          &sim->collide,      &sim->update, &sim->vorticity_viscosity,
                          &sim->body_contacts};
    return slots[k];
}

#define SIM_KERNEL_COUNT ((int)(sizeof kernel_names / sizeof kernel_names[0]))

void pbfcl_sim_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    pbfcl_solver_pbf()->build_config(dev, cfg);
}

/* pbf's build_config: the largest power-of-two work-group size up to PBFCL_SIM_WG_MAX. */
static void pbf_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    size_t wg = 1; /* the largest power of two the device allows, up to PBFCL_SIM_WG_MAX */
    while (wg * 2 <= dev->max_wg && wg * 2 <= PBFCL_SIM_WG_MAX)
        wg *= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
    cfg->max_neighbors = PBFCL_SIM_MAX_NEIGHBORS;
}

static pbfcl_status build_kernels(pbfcl_sim *sim)
{
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_PBF);
    pbfcl_build_config cfg;
    pbf_build_config(&sim->cl->dev, &cfg);
    sim->wg = cfg.wg_size;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    PBFCL_TRY(pbfcl_cl_build(sim->cl, desc->files, desc->nfiles, options, &sim->program));
    for (int k = 0; k < SIM_KERNEL_COUNT; k++) {
        PBFCL_TRY(pbfcl_cl_kernel(sim->program, kernel_names[k], kernel_slot(sim, k)));
        PBFCL_TRY(
            pbfcl_cl_check_launch(sim->cl, *kernel_slot(sim, k), kernel_names[k], sim->wg, 0));
    }
    return PBFCL_OK;
}

static pbfcl_status alloc_buffers(pbfcl_sim *sim)
{
    pbfcl_cl *cl = sim->cl;
    for (int pass = 0; pass < 2; pass++) /* the buffers, then the reorder targets */
        for (size_t b = 0; b < SIM_BUFFER_COUNT; b++) {
            const sim_buffer *d = &sim_buffers[b];
            size_t off = pass ? d->reorder_tmp : d->field;
            if (off != SIM_NOT_REORDERED && buffer_used(sim->scene.solver.method, d))
                PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sim->capacity * d->elem, d->name,
                                          sim_buf(sim, off)));
        }
    struct {
        cl_mem *buf;
        size_t size;
        const char *what;
    } list[] = {
        {&sim->params_buf, sizeof(pbfcl_pbf_params), "solver parameters"},
        {&sim->accel_max_buf, sizeof(cl_uint), "largest acceleration"},
    };
    for (size_t b = 0; b < sizeof list / sizeof list[0]; b++)
        PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, list[b].size, list[b].what, list[b].buf));
    return PBFCL_OK;
}

/* Packs n xyz triples into float4 (x, y, z, 0); all zero if xyz is NULL. */
static void pack_float3(const float *xyz, size_t n, cl_float4 *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = xyz ? (cl_float4){{xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], 0.0f}}
                     : (cl_float4){{0.0f, 0.0f, 0.0f, 0.0f}};
}

/* Fills tmp (n elements of d->elem bytes) with the initial value of buffer d for particles
 * first..first+n-1. */
static void initial_values(const pbfcl_sim *sim, const sim_buffer *d, size_t first, size_t n,
                           const float *positions, const float *velocities, void *tmp)
{
    float *f1 = tmp;
    cl_uint *u1 = tmp;
    if (d->init == SIM_INIT_POSITION || d->init == SIM_INIT_VELOCITY) {
        pack_float3(d->init == SIM_INIT_POSITION ? positions : velocities, n, tmp);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        switch (d->init) {
        case SIM_INIT_POSITION:
        case SIM_INIT_VELOCITY:
            break; /* packed above */
        case SIM_INIT_REST_DENSITY:
            f1[i] = sim->params.rest_density;
            break;
        case SIM_INIT_ID:
            u1[i] = (cl_uint)(first + i);
            break;
        case SIM_INIT_ONE:
            f1[i] = 1.0f;
            break;
        case SIM_INIT_FLUID_PHASE:
            u1[i] = PBFCL_SIM_PHASE_FLUID;
            break;
        case SIM_INIT_ZERO:
            memset((char *)tmp + i * d->elem, 0, d->elem);
            break;
        }
    }
}

/* Gives particles first..first+n-1 their initial state in every per-particle buffer: positions,
 * velocities (NULL: zero), ids first..first+n-1, the rest density, zeros elsewhere. */
static pbfcl_status upload_particles(pbfcl_sim *sim, size_t first, size_t n, const float *positions,
                                     const float *velocities)
{
    if (n == 0)
        return PBFCL_OK;
    void *tmp = calloc(n, 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t b = 0; b < SIM_BUFFER_COUNT && st == PBFCL_OK; b++) {
        const sim_buffer *d = &sim_buffers[b];
        if (!buffer_used(sim->scene.solver.method, d))
            continue;
        initial_values(sim, d, first, n, positions, velocities, tmp);
        PBFCL_CL_TRY(st,
                     clEnqueueWriteBuffer(sim->cl->queue, *sim_buf(sim, d->field), CL_TRUE,
                                          first * d->elem, n * d->elem, tmp, 0, NULL, NULL),
                     done);
        if (d->reorder_tmp != SIM_NOT_REORDERED) /* the reorder target too: ALGORITHM.md,
                                                    "Oclgrind and reused buffers" */
            PBFCL_CL_TRY(st,
                         clEnqueueWriteBuffer(sim->cl->queue, *sim_buf(sim, d->reorder_tmp),
                                              CL_TRUE, first * d->elem, n * d->elem, tmp, 0, NULL,
                                              NULL),
                         done);
    }
done:
    free(tmp);
    return st;
}

/* The state the solver-neutral passes (particles.h) read. */
static cl_uint sim_has_bodies(const pbfcl_sim *sim);

/* The state the solver-neutral passes read; the phases and inverse masses only with bodies or
 * obstacles (the stats then weigh each particle by its own mass). */
static pbfcl_particle_state particle_state(const pbfcl_sim *sim)
{
    bool bodies = sim_has_bodies(sim);
    return (pbfcl_particle_state){sim->n,
                                  sim->pos_buf,
                                  sim->vel_buf,
                                  sim->density_buf,
                                  sim->grid.neighbor_count_buf,
                                  sim->id_buf,
                                  bodies ? sim->phase_buf : NULL,
                                  bodies ? sim->inv_mass_buf : NULL};
}

/* Enqueues the bounds of the current state (read by choose_substeps). */
static pbfcl_status enqueue_bounds(pbfcl_sim *sim, pbfcl_profile *prof)
{
    float g = (float)sqrt((double)sim->gravity.s[0] * sim->gravity.s[0] +
                          (double)sim->gravity.s[1] * sim->gravity.s[1] +
                          (double)sim->gravity.s[2] * sim->gravity.s[2]);
    float down[3] = {0.0f, 0.0f, 0.0f};
    for (int a = 0; g > 0.0f && a < 3; a++)
        down[a] = sim->gravity.s[a] / g;
    pbfcl_particle_state st = particle_state(sim);
    return pbfcl_particles_bounds(&sim->particles, &st, sim->params.box_min, sim->params.box_max,
                                  down, prof);
}

static pbfcl_status check_config(const pbfcl_sim *sim, size_t n)
{
    if (n == 0 || n > UINT32_MAX / PBFCL_SIM_MAX_NEIGHBORS) { /* n: the capacity */
        pbfcl_errorf("a simulation needs 1 to %u particles (got %zu); change the particle count "
                     "or radius",
                     UINT32_MAX / PBFCL_SIM_MAX_NEIGHBORS, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    unsigned long long need = pbfcl_sim_bytes_needed_with(&sim->scene, sim->method, n);
    unsigned long long largest = (unsigned long long)n * 4 * PBFCL_SIM_MAX_NEIGHBORS;
    return pbfcl_cl_check_memory(sim->cl, need, largest, "the simulation");
}

static pbfcl_status sim_init(pbfcl_sim *sim, const float *positions)
{
    pbfcl_grid_params gp;
    PBFCL_TRY(pbfcl_sim_constants(&sim->scene, sim->method, &sim->params));
    sim->wall_scale = (float)pbfcl_pbf_wall_scale(&sim->params);
    PBFCL_TRY(check_config(sim, sim->capacity));
    PBFCL_TRY(grid_params_for(&sim->scene, &sim->params, &gp));
    PBFCL_TRY(pbfcl_grid_create(&sim->grid, sim->cl, &gp, sim->capacity, PBFCL_SIM_MAX_NEIGHBORS));
    pbfcl_build_config cfg;
    sim->method->build_config(&sim->cl->dev, &cfg);
    sim->wg = cfg.wg_size;               /* the work-group size of the method's kernels */
    PBFCL_TRY(sim->method->create(sim)); /* the method's kernels */
    PBFCL_TRY(pbfcl_particles_create(&sim->particles, sim->cl, sim->capacity));
    PBFCL_TRY(alloc_buffers(sim));
    sim->substeps = sim->scene.solver.substeps;
    sim->omega = 1.0f;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->params_buf, CL_TRUE, 0,
                                        sizeof sim->params, &sim->params, 0, NULL, NULL));
    PBFCL_TRY(upload_particles(sim, 0, sim->n, positions, NULL));
    static const cl_uint zero = 0; /* the max |a| of no step yet */
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->accel_max_buf, CL_TRUE, 0, sizeof zero,
                                        &zero, 0, NULL, NULL));
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_create_with(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                                   const pbfcl_solver_method *method, size_t capacity,
                                   const float *positions, size_t n)
{
    *out = NULL;
    if (n > capacity) {
        pbfcl_errorf("%zu particles do not fit a simulation of capacity %zu", n, capacity);
        return PBFCL_ERR_CAPACITY;
    }
    pbfcl_sim *sim = calloc(1, sizeof *sim);
    if (!sim)
        return PBFCL_ERR_OUT_OF_MEMORY;
    sim->method = method;
    sim->cl = cl;
    sim->scene = *scene;
    sim->n = n;
    sim->capacity = capacity;
    pbfcl_sim_set_gravity(sim, scene->gravity);
    pbfcl_status st = sim_init(sim, positions);
    if (st != PBFCL_OK) {
        pbfcl_sim_destroy(sim);
        return st;
    }
    *out = sim;
    return PBFCL_OK;
}

void pbfcl_sim_destroy(pbfcl_sim *sim)
{
    if (!sim)
        return;
    if (sim->cl && sim->cl->queue)
        clFinish(sim->cl->queue);
    for (size_t b = 0; b < SIM_BUFFER_COUNT; b++) {
        pbfcl_cl_release_buffer(sim_buf(sim, sim_buffers[b].field));
        if (sim_buffers[b].reorder_tmp != SIM_NOT_REORDERED)
            pbfcl_cl_release_buffer(sim_buf(sim, sim_buffers[b].reorder_tmp));
    }
    pbfcl_cl_release_buffer(&sim->params_buf);
    pbfcl_cl_release_buffer(&sim->accel_max_buf);
    pbfcl_particles_destroy(&sim->particles);
    if (sim->method)
        sim->method->destroy(sim);
    pbfcl_shape_match_destroy(sim->bodies);
    free(sim->bodies);
    pbfcl_kinematic_destroy(sim->paths);
    free(sim->paths);
    pbfcl_grid_destroy(&sim->grid);
    free(sim);
}

/* pbf's destroy: its kernels and program. */
static void pbf_destroy(pbfcl_sim *sim)
{
    for (int k = 0; k < SIM_KERNEL_COUNT; k++)
        if (*kernel_slot(sim, k))
            clReleaseKernel(*kernel_slot(sim, k));
    if (sim->program)
        clReleaseProgram(sim->program);
    sim->program = NULL;
}

/* ---- the stages ------------------------------------------------------------------------ */

static pbfcl_status launch(pbfcl_sim *sim, cl_kernel k, pbfcl_profile *prof, pbfcl_stage stage)
{
    return pbfcl_cl_launch(sim->cl, k, sim->n, sim->wg, prof, stage);
}

/* Sets the arguments every neighbour kernel starts with: params, n. */
static pbfcl_status set_head(pbfcl_sim *sim, cl_kernel k)
{
    cl_uint n = (cl_uint)sim->n;
    SIM_ARG(k, 0, sim->params_buf);
    SIM_ARG(k, 1, n);
    return PBFCL_OK;
}

/* Whether the simulation has shape-matched bodies (the body stages then run). */
static bool sim_matches_shapes(const pbfcl_sim *sim)
{
    return sim->bodies && sim->bodies->bodies > 0;
}

/* Whether the simulation has bodies or static particles (the kernels then read phases and
 * inverse masses). */
static cl_uint sim_has_bodies(const pbfcl_sim *sim)
{
    return sim_matches_shapes(sim) || sim->statics > 0;
}

pbfcl_status pbfcl_sim_predict(pbfcl_sim *sim, pbfcl_profile *prof)
{
    cl_kernel k = sim->predict;
    PBFCL_TRY(set_head(sim, k));
    SIM_ARG(k, 2, sim->pos_buf);
    SIM_ARG(k, 3, sim->pred_buf);
    SIM_ARG(k, 4, sim->vel_buf);
    SIM_ARG(k, 5, sim->vort_force_buf);
    SIM_ARG(k, 6, sim->gravity);
    SIM_ARG(k, 7, sim->push_origin);
    SIM_ARG(k, 8, sim->push_dir);
    SIM_ARG(k, 9, sim->push);
    cl_uint bodies = sim_has_bodies(sim);
    SIM_ARG(k, 10, bodies);
    SIM_ARG(k, 11, sim->inv_mass_buf);
    SIM_ARG(k, 12, sim->phase_buf);
    return launch(sim, k, prof, PBFCL_STAGE_PREDICT);
}

static void swap_buf(cl_mem *a, cl_mem *b)
{
    cl_mem t = *a;
    *a = *b;
    *b = t;
}

/* The three words a particle carries with solids, its id, phase and inverse mass: a substep's
 * sort reorders them in one launch (reorder_solid_words). */
static bool is_solid_word(const sim_buffer *d)
{
    return d->field == SIM_BUF(id_buf) || d->field == SIM_BUF(phase_buf) ||
           d->field == SIM_BUF(inv_mass_buf);
}

/* The sort's reorder of the solids' words (is_solid_word, in sim_buffers' order: the ids first)
 * by reorder_solids, which with shape-matched bodies also writes their slots: they are then
 * current. */
static pbfcl_status reorder_solid_words(pbfcl_sim *sim, pbfcl_profile *prof)
{
    cl_mem *src[3], *dst[3], from[3], to[3];
    int k = 0;
    for (size_t b = 0; b < SIM_BUFFER_COUNT; b++)
        if (is_solid_word(&sim_buffers[b])) {
            src[k] = sim_buf(sim, sim_buffers[b].field);
            dst[k] = sim_buf(sim, sim_buffers[b].reorder_tmp);
            from[k] = *src[k];
            to[k] = *dst[k];
            k++;
        }
    cl_mem slot = sim_matches_shapes(sim) ? sim->particles.slot_buf : NULL;
    PBFCL_TRY(pbfcl_grid_reorder_solids(&sim->grid, from, to, slot, sim->n, prof));
    for (k = 0; k < 3; k++)
        swap_buf(src[k], dst[k]);
    sim->slots_current = slot != NULL;
    return PBFCL_OK;
}

/* reorder: every per-particle buffer that carries state into sorted order; for a substep's
 * sort (sort), those that need it then (sim_sort), the solids' words in one launch. */
static pbfcl_status sim_reorder(pbfcl_sim *sim, bool sort, pbfcl_profile *prof)
{
    sim->slots_current = 0;
    bool solids = sort && sim_has_bodies(sim);
    for (size_t b = 0; b < SIM_BUFFER_COUNT; b++) {
        const sim_buffer *d = &sim_buffers[b];
        if (d->reorder_tmp == SIM_NOT_REORDERED || !buffer_used(sim->scene.solver.method, d))
            continue;
        if (sort &&
            (d->sort == SIM_SORT_SKIP || (d->sort == SIM_SORT_SOLIDS && !sim_has_bodies(sim))))
            continue;
        if (solids && is_solid_word(d))
            continue; /* reorder_solid_words */
        cl_mem *src = sim_buf(sim, d->field), *dst = sim_buf(sim, d->reorder_tmp);
        if (d->elem == 16)
            PBFCL_TRY(pbfcl_grid_reorder(&sim->grid, *src, *dst, sim->n, prof));
        else /* uint or float: a gather of 4-byte words either way */
            PBFCL_TRY(pbfcl_grid_reorder_uint(&sim->grid, *src, *dst, sim->n, prof));
        swap_buf(src, dst);
    }
    return solids ? reorder_solid_words(sim, prof) : PBFCL_OK;
}

/* hash, sort, reorder, cells and neighbour lists of the positions in the buffer at offset
 * field (x* for pbf, x for sph; the reorder swaps the handle, so it is read again), those
 * within near first. */
static pbfcl_status neighbours_of(pbfcl_sim *sim, size_t field, float near, pbfcl_profile *prof)
{
    pbfcl_grid *g = &sim->grid;
    PBFCL_TRY(pbfcl_grid_hash(g, *sim_buf(sim, field), sim->n, prof)); /* Morton cell id */
    PBFCL_TRY(pbfcl_grid_sort(g, sim->n, prof));                       /* by cell id */
    PBFCL_TRY(sim_reorder(sim, true, prof));      /* x, x*, v, ids (phases with solids) */
    PBFCL_TRY(pbfcl_grid_cells(g, sim->n, prof)); /* cell starts and ends */
    /* a solid lists no particle of its own phase: x* carries the phases' tags (pbf_predict) */
    bool solids = sim_has_bodies(sim) && field == SIM_BUF(pred_buf);
    return pbfcl_grid_neighbours(g, *sim_buf(sim, field), solids, sim->n, sim->params.h, near,
                                 prof);
}

/* The contact skin of the near lists, m. */
static float contact_skin(const pbfcl_sim *sim)
{
    return PBFCL_SIM_CONTACT_SKIN * (float)sim->scene.solver.contact_interval * sim->params.radius;
}

pbfcl_status pbfcl_sim_neighbours(pbfcl_sim *sim, pbfcl_profile *prof)
{
    float near = sim->params.min_dist + contact_skin(sim);
    near = near < sim->params.h ? near : sim->params.h;
    sim->lists_fresh = 1;
    sim->body_friction = 1; /* the next collide pass gives the bodies' friction */
    return neighbours_of(sim, SIM_BUF(pred_buf), near, prof);
}

pbfcl_status pbfcl_sim_neighbours_x(pbfcl_sim *sim, pbfcl_profile *prof)
{
    return neighbours_of(sim, SIM_BUF(pos_buf), 0.0f, prof); /* no contact part */
}

void pbfcl_sim_view_get(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    v->cl = sim->cl;
    v->grid = &sim->grid;
    v->scene = &sim->scene;
    v->params = &sim->params;
    v->n = sim->n;
    v->capacity = sim->capacity;
    v->wg = sim->wg;
    v->substeps = sim->substeps;
    v->gravity = sim->gravity;
    v->push_origin = sim->push_origin;
    v->push_dir = sim->push_dir;
    v->push = sim->push;
    v->wall_scale = sim->wall_scale;
    v->params_buf = sim->params_buf;
    v->bounds_buf = sim->particles.bounds_buf;
    v->accel_max_buf = sim->accel_max_buf;
    v->pos_buf = sim->pos_buf;
    v->vel_buf = sim->vel_buf;
    v->density_buf = sim->density_buf;
    v->method_state = &sim->method_state;
}

pbfcl_status pbfcl_sim_lambda(pbfcl_sim *sim, pbfcl_profile *prof)
{
    cl_kernel k = sim->lambda;
    PBFCL_TRY(set_head(sim, k));
    SIM_ARG(k, 2, sim->pred_buf);
    SIM_ARG(k, 3, sim->grid.neighbor_count_buf);
    SIM_ARG(k, 4, sim->grid.neighbor_buf);
    SIM_ARG(k, 5, sim->lambda_buf);
    SIM_ARG(k, 6, sim->density_buf);
    SIM_ARG(k, 7, sim->wall_scale);
    SIM_ARG(k, 8, sim->search_buf);
    SIM_ARG(k, 9, sim->grid.moved_buf);
    cl_uint record = (cl_uint)sim->lists_fresh; /* the first after a search records x* */
    SIM_ARG(k, 10, record);
    sim->lists_fresh = 0;
    cl_uint bodies = sim_has_bodies(sim);
    SIM_ARG(k, 11, bodies);
    SIM_ARG(k, 12, sim->phase_buf);
    SIM_ARG(k, 13, sim->grid.cell_id_buf); /* each particle's cell at the search */
    return launch(sim, k, prof, PBFCL_STAGE_SOLVE);
}

pbfcl_status pbfcl_sim_delta(pbfcl_sim *sim, pbfcl_profile *prof)
{
    cl_kernel k = sim->delta;
    PBFCL_TRY(set_head(sim, k));
    SIM_ARG(k, 2, sim->lambda_buf);
    SIM_ARG(k, 3, sim->grid.neighbor_count_buf);
    SIM_ARG(k, 4, sim->grid.neighbor_buf);
    SIM_ARG(k, 5, sim->q_buf);
    SIM_ARG(k, 6, sim->wall_scale);
    SIM_ARG(k, 7, sim->pred_tmp_buf); /* the density steps (reorder target, free until then) */
    SIM_ARG(k, 8, sim->omega);
    cl_uint record_step = sim->scene.solver.chebyshev_rho > 0.0f; /* plain Jacobi needs no D */
    SIM_ARG(k, 9, record_step);
    SIM_ARG(k, 10, sim->search_buf);
    SIM_ARG(k, 11, sim->grid.moved_buf);
    float half_skin = 0.5f * contact_skin(sim);
    cl_float moved_limit2 = half_skin * half_skin;
    SIM_ARG(k, 12, moved_limit2);
    sim->q_from_delta = 1;
    cl_uint bodies = sim_has_bodies(sim);
    SIM_ARG(k, 13, bodies);
    SIM_ARG(k, 14, sim->phase_buf);
    SIM_ARG(k, 15, sim->inv_mass_buf);
    SIM_ARG(k, 16, sim->grid.cell_id_buf); /* each particle's cell at the search */
    cl_uint grid_bits = sim->grid.params.grid_bits;
    SIM_ARG(k, 17, grid_bits);
    return launch(sim, k, prof, PBFCL_STAGE_SOLVE);
}

/* body_contacts: the contacts of the bodies' particles with other solids, for their bodies'
 * friction in the next shape matching (on the q and x collide is about to read). */
static pbfcl_status sim_body_contacts(pbfcl_sim *sim, cl_uint whole_lists, pbfcl_profile *prof)
{
    pbfcl_shape_match *sm = sim->bodies;
    cl_kernel k = sim->body_contacts;
    cl_uint entries = (cl_uint)sm->entries, matched = (cl_uint)sm->bodies;
    PBFCL_TRY(set_head(sim, k));
    SIM_ARG(k, 2, entries);
    SIM_ARG(k, 3, sm->entry_id_buf);
    SIM_ARG(k, 4, sim->particles.slot_buf);
    SIM_ARG(k, 5, sim->pos_buf);
    SIM_ARG(k, 6, sim->q_buf);
    SIM_ARG(k, 7, sim->grid.neighbor_near_buf);
    SIM_ARG(k, 8, sim->grid.neighbor_buf);
    SIM_ARG(k, 9, sim->grid.neighbor_count_buf);
    SIM_ARG(k, 10, sim->grid.moved_buf);
    SIM_ARG(k, 11, whole_lists);
    SIM_ARG(k, 12, sim->inv_mass_buf);
    SIM_ARG(k, 13, sm->body_range_buf);
    SIM_ARG(k, 14, matched);
    SIM_ARG(k, 15, sm->static_buf);
    SIM_ARG(k, 16, sim->grid.cell_id_buf);
    return pbfcl_cl_launch(sim->cl, k, sm->entries, sim->wg, prof, PBFCL_STAGE_SOLVE);
}

pbfcl_status pbfcl_sim_collide(pbfcl_sim *sim, pbfcl_profile *prof)
{
    cl_kernel k = sim->collide;
    /* the near lists hold every contact only for q from delta, which reports where it moved
     * particles (grid.moved_buf); a pass after another collide pass reads the whole lists */
    cl_uint whole_lists = !sim->q_from_delta;
    sim->q_from_delta = 0;
    PBFCL_TRY(set_head(sim, k));
    SIM_ARG(k, 2, sim->pos_buf);
    SIM_ARG(k, 3, sim->q_buf);
    SIM_ARG(k, 4, sim->grid.neighbor_near_buf); /* the pairs within contact range come first */
    SIM_ARG(k, 5, sim->grid.neighbor_buf);
    SIM_ARG(k, 6, sim->q_tmp_buf);
    SIM_ARG(k, 7, sim->pos_tmp_buf); /* free between reorders */
    SIM_ARG(k, 8, sim->grid.neighbor_count_buf);
    SIM_ARG(k, 9, sim->grid.moved_buf);
    SIM_ARG(k, 10, whole_lists);
    cl_uint bodies = sim_has_bodies(sim);
    SIM_ARG(k, 11, bodies);
    SIM_ARG(k, 12, sim->phase_buf);
    SIM_ARG(k, 13, sim->inv_mass_buf);
    cl_uint matched = sim_matches_shapes(sim) ? (cl_uint)sim->bodies->bodies : 0;
    SIM_ARG(k, 14, matched);
    SIM_ARG(k, 15, sim->grid.near_solid_buf); /* fluid beside a solid: the last search's stamp */
    SIM_ARG(k, 16, sim->grid.solid_stamp);
    SIM_ARG(k, 17, sim->grid.cell_id_buf);    /* each particle's cell at the search */
    if (sim->body_friction == 1 && matched) { /* the substep's first pass: the bodies' */
        PBFCL_TRY(sim_body_contacts(sim, whole_lists, prof));
        sim->body_friction = 2;
    }
    PBFCL_TRY(launch(sim, k, prof, PBFCL_STAGE_SOLVE));
    swap_buf(&sim->q_buf, &sim->q_tmp_buf);
    swap_buf(&sim->pos_buf, &sim->pos_tmp_buf);
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_apply_delta(pbfcl_sim *sim, pbfcl_profile *prof)
{
    (void)prof;                            /* no kernel: delta and collide wrote q = x* + dx */
    swap_buf(&sim->pred_buf, &sim->q_buf); /* x* = q; the old x* buffer is free for q */
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_body_slots(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim_matches_shapes(sim) || sim->slots_current) /* the sort's reorder_solids wrote them */
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_particles_slots(&sim->particles, sim->n, sim->id_buf, prof, PBFCL_STAGE_SOLVE));
    sim->slots_current = 1;
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_body_predict(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim_matches_shapes(sim))
        return PBFCL_OK;
    const pbfcl_stage stage = PBFCL_STAGE_PREDICT;
    if (!sim->slots_current) /* else the last substep's, and nothing has moved them since */
        PBFCL_TRY(pbfcl_particles_slots(&sim->particles, sim->n, sim->id_buf, prof, stage));
    return pbfcl_shape_match_predict(sim->bodies, sim->params.dt, sim->pos_buf, sim->vel_buf,
                                     sim->pred_buf, prof, stage);
}

pbfcl_status pbfcl_sim_body_velocity(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim_matches_shapes(sim))
        return PBFCL_OK;
    return pbfcl_shape_match_velocity(sim->bodies, sim->params.dt, sim->pos_buf, sim->vel_buf, prof,
                                      PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_sim_shape_match(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim_matches_shapes(sim))
        return PBFCL_OK;
    /* the static friction of the collide pass since the last projection, if there was one */
    cl_mem static_buf = sim->body_friction == 2 ? sim->bodies->static_buf : NULL;
    sim->body_friction = 0;
    const pbfcl_solver_settings *sv = &sim->scene.solver;
    return pbfcl_shape_match_project(sim->bodies, sim->pred_buf, static_buf, sv->friction_static,
                                     sv->friction_dynamic, prof, PBFCL_STAGE_SOLVE);
}

pbfcl_status pbfcl_sim_update(pbfcl_sim *sim, pbfcl_profile *prof)
{
    cl_kernel k = sim->update;
    PBFCL_TRY(set_head(sim, k));
    SIM_ARG(k, 2, sim->pos_buf);
    SIM_ARG(k, 3, sim->pred_buf);
    SIM_ARG(k, 4, sim->vel_buf);
    SIM_ARG(k, 5, sim->density_buf);
    return launch(sim, k, prof, PBFCL_STAGE_OTHER);
}

/* Sets the arguments pos (w: volume), field (vel or omega), neighbour count and list, out. */
static pbfcl_status set_field_args(pbfcl_sim *sim, cl_kernel k, cl_mem field_buf, cl_mem out_buf)
{
    PBFCL_TRY(set_head(sim, k));
    SIM_ARG(k, 2, sim->pos_buf);
    SIM_ARG(k, 3, field_buf);
    SIM_ARG(k, 4, sim->grid.neighbor_count_buf);
    SIM_ARG(k, 5, sim->grid.neighbor_buf);
    SIM_ARG(k, 6, out_buf);
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_vorticity_viscosity(pbfcl_sim *sim, pbfcl_profile *prof)
{
    const pbfcl_stage stage = PBFCL_STAGE_VORTICITY_VISCOSITY;
    if (sim->params.vorticity <= 0.0f && sim->params.viscosity <= 0.0f) {
        /* nothing to compute, but a force left from before vorticity was turned off must not
         * act on (predict applies vort_force every substep) */
        if (sim->vort_force_stale && sim->n > 0) { /* rare: a blocking write of zeros */
            void *zeros = calloc(sim->n, 16);
            if (!zeros)
                return PBFCL_ERR_OUT_OF_MEMORY;
            cl_int err = clEnqueueWriteBuffer(sim->cl->queue, sim->vort_force_buf, CL_TRUE, 0,
                                              sim->n * 16, zeros, 0, NULL, NULL);
            free(zeros);
            PBFCL_CL_CHECK(err);
            sim->vort_force_stale = 0;
        }
        return PBFCL_OK;
    }
    cl_kernel k = sim->vorticity_viscosity; /* omega_i, f_vorticity and XSPH, one pass */
    PBFCL_TRY(set_field_args(sim, k, sim->vel_buf, sim->omega_buf));
    SIM_ARG(k, 7, sim->vel_tmp_buf);
    cl_uint bodies = sim_has_bodies(sim);
    SIM_ARG(k, 8, bodies);
    SIM_ARG(k, 9, sim->phase_buf);
    SIM_ARG(k, 10, sim->inv_mass_buf);
    SIM_ARG(k, 11, sim->vort_force_buf);
    SIM_ARG(k, 12, sim->grid.near_solid_buf);
    SIM_ARG(k, 13, sim->grid.solid_stamp);
    PBFCL_TRY(launch(sim, k, prof, stage));
    sim->vort_force_stale = 1;
    swap_buf(&sim->vel_buf, &sim->vel_tmp_buf);
    return PBFCL_OK;
}

double pbfcl_sim_chebyshev_weight(int iteration, double rho, double last)
{
    const int s = PBFCL_SIM_CHEBYSHEV_DELAY;
    if (!(rho > 0.0) || iteration < s)
        return 1.0;
    if (iteration == s)
        return 2.0 / (2.0 - rho * rho);
    return 4.0 / (4.0 - rho * rho * last);
}

/* Whether solver iteration it (of iterations) ends with the collision passes: every
 * contact_interval-th iteration and always the last, so that a substep ends with its contacts
 * resolved. */
static int contact_iteration(const pbfcl_solver_settings *s, int it)
{
    return (it + 1) % s->contact_interval == 0 || it + 1 == s->iterations;
}

/* One substep of seed 001's outline. */
static pbfcl_status sim_substep(pbfcl_sim *sim, pbfcl_profile *prof)
{
    const pbfcl_solver_settings *s = &sim->scene.solver;
    PBFCL_TRY(pbfcl_sim_predict(sim, prof));      /* apply forces, predict x*, confine to box */
    PBFCL_TRY(pbfcl_sim_kinematic(sim, prof));    /* obstacles on paths: x* on the path */
    PBFCL_TRY(pbfcl_sim_body_predict(sim, prof)); /* bodies: x* of their rigid motion */
    PBFCL_TRY(pbfcl_sim_neighbours(sim, prof));   /* hash, sort, reorder, cells, neighbours */
    PBFCL_TRY(pbfcl_sim_body_slots(sim, prof));   /* where the bodies' particles are now */
    for (int it = 0; it < s->iterations; it++) {
        sim->omega = (float)pbfcl_sim_chebyshev_weight(it, s->chebyshev_rho, sim->omega);
        PBFCL_TRY(pbfcl_sim_lambda(sim, prof)); /* density, lambda_i */
        PBFCL_TRY(pbfcl_sim_delta(sim, prof));  /* delta x_i with s_corr (Chebyshev-weighted) */
        for (int st = 0; contact_iteration(s, it) && st < s->stabilization_iterations; st++)
            PBFCL_TRY(pbfcl_sim_collide(sim, prof)); /* collisions: x and x* */
        PBFCL_TRY(pbfcl_sim_apply_delta(sim, prof)); /* x* += delta x */
        PBFCL_TRY(pbfcl_sim_shape_match(sim, prof)); /* bodies: x* towards their goals */
    }
    if (s->iterations == 0)
        PBFCL_TRY(pbfcl_sim_shape_match(sim, prof)); /* bodies keep their shape regardless */
    sim->omega = 1.0f;                               /* a delta called on its own is plain */
    PBFCL_TRY(pbfcl_sim_update(sim, prof));          /* v = (x* - x) / dt, x = x* */
    PBFCL_TRY(pbfcl_sim_body_velocity(sim, prof));   /* bodies: v of their rigid motion */
    return pbfcl_sim_vorticity_viscosity(sim, prof); /* omega, f_vorticity, XSPH viscosity */
}

/* The substeps of the next frame from the bounds of the last one (a CFL condition): with
 * v the fastest particle, g = |gravity| and H the fluid's extent along gravity, the speed
 * u = max(v + g dt, sqrt(2 g H)) may carry a particle at most solver.cfl * h per substep.
 * The first term is the usual CFL number; the second keeps the solver's signal speed ahead
 * of the fluid's free-fall speed, or the iterations cannot hold a column of H / 2r particles
 * and it compresses until neighbours pile up. Plain Jacobi iterations spread a correction
 * like a diffusion (about h sqrt(iterations) per substep) and needed cfl 0.5; Chebyshev
 * acceleration spreads it about h per iteration and holds the column at cfl 1 with half the
 * substeps (docs/PERFORMANCE.md, "Chebyshev-accelerated iterations"). Both
 * scale as 1/h: halving r doubles the substeps, as it halves the time step of any explicit
 * particle method. A scene's own substeps are the minimum. One 12-byte read per frame. */
static pbfcl_status choose_substeps(pbfcl_sim *sim, int *out)
{
    const pbfcl_solver_settings *v = &sim->scene.solver;
    float b[3];
    PBFCL_TRY(pbfcl_particles_read_bounds(&sim->particles, b));
    double reach = 0.0, g = 0.0;
    for (int a = 0; a < 3; a++) {
        double e = (double)sim->params.box_max[a] - sim->params.box_min[a];
        reach += e * e;
        g += (double)sim->gravity.s[a] * sim->gravity.s[a];
    }
    reach = (float)sqrt(reach);
    g = sqrt(g);
    double height = fmax(0.0, (double)b[1] + b[2] - 2.0 * reach);
    double u = fmax(b[0] + g * v->dt, sqrt(2.0 * g * height));
    double want = ceil(v->dt * u / (v->cfl * sim->params.h));
    int most = v->substeps > PBFCL_SIM_MAX_SUBSTEPS ? v->substeps : PBFCL_SIM_MAX_SUBSTEPS;
    *out = want > most ? most : (want < v->substeps ? v->substeps : (int)want);
    return PBFCL_OK;
}

/* Sets the substep of the parameters to dt / substeps (uploaded when it changes), and the XSPH
 * blend of a substep to the scene's c times its substeps / substeps: XSPH is a blend per
 * application, so with a fixed c the adaptive substeps made the fluid more viscous the finer
 * it was (at 1M, 11 substeps blended 43 % per frame instead of the 14 % of 3). */
static pbfcl_status set_substeps(pbfcl_sim *sim, int substeps)
{
    if (substeps == sim->substeps)
        return PBFCL_OK;
    sim->substeps = substeps;
    sim->params.dt = (float)(sim->scene.solver.dt / substeps);
    sim->params.inv_dt = 1.0f / sim->params.dt;
    sim->params.viscosity =
        (float)(sim->scene.solver.viscosity * sim->scene.solver.substeps / substeps);
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->params_buf, CL_TRUE, 0,
                                        sizeof sim->params, &sim->params, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_step(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (sim->n == 0)
        return PBFCL_OK; /* nothing to move (all particles removed, or none added yet) */
    int substeps;
    PBFCL_TRY(sim->method->choose_substeps(sim, &substeps));
    PBFCL_TRY(set_substeps(sim, substeps));
    sim->slots_current = 0; /* particles or ids may have changed since the last step */
    for (int s = 0; s < substeps; s++) {
        PBFCL_TRY(sim->method->substep(sim, prof));
        /* submit as we go: the device starts on a substep while the next is enqueued, instead
         * of idling until the frame's last launch (choose_substeps drained the queue) */
        PBFCL_CL_CHECK(clFlush(sim->cl->queue));
    }
    return enqueue_bounds(sim, prof);
}

int pbfcl_sim_substeps(const pbfcl_sim *sim)
{
    return sim->substeps;
}

/* ---- access ---------------------------------------------------------------------------- */

size_t pbfcl_sim_count(const pbfcl_sim *sim)
{
    return sim->n;
}

const pbfcl_scene *pbfcl_sim_scene(const pbfcl_sim *sim)
{
    return &sim->scene;
}

const pbfcl_pbf_params *pbfcl_sim_params(const pbfcl_sim *sim)
{
    return &sim->params;
}

unsigned pbfcl_sim_max_neighbors(const pbfcl_sim *sim)
{
    (void)sim;
    return PBFCL_SIM_MAX_NEIGHBORS;
}

/* Reads components first..first+count-1 of every float4 of buf, packed. */
static pbfcl_status read_components(pbfcl_sim *sim, cl_mem buf, int first, int count, float *out)
{
    size_t n = sim->n;
    if (n == 0)
        return PBFCL_OK;
    float *tmp = malloc(n * 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = clEnqueueReadBuffer(sim->cl->queue, buf, CL_TRUE, 0, n * 16, tmp, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        for (size_t i = 0; i < n; i++)
            memcpy(out + count * i, tmp + 4 * i + first, (size_t)count * sizeof(float));
    free(tmp);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clEnqueueReadBuffer", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

/* Reads the xyz of a float4 buffer. */
static pbfcl_status read_float3(pbfcl_sim *sim, cl_mem buf, float *out3)
{
    return read_components(sim, buf, 0, 3, out3);
}

static pbfcl_status read_plain(pbfcl_sim *sim, cl_mem buf, size_t bytes, void *out)
{
    if (bytes == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(sim->cl->queue, buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_read(pbfcl_sim *sim, float *pos3, float *vel3, float *density)
{
    if (pos3)
        PBFCL_TRY(read_float3(sim, sim->pos_buf, pos3));
    if (vel3)
        PBFCL_TRY(read_float3(sim, sim->vel_buf, vel3));
    if (density)
        PBFCL_TRY(read_plain(sim, sim->density_buf, sim->n * 4, density));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_read_vorticity(pbfcl_sim *sim, float *omega3, float *force3, float *strength)
{
    if (strength) /* V |omega| for the next substep's eta rides in vel.w */
        PBFCL_TRY(read_components(sim, sim->vel_buf, 3, 1, strength));
    if (omega3)
        PBFCL_TRY(read_float3(sim, sim->omega_buf, omega3));
    if (force3)
        PBFCL_TRY(read_float3(sim, sim->vort_force_buf, force3));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_read_solver(pbfcl_sim *sim, float *pred3, float *lambda, float *delta3,
                                   unsigned *neighbor_count, unsigned *neighbors)
{
    size_t n = sim->n;
    if (pred3)
        PBFCL_TRY(read_float3(sim, sim->pred_buf, pred3));
    if (lambda) /* lambda_buf holds (x*, lambda) */
        PBFCL_TRY(read_components(sim, sim->lambda_buf, 3, 1, lambda));
    if (delta3) { /* dx = q - x* */
        float *x3 = malloc(n * 3 * sizeof *x3);
        pbfcl_status st = x3 ? read_float3(sim, sim->q_buf, delta3) : PBFCL_ERR_OUT_OF_MEMORY;
        if (st == PBFCL_OK)
            st = read_float3(sim, sim->pred_buf, x3);
        for (size_t i = 0; st == PBFCL_OK && i < 3 * n; i++)
            delta3[i] -= x3[i];
        free(x3);
        PBFCL_TRY(st);
    }
    if (neighbor_count)
        PBFCL_TRY(read_plain(sim, sim->grid.neighbor_count_buf, n * 4, neighbor_count));
    if (neighbors)
        PBFCL_TRY(
            read_plain(sim, sim->grid.neighbor_buf, n * 4 * PBFCL_SIM_MAX_NEIGHBORS, neighbors));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_stats_compute(pbfcl_sim *sim, pbfcl_sim_stats *out)
{
    pbfcl_particles_material m;
    for (int a = 0; a < 3; a++) { /* the walls predict, delta and collide clamp to */
        m.wall_lo[a] = sim->params.box_min[a] + sim->params.radius;
        m.wall_hi[a] = sim->params.box_max[a] - sim->params.radius;
    }
    m.mass = sim->params.mass;
    m.rest_density = sim->params.rest_density;
    pbfcl_particle_state st = particle_state(sim);
    PBFCL_TRY(pbfcl_particles_stats(&sim->particles, &st, &m, out));
    out->substeps = sim->substeps;
    out->unstable = out->nan > 0 || out->max_speed > pbfcl_scene_max_speed(&sim->scene);
    return pbfcl_grid_read_overflow(&sim->grid, &out->neighbor_overflow);
}

pbfcl_status pbfcl_sim_copy_positions(pbfcl_sim *sim, cl_mem dst_buf)
{
    pbfcl_particle_state st = particle_state(sim);
    return pbfcl_particles_copy_positions(&sim->particles, &st, dst_buf);
}

void pbfcl_sim_set_chebyshev_weight(pbfcl_sim *sim, float omega)
{
    sim->omega = omega;
}

void pbfcl_sim_set_gravity(pbfcl_sim *sim, const float g[3])
{
    sim->gravity = (cl_float4){{g[0], g[1], g[2], 0.0f}};
    for (int a = 0; a < 3; a++)
        sim->scene.gravity[a] = g[a];
}

void pbfcl_sim_set_push(pbfcl_sim *sim, const float origin[3], const float dir[3],
                        const float push[3], float radius, float strength)
{
    double len = sqrt((double)dir[0] * dir[0] + (double)dir[1] * dir[1] + (double)dir[2] * dir[2]);
    double plen =
        sqrt((double)push[0] * push[0] + (double)push[1] * push[1] + (double)push[2] * push[2]);
    if (strength == 0.0f || radius <= 0.0f || len == 0.0 || plen == 0.0) {
        sim->push = (cl_float4){{0, 0, 0, 0}};
        return;
    }
    double a = strength / plen;
    sim->push_origin = (cl_float4){{origin[0], origin[1], origin[2], 0.0f}};
    sim->push_dir =
        (cl_float4){{(float)(dir[0] / len), (float)(dir[1] / len), (float)(dir[2] / len), 0.0f}};
    sim->push =
        (cl_float4){{(float)(push[0] * a), (float)(push[1] * a), (float)(push[2] * a), radius}};
}

/* ---- particles in and out: ids, adding, removing, writing, changing the scene ---------- */

pbfcl_status pbfcl_sim_read_ids(pbfcl_sim *sim, unsigned *ids)
{
    return read_plain(sim, sim->id_buf, sim->n * 4, ids);
}

pbfcl_status pbfcl_sim_read_phases(pbfcl_sim *sim, unsigned *phases, float *inv_mass)
{
    if (phases)
        PBFCL_TRY(read_plain(sim, sim->phase_buf, sim->n * 4, phases));
    if (inv_mass)
        PBFCL_TRY(read_plain(sim, sim->inv_mass_buf, sim->n * 4, inv_mass));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_read_body_contacts(pbfcl_sim *sim, float *contacts8)
{
    if (!sim_matches_shapes(sim))
        return PBFCL_ERR_UNSUPPORTED;
    return read_plain(sim, sim->bodies->static_buf, sim->n * 32, contacts8);
}

pbfcl_status pbfcl_sim_write_phases(pbfcl_sim *sim, const unsigned *phases, const float *inv_mass)
{
    cl_command_queue q = sim->cl->queue;
    size_t bytes = sim->n * 4;
    if (phases && bytes)
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(q, sim->phase_buf, CL_TRUE, 0, bytes, phases, 0, NULL, NULL));
    if (inv_mass && bytes)
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(q, sim->inv_mass_buf, CL_TRUE, 0, bytes, inv_mass, 0, NULL, NULL));
    return PBFCL_OK;
}

size_t pbfcl_sim_capacity(const pbfcl_sim *sim)
{
    return sim->capacity;
}

pbfcl_status pbfcl_sim_append(pbfcl_sim *sim, const float *pos3, const float *vel3, size_t k)
{
    if (k > sim->capacity - sim->n) {
        pbfcl_errorf("adding %zu particles to %zu exceeds the capacity of %zu", k, sim->n,
                     sim->capacity);
        return PBFCL_ERR_CAPACITY;
    }
    PBFCL_TRY(upload_particles(sim, sim->n, k, pos3, vel3));
    sim->n += k;
    sim->slots_current = 0; /* the new ids have no slots yet */
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_compact(pbfcl_sim *sim, const unsigned *keep_slots, size_t m,
                               const unsigned *new_ids)
{
    if (m > sim->n)
        return PBFCL_ERR_BAD_ARGUMENT;
    cl_command_queue q = sim->cl->queue;
    if (m > 0) {
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(q, sim->grid.index_buf, CL_TRUE, 0, m * 4, keep_slots,
                                            0, NULL, NULL));
        sim->n = m;
        PBFCL_TRY(sim_reorder(sim, false, NULL)); /* gathers every per-particle state buffer */
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(q, sim->id_buf, CL_TRUE, 0, m * 4, new_ids, 0, NULL, NULL));
    }
    sim->n = m;
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_write(pbfcl_sim *sim, const float *pos3, const float *vel3)
{
    size_t n = sim->n;
    if (n == 0)
        return PBFCL_OK;
    cl_float4 *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_command_queue q = sim->cl->queue;
    pbfcl_status st = PBFCL_OK;
    const float *src[] = {pos3, pos3, vel3}; /* x and x* both take the positions */
    cl_mem dst[] = {sim->pos_buf, sim->pred_buf, sim->vel_buf};
    for (int b = 0; b < 3; b++) {
        if (!src[b] || !dst[b]) /* sph has no x* */
            continue;
        pack_float3(src[b], n, tmp);
        PBFCL_CL_TRY(st, clEnqueueWriteBuffer(q, dst[b], CL_TRUE, 0, n * 16, tmp, 0, NULL, NULL),
                     done);
    }
done:
    free(tmp);
    PBFCL_TRY(st);
    return enqueue_bounds(sim, NULL);
}

/* True if the grid built for a and b is the same (origin, cell size, bits). */
static bool same_grid(const pbfcl_grid_params *a, const pbfcl_grid_params *b)
{
    return a->grid_bits == b->grid_bits && a->cell_size == b->cell_size &&
           a->origin[0] == b->origin[0] && a->origin[1] == b->origin[1] &&
           a->origin[2] == b->origin[2];
}

pbfcl_status pbfcl_sim_set_scene(pbfcl_sim *sim, const pbfcl_scene *scene)
{
    pbfcl_pbf_params p;
    pbfcl_grid_params gp;
    if (scene->solver.method != sim->scene.solver.method) { /* its buffers and kernels differ */
        pbfcl_errorf("solver.method cannot change on a running solver (%s to %s); create a new "
                     "solver with solver.method %s",
                     pbfcl_method_name(sim->scene.solver.method),
                     pbfcl_method_name(scene->solver.method),
                     pbfcl_method_name(scene->solver.method));
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_sim_constants(scene, sim->method, &p));
    PBFCL_TRY(grid_params_for(scene, &p, &gp));
    if (!same_grid(&gp, &sim->grid.params)) { /* a new box or kernel radius: a new grid */
        PBFCL_CL_CHECK(clFinish(sim->cl->queue));
        pbfcl_grid grid;
        memset(&grid, 0, sizeof grid);
        pbfcl_status st =
            pbfcl_grid_create(&grid, sim->cl, &gp, sim->capacity, PBFCL_SIM_MAX_NEIGHBORS);
        if (st != PBFCL_OK) {
            pbfcl_grid_destroy(&grid);
            return st;
        }
        pbfcl_grid_destroy(&sim->grid);
        sim->grid = grid;
    }
    sim->scene = *scene;
    sim->params = p;
    sim->wall_scale = (float)pbfcl_pbf_wall_scale(&sim->params);
    pbfcl_sim_set_gravity(sim, scene->gravity);
    sim->substeps = 0; /* set_substeps uploads the parameters at the next step */
    PBFCL_TRY(set_substeps(sim, scene->solver.substeps));
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_bounds(pbfcl_sim *sim, float out[3])
{
    PBFCL_TRY(enqueue_bounds(sim, NULL));
    return pbfcl_particles_read_bounds(&sim->particles, out);
}

/* ---- the method's own buffers (solver_method.h) ---------------------------------------- */

pbfcl_status pbfcl_sim_method_buffers_make(pbfcl_sim *sim, void *state)
{
    for (int b = 0; b < sim->method->buffer_count; b++) {
        const pbfcl_method_buffer *d = &sim->method->buffers[b];
        cl_mem *buf = (cl_mem *)((char *)state + d->offset);
        size_t bytes = sim->capacity * d->elem;
        PBFCL_TRY(pbfcl_cl_buffer(sim->cl, CL_MEM_READ_WRITE, bytes, d->name, buf));
        static const cl_uint zero = 0;
        PBFCL_CL_CHECK(
            clEnqueueFillBuffer(sim->cl->queue, *buf, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
    }
    return PBFCL_OK;
}

void pbfcl_sim_method_buffers_release(pbfcl_sim *sim, void *state)
{
    for (int b = 0; b < sim->method->buffer_count; b++)
        pbfcl_cl_release_buffer((cl_mem *)((char *)state + sim->method->buffers[b].offset));
}

/* ---- the PBF method behind the solver interface (solver_method.h) ---------------------- */

/* pbf's compute_density: neighbour lists of x* (= x before a step) and one lambda pass. */
static pbfcl_status pbf_compute_density(pbfcl_sim *sim)
{
    PBFCL_TRY(pbfcl_sim_neighbours(sim, NULL));
    return pbfcl_sim_lambda(sim, NULL);
}

static const pbfcl_stage pbf_stages[] = {
    PBFCL_STAGE_PREDICT, PBFCL_STAGE_HASH,  PBFCL_STAGE_SORT,
    PBFCL_STAGE_REORDER, PBFCL_STAGE_CELLS, PBFCL_STAGE_NEIGHBOURS,
    PBFCL_STAGE_SOLVE,   PBFCL_STAGE_OTHER, PBFCL_STAGE_VORTICITY_VISCOSITY};

static const pbfcl_solver_method pbf_method = {
    .name = "pbf",
    .build_config = pbf_build_config,
    .create = build_kernels,
    .destroy = pbf_destroy,
    .substep = sim_substep,
    .choose_substeps = choose_substeps,
    .compute_density = pbf_compute_density,
    .derive = NULL,
    .stages = pbf_stages,
    .stage_count = (int)(sizeof pbf_stages / sizeof pbf_stages[0]),
};

const pbfcl_solver_method *pbfcl_solver_pbf(void)
{
    return &pbf_method;
}

/* ---- bodies and paths: made at their first use ------------------------------------------ */

/* Builds the shape matching of the bodies if the simulation has none yet. */
static pbfcl_status sim_bodies_make(pbfcl_sim *sim)
{
    if (sim->bodies)
        return PBFCL_OK;
    if (!(sim->bodies = calloc(1, sizeof *sim->bodies)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_mem slot_buf; /* the particles' id-to-slot map, which the bodies' entries read */
    pbfcl_status st = pbfcl_particles_slot_map(&sim->particles, &slot_buf);
    if (st == PBFCL_OK)
        st = pbfcl_shape_match_create(sim->bodies, sim->cl, sim->capacity, slot_buf);
    if (st != PBFCL_OK) {
        pbfcl_shape_match_destroy(sim->bodies);
        free(sim->bodies);
        sim->bodies = NULL;
    }
    return st;
}

/* Builds the kinematic paths if the simulation has none yet. */
static pbfcl_status sim_paths_make(pbfcl_sim *sim)
{
    if (sim->paths)
        return PBFCL_OK;
    if (!(sim->paths = calloc(1, sizeof *sim->paths)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = pbfcl_kinematic_create(sim->paths, sim->cl);
    if (st != PBFCL_OK) {
        pbfcl_kinematic_destroy(sim->paths);
        free(sim->paths);
        sim->paths = NULL;
    }
    return st;
}

/* ---- checkpoints: the state that carries from one frame to the next -------------------- */

/* The per-particle buffers a checkpoint carries are those sim_buffers[] marks SIM_SAVED (of
 * the simulation's method), each a section of its name; beside them, the simulation's buffers
 * of fixed size whose contents carry across frames. */
typedef struct sim_fixed_state {
    const char *name;
    size_t offset; /* of the cl_mem in struct pbfcl_sim */
    size_t bytes;
} sim_fixed_state;

static const sim_fixed_state sim_fixed_states[] = {
    {"substep_bounds", offsetof(struct pbfcl_sim, particles.bounds_buf), 3 * sizeof(cl_uint)},
    {"largest_acceleration", offsetof(struct pbfcl_sim, accel_max_buf), sizeof(cl_uint)},
};
#define SIM_FIXED_STATE_COUNT (sizeof sim_fixed_states / sizeof sim_fixed_states[0])

/* A section of the saved state: a saved buffer of sim_buffers[] (k < SIM_BUFFER_COUNT) or a
 * fixed one; false if the simulation's method has no such buffer or does not save it. */
static bool state_section(const pbfcl_sim *sim, size_t k, const char **name, size_t *offset,
                          size_t *bytes)
{
    if (k >= SIM_BUFFER_COUNT) {
        const sim_fixed_state *f = &sim_fixed_states[k - SIM_BUFFER_COUNT];
        *name = f->name;
        *offset = f->offset;
        *bytes = f->bytes;
        return true;
    }
    const sim_buffer *d = &sim_buffers[k];
    *name = d->name;
    *offset = d->field;
    *bytes = d->elem * sim->n;
    return d->saved == SIM_SAVED && buffer_used(sim->scene.solver.method, d);
}

#define SIM_STATE_SECTION_COUNT (SIM_BUFFER_COUNT + SIM_FIXED_STATE_COUNT)

/* The host-side state that carries across frames (the "host" section). */
typedef struct sim_host_state {
    pbfcl_pbf_params params; /* dt and viscosity follow the last frame's substeps */
    cl_float4 gravity, push_origin, push_dir, push;
    cl_int substeps; /* substeps of the last frame */
    cl_int pad;
    cl_ulong statics; /* particles of inverse mass 0 */
} sim_host_state;

pbfcl_status pbfcl_sim_state_save(pbfcl_sim *sim, pbfcl_state_put put, void *ctx)
{
    sim_host_state h;
    memset(&h, 0, sizeof h);
    h.params = sim->params;
    h.gravity = sim->gravity;
    h.push_origin = sim->push_origin;
    h.push_dir = sim->push_dir;
    h.push = sim->push;
    h.substeps = sim->substeps;
    h.statics = sim->statics;
    PBFCL_TRY(put(ctx, "host", &h, sizeof h));
    size_t largest = 16 * sim->n + 16;
    void *tmp = malloc(largest);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; k < SIM_STATE_SECTION_COUNT && st == PBFCL_OK; k++) {
        const char *name;
        size_t offset, bytes;
        if (!state_section(sim, k, &name, &offset, &bytes))
            continue; /* scratch, or a buffer of the other method */
        st = read_plain(sim, *sim_buf(sim, offset), bytes, tmp);
        if (st == PBFCL_OK)
            st = put(ctx, name, tmp, bytes);
    }
    free(tmp);
    PBFCL_TRY(st);
    PBFCL_TRY(pbfcl_shape_match_state_save(sim->bodies, put, ctx)); /* rest shapes, poses */
    return pbfcl_kinematic_state_save(sim->paths, put, ctx);        /* paths and their clock */
}

/* Restores the bodies and the paths (built first if the state has some). */
static pbfcl_status sim_state_load_parts(pbfcl_sim *sim, pbfcl_state_get get, void *ctx)
{
    size_t bodies = 0, path_entries = 0;
    PBFCL_TRY(pbfcl_shape_match_state_count(get, ctx, &bodies));
    PBFCL_TRY(pbfcl_kinematic_state_count(get, ctx, &path_entries));
    if (bodies > 0)
        PBFCL_TRY(sim_bodies_make(sim));
    if (path_entries > 0)
        PBFCL_TRY(sim_paths_make(sim));
    if (sim->bodies)
        PBFCL_TRY(pbfcl_shape_match_state_load(sim->bodies, get, ctx));
    return sim->paths ? pbfcl_kinematic_state_load(sim->paths, get, ctx) : PBFCL_OK;
}

pbfcl_status pbfcl_sim_state_load(pbfcl_sim *sim, pbfcl_state_get get, void *ctx)
{
    sim->slots_current = 0;
    sim_host_state h;
    PBFCL_TRY(get(ctx, "host", &h, sizeof h));
    void *tmp = malloc(16 * sim->n + 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; k < SIM_STATE_SECTION_COUNT && st == PBFCL_OK; k++) {
        const char *name;
        size_t offset, bytes;
        if (!state_section(sim, k, &name, &offset, &bytes))
            continue; /* scratch, or a buffer of the other method */
        st = get(ctx, name, tmp, bytes);
        if (st != PBFCL_OK)
            break;
        if (offset == SIM_BUF(phase_buf)) /* a checkpoint's from before the phases' flags */
            for (size_t i = 0; i < bytes / 4; i++)
                ((cl_uint *)tmp)[i] = pbfcl_sim_phase_upgrade(((cl_uint *)tmp)[i]);
        cl_int err = clEnqueueWriteBuffer(sim->cl->queue, *sim_buf(sim, offset), CL_TRUE, 0, bytes,
                                          tmp, 0, NULL, NULL);
        if (err != CL_SUCCESS) {
            pbfcl_report_cl(err, "clEnqueueWriteBuffer", __FILE__, __LINE__);
            st = PBFCL_ERR_OPENCL;
        }
    }
    free(tmp);
    PBFCL_TRY(st);
    PBFCL_TRY(sim_state_load_parts(sim, get, ctx));
    sim->statics = (size_t)h.statics;
    sim->params = h.params;
    sim->gravity = h.gravity;
    for (int a = 0; a < 3; a++)
        sim->scene.gravity[a] = h.gravity.s[a];
    sim->push_origin = h.push_origin;
    sim->push_dir = h.push_dir;
    sim->push = h.push;
    sim->substeps = h.substeps;
    sim->vort_force_stale = 1; /* the loaded forces */
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->params_buf, CL_TRUE, 0,
                                        sizeof sim->params, &sim->params, 0, NULL, NULL));
    return PBFCL_OK;
}

/* ---- the current state's density -------------------------------------------------------- */

pbfcl_status pbfcl_sim_compute_density(pbfcl_sim *sim)
{
    return sim->method->compute_density(sim);
}

/* ---- checks without a device ----------------------------------------------------------- */

pbfcl_status pbfcl_sim_check_scene_with(const pbfcl_scene *scene, const pbfcl_solver_method *m,
                                        size_t n)
{
    pbfcl_pbf_params p;
    pbfcl_grid_params g;
    if (n == 0 || n > PBFCL_SIM_MAX_PARTICLES) {
        pbfcl_errorf("a simulation needs 1 to %u particles (got %zu); change the particle count "
                     "or radius",
                     (unsigned)PBFCL_SIM_MAX_PARTICLES, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_sim_constants(scene, m, &p));
    return grid_params_for(scene, &p, &g);
}

/* ---- bodies: shape-matched particles (shape_match.c) ------------------------------------ */

/* Gives the particles of the entries (by id) the phase of their body and its inverse mass,
 * every other particle the fluid's. */
static pbfcl_status write_body_phases(pbfcl_sim *sim, size_t entries, const unsigned *entry_id,
                                      const unsigned *entry_body, const float *body_inv_mass)
{
    size_t n = sim->n;
    unsigned *ids = malloc((n ? n : 1) * sizeof *ids), *phase = malloc((n ? n : 1) * 4);
    unsigned *slot = malloc((n ? n : 1) * sizeof *slot);
    float *w = malloc((n ? n : 1) * sizeof *w);
    pbfcl_status st = ids && phase && slot && w ? read_plain(sim, sim->id_buf, n * 4, ids)
                                                : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        slot[ids[i]] = (unsigned)i;
        phase[i] = PBFCL_SIM_PHASE_FLUID;
        w[i] = 1.0f;
    }
    for (size_t e = 0; st == PBFCL_OK && e < entries; e++) {
        phase[slot[entry_id[e]]] = entry_body[e] + 1;
        w[slot[entry_id[e]]] = body_inv_mass[entry_body[e]];
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, phase, w);
    if (st == PBFCL_OK)
        sim->statics = 0;
    free(ids);
    free(phase);
    free(slot);
    free(w);
    return st;
}

pbfcl_status pbfcl_sim_set_bodies(pbfcl_sim *sim, size_t bodies, size_t entries,
                                  const unsigned *entry_id, const unsigned *entry_body,
                                  const float *rest3, const float *stiffness, const float *inv_mass)
{
    if (bodies > 0 && sim->scene.solver.method != PBFCL_METHOD_PBF) { /* shape matching is pbf's */
        pbfcl_errorf("bodies need solver.method pbf (this solver runs %s); create the solver with "
                     "solver.method pbf, or keep every particle fluid",
                     pbfcl_method_name(sim->scene.solver.method));
        return PBFCL_ERR_UNSUPPORTED;
    }
    for (size_t e = 0; e < entries; e++)
        if (entry_id[e] >= sim->n) {
            pbfcl_errorf("body particle %zu is particle %u of %zu", e, entry_id[e], sim->n);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    for (size_t b = 0; b < bodies; b++)
        if (!(inv_mass[b] > 0.0f) || !isfinite(inv_mass[b])) {
            pbfcl_errorf("body %zu has relative inverse mass %g; it must be a positive number", b,
                         inv_mass[b]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    if (!sim->bodies && bodies == 0)
        return PBFCL_OK;
    PBFCL_TRY(sim_bodies_make(sim));
    sim->slots_current = 0; /* a first set makes the slot table, not written yet */
    PBFCL_TRY(pbfcl_shape_match_set_bodies(sim->bodies, bodies, entries, entry_id, entry_body,
                                           rest3, stiffness));
    return write_body_phases(sim, entries, entry_id, entry_body, inv_mass);
}

size_t pbfcl_sim_body_count(const pbfcl_sim *sim)
{
    return sim->bodies ? sim->bodies->bodies : 0;
}

pbfcl_status pbfcl_sim_set_body(pbfcl_sim *sim, size_t b, float stiffness, float inv_mass)
{
    if (b >= pbfcl_sim_body_count(sim) || !(inv_mass > 0.0f) || !isfinite(inv_mass)) {
        pbfcl_errorf("body %zu of %zu with relative inverse mass %g: give an existing body and "
                     "a positive inverse mass",
                     b, pbfcl_sim_body_count(sim), inv_mass);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_shape_match_set_stiffness(sim->bodies, b, stiffness));
    size_t n = sim->n;
    unsigned *phase = malloc(n * sizeof *phase);
    float *w = malloc(n * sizeof *w);
    pbfcl_status st = phase && w ? pbfcl_sim_read_phases(sim, phase, w) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (PBFCL_SIM_PHASE_BODY_OF(phase[i]) == b)
            w[i] = inv_mass;
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, NULL, w);
    free(phase);
    free(w);
    return st;
}

pbfcl_status pbfcl_sim_set_static(pbfcl_sim *sim, size_t count, const unsigned *ids)
{
    if (count > 0 && sim->scene.solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("static particles (obstacles) need solver.method pbf (this solver runs %s)",
                     pbfcl_method_name(sim->scene.solver.method));
        return PBFCL_ERR_UNSUPPORTED;
    }
    size_t n = sim->n;
    unsigned *phase = malloc((n ? n : 1) * sizeof *phase), *id = malloc((n ? n : 1) * 4);
    unsigned char *mark = calloc(n ? n : 1, 1);
    float *w = malloc((n ? n : 1) * sizeof *w);
    pbfcl_status st =
        phase && id && mark && w ? pbfcl_sim_read_phases(sim, phase, w) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; st == PBFCL_OK && k < count; k++) {
        if (ids[k] >= n) {
            pbfcl_errorf("static particle %zu has id %u, beyond the %zu particles", k, ids[k], n);
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else {
            mark[ids[k]] = 1;
        }
    }
    if (st == PBFCL_OK)
        st = read_plain(sim, sim->id_buf, n * 4, id);
    size_t statics = 0;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        if (mark[id[i]]) {
            if (phase[i] != PBFCL_SIM_PHASE_FLUID && phase[i] != PBFCL_SIM_PHASE_STATIC) {
                pbfcl_errorf("particle id %u belongs to body %u and cannot be static", id[i],
                             PBFCL_SIM_PHASE_BODY_OF(phase[i]));
                st = PBFCL_ERR_BAD_ARGUMENT;
                break;
            }
            phase[i] = PBFCL_SIM_PHASE_STATIC;
            w[i] = 0.0f;
            statics++;
        } else if (phase[i] == PBFCL_SIM_PHASE_STATIC) {
            phase[i] = PBFCL_SIM_PHASE_FLUID;
            w[i] = 1.0f;
        }
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, phase, w);
    if (st == PBFCL_OK)
        sim->statics = statics;
    free(phase);
    free(id);
    free(mark);
    free(w);
    return st;
}

size_t pbfcl_sim_static_count(const pbfcl_sim *sim)
{
    return sim->statics;
}

pbfcl_status pbfcl_sim_remap_body_ids(pbfcl_sim *sim, const unsigned *new_id)
{
    sim->slots_current = 0;
    if (sim->paths)
        PBFCL_TRY(pbfcl_kinematic_remap_ids(sim->paths, new_id));
    return sim->bodies ? pbfcl_shape_match_remap_ids(sim->bodies, new_id) : PBFCL_OK;
}

pbfcl_status pbfcl_sim_set_paths(pbfcl_sim *sim, size_t paths, const pbfcl_kinematic_path *path,
                                 size_t entries, const unsigned *entry_id,
                                 const unsigned *entry_path, const float *offset3)
{
    for (size_t e = 0; e < entries; e++)
        if (entry_id[e] >= sim->n) {
            pbfcl_errorf("path particle %zu is particle %u of %zu", e, entry_id[e], sim->n);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    if (!sim->paths && (paths == 0 || entries == 0))
        return PBFCL_OK;
    PBFCL_TRY(sim_paths_make(sim));
    return pbfcl_kinematic_set(sim->paths, paths, path, entries, entry_id, entry_path, offset3);
}

pbfcl_status pbfcl_sim_kinematic(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim->paths)
        return PBFCL_OK;
    return pbfcl_kinematic_move(sim->paths, sim->n, sim->params.dt, sim->phase_buf, sim->id_buf,
                                sim->pred_buf, prof, PBFCL_STAGE_PREDICT);
}

pbfcl_status pbfcl_sim_read_bodies(pbfcl_sim *sim, float *com3, float *quat4)
{
    return sim->bodies ? pbfcl_shape_match_read(sim->bodies, com3, quat4) : PBFCL_OK;
}
