/* The PBF method behind the solver interface (solver_method.h): its state, kernels and
 * per-particle buffers, its constants, its substep (seed 001's outline, one call per stage)
 * and its time step. The stages are pbf_stages.c's and the constraint projections'. */
#include "pbf/constraint.h"
#include "pbf/distance.h"
#include "pbf/pbf_colliders.h"
#include "pbf/wind.h"
#include "pbf/inflatable.h"
#include "pbf/multilevel.h"
#include "pbf/attach.h"

#include "runtime/programs.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
#define PBFCL_PBF_CONTACT_SKIN 0.75f

/* Adaptive substeps (a CFL condition, see choose_substeps): at most PBFCL_PBF_MAX_SUBSTEPS
 * (or the scene's count if larger). */
#define PBFCL_PBF_MAX_SUBSTEPS 64

#define PBF_STATE(f) offsetof(pbf_state, f)

/* pbf's own per-particle buffers (solver_method.h), each once; the constraint kinds declare
 * theirs (constraint.h). */
static const pbfcl_particle_buffer pbf_buffers[] = {
    /* predict reads the force before the sort, vorticity_viscosity writes it after: at 1M
     * particles on an H200 the sort's copy cost 13 us a substep for nothing */
    {"vorticity_forces", 16, PBF_STATE(vort_force_buf), PBF_STATE(vort_force_tmp_buf),
     PBFCL_INIT_ZERO, PBFCL_SORT_SKIP, PBFCL_SAVED, false},
    {"corrected_positions", 16, PBF_STATE(q_buf), PBFCL_NOT_REORDERED, PBFCL_INIT_ZERO,
     PBFCL_SORT_CARRY, PBFCL_SAVED, false},
    {"vorticity", 16, PBF_STATE(omega_buf), PBFCL_NOT_REORDERED, PBFCL_INIT_ZERO, PBFCL_SORT_CARRY,
     PBFCL_SAVED, false},
};

/* ---- helpers of pbf/ --------------------------------------------------------------------- */

pbf_state *pbf_view(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    pbfcl_sim_view_get(sim, v);
    return *v->method_state;
}

pbfcl_status pbf_launch(const pbfcl_sim_view *v, cl_kernel k, pbfcl_profile *prof,
                        pbfcl_stage stage)
{
    return pbfcl_cl_launch(v->cl, k, v->n, v->wg, prof, stage);
}

pbfcl_status pbf_set_head(const pbfcl_sim_view *v, cl_kernel k)
{
    cl_uint n = (cl_uint)v->n;
    PBF_ARG(k, 0, v->params_buf);
    PBF_ARG(k, 1, n);
    return PBFCL_OK;
}

float pbf_contact_skin(const pbfcl_sim_view *v)
{
    return PBFCL_PBF_CONTACT_SKIN * (float)v->scene->solver.contact_interval * v->params->radius;
}

void pbf_swap(cl_mem *a, cl_mem *b)
{
    cl_mem t = *a;
    *a = *b;
    *b = t;
}

/* ---- create and destroy ----------------------------------------------------------------- */

/* The kernels of the stages outside the solver iteration (the constraints make theirs). */
static const char *const kernel_names[] = {"pbf_predict", "pbf_update", "pbf_vorticity_viscosity"};

#define PBF_KERNEL_COUNT ((int)(sizeof kernel_names / sizeof kernel_names[0]))

static cl_kernel *kernel_slot(pbf_state *ps, int k)
{
    cl_kernel *slots[] = {&ps->predict, &ps->update, &ps->vorticity_viscosity};
    return slots[k];
}

/* pbf's build_config: the particle kernels' (pbfcl_sim_kernel_config). */
static void pbf_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    pbfcl_sim_kernel_config(dev, cfg);
}

