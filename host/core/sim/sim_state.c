/* Checkpoints: the state that carries from one frame to the next, as named sections: the host
 * section, the per-particle buffers the tables mark saved (the core's, then the method's), the
 * buffers of fixed size, then the bodies' and the paths' own. */
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

/* Section k of the saved state: a saved row of sim_buffers[], of the method's table or a fixed
 * buffer; false if the simulation has no such buffer or does not save it. */
static bool state_section(pbfcl_sim *sim, size_t k, const char **name, cl_mem **buf, size_t *bytes)
{
    size_t rows = sim_buffer_count, own = (size_t)sim->method->buffer_count;
    if (k >= rows + own) {
        const sim_fixed_state *f = &sim_fixed_states[k - rows - own];
        *name = f->name;
        *buf = (cl_mem *)((char *)sim + f->offset);
        *bytes = f->bytes;
        return true;
    }
    const pbfcl_particle_buffer *d = k < rows ? &sim_buffers[k] : &sim->method->buffers[k - rows];
    *name = d->name;
    *buf = sim_table_buf(k < rows ? (void *)sim : sim->method_state, d, false);
    *bytes = d->elem * sim->n;
    return d->saved == PBFCL_SAVED && (k >= rows || sim_buffer_used(sim, d));
}

static size_t state_section_count(const pbfcl_sim *sim)
{
    return sim_buffer_count + (size_t)sim->method->buffer_count + SIM_FIXED_STATE_COUNT;
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
    void *tmp = malloc(16 * sim->n + 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; k < state_section_count(sim) && st == PBFCL_OK; k++) {
        const char *name;
        cl_mem *buf;
        size_t bytes;
        if (!state_section(sim, k, &name, &buf, &bytes))
            continue; /* scratch, or a buffer the method does not have */
        st = sim_read_plain(sim, *buf, bytes, tmp);
        if (st == PBFCL_OK)
            st = put(ctx, name, tmp, bytes);
    }
    free(tmp);
    PBFCL_TRY(st);
    PBFCL_TRY(pbfcl_shape_match_state_save(sim->bodies, put, ctx)); /* rest shapes, poses */
    PBFCL_TRY(pbfcl_kinematic_state_save(sim->paths, put, ctx));    /* paths and their clock */
    return sim->method->state_save ? sim->method->state_save(sim, put, ctx) : PBFCL_OK;
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

/* Reads the buffers' sections into the buffers. */
static pbfcl_status load_sections(pbfcl_sim *sim, pbfcl_state_get get, void *ctx)
{
    void *tmp = malloc(16 * sim->n + 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; k < state_section_count(sim) && st == PBFCL_OK; k++) {
        const char *name;
        cl_mem *buf;
        size_t bytes;
        if (!state_section(sim, k, &name, &buf, &bytes))
            continue; /* scratch, or a buffer the method does not have */
        st = get(ctx, name, tmp, bytes);
        if (st != PBFCL_OK)
            break;
        if (buf == &sim->phase_buf) /* a checkpoint's from before the phases' flags */
            for (size_t i = 0; i < bytes / 4; i++)
                ((cl_uint *)tmp)[i] = pbfcl_sim_phase_upgrade(((cl_uint *)tmp)[i]);
        cl_int err =
            clEnqueueWriteBuffer(sim->cl->queue, *buf, CL_TRUE, 0, bytes, tmp, 0, NULL, NULL);
        if (err != CL_SUCCESS) {
            pbfcl_report_cl(err, "clEnqueueWriteBuffer", __FILE__, __LINE__);
            st = PBFCL_ERR_OPENCL;
        }
    }
    free(tmp);
    return st;
}

pbfcl_status pbfcl_sim_state_load(pbfcl_sim *sim, pbfcl_state_get get, void *ctx)
{
    sim->slots_current = 0;
    sim_host_state h;
    PBFCL_TRY(get(ctx, "host", &h, sizeof h));
    PBFCL_TRY(load_sections(sim, get, ctx));
    PBFCL_TRY(sim_state_load_parts(sim, get, ctx));
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
    return PBFCL_OK;
}
