/* The registry of PBF's constraint projections (constraint.h): adding a kind is its own file
 * and one line here. */
#include "pbf/constraint.h"

const pbf_constraint_kind *const pbf_constraints[] = {
    &pbf_density_constraint,    /* lambda, delta: q */
    &pbf_contact_constraint,    /* collide on q, every contact_interval-th iteration */
    &pbf_collider_constraint,   /* contact planes of the shapes on q (colliders.c) */
    &pbf_multilevel_constraint, /* the coarse correction of the density on x* (multilevel.c) */
    &pbf_attach_constraint,     /* particles attached to shapes: x* on the shape (attach.c) */
    &pbf_shape_constraint,      /* shape matching of the bodies on x* */
    &pbf_distance_constraint,   /* cloth and ropes (XPBD) on x* */
    &pbf_wind_force,            /* before predict: drag and lift of the cloth's triangles */
    &pbf_inflatable_constraint, /* closed meshes holding a volume (XPBD) on x* */
};

const int pbf_constraint_count = (int)(sizeof pbf_constraints / sizeof pbf_constraints[0]);

_Static_assert(sizeof pbf_constraints / sizeof pbf_constraints[0] <= PBF_MAX_CONSTRAINTS,
               "raise PBF_MAX_CONSTRAINTS (pbf_internal.h)");

pbfcl_status pbf_kernel(const pbfcl_sim_view *v, cl_program program, const char *name,
                        cl_kernel *out)
{
    PBFCL_TRY(pbfcl_cl_kernel(program, name, out));
    return pbfcl_cl_check_launch(v->cl, *out, name, v->wg, 0);
}

pbfcl_status pbf_constraints_create(const pbfcl_sim_view *v, pbf_state *ps)
{
    for (int k = 0; k < pbf_constraint_count; k++)
        if (pbf_constraints[k]->create)
            PBFCL_TRY(pbf_constraints[k]->create(v, ps->program, &ps->constraint[k]));
    return PBFCL_OK;
}

void pbf_constraints_destroy(pbf_state *ps)
{
    for (int k = 0; k < pbf_constraint_count; k++)
        if (pbf_constraints[k]->destroy && ps->constraint[k]) {
            pbf_constraints[k]->destroy(ps->constraint[k]);
            ps->constraint[k] = NULL;
        }
}

void *pbf_constraint_state(const pbf_state *ps, const pbf_constraint_kind *kind)
{
    for (int k = 0; k < pbf_constraint_count; k++)
        if (pbf_constraints[k] == kind)
            return ps->constraint[k];
    return NULL;
}

pbfcl_status pbf_project(pbfcl_sim *sim, pbf_pass pass, int it, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    for (int k = 0; k < pbf_constraint_count; k++)
        if (pbf_constraints[k]->pass == pass)
            PBFCL_TRY(pbf_constraints[k]->project(sim, ps->constraint[k], it, prof));
    return PBFCL_OK;
}
