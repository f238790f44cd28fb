/* The stable LSD radix sort of (key, value) pairs (see radix_sort.h): per pass a digit
 * histogram per tile, an exclusive scan of each digit's row of the table, and a scatter that
 * ranks each tile locally; passes ping-pong between the caller's buffers and temporaries. */
#include "grid/radix_sort.h"

#include "runtime/build_options.h"
#include "runtime/programs.h"

#include <string.h>

#define SORT_LOG_NUM_BANKS 5
#define SORT_RANK_LANES 8
#define SORT_SCAN_CHUNK 16 /* radix_sort.cl SCAN_CHUNK */

static size_t floor_pow2(size_t x)
{
    size_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

static size_t padded(size_t n)
{
    return n + (n >> SORT_LOG_NUM_BANKS) + 1;
}

/* Local words of the kernels' work-group scan array (radix_sort.cl SCAN_GROUP_SIZE). */
static size_t scan_group_words(size_t wg)
{
    return padded(wg) + wg / SORT_SCAN_CHUNK + 1;
}

/* Local memory bytes radix_scatter needs (radix_histogram needs less). */
static size_t scatter_local_bytes(size_t wg, size_t items, unsigned radix_bits)
{
    size_t words = padded(wg * items) + SORT_RANK_LANES * wg + scan_group_words(wg) +
                   2 * ((size_t)1 << radix_bits);
    return words * sizeof(cl_uint);
}

static pbfcl_status sort_check_config(const pbfcl_cl *cl, const pbfcl_radix_sort_config *c)
{
    if (c->radix_bits < 1 || c->radix_bits > 8 || c->items < 4 || c->items % 4 || c->wg < 16 ||
        c->wg != floor_pow2(c->wg) || c->wg * c->items > 32768 || c->tiles_per_group > 64) {
        pbfcl_errorf("radix sort configuration radix_bits=%u items=%zu wg=%zu tiles_per_group=%u "
                     "is invalid: radix bits 1..8, items a multiple of 4, wg a power of two >= "
                     "16, wg * items <= 32768, tiles per group 0..64",
                     c->radix_bits, c->items, c->wg, c->tiles_per_group);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    size_t local = scatter_local_bytes(c->wg, c->items, c->radix_bits);
    if (c->wg > cl->dev.max_wg || local > cl->dev.local_mem) {
        pbfcl_errorf("radix sort with wg=%zu items=%zu needs work-group size %zu and %zu bytes "
                     "of local memory; %s allows %zu and %llu: use fewer items or a smaller wg",
                     c->wg, c->items, c->wg, local, cl->dev.device_name, cl->dev.max_wg,
                     (unsigned long long)cl->dev.local_mem);
        return PBFCL_ERR_DEVICE_LIMIT;
    }
    return PBFCL_OK;
}

pbfcl_radix_sort_config pbfcl_radix_sort_default_config(const pbfcl_device_info *dev)
{
    /* One tile per work-group: on an H200 4 or 8 tiles per group halved the histogram and
     * table scan times at 2^24 pairs but gained nothing overall, and cost small sorts their
     * parallelism (2^20 pairs: 0.111 ms at 1 tile, 0.182 ms at 4). */
    /* 20 keys per work-item: on an H200 (2^24 pairs, 24 bits) 0.796 ms against 0.843 at 16
     * and 0.944 at 12, with the row-sum counter scan; 2^20 pairs 0.114 against 0.108. */
    pbfcl_radix_sort_config c = {8, 20, 256, 1};
    size_t max_wg = floor_pow2(dev->max_wg);
    if (c.wg > max_wg)
        c.wg = max_wg;
    while (c.items > 4 && scatter_local_bytes(c.wg, c.items, c.radix_bits) > dev->local_mem)
        c.items -= 4;
    while (c.wg > 16 && scatter_local_bytes(c.wg, c.items, c.radix_bits) > dev->local_mem)
        c.wg /= 2;
    return c;
}

void pbfcl_radix_sort_build_config(const pbfcl_radix_sort_config *c, pbfcl_build_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)c->wg;
    cfg->radix_bits = c->radix_bits;
    cfg->sort_items = (unsigned)c->items;
    cfg->log_num_banks = SORT_LOG_NUM_BANKS;
}

static pbfcl_status sort_build(pbfcl_radix_sort *s, const pbfcl_radix_sort_config *c)
{
    pbfcl_build_config cfg;
    pbfcl_radix_sort_build_config(c, &cfg);
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_RADIX_SORT);
    PBFCL_TRY(pbfcl_cl_build(s->cl, desc->files, desc->nfiles, options, &s->program));
    PBFCL_TRY(pbfcl_cl_kernel(s->program, "radix_histogram", &s->histogram));
    PBFCL_TRY(pbfcl_cl_kernel(s->program, "radix_scan_rows", &s->scan_rows));
    PBFCL_TRY(pbfcl_cl_kernel(s->program, "radix_scatter", &s->scatter));
    PBFCL_TRY(pbfcl_cl_check_launch(s->cl, s->histogram, "radix_histogram", c->wg,
                                    ((size_t)1 << c->radix_bits) * sizeof(cl_uint)));
    PBFCL_TRY(pbfcl_cl_check_launch(s->cl, s->scan_rows, "radix_scan_rows", c->wg,
                                    (scan_group_words(c->wg) + c->wg + 1) * sizeof(cl_uint)));
    return pbfcl_cl_check_launch(s->cl, s->scatter, "radix_scatter", c->wg,
                                 scatter_local_bytes(c->wg, c->items, c->radix_bits));
}

