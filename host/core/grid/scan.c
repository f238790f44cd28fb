/* The multi-level exclusive prefix sum (see scan.h): builds scan.cl with a work-group size
 * from device queries, keeps one group-sum buffer per level, and scans recursively. */
#include "grid/scan.h"

#include "runtime/build_options.h"
#include "runtime/programs.h"

#include <string.h>

/* Largest work-group size the scan uses; more gives no gain for table-sized arrays. */
#define SCAN_MAX_WG 256
/* Local memory banks: 32 on current GPUs (seed 002's Fermi value). */
#define SCAN_LOG_NUM_BANKS 5

/* Local memory bytes scan_groups needs with work-group size wg. */
static size_t scan_local_bytes(size_t wg)
{
    size_t n = 2 * wg;
    return (n + (n >> SCAN_LOG_NUM_BANKS) + 1) * sizeof(cl_uint);
}

static size_t floor_pow2(size_t x)
{
    size_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

/* The build configuration for work-group size wg. */
static void scan_config(size_t wg, pbfcl_build_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
    cfg->log_num_banks = SCAN_LOG_NUM_BANKS;
}

/* The largest power-of-two work-group size up to wg_limit that the device and its local
 * memory allow. */
static size_t scan_device_wg(const pbfcl_device_info *dev, size_t wg_limit)
{
    size_t wg = floor_pow2(dev->max_wg < wg_limit ? dev->max_wg : wg_limit);
    while (wg > 1 && scan_local_bytes(wg) > dev->local_mem)
        wg /= 2;
    return wg;
}

void pbfcl_scan_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    scan_config(scan_device_wg(dev, SCAN_MAX_WG), cfg);
}

/* Builds the program and kernels for work-group size wg. */
static pbfcl_status scan_build(pbfcl_scan *s, size_t wg)
{
    pbfcl_build_config cfg;
    scan_config(wg, &cfg);
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_SCAN);
    PBFCL_TRY(pbfcl_cl_build(s->cl, desc->files, desc->nfiles, options, &s->program));
    PBFCL_TRY(pbfcl_cl_kernel(s->program, "scan_groups", &s->scan_groups));
    return pbfcl_cl_kernel(s->program, "add_group_sums", &s->add_group_sums);
}

static void scan_release_program(pbfcl_scan *s)
{
    if (s->scan_groups)
        clReleaseKernel(s->scan_groups);
    if (s->add_group_sums)
        clReleaseKernel(s->add_group_sums);
    if (s->program)
        clReleaseProgram(s->program);
    s->scan_groups = s->add_group_sums = NULL;
    s->program = NULL;
}

/* Chooses the work-group size (device and kernel limits, local memory), building the kernels;
 * rebuilds smaller if the built kernel allows less than the device. */
static pbfcl_status scan_choose_wg(pbfcl_scan *s, size_t wg_limit)
{
    size_t wg = scan_device_wg(&s->cl->dev, wg_limit);
    for (;;) {
        PBFCL_TRY(scan_build(s, wg));
        size_t kmax = pbfcl_cl_kernel_max_wg(s->cl, s->scan_groups);
        size_t kmax2 = pbfcl_cl_kernel_max_wg(s->cl, s->add_group_sums);
        if (kmax2 < kmax)
            kmax = kmax2;
        if (wg <= kmax || wg == 1)
            break;
        scan_release_program(s);
        wg = floor_pow2(kmax);
    }
    s->wg = wg;
    PBFCL_TRY(
        pbfcl_cl_check_launch(s->cl, s->scan_groups, "scan_groups", wg, scan_local_bytes(wg)));
    return pbfcl_cl_check_launch(s->cl, s->add_group_sums, "add_group_sums", wg, 0);
}

/* Number of blocks scan_groups uses for n elements. */
static size_t scan_blocks(const pbfcl_scan *s, size_t n)
{
    return (n + 2 * s->wg - 1) / (2 * s->wg);
}

pbfcl_status pbfcl_scan_create(pbfcl_scan *s, pbfcl_cl *cl, size_t capacity)
{
    return pbfcl_scan_create_wg(s, cl, capacity, SCAN_MAX_WG);
}

