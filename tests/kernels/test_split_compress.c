/* Tests of split-and-compress (tools/dev/split_compress.c, cl/dev/split_compress.cl): the compact
 * block list of split_count, split_scan and split_write against a plain C split of the
 * host-sorted cells, and split_density's (and list_density's) densities and neighbour counts
 * against a brute-force O(n^2) SPH sum with Poly6 = 315 / (64 pi h^9) (h^2 - r^2)^3 written
 * here, at awkward sizes: n = 0 and 1, a cell of K - 1, K and K + 1 particles, K = 1, K not a
 * power of two, a work-group size that is not one, local stages of 1 and 7 entries (many
 * chunks), uniform, clustered and outside-the-grid positions; and the rejected inputs. */
#include "grid/grid.h"
#include "grid_ref.h"
#include "split_compress.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A grid of 8 cells of 0.25 per axis covering [0, 2]^3. */
static const pbfcl_grid_params test_params = {
    .origin = {0, 0, 0, 0}, .cell_size = 0.25f, .inv_cell_size = 4.0f, .grid_bits = 3};

#define TEST_MASS 0.37f

/* The block list from first principles: every run of equal sorted ids cut into pieces of K;
 * returns the number of blocks (list holds up to n entries of 4 uints). */
static size_t reference_blocks(const sorted_set *s, unsigned k, pbfcl_uint *list)
{
    size_t nb = 0;
    for (size_t i = 0; i < s->n;) {
        size_t end = i;
        while (end < s->n && s->ids[end] == s->ids[i])
            end++;
        for (size_t first = i; first < end; first += k, nb++) {
            size_t count = end - first < k ? end - first : k;
            pbfcl_uint b[4] = {s->ids[i], (pbfcl_uint)first, (pbfcl_uint)count, 0};
            memcpy(&list[4 * nb], b, sizeof b);
        }
        i = end;
    }
    return nb;
}

/* The device may round the squared distance differently (fused multiply-add), so pairs
 * within a relative 1e-5 of h count or not; the density does not notice (W(h) = 0). */
#define BORDER_TOL 1e-5

/* SPH density of particle i, rho_i = sum_j m W(|x_i - x_j|, h), itself included, with
 * W(r, h) = 315 / (64 pi h^9) (h^2 - r^2)^3 for r < h (Mueller et al. 2003); and the number
 * of other particles surely (*sure) and possibly (*maybe) within h. In double. */
static double reference_density(const sorted_set *s, size_t i, double h, size_t *sure,
                                size_t *maybe)
{
    const double pi = 3.14159265358979323846, h2 = h * h;
    const double w_coef = 315.0 / (64.0 * pi * pow(h, 9.0));
    double rho = 0.0;
    *sure = *maybe = 0;
    for (size_t j = 0; j < s->n; j++) {
        double r2 = 0.0;
        for (int a = 0; a < 3; a++) {
            double d = (double)s->pos[4 * j + a] - (double)s->pos[4 * i + a];
            r2 += d * d;
        }
        if (r2 < h2)
            rho += TEST_MASS * w_coef * (h2 - r2) * (h2 - r2) * (h2 - r2);
        *sure += j != i && r2 < h2 * (1.0 - BORDER_TOL);
        *maybe += j != i && r2 < h2 * (1.0 + BORDER_TOL);
    }
    return rho;
}

/* The buffers of one case: a grid and split-and-compress for capacity particles. */
typedef struct split_case {
    pbfcl_grid g;
    pbfcl_split_compress sc;
    cl_mem pos_buf, density_buf, count_buf;
    size_t capacity;
} split_case;

static void case_create(split_case *c, size_t capacity, const pbfcl_split_compress_desc *desc)
{
    pbfcl_cl *cl = test_cl;
    memset(c, 0, sizeof *c);
    c->capacity = capacity;
    size_t cap = capacity ? capacity : 1;
    ck_assert_int_eq(pbfcl_grid_create(&c->g, cl, &test_params, cap, 256), PBFCL_OK);
    pbfcl_split_compress_desc d = *desc;
    d.grid_bits = test_params.grid_bits;
    d.capacity = capacity;
    ck_assert_int_eq(pbfcl_split_compress_create(&c->sc, cl, &d), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 16, "pos", &c->pos_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "density", &c->density_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "count", &c->count_buf),
                     PBFCL_OK);
    size_t cells = (size_t)4 << (3 * test_params.grid_bits);
    test_host_init(c->g.cell_start_buf, cells, PBFCL_EMPTY);
    test_host_init(c->g.cell_end_buf, cells, PBFCL_EMPTY);
    test_host_init(c->sc.blocks_buf, cap * 4, 0);
    test_host_init(c->sc.offset_buf, cap * 4, 0);
    test_host_init(c->sc.block_list_buf, cap * 16, 0);
    test_host_init(c->sc.block_total_buf, 4, 0);
}

