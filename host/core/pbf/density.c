/* The density constraint (Macklin & Mueller 2013): lambda, then delta, which writes the
 * corrected positions q = x* + dx (Jacobi, Chebyshev-weighted). */
#include "pbf/constraint.h"
#include "pbf/pbf_colliders.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct density_state {
    cl_kernel lambda, delta;               /* the fluid without shapes: their terms compiled out */
    cl_kernel lambda_shapes, delta_shapes; /* with the shapes' contact planes as walls */
    cl_kernel lambda_list[2], delta_list[2]; /* over slot lists (pbf_lists.c), [shapes]: or NULL */
    cl_mem lambda_buf;                       /* float4 (x*, lambda): delta reads both at once */
    cl_mem search_buf; /* float4: x* at the neighbour search (lambda, first iteration) */
} density_state;

#define DENSITY_BUF(f) offsetof(density_state, f)

/* The density constraint's per-particle buffers (constraint.h). */
static const pbfcl_particle_buffer density_buffers[] = {
    {"lambdas", 16, DENSITY_BUF(lambda_buf), PBFCL_NOT_REORDERED, PBFCL_INIT_ZERO, PBFCL_SORT_CARRY,
     PBFCL_SAVED, false},
    {"search_positions", 16, DENSITY_BUF(search_buf), PBFCL_NOT_REORDERED, PBFCL_INIT_ZERO,
     PBFCL_SORT_CARRY, PBFCL_SCRATCH, false},
};

static pbfcl_status density_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    density_state *d = calloc(1, sizeof *d);
    if (!(*state = d))
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(pbf_kernel(v, program, "pbf_lambda", &d->lambda));
    PBFCL_TRY(pbf_kernel(v, program, "pbf_lambda_shapes", &d->lambda_shapes));
    PBFCL_TRY(pbf_kernel(v, program, "pbf_delta", &d->delta));
    return pbf_kernel(v, program, "pbf_delta_shapes", &d->delta_shapes);
}

static void density_destroy(void *state)
{
    density_state *d = state;
    if (d->lambda)
        clReleaseKernel(d->lambda);
    if (d->delta)
        clReleaseKernel(d->delta);
    if (d->lambda_shapes)
        clReleaseKernel(d->lambda_shapes);
    if (d->delta_shapes)
        clReleaseKernel(d->delta_shapes);
    for (int s = 0; s < 2; s++) {
        if (d->lambda_list[s])
            clReleaseKernel(d->lambda_list[s]);
        if (d->delta_list[s])
            clReleaseKernel(d->delta_list[s]);
    }
    free(d);
}

cl_mem pbf_density_lambdas(const pbf_state *ps)
{
    return ((density_state *)pbf_constraint_state(ps, &pbf_density_constraint))->lambda_buf;
}

/* The kernel of a stage: whole, over every particle, or, while an exchange is in flight
 * (lists), *list, over slot lists (made at the first use). */
static pbfcl_status stage_kernel(const pbfcl_sim_view *v, pbf_state *ps, bool lists,
                                 cl_kernel whole, cl_kernel *list, const char *name, cl_kernel *k)
{
    if (!lists) {
        *k = whole;
        return PBFCL_OK;
    }
    PBFCL_TRY(pbf_list_kernel(v, ps, name, list));
    *k = *list;
    return PBFCL_OK;
}

/* Launches k over every particle, or over the lists l (lists: an exchange is in flight). */
static pbfcl_status stage_launch(pbfcl_sim *sim, const pbfcl_sim_view *v, cl_kernel k, cl_uint args,
                                 bool lists, const pbfcl_sim_lists *l, pbfcl_profile *prof)
{
    if (lists)
        return pbf_launch_lists(sim, v, &k, 1, args, l, prof, PBFCL_STAGE_SOLVE);
    return pbf_launch(v, k, prof, PBFCL_STAGE_SOLVE);
}

