/* Tests of the reorder stage: a float4 buffer gathered by a permutation, dst[i] =
 * src[index[i]], a uint buffer, and the solids' three words with the bodies' slots, against a
 * plain C reference at awkward sizes. */
#include "grid/grid.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static void run_reorder(pbfcl_cl *cl)
{
    size_t large = test_small() ? 300 : 100003;
    pbfcl_grid g;
    pbfcl_grid_params gp = {.cell_size = 1.0f, .grid_bits = 2};
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, large, 4), PBFCL_OK);
    size_t sizes[] = {0, 1, 2, g.wg - 1, g.wg, g.wg + 1, test_small() ? 100 : 1000, large};
    float *src = malloc(large * 16), *dst = malloc(large * 16);
    pbfcl_uint *index = malloc(large * 4);
    cl_mem src_buf, dst_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, large * 16, "src", &src_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, large * 16, "dst", &dst_buf), PBFCL_OK);
    uint64_t rng = 5;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++) {
            index[i] = (pbfcl_uint)i;
            for (int a = 0; a < 4; a++)
                src[4 * i + a] = test_randf(&rng, -10.0f, 10.0f);
        }
        test_shuffle(index, n, &rng);
        if (n) {
            ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, g.index_buf, CL_TRUE, 0, n * 4, index,
                                                  0, NULL, NULL),
                             CL_SUCCESS);
            ck_assert_int_eq(
                clEnqueueWriteBuffer(cl->queue, src_buf, CL_TRUE, 0, n * 16, src, 0, NULL, NULL),
                CL_SUCCESS);
        }
        ck_assert_int_eq(pbfcl_grid_reorder(&g, src_buf, dst_buf, n, NULL), PBFCL_OK);
        if (n)
            ck_assert_int_eq(
                clEnqueueReadBuffer(cl->queue, dst_buf, CL_TRUE, 0, n * 16, dst, 0, NULL, NULL),
                CL_SUCCESS);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(memcmp(&dst[4 * i], &src[4 * index[i]], 16) == 0,
                          "n=%zu: dst[%zu] is not src[%u]", n, i, index[i]);
    }
    ck_assert_int_eq(pbfcl_grid_reorder(&g, src_buf, src_buf, 1, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_grid_reorder(&g, src_buf, dst_buf, large + 1, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_cl_release_buffer(&src_buf);
    pbfcl_cl_release_buffer(&dst_buf);
    free(src);
    free(dst);
    free(index);
    pbfcl_grid_destroy(&g);
}

/* reorder_uint (the particle ids): the same gather for a uint buffer, at awkward sizes. */
static void run_reorder_uint(pbfcl_cl *cl)
{
    size_t large = test_small() ? 300 : 100003;
    pbfcl_grid g;
    pbfcl_grid_params gp = {.cell_size = 1.0f, .grid_bits = 2};
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, large, 4), PBFCL_OK);
    size_t sizes[] = {0, 1, 2, g.wg - 1, g.wg, g.wg + 1, large};
    pbfcl_uint *src = malloc(large * 4), *dst = malloc(large * 4), *index = malloc(large * 4);
    cl_mem src_buf, dst_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, large * 4, "src", &src_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, large * 4, "dst", &dst_buf), PBFCL_OK);
    uint64_t rng = 9;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++) {
            index[i] = (pbfcl_uint)i;
            src[i] = test_rand(&rng);
        }
        test_shuffle(index, n, &rng);
        if (n) {
            ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, g.index_buf, CL_TRUE, 0, n * 4, index,
                                                  0, NULL, NULL),
                             CL_SUCCESS);
            ck_assert_int_eq(
                clEnqueueWriteBuffer(cl->queue, src_buf, CL_TRUE, 0, n * 4, src, 0, NULL, NULL),
                CL_SUCCESS);
        }
        ck_assert_int_eq(pbfcl_grid_reorder_uint(&g, src_buf, dst_buf, n, NULL), PBFCL_OK);
        if (n)
            ck_assert_int_eq(
                clEnqueueReadBuffer(cl->queue, dst_buf, CL_TRUE, 0, n * 4, dst, 0, NULL, NULL),
                CL_SUCCESS);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(dst[i] == src[index[i]], "n=%zu: dst[%zu] is not src[%u]", n, i,
                          index[i]);
    }
    ck_assert_int_eq(pbfcl_grid_reorder_uint(&g, src_buf, src_buf, 1, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_grid_reorder_uint(&g, src_buf, dst_buf, large + 1, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_cl_release_buffer(&src_buf);
    pbfcl_cl_release_buffer(&dst_buf);
    free(src);
    free(dst);
    free(index);
    pbfcl_grid_destroy(&g);
}

/* reorder_solids: ids, phases and inverse masses gathered by the sort index at once, and with
 * a slot buffer slot[id] = i (ids a shuffled subset of a larger range, as after removals), at
 * awkward sizes; without one the slot buffer is left alone. */
static void run_reorder_solids(pbfcl_cl *cl)
{
    size_t large = test_small() ? 300 : 100003, ids = 2 * large + 7;
    pbfcl_grid g;
    pbfcl_grid_params gp = {.cell_size = 1.0f, .grid_bits = 2};
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, large, 4), PBFCL_OK);
    size_t sizes[] = {0, 1, 2, g.wg - 1, g.wg, g.wg + 1, large};
    pbfcl_uint *src = malloc(3 * large * 4), *dst = malloc(3 * large * 4);
    pbfcl_uint *index = malloc(large * 4), *pool = malloc(ids * 4), *slot = malloc(ids * 4);
    cl_mem src_buf[3], dst_buf[3], slot_buf;
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, large * 4, "src", &src_buf[k]),
                         PBFCL_OK);
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, large * 4, "dst", &dst_buf[k]),
                         PBFCL_OK);
    }
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, ids * 4, "slots", &slot_buf), PBFCL_OK);
    const pbfcl_uint untouched = 0xdeadbeefu;
    uint64_t rng = 13;
    for (size_t c = 0; c < 2 * (sizeof sizes / sizeof sizes[0]); c++) {
        size_t n = sizes[c / 2];
        bool slots = c % 2 == 0;
        for (size_t i = 0; i < ids; i++) {
            pool[i] = (pbfcl_uint)i;
            slot[i] = untouched;
        }
        test_shuffle(pool, ids, &rng); /* the ids: the first n of a shuffled larger range */
        for (size_t i = 0; i < n; i++) {
            index[i] = (pbfcl_uint)i;
            src[i] = pool[i];
            src[large + i] = test_rand(&rng);
            src[2 * large + i] = test_rand(&rng);
        }
        test_shuffle(index, n, &rng);
        ck_assert_int_eq(
            clEnqueueWriteBuffer(cl->queue, slot_buf, CL_TRUE, 0, ids * 4, slot, 0, NULL, NULL),
            CL_SUCCESS);
        if (n) {
            ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, g.index_buf, CL_TRUE, 0, n * 4, index,
                                                  0, NULL, NULL),
                             CL_SUCCESS);
            for (int k = 0; k < 3; k++)
                ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, src_buf[k], CL_TRUE, 0, n * 4,
                                                      src + k * large, 0, NULL, NULL),
                                 CL_SUCCESS);
        }
        ck_assert_int_eq(
            pbfcl_grid_reorder_solids(&g, src_buf, dst_buf, slots ? slot_buf : NULL, n, NULL),
            PBFCL_OK);
        for (int k = 0; k < 3 && n; k++)
            ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, dst_buf[k], CL_TRUE, 0, n * 4,
                                                 dst + k * large, 0, NULL, NULL),
                             CL_SUCCESS);
        ck_assert_int_eq(
            clEnqueueReadBuffer(cl->queue, slot_buf, CL_TRUE, 0, ids * 4, slot, 0, NULL, NULL),
            CL_SUCCESS);
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                ck_assert_msg(dst[k * large + i] == src[k * large + index[i]],
                              "n=%zu: word %d of dst[%zu] is not that of src[%u]", n, k, i,
                              index[i]);
        size_t written = 0;
        for (size_t i = 0; i < n && slots; i++) {
            pbfcl_uint id = src[index[i]];
            ck_assert_msg(slot[id] == i, "n=%zu: slot[%u] = %u, not %zu", n, id, slot[id], i);
        }
        for (size_t id = 0; id < ids; id++)
            written += slot[id] != untouched;
        ck_assert_msg(written == (slots ? n : 0), "n=%zu: %zu slots written, not %zu", n, written,
                      slots ? n : (size_t)0);
    }
    cl_mem same[3] = {src_buf[0], dst_buf[1], dst_buf[2]};
    ck_assert_int_eq(pbfcl_grid_reorder_solids(&g, src_buf, same, NULL, 1, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_grid_reorder_solids(&g, src_buf, dst_buf, NULL, large + 1, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    for (int k = 0; k < 3; k++) {
        pbfcl_cl_release_buffer(&src_buf[k]);
        pbfcl_cl_release_buffer(&dst_buf[k]);
    }
    pbfcl_cl_release_buffer(&slot_buf);
    free(src);
    free(dst);
    free(index);
    free(pool);
    free(slot);
    pbfcl_grid_destroy(&g);
}

START_TEST(test_reorder_solids_reference)
{
    test_each_device(run_reorder_solids);
}
END_TEST

START_TEST(test_reorder_uint_reference)
{
    test_each_device(run_reorder_uint);
}
END_TEST

START_TEST(test_reorder_reference)
{
    test_each_device(run_reorder);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reorder");
    TCase *tc = tcase_create("reorder");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_reorder_reference);
    tcase_add_test(tc, test_reorder_uint_reference);
    tcase_add_test(tc, test_reorder_solids_reference);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
