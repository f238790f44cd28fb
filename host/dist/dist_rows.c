/* The rows a rank exchanges, packed and unpacked on the device: the records of the particles
 * at a list of slots gathered into one packed block, which alone is read to the host, and a
 * scatter of received rows to their slots, so that only the exchanged particles' bytes cross
 * the bus. The copies are the core's solver-neutral passes gather_column and scatter_rows
 * (sim/particles.h, cl/sim/particles.cl); this file holds their slots and packed rows. */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"

#include <stdlib.h>
#include <string.h>

pbfcl_status dist_rows_create(dist_rows *r, pbfcl_sim *sim)
{
    memset(r, 0, sizeof *r);
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    r->cl = v.cl;
    r->particles = v.particles;
    return PBFCL_OK;
}

void dist_rows_release(dist_rows *r)
{
    cl_mem *bufs[] = {&r->slots, &r->packed};
    for (int b = 0; b < 2; b++)
        if (*bufs[b])
            clReleaseMemObject(*bufs[b]);
    memset(r, 0, sizeof *r);
}

/* A device buffer of at least bytes (grown by half again as needed). */
static pbfcl_status ensure(pbfcl_cl *cl, cl_mem *buf, size_t *cap, size_t bytes)
{
    if (bytes <= *cap && *buf)
        return PBFCL_OK;
    if (*buf)
        clReleaseMemObject(*buf);
    *buf = NULL;
    *cap = bytes + bytes / 2 + 64;
    return pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, *cap, "exchanged rows", buf);
}

/* Uploads slots[0..count-1] into the slots' buffer. */
static pbfcl_status upload_slots(dist_rows *r, const unsigned *slots, size_t count)
{
    PBFCL_TRY(ensure(r->cl, &r->slots, &r->slots_cap, count * 4));
    PBFCL_CL_CHECK(
        clEnqueueWriteBuffer(r->cl->queue, r->slots, CL_FALSE, 0, count * 4, slots, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status dist_rows_records(dist_rows *r, pbfcl_sim *sim, const unsigned *slots, size_t count,
                               size_t record, void *out)
{
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(ensure(r->cl, &r->packed, &r->packed_cap, count * record));
    PBFCL_TRY(upload_slots(r, slots, count));
    size_t at = 0, elem;
    cl_mem buf;
    for (size_t row = 0; pbfcl_sim_record_row(sim, row, &buf, &elem, NULL); row++) {
        PBFCL_TRY(pbfcl_particles_gather_column(r->particles, buf, elem / 4, r->slots, count,
                                                record / 4, at / 4, r->packed));
        at += elem;
    }
    PBFCL_CL_CHECK(clEnqueueReadBuffer(r->cl->queue, r->packed, CL_TRUE, 0, count * record, out, 0,
                                       NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status dist_rows_scatter(dist_rows *r, cl_mem buf, size_t elem, const unsigned *slots,
                               size_t count, const void *in)
{
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(ensure(r->cl, &r->packed, &r->packed_cap, count * elem));
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(r->cl->queue, r->packed, CL_FALSE, 0, count * elem, in, 0,
                                        NULL, NULL));
    PBFCL_TRY(upload_slots(r, slots, count));
    PBFCL_TRY(
        pbfcl_particles_scatter_rows(r->particles, r->packed, elem / 4, r->slots, count, buf));
    PBFCL_CL_CHECK(clFinish(r->cl->queue)); /* in and slots are the caller's until then */
    return PBFCL_OK;
}
