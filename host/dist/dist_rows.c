/* The rows a rank exchanges, packed and unpacked on the device: a gather of the rows at a list
 * of slots into a packed buffer, which alone is read to the host, and a scatter of received
 * rows to their slots, so that only the exchanged particles' bytes cross the bus. Two copy
 * kernels of the layer's own, built from the source below. */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"

#include <stdlib.h>
#include <string.h>

/* Rows of `words` 32-bit words; item g copies word g % words of row g / words. */
static const char dist_rows_source[] =
    "__kernel void dist_gather(__global const uint *src, __global const uint *slots,\n"
    "                          uint count, uint words, __global uint *out)\n"
    "{\n"
    "    uint g = get_global_id(0);\n"
    "    if (g >= count * words)\n"
    "        return;\n"
    "    uint row = g / words;\n"
    "    out[g] = src[slots[row] * words + (g - row * words)];\n"
    "}\n"
    "__kernel void dist_scatter(__global const uint *in, __global const uint *slots,\n"
    "                           uint count, uint words, __global uint *dst)\n"
    "{\n"
    "    uint g = get_global_id(0);\n"
    "    if (g >= count * words)\n"
    "        return;\n"
    "    uint row = g / words;\n"
    "    dst[slots[row] * words + (g - row * words)] = in[g];\n"
    "}\n";

pbfcl_status dist_rows_create(dist_rows *r, pbfcl_cl *cl)
{
    memset(r, 0, sizeof *r);
    r->cl = cl;
    const char *src = dist_rows_source;
    cl_int err;
    r->program = clCreateProgramWithSource(cl->context, 1, &src, NULL, &err);
    PBFCL_CL_CHECK(err);
    err = clBuildProgram(r->program, 1, &cl->dev.device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        pbfcl_errorf("building the exchange's copy kernels failed (OpenCL error %d)", err);
        return PBFCL_ERR_OPENCL;
    }
    r->gather = clCreateKernel(r->program, "dist_gather", &err);
    PBFCL_CL_CHECK(err);
    r->scatter = clCreateKernel(r->program, "dist_scatter", &err);
    PBFCL_CL_CHECK(err);
    /* a fixed work-group size: a varying one (left to the driver) made PoCL build a kernel
     * variant for every new row count */
    r->wg = 1;
    while (r->wg * 2 <= 64 && r->wg * 2 <= cl->dev.max_wg)
        r->wg *= 2;
    PBFCL_TRY(pbfcl_cl_check_launch(cl, r->gather, "dist_gather", r->wg, 0));
    return pbfcl_cl_check_launch(cl, r->scatter, "dist_scatter", r->wg, 0);
}

void dist_rows_release(dist_rows *r)
{
    cl_mem *bufs[] = {&r->slots, &r->packed};
    for (int b = 0; b < 2; b++)
        if (*bufs[b])
            clReleaseMemObject(*bufs[b]);
    if (r->gather)
        clReleaseKernel(r->gather);
    if (r->scatter)
        clReleaseKernel(r->scatter);
    if (r->program)
        clReleaseProgram(r->program);
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

/* Uploads slots[0..count-1] and launches k over the rows of buf (elem bytes each). */
static pbfcl_status launch(dist_rows *r, cl_kernel k, cl_mem buf, size_t elem,
                           const unsigned *slots, size_t count)
{
    pbfcl_cl *cl = r->cl;
    PBFCL_TRY(ensure(cl, &r->slots, &r->slots_cap, count * 4));
    PBFCL_CL_CHECK(
        clEnqueueWriteBuffer(cl->queue, r->slots, CL_FALSE, 0, count * 4, slots, 0, NULL, NULL));
    cl_uint n = (cl_uint)count, words = (cl_uint)(elem / 4);
    /* gather: from buf into packed; scatter: from packed into buf */
    cl_mem ends[2] = {k == r->gather ? buf : r->packed, k == r->gather ? r->packed : buf};
    PBFCL_CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &ends[0]));
    PBFCL_CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &r->slots));
    PBFCL_CL_CHECK(clSetKernelArg(k, 2, sizeof n, &n));
    PBFCL_CL_CHECK(clSetKernelArg(k, 3, sizeof words, &words));
    PBFCL_CL_CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &ends[1]));
    return pbfcl_cl_launch(cl, k, count * words, r->wg, NULL, PBFCL_STAGE_OTHER);
}

pbfcl_status dist_rows_gather(dist_rows *r, cl_mem buf, size_t elem, const unsigned *slots,
                              size_t count, void *out)
{
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(ensure(r->cl, &r->packed, &r->packed_cap, count * elem));
    PBFCL_TRY(launch(r, r->gather, buf, elem, slots, count));
    PBFCL_CL_CHECK(
        clEnqueueReadBuffer(r->cl->queue, r->packed, CL_TRUE, 0, count * elem, out, 0, NULL, NULL));
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
    PBFCL_TRY(launch(r, r->scatter, buf, elem, slots, count));
    PBFCL_CL_CHECK(clFinish(r->cl->queue)); /* in and slots are the caller's until then */
    return PBFCL_OK;
}
