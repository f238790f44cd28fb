/* Tests of the stage kinematic_path (cl/bodies/kinematic.cl) against a plain C reference in double
 * precision (Rodrigues' rotation formula) at awkward sizes (1, work-group size - 1, wg, wg + 1,
 * primes): particles in a shuffled order, some static with a path, some static without one
 * and some fluid with an entry (neither of those moves); paths that translate until a stop
 * time, turn about a tilted axis, or both; keyed paths (held after the last key, a single key,
 * repeating) at times between keys, on a key and past the end; the ids renamed after a
 * removal; bad paths and keys refused. */
#include "bodies/kinematic.h"
#include "sim/sim.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATHS 6
#define TWO_PI 6.28318530717958647692f

static const pbfcl_kinematic_path paths[PATHS] = {
    {.center = {0.5f, 0.25f, -0.5f}, .velocity = {0.3f, -0.2f, 0.1f}, .stop = 1.0f},
    {.center = {-0.25f, 0.5f, 0.75f}, .angular_velocity = {0.6f, -1.2f, 2.0f}, .stop = FLT_MAX},
    {.center = {0.1f, 0.2f, 0.3f},
     .velocity = {-0.4f, 0.1f, 0.2f},
     .angular_velocity = {3.0f, 0.5f, -1.0f},
     .stop = 0.75f},
    /* keys: a shift, then a turn about z with a shift, then back to the start place turned
     * about a tilted axis; held from 1.5 s */
    {.center = {0.3f, -0.1f, 0.2f},
     .stop = FLT_MAX,
     .key_count = 3,
     .keys = {{0.3f, {0.2f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}},
              {0.8f, {0.2f, 0.1f, -0.1f}, {0.0f, 0.0f, 1.2f}},
              {1.5f, {0.0f, 0.0f, 0.0f}, {0.5f, -0.5f, 3.0f}}}},
    /* one key, held from 0.6 s */
    {.center = {-0.4f, 0.0f, 0.1f},
     .stop = FLT_MAX,
     .key_count = 1,
     .keys = {{0.6f, {-0.3f, 0.05f, 0.2f}, {1.0f, 0.0f, 0.0f}}}},
    /* repeating every 0.5 s: out and turning about y, back after a whole turn */
    {.center = {0.0f, 0.4f, -0.3f},
     .stop = FLT_MAX,
     .key_count = 2,
     .repeat = true,
     .keys = {{0.25f, {0.1f, 0.2f, 0.0f}, {0.0f, 1.0f, 0.0f}},
              {0.5f, {0.0f, 0.0f, 0.0f}, {0.0f, TWO_PI, 0.0f}}}},
};

/* Path p's displacement and rotation vector at time t (double precision): rates up to the
 * stop time, or the keys (from the start key (0, 0, 0) at time 0) interpolated linearly. */
static void reference_pose(const pbfcl_kinematic_path *p, double t, double shift[3], double rot[3])
{
    for (int k = 0; k < 3; k++) /* the start key's, until a key is reached */
        shift[k] = rot[k] = 0.0;
    if (p->key_count == 0) {
        double te = fmin(t, (double)p->stop);
        for (int k = 0; k < 3; k++) {
            shift[k] = p->velocity[k] * te;
            rot[k] = p->angular_velocity[k] * te;
        }
        return;
    }
    double period = p->keys[p->key_count - 1].time;
    if (p->repeat)
        t -= period * floor(t / period);
    double t0 = 0.0, p0[3] = {0, 0, 0}, r0[3] = {0, 0, 0};
    for (int e = 0; e < p->key_count; e++) {
        const pbfcl_path_key *k1 = &p->keys[e];
        double s = t >= k1->time ? 1.0 : (t - t0) / (k1->time - t0);
        for (int k = 0; k < 3; k++) {
            shift[k] = p0[k] + s * (k1->position[k] - p0[k]);
            rot[k] = r0[k] + s * (k1->rotation[k] - r0[k]);
        }
        if (t < k1->time)
            return;
        t0 = k1->time;
        for (int k = 0; k < 3; k++) {
            p0[k] = k1->position[k];
            r0[k] = k1->rotation[k];
        }
    }
}