pbfcl_status pbfcl_pbf_lambda(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    density_state *d = pbf_constraint_state(ps, &pbf_density_constraint);
    cl_mem planes, shapes, push;
    cl_uint on = pbfcl_colliders_planes(pbfcl_pbf_colliders(sim), &planes, &shapes, &push);
    pbfcl_sim_lists l;
    bool lists = pbfcl_sim_sync_lists(sim, &l);
    cl_kernel k;
    PBFCL_TRY(stage_kernel(&v, ps, lists, on ? d->lambda_shapes : d->lambda, &d->lambda_list[on],
                           on ? "pbf_lambda_shapes" : "pbf_lambda", &k));
    PBFCL_TRY(pbf_set_head(&v, k));
    PBF_ARG(k, 2, *v.pred);
    PBF_ARG(k, 3, v.grid->neighbor_count_buf);
    PBF_ARG(k, 4, v.grid->neighbor_buf);
    PBF_ARG(k, 5, d->lambda_buf);
    PBF_ARG(k, 6, v.density_buf);
    PBF_ARG(k, 7, v.wall_scale);
    PBF_ARG(k, 8, d->search_buf);
    PBF_ARG(k, 9, v.grid->moved_buf);
    cl_uint record = (cl_uint)ps->lists_fresh; /* the first after a search records x* */
    PBF_ARG(k, 10, record);
    ps->lists_fresh = 0;
    PBF_ARG(k, 11, v.solids);
    PBF_ARG(k, 12, v.phase_buf);
    PBF_ARG(k, 13, v.grid->cell_id_buf); /* each particle's cell at the search */
    PBF_ARG(k, 14, on);                  /* the shapes count as walls (NULL buffers without them) */
    PBF_ARG(k, 15, planes);
    PBF_ARG(k, 16, shapes);
    PBFCL_TRY(stage_launch(sim, &v, k, 17, lists, &l, prof));
    /* delta reads the neighbours' (x*, lambda); the multilevel correction moves a ghost as its
     * owner, by the part its density gives (ml_fill): the owner's density, which a ghost's
     * neighbours on this device, cut off at the layer's edge, do not give */
    cl_mem bufs[2] = {d->lambda_buf, v.density_buf};
    const size_t elem[2] = {16, 4};
    return pbfcl_sim_sync(sim, PBFCL_SYNC_LAMBDA, bufs, elem,
                          v.scene->solver.multilevel > 0 ? 2 : 1);
}

pbfcl_status pbfcl_pbf_delta(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    density_state *d = pbf_constraint_state(ps, &pbf_density_constraint);
    cl_mem planes, shapes, push;
    cl_uint on = pbfcl_colliders_planes(pbfcl_pbf_colliders(sim), &planes, &shapes, &push);
    pbfcl_sim_lists l;
    bool lists = pbfcl_sim_sync_lists(sim, &l);
    cl_kernel k;
    PBFCL_TRY(stage_kernel(&v, ps, lists, on ? d->delta_shapes : d->delta, &d->delta_list[on],
                           on ? "pbf_delta_shapes" : "pbf_delta", &k));
    PBFCL_TRY(pbf_set_head(&v, k));
    PBF_ARG(k, 2, d->lambda_buf);
    PBF_ARG(k, 3, v.grid->neighbor_count_buf);
    PBF_ARG(k, 4, v.grid->neighbor_buf);
    PBF_ARG(k, 5, ps->q_buf);
    PBF_ARG(k, 6, v.wall_scale);
    PBF_ARG(k, 7, *v.pred_tmp); /* the density steps (reorder target, free until then) */
    PBF_ARG(k, 8, ps->omega);
    cl_uint record_step = v.scene->solver.chebyshev_rho > 0.0f; /* plain Jacobi needs no D */
    PBF_ARG(k, 9, record_step);
    PBF_ARG(k, 10, d->search_buf);
    PBF_ARG(k, 11, v.grid->moved_buf);
    float half_skin = 0.5f * pbf_contact_skin(&v);
    cl_float moved_limit2 = half_skin * half_skin;
    PBF_ARG(k, 12, moved_limit2);
    ps->q_from_delta = 1;
    PBF_ARG(k, 13, v.solids);
    PBF_ARG(k, 14, v.phase_buf);
    PBF_ARG(k, 15, v.inv_mass_buf);
    PBF_ARG(k, 16, v.grid->cell_id_buf); /* each particle's cell at the search */
    cl_uint grid_bits = v.grid->params.grid_bits;
    PBF_ARG(k, 17, grid_bits);
    PBF_ARG(k, 18, on); /* the shapes' part of the correction, added to their pushes */
    PBF_ARG(k, 19, planes);
    PBF_ARG(k, 20, shapes);
    PBF_ARG(k, 21, push);
    PBFCL_TRY(stage_launch(sim, &v, k, 22, lists, &l, prof));
    const size_t elem = 16; /* collide and the next lambda read the neighbours' q */
    return pbfcl_sim_sync(sim, PBFCL_SYNC_DELTA, &ps->q_buf, &elem, 1);
}

/* One projection: the lambdas, then q = x* + dx. */
static pbfcl_status density_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    (void)state;
    if (it == 0) /* the shapes' contact planes, which the density counts as walls */
        PBFCL_TRY(pbfcl_pbf_colliders_narrow(sim, prof));
    PBFCL_TRY(pbfcl_pbf_lambda(sim, prof)); /* density, lambda_i */
    return pbfcl_pbf_delta(sim, prof);      /* delta x_i with s_corr (Chebyshev-weighted) */
}

const pbf_constraint_kind pbf_density_constraint = {
    .name = "density",
    .pass = PBF_PASS_CORRECTION,
    .create = density_create,
    .destroy = density_destroy,
    .project = density_project,
    .buffers = density_buffers,
    .buffer_count = (int)(sizeof density_buffers / sizeof density_buffers[0]),
};
