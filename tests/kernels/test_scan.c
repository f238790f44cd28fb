/* Tests of the multi-level exclusive prefix sum against a plain C reference:
 * awkward sizes around the work-group size and the per-group block, several
 * levels, in place, and the error for arrays over capacity. */
#include "grid/scan.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* Guard elements written after the output to catch writes past n. */
#define GUARD 64
#define GUARD_VALUE 0xdeadbeefu

/* Fills in[0..n) with random values (ones if ones) and checks the device scan
 * of it. */
static void check_scan(pbfcl_scan *s, size_t n, bool ones, bool in_place, uint64_t *rng)
{
    cl_uint *in = malloc((n + GUARD) * sizeof *in), *out = malloc((n + GUARD) * sizeof *out);
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < n; i++)
        in[i] = ones ? 1u : test_rand(rng);
    for (size_t i = n; i < n + GUARD; i++)
        in[i] = GUARD_VALUE;
    cl_mem in_buf, out_buf;
    size_t bytes = (n + GUARD) * sizeof *in;
    ck_assert_int_eq(pbfcl_cl_buffer(s->cl, CL_MEM_READ_WRITE, bytes, "in", &in_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(s->cl, CL_MEM_READ_WRITE, bytes, "out", &out_buf), PBFCL_OK);
    cl_mem dst_buf = in_place ? in_buf : out_buf;
    ck_assert_int_eq(
        clEnqueueWriteBuffer(s->cl->queue, in_buf, CL_TRUE, 0, bytes, in, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(
        clEnqueueWriteBuffer(s->cl->queue, out_buf, CL_TRUE, 0, bytes, in, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(pbfcl_scan_exclusive(s, in_buf, dst_buf, n, NULL, PBFCL_STAGE_OTHER),
                     PBFCL_OK);
    ck_assert_int_eq(
        clEnqueueReadBuffer(s->cl->queue, dst_buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL),
        CL_SUCCESS);
    cl_uint sum = 0;
    for (size_t i = 0; i < n; i++) {
        expect(out[i] == sum, "n=%zu %s%s: out[%zu] = %u, expected %u", n, ones ? "ones" : "random",
               in_place ? " in place" : "", i, out[i], sum);
        sum += in[i];
    }
    for (size_t i = n; i < n + GUARD; i++)
        expect(out[i] == GUARD_VALUE, "n=%zu: scan wrote past the end at %zu", n, i);
    pbfcl_cl_release_buffer(&in_buf);
    pbfcl_cl_release_buffer(&out_buf);
    free(in);
    free(out);
}

/* The sizes to test for a scan with work-group size wg up to big: awkward ones around wg
 * and the 2 * wg block, a few levels (block^2 and block^3), and big. Returns the count. */
static int scan_sizes(size_t wg, size_t big, size_t *sizes)
{
    size_t block = 2 * wg;
    size_t list[] = {0,
                     1,
                     2,
                     3,
                     wg - 1,
                     wg,
                     wg + 1,
                     block - 1,
                     block,
                     block + 1,
                     1000,
                     block * block - 1,
                     block * block + 1,
                     block * block * block + 1,
                     big};
    int n = 0;
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if (list[i] <= big)
            sizes[n++] = list[i];
    return n;
}

/* Runs every size and input kind up to cap on a scan whose work-group size is at most
 * wg_limit (0: the default), and in place at two sizes. */
static void scan_all_sizes(pbfcl_cl *cl, size_t wg_limit, size_t cap)
{
    pbfcl_scan s;
    pbfcl_status st =
        wg_limit ? pbfcl_scan_create_wg(&s, cl, cap, wg_limit) : pbfcl_scan_create(&s, cl, cap);
    ck_assert_int_eq(st, PBFCL_OK);
    fprintf(stderr, "    scan work-group size %zu, %d levels\n", s.wg, s.levels);
    size_t sizes[32];
    int count = scan_sizes(s.wg, cap, sizes);
    uint64_t rng = 42;
    for (int i = 0; i < count; i++) {
        check_scan(&s, sizes[i], false, false, &rng);
        check_scan(&s, sizes[i], true, false, &rng);
    }
    check_scan(&s, cap < 4 * s.wg * s.wg + 3 ? cap : 4 * s.wg * s.wg + 3, false, true, &rng);
    check_scan(&s, 2 * s.wg + 1, true, true, &rng);
    pbfcl_scan_destroy(&s);
}

static void scan_default(pbfcl_cl *cl)
{
    scan_all_sizes(cl, 0, test_small() ? 3001 : (1u << 20) + 7);
}

/* Work-groups of 16 reach four levels at 40000 elements (blocks of 32). */
static void scan_small_groups(pbfcl_cl *cl)
{
    scan_all_sizes(cl, 16, test_small() ? 3001 : 40000);
}

static void scan_over_capacity(pbfcl_cl *cl)
{
    pbfcl_scan s;
    ck_assert_int_eq(pbfcl_scan_create(&s, cl, 100), PBFCL_OK);
    cl_mem buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 404, "buf", &buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scan_exclusive(&s, buf, buf, 101, NULL, PBFCL_STAGE_OTHER),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_scan_exclusive(&s, buf, buf, 0, NULL, PBFCL_STAGE_OTHER), PBFCL_OK);
    pbfcl_cl_release_buffer(&buf);
    pbfcl_scan_destroy(&s);
    pbfcl_scan_destroy(&s); /* a second destroy is harmless */
}

START_TEST(test_scan_default_wg)
{
    test_each_device(scan_default);
}
END_TEST

START_TEST(test_scan_small_wg_many_levels)
{
    test_each_device(scan_small_groups);
}
END_TEST

START_TEST(test_scan_rejects_over_capacity)
{
    test_each_device(scan_over_capacity);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("scan");
    TCase *tc = tcase_create("scan");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_scan_default_wg);
    tcase_add_test(tc, test_scan_small_wg_many_levels);
    tcase_add_test(tc, test_scan_rejects_over_capacity);
    suite_add_tcase(suite, tc);
    return test_run_suite(suite, true);
}
