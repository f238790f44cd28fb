/* Reference tests of a split simulation's device exchange (cl/sim/exchange.cl, host/core/sim/
 * exchange.c): the fates of particles against slabs (migrate, ghosts, drop) and their lists
 * against the host's own tests in double of the cuts and halo (host/dist/, dist_owner and
 * near_slab), at n = 0, 1, the work-group size - 1, + 0, + 1, primes and past a scan block,
 * on 1, 2, 3 and 5 ranks with this rank first, inside and last; coordinates on and next to
 * every bound, NaN; the slots after a sort and the keep list's pick against a shuffled gather
 * map; pbfcl_sim_compact_device against pbfcl_sim_compact; and the rebalancing's extent and
 * histogram against a C reference at 0, 1, the work-group size - 1, + 0, + 1 and primes, with
 * 1, 101, 4099 and 16384 bins (the rebalancing's), counted in local memory whole or in tiles of
 * 37 and 1000 bins. */
#include "sim/exchange.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A layout: cuts[0] = -inf, cuts[ranks] = +inf, inner cuts at least 2 halo apart. */
typedef struct layout {
    int ranks, axis;
    double cuts[8];
    float halo;
} layout;

static void make_layout(layout *l, int ranks, int axis, uint64_t *rng)
{
    l->ranks = ranks;
    l->axis = axis;
    l->halo = 0.0123f * 1.001f;
    l->cuts[0] = -INFINITY;
    l->cuts[ranks] = INFINITY;
    double at = -0.3;
    for (int r = 1; r < ranks; r++) { /* planned cuts are halfway between two floats */
        at += 2.5 * l->halo + test_randf(rng, 0.0f, 0.1f);
        float a = (float)at, b = nextafterf(a, INFINITY);
        l->cuts[r] = 0.5 * ((double)a + b);
    }
}

