/* The shape-matching constraint of the bodies (shape_match.h): after apply_delta, x* of the
 * bodies' particles towards their goal positions, with the friction body_contacts measured. */
#include "pbf/constraint.h"

pbfcl_status pbfcl_pbf_shape_match(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    if (!v.bodies)
        return PBFCL_OK;
    /* the static friction of the collide pass since the last projection, if there was one */
    cl_mem static_buf = ps->body_friction == 2 ? v.bodies->static_buf : NULL;
    ps->body_friction = 0;
    const pbfcl_solver_settings *sv = &v.scene->solver;
    float lo[3], hi[3];
    pbfcl_sim_walls(sim, lo, hi);
    pbfcl_shape_match_set_walls(v.bodies, lo, hi);
    return pbfcl_shape_match_project(v.bodies, *v.pred, static_buf, sv->friction_static,
                                     sv->friction_dynamic, prof, PBFCL_STAGE_SOLVE);
}

static pbfcl_status shape_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    (void)state;
    (void)it;
    return pbfcl_pbf_shape_match(sim, prof); /* bodies: x* towards their goals */
}

const pbf_constraint_kind pbf_shape_constraint = {
    .name = "shape_matching",
    .pass = PBF_PASS_POSITIONS,
    .project = shape_project,
};