/* pbf's create: its program, kernels and buffers. */
static pbfcl_status pbf_create(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    pbf_state *ps = calloc(1, sizeof *ps);
    if (!ps)
        return PBFCL_ERR_OUT_OF_MEMORY;
    *v.method_state = ps;
    ps->omega = 1.0f;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_PBF);
    pbfcl_build_config cfg;
    pbf_build_config(&v.cl->dev, &cfg);
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    PBFCL_TRY(pbfcl_cl_build(v.cl, desc->files, desc->nfiles, options, &ps->program));
    for (int k = 0; k < PBF_KERNEL_COUNT; k++)
        PBFCL_TRY(pbf_kernel(&v, ps->program, kernel_names[k], kernel_slot(ps, k)));
    PBFCL_TRY(pbf_constraints_create(&v, ps));
    return pbfcl_sim_method_buffers_make(sim); /* pbf_buffers[] and the kinds' */
}

/* pbf's destroy: its kernels, program and buffers. */
static void pbf_destroy(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    if (!ps)
        return;
    pbfcl_sim_method_buffers_release(sim); /* before the kinds' states that hold some */
    pbf_constraints_destroy(ps);
    for (int k = 0; k < PBF_KERNEL_COUNT; k++)
        if (*kernel_slot(ps, k))
            clReleaseKernel(*kernel_slot(ps, k));
    if (ps->program)
        clReleaseProgram(ps->program);
    if (ps->list_program)
        clReleaseProgram(ps->list_program);
    free(ps);
    *v.method_state = NULL;
}

/* pbf's buffer_table: pbf_buffers[] (t = 0), then each constraint kind's in the registry's
 * order, with their owners in sim's PBF state (none without sim). */
static bool pbf_buffer_table(pbfcl_sim *sim, int t, pbfcl_buffer_table *out)
{
    pbfcl_sim_view v;
    pbf_state *ps = sim ? pbf_view(sim, &v) : NULL;
    if (t == 0) {
        *out = (pbfcl_buffer_table){PBFCL_BUFFER_ROWS(pbf_buffers), ps};
        return true;
    }
    if (t > pbf_constraint_count)
        return false;
    const pbf_constraint_kind *kind = pbf_constraints[t - 1];
    *out =
        (pbfcl_buffer_table){kind->buffers, kind->buffer_count, ps ? ps->constraint[t - 1] : NULL};
    return true;
}

/* pbf's loaded: the loaded vorticity forces may be non-zero. */
static void pbf_loaded(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    pbf_view(sim, &v)->vort_force_stale = 1;
}

/* pbf's derive: its own constants, the density constraint's relaxation and tensile term, the
 * vorticity and viscosity, the contacts' slop and friction. */
static pbfcl_status pbf_derive(const pbfcl_scene *s, pbfcl_constants *p)
{
    const pbfcl_solver_settings *v = &s->solver;
    double h = p->h;
    p->epsilon = (float)(v->relaxation / (h * h));
    p->scorr_k = (float)(v->scorr_k * h * h);
    p->scorr_inv_wdq = 1.0f / pbfcl_poly6_at(p, (float)(v->scorr_dq * h));
    p->scorr_n = (pbfcl_uint)v->scorr_n;
    p->vorticity = v->vorticity;
    p->viscosity = v->viscosity;
    p->contact_slop = v->contact_slop;
    p->friction_static = v->friction_static;
    p->friction_dynamic = v->friction_dynamic;
    return PBFCL_OK;
}

/* ---- the substep -------------------------------------------------------------------------- */

double pbfcl_pbf_chebyshev_weight(int iteration, double rho, double last)
{
    const int s = PBFCL_PBF_CHEBYSHEV_DELAY;
    if (!(rho > 0.0) || iteration < s)
        return 1.0;
    if (iteration == s)
        return 2.0 / (2.0 - rho * rho);
    return 4.0 / (4.0 - rho * rho * last);
}

int pbfcl_pbf_distance_sweeps(int iteration, int iterations)
{
    int per = iterations > 0 ? iterations : 1;
    int total = per > PBFCL_PBF_DISTANCE_SWEEPS ? per : PBFCL_PBF_DISTANCE_SWEEPS;
    return (iteration + 1) * total / per - iteration * total / per;
}