/* The host's tests (host/dist/): the last r with cuts[r] <= c; c within the halo of slab r. */
static int ref_owner(const layout *l, float c)
{
    int lo = 0, hi = l->ranks - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (l->cuts[mid] <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static bool ref_near(const layout *l, int r, float c)
{
    return c >= l->cuts[r] - l->halo && c < l->cuts[r + 1] + l->halo;
}

/* The smallest float >= x. */
static float at_least(double x)
{
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

static void bounds_of(const layout *l, float *b)
{
    int k = l->ranks;
    for (int r = 0; r < k; r++) {
        b[r] = at_least(l->cuts[r]);
        b[k + r] = at_least(l->cuts[r] - l->halo);
        b[2 * k + r] = at_least(l->cuts[r + 1] + l->halo);
    }
}

/* n particles: the split coordinate random over the slabs and their halos, a third of them on
 * or one float next to a bound (a cut, a cut -+ halo), one NaN; ghost flags random. */
static void make_particles(const layout *l, size_t n, uint64_t *rng, float *pred, cl_uchar *ghost)
{
    for (size_t i = 0; i < n; i++) {
        float c =
            test_randf(rng, -0.35f, (float)(l->ranks > 1 ? l->cuts[l->ranks - 1] : 0) + 0.05f);
        if (l->ranks > 1 && test_rand(rng) % 3 == 0) {
            int r = 1 + (int)(test_rand(rng) % (unsigned)(l->ranks - 1));
            double x[] = {l->cuts[r], l->cuts[r] - l->halo, l->cuts[r] + l->halo};
            float f = (float)x[test_rand(rng) % 3];
            int step = (int)(test_rand(rng) % 3) - 1;
            c = step < 0 ? nextafterf(f, -INFINITY) : step > 0 ? nextafterf(f, INFINITY) : f;
        }
        for (int a = 0; a < 4; a++)
            pred[4 * i + a] = a == l->axis ? c : test_randf(rng, -1.0f, 1.0f);
        ghost[i] = test_rand(rng) % 5 == 0;
    }
    if (n > 2)
        pred[4 * (n / 2) + l->axis] = NAN;
}

typedef struct fixture {
    pbfcl_cl *cl;
    pbfcl_exchange x;
    cl_mem pred_buf;
} fixture;

/* Uploads the particles, and the ghost flags through exchange_sorted with the identity map
 * (the way they reach the device in a run): flags[j] = j >= owned is not random, so the
 * random flags go in by a host write instead, which the kernels read the same. */
static void upload(fixture *f, size_t n, const float *pred, const cl_uchar *ghost)
{
    if (n == 0)
        return;
    test_write_buffer(f->pred_buf, pred, n * 16);
    test_write_buffer(f->x.ghost_buf, ghost, n);
    f->x.ghosts_valid = 1;
}

static void check_migrate(fixture *f, const layout *l, int rank, size_t n, const float *pred,
                          const cl_uchar *ghost)
{
    size_t sent, kept;
    const cl_uint *list;
    ck_assert_int_eq(
        pbfcl_exchange_classify(&f->x, f->pred_buf, n, PBFCL_EXCHANGE_MIGRATE, &sent, &kept, &list),
        PBFCL_OK);
    cl_uint *keep = malloc((kept + 1) * 4);
    test_read_buffer(f->x.keep_buf, keep, kept * 4);
    size_t s = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ghost[i])
            continue;
        int r = ref_owner(l, pred[4 * i + l->axis]);
        if (r == rank) {
            expect(k < kept && keep[k] == i, "migrate n %zu rank %d/%d: keep[%zu] = %u, not %zu", n,
                   rank, l->ranks, k, k < kept ? keep[k] : 0u, i);
            k++;
        } else {
            expect(s < sent && list[2 * s] == i && list[2 * s + 1] == (cl_uint)r,
                   "migrate n %zu rank %d/%d: entry %zu = (%u, %u), not (%zu, %d)", n, rank,
                   l->ranks, s, s < sent ? list[2 * s] : 0u, s < sent ? list[2 * s + 1] : 0u, i, r);
            s++;
        }
    }
    expect(s == sent && k == kept, "migrate n %zu: %zu sent, %zu kept; reference %zu, %zu", n, sent,
           kept, s, k);
    free(keep);
}

static void check_ghosts(fixture *f, const layout *l, int rank, size_t n, const float *pred)
{
    size_t sent, kept, s = 0;
    const cl_uint *list;
    f->x.ghosts_valid = 0; /* the ghosts' lists come after migration: none then */
    ck_assert_int_eq(
        pbfcl_exchange_classify(&f->x, f->pred_buf, n, PBFCL_EXCHANGE_GHOSTS, &sent, &kept, &list),
        PBFCL_OK);
    f->x.ghosts_valid = 1;
    for (size_t i = 0; i < n; i++) {
        float c = pred[4 * i + l->axis];
        bool any = false;
        for (int r = 0; r < l->ranks; r++)
            any = any || (r != rank && ref_near(l, r, c));
        if (!any)
            continue;
        expect(s < sent && list[2 * s] == i,
               "ghosts n %zu rank %d/%d: entry %zu is slot %u, not %zu", n, rank, l->ranks, s,
               s < sent ? list[2 * s] : 0u, i);
        cl_uint first = PBFCL_EXCHANGE_FIRST(list[2 * s + 1]);
        cl_uint last = PBFCL_EXCHANGE_LAST(list[2 * s + 1]);
        for (int r = 0; r < l->ranks; r++) {
            bool listed = r != rank && (cl_uint)r >= first && (cl_uint)r <= last;
            expect(listed == (r != rank && ref_near(l, r, c)),
                   "ghosts n %zu rank %d/%d: slot %zu at %.9g to rank %d: %d, reference %d", n,
                   rank, l->ranks, i, (double)c, r, listed, !listed);
        }
        s++;
    }
    expect(s == sent && kept == 0, "ghosts n %zu: %zu sent, reference %zu", n, sent, s);
}

static void check_drop(fixture *f, size_t n, const cl_uchar *ghost)
{
    size_t sent, kept, k = 0;
    const cl_uint *list;
    ck_assert_int_eq(
        pbfcl_exchange_classify(&f->x, f->pred_buf, n, PBFCL_EXCHANGE_DROP, &sent, &kept, &list),
        PBFCL_OK);
    cl_uint *keep = malloc((kept + 1) * 4);
    test_read_buffer(f->x.keep_buf, keep, kept * 4);
    for (size_t i = 0; i < n; i++)
        if (!ghost[i]) {
            expect(k < kept && keep[k] == i, "drop n %zu: keep[%zu] is not %zu", n, k, i);
            k++;
        }
    expect(sent == 0 && k == kept, "drop n %zu: %zu sent, %zu kept; reference 0, %zu", n, sent,
           kept, k);
    free(keep);
}

/* A shuffled gather map, the ghosts from owned on: the flags and the new slots of a random list
 * of old slots and of the ghosts; then the pick of 4-byte rows through the drop's keep list. */
static void check_sorted(fixture *f, size_t n, uint64_t *rng)
{
    size_t owned = n ? test_rand(rng) % (n + 1) : 0, listed = n ? 1 + n / 3 : 0;
    cl_uint *index = malloc(n * 4 + 4), *old = malloc(listed * 4 + 4);
    cl_uint *got = malloc((listed + n) * 4 + 4), *rows = malloc(n * 4 + 4);
    cl_uchar *flags = malloc(n + 1);
    for (size_t j = 0; j < n; j++)
        index[j] = (cl_uint)j, rows[j] = test_rand(rng);
    test_shuffle(index, n, rng);
    for (size_t k = 0; k < listed; k++)
        old[k] = test_rand(rng) % (cl_uint)n;
    cl_mem index_buf, rows_buf, out_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(f->cl, CL_MEM_READ_WRITE, n * 4, "index", &index_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(f->cl, CL_MEM_READ_WRITE, n * 4, "rows", &rows_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(f->cl, CL_MEM_READ_WRITE, (listed + n) * 4, "out", &out_buf),
                     PBFCL_OK);
    test_write_buffer(index_buf, index, n * 4);
    test_write_buffer(rows_buf, rows, n * 4);
    ck_assert_int_eq(pbfcl_exchange_sorted(&f->x, index_buf, n, owned), PBFCL_OK);
    size_t count = listed + (n - owned);
    ck_assert_int_eq(pbfcl_exchange_slots(&f->x, old, listed, count, owned, out_buf, got),
                     PBFCL_OK);
    test_read_buffer(f->x.ghost_buf, flags, n);
    for (size_t j = 0; j < n; j++) {
        expect(flags[j] == (index[j] >= owned), "sorted n %zu: ghost flag %zu", n, j);
        size_t k = index[j] < owned ? SIZE_MAX : listed + (index[j] - owned);
        if (k != SIZE_MAX)
            expect(got[k] == j, "slots n %zu: ghost %zu at %u, not %zu", n, k, got[k], j);
    }
    for (size_t k = 0; k < listed; k++)
        expect(index[got[k]] == old[k], "slots n %zu: old slot %u went to %u, which holds %u", n,
               old[k], got[k], index[got[k]]);
    /* the drop's keep list is the non-ghosts in order: pick their rows */
    size_t sent, kept;
    const cl_uint *list;
    ck_assert_int_eq(
        pbfcl_exchange_classify(&f->x, f->pred_buf, n, PBFCL_EXCHANGE_DROP, &sent, &kept, &list),
        PBFCL_OK);
    expect(kept == owned, "pick n %zu: %zu kept of %zu owned", n, kept, owned);
    ck_assert_int_eq(pbfcl_exchange_pick(&f->x, rows_buf, kept, out_buf), PBFCL_OK);
    test_read_buffer(out_buf, got, kept * 4);
    for (size_t j = 0, k = 0; j < n; j++)
        if (index[j] < owned) {
            expect(got[k] == rows[j], "pick n %zu: row %zu", n, k);
            k++;
        }
    pbfcl_cl_release_buffer(&index_buf);
    pbfcl_cl_release_buffer(&rows_buf);
    pbfcl_cl_release_buffer(&out_buf);
    free(index), free(old), free(got), free(rows), free(flags);
}

static void check_size(pbfcl_cl *cl, int ranks, int rank, size_t n, uint64_t seed)
{
    layout l;
    uint64_t rng = seed;
    make_layout(&l, ranks, (int)(seed % 3), &rng);
    float b[3 * 8];
    bounds_of(&l, b);
    fixture f;
    memset(&f, 0, sizeof f);
    f.cl = cl;
    ck_assert_int_eq(pbfcl_exchange_create(&f.x, cl, n, l.axis, rank, ranks, b), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n * 16, "pred", &f.pred_buf), PBFCL_OK);
    float *pred = malloc(n * 16 + 16);
    cl_uchar *ghost = malloc(n + 1);
    make_particles(&l, n, &rng, pred, ghost);
    upload(&f, n, pred, ghost);
    check_migrate(&f, &l, rank, n, pred, ghost);
    check_ghosts(&f, &l, rank, n, pred);
    check_drop(&f, n, ghost);
    check_sorted(&f, n, &rng);
    pbfcl_cl_release_buffer(&f.pred_buf);
    pbfcl_exchange_destroy(&f.x);
    pbfcl_exchange_destroy(&f.x); /* a second destroy is harmless */
    free(pred);
    free(ghost);
}

static void exchange_sizes(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_exchange_build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size;
    size_t sizes[] = {0, 1, 2, wg - 1, wg, wg + 1, 97, 1009, 2 * wg + 1, 4099, 70001};
    int ranks[][2] = {{1, 0}, {2, 0}, {2, 1}, {3, 1}, {3, 2}, {5, 0}, {5, 2}, {5, 4}};
    int nsizes = test_small() ? 9 : (int)(sizeof sizes / sizeof sizes[0]);
    for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++)
        for (int s = 0; s < nsizes; s++)
            check_size(cl, ranks[k][0], ranks[k][1], sizes[s], 1000 * k + (uint64_t)s + 1);
}

