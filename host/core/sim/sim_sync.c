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

pbfcl_status pbfcl_sim_sync(pbfcl_sim *sim, pbfcl_sim_sync_point point, const cl_mem *bufs,
                            const size_t *elem, int count)
{
    if (!sim->sync)
        return PBFCL_OK;
    return sim->sync(sim->sync_ctx, sim, point, bufs, elem, count);
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

pbfcl_status pbfcl_sim_records_append(pbfcl_sim *sim, const void *rec, size_t k)
{
    if (k > sim->capacity - sim->n) {
        pbfcl_errorf("adding %zu particles to %zu exceeds the capacity of %zu", k, sim->n,
                     sim->capacity);
        return PBFCL_ERR_CAPACITY;
    }
    size_t bytes = pbfcl_sim_record_bytes(sim), at = 0;
    char *rows = calloc(k + 1, 16);
    if (!rows)
        return PBFCL_ERR_OUT_OF_MEMORY;
    /* every buffer's initial values first (the scratch ones too), then the records' rows */
    pbfcl_status st = sim_upload_particles(sim, sim->n, k, (const float *)rows, NULL);
    const pbfcl_particle_buffer *d;
    cl_mem *buf;
    for (size_t r = 0; st == PBFCL_OK && k > 0 && record_row(sim, r, &d, &buf); r++) {
        for (size_t i = 0; i < k; i++)
            memcpy(rows + i * d->elem, (const char *)rec + i * bytes + at, d->elem);
        at += d->elem;
        PBFCL_CL_TRY(st,
                     clEnqueueWriteBuffer(sim->cl->queue, *buf, CL_TRUE, sim->n * d->elem,
                                          k * d->elem, rows, 0, NULL, NULL),
                     done);
    }
done:
    free(rows);
    PBFCL_TRY(st);
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
