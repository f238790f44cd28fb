/* Reference tests of a split simulation's overlap (docs/DISTRIBUTED.md, "Overlap"): the lists by
 * region (cl/sim/regions.cl, host/core/sim/regions.c) against a C reference, with random ghost
 * flags and neighbour lists longer than the kernels read, at n = 1, the work-group size - 1,
 * + 0, + 1, a prime and past a scan block; and lambda, delta and collide over slot lists (PBF's
 * program built with -D PBFCL_SLOT_LIST, host/core/pbf/pbf_lists.c) against the launch over
 * every particle: two simulations of the same fluid, one of them with a sync callback that
 * leaves each exchange after lambda, delta and collide "in flight" with a random partition of
 * the slots into an interior and a boundary list, stage by stage and over whole steps, the
 * outputs the same to the byte, and the wait hook called once between each stage's two
 * launches. */
#include "pbf/pbf.h"
#include "sim/regions.h"
#include "sim/sim.h"
#include "sim/solver_method.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference of regions_flags and regions_lists: owned particles (ghost[i] == 0) whose first
 * min(count[i], most) neighbours hold a ghost go to the boundary, the other owned ones to the
 * interior, each in slot order. */
static void ref_regions(const unsigned char *ghost, const cl_uint *count, const cl_uint *nbr,
                        size_t n, size_t most, cl_uint *boundary, size_t *nb, cl_uint *interior,
                        size_t *ni)
{
    *nb = *ni = 0;
    for (size_t i = 0; i < n; i++) {
        if (ghost[i])
            continue;
        bool near = false;
        size_t c = count[i] < most ? count[i] : most;
        for (size_t k = 0; k < c; k++)
            near = near || ghost[nbr[k * n + i]];
        if (near)
            boundary[(*nb)++] = (cl_uint)i;
        else
            interior[(*ni)++] = (cl_uint)i;
    }
}

static void regions_n(pbfcl_cl *cl, pbfcl_regions *r, size_t n, uint64_t *rng)
{
    const size_t most = 8; /* entries the kernels read; counts go up to 11 */
    unsigned char *ghost = malloc(n + 1);
    cl_uint *count = malloc(4 * n + 4), *nbr = malloc(4 * n * 11 + 4);
    cl_uint *want_b = malloc(4 * n + 4), *want_i = malloc(4 * n + 4), *got = malloc(4 * n + 4);
    unsigned ghost_share = test_rand(rng) % 4; /* none, a few, some, many ghosts */
    for (size_t i = 0; i < n; i++) {
        ghost[i] = ghost_share > 0 && test_rand(rng) % (20 / ghost_share) == 0;
        count[i] = test_rand(rng) % 12;
        for (size_t k = 0; k < 11; k++)
            nbr[k * n + i] = test_rand(rng) % n;
    }
    size_t nb, ni;
    ref_regions(ghost, count, nbr, n, most, want_b, &nb, want_i, &ni);
    cl_mem bufs[4];
    size_t bytes[] = {4 * n + 4, 4 * n + 4, 44 * n + 4, (2 * n + 1) * 4};
    for (int b = 0; b < 4; b++) {
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, bytes[b], "test", &bufs[b]),
                         PBFCL_OK);
        test_host_init(bufs[b], bytes[b], 0x7fffffffu);
    }
    test_write_buffer(bufs[0], ghost, n);
    test_write_buffer(bufs[1], count, 4 * n);
    test_write_buffer(bufs[2], nbr, 44 * n);
    size_t got_b, got_i;
    ck_assert_int_eq(
        pbfcl_regions_make(r, bufs[0], bufs[1], bufs[2], n, most, bufs[3], &got_b, &got_i),
        PBFCL_OK);
    ck_assert_msg(got_b == nb && got_i == ni, "n %zu: %zu boundary and %zu interior, want %zu, %zu",
                  n, got_b, got_i, nb, ni);
    test_read_buffer(r->slots_buf, got, 4 * (nb + ni));
    for (size_t k = 0; k < nb + ni; k++)
        expect(got[k] == (k < nb ? want_b[k] : want_i[k - nb]),
               "n %zu: list entry %zu is slot %u, want %u (%s)", n, k, got[k],
               k < nb ? want_b[k] : want_i[k - nb], k < nb ? "boundary" : "interior");
    for (int b = 0; b < 4; b++)
        pbfcl_cl_release_buffer(&bufs[b]);
    free(ghost), free(count), free(nbr), free(want_b), free(want_i), free(got);
}

