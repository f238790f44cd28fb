/* The contact constraint: collide (particle pairs and walls, on q), with the bodies' contacts
 * with other solids measured before the substep's first pass (body_contacts). */
#include "pbf/pbf_internal.h"

/* body_contacts: the contacts of the bodies' particles with other solids, for their bodies'
 * friction in the next shape matching (on the q and x collide is about to read). */
static pbfcl_status body_contacts(const pbfcl_sim_view *v, pbf_state *ps, cl_uint whole_lists,
                                  pbfcl_profile *prof)
{
    pbfcl_shape_match *sm = v->bodies;
    cl_kernel k = ps->body_contacts;
    cl_uint entries = (cl_uint)sm->entries, matched = (cl_uint)sm->bodies;
    PBFCL_TRY(pbf_set_head(v, k));
    PBF_ARG(k, 2, entries);
    PBF_ARG(k, 3, sm->entry_id_buf);
    PBF_ARG(k, 4, sm->slot_buf);
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
    return pbfcl_cl_launch(v->cl, k, sm->entries, v->wg, prof, PBFCL_STAGE_SOLVE);
}

pbfcl_status pbfcl_pbf_collide(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    cl_kernel k = ps->collide;
    /* the near lists hold every contact only for q from delta, which reports where it moved
     * particles (grid.moved_buf); a pass after another collide pass reads the whole lists */
    cl_uint whole_lists = !ps->q_from_delta;
    ps->q_from_delta = 0;
    PBFCL_TRY(pbf_set_head(&v, k));
    PBF_ARG(k, 2, *v.pos);
    PBF_ARG(k, 3, ps->q_buf);
    PBF_ARG(k, 4, v.grid->neighbor_near_buf); /* the pairs within contact range come first */
    PBF_ARG(k, 5, v.grid->neighbor_buf);
    PBF_ARG(k, 6, ps->q_tmp_buf);
    PBF_ARG(k, 7, *v.pos_tmp); /* free between reorders */
    PBF_ARG(k, 8, v.grid->neighbor_count_buf);
    PBF_ARG(k, 9, v.grid->moved_buf);
    PBF_ARG(k, 10, whole_lists);
    PBF_ARG(k, 11, v.solids);
    PBF_ARG(k, 12, v.phase_buf);
    PBF_ARG(k, 13, v.inv_mass_buf);
    cl_uint matched = v.bodies ? (cl_uint)v.bodies->bodies : 0;
    PBF_ARG(k, 14, matched);
    PBF_ARG(k, 15, v.grid->near_solid_buf); /* fluid beside a solid: the last search's stamp */
    PBF_ARG(k, 16, v.grid->solid_stamp);
    PBF_ARG(k, 17, v.grid->cell_id_buf);     /* each particle's cell at the search */
    if (ps->body_friction == 1 && matched) { /* the substep's first pass: the bodies' */
        PBFCL_TRY(body_contacts(&v, ps, whole_lists, prof));
        ps->body_friction = 2;
    }
    PBFCL_TRY(pbf_launch(&v, k, prof, PBFCL_STAGE_SOLVE));
    pbf_swap(&ps->q_buf, &ps->q_tmp_buf);
    pbf_swap(v.pos, v.pos_tmp);
    return PBFCL_OK;
}
