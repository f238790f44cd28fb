/* The rebalancing's histogram on the device (exchange.h, cl/sim/exchange.cl's exchange_extent
 * and exchange_histogram): the extent of the particles along the split axis and their counts
 * per bin, reduced in work-groups so that only a few floats and the bins reach the host. */
#include "sim/exchange.h"

#include <math.h>
#include <string.h>

#define EXCHANGE_ARG(k, i, v) PBFCL_CL_CHECK(clSetKernelArg((k), (i), sizeof(v), &(v)))

/* Work-groups per compute unit striding over the particles. */
#define GROUPS_PER_UNIT 4

/* The work-groups for n particles: enough to fill the device, no more than the particles need. */
static size_t groups_for(const pbfcl_exchange *x, size_t n)
{
    size_t most =
        GROUPS_PER_UNIT * (size_t)(x->cl->dev.compute_units ? x->cl->dev.compute_units : 1);
    size_t need = (n + x->wg - 1) / x->wg;
    return need < 1 ? 1 : need < most ? need : most;
}

/* A buffer of at least bytes, remade larger as needed (contents lost). */
static pbfcl_status reserve(pbfcl_cl *cl, cl_mem *buf, size_t *cap, size_t bytes, const char *what)
{
    if (*buf && bytes <= *cap)
        return PBFCL_OK;
    pbfcl_cl_release_buffer(buf);
    *cap = 0;
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, bytes, what, buf));
    *cap = bytes;
    return PBFCL_OK;
}

pbfcl_status pbfcl_exchange_extent(pbfcl_exchange *x, cl_mem pos_buf, size_t n, float *lo,
                                   float *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    if (n == 0)
        return PBFCL_OK;
    size_t groups = groups_for(x, n);
    PBFCL_TRY(reserve(x->cl, &x->extent_buf, &x->extent_cap, 8 * groups, "exchange extent"));
    cl_kernel k = x->extent;
    cl_uint un = (cl_uint)n, axis = (cl_uint)x->axis, ug = (cl_uint)groups;
    EXCHANGE_ARG(k, 0, pos_buf);
    EXCHANGE_ARG(k, 1, un);
    EXCHANGE_ARG(k, 2, axis);
    EXCHANGE_ARG(k, 3, ug);
    EXCHANGE_ARG(k, 4, x->extent_buf);
    PBFCL_TRY(pbfcl_cl_launch(x->cl, k, groups * x->wg, x->wg, NULL, PBFCL_STAGE_OTHER));
    PBFCL_TRY(pbfcl_pinned_reserve(x->cl, &x->host, 8 * groups));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(x->cl->queue, x->extent_buf, CL_TRUE, 0, 8 * groups,
                                       x->host.ptr, 0, NULL, NULL));
    const float *part = x->host.ptr;
    for (size_t g = 0; g < groups; g++) {
        *lo = fminf(*lo, part[2 * g]);
        *hi = fmaxf(*hi, part[2 * g + 1]);
    }
    return PBFCL_OK;
}

/* The bins a work-group counts in local memory: as many as the device's local memory holds
 * beside what the kernel takes itself, at most bins. */
static pbfcl_status tile_for(pbfcl_exchange *x, size_t bins, size_t *tile)
{
    if (x->tile == 0) {
        cl_ulong own = 0;
        PBFCL_CL_CHECK(clGetKernelWorkGroupInfo(x->histogram, x->cl->dev.device,
                                                CL_KERNEL_LOCAL_MEM_SIZE, sizeof own, &own, NULL));
        x->tile = x->cl->dev.local_mem > own ? (size_t)(x->cl->dev.local_mem - own) / 4 : 0;
    }
    *tile = x->tile < bins ? x->tile : bins;
    if (*tile == 0) {
        pbfcl_errorf("exchange_histogram: %s has %llu bytes of local memory, too little for one "
                     "bin",
                     x->cl->dev.device_name, (unsigned long long)x->cl->dev.local_mem);
        return PBFCL_ERR_DEVICE_LIMIT;
    }
    return pbfcl_cl_check_launch(x->cl, x->histogram, "exchange_histogram", x->wg, *tile * 4);
}

pbfcl_status pbfcl_exchange_histogram(pbfcl_exchange *x, cl_mem pos_buf, size_t n, float lo,
                                      float scale, size_t bins, cl_uint *counts)
{
    if (bins < 1 || bins > (1u << 24)) {
        pbfcl_errorf("exchange_histogram: %zu bins: give 1 to %u", bins, 1u << 24);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    memset(counts, 0, bins * sizeof *counts);
    if (n == 0)
        return PBFCL_OK;
    size_t tile, groups = groups_for(x, n);
    PBFCL_TRY(tile_for(x, bins, &tile));
    PBFCL_TRY(reserve(x->cl, &x->counts_buf, &x->counts_cap, 4 * bins, "exchange histogram"));
    /* zeros by a host write: the kernel adds to them (cl_write_zeros on Oclgrind's checks) */
    PBFCL_TRY(pbfcl_cl_write_zeros(x->cl, x->counts_buf, 4 * bins));
    cl_kernel k = x->histogram;
    cl_uint un = (cl_uint)n, axis = (cl_uint)x->axis, ub = (cl_uint)bins, ug = (cl_uint)groups;
    EXCHANGE_ARG(k, 0, pos_buf);
    EXCHANGE_ARG(k, 1, un);
    EXCHANGE_ARG(k, 2, axis);
    EXCHANGE_ARG(k, 3, lo);
    EXCHANGE_ARG(k, 4, scale);
    EXCHANGE_ARG(k, 5, ub);
    EXCHANGE_ARG(k, 8, ug);
    PBFCL_CL_CHECK(clSetKernelArg(k, 9, tile * 4, NULL));
    EXCHANGE_ARG(k, 10, x->counts_buf);
    for (size_t first = 0; first < bins; first += tile) { /* a launch per tile of bins */
        cl_uint uf = (cl_uint)first, uw = (cl_uint)(bins - first < tile ? bins - first : tile);
        EXCHANGE_ARG(k, 6, uf);
        EXCHANGE_ARG(k, 7, uw);
        PBFCL_TRY(pbfcl_cl_launch(x->cl, k, groups * x->wg, x->wg, NULL, PBFCL_STAGE_OTHER));
    }
    PBFCL_CL_CHECK(clEnqueueReadBuffer(x->cl->queue, x->counts_buf, CL_TRUE, 0, 4 * bins, counts, 0,
                                       NULL, NULL));
    return PBFCL_OK;
}