static void regions_against_reference(pbfcl_cl *cl)
{
    pbfcl_regions r;
    size_t cap = test_small() ? 600 : 3000;
    ck_assert_int_eq(pbfcl_regions_create(&r, cl, cap), PBFCL_OK);
    uint64_t rng = 17;
    size_t wg = r.wg, sizes[] = {1, 2, wg - 1, wg, wg + 1, 509, cap};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int round = 0; round < 3; round++)
            regions_n(cl, &r, sizes[k], &rng);
    size_t b, i;
    ck_assert_int_eq(pbfcl_regions_make(&r, NULL, NULL, NULL, cap + 1, 8, NULL, &b, &i),
                     PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_regions_destroy(&r);
}

START_TEST(test_regions_against_reference)
{
    test_each_device(regions_against_reference);
}
END_TEST

/* The test's sync callback: at lambda, delta and collide the exchange is left "in flight" with
 * the slots split at random into an interior and a boundary list (both in random order, one
 * buffer, the interior first or second by turns); the wait hook counts its calls. */
typedef struct split_hook {
    pbfcl_cl *cl;
    cl_mem slots_buf;
    cl_uint *slots;
    size_t cap;
    uint64_t rng;
    int started, waited, turn;
} split_hook;

static pbfcl_status hook(void *ctx, pbfcl_sim *sim, pbfcl_sim_sync_point point, const cl_mem *bufs,
                         const size_t *elem, int count)
{
    (void)bufs, (void)elem, (void)count;
    split_hook *h = ctx;
    if (point == PBFCL_SYNC_WAIT) {
        h->waited++;
        return PBFCL_OK;
    }
    if (point != PBFCL_SYNC_LAMBDA && point != PBFCL_SYNC_DELTA && point != PBFCL_SYNC_COLLIDE)
        return PBFCL_OK;
    size_t n = pbfcl_sim_count(sim);
    for (size_t i = 0; i < n; i++)
        h->slots[i] = (cl_uint)i;
    test_shuffle(h->slots, n, &h->rng);
    size_t turn = (size_t)h->turn++ % 4; /* every split, an empty interior, an empty boundary */
    size_t inner = turn == 1 ? 0 : turn == 2 ? n : test_rand(&h->rng) % (n + 1);
    test_write_buffer(h->slots_buf, h->slots, 4 * n);
    pbfcl_sim_lists l = {h->slots_buf, 0, inner, inner, n - inner};
    if (turn == 3) /* the boundary first in the buffer */
        l = (pbfcl_sim_lists){h->slots_buf, n - inner, inner, 0, n - inner};
    pbfcl_sim_sync_started(sim, &l);
    h->started++;
    return PBFCL_OK;
}

/* n particles of a block of fluid (spacing 1.8 r, jittered) on the floor of the default box. */
static void fluid_block(const pbfcl_scene *s, size_t n, float *x)
{
    uint64_t rng = 99 + n;
    int side = (int)ceil(cbrt((double)n));
    double d = 1.8 * s->particle_radius;
    for (size_t i = 0; i < n; i++) {
        int a = (int)(i % (size_t)side), b = (int)(i / (size_t)side % (size_t)side),
            c = (int)(i / ((size_t)side * side));
        x[3 * i] = (float)(0.3 + d * a) + test_randf(&rng, -0.1f, 0.1f) * (float)d;
        x[3 * i + 1] = (float)(0.011 + d * c) + test_randf(&rng, -0.1f, 0.1f) * (float)d;
        x[3 * i + 2] = (float)(0.3 + d * b) + test_randf(&rng, -0.1f, 0.1f) * (float)d;
    }
}

/* A simulation's state: positions, velocities, densities, x*, the lambdas and q - x*. */
#define STATE_FIELDS 6

static float **read_state(pbfcl_sim *sim, size_t n)
{
    float **got = malloc(STATE_FIELDS * sizeof *got);
    for (int f = 0; f < STATE_FIELDS; f++)
        got[f] = malloc(12 * n + 12);
    ck_assert_int_eq(pbfcl_sim_read(sim, got[0], got[1], got[2]), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, got[3], got[4], got[5], NULL, NULL), PBFCL_OK);
    return got;
}

static void free_state(float **got)
{
    for (int f = 0; f < STATE_FIELDS; f++)
        free(got[f]);
    free(got);
}

/* The stages run on each simulation: 0 predict, the search and lambda over every particle;
 * then delta, collide, lambda and delta, each after an exchange left in flight (on the
 * simulation with the hook); then whole steps. */
#define STAGES 7
static const char *const stage_names[STAGES] = {"lambda", "delta",  "collide",      "lambda",
                                                "delta",  "a step", "a second step"};