START_TEST(test_exchange_against_reference)
{
    test_each_device(exchange_sizes);
}
END_TEST

/* The rebalancing's histogram (exchange_extent, exchange_histogram) against a plain C
 * reference: the extent by fminf/fmaxf over the coordinates (NaN passed over), each bin by
 * the float formula of exchange.h, floor((c - lo) * scale) clamped (NaN: 0), over n particles
 * whose coordinates run a tenth past both ends of the bins, some on bin edges, one NaN. */
static void check_histogram(pbfcl_cl *cl, size_t n, size_t bins, size_t tile, uint64_t seed)
{
    uint64_t rng = seed;
    int axis = (int)(seed % 3);
    float b[3] = {-INFINITY, 0.0f, 1.0f};
    pbfcl_exchange x;
    ck_assert_int_eq(pbfcl_exchange_create(&x, cl, n, axis, 0, 1, b), PBFCL_OK);
    x.tile = tile; /* 0: from the device's local memory */
    float *pos = malloc(16 * n + 16), lo = -0.3f, scale = (float)bins / 1.7f;
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 4; a++)
            pos[4 * i + a] = test_randf(&rng, -0.5f, 1.6f);
        if (test_rand(&rng) % 4 == 0) /* on an edge: (c - lo) * scale whole */
            pos[4 * i + axis] = lo + (float)(test_rand(&rng) % (bins + 1)) / scale;
    }
    if (n > 2)
        pos[4 * (n / 3) + axis] = NAN;
    cl_mem pos_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 16 * n, "pos", &pos_buf), PBFCL_OK);
    if (n > 0)
        test_write_buffer(pos_buf, pos, 16 * n);
    cl_uint *got = malloc(4 * bins), *want = calloc(bins, 4);
    float ref_lo = INFINITY, ref_hi = -INFINITY, got_lo, got_hi;
    for (size_t i = 0; i < n; i++) {
        float c = pos[4 * i + axis], t = (c - lo) * scale;
        ref_lo = fminf(ref_lo, c);
        ref_hi = fmaxf(ref_hi, c);
        want[t >= (float)bins ? bins - 1 : t >= 0.0f ? (size_t)t : 0]++;
    }
    ck_assert_int_eq(pbfcl_exchange_extent(&x, pos_buf, n, &got_lo, &got_hi), PBFCL_OK);
    expect(got_lo == ref_lo && got_hi == ref_hi, "extent n %zu: %g to %g, not %g to %g", n, got_lo,
           got_hi, ref_lo, ref_hi);
    ck_assert_int_eq(pbfcl_exchange_histogram(&x, pos_buf, n, lo, scale, bins, got), PBFCL_OK);
    size_t total = 0;
    for (size_t k = 0; k < bins; k++) {
        total += got[k];
        expect(got[k] == want[k], "histogram n %zu, %zu bins, tile %zu: bin %zu holds %u, not %u",
               n, bins, tile, k, got[k], want[k]);
    }
    expect(total == n, "histogram n %zu: %zu counted", n, total);
    pbfcl_cl_release_buffer(&pos_buf);
    pbfcl_exchange_destroy(&x);
    free(pos), free(got), free(want);
}

