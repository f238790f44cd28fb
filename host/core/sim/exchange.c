/* The device side of a split simulation's exchanges (exchange.h, cl/sim/exchange.cl): the fates'
 * classification, the scan and the lists, the slots after the sort, and pinned host staging. */
#include "sim/exchange.h"

#include "runtime/programs.h"

#include <string.h>

#define EXCHANGE_WG_MAX 256u

#define EXCHANGE_ARG(k, i, v) PBFCL_CL_CHECK(clSetKernelArg((k), (i), sizeof(v), &(v)))

pbfcl_status pbfcl_pinned_reserve(pbfcl_cl *cl, pbfcl_pinned *p, size_t bytes)
{
    if (p->buf && bytes <= p->cap)
        return PBFCL_OK;
    pbfcl_pinned_release(cl, p);
    size_t cap = bytes + bytes / 2 + 256;
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, cap, "pinned staging",
                              &p->buf));
    cl_int err;
    p->ptr = clEnqueueMapBuffer(cl->queue, p->buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, cap, 0,
                                NULL, NULL, &err);
    if (err != CL_SUCCESS)
        pbfcl_cl_release_buffer(&p->buf);
    PBFCL_CL_CHECK(err);
    p->cap = cap;
    return PBFCL_OK;
}

void pbfcl_pinned_release(pbfcl_cl *cl, pbfcl_pinned *p)
{
    if (p->buf && p->ptr) {
        clEnqueueUnmapMemObject(cl->queue, p->buf, p->ptr, 0, NULL, NULL);
        clFinish(cl->queue);
    }
    pbfcl_cl_release_buffer(&p->buf);
    p->ptr = NULL;
    p->cap = 0;
}

void pbfcl_exchange_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    size_t wg = 1; /* the largest power of two the device allows, up to EXCHANGE_WG_MAX */
    while (wg * 2 <= dev->max_wg && wg * 2 <= EXCHANGE_WG_MAX)
        wg *= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
}

static pbfcl_status build(pbfcl_exchange *x)
{
    pbfcl_build_config cfg;
    pbfcl_exchange_build_config(&x->cl->dev, &cfg);
    x->wg = cfg.wg_size;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_EXCHANGE);
    PBFCL_TRY(pbfcl_cl_build(x->cl, desc->files, desc->nfiles, options, &x->program));
    const char *names[] = {"exchange_classify", "exchange_lists", "exchange_sorted",
                           "exchange_slots",    "exchange_pick",  "exchange_extent",
                           "exchange_histogram"};
    cl_kernel *kernels[] = {&x->classify, &x->lists,  &x->sorted,   &x->slots,
                            &x->pick,     &x->extent, &x->histogram};
    for (int k = 0; k < 7; k++) {
        PBFCL_TRY(pbfcl_cl_kernel(x->program, names[k], kernels[k]));
        PBFCL_TRY(pbfcl_cl_check_launch(x->cl, *kernels[k], names[k], x->wg, 0));
    }
    return PBFCL_OK;
}

