/* The lists by region of a split simulation's overlap (regions.h, cl/sim/regions.cl). */
#include "sim/regions.h"

#include "runtime/programs.h"
#include "sim/exchange.h"

#include <string.h>

#define REGIONS_ARG(k, i, v) PBFCL_CL_CHECK(clSetKernelArg((k), (i), sizeof(v), &(v)))

static pbfcl_status create(pbfcl_regions *r)
{
    pbfcl_build_config cfg; /* the exchange's program: the same build, made once (cached) */
    pbfcl_exchange_build_config(&r->cl->dev, &cfg);
    r->wg = cfg.wg_size;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_EXCHANGE);
    PBFCL_TRY(pbfcl_cl_build(r->cl, desc->files, desc->nfiles, options, &r->program));
    const char *names[] = {"regions_flags", "regions_lists"};
    cl_kernel *kernels[] = {&r->flags, &r->lists};
    for (int k = 0; k < 2; k++) {
        PBFCL_TRY(pbfcl_cl_kernel(r->program, names[k], kernels[k]));
        PBFCL_TRY(pbfcl_cl_check_launch(r->cl, *kernels[k], names[k], r->wg, 0));
    }
    PBFCL_TRY(pbfcl_scan_create(&r->scan, r->cl, 2 * r->capacity + 1));
    size_t bytes = r->capacity * 4 + 4;
    PBFCL_TRY(pbfcl_cl_buffer(r->cl, CL_MEM_READ_WRITE, bytes, "region lists", &r->slots_buf));
    return pbfcl_cl_write_zeros(r->cl, r->slots_buf, bytes);
}

pbfcl_status pbfcl_regions_create(pbfcl_regions *r, pbfcl_cl *cl, size_t capacity)
{
    memset(r, 0, sizeof *r);
    r->cl = cl;
    r->capacity = capacity;
    pbfcl_status st = create(r);
    if (st != PBFCL_OK)
        pbfcl_regions_destroy(r);
    return st;
}

void pbfcl_regions_destroy(pbfcl_regions *r)
{
    if (r->cl) {
        pbfcl_scan_destroy(&r->scan);
        pbfcl_cl_release_buffer(&r->slots_buf);
        cl_kernel kernels[] = {r->flags, r->lists};
        for (int k = 0; k < 2; k++)
            if (kernels[k])
                clReleaseKernel(kernels[k]);
        if (r->program)
            clReleaseProgram(r->program);
    }
    memset(r, 0, sizeof *r);
}

pbfcl_status pbfcl_regions_make(pbfcl_regions *r, cl_mem ghost_buf, cl_mem neighbor_count_buf,
                                cl_mem neighbor_buf, size_t n, size_t max_neighbors,
                                cl_mem scratch_buf, size_t *boundary, size_t *interior)
{
    *boundary = *interior = 0;
    if (n > r->capacity) {
        pbfcl_errorf("region lists: %zu particles exceed the capacity of %zu", n, r->capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (n == 0)
        return PBFCL_OK;
    cl_uint un = (cl_uint)n, most = (cl_uint)max_neighbors;
    cl_kernel k = r->flags;
    REGIONS_ARG(k, 0, ghost_buf);
    REGIONS_ARG(k, 1, neighbor_count_buf);
    REGIONS_ARG(k, 2, neighbor_buf);
    REGIONS_ARG(k, 3, un);
    REGIONS_ARG(k, 4, most);
    REGIONS_ARG(k, 5, scratch_buf);
    PBFCL_TRY(pbfcl_cl_launch(r->cl, k, n + 1, r->wg, NULL, PBFCL_STAGE_OTHER));
    PBFCL_TRY(pbfcl_scan_exclusive(&r->scan, scratch_buf, scratch_buf, 2 * n + 1, NULL,
                                   PBFCL_STAGE_OTHER));
    k = r->lists;
    REGIONS_ARG(k, 0, scratch_buf);
    REGIONS_ARG(k, 1, un);
    REGIONS_ARG(k, 2, r->slots_buf);
    PBFCL_TRY(pbfcl_cl_launch(r->cl, k, n, r->wg, NULL, PBFCL_STAGE_OTHER));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(r->cl->queue, scratch_buf, CL_FALSE, n * 4, 4, &r->counts[0],
                                       0, NULL, NULL));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(r->cl->queue, scratch_buf, CL_TRUE, 2 * n * 4, 4,
                                       &r->counts[1], 0, NULL, NULL));
    *boundary = r->counts[0];
    *interior = r->counts[1] - r->counts[0];
    return PBFCL_OK;
}
