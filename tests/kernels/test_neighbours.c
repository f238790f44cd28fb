/* Tests of the neighbours stage: neighbour lists equal as sets to a brute-force O(n^2)
 * search for random, clustered, cell-border and outside-the-grid particles, with the
 * neighbours within the near radius (and only those) at the front of each list; with phases,
 * a solid (phase not 0) listing no particle of its own phase and every other; overflow
 * counted without writing past the lists (a canary region guards them); and the whole
 * hash -> sort -> reorder -> cells -> neighbours pipeline. */
#include "grid/grid.h"
#include "grid_ref.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CANARY 0xdeadbeefu

/* A grid of 8 cells of 0.25 per axis covering [0, 2]^3. */
static const pbfcl_grid_params test_params = {
    .origin = {0, 0, 0, 0}, .cell_size = 0.25f, .inv_cell_size = 4.0f, .grid_bits = 3};

/* Squared distance of two positions. */
static float distance2(const float *p, const float *q)
{
    const float ex = q[0] - p[0], ey = q[1] - p[1], ez = q[2] - p[2];
    return ex * ex + ey * ey + ez * ez;
}

/* The device may round the squared distance differently (fused multiply-add), so pairs
 * within a relative 1e-5 of the radius may be listed or not; all others must match. */
#define BORDER_TOL 1e-5f

/* Particles that may have more than max neighbours (counting the pairs on the border), as
 * found by the last check_lists. */
static unsigned over_maybe;

/* Whether phase p is a solid's (cl/common/pbfcl_shared.h: no fluid flag). */
static bool is_solid(pbfcl_uint p)
{
    return (p & PBFCL_PHASE_FLUID_BIT) == 0u;
}

/* Whether j is a candidate neighbour of i: another particle, and not of i's phase where i is a
 * solid without the self-collide flag (phase NULL: no phases). */
static int pair(const pbfcl_uint *phase, size_t i, size_t j)
{
    return j != i && !(phase && is_solid(phase[i]) && !(phase[i] & PBFCL_PHASE_SELF_COLLIDE_BIT) &&
                       phase[j] == phase[i]);
}

/* Reads the lists back and compares them, as sets, with a brute-force search (phase: per
 * sorted particle, or NULL). Returns the number of particles with more than max neighbours
 * (those that certainly have more). Checks the canaries past the lists. */
static unsigned check_lists(pbfcl_grid *g, const sorted_set *s, const pbfcl_uint *phase,
                            float radius, float near_radius, size_t capacity)
{
    pbfcl_cl *cl = test_cl;
    size_t n = s->n, max = g->max_neighbors;
    pbfcl_uint *count = malloc(capacity * 4), *list = malloc(capacity * max * 4);
    pbfcl_uint *near = malloc(capacity * 4);
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, g->neighbor_near_buf, CL_TRUE, 0, n * 4, near,
                                         0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, g->neighbor_count_buf, CL_TRUE, 0, capacity * 4,
                                         count, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, g->neighbor_buf, CL_TRUE, 0, capacity * max * 4,
                                         list, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t e = n; e < capacity; e++)
        expect(count[e] == CANARY, "count[%zu] past n=%zu was overwritten", e, n);
    for (size_t e = max * n; e < capacity * max; e++)
        expect(list[e] == CANARY, "list entry %zu past max*n=%zu was overwritten", e, max * n);
    unsigned over = 0;
    over_maybe = 0;
    char *listed = calloc(n + 1, 1);
    const float r2 = radius * radius, inner = r2 * (1.0f - BORDER_TOL),
                outer = r2 * (1.0f + BORDER_TOL);
    const float near2 = near_radius * near_radius, near_inner = near2 * (1.0f - BORDER_TOL),
                near_outer = near2 * (1.0f + BORDER_TOL);
    for (size_t i = 0; i < n; i++) {
        size_t sure = 0, maybe = 0;
        for (size_t j = 0; j < n; j++) {
            float d2 = distance2(&s->pos[4 * i], &s->pos[4 * j]);
            sure += pair(phase, i, j) && d2 < inner;
            maybe += pair(phase, i, j) && d2 < outer;
        }
        size_t lo = sure < max ? sure : max, hi = maybe < max ? maybe : max;
        over += sure > max;
        over_maybe += maybe > max;
        expect(count[i] >= lo && count[i] <= hi,
               "particle %zu: %u neighbours listed, expected %zu (up to %zu)", i, count[i], lo, hi);
        expect(near[i] <= count[i], "particle %zu: %u near of %u listed", i, near[i], count[i]);
        for (size_t k = 0; k < count[i]; k++) {
            pbfcl_uint j = list[k * n + i];
            expect(j < n && j != i && !listed[j], "particle %zu: bad or repeated entry %u", i, j);
            expect(pair(phase, i, j), "particle %zu (phase %u): %u of its own phase listed", i,
                   phase ? phase[i] : 0u, j);
            float d2 = distance2(&s->pos[4 * i], &s->pos[4 * j]);
            expect(d2 < outer, "particle %zu: %u listed but not within the radius", i, j);
            if (k < near[i]) /* the near part: within the near radius */
                expect(d2 < near_outer, "particle %zu: entry %zu (%u) in the near part at %g", i, k,
                       j, (double)sqrtf(d2));
            else /* every listed neighbour within the near radius is in the near part */
                expect(d2 >= near_inner, "particle %zu: entry %zu (%u) at %g past the near part", i,
                       k, j, (double)sqrtf(d2));
            listed[j] = 1;
        }
        if (count[i] < max) /* complete list: every sure neighbour is in it */
            for (size_t j = 0; j < n; j++)
                expect(!pair(phase, i, j) || listed[j] ||
                           distance2(&s->pos[4 * i], &s->pos[4 * j]) >= inner,
                       "particle %zu: neighbour %zu missing", i, j);
        /* a solid's list, when not staged in local memory (large capacities), was written as
         * found and its own phase dropped after: the entries it dropped stay past its count */
        bool solid = phase && is_solid(phase[i]);
        for (size_t k = count[i]; k < max && !solid; k++)
            expect(list[k * n + i] == CANARY, "particle %zu: entry %zu past count written", i, k);
        for (size_t k = 0; k < count[i]; k++)
            listed[list[k * n + i]] = 0;
    }
    free(listed);
    free(count);
    free(list);
    free(near);
    return over;
}

