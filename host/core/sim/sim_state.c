/* Checkpoints: the state that carries from one frame to the next, as named sections: the host
 * section, the per-particle buffers the tables mark saved (the core's, then the method's), the
 * buffers of fixed size, then the attachments' own (attachments.c: the bodies', the paths'). */
#include "sim/sim_internal.h"
#include "sim/sim_state.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The simulation's buffers of fixed size whose contents carry across frames. */
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

/* One section of the saved state: its name, the handle of its buffer and its bytes. */
typedef struct sim_section {
    const char *name;
    cl_mem *buf;
    size_t bytes;
} sim_section;

/* Calls visit with each buffer section of the saved state in order: the saved rows of
 * sim_buffers[] the simulation has, those of the method's tables, then the fixed buffers. */
static pbfcl_status for_each_section(pbfcl_sim *sim,
                                     pbfcl_status (*visit)(pbfcl_sim *, const sim_section *,
                                                           void *tmp, void *arg),
                                     void *arg)
{
    void *tmp = malloc(16 * sim->n + 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t b = 0; b < sim_buffer_count && st == PBFCL_OK; b++) {
        const pbfcl_particle_buffer *d = &sim_buffers[b];
        sim_section s = {d->name, sim_table_buf(sim, d, false), d->elem * sim->n};
        if (d->saved == PBFCL_SAVED && sim_buffer_used(sim, d))
            st = visit(sim, &s, tmp, arg);
    }
    pbfcl_buffer_table tab;
    for (int t = 0; st == PBFCL_OK && sim_method_table(sim->method, sim, t, &tab); t++)
        for (int b = 0; b < tab.count && st == PBFCL_OK; b++) {
            const pbfcl_particle_buffer *d = &tab.rows[b];
            sim_section s = {d->name, sim_table_buf(tab.owner, d, false), d->elem * sim->n};
            if (d->saved == PBFCL_SAVED)
                st = visit(sim, &s, tmp, arg);
        }
    for (size_t k = 0; k < SIM_FIXED_STATE_COUNT && st == PBFCL_OK; k++) {
        const sim_fixed_state *f = &sim_fixed_states[k];
        sim_section s = {f->name, (cl_mem *)((char *)sim + f->offset), f->bytes};
        st = visit(sim, &s, tmp, arg);
    }
    free(tmp);
    return st;
}

/* The callbacks of a save or a load, handed to the sections' visitors. */
typedef struct sim_state_io {
    pbfcl_state_put put;
    pbfcl_state_get get;
    void *ctx;
} sim_state_io;

/* Saves one section through io->put. */
static pbfcl_status save_section(pbfcl_sim *sim, const sim_section *s, void *tmp, void *arg)
{
    const sim_state_io *io = arg;
    PBFCL_TRY(sim_read_plain(sim, *s->buf, s->bytes, tmp));
    return io->put(io->ctx, s->name, tmp, s->bytes);
}

/* Reads one section through io->get into its buffer. */
static pbfcl_status load_section(pbfcl_sim *sim, const sim_section *s, void *tmp, void *arg)
{
    const sim_state_io *io = arg;
    PBFCL_TRY(io->get(io->ctx, s->name, tmp, s->bytes));
    if (s->buf == &sim->phase_buf) /* a checkpoint's from before the phases' flags */
        for (size_t i = 0; i < s->bytes / 4; i++)
            ((cl_uint *)tmp)[i] = pbfcl_sim_phase_upgrade(((cl_uint *)tmp)[i]);
    PBFCL_CL_CHECK(
        clEnqueueWriteBuffer(sim->cl->queue, *s->buf, CL_TRUE, 0, s->bytes, tmp, 0, NULL, NULL));
    return PBFCL_OK;
}

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
    h.solid_groups = (cl_uint)sim->solid_groups;
    PBFCL_TRY(put(ctx, "host", &h, sizeof h));
    sim_state_io io = {put, NULL, ctx};
    PBFCL_TRY(for_each_section(sim, save_section, &io));
    PBFCL_TRY(sim_attachments_save(sim, put, ctx)); /* the bodies', the paths' */
    return sim->method->state_save ? sim->method->state_save(sim, put, ctx) : PBFCL_OK;
}

/* The groups' self-collide flags from the loaded phases (the state holds them there only). */
static pbfcl_status self_collide_from_phases(pbfcl_sim *sim)
{
    size_t n = sim->n, groups = 0;
    unsigned *phase = malloc((n ? n : 1) * sizeof *phase);
    unsigned char *on = calloc(PBFCL_SIM_MAX_GROUPS, 1);
    pbfcl_status st =
        phase && on ? pbfcl_sim_read_phases(sim, phase, NULL) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (PBFCL_SIM_PHASE_IS_GROUP(phase[i]) && (phase[i] & PBFCL_PHASE_SELF_COLLIDE_BIT)) {
            size_t g = PBFCL_SIM_PHASE_STATIC - 1u - (phase[i] & ~PBFCL_PHASE_SELF_COLLIDE_BIT);
            on[g] = 1;
            groups = g + 1 > groups ? g + 1 : groups;
        }
    if (st == PBFCL_OK && (groups || sim->self_collide_groups))
        st = pbfcl_sim_set_group_self_collide(sim, groups, on);
    free(phase);
    free(on);
    return st;
}

pbfcl_status pbfcl_sim_state_load(pbfcl_sim *sim, pbfcl_state_get get, void *ctx)
{
    sim->slots_current = 0;
    sim_host_state h;
    PBFCL_TRY(get(ctx, "host", &h, sizeof h));
    sim_state_io io = {NULL, get, ctx};
    PBFCL_TRY(for_each_section(sim, load_section, &io));
    PBFCL_TRY(sim_attachments_load(sim, get, ctx)); /* the bodies', the paths' */
    if (sim->method->state_load)
        PBFCL_TRY(sim->method->state_load(sim, get, ctx));
    sim->statics = (size_t)h.statics;
    sim->solid_groups = h.solid_groups;
    sim->params = h.params;
    sim->gravity = h.gravity;
    for (int a = 0; a < 3; a++)
        sim->scene.gravity[a] = h.gravity.s[a];
    sim->push_origin = h.push_origin;
    sim->push_dir = h.push_dir;
    sim->push = h.push;
    sim->substeps = h.substeps;
    if (sim->method->loaded)
        sim->method->loaded(sim);
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->params_buf, CL_TRUE, 0,
                                        sizeof sim->params, &sim->params, 0, NULL, NULL));
    return self_collide_from_phases(sim);
}