/* Where a particle of rest offset d on path p is at time t (double precision). */
static void reference(const pbfcl_kinematic_path *p, const float d[3], double t, double out[3])
{
    double shift[3], w[3], speed = 0.0, x[3] = {d[0], d[1], d[2]};
    reference_pose(p, t, shift, w);
    for (int k = 0; k < 3; k++)
        speed += w[k] * w[k];
    speed = sqrt(speed);
    if (speed > 0.0) {
        double a[3] = {w[0] / speed, w[1] / speed, w[2] / speed}, ang = speed;
        double c = cos(ang), s = sin(ang), ad = a[0] * x[0] + a[1] * x[1] + a[2] * x[2];
        double cr[3] = {a[1] * x[2] - a[2] * x[1], a[2] * x[0] - a[0] * x[2],
                        a[0] * x[1] - a[1] * x[0]};
        for (int k = 0; k < 3; k++)
            x[k] = x[k] * c + cr[k] * s + a[k] * ad * (1.0 - c);
    }
    for (int k = 0; k < 3; k++)
        out[k] = p->center[k] + shift[k] + x[k];
}

/* One case of n particles: slot i holds particle id[i] of phase[i] at pred (float4); entries
 * name particles by id with a path and a rest offset. */
typedef struct kin_case {
    size_t n, entries;
    unsigned *id, *phase, *entry_id, *entry_path;
    float *offset, *pred;
    int *entry_of; /* per id: its entry or -1 */
} kin_case;

static void make_case(kin_case *c, size_t n, uint64_t *rng)
{
    c->n = n;
    c->id = malloc(n * 4);
    c->phase = malloc(n * 4);
    c->entry_id = malloc(n * 4);
    c->entry_path = malloc(n * 4);
    c->offset = malloc(n * 12);
    c->pred = malloc(n * 16);
    c->entry_of = malloc((2 * n + 2) * sizeof *c->entry_of); /* room for renamed ids */
    for (size_t i = 0; i < n; i++)
        c->id[i] = (unsigned)i;
    test_shuffle(c->id, n, rng); /* shuffled: the slots are not the ids */
    c->entries = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned kind = test_rand(rng) % 4; /* 0, 1: static on a path; 2: static; 3: fluid */
        c->phase[i] = kind < 3 ? PBFCL_SIM_PHASE_STATIC : PBFCL_SIM_PHASE_FLUID;
        for (int k = 0; k < 4; k++)
            c->pred[4 * i + k] = k < 3 ? test_randf(rng, -1.0f, 1.0f) : 0.0f;
        c->entry_of[c->id[i]] = -1;
        if (kind == 2 || (kind == 3 && test_rand(rng) % 2)) /* no entry; or fluid with one */
            continue;
        size_t e = c->entries++;
        c->entry_of[c->id[i]] = (int)e;
        c->entry_id[e] = c->id[i];
        c->entry_path[e] = test_rand(rng) % PATHS;
        for (int k = 0; k < 3; k++)
            c->offset[3 * e + k] = test_randf(rng, -0.3f, 0.3f);
    }
}

static void free_case(kin_case *c)
{
    free(c->id);
    free(c->phase);
    free(c->entry_id);
    free(c->entry_path);
    free(c->offset);
    free(c->pred);
    free(c->entry_of);
}

/* Runs kinematic_path at time t on the case and checks every slot: a static particle with an
 * entry at its path's position (within 2e-6 m + 2e-6 relative: float rounding), every other
 * one unchanged, bit for bit. */