void pbfcl_pbf_set_chebyshev_weight(pbfcl_sim *sim, float omega)
{
    pbfcl_sim_view v;
    pbf_view(sim, &v)->omega = omega;
}

/* One substep of seed 001's outline. */
static pbfcl_status pbf_substep(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    const pbfcl_solver_settings *s = &v.scene->solver;
    PBFCL_TRY(pbf_project(sim, PBF_PASS_FORCES, 0, prof)); /* cloth: wind's drag and lift */
    PBFCL_TRY(pbfcl_pbf_predict(sim, prof));      /* apply forces, predict x*, confine to box */
    PBFCL_TRY(pbfcl_sim_kinematic(sim, prof));    /* obstacles on paths: x* on the path */
    PBFCL_TRY(pbfcl_sim_body_predict(sim, prof)); /* bodies: x* of their rigid motion */
    PBFCL_TRY(pbfcl_pbf_neighbours(sim, prof));   /* hash, sort, reorder, cells, neighbours */
    PBFCL_TRY(pbfcl_sim_body_slots(sim, prof));   /* where the bodies' particles are now */
    for (int it = 0; it < s->iterations; it++) {  /* the constraints (constraint.h) */
        ps->omega = (float)pbfcl_pbf_chebyshev_weight(it, s->chebyshev_rho, ps->omega);
        PBFCL_TRY(pbf_project(sim, PBF_PASS_CORRECTION, it, prof)); /* density, contacts: q */
        PBFCL_TRY(pbfcl_pbf_apply_delta(sim, prof));                /* x* += delta x */
        PBFCL_TRY(pbf_project(sim, PBF_PASS_POSITIONS, it, prof));  /* bodies: x* to goals */
    }
    if (s->iterations == 0) /* bodies keep their shape regardless */
        PBFCL_TRY(pbf_project(sim, PBF_PASS_POSITIONS, 0, prof));
    ps->omega = 1.0f;                                /* a delta called on its own is plain */
    PBFCL_TRY(pbfcl_pbf_update(sim, prof));          /* v = (x* - x) / dt, x = x* */
    PBFCL_TRY(pbfcl_sim_body_velocity(sim, prof));   /* bodies: v of their rigid motion */
    return pbfcl_pbf_vorticity_viscosity(sim, prof); /* omega, f_vorticity, XSPH viscosity */
}

/* pbf's solid_speed_scale: a solid body moves at most min(cfl, PBFCL_PBF_SOLID_CFL) h a substep,
 * the fluid at most cfl h (1 where the cfl is within the bodies' already). */