/* Allocates the ping-pong temporaries and the histogram table, checking memory first; their
 * zeros written from the host (pbfcl_cl_write_zeros: under Oclgrind a buffer number reused from
 * a smaller buffer would otherwise keep the old record, and the passes' writes past it would
 * read as uninitialised in the next pass). */
static pbfcl_status sort_allocate(pbfcl_radix_sort *s, size_t capacity)
{
    size_t tiles = (capacity + s->tile - 1) / s->tile;
    size_t table = tiles << s->radix_bits;
    size_t pair_bytes = capacity * sizeof(cl_uint);
    PBFCL_TRY(pbfcl_cl_check_memory(s->cl, 6ull * pair_bytes + table * sizeof(cl_uint), pair_bytes,
                                    "radix sort"));
    struct {
        cl_mem *buf;
        size_t bytes;
        const char *name;
    } bufs[] = {
        {&s->keys_tmp2_buf, pair_bytes, "radix sort keys"},
        {&s->values_tmp2_buf, pair_bytes, "radix sort values"},
        {&s->keys_tmp_buf, pair_bytes, "radix sort keys"},
        {&s->values_tmp_buf, pair_bytes, "radix sort values"},
        {&s->histogram_buf, table * sizeof(cl_uint), "radix sort histogram table"},
        {&s->totals_buf, ((size_t)1 << s->radix_bits) * sizeof(cl_uint), "radix sort digit totals"},
    };
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++) {
        PBFCL_TRY(
            pbfcl_cl_buffer(s->cl, CL_MEM_READ_WRITE, bufs[b].bytes, bufs[b].name, bufs[b].buf));
        PBFCL_TRY(pbfcl_cl_write_zeros(s->cl, *bufs[b].buf, bufs[b].bytes));
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_radix_sort_create_with(pbfcl_radix_sort *s, pbfcl_cl *cl, size_t capacity,
                                          const pbfcl_radix_sort_config *config)
{
    memset(s, 0, sizeof *s);
    s->cl = cl;
    pbfcl_status st = sort_check_config(cl, config);
    if (st != PBFCL_OK)
        return st;
    if (capacity > 0xffffffffu - 65536u) {
        pbfcl_errorf("radix sort capacity %zu exceeds 2^32 - 65537 pairs; sort fewer", capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    s->wg = config->wg;
    s->tile = config->wg * config->items;
    s->tiles_per_group = config->tiles_per_group ? config->tiles_per_group : 1;
    s->radix_bits = config->radix_bits;
    s->capacity = capacity;
    st = sort_build(s, config);
    if (st == PBFCL_OK)
        st = sort_allocate(s, capacity);
    if (st != PBFCL_OK)
        pbfcl_radix_sort_destroy(s);
    return st;
}

pbfcl_status pbfcl_radix_sort_create(pbfcl_radix_sort *s, pbfcl_cl *cl, size_t capacity)
{
    pbfcl_radix_sort_config c = pbfcl_radix_sort_default_config(&cl->dev);
    return pbfcl_radix_sort_create_with(s, cl, capacity, &c);
}

void pbfcl_radix_sort_destroy(pbfcl_radix_sort *s)
{
    if (!s)
        return;
    if (s->histogram)
        clReleaseKernel(s->histogram);
    if (s->scan_rows)
        clReleaseKernel(s->scan_rows);
    if (s->scatter)
        clReleaseKernel(s->scatter);
    if (s->program)
        clReleaseProgram(s->program);
    s->histogram = s->scan_rows = s->scatter = NULL;
    s->program = NULL;
    pbfcl_cl_release_buffer(&s->keys_tmp_buf);
    pbfcl_cl_release_buffer(&s->values_tmp_buf);
    pbfcl_cl_release_buffer(&s->keys_tmp2_buf);
    pbfcl_cl_release_buffer(&s->values_tmp2_buf);
    pbfcl_cl_release_buffer(&s->histogram_buf);
    pbfcl_cl_release_buffer(&s->totals_buf);
}

/* One pass: histogram of src, scan of the table's rows, scatter src -> dst by bits at shift. */
static pbfcl_status sort_pass(pbfcl_radix_sort *s, cl_mem src[2], cl_mem dst[2], size_t n,
                              cl_uint shift, cl_uint bits, pbfcl_profile *prof, pbfcl_stage stage)
{
    size_t ntiles = (n + s->tile - 1) / s->tile;
    cl_uint per = s->tiles_per_group;
    cl_uint n32 = (cl_uint)n, tiles = (cl_uint)((ntiles + per - 1) / per); /* work-groups */
    cl_kernel h = s->histogram, k = s->scatter;
    PBFCL_CL_CHECK(clSetKernelArg(h, 0, sizeof(cl_mem), &src[0]));
    PBFCL_CL_CHECK(clSetKernelArg(h, 1, sizeof(cl_mem), &s->histogram_buf));
    PBFCL_CL_CHECK(clSetKernelArg(h, 2, sizeof n32, &n32));
    PBFCL_CL_CHECK(clSetKernelArg(h, 3, sizeof tiles, &tiles));
    PBFCL_CL_CHECK(clSetKernelArg(h, 4, sizeof shift, &shift));
    PBFCL_CL_CHECK(clSetKernelArg(h, 5, sizeof bits, &bits));
    PBFCL_CL_CHECK(clSetKernelArg(h, 6, sizeof per, &per));
    PBFCL_TRY(pbfcl_cl_launch(s->cl, h, (size_t)tiles * s->wg, s->wg, prof, stage));
    /* Rows shorter than a work-group are scanned several to a work-group. */
    cl_uint digits = 1u << bits, rows = tiles >= s->wg ? 1 : (cl_uint)(s->wg / tiles);
    rows = rows < digits ? rows : digits;
    cl_kernel r = s->scan_rows;
    PBFCL_CL_CHECK(clSetKernelArg(r, 0, sizeof(cl_mem), &s->histogram_buf));
    PBFCL_CL_CHECK(clSetKernelArg(r, 1, sizeof(cl_mem), &s->totals_buf));
    PBFCL_CL_CHECK(clSetKernelArg(r, 2, sizeof tiles, &tiles));
    PBFCL_CL_CHECK(clSetKernelArg(r, 3, sizeof rows, &rows));
    PBFCL_CL_CHECK(clSetKernelArg(r, 4, sizeof digits, &digits));
    PBFCL_TRY(pbfcl_cl_launch(s->cl, r, (digits + rows - 1) / rows * s->wg, s->wg, prof, stage));
    PBFCL_CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &src[0]));
    PBFCL_CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &src[1]));
    PBFCL_CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &dst[0]));
    PBFCL_CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), &dst[1]));
    PBFCL_CL_CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &s->histogram_buf));
    PBFCL_CL_CHECK(clSetKernelArg(k, 5, sizeof(cl_mem), &s->totals_buf));
    PBFCL_CL_CHECK(clSetKernelArg(k, 6, sizeof n32, &n32));
    PBFCL_CL_CHECK(clSetKernelArg(k, 7, sizeof tiles, &tiles));
    PBFCL_CL_CHECK(clSetKernelArg(k, 8, sizeof shift, &shift));
    PBFCL_CL_CHECK(clSetKernelArg(k, 9, sizeof bits, &bits));
    PBFCL_CL_CHECK(clSetKernelArg(k, 10, sizeof per, &per));
    return pbfcl_cl_launch(s->cl, k, (size_t)tiles * s->wg, s->wg, prof, stage);
}

