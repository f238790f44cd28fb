/* Tests of Morton codes (host encode/decode against a bit-by-bit reference, Z-order
 * properties) and of the hash stage (cell ids against a plain C reference, including
 * positions outside the grid, which are clamped into it). */
#include "grid/grid.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

/* The Morton code one bit at a time: bit k of x, y, z goes to bit 3k, 3k+1, 3k+2. */
static pbfcl_uint reference_morton(pbfcl_uint x, pbfcl_uint y, pbfcl_uint z)
{
    pbfcl_uint code = 0;
    for (int k = 0; k < 10; k++)
        code |= ((x >> k) & 1u) << (3 * k) | ((y >> k) & 1u) << (3 * k + 1) |
                ((z >> k) & 1u) << (3 * k + 2);
    return code;
}

static void check_round_trip(pbfcl_uint x, pbfcl_uint y, pbfcl_uint z)
{
    pbfcl_uint code = pbfcl_morton_encode(x, y, z), dx, dy, dz;
    ck_assert_msg(code == reference_morton(x, y, z), "code of (%u,%u,%u): %#x, expected %#x", x, y,
                  z, code, reference_morton(x, y, z));
    ck_assert_uint_lt(code, 1u << 30);
    pbfcl_morton_decode(code, &dx, &dy, &dz);
    ck_assert_msg(dx == x && dy == y && dz == z, "decode(encode(%u,%u,%u)) = (%u,%u,%u)", x, y, z,
                  dx, dy, dz);
}

START_TEST(test_morton_round_trip)
{
    const pbfcl_uint edge[] = {0, 1, 2, 511, 512, 1022, 1023};
    for (int a = 0; a < 7; a++)
        for (int b = 0; b < 7; b++)
            for (int c = 0; c < 7; c++)
                check_round_trip(edge[a], edge[b], edge[c]);
    uint64_t rng = 7;
    for (int k = 0; k < 100000; k++)
        check_round_trip(test_rand(&rng) % 1024, test_rand(&rng) % 1024, test_rand(&rng) % 1024);
    ck_assert_uint_eq(pbfcl_morton_encode(1, 0, 0), 1);
    ck_assert_uint_eq(pbfcl_morton_encode(0, 1, 0), 2);
    ck_assert_uint_eq(pbfcl_morton_encode(0, 0, 1), 4);
    ck_assert_uint_eq(pbfcl_morton_encode(1023, 1023, 1023), (1u << 30) - 1);
}
END_TEST

/* Z-order: with two coordinates fixed the code increases strictly along the third; the
 * codes of a 2^b grid are exactly 0 .. 8^b - 1. */
START_TEST(test_morton_order)
{
    uint64_t rng = 11;
    for (int trial = 0; trial < 50; trial++) {
        pbfcl_uint a = test_rand(&rng) % 1024, b = test_rand(&rng) % 1024;
        for (pbfcl_uint t = 1; t < 1024; t++) {
            ck_assert_uint_gt(pbfcl_morton_encode(t, a, b), pbfcl_morton_encode(t - 1, a, b));
            ck_assert_uint_gt(pbfcl_morton_encode(a, t, b), pbfcl_morton_encode(a, t - 1, b));
            ck_assert_uint_gt(pbfcl_morton_encode(a, b, t), pbfcl_morton_encode(a, b, t - 1));
        }
    }
    const pbfcl_uint side = 16;
    char *seen = calloc(side * side * side, 1);
    for (pbfcl_uint z = 0; z < side; z++)
        for (pbfcl_uint y = 0; y < side; y++)
            for (pbfcl_uint x = 0; x < side; x++) {
                pbfcl_uint code = pbfcl_morton_encode(x, y, z);
                ck_assert_uint_lt(code, side * side * side);
                ck_assert(!seen[code]);
                seen[code] = 1;
            }
    free(seen);
}
END_TEST

START_TEST(test_grid_params_fit)
{
    pbfcl_grid_params p;
    const float lo[3] = {-1, 0, 0}, hi[3] = {1, 0.5f, 3};
    ck_assert_int_eq(pbfcl_grid_params_fit(lo, hi, 0.1f, &p), PBFCL_OK);
    ck_assert_uint_eq(p.grid_bits, 5); /* 30 cells on z -> 32 */
    ck_assert(p.origin[0] == -1.0f && p.cell_size == 0.1f && p.inv_cell_size == 1.0f / 0.1f);
    ck_assert_int_eq(pbfcl_grid_params_fit(lo, hi, 0.001f, &p), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_grid_params_fit(lo, hi, 0.0f, &p), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_grid_params_fit(hi, lo, 0.1f, &p), PBFCL_ERR_BAD_ARGUMENT);
}
END_TEST

