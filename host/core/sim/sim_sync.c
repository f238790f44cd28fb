/* The hooks of a simulation split over several devices (sim.h, "a simulation split over
 * several devices"): the sync callback, the particles' records (their rows of the saved
 * per-particle buffers) and the bounds of the substep count. The splitting itself is the
 * layer above's (host/dist/). */
#include "sim/sim_internal.h"

#include <stdlib.h>
#include <string.h>

void pbfcl_sim_set_sync(pbfcl_sim *sim, pbfcl_sim_sync_fn fn, void *ctx)
{
    sim->sync = fn;
    sim->sync_ctx = ctx;
}

bool pbfcl_sim_split(const pbfcl_sim *sim)
{
    return sim->sync != NULL;
}

pbfcl_status pbfcl_sim_sync(pbfcl_sim *sim, pbfcl_sim_sync_point point, const cl_mem *bufs,
                            const size_t *elem, int count)
{
    if (!sim->sync)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_sim_sync_wait(sim)); /* one exchange in flight at a time */
    return sim->sync(sim->sync_ctx, sim, point, bufs, elem, count);
}

static pbfcl_status pay_owed(void *ctx)
{
    return pbfcl_sim_sync_wait(ctx);
}

void pbfcl_sim_sync_started(pbfcl_sim *sim, const pbfcl_sim_lists *lists)
{
    sim->sync_pending = true;
    sim->sync_lists = *lists;
    sim->cl->owed = pay_owed;
    sim->cl->owed_ctx = sim;
}

bool pbfcl_sim_sync_lists(const pbfcl_sim *sim, pbfcl_sim_lists *out)
{
    if (sim->sync_pending)
        *out = sim->sync_lists;
    return sim->sync_pending;
}

pbfcl_status pbfcl_sim_sync_wait(pbfcl_sim *sim)
{
    if (!sim->sync_pending)
        return PBFCL_OK;
    sim->sync_pending = false;
    sim->cl->owed = NULL;
    sim->cl->owed_ctx = NULL;
    return sim->sync(sim->sync_ctx, sim, PBFCL_SYNC_WAIT, NULL, NULL, 0);
}

/* Row r of the saved per-particle buffers (the core's, then the method's tables in their
 * order: its own, then its parts'): its table row and handle; false past the last. Rows the
 * simulation does not save or have are skipped. */
static bool record_row(pbfcl_sim *sim, size_t r, const pbfcl_particle_buffer **d, cl_mem **buf)
{
    for (size_t k = 0; k < sim_buffer_count; k++) {
        const pbfcl_particle_buffer *row = &sim_buffers[k];
        if (row->saved != PBFCL_SAVED || !sim_buffer_used(sim, row))
            continue;
        if (r-- == 0) {
            *d = row;
            *buf = sim_table_buf(sim, row, false);
            return true;
        }
    }
    pbfcl_buffer_table tab;
    for (int t = 0; sim_method_table(sim->method, sim, t, &tab); t++)
        for (int k = 0; k < tab.count; k++) {
            const pbfcl_particle_buffer *row = &tab.rows[k];
            if (row->saved != PBFCL_SAVED)
                continue;
            if (r-- == 0) {
                *d = row;
                *buf = sim_table_buf(tab.owner, row, false);
                return true;
            }
        }
    return false;
}

size_t pbfcl_sim_record_bytes(const pbfcl_sim *sim)
{
    const pbfcl_particle_buffer *d;
    cl_mem *buf;
    size_t bytes = 0;
    for (size_t r = 0; record_row((pbfcl_sim *)sim, r, &d, &buf); r++)
        bytes += d->elem;
    return bytes;
}

bool pbfcl_sim_record_row(pbfcl_sim *sim, size_t r, cl_mem *buf, size_t *elem, const char **name)
{
    const pbfcl_particle_buffer *d;
    cl_mem *handle;
    if (!record_row(sim, r, &d, &handle))
        return false;
    *buf = *handle;
    *elem = d->elem;
    if (name)
        *name = d->name;
    return true;
}

/* Makes records_buf hold at least bytes (grown by half again, contents lost). */
static pbfcl_status records_room(pbfcl_sim *sim, size_t bytes)
{
    if (sim->records_buf && bytes <= sim->records_cap)
        return PBFCL_OK;
    pbfcl_cl_release_buffer(&sim->records_buf);
    sim->records_cap = bytes + bytes / 2 + 256;
    return pbfcl_cl_buffer(sim->cl, CL_MEM_READ_ONLY, sim->records_cap, "appended records",
                           &sim->records_buf);
}

/* Every buffer's initial values made on the device (the scratch ones too; the records' rows
 * leave theirs to the records), then the records uploaded at once and each saved row's column
 * appended: the bytes of the records alone cross the bus, and one finish waits for them. */
pbfcl_status pbfcl_sim_records_append(pbfcl_sim *sim, const void *rec, size_t k)
{
    if (k > sim->capacity - sim->n) {
        pbfcl_errorf("adding %zu particles to %zu exceeds the capacity of %zu", k, sim->n,
                     sim->capacity);
        return PBFCL_ERR_CAPACITY;
    }
    size_t bytes = pbfcl_sim_record_bytes(sim), at = 0;
    const pbfcl_particle_buffer *d;
    cl_mem *buf;
    if (k > 0) {
        PBFCL_TRY(sim_fill_particles(sim, sim->n, k, true));
        PBFCL_TRY(records_room(sim, k * bytes));
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->records_buf, CL_FALSE, 0,
                                            k * bytes, rec, 0, NULL, NULL));
        pbfcl_status st = PBFCL_OK;
        for (size_t r = 0; st == PBFCL_OK && record_row(sim, r, &d, &buf); at += d->elem, r++)
            st = pbfcl_particles_append_column(&sim->particles, sim->records_buf, bytes / 4, at / 4,
                                               d->elem / 4, sim->n, k, *buf);
        PBFCL_CL_CHECK(clFinish(sim->cl->queue)); /* rec is read until then, failed or not */
        PBFCL_TRY(st);
    }
    sim->n += k;
    sim->slots_current = 0; /* the new particles have no body slots */
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_write_bounds(pbfcl_sim *sim, const float b[3])
{
    cl_uint bits[3];
    memcpy(bits, b, sizeof bits); /* the bounds kernel merges float bits as uints */
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->particles.bounds_buf, CL_TRUE, 0,
                                        sizeof bits, bits, 0, NULL, NULL));
    return PBFCL_OK;
}