static pbfcl_status create(pbfcl_exchange *x, const float *bounds)
{
    PBFCL_TRY(build(x));
    size_t c = x->capacity;
    PBFCL_TRY(pbfcl_scan_create(&x->scan, x->cl, 2 * c + 1));
    struct {
        cl_mem *buf;
        size_t bytes;
        const char *what;
    } bufs[] = {{&x->bounds_buf, 3 * (size_t)x->ranks * sizeof(float), "exchange bounds"},
                {&x->fate_buf, c * 4, "exchange fates"},
                {&x->flags_buf, (2 * c + 1) * 4, "exchange flags"},
                {&x->keep_buf, c * 4, "exchange keep list"},
                {&x->ghost_buf, c, "exchange ghost flags"}};
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++) { /* whole host writes: see grow */
        PBFCL_TRY(
            pbfcl_cl_buffer(x->cl, CL_MEM_READ_WRITE, bufs[b].bytes, bufs[b].what, bufs[b].buf));
        PBFCL_TRY(pbfcl_cl_write_zeros(x->cl, *bufs[b].buf, bufs[b].bytes));
    }
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(x->cl->queue, x->bounds_buf, CL_TRUE, 0,
                                        3 * (size_t)x->ranks * sizeof(float), bounds, 0, NULL,
                                        NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_exchange_create(pbfcl_exchange *x, pbfcl_cl *cl, size_t capacity, int axis,
                                   int rank, int ranks, const float *bounds)
{
    memset(x, 0, sizeof *x);
    if (ranks < 1 || ranks > PBFCL_EXCHANGE_MAX_RANKS || rank < 0 || rank >= ranks || axis < 0 ||
        axis > 2) {
        pbfcl_errorf("exchange: rank %d of %d along axis %d: at most %d ranks, axis 0 to 2", rank,
                     ranks, axis, PBFCL_EXCHANGE_MAX_RANKS);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    x->cl = cl;
    x->capacity = capacity;
    x->axis = axis;
    x->rank = rank;
    x->ranks = ranks;
    pbfcl_status st = create(x, bounds);
    if (st != PBFCL_OK)
        pbfcl_exchange_destroy(x);
    return st;
}

void pbfcl_exchange_destroy(pbfcl_exchange *x)
{
    if (!x->cl) {
        memset(x, 0, sizeof *x);
        return;
    }
    pbfcl_pinned_release(x->cl, &x->host);
    pbfcl_scan_destroy(&x->scan);
    cl_mem *bufs[] = {&x->bounds_buf, &x->fate_buf, &x->flags_buf,  &x->keep_buf,  &x->ghost_buf,
                      &x->list_buf,   &x->old_buf,  &x->extent_buf, &x->counts_buf};
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
        pbfcl_cl_release_buffer(bufs[b]);
    cl_kernel kernels[] = {x->classify, x->lists,  x->sorted,   x->slots,
                           x->pick,     x->extent, x->histogram};
    for (int k = 0; k < 7; k++)
        if (kernels[k])
            clReleaseKernel(kernels[k]);
    if (x->program)
        clReleaseProgram(x->program);
    memset(x, 0, sizeof *x);
}

/* A device buffer of at least bytes, grown by half again as needed (contents lost), written
 * whole from the host once when made: Oclgrind keeps the record of a released buffer's
 * initialised bytes for the next buffer of its number (docs/ALGORITHM.md, "Oclgrind and reused
 * buffers"), and a whole host write replaces it. */
static pbfcl_status grow(pbfcl_cl *cl, cl_mem *buf, size_t *cap, size_t bytes, const char *what)
{
    if (*buf && bytes <= *cap)
        return PBFCL_OK;
    pbfcl_cl_release_buffer(buf);
    *cap = bytes + bytes / 2 + 256;
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, *cap, what, buf));
    return pbfcl_cl_write_zeros(cl, *buf, *cap);
}