static void fill(cl_mem buf, size_t bytes)
{
    const pbfcl_uint canary = CANARY;
    ck_assert_int_eq(clEnqueueFillBuffer(test_cl->queue, buf, &canary, 4, 0, bytes, 0, NULL, NULL),
                     CL_SUCCESS);
}

/* host_init of the grid's cell tables (to EMPTY, as cells_init left them). */
static void host_init_cells(pbfcl_grid *g)
{
    size_t bytes = (size_t)4 << (3 * g->params.grid_bits);
    test_host_init(g->cell_start_buf, bytes, PBFCL_EMPTY);
    test_host_init(g->cell_end_buf, bytes, PBFCL_EMPTY);
}

/* The marks of neighbours_solids: a fluid particle with a solid within the radius carries the
 * search's stamp, one with none within the radius (and its rounding) does not. */
static void check_near_solid(pbfcl_grid *g, const sorted_set *s, const pbfcl_uint *phase,
                             float radius)
{
    size_t n = s->n, marked = 0;
    pbfcl_uint *mark = malloc(n * 4);
    ck_assert_uint_gt(g->solid_stamp, 0);
    ck_assert_int_eq(clEnqueueReadBuffer(test_cl->queue, g->near_solid_buf, CL_TRUE, 0, n * 4, mark,
                                         0, NULL, NULL),
                     CL_SUCCESS);
    const float r2 = radius * radius, inner = r2 * (1.0f - BORDER_TOL),
                outer = r2 * (1.0f + BORDER_TOL);
    for (size_t i = 0; i < n; i++) {
        if (is_solid(phase[i]))
            continue;
        int sure = 0, maybe = 0;
        for (size_t j = 0; j < n; j++) {
            float d2 = distance2(&s->pos[4 * i], &s->pos[4 * j]);
            sure |= is_solid(phase[j]) && d2 < inner;
            maybe |= is_solid(phase[j]) && d2 < outer;
        }
        bool is = mark[i] == g->solid_stamp;
        marked += is;
        expect(!sure || is, "fluid %zu has a solid neighbour but no mark (%u, stamp %u)", i,
               mark[i], g->solid_stamp);
        expect(maybe || !is, "fluid %zu has no solid neighbour but the mark", i);
    }
    ck_assert_msg(marked > 0, "no fluid particle next to a solid");
    free(mark);
}

/* The phase of sorted particle i in the cases with phases: runs of 7 in sorted order (nearby
 * particles, as a body's are) cycling through fluid, a body, a body with self-collide (group 2)
 * and the static phase. */