static void check_case(pbfcl_cl *cl, pbfcl_kinematic *k, const kin_case *c, double t,
                       bool set_paths)
{
    size_t n = c->n;
    cl_mem phase_buf = NULL, id_buf = NULL, pred_buf = NULL;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n * 4, "phases", &phase_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n * 4, "ids", &id_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n * 16, "pred", &pred_buf), PBFCL_OK);
    clEnqueueWriteBuffer(cl->queue, phase_buf, CL_TRUE, 0, n * 4, c->phase, 0, NULL, NULL);
    clEnqueueWriteBuffer(cl->queue, id_buf, CL_TRUE, 0, n * 4, c->id, 0, NULL, NULL);
    clEnqueueWriteBuffer(cl->queue, pred_buf, CL_TRUE, 0, n * 16, c->pred, 0, NULL, NULL);
    if (set_paths)
        ck_assert_int_eq(
            pbfcl_kinematic_set(k, PATHS, paths, c->entries, c->entry_id, c->entry_path, c->offset),
            PBFCL_OK);
    else
        k->time = 0.0; /* the clock restarts as a set would */
    /* the clock: two moves of t / 2 reach t */
    ck_assert_int_eq(
        pbfcl_kinematic_move(k, n, (float)(t / 2), phase_buf, id_buf, pred_buf, NULL, 0), PBFCL_OK);
    ck_assert_int_eq(
        pbfcl_kinematic_move(k, n, (float)(t / 2), phase_buf, id_buf, pred_buf, NULL, 0), PBFCL_OK);
    float *out = malloc(n * 16);
    ck_assert_int_eq(
        clEnqueueReadBuffer(cl->queue, pred_buf, CL_TRUE, 0, n * 16, out, 0, NULL, NULL),
        CL_SUCCESS);
    double t_used = (double)(float)(t / 2) + (double)(float)(t / 2);
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        int e = c->entry_of[c->id[i]];
        if (e < 0 || c->phase[i] != PBFCL_SIM_PHASE_STATIC) {
            expect(memcmp(out + 4 * i, c->pred + 4 * i, 16) == 0,
                   "n %zu, slot %zu (id %u, entry %d): moved without a path", n, i, c->id[i], e);
            continue;
        }
        double want[3];
        reference(&paths[c->entry_path[e]], c->offset + 3 * e, t_used, want);
        for (int a = 0; a < 3; a++)
            expect(fabs(out[4 * i + a] - want[a]) <= 2e-6 + 2e-6 * fabs(want[a]),
                   "n %zu, t %g, slot %zu (id %u, path %u): %c %.7f, expected %.7f", n, t, i,
                   c->id[i], c->entry_path[e], "xyz"[a], out[4 * i + a], want[a]);
        expect(out[4 * i + 3] == (float)PBFCL_SIM_PHASE_STATIC,
               "slot %zu: w %g, expected the static phase's tag %g", i, out[4 * i + 3],
               (float)PBFCL_SIM_PHASE_STATIC);
        moved++;
    }
    ck_assert(n < 8 || moved > 0);
    free(out);
    pbfcl_cl_release_buffer(&phase_buf);
    pbfcl_cl_release_buffer(&id_buf);
    pbfcl_cl_release_buffer(&pred_buf);
}

static void run_reference(pbfcl_cl *cl)
{
    pbfcl_kinematic k;
    ck_assert_int_eq(pbfcl_kinematic_create(&k, cl), PBFCL_OK);
    size_t wg = k.wg;
    size_t sizes[] = {1, wg - 1, wg, wg + 1, 1009, test_small() ? 2 * wg + 3 : 40009};
    /* between keys, on a key (0.3, 0.8), past the end of every path, and across the repeat */
    const double times[] = {0.0, 0.3, 0.4, 0.8, 0.9, 1.15, 2.5, 3.7};
    uint64_t rng = 12345;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        if (sizes[s] == 0)
            continue;
        kin_case c;
        make_case(&c, sizes[s], &rng);
        for (size_t q = 0; q < sizeof times / sizeof times[0]; q++)
            check_case(cl, &k, &c, times[q], true);
        printf("    n %zu (wg %zu): %zu particles on paths\n", c.n, wg, c.entries);
        free_case(&c);
    }
    pbfcl_kinematic_destroy(&k);
}

START_TEST(test_kinematic_path_reference)
{
    test_each_device(run_reference);
}
END_TEST

/* After a removal renames the ids (here: id -> 2 id + 1, an order-keeping map), the entries
 * follow: the case renamed the same way, without setting the paths again, gives the
 * reference positions. */