/* The reference cell id: the same float operations as the kernel, then clamping. */
static pbfcl_uint reference_hash(const float *p, const pbfcl_grid_params *gp)
{
    const float top = (float)((1u << gp->grid_bits) - 1u);
    pbfcl_uint c[3];
    for (int a = 0; a < 3; a++) {
        float f = floorf((p[a] - gp->origin[a]) * gp->inv_cell_size);
        c[a] = (pbfcl_uint)fmaxf(fminf(f, top), 0.0f);
    }
    return reference_morton(c[0], c[1], c[2]);
}

/* Random positions, a third of them outside the grid, plus infinities and a NaN. */
static void fill_positions(float *pos, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 4; a++)
            pos[4 * i + a] = test_randf(rng, -1.5f, 1.5f);
    const float special[] = {INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0.0f};
    for (size_t i = 0; i < n && i < 6; i++)
        pos[4 * i + i % 3] = special[i];
}

static void run_hash(pbfcl_cl *cl)
{
    size_t large = test_small() ? 300 : 200003;
    pbfcl_grid g;
    /* 16 cells of 0.125 per axis: the grid covers [-1, 1]^3. */
    pbfcl_grid_params gp = {.origin = {-1, -1, -1, 0}, .cell_size = 0.125f, .grid_bits = 4};
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, large, 4), PBFCL_OK);
    size_t sizes[] = {0, 1, g.wg - 1, g.wg, g.wg + 1, test_small() ? 100 : 1000, large};
    float *pos = malloc(large * 16);
    pbfcl_uint *ids = malloc(large * 4), *index = malloc(large * 4);
    cl_mem pos_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, large * 16, "pos", &pos_buf), PBFCL_OK);
    uint64_t rng = 99;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        fill_positions(pos, n, &rng);
        if (n)
            ck_assert_int_eq(
                clEnqueueWriteBuffer(cl->queue, pos_buf, CL_TRUE, 0, n * 16, pos, 0, NULL, NULL),
                CL_SUCCESS);
        ck_assert_int_eq(pbfcl_grid_hash(&g, pos_buf, n, NULL), PBFCL_OK);
        if (n == 0)
            continue;
        ck_assert_int_eq(
            clEnqueueReadBuffer(cl->queue, g.cell_id_buf, CL_TRUE, 0, n * 4, ids, 0, NULL, NULL),
            CL_SUCCESS);
        ck_assert_int_eq(
            clEnqueueReadBuffer(cl->queue, g.index_buf, CL_TRUE, 0, n * 4, index, 0, NULL, NULL),
            CL_SUCCESS);
        for (size_t i = 0; i < n; i++) {
            pbfcl_uint ref = reference_hash(&pos[4 * i], &g.params);
            expect(ids[i] == ref, "n=%zu particle %zu at (%g,%g,%g): cell %#x, expected %#x", n, i,
                   pos[4 * i], pos[4 * i + 1], pos[4 * i + 2], ids[i], ref);
            expect(index[i] == i, "n=%zu: index[%zu] = %u, expected %zu", n, i, index[i], i);
        }
    }
    pbfcl_cl_release_buffer(&pos_buf);
    free(pos);
    free(ids);
    free(index);
    pbfcl_grid_destroy(&g);
}

START_TEST(test_hash_reference)
{
    test_each_device(run_hash);
}
END_TEST

static void run_bad_params(pbfcl_cl *cl)
{
    pbfcl_grid g;
    pbfcl_grid_params gp = {.cell_size = 1.0f, .grid_bits = 11};
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, 10, 4), PBFCL_ERR_BAD_ARGUMENT);
    gp.grid_bits = 0;
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, 10, 4), PBFCL_ERR_BAD_ARGUMENT);
    gp.grid_bits = 3;
    gp.cell_size = -1.0f;
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, 10, 4), PBFCL_ERR_BAD_ARGUMENT);
    gp.cell_size = 1.0f;
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &gp, 10, 0), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_grid_destroy(&g); /* a struct left by a failed create is safe to destroy */
}

START_TEST(test_hash_bad_params)
{
    test_each_device(run_bad_params);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hash");
    TCase *tc = tcase_create("hash");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_morton_round_trip);
    tcase_add_test(tc, test_morton_order);
    tcase_add_test(tc, test_grid_params_fit);
    tcase_add_test(tc, test_hash_reference);
    tcase_add_test(tc, test_hash_bad_params);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