static void case_destroy(split_case *c)
{
    pbfcl_cl_release_buffer(&c->pos_buf);
    pbfcl_cl_release_buffer(&c->density_buf);
    pbfcl_cl_release_buffer(&c->count_buf);
    pbfcl_split_compress_destroy(&c->sc);
    pbfcl_grid_destroy(&c->g);
}

/* Checks the block list split_write left against the reference; returns the block count. */
static size_t check_blocks(split_case *c, const sorted_set *s)
{
    size_t n = s->n, blocks = 99;
    ck_assert_int_eq(pbfcl_split_read_blocks(&c->sc, &blocks), PBFCL_OK);
    pbfcl_uint *ref = malloc(n * 16 + 16), *got = malloc(n * 16 + 16);
    size_t expected = reference_blocks(s, c->sc.block_size, ref);
    ck_assert_msg(blocks == expected, "n=%zu K=%u: %zu blocks, expected %zu", n, c->sc.block_size,
                  blocks, expected);
    test_read_buffer(c->sc.block_list_buf, got, blocks * 16);
    for (size_t b = 0; b < blocks; b++)
        ck_assert_msg(!memcmp(&got[4 * b], &ref[4 * b], 16),
                      "n=%zu K=%u block %zu: (cell %u, first %u, count %u), expected (%u, %u, %u)",
                      n, c->sc.block_size, b, got[4 * b], got[4 * b + 1], got[4 * b + 2],
                      ref[4 * b], ref[4 * b + 1], ref[4 * b + 2]);
    free(ref);
    free(got);
    return blocks;
}

/* Reads densities and neighbour counts and compares them with the brute-force sums. */
static void check_density(split_case *c, const sorted_set *s, float h, const char *path)
{
    size_t n = s->n;
    float *rho = malloc(n * 4 + 4);
    pbfcl_uint *count = malloc(n * 4 + 4);
    test_read_buffer(c->density_buf, rho, n * 4);
    test_read_buffer(c->count_buf, count, n * 4);
    for (size_t i = 0; i < n; i++) {
        size_t sure, maybe;
        double ref = reference_density(s, i, h, &sure, &maybe);
        ck_assert_msg(test_close(rho[i], ref, 1e-6 * ref, 1e-5),
                      "%s n=%zu K=%u particle %zu: density %.9g, expected %.9g", path, n,
                      c->sc.block_size, i, (double)rho[i], ref);
        ck_assert_msg(count[i] >= sure && count[i] <= maybe,
                      "%s n=%zu particle %zu: %u neighbours, expected %zu (up to %zu)", path, n, i,
                      count[i], sure, maybe);
    }
    free(rho);
    free(count);
}

/* Checks split_count's and split_scan's per-particle output: ceil(run length / K) at the
 * first particle of each run of equal cell ids, 0 elsewhere, and its exclusive prefix sum. */
static void check_count_scan(split_case *c, const sorted_set *s, int stage)
{
    size_t n = s->n;
    pbfcl_uint k = c->sc.block_size, *got = malloc(n * 4 + 4), expected = 0, sum = 0;
    test_read_buffer(stage ? c->sc.offset_buf : c->sc.blocks_buf, got, n * 4);
    for (size_t i = 0; i < n; i++) {
        size_t end = i;
        while (end < n && s->ids[end] == s->ids[i])
            end++;
        pbfcl_uint blocks = i == 0 || s->ids[i - 1] != s->ids[i] ? (end - i + k - 1) / k : 0;
        expected = stage ? sum : blocks;
        ck_assert_msg(got[i] == expected, "%s n=%zu K=%u particle %zu: %u, expected %u",
                      stage ? "split_scan" : "split_count", n, k, i, got[i], expected);
        sum += blocks;
    }
    free(got);
}

/* Runs the whole split-and-compress on pos[0..n) (host-sorted, cells from the grid's cells
 * stage), checking each stage's output. Returns the number of blocks. */