static pbfcl_uint case_phase(size_t i)
{
    static const pbfcl_uint cycle[4] = {PBFCL_PHASE_FLUID_WORD, 1u,
                                        2u | PBFCL_PHASE_SELF_COLLIDE_BIT, PBFCL_PHASE_STATIC_WORD};
    return cycle[(i / 7) % 4];
}

/* Runs cells and neighbours on host-sorted positions and checks the lists (with phases:
 * neighbours_solids on the tags of case_phase in w; without, w is whatever pos has); returns the
 * overflow count the grid reported (checked against the reference). */
static unsigned run_case_phases(const float *pos, size_t n, float radius, float near_radius,
                                unsigned max_neighbors, int phases)
{
    pbfcl_cl *cl = test_cl;
    size_t capacity = n + 37;
    pbfcl_grid g;
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &test_params, capacity, max_neighbors), PBFCL_OK);
    host_init_cells(&g);
    sorted_set s = sort_on_host(pos, n, &test_params);
    pbfcl_uint *phase = NULL;
    if (phases) { /* the tags in w, as pbf_predict writes them (cl/pbf/pbf.cl, pbf_phase_tag) */
        phase = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            phase[i] = case_phase(i);
            s.pos[4 * i + 3] = (float)phase[i];
        }
    }
    cl_mem pos_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n * 16, "pos", &pos_buf), PBFCL_OK);
    test_write_buffer(pos_buf, s.pos, n * 16);
    test_write_buffer(g.cell_id_buf, s.ids, n * 4);
    /* from the host, not filled: neighbours_solids reads what neighbours wrote there, and
     * Oclgrind records a host write only (docs/ALGORITHM.md, "Oclgrind and reused buffers") */
    test_host_init(g.neighbor_count_buf, capacity * 4, CANARY);
    test_host_init(g.neighbor_near_buf, capacity * 4, 0);
    test_host_init(g.neighbor_buf, capacity * max_neighbors * 4,
                   CANARY); /* the kernel reads it back */
    ck_assert_int_eq(pbfcl_grid_cells(&g, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_neighbours(&g, pos_buf, phases, n, radius, near_radius, NULL),
                     PBFCL_OK);
    unsigned over = check_lists(&g, &s, phase, radius, near_radius, capacity), reported = 99;
    if (phases) {
        check_near_solid(&g, &s, phase, radius);
        /* the same particles, all fluid now: the last search's marks do not count */
        float *fluid = malloc(n * 16);
        memcpy(fluid, s.pos, n * 16);
        for (size_t i = 0; i < n; i++)
            fluid[4 * i + 3] = 0.0f;
        test_write_buffer(pos_buf, fluid, n * 16);
        ck_assert_int_eq(pbfcl_grid_neighbours(&g, pos_buf, true, n, radius, near_radius, NULL),
                         PBFCL_OK);
        pbfcl_uint *mark = malloc(n * 4);
        test_read_buffer(g.near_solid_buf, mark, n * 4);
        for (size_t i = 0; i < n; i++)
            expect(mark[i] != g.solid_stamp, "particle %zu marked with no solid left", i);
        free(mark), free(fluid);
    }
    ck_assert_uint_eq(over > 0, max_neighbors < 8); /* the cases with small lists overflow */
    ck_assert_int_eq(pbfcl_grid_read_overflow(&g, &reported), PBFCL_OK);
    ck_assert_msg(reported >= over && reported <= over_maybe, "overflow %u, expected %u..%u",
                  reported, over, over_maybe);
    ck_assert_int_eq(pbfcl_grid_read_overflow(&g, &reported), PBFCL_OK);
    ck_assert_uint_eq(reported, 0); /* reset by the read */
    pbfcl_cl_release_buffer(&pos_buf);
    free(phase);
    free(s.pos);
    free(s.ids);
    pbfcl_grid_destroy(&g);
    return over;
}

static unsigned run_case(const float *pos, size_t n, float radius, float near_radius,
                         unsigned max_neighbors)
{
    return run_case_phases(pos, n, radius, near_radius, max_neighbors, 0);
}

static size_t case_size(void)
{
    return test_small() ? 200 : 3001;
}

