/* The collision shapes' constraint (colliders/colliders.h): the substep's contact planes found
 * at the start of its first iteration (on x and the x* of the neighbour search, before the
 * density, which counts them as walls: pbfcl_pbf_colliders_narrow) and held on that x*, then
 * enforced on q in every iteration after the contacts, and each shape's force summed after the
 * last. A simulation
 * without shapes launches nothing here. */
#include "pbf/constraint.h"

#include "pbf/pbf_colliders.h"

#include "colliders/colliders_state.h"

static pbfcl_status collider_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    (void)v;
    (void)program; /* its kernels are colliders.cl's, built when the first shape comes */
    return pbfcl_colliders_create((pbfcl_colliders **)state);
}

static void collider_destroy(void *state)
{
    pbfcl_colliders_destroy(state);
}

pbfcl_status pbfcl_pbf_colliders_narrow(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_colliders *c = pbfcl_pbf_colliders(sim);
    if (pbfcl_colliders_count(c) == 0)
        return PBFCL_OK;
    pbfcl_sim_view v;
    pbf_view(sim, &v);
    pbfcl_build_config cfg; /* PBF's options: one build per device (pbfcl-dev kernel-builds) */
    pbfcl_sim_kernel_config(&v.cl->dev, &cfg);
    pbfcl_colliders_run r = {v.cl, &cfg, v.params_buf, v.n, v.capacity, v.wg, v.params->dt};
    PBFCL_TRY(pbfcl_colliders_narrow(c, &r, *v.pos, *v.pred, prof));
    /* x* out of the planes before the density counts them, as predict clamps x* to the box's
     * walls: predicted into a floor shape by g dt^2 each substep, a resting fluid's floor layer
     * was left 3.3 % above rest by 2 iterations where the box's floor left 1.1 % (1.2 and 0.6 %
     * at 4; test_colliders_fluid_rest_at_shapes) */
    return pbfcl_colliders_hold(c, &r, *v.pos, *v.pred, v.inv_mass_buf, prof);
}

static pbfcl_status collider_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    pbfcl_colliders *c = state;
    if (pbfcl_colliders_count(c) == 0)
        return PBFCL_OK;
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    pbfcl_build_config cfg;
    pbfcl_sim_kernel_config(&v.cl->dev, &cfg);
    pbfcl_colliders_run r = {v.cl, &cfg, v.params_buf, v.n, v.capacity, v.wg, v.params->dt};
    PBFCL_TRY(pbfcl_colliders_project(c, &r, *v.pos, ps->q_buf, v.inv_mass_buf, prof));
    if (it + 1 < v.scene->solver.iterations)
        return PBFCL_OK;
    cl_mem counted[2];
    size_t elem[2];
    if (pbfcl_colliders_counted(c, counted, elem)) /* split: each rank counts its own alone */
        PBFCL_TRY(pbfcl_sim_sync(sim, PBFCL_SYNC_SHAPES, counted, elem, 2));
    return pbfcl_colliders_force(c, &r, v.inv_mass_buf, prof);
}

pbfcl_colliders *pbfcl_pbf_colliders(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    return ps ? pbf_constraint_state(ps, &pbf_collider_constraint) : NULL;
}

pbfcl_status pbfcl_pbf_colliders_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    return pbfcl_colliders_save(pbfcl_pbf_colliders(sim), v.cl, put, ctx);
}

pbfcl_status pbfcl_pbf_colliders_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    return pbfcl_colliders_load(pbfcl_pbf_colliders(sim), v.cl, get, ctx);
}

const pbf_constraint_kind pbf_collider_constraint = {
    .name = "colliders",
    .pass = PBF_PASS_CORRECTION,
    .create = collider_create,
    .destroy = collider_destroy,
    .project = collider_project,
};