/* Copies n pairs from src to dst (a single pass cannot sort in place). */
static pbfcl_status sort_copy_back(pbfcl_radix_sort *s, cl_mem src[2], cl_mem dst[2], size_t n,
                                   pbfcl_profile *prof, pbfcl_stage stage)
{
    for (int i = 0; i < 2; i++) {
        cl_event ev = NULL;
        PBFCL_CL_CHECK(clEnqueueCopyBuffer(s->cl->queue, src[i], dst[i], 0, 0, n * sizeof(cl_uint),
                                           0, NULL, prof ? &ev : NULL));
        if (prof)
            pbfcl_profile_add(prof, stage, ev, NULL);
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_radix_sort_pairs(pbfcl_radix_sort *s, cl_mem keys_buf, cl_mem values_buf,
                                    size_t n, unsigned key_bits, pbfcl_profile *prof,
                                    pbfcl_stage stage)
{
    if (key_bits < 1 || key_bits > 32) {
        pbfcl_errorf("radix sort key_bits %u is out of range; give 1..32", key_bits);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (n > s->capacity) {
        pbfcl_errorf("radix sort of %zu pairs exceeds the capacity %zu it was created for", n,
                     s->capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (n == 0)
        return PBFCL_OK;
    /* Even pass counts ping-pong user -> tmp -> user; odd ones start user -> tmp2 -> tmp so
     * that the last pass writes the caller's buffers. */
    cl_mem user[2] = {keys_buf, values_buf}, tmp[2] = {s->keys_tmp_buf, s->values_tmp_buf};
    cl_mem tmp2[2] = {s->keys_tmp2_buf, s->values_tmp2_buf};
    /* The key bits split evenly: 30 bits at 8 a pass sort as 8, 8, 7, 7 (fewer digits make
     * longer runs per tile, so better coalesced writes, than 8, 8, 8, 6 would). */
    unsigned passes = (key_bits + s->radix_bits - 1) / s->radix_bits;
    cl_mem *src = user;
    for (unsigned p = 0, shift = 0; p < passes; p++) {
        unsigned bits = key_bits / passes + (p < key_bits % passes);
        unsigned left = passes - 1 - p; /* passes after this one */
        cl_mem *dst = left % 2 ? (src == tmp ? tmp2 : tmp) : user;
        if (dst == src)
            dst = tmp2;
        PBFCL_TRY(sort_pass(s, src, dst, n, shift, bits, prof, stage));
        shift += bits;
        src = dst;
    }
    return src == user ? PBFCL_OK : sort_copy_back(s, src, user, n, prof, stage);
}