static void run_random(pbfcl_cl *cl)
{
    (void)cl;
    size_t n = case_size();
    float *pos = malloc(n * 16);
    uint64_t rng = 3;
    for (size_t i = 0; i < 4 * n; i++)
        pos[i] = test_randf(&rng, 0.0f, 2.0f);
    run_case(pos, n, 0.24f, 0.11f, 256);
    run_case(pos, n, 0.25f, 0.0f, 256);  /* nothing near */
    run_case(pos, n, 0.25f, 0.25f, 256); /* all near */
    run_case(pos, n, 0.25f, 0.17f,
             64); /* the simulation's capacity: lists staged in local memory */
    run_case(pos, 1, 0.25f, 0.1f, 8);
    run_case(pos, 2, 0.25f, 0.1f, 8);
    /* with phases: the solids' lists without their own phase, at both capacities */
    run_case_phases(pos, n, 0.24f, 0.11f, 256, 1);
    run_case_phases(pos, n, 0.25f, 0.17f, 64, 1);
    free(pos);
}

/* Dense blobs: many particles per cell and many neighbours each. */
static void run_clustered(pbfcl_cl *cl)
{
    (void)cl;
    size_t n = case_size();
    float *pos = malloc(n * 16);
    uint64_t rng = 4;
    for (size_t i = 0; i < n; i++) {
        float cx = 0.5f + 0.9f * (float)(i % 3), spread = 0.02f + 0.1f * (float)(i % 2);
        for (int a = 0; a < 3; a++)
            pos[4 * i + a] = cx + test_randf(&rng, -spread, spread);
        pos[4 * i + 3] = 0.0f;
    }
    run_case(pos, n, 0.25f, 0.06f, 1024);
    run_case_phases(pos, n, 0.25f, 0.06f, 1024, 1); /* solids among many of their own */
    free(pos);
}

/* A lattice with spacing half a cell: every coordinate is a multiple of 0.125, half of them
 * exactly on cell borders, and the radius is the cell size (distances are exact). */
static void run_borders(pbfcl_cl *cl)
{
    (void)cl;
    size_t side = test_small() ? 6 : 16, n = side * side * side;
    float *pos = malloc(n * 16);
    for (size_t i = 0; i < n; i++) {
        pos[4 * i + 0] = 0.125f * (float)(i % side);
        pos[4 * i + 1] = 0.125f * (float)(i / side % side);
        pos[4 * i + 2] = 0.125f * (float)(i / side / side);
        pos[4 * i + 3] = 0.0f;
    }
    run_case(pos, n, 0.25f, 0.125f, 128);
    free(pos);
}

/* Half of the particles outside [0, 2]^3: clamped into border cells with particles that are
 * far away; the sets must still be exact. */
static void run_outside(pbfcl_cl *cl)
{
    (void)cl;
    size_t n = case_size();
    float *pos = malloc(n * 16);
    uint64_t rng = 6;
    for (size_t i = 0; i < 4 * n; i++)
        pos[i] = test_randf(&rng, -1.0f, 3.0f);
    pos[0] = -1.0f; /* two close particles far outside, on a cell-multiple coordinate */
    pos[4] = -1.0f + 0.1f;
    pos[1] = pos[5] = pos[2] = pos[6] = -0.5f;
    run_case(pos, n, 0.25f, 0.2f, 256);
    free(pos);
}

/* A small list capacity: overflow is counted and nothing is written past the lists. */
static void run_overflow(pbfcl_cl *cl)
{
    (void)cl;
    size_t n = case_size();
    float *pos = malloc(n * 16);
    uint64_t rng = 8;
    for (size_t i = 0; i < 4 * n; i++)
        pos[i] = test_randf(&rng, 0.9f, 1.1f);
    ck_assert_uint_gt(run_case(pos, n, 0.25f, 0.15f, 5), n / 2);
    free(pos);
}

START_TEST(test_neighbours_random)
{
    test_each_device(run_random);
}
END_TEST

START_TEST(test_neighbours_clustered)
{
    test_each_device(run_clustered);
}
END_TEST

START_TEST(test_neighbours_borders)
{
    test_each_device(run_borders);
}
END_TEST

START_TEST(test_neighbours_outside)
{
    test_each_device(run_outside);
}
END_TEST

START_TEST(test_neighbours_overflow)
{
    test_each_device(run_overflow);
}
END_TEST

/* Uploads positions, runs hash -> sort -> reorder -> cells -> neighbours on the device and
 * checks sorted ids, sorted positions and lists against the host. */
