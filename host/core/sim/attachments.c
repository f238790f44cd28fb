/* The registry of the simulation's attachments (bodies/attachment.h): adding one is its hooks
 * beside its module and one line here. The core calls every registered attachment's hooks at
 * destroy, save, load and a renumbering of the ids, in the registry's order (the order of
 * their sections in a checkpoint). */
#include "sim/sim_internal.h"

const pbfcl_attachment *const sim_attachments[] = {
    &pbfcl_shape_match_attachment, /* rigid and soft bodies: "bodies" and body_* sections */
    &pbfcl_kinematic_attachment,   /* obstacles on paths: "paths" and path_* sections */
};

const int sim_attachment_count = (int)(sizeof sim_attachments / sizeof sim_attachments[0]);

_Static_assert(sizeof sim_attachments / sizeof sim_attachments[0] <= SIM_MAX_ATTACHMENTS,
               "raise SIM_MAX_ATTACHMENTS (sim_internal.h)");

/* The index of a in the registry, or -1. */
static int slot_of(const pbfcl_attachment *a)
{
    for (int k = 0; k < sim_attachment_count; k++)
        if (sim_attachments[k] == a)
            return k;
    return -1;
}

void *sim_attached(const pbfcl_sim *sim, const pbfcl_attachment *a)
{
    int k = slot_of(a);
    return k < 0 ? NULL : sim->attached[k];
}

/* Makes attachment k's state if the simulation has none yet. */
static pbfcl_status attach_slot(pbfcl_sim *sim, int k)
{
    if (sim->attached[k])
        return PBFCL_OK;
    pbfcl_attach_env env = {sim->cl, sim->capacity, NULL};
    if (sim_attachments[k]->uses_slots)
        PBFCL_TRY(pbfcl_particles_slot_map(&sim->particles, &env.slot_buf));
    void *state = NULL;
    pbfcl_status st = sim_attachments[k]->create(&env, &state);
    if (st != PBFCL_OK) {
        sim_attachments[k]->destroy(state);
        return st;
    }
    sim->attached[k] = state;
    return PBFCL_OK;
}

pbfcl_shape_match *sim_bodies(const pbfcl_sim *sim)
{
    return sim_attached(sim, &pbfcl_shape_match_attachment);
}

pbfcl_kinematic *sim_paths(const pbfcl_sim *sim)
{
    return sim_attached(sim, &pbfcl_kinematic_attachment);
}

pbfcl_status sim_attach(pbfcl_sim *sim, const pbfcl_attachment *a, void **state)
{
    int k = slot_of(a);
    if (k < 0) {
        pbfcl_errorf("the attachment %s is not registered: add it to sim_attachments[] "
                     "(host/core/sim/attachments.c)",
                     a->name);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(attach_slot(sim, k));
    *state = sim->attached[k];
    return PBFCL_OK;
}

void sim_attachments_destroy(pbfcl_sim *sim)
{
    for (int k = 0; k < sim_attachment_count; k++) {
        sim_attachments[k]->destroy(sim->attached[k]);
        sim->attached[k] = NULL;
    }
}

pbfcl_status sim_attachments_save(pbfcl_sim *sim, pbfcl_state_put put, void *ctx)
{
    for (int k = 0; k < sim_attachment_count; k++)
        PBFCL_TRY(sim_attachments[k]->save(sim->attached[k], put, ctx));
    return PBFCL_OK;
}

pbfcl_status sim_attachments_load(pbfcl_sim *sim, pbfcl_state_get get, void *ctx)
{
    for (int k = 0; k < sim_attachment_count; k++) { /* made first where the state has some */
        bool any = false;
        PBFCL_TRY(sim_attachments[k]->saved(get, ctx, &any));
        if (any)
            PBFCL_TRY(attach_slot(sim, k));
    }
    for (int k = 0; k < sim_attachment_count; k++)
        if (sim->attached[k])
            PBFCL_TRY(sim_attachments[k]->load(sim->attached[k], get, ctx));
    return PBFCL_OK;
}

pbfcl_status sim_attachments_remap_ids(pbfcl_sim *sim, const unsigned *new_id)
{
    for (int k = 0; k < sim_attachment_count; k++)
        if (sim->attached[k])
            PBFCL_TRY(sim_attachments[k]->remap_ids(sim->attached[k], new_id));
    return PBFCL_OK;
}