static pbfcl_status check_count(const pbfcl_exchange *x, size_t n)
{
    if (n <= x->capacity)
        return PBFCL_OK;
    pbfcl_errorf("exchange: %zu particles exceed the capacity of %zu", n, x->capacity);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* The fates and flags of n slots, then their scan (in place). */
static pbfcl_status classify_scan(pbfcl_exchange *x, cl_mem pred_buf, size_t n,
                                  pbfcl_exchange_mode mode)
{
    cl_kernel k = x->classify;
    cl_uint use_ghost = x->ghosts_valid != 0, un = (cl_uint)n, axis = (cl_uint)x->axis;
    cl_uint rank = (cl_uint)x->rank, ranks = (cl_uint)x->ranks, m = (cl_uint)mode;
    EXCHANGE_ARG(k, 0, pred_buf);
    EXCHANGE_ARG(k, 1, x->ghost_buf);
    EXCHANGE_ARG(k, 2, use_ghost);
    EXCHANGE_ARG(k, 3, un);
    EXCHANGE_ARG(k, 4, axis);
    EXCHANGE_ARG(k, 5, rank);
    EXCHANGE_ARG(k, 6, ranks);
    EXCHANGE_ARG(k, 7, x->bounds_buf);
    EXCHANGE_ARG(k, 8, m);
    EXCHANGE_ARG(k, 9, x->fate_buf);
    EXCHANGE_ARG(k, 10, x->flags_buf);
    PBFCL_TRY(pbfcl_cl_launch(x->cl, k, n + 1, x->wg, NULL, PBFCL_STAGE_OTHER));
    size_t scanned = mode == PBFCL_EXCHANGE_GHOSTS ? n + 1 : 2 * n + 1;
    return pbfcl_scan_exclusive(&x->scan, x->flags_buf, x->flags_buf, scanned, NULL,
                                PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_exchange_classify(pbfcl_exchange *x, cl_mem pred_buf, size_t n,
                                     pbfcl_exchange_mode mode, size_t *sent, size_t *kept,
                                     const cl_uint **list)
{
    PBFCL_TRY(check_count(x, n));
    *sent = *kept = 0;
    PBFCL_TRY(pbfcl_pinned_reserve(x->cl, &x->host, 64));
    *list = x->host.ptr;
    if (n == 0)
        return PBFCL_OK;
    PBFCL_TRY(classify_scan(x, pred_buf, n, mode));
    cl_uint *totals = x->host.ptr; /* the scan at n (sent) and at 2n (sent and kept) */
    totals[1] = 0;
    if (mode != PBFCL_EXCHANGE_GHOSTS)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(x->cl->queue, x->flags_buf, CL_FALSE, 2 * n * 4, 4,
                                           &totals[1], 0, NULL, NULL));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(x->cl->queue, x->flags_buf, CL_TRUE, n * 4, 4, &totals[0], 0,
                                       NULL, NULL));
    *sent = totals[0];
    *kept = mode != PBFCL_EXCHANGE_GHOSTS ? totals[1] - totals[0] : 0;
    PBFCL_TRY(grow(x->cl, &x->list_buf, &x->list_cap, *sent * 8 + 8, "exchange list"));
    cl_kernel k = x->lists;
    cl_uint un = (cl_uint)n, m = (cl_uint)mode;
    EXCHANGE_ARG(k, 0, x->flags_buf);
    EXCHANGE_ARG(k, 1, x->fate_buf);
    EXCHANGE_ARG(k, 2, un);
    EXCHANGE_ARG(k, 3, m);
    EXCHANGE_ARG(k, 4, x->list_buf);
    EXCHANGE_ARG(k, 5, x->keep_buf);
    PBFCL_TRY(pbfcl_cl_launch(x->cl, k, n, x->wg, NULL, PBFCL_STAGE_OTHER));
    PBFCL_TRY(pbfcl_pinned_reserve(x->cl, &x->host, *sent * 8 + 8));
    *list = x->host.ptr;
    if (*sent > 0)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(x->cl->queue, x->list_buf, CL_TRUE, 0, *sent * 8,
                                           x->host.ptr, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_exchange_sorted(pbfcl_exchange *x, cl_mem index_buf, size_t n, size_t owned)
{
    PBFCL_TRY(check_count(x, n));
    cl_kernel k = x->sorted;
    cl_uint un = (cl_uint)n, uo = (cl_uint)owned;
    EXCHANGE_ARG(k, 0, index_buf);
    EXCHANGE_ARG(k, 1, un);
    EXCHANGE_ARG(k, 2, uo);
    EXCHANGE_ARG(k, 3, x->fate_buf);
    EXCHANGE_ARG(k, 4, x->ghost_buf);
    PBFCL_TRY(pbfcl_cl_launch(x->cl, k, n, x->wg, NULL, PBFCL_STAGE_OTHER));
    x->ghosts_valid = 1;
    return PBFCL_OK;
}

pbfcl_status pbfcl_exchange_slots(pbfcl_exchange *x, const cl_uint *old, size_t listed,
                                  size_t count, size_t base, cl_mem out_buf, cl_uint *out)
{
    if (count == 0)
        return PBFCL_OK;
    pbfcl_cl *cl = x->cl;
    PBFCL_TRY(grow(cl, &x->old_buf, &x->old_cap, listed * 4 + 4, "exchange old slots"));
    PBFCL_TRY(pbfcl_pinned_reserve(cl, &x->host, (listed > count ? listed : count) * 4));
    if (listed > 0) { /* blocking: the staging is reused at once */
        memcpy(x->host.ptr, old, listed * 4);
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(cl->queue, x->old_buf, CL_TRUE, 0, listed * 4,
                                            x->host.ptr, 0, NULL, NULL));
    }
    cl_kernel k = x->slots;
    cl_uint ul = (cl_uint)listed, uc = (cl_uint)count, ub = (cl_uint)base;
    EXCHANGE_ARG(k, 0, x->fate_buf);
    EXCHANGE_ARG(k, 1, x->old_buf);
    EXCHANGE_ARG(k, 2, ul);
    EXCHANGE_ARG(k, 3, uc);
    EXCHANGE_ARG(k, 4, ub);
    EXCHANGE_ARG(k, 5, out_buf);
    PBFCL_TRY(pbfcl_cl_launch(cl, k, count, x->wg, NULL, PBFCL_STAGE_OTHER));
    if (!out)
        return PBFCL_OK;
    PBFCL_CL_CHECK(
        clEnqueueReadBuffer(cl->queue, out_buf, CL_TRUE, 0, count * 4, x->host.ptr, 0, NULL, NULL));
    memcpy(out, x->host.ptr, count * 4);
    return PBFCL_OK;
}

pbfcl_status pbfcl_exchange_pick(pbfcl_exchange *x, cl_mem src_buf, size_t m, cl_mem out_buf)
{
    cl_kernel k = x->pick;
    cl_uint um = (cl_uint)m;
    EXCHANGE_ARG(k, 0, src_buf);
    EXCHANGE_ARG(k, 1, x->keep_buf);
    EXCHANGE_ARG(k, 2, um);
    EXCHANGE_ARG(k, 3, out_buf);
    return pbfcl_cl_launch(x->cl, k, m, x->wg, NULL, PBFCL_STAGE_OTHER);
}