static void pipeline_step(pbfcl_grid *g, cl_mem pos_buf, cl_mem sorted_buf, const float *pos,
                          size_t n)
{
    pbfcl_cl *cl = test_cl;
    test_write_buffer(pos_buf, pos, n * 16);
    fill(g->neighbor_count_buf, g->capacity * 4);
    test_host_init(g->neighbor_buf, g->capacity * g->max_neighbors * 4, CANARY);
    ck_assert_int_eq(pbfcl_grid_hash(g, pos_buf, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_sort(g, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_reorder(g, pos_buf, sorted_buf, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_cells(g, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_neighbours(g, sorted_buf, false, n, 0.25f, 0.125f, NULL), PBFCL_OK);
    sorted_set s = sort_on_host(pos, n, &test_params);
    pbfcl_uint *ids = malloc(n * 4 + 4);
    float *sorted = malloc(n * 16 + 16);
    if (n) {
        ck_assert_int_eq(
            clEnqueueReadBuffer(cl->queue, g->cell_id_buf, CL_TRUE, 0, n * 4, ids, 0, NULL, NULL),
            CL_SUCCESS);
        ck_assert_int_eq(
            clEnqueueReadBuffer(cl->queue, sorted_buf, CL_TRUE, 0, n * 16, sorted, 0, NULL, NULL),
            CL_SUCCESS);
    }
    for (size_t i = 0; i < n; i++) {
        expect(ids[i] == s.ids[i], "sorted cell id %zu: %#x, expected %#x", i, ids[i], s.ids[i]);
        expect(memcmp(&sorted[4 * i], &s.pos[4 * i], 16) == 0, "sorted position %zu", i);
    }
    check_lists(g, &s, NULL, 0.25f, 0.125f, g->capacity);
    unsigned over = 1;
    ck_assert_int_eq(pbfcl_grid_read_overflow(g, &over), PBFCL_OK);
    ck_assert_uint_eq(over, 0);
    free(ids);
    free(sorted);
    free(s.pos);
    free(s.ids);
}

/* Two steps with different particle sets through the real pipeline (the second step must
 * not see the first step's cell ranges), then an empty step. */
static void run_pipeline(pbfcl_cl *cl)
{
    size_t n1 = case_size(), n2 = n1 / 3;
    pbfcl_grid g;
    ck_assert_int_eq(pbfcl_grid_create(&g, cl, &test_params, n1, 256), PBFCL_OK);
    float *pos = malloc(n1 * 16);
    uint64_t rng = 10;
    for (size_t i = 0; i < 4 * n1; i++)
        pos[i] = test_randf(&rng, -0.2f, 2.2f);
    cl_mem pos_buf, sorted_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n1 * 16, "pos", &pos_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n1 * 16, "sorted", &sorted_buf),
                     PBFCL_OK);
    host_init_cells(&g);
    test_host_init(sorted_buf, n1 * 16, 0);
    test_host_init(g.cell_id_buf, n1 * 4, 0);
    test_host_init(g.index_buf, n1 * 4, 0);
    pipeline_step(&g, pos_buf, sorted_buf, pos, n1);
    for (size_t i = 0; i < 4 * n2; i++)
        pos[i] = test_randf(&rng, 1.0f, 2.0f);
    pipeline_step(&g, pos_buf, sorted_buf, pos, n2);
    pipeline_step(&g, pos_buf, sorted_buf, pos, 0);
    ck_assert_int_eq(pbfcl_grid_neighbours(&g, sorted_buf, false, 1, 0.3f, 0.0f, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_grid_neighbours(&g, sorted_buf, false, 1, 0.0f, 0.0f, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    /* a near radius beyond the radius, or negative, is refused */
    ck_assert_int_eq(pbfcl_grid_neighbours(&g, sorted_buf, false, 1, 0.2f, 0.21f, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_grid_neighbours(&g, sorted_buf, false, 1, 0.2f, -0.1f, NULL),
                     PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_cl_release_buffer(&pos_buf);
    pbfcl_cl_release_buffer(&sorted_buf);
    free(pos);
    pbfcl_grid_destroy(&g);
}

START_TEST(test_neighbours_pipeline)
{
    test_each_device(run_pipeline);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("neighbours");
    TCase *tc = tcase_create("neighbours");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_neighbours_random);
    tcase_add_test(tc, test_neighbours_clustered);
    tcase_add_test(tc, test_neighbours_borders);
    tcase_add_test(tc, test_neighbours_outside);
    tcase_add_test(tc, test_neighbours_overflow);
    tcase_add_test(tc, test_neighbours_pipeline);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
