/* Tests of the cells stage: the start and end of every non-empty cell from sorted cell ids,
 * against a plain C reference at awkward sizes, and the clearing of the previous step's
 * entries when the particle set changes. */
#include "grid/grid.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define GRID_BITS_TEST 4
#define NUM_CELLS (1u << (3 * GRID_BITS_TEST))

static pbfcl_grid grid;

static void make_grid(pbfcl_cl *cl, size_t capacity)
{
    pbfcl_grid_params p = {.origin = {0, 0, 0, 0}, .cell_size = 1.0f, .grid_bits = GRID_BITS_TEST};
    ck_assert_int_eq(pbfcl_grid_create(&grid, cl, &p, capacity, 8), PBFCL_OK);
}

/* n sorted cell ids: runs of random length over random cells (some cells repeated often). */
static void sorted_ids(pbfcl_uint *ids, size_t n, uint64_t *rng)
{
    pbfcl_uint c = test_rand(rng) % 16;
    for (size_t i = 0; i < n; i++) {
        if (test_rand(rng) % 3 == 0)
            c += 1 + test_rand(rng) % 40;
        ids[i] = c % NUM_CELLS;
    }
    for (size_t i = 1; i < n; i++) /* keep them sorted after the wrap-around */
        if (ids[i] < ids[i - 1])
            ids[i] = ids[i - 1];
}

static void reference_cells(const pbfcl_uint *ids, size_t n, pbfcl_uint *start, pbfcl_uint *end)
{
    for (size_t c = 0; c < NUM_CELLS; c++)
        start[c] = end[c] = PBFCL_EMPTY;
    for (size_t i = 0; i < n; i++) {
        if (start[ids[i]] == PBFCL_EMPTY)
            start[ids[i]] = (pbfcl_uint)i;
        end[ids[i]] = (pbfcl_uint)i + 1;
    }
}

/* Uploads ids as the sorted cell ids, runs cells and compares the whole tables. */
static void check_cells(const pbfcl_uint *ids, size_t n)
{
    pbfcl_cl *cl = test_cl;
    if (n)
        ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, grid.cell_id_buf, CL_TRUE, 0, n * 4, ids,
                                              0, NULL, NULL),
                         CL_SUCCESS);
    ck_assert_int_eq(pbfcl_grid_cells(&grid, n, NULL), PBFCL_OK);
    pbfcl_uint *start = malloc(NUM_CELLS * 4), *end = malloc(NUM_CELLS * 4);
    pbfcl_uint *ref_start = malloc(NUM_CELLS * 4), *ref_end = malloc(NUM_CELLS * 4);
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, grid.cell_start_buf, CL_TRUE, 0, NUM_CELLS * 4,
                                         start, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, grid.cell_end_buf, CL_TRUE, 0, NUM_CELLS * 4,
                                         end, 0, NULL, NULL),
                     CL_SUCCESS);
    reference_cells(ids, n, ref_start, ref_end);
    for (size_t c = 0; c < NUM_CELLS; c++) {
        expect(start[c] == ref_start[c], "n=%zu cell %zu: start %u, expected %u", n, c, start[c],
               ref_start[c]);
        expect(end[c] == ref_end[c], "n=%zu cell %zu: end %u, expected %u", n, c, end[c],
               ref_end[c]);
    }
    free(start);
    free(end);
    free(ref_start);
    free(ref_end);
}

static void run_sizes(pbfcl_cl *cl)
{
    size_t large = test_small() ? 300 : 100003;
    make_grid(cl, large);
    size_t wg = grid.wg;
    size_t sizes[] = {0, 1, 2, 3, wg - 1, wg, wg + 1, test_small() ? 257 : 1000, large};
    pbfcl_uint *ids = malloc(large * 4);
    uint64_t rng = 12345;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        sorted_ids(ids, n, &rng);
        ck_assert_int_eq(pbfcl_grid_clear_cells(&grid, NULL), PBFCL_OK);
        check_cells(ids, n);
    }
    free(ids);
    pbfcl_grid_destroy(&grid);
}

START_TEST(test_cells_sizes)
{
    test_each_device(run_sizes);
}
END_TEST

/* Two steps with different particle sets: after the second, no entry of the first may
 * remain. The first step's ids cover many cells, the second's few other ones. The clear
 * goes through pbfcl_grid_hash, as in a simulation step. */
static void run_stale(pbfcl_cl *cl)
{
    size_t n1 = test_small() ? 200 : 5000, n2 = 7;
    make_grid(cl, n1);
    pbfcl_uint *ids = malloc(n1 * 4);
    for (size_t i = 0; i < n1; i++)
        ids[i] = (pbfcl_uint)(i * (NUM_CELLS - 1) / n1);
    check_cells(ids, n1);

    /* Cells again without clearing is refused. */
    ck_assert_int_eq(pbfcl_grid_cells(&grid, n1, NULL), PBFCL_ERR_BAD_ARGUMENT);

    float pos[7 * 4] = {0};
    cl_mem pos_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof pos, "pos", &pos_buf), PBFCL_OK);
    ck_assert_int_eq(
        clEnqueueWriteBuffer(cl->queue, pos_buf, CL_TRUE, 0, sizeof pos, pos, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(pbfcl_grid_hash(&grid, pos_buf, n2, NULL), PBFCL_OK);
    pbfcl_uint ids2[7] = {3, 3, 100, 101, 101, 101, NUM_CELLS - 1};
    check_cells(ids2, n2);

    /* And back to an empty step: the tables are all EMPTY again. */
    ck_assert_int_eq(pbfcl_grid_hash(&grid, pos_buf, 0, NULL), PBFCL_OK);
    check_cells(ids2, 0);
    pbfcl_cl_release_buffer(&pos_buf);
    free(ids);
    pbfcl_grid_destroy(&grid);
}

START_TEST(test_cells_stale_entries)
{
    test_each_device(run_stale);
}
END_TEST

static void run_capacity(pbfcl_cl *cl)
{
    make_grid(cl, 10);
    ck_assert_int_eq(pbfcl_grid_cells(&grid, 11, NULL), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_grid_destroy(&grid);
}

START_TEST(test_cells_over_capacity)
{
    test_each_device(run_capacity);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cells");
    TCase *tc = tcase_create("cells");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_cells_sizes);
    tcase_add_test(tc, test_cells_stale_entries);
    tcase_add_test(tc, test_cells_over_capacity);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