static float pbf_solid_speed_scale(const pbfcl_scene *scene)
{
    double cfl = scene->solver.cfl;
    return cfl > PBFCL_PBF_SOLID_CFL ? (float)(cfl / PBFCL_PBF_SOLID_CFL) : 1.0f;
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
 * particle method. The multilevel coarse correction (solver.multilevel) holds the column
 * whatever its depth; the second term then takes only PBFCL_ML_DEPTH_SHARE of the depth. A cfl
 * above PBFCL_PBF_CFL_SAFE that sets the substeps is warned of once. A solid body's particle may
 * move at most PBFCL_PBF_SOLID_CFL h (pbf_solid_speed_scale: v is then the fastest particle with
 * a body's speed counted cfl / PBFCL_PBF_SOLID_CFL times). A scene's own substeps are the
 * minimum. One 12-byte read per frame. */
static pbfcl_status pbf_choose_substeps(pbfcl_sim *sim, int *out)
{
    pbfcl_sim_view sv;
    pbf_state *ps = pbf_view(sim, &sv);
    const pbfcl_solver_settings *v = &sv.scene->solver;
    float b[3];
    PBFCL_TRY(pbfcl_particles_read_bounds(sv.particles, b));
    double reach = 0.0, g = 0.0;
    for (int a = 0; a < 3; a++) {
        double e = (double)sv.params->box_max[a] - sv.params->box_min[a];
        reach += e * e;
        g += (double)sv.gravity.s[a] * sv.gravity.s[a];
    }
    reach = (float)sqrt(reach);
    g = sqrt(g);
    double height = fmax(0.0, (double)b[1] + b[2] - 2.0 * reach);
    if (pbfcl_ml_corrects(v, 0)) /* the coarse correction carries the weight */
        height *= PBFCL_ML_DEPTH_SHARE;
    double u = fmax(b[0] + g * v->dt, sqrt(2.0 * g * height));
    double want = ceil(v->dt * u / (v->cfl * sv.params->h));
    if (v->cfl > PBFCL_PBF_CFL_SAFE && want > v->substeps && !ps->cfl_warned) {
        ps->cfl_warned = 1;
        pbfcl_warnf("solver.cfl %g: a particle may cross %g h a substep, more than the contacts "
                    "and neighbour lists keep (a 1M dam break at cfl 1.5 overflowed them); set "
                    "solver.cfl to %g or less",
                    (double)v->cfl, (double)v->cfl, PBFCL_PBF_CFL_SAFE);
    }
    int most = v->substeps > PBFCL_PBF_MAX_SUBSTEPS ? v->substeps : PBFCL_PBF_MAX_SUBSTEPS;
    *out = want > most ? most : (want < v->substeps ? v->substeps : (int)want);
    return PBFCL_OK;
}

/* pbf's compute_density: neighbour lists of x* (= x before a step) and one lambda pass. */
static pbfcl_status pbf_compute_density(pbfcl_sim *sim)
{
    PBFCL_TRY(pbfcl_pbf_neighbours(sim, NULL));
    return pbfcl_pbf_lambda(sim, NULL);
}

/* pbf's state_save and state_load: the state that is not per particle, the distance
 * constraints', the wind's triangles, the collision shapes, the inflatables, then the
 * attachments. */
static pbfcl_status pbf_state_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx)
{
    PBFCL_TRY(pbfcl_pbf_distance_save(sim, put, ctx));
    PBFCL_TRY(pbfcl_pbf_wind_save(sim, put, ctx));
    PBFCL_TRY(pbfcl_pbf_colliders_save(sim, put, ctx));
    PBFCL_TRY(pbfcl_pbf_inflatable_save(sim, put, ctx));
    return pbfcl_pbf_attach_save(sim, put, ctx);
}

static pbfcl_status pbf_state_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx)
{
    PBFCL_TRY(pbfcl_pbf_distance_load(sim, get, ctx));
    PBFCL_TRY(pbfcl_pbf_wind_load(sim, get, ctx));
    PBFCL_TRY(pbfcl_pbf_colliders_load(sim, get, ctx));
    PBFCL_TRY(pbfcl_pbf_inflatable_load(sim, get, ctx));
    return pbfcl_pbf_attach_load(sim, get, ctx); /* after the shapes and distances */
}

static const pbfcl_stage pbf_stages[] = {
    PBFCL_STAGE_PREDICT, PBFCL_STAGE_HASH,  PBFCL_STAGE_SORT,
    PBFCL_STAGE_REORDER, PBFCL_STAGE_CELLS, PBFCL_STAGE_NEIGHBOURS,
    PBFCL_STAGE_SOLVE,   PBFCL_STAGE_OTHER, PBFCL_STAGE_VORTICITY_VISCOSITY};

static const pbfcl_solver_method pbf_method = {
    .name = "pbf",
    .build_config = pbf_build_config,
    .create = pbf_create,
    .destroy = pbf_destroy,
    .substep = pbf_substep,
    .choose_substeps = pbf_choose_substeps,
    .solid_speed_scale = pbf_solid_speed_scale,
    .compute_density = pbf_compute_density,
    .derive = pbf_derive,
    .loaded = pbf_loaded,
    .state_save = pbf_state_save, /* the constraints that are not per particle, the shapes */
    .state_load = pbf_state_load,
    .stages = pbf_stages,
    .stage_count = (int)(sizeof pbf_stages / sizeof pbf_stages[0]),
    .predicts = true,
    .buffer_table = pbf_buffer_table,
};

const pbfcl_solver_method *pbfcl_solver_pbf(void)
{
    return &pbf_method;
}