pbfcl_status pbfcl_scan_create_wg(pbfcl_scan *s, pbfcl_cl *cl, size_t capacity, size_t wg_limit)
{
    memset(s, 0, sizeof *s);
    s->cl = cl;
    s->capacity = capacity;
    if (capacity > 0xffffffffu) {
        pbfcl_errorf("scan capacity %zu exceeds 2^32-1 elements; scan fewer", capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (wg_limit < 1) {
        pbfcl_errorf("scan work-group size limit must be at least 1");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_status st = scan_choose_wg(s, wg_limit);
    size_t n = capacity;
    while (st == PBFCL_OK) {
        size_t blocks = scan_blocks(s, n);
        if (s->levels == (int)(sizeof s->sums_buf / sizeof s->sums_buf[0])) {
            pbfcl_errorf("scan of %zu elements needs more than %d levels with work-group "
                         "size %zu",
                         capacity, s->levels, s->wg);
            st = PBFCL_ERR_DEVICE_LIMIT;
            break;
        }
        st = pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, (blocks ? blocks : 1) * sizeof(cl_uint),
                             "scan group sums", &s->sums_buf[s->levels]);
        if (st == PBFCL_OK)
            s->levels++;
        if (blocks <= 1)
            break;
        n = blocks;
    }
    if (st != PBFCL_OK)
        pbfcl_scan_destroy(s);
    return st;
}

void pbfcl_scan_destroy(pbfcl_scan *s)
{
    if (!s)
        return;
    scan_release_program(s);
    for (int i = 0; i < (int)(sizeof s->sums_buf / sizeof s->sums_buf[0]); i++)
        pbfcl_cl_release_buffer(&s->sums_buf[i]);
    s->levels = 0;
}

/* Scans n elements at this level, recursing on the block sums. */
static pbfcl_status scan_level(pbfcl_scan *s, cl_mem in_buf, cl_mem out_buf, size_t n, int level,
                               pbfcl_profile *prof, pbfcl_stage stage)
{
    size_t blocks = scan_blocks(s, n);
    if (level >= s->levels) {
        pbfcl_errorf("scan of %zu elements at level %d exceeds the %d levels allocated", n, level,
                     s->levels);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cl_uint n32 = (cl_uint)n;
    cl_mem sums_buf = s->sums_buf[level];
    PBFCL_CL_CHECK(clSetKernelArg(s->scan_groups, 0, sizeof(cl_mem), &in_buf));
    PBFCL_CL_CHECK(clSetKernelArg(s->scan_groups, 1, sizeof(cl_mem), &out_buf));
    PBFCL_CL_CHECK(clSetKernelArg(s->scan_groups, 2, sizeof(cl_mem), &sums_buf));
    PBFCL_CL_CHECK(clSetKernelArg(s->scan_groups, 3, sizeof n32, &n32));
    PBFCL_TRY(pbfcl_cl_launch(s->cl, s->scan_groups, blocks * s->wg, s->wg, prof, stage));
    if (blocks <= 1)
        return PBFCL_OK;
    PBFCL_TRY(scan_level(s, sums_buf, sums_buf, blocks, level + 1, prof, stage));
    PBFCL_CL_CHECK(clSetKernelArg(s->add_group_sums, 0, sizeof(cl_mem), &out_buf));
    PBFCL_CL_CHECK(clSetKernelArg(s->add_group_sums, 1, sizeof(cl_mem), &sums_buf));
    PBFCL_CL_CHECK(clSetKernelArg(s->add_group_sums, 2, sizeof n32, &n32));
    return pbfcl_cl_launch(s->cl, s->add_group_sums, n - 2 * s->wg, s->wg, prof, stage);
}

pbfcl_status pbfcl_scan_exclusive(pbfcl_scan *s, cl_mem in_buf, cl_mem out_buf, size_t n,
                                  pbfcl_profile *prof, pbfcl_stage stage)
{
    if (n == 0)
        return PBFCL_OK;
    if (n > s->capacity) {
        pbfcl_errorf("scan of %zu elements exceeds the capacity %zu it was created for", n,
                     s->capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return scan_level(s, in_buf, out_buf, n, 0, prof, stage);
}