static void run_remap(pbfcl_cl *cl)
{
    pbfcl_kinematic k;
    ck_assert_int_eq(pbfcl_kinematic_create(&k, cl), PBFCL_OK);
    uint64_t rng = 777;
    kin_case c;
    make_case(&c, 300, &rng);
    check_case(cl, &k, &c, 0.6, true);
    unsigned *new_id = malloc(c.n * sizeof *new_id);
    for (size_t i = 0; i < c.n; i++)
        new_id[i] = 2 * (unsigned)i + 1;
    ck_assert_int_eq(pbfcl_kinematic_remap_ids(&k, new_id), PBFCL_OK);
    for (size_t i = 0; i < 2 * c.n + 2; i++)
        c.entry_of[i] = -1;
    for (size_t e = 0; e < c.entries; e++) {
        c.entry_id[e] = new_id[c.entry_id[e]];
        c.entry_of[c.entry_id[e]] = (int)e;
    }
    for (size_t i = 0; i < c.n; i++)
        c.id[i] = new_id[c.id[i]];
    check_case(cl, &k, &c, 0.6, false);
    free(new_id);
    free_case(&c);
    pbfcl_kinematic_destroy(&k);
}

START_TEST(test_kinematic_remap)
{
    test_each_device(run_remap);
}
END_TEST

/* Bad paths and entries are refused with a message; the paths set before stay. */
static void run_bad(pbfcl_cl *cl)
{
    pbfcl_kinematic k;
    ck_assert_int_eq(pbfcl_kinematic_create(&k, cl), PBFCL_OK);
    unsigned id[2] = {3, 3}, which[2] = {0, 0}, far[2] = {0, PATHS};
    float off[6] = {0};
    ck_assert_int_eq(pbfcl_kinematic_set(&k, PATHS, paths, 2, id, which, off),
                     PBFCL_ERR_BAD_ARGUMENT); /* one id twice */
    unsigned two[2] = {3, 4};
    ck_assert_int_eq(pbfcl_kinematic_set(&k, PATHS, paths, 2, two, far, off),
                     PBFCL_ERR_BAD_ARGUMENT); /* path PATHS of PATHS */
    pbfcl_kinematic_path bad = paths[0];
    bad.velocity[1] = NAN;
    ck_assert_int_eq(pbfcl_kinematic_set(&k, 1, &bad, 2, two, which, off), PBFCL_ERR_BAD_ARGUMENT);
    bad = paths[0];
    bad.stop = 0.0f;
    ck_assert_int_eq(pbfcl_kinematic_set(&k, 1, &bad, 2, two, which, off), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_kinematic_path keyed[5] = {paths[3], paths[3], paths[3], paths[5], paths[4]};
    keyed[0].keys[1].time = keyed[0].keys[0].time; /* not after the key before */
    keyed[1].keys[2].rotation[0] = INFINITY;
    keyed[2].velocity[0] = 0.1f;          /* keys and rates */
    keyed[3].keys[1].position[2] = 0.01f; /* repeats from a pose that is not the start */
    keyed[4].key_count = PBFCL_MAX_PATH_KEYS + 1;
    for (int b = 0; b < 5; b++)
        ck_assert_int_eq(pbfcl_kinematic_set(&k, 1, &keyed[b], 2, two, which, off),
                         PBFCL_ERR_BAD_ARGUMENT);
    keyed[0] = paths[3];
    keyed[0].keys[0].time = 0.0f; /* a key at the start's time */
    ck_assert_int_eq(pbfcl_kinematic_set(&k, 1, &keyed[0], 2, two, which, off),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_kinematic_set(&k, PATHS, paths, 2, two, which, off), PBFCL_OK);
    ck_assert_uint_eq(k.entries, 2);
    pbfcl_kinematic_destroy(&k);
}

START_TEST(test_kinematic_bad_paths)
{
    test_each_device(run_bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kinematic");
    TCase *tc = tcase_create("kinematic");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_kinematic_path_reference);
    tcase_add_test(tc, test_kinematic_remap);
    tcase_add_test(tc, test_kinematic_bad_paths);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