static void run_stage(pbfcl_sim *sim, int st)
{
    if (st == 0) {
        ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    } else if (st >= 5) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    } else {
        pbfcl_status (*fn)(pbfcl_sim *, pbfcl_profile *) = st == 2   ? pbfcl_pbf_collide
                                                           : st == 3 ? pbfcl_pbf_lambda
                                                                     : pbfcl_pbf_delta;
        ck_assert_int_eq(fn(sim, NULL), PBFCL_OK);
    }
}

static void lists_n(pbfcl_cl *cl, size_t n)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s); /* a 1 m box, r = 1 cm */
    s.solver.multilevel = 0;  /* the coarse correction: test_multilevel */
    s.solver.iterations = 3;  /* lambda after delta and after collide */
    s.solver.contact_interval = 1;
    s.solver.chebyshev_rho = 0.9f; /* delta's weighted steps */
    float *x = malloc(12 * n);
    fluid_block(&s, n, x);
    /* over every particle first: the two share the device's queue, and a launch of one pays
     * the other's exchange in flight (pbfcl_cl.owed) */
    pbfcl_sim *a = NULL, *b = NULL;
    float **want[STAGES];
    ck_assert_int_eq(pbfcl_sim_create(&a, cl, &s, x, n), PBFCL_OK);
    for (int st = 0; st < STAGES; st++) {
        run_stage(a, st);
        want[st] = read_state(a, n);
    }
    pbfcl_sim_destroy(a);
    ck_assert_int_eq(pbfcl_sim_create(&b, cl, &s, x, n), PBFCL_OK);
    split_hook h = {.cl = cl, .cap = n, .rng = 5 + n};
    h.slots = malloc(4 * n);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 4 * n, "test slots", &h.slots_buf),
                     PBFCL_OK);
    test_host_init(h.slots_buf, 4 * n, 0);
    pbfcl_sim_set_sync(b, hook, &h);
    static const char *const what[STATE_FIELDS] = {"positions", "velocities", "densities",
                                                   "x*",        "lambdas",    "q - x*"};
    for (int st = 0; st < STAGES; st++) {
        pbfcl_sim_lists l;
        if (st > 0 && st < 5)
            ck_assert_msg(pbfcl_sim_sync_lists(b, &l) && h.waited == st - 1,
                          "n %zu: before %s, no exchange in flight (%d waited)", n, stage_names[st],
                          h.waited);
        run_stage(b, st);
        if (st < 5)
            ck_assert_msg(h.waited == st && h.started == st + 1,
                          "n %zu: %s: %d exchanges started, %d waited", n, stage_names[st],
                          h.started, h.waited);
        float **got = read_state(b, n);
        for (int f = 0; f < STATE_FIELDS; f++) {
            size_t len = f == 2 || f == 4 ? n : 3 * n;
            for (size_t i = 0; i < len; i++)
                expect(!memcmp(&got[f][i], &want[st][f][i], 4),
                       "n %zu, after %s: %s[%zu] over lists %.9g, over every particle %.9g", n,
                       stage_names[st], what[f], i, got[f][i], want[st][f][i]);
        }
        free_state(got);
        free_state(want[st]);
    }
    ck_assert_msg(h.started == h.waited && h.started > 20, "%d exchanges in flight, %d waited",
                  h.started, h.waited);
    pbfcl_sim_destroy(b);
    pbfcl_cl_release_buffer(&h.slots_buf);
    free(h.slots);
    free(x);
}

static void lists_against_whole(pbfcl_cl *cl)
{
    size_t wg = 0; /* the particle kernels' work-group size */
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.solver.multilevel = 0; /* the coarse correction: test_multilevel */
    float one[3] = {0, 0, 0};
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, one, 1), PBFCL_OK);
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    wg = v.wg;
    pbfcl_sim_destroy(sim);
    size_t sizes[] = {1, wg - 1, wg + 1, test_small() ? 150 : 1009};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        lists_n(cl, sizes[k]);
}

START_TEST(test_lists_against_whole_launch)
{
    test_each_device(lists_against_whole);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("overlap");
    TCase *regions = tcase_create("regions"), *lists = tcase_create("lists");
    tcase_set_timeout(regions, 600);
    tcase_set_timeout(lists, 600);
    tcase_add_test(regions, test_regions_against_reference);
    tcase_add_test(lists, test_lists_against_whole_launch);
    suite_add_tcase(suite, regions);
    suite_add_tcase(suite, lists);
    return test_run_suite(suite, true);
}