static size_t run_case(const float *pos, size_t n, const pbfcl_split_compress_desc *desc)
{
    const float h = 0.25f;
    split_case c;
    case_create(&c, n, desc);
    sorted_set s = sort_on_host(pos, n, &test_params);
    test_write_buffer(c.pos_buf, s.pos, n * 16);
    test_write_buffer(c.g.cell_id_buf, s.ids, n * 4);
    test_host_init(c.density_buf, (n ? n : 1) * 4, 0xffffffffu); /* NaN where nothing is written */
    ck_assert_int_eq(pbfcl_grid_cells(&c.g, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_split_count(&c.sc, &c.g, n, NULL), PBFCL_OK);
    check_count_scan(&c, &s, 0);
    ck_assert_int_eq(pbfcl_split_scan(&c.sc, n, NULL), PBFCL_OK);
    check_count_scan(&c, &s, 1);
    ck_assert_int_eq(pbfcl_split_write(&c.sc, &c.g, n, NULL), PBFCL_OK);
    size_t blocks = check_blocks(&c, &s);
    ck_assert_int_eq(pbfcl_split_density(&c.sc, &c.g, c.pos_buf, blocks, h, TEST_MASS,
                                         c.density_buf, c.count_buf, NULL),
                     PBFCL_OK);
    check_density(&c, &s, h, "split_density");
    free(s.pos);
    free(s.ids);
    case_destroy(&c);
    return blocks;
}

/* n particles uniform in the cube [lo, hi)^3. */
static float *uniform(size_t n, float lo, float hi, uint64_t seed)
{
    float *pos = malloc(n * 16 + 16);
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++)
            pos[4 * i + a] = test_randf(&seed, lo, hi);
        pos[4 * i + 3] = 0.0f;
    }
    return pos;
}

/* n = 0 and 1; one cell holding K - 1, K, K + 1 and 2K + 1 particles (K = the work-group
 * size by default): one block, one full block, a full block and a block of one, and so on.
 * The seed's blocks = (start - end) / K + 1 gives one too many for exactly K. */
static void run_one_cell(pbfcl_cl *cl)
{
    (void)cl;
    pbfcl_split_compress_desc d = {0};
    float *pos = uniform(1000, 0.26f, 0.49f, 1); /* all in cell (1, 1, 1) */
    ck_assert_uint_eq(run_case(pos, 0, &d), 0);
    ck_assert_uint_eq(run_case(pos, 1, &d), 1);
    split_case c;
    case_create(&c, 1, &d);
    size_t k = c.sc.block_size, wg = c.sc.wg;
    case_destroy(&c);
    ck_assert_uint_eq(k, wg);
    ck_assert_uint_eq(run_case(pos, k - 1, &d), 1);
    ck_assert_uint_eq(run_case(pos, k, &d), 1);
    ck_assert_uint_eq(run_case(pos, k + 1, &d), 2);
    if (!test_small())
        ck_assert_uint_eq(run_case(pos, 2 * k + 1, &d), 3);
    d.block_size = 5; /* K not a power of two, 1000 particles: 200 blocks */
    ck_assert_uint_eq(run_case(pos, test_small() ? 11 : 1000, &d), test_small() ? 3 : 200);
    free(pos);
}

START_TEST(test_split_one_cell)
{
    test_each_device(run_one_cell);
}
END_TEST

/* Uniform positions over the grid and beyond it (clamped into border cells): mostly cells of
 * a few particles, a non-power-of-two count, K from 1 (every particle its own block) up. */
static void run_uniform(pbfcl_cl *cl)
{
    (void)cl;
    size_t n = test_small() ? 150 : 3001;
    float *pos = uniform(n, -0.3f, 2.3f, 2);
    pbfcl_split_compress_desc d = {0};
    run_case(pos, n, &d);
    size_t few = test_small() ? 40 : n; /* Oclgrind runs every work-item of a block */
    d.block_size = 1;
    ck_assert_uint_eq(run_case(pos, few, &d), few);
    d.block_size = 3;
    run_case(pos, few, &d);
    free(pos);
}

START_TEST(test_split_uniform)
{
    test_each_device(run_uniform);
}
END_TEST

/* Dense blobs: cells of several blocks, neighbourhoods of hundreds of candidates staged in
 * many chunks, including a stage of one entry. */
static void run_clustered(pbfcl_cl *cl)
{
    (void)cl;
    size_t n = test_small() ? 200 : 3001;
    float *pos = malloc(n * 16);
    uint64_t rng = 4;
    for (size_t i = 0; i < n; i++) {
        float cx = 0.5f + 0.9f * (float)(i % 3), spread = 0.02f + 0.1f * (float)(i % 2);
        for (int a = 0; a < 3; a++)
            pos[4 * i + a] = cx + test_randf(&rng, -spread, spread);
        pos[4 * i + 3] = 0.0f;
    }
    pbfcl_split_compress_desc d = {0};
    size_t blocks = run_case(pos, n, &d);
    ck_assert_uint_gt(blocks, 0);
    d.stage_limit = 7;
    d.block_size = 9;
    run_case(pos, n, &d);
    d.stage_limit = 1;
    d.block_size = 0;
    run_case(pos, test_small() ? 60 : n, &d);
    free(pos);
}

START_TEST(test_split_clustered)
{
    test_each_device(run_clustered);
}
END_TEST