static void histogram_sizes(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_exchange_build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size;
    size_t sizes[] = {0, 1, wg - 1, wg, wg + 1, 1009, 20011};
    struct {
        size_t bins, tile;
    } shapes[] = {{1, 0}, {101, 0}, {101, 37}, {4099, 1000}, {16384, 0}};
    int nsizes = test_small() ? 6 : (int)(sizeof sizes / sizeof sizes[0]);
    int nshapes = test_small() ? 4 : (int)(sizeof shapes / sizeof shapes[0]);
    for (int k = 0; k < nshapes; k++)
        for (int s = 0; s < nsizes; s++)
            check_histogram(cl, sizes[s], shapes[k].bins, shapes[k].tile,
                            100 * (uint64_t)k + (uint64_t)s);
}

START_TEST(test_exchange_histogram_against_reference)
{
    test_each_device(histogram_sizes);
}
END_TEST

static void bad_arguments(pbfcl_cl *cl)
{
    pbfcl_exchange x;
    float b[6] = {0};
    ck_assert_int_eq(pbfcl_exchange_create(&x, cl, 10, 0, 2, 2, b), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_exchange_create(&x, cl, 10, 3, 0, 2, b), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_exchange_destroy(&x);
    ck_assert_int_eq(pbfcl_exchange_create(&x, cl, 10, 0, 0, 2, b), PBFCL_OK);
    size_t sent, kept;
    const cl_uint *list;
    ck_assert_int_eq(
        pbfcl_exchange_classify(&x, x.fate_buf, 11, PBFCL_EXCHANGE_DROP, &sent, &kept, &list),
        PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_exchange_destroy(&x);
}

START_TEST(test_exchange_bad_arguments)
{
    test_each_device(bad_arguments);
}
END_TEST

/* pbfcl_sim_compact_device keeps the same particles in the same slots with the same ids and
 * state as pbfcl_sim_compact given the same slots and their ids. */
static void compact_device(pbfcl_cl *cl)
{
    size_t n = test_small() ? 61 : 1000;
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.solver.multilevel = 0; /* the coarse correction: test_multilevel */
    for (int a = 0; a < 3; a++) {
        s.domain_min[a] = -0.25f;
        s.domain_max[a] = 0.25f;
    }
    uint64_t rng = 7;
    float *x = malloc(n * 12), *v = malloc(n * 12), *got[2][2];
    unsigned *keep = malloc(n * 4), *ids = malloc(n * 4), *got_ids[2];
    for (size_t i = 0; i < 3 * n; i++) {
        x[i] = test_randf(&rng, -0.2f, 0.2f);
        v[i] = test_randf(&rng, -1.0f, 1.0f);
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (test_rand(&rng) % 3) {
            keep[m] = (unsigned)i;
            ids[m++] = (unsigned)i; /* ids are the initial slots */
        }
    layout l;
    make_layout(&l, 1, 0, &rng);
    float b[3];
    bounds_of(&l, b);
    pbfcl_exchange xc;
    ck_assert_int_eq(pbfcl_exchange_create(&xc, cl, n, 0, 0, 1, b), PBFCL_OK);
    test_write_buffer(xc.keep_buf, keep, m * 4);
    for (int k = 0; k < 2; k++) {
        pbfcl_sim *sim = NULL;
        ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, x, n), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_write(sim, NULL, v), PBFCL_OK);
        ck_assert_int_eq(k ? pbfcl_sim_compact_device(sim, xc.keep_buf, m)
                           : pbfcl_sim_compact(sim, keep, m, ids),
                         PBFCL_OK);
        ck_assert_uint_eq(pbfcl_sim_count(sim), m);
        got[k][0] = malloc(m * 12 + 12), got[k][1] = malloc(m * 12 + 12);
        got_ids[k] = malloc(m * 4 + 4);
        ck_assert_int_eq(pbfcl_sim_read(sim, got[k][0], got[k][1], NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_read_ids(sim, got_ids[k]), PBFCL_OK);
        pbfcl_sim_destroy(sim);
    }
    for (size_t i = 0; i < m; i++) {
        ck_assert_uint_eq(got_ids[1][i], ids[i]);
        ck_assert_uint_eq(got_ids[0][i], got_ids[1][i]);
    }
    ck_assert_int_eq(memcmp(got[0][0], got[1][0], m * 12), 0);
    ck_assert_int_eq(memcmp(got[0][1], got[1][1], m * 12), 0);
    ck_assert_float_eq(got[1][0][0], x[3 * keep[0]]);
    pbfcl_exchange_destroy(&xc);
    for (int k = 0; k < 2; k++)
        free(got[k][0]), free(got[k][1]), free(got_ids[k]);
    free(x), free(v), free(keep), free(ids);
}

START_TEST(test_exchange_compact_device)
{
    test_each_device(compact_device);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("exchange");
    TCase *tc = tcase_create("exchange");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_exchange_against_reference);
    tcase_add_test(tc, test_exchange_histogram_against_reference);
    tcase_add_test(tc, test_exchange_bad_arguments);
    tcase_add_test(tc, test_exchange_compact_device);
    suite_add_tcase(suite, tc);
    return test_run_suite(suite, true);
}
