/* The multilevel coarse correction of a split simulation (docs/DISTRIBUTED.md, "The multilevel
 * correction"): every rank makes the grid over the whole box, gathers the compression of the
 * particles it owns into it (its ghosts are their owners' to count), and the ranks add their
 * sums, counts and (with shapes) touch words, whose 5-bit fields count the ranks that set them,
 * so that every rank solves the same grid to the same phi and moves its own
 * particles by it, and its ghosts as their owners move them (the same phi at the same x* and
 * x): nothing is exchanged after the correction. The sums are integers (fixed point), so the
 * added grid is the one a single device gathers, in any order. */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"

#include <stdlib.h>

pbfcl_status dist_ml_ghosts(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem, int count)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    if (count != 1 || elem[0] != 1 || v.n == 0)
        return PBFCL_OK;
    if (d->ghost.count > 0 && !d->xchg.ghosts_valid) {
        pbfcl_errorf("the split's ghosts are not flagged in the current order at the multilevel "
                     "correction (internal error)");
        return PBFCL_ERR_SIMULATION;
    }
    if (d->ghost.count > 0)
        PBFCL_CL_CHECK(
            clEnqueueCopyBuffer(v.cl->queue, d->xchg.ghost_buf, bufs[0], 0, 0, v.n, 0, NULL, NULL));
    else {
        static const cl_uchar none = 0;
        PBFCL_CL_CHECK(
            clEnqueueFillBuffer(v.cl->queue, bufs[0], &none, sizeof none, 0, v.n, 0, NULL, NULL));
    }
    return PBFCL_OK;
}

pbfcl_status dist_ml_sums(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem, int count)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    dist_part(d, PBFCL_DIST_PART_VALUES);
    for (int b = 0; b < count; b++) {
        size_t words = elem[b] / 4;
        int *mine = malloc(elem[b] + 4);
        cl_int err = mine ? clEnqueueReadBuffer(v.cl->queue, bufs[b], CL_TRUE, 0, elem[b], mine, 0,
                                                NULL, NULL)
                          : CL_SUCCESS;
        int failed = mine == NULL || err != CL_SUCCESS, any = 0;
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, d->comm); /* all sum, or none */
        if (any) {
            bool no_memory = mine == NULL;
            free(mine);
            PBFCL_CL_CHECK(err); /* this rank's read failed: its own message */
            if (no_memory)
                pbfcl_errorf("rank %d: out of host memory for the multilevel correction's grid "
                             "(%zu bytes)",
                             d->rank, elem[b]);
            else
                pbfcl_errorf("rank %d: another rank failed to read its multilevel grid", d->rank);
            return no_memory ? PBFCL_ERR_OUT_OF_MEMORY : PBFCL_ERR_OPENCL;
        }
        MPI_Allreduce(MPI_IN_PLACE, mine, (int)words, MPI_INT, MPI_SUM, d->comm);
        err = clEnqueueWriteBuffer(v.cl->queue, bufs[b], CL_TRUE, 0, elem[b], mine, 0, NULL, NULL);
        free(mine);
        PBFCL_CL_CHECK(err);
    }
    return PBFCL_OK;
}