/* A work-group size that is not a power of two (13) with K = 13 and K = 6 (two stripes of 6
 * and one idle work-item), and the largest work-group size of the device. */
static void run_odd_wg(pbfcl_cl *cl)
{
    size_t n = test_small() ? 120 : 2000;
    float *pos = uniform(n, 0.0f, 1.0f, 5);
    pbfcl_split_compress_desc d = {.wg_limit = 13};
    run_case(pos, n, &d);
    d.block_size = 6;
    run_case(pos, n, &d);
    if (!test_small()) {
        pbfcl_split_compress_desc big = {.wg_limit = cl->dev.max_wg < 1024 ? cl->dev.max_wg : 1024};
        run_case(pos, n, &big);
    }
    free(pos);
}

START_TEST(test_split_odd_wg)
{
    test_each_device(run_odd_wg);
}
END_TEST

/* list_density over the grid's neighbour lists gives the same densities (the benchmark
 * compares the two paths with it). */
static void run_list_density(pbfcl_cl *cl)
{
    (void)cl;
    size_t n = test_small() ? 150 : 3001;
    float *pos = uniform(n, -0.1f, 2.1f, 6);
    pbfcl_split_compress_desc d = {0};
    split_case c;
    case_create(&c, n, &d);
    test_host_init(c.g.neighbor_count_buf, n * 4, 0);
    test_host_init(c.g.neighbor_buf, n * 256 * 4, 0);
    sorted_set s = sort_on_host(pos, n, &test_params);
    test_write_buffer(c.pos_buf, s.pos, n * 16);
    test_write_buffer(c.g.cell_id_buf, s.ids, n * 4);
    ck_assert_int_eq(pbfcl_grid_cells(&c.g, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_neighbours(&c.g, c.pos_buf, false, n, 0.25f, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_split_list_density(&c.sc, &c.g, c.pos_buf, n, 0.25f, TEST_MASS,
                                              c.density_buf, c.count_buf, NULL),
                     PBFCL_OK);
    check_density(&c, &s, 0.25f, "list_density");
    free(s.pos);
    free(s.ids);
    free(pos);
    case_destroy(&c);
}

START_TEST(test_split_list_density)
{
    test_each_device(run_list_density);
}
END_TEST

/* Rejected inputs: K above the work-group size, bad grid bits, h above the cell size or not
 * positive, a non-positive mass, n over the capacity, a grid of other grid bits. */
static void run_errors(pbfcl_cl *cl)
{
    pbfcl_split_compress sc;
    pbfcl_split_compress_desc d = {.grid_bits = 3, .capacity = 10, .wg_limit = 8, .block_size = 9};
    ck_assert_int_eq(pbfcl_split_compress_create(&sc, cl, &d), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_split_compress_destroy(&sc); /* a failed create left nothing to release twice */
    d.block_size = 8;
    d.grid_bits = 0;
    ck_assert_int_eq(pbfcl_split_compress_create(&sc, cl, &d), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_split_compress_destroy(NULL);
    split_case c;
    pbfcl_split_compress_desc ok = {.wg_limit = 8};
    case_create(&c, 10, &ok);
    ck_assert_int_eq(pbfcl_split_count(&c.sc, &c.g, 11, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_split_scan(&c.sc, 11, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_split_write(&c.sc, &c.g, 11, NULL), PBFCL_ERR_BAD_ARGUMENT);
    const float bad_h[] = {0.26f, 0.0f, -1.0f, NAN};
    for (size_t k = 0; k < sizeof bad_h / sizeof bad_h[0]; k++)
        ck_assert_int_eq(pbfcl_split_density(&c.sc, &c.g, c.pos_buf, 1, bad_h[k], TEST_MASS,
                                             c.density_buf, c.count_buf, NULL),
                         PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_split_density(&c.sc, &c.g, c.pos_buf, 1, 0.25f, 0.0f, c.density_buf,
                                         c.count_buf, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_grid other;
    pbfcl_grid_params p = test_params;
    p.grid_bits = 4;
    ck_assert_int_eq(pbfcl_grid_create(&other, cl, &p, 10, 8), PBFCL_OK);
    ck_assert_int_eq(pbfcl_split_count(&c.sc, &other, 5, NULL), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_grid_destroy(&other);
    case_destroy(&c);
}

START_TEST(test_split_errors)
{
    test_each_device(run_errors);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split_compress");
    TCase *tc = tcase_create("split_compress");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_split_one_cell);
    tcase_add_test(tc, test_split_uniform);
    tcase_add_test(tc, test_split_clustered);
    tcase_add_test(tc, test_split_odd_wg);
    tcase_add_test(tc, test_split_list_density);
    tcase_add_test(tc, test_split_errors);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
