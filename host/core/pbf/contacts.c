/* The contact constraint: collide (particle pairs and walls, on q), with the bodies' contacts
 * with other solids measured before the substep's first pass (body_contacts). */
#include "pbf/constraint.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct contact_state {
    /* collide_fluid: the fluid's path (every particle without solids, else those away from
     * them); collide: the bodies' path, for the particles beside a solid */
    cl_kernel collide, collide_fluid, body_contacts;
    cl_kernel collide_list, collide_fluid_list; /* over slot lists (pbf_lists.c), or NULL */
    cl_mem q_twin_buf; /* float4: collide's target, swapped with PBF's q after each pass */
} contact_state;

/* The contact constraint's per-particle buffers (constraint.h). */
static const pbfcl_particle_buffer contact_buffers[] = {
    {"corrected_positions_collide", 16, offsetof(contact_state, q_twin_buf), PBFCL_NOT_REORDERED,
     PBFCL_INIT_ZERO, PBFCL_SORT_CARRY, PBFCL_SCRATCH, false},
};

static pbfcl_status contact_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    contact_state *c = calloc(1, sizeof *c);
    if (!(*state = c))
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(pbf_kernel(v, program, "pbf_collide", &c->collide));
    PBFCL_TRY(pbf_kernel(v, program, "pbf_collide_fluid", &c->collide_fluid));
    return pbf_kernel(v, program, "pbf_body_contacts", &c->body_contacts);
}

static void contact_destroy(void *state)
{
    contact_state *c = state;
    if (c->collide)
        clReleaseKernel(c->collide);
    if (c->collide_fluid)
        clReleaseKernel(c->collide_fluid);
    if (c->body_contacts)
        clReleaseKernel(c->body_contacts);
    if (c->collide_list)
        clReleaseKernel(c->collide_list);
    if (c->collide_fluid_list)
        clReleaseKernel(c->collide_fluid_list);
    free(c);
}

/* body_contacts: the contacts of the bodies' particles with other solids, for their bodies'
 * friction in the next shape matching (on the q and x collide is about to read). */
static pbfcl_status body_contacts(const pbfcl_sim_view *v, pbf_state *ps, cl_kernel k,
                                  cl_uint whole_lists, pbfcl_profile *prof)
{
    pbfcl_shape_match *sm = v->bodies;
    cl_uint entries = (cl_uint)sm->entries, matched = (cl_uint)sm->bodies;
    PBFCL_TRY(pbf_set_head(v, k));
    PBF_ARG(k, 2, entries);
    PBF_ARG(k, 3, sm->entry_id_buf);
    PBF_ARG(k, 4, v->particles->slot_buf);
    PBF_ARG(k, 5, *v->pos);
    PBF_ARG(k, 6, ps->q_buf);
    PBF_ARG(k, 7, v->grid->neighbor_near_buf);
    PBF_ARG(k, 8, v->grid->neighbor_buf);
    PBF_ARG(k, 9, v->grid->neighbor_count_buf);
    PBF_ARG(k, 10, v->grid->moved_buf);
    PBF_ARG(k, 11, whole_lists);
    PBF_ARG(k, 12, v->inv_mass_buf);
    PBF_ARG(k, 13, sm->body_range_buf);
    PBF_ARG(k, 14, matched);
    PBF_ARG(k, 15, sm->static_buf);
    PBF_ARG(k, 16, v->grid->cell_id_buf);
    cl_mem here = sm->here_buf ? sm->here_buf : v->particles->slot_buf; /* split: shape_match.h */
    PBF_ARG(k, 17, here);
    return pbfcl_cl_launch(v->cl, k, sm->entries, v->wg, prof, PBFCL_STAGE_SOLVE);
}

/* Sets collide's arguments (pbf_collide and pbf_collide_fluid take the same ones). */
static pbfcl_status collide_args(const pbfcl_sim_view *v, const pbf_state *ps,
                                 const contact_state *cs, cl_kernel k, cl_uint whole_lists,
                                 cl_uint matched)
{
    PBFCL_TRY(pbf_set_head(v, k));
    PBF_ARG(k, 2, *v->pos);
    PBF_ARG(k, 3, ps->q_buf);
    PBF_ARG(k, 4, v->grid->neighbor_near_buf); /* the pairs within contact range come first */
    PBF_ARG(k, 5, v->grid->neighbor_buf);
    PBF_ARG(k, 6, cs->q_twin_buf);
    PBF_ARG(k, 7, *v->pos_tmp); /* free between reorders */
    PBF_ARG(k, 8, v->grid->neighbor_count_buf);
    PBF_ARG(k, 9, v->grid->moved_buf);
    PBF_ARG(k, 10, whole_lists);
    PBF_ARG(k, 11, v->solids);
    PBF_ARG(k, 12, v->phase_buf);
    PBF_ARG(k, 13, v->inv_mass_buf);
    PBF_ARG(k, 14, matched);
    PBF_ARG(k, 15, v->grid->near_solid_buf); /* fluid beside a solid: the last search's stamp */
    PBF_ARG(k, 16, v->grid->solid_stamp);
    PBF_ARG(k, 17, v->grid->cell_id_buf); /* each particle's cell at the search */
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_collide(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    contact_state *cs = pbf_constraint_state(ps, &pbf_contact_constraint);
    /* the near lists hold every contact only for q from delta, which reports where it moved
     * particles (grid.moved_buf); a pass after another collide pass reads the whole lists */
    cl_uint whole_lists = !ps->q_from_delta;
    ps->q_from_delta = 0;
    cl_uint matched = (cl_uint)pbfcl_shape_match_count(v.bodies);
    pbfcl_sim_lists l; /* an exchange in flight: the interior first, the boundary after it */
    bool lists = pbfcl_sim_sync_lists(sim, &l);
    cl_kernel k[2] = {cs->collide_fluid, cs->collide};
    if (lists) {
        PBFCL_TRY(pbf_list_kernel(&v, ps, "pbf_collide_fluid", &cs->collide_fluid_list));
        PBFCL_TRY(pbf_list_kernel(&v, ps, "pbf_collide", &cs->collide_list));
        k[0] = cs->collide_fluid_list;
        k[1] = cs->collide_list;
    }
    PBFCL_TRY(collide_args(&v, ps, cs, k[0], whole_lists, matched));
    if (v.solids)
        PBFCL_TRY(collide_args(&v, ps, cs, k[1], whole_lists, matched));
    if (ps->body_friction == 1 && matched) { /* the substep's first pass: the bodies' */
        PBFCL_TRY(body_contacts(&v, ps, cs->body_contacts, whole_lists, prof));
        ps->body_friction = 2;
    }
    /* the fluid's path; with solids only away from them, and the bodies' path beside them (each
     * its own kernel, so that the bodies' registers do not set the fluid's occupancy) */
    if (lists) {
        PBFCL_TRY(pbf_launch_lists(sim, &v, k, v.solids ? 2 : 1, 18, &l, prof, PBFCL_STAGE_SOLVE));
    } else {
        PBFCL_TRY(pbf_launch(&v, k[0], prof, PBFCL_STAGE_SOLVE));
        if (v.solids)
            PBFCL_TRY(pbf_launch(&v, k[1], prof, PBFCL_STAGE_SOLVE));
    }
    pbf_swap(&ps->q_buf, &cs->q_twin_buf);
    pbf_swap(v.pos, v.pos_tmp);
    const cl_mem bufs[] = {ps->q_buf, *v.pos}; /* the next pass reads the neighbours' */
    const size_t elem[] = {16, 16};
    return pbfcl_sim_sync(sim, PBFCL_SYNC_COLLIDE, bufs, elem, 2);
}

/* Whether solver iteration it (of iterations) ends with the collision passes: every
 * contact_interval-th iteration and always the last, so that a substep ends with its contacts
 * resolved. */
static int contact_iteration(const pbfcl_solver_settings *s, int it)
{
    return (it + 1) % s->contact_interval == 0 || it + 1 == s->iterations;
}

/* The stabilisation passes of a contact iteration. */
static pbfcl_status contact_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    (void)state;
    const pbfcl_solver_settings *s = &pbfcl_sim_scene(sim)->solver;
    for (int st = 0; contact_iteration(s, it) && st < s->stabilization_iterations; st++)
        PBFCL_TRY(pbfcl_pbf_collide(sim, prof)); /* collisions: x and x* */
    return PBFCL_OK;
}

const pbf_constraint_kind pbf_contact_constraint = {
    .name = "contacts",
    .pass = PBF_PASS_CORRECTION,
    .create = contact_create,
    .destroy = contact_destroy,
    .project = contact_project,
    .buffers = contact_buffers,
    .buffer_count = (int)(sizeof contact_buffers / sizeof contact_buffers[0]),
};
