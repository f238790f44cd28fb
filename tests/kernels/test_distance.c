/* Tests of the distance constraints' kernels (cl/pbf/distance.cl, host/core/pbf/distance.c): two
 * solver iterations of random constraints (edges, tethers, rigid and compliant, pinned and
 * heavy particles) on sorted particles against a plain C reference of XPBD with averaging put
 * into the multiplier, at awkward constraint counts (0, 1, wg - 1, wg + 1, a prime); the
 * tensions read back; bad constraints refused with the index and the fix. */
#include "pbf/constraint.h"
#include "pbf/distance.h"
#include "pbf/pbf.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define BOX 1.0f

/* A simulation of n particles at random places in [0.1, 0.9]^3 with gravity off: a quarter of
 * them static (pinned), the rest in group 0 with relative inverse masses in [0.25, 2]; the
 * inverse masses by id into w. */
static pbfcl_sim *make_sim(pbfcl_cl *cl, size_t n, uint64_t *rng, float *w)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.solver.multilevel = 0;                         /* the coarse correction: test_multilevel */
    s.solver.iterations = PBFCL_PBF_DISTANCE_SWEEPS; /* one sweep per iteration, as the reference */
    s.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        s.domain_min[a] = 0.0f;
        s.domain_max[a] = BOX;
        s.gravity[a] = 0.0f;
    }
    float *pos = malloc(n * 12 + 12);
    for (size_t k = 0; k < 3 * n; k++)
        pos[k] = test_randf(rng, 0.1f, 0.9f);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned *pinned = malloc(n * 4 + 4), *ids = malloc(n * 4 + 4), *group = calloc(n + 1, 4);
    float *gw = malloc(n * 4 + 4);
    size_t np = 0, ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 4 == 1) {
            pinned[np++] = (unsigned)i;
            w[i] = 0.0f;
        } else {
            ids[ng] = (unsigned)i;
            w[i] = gw[ng++] = test_randf(rng, 0.25f, 2.0f);
        }
    }
    ck_assert_int_eq(pbfcl_sim_set_static(sim, np, pinned), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_groups(sim, ng, ids, group, gw), PBFCL_OK);
    free(pos);
    free(pinned);
    free(ids);
    free(group);
    free(gw);
    return sim;
}

/* The predicted positions x* by id. */
static void read_pred(pbfcl_sim *sim, size_t n, double *x)
{
    float *p = malloc(n * 12 + 12);
    unsigned *id = malloc(n * 4 + 4);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, p, NULL, NULL, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            x[3 * id[i] + a] = p[3 * i + a];
    free(p);
    free(id);
}

/* One projection of the reference: x (by id) and lambda in place. */
static void ref_project(size_t n, size_t count, const unsigned *pair, const float *rest,
                        const float *alpha, const unsigned char *tether, const float *w,
                        double mass, double dt, int first, double *lambda, double *x)
{
    double *dx = calloc(3 * n + 3, sizeof *dx);
    unsigned *deg = calloc(2 * n + 2, sizeof *deg); /* per id: others, tethers */
    for (size_t k = 0; k < 2 * count; k++)
        deg[2 * pair[k] + (tether[k / 2] != 0)]++;
    for (size_t c = 0; c < count; c++) {
        unsigned a = pair[2 * c], b = pair[2 * c + 1];
        double d[3], len = 0.0;
        for (int k = 0; k < 3; k++) {
            d[k] = x[3 * a + k] - x[3 * b + k];
            len += d[k] * d[k];
        }
        len = sqrt(len);
        double l = first ? 0.0 : lambda[c], at = alpha[c] / (dt * dt);
        int t = tether[c] != 0; /* a tether is averaged with the particle's tethers only */
        double denom = (deg[2 * a + t] * w[a] + deg[2 * b + t] * w[b]) / mass + at, dl = 0.0;
        if (len > 0 && denom > 0) {
            dl = (-(len - rest[c]) - at * l) / denom;
            if (tether[c])
                dl = fmin(l + dl, 0.0) - l;
        }
        lambda[c] = l + dl;
        for (int k = 0; k < 3 && len > 0; k++) {
            dx[3 * a + k] += w[a] / mass * dl / len * d[k];
            dx[3 * b + k] -= w[b] / mass * dl / len * d[k];
        }
    }
    for (size_t k = 0; k < 3 * n; k++) /* kept inside the walls, as every kernel keeps them */
        x[k] = fmin(fmax(x[k] + dx[k], (double)R), (double)(BOX - R));
    free(dx);
    free(deg);
}

/* count random constraints among n particles against the reference, two iterations. */
static void check_count(pbfcl_cl *cl, size_t n, size_t count, uint64_t seed)
{
    uint64_t rng = seed;
    float *w = malloc(n * 4);
    pbfcl_sim *sim = make_sim(cl, n, &rng, w);
    unsigned *pair = malloc(2 * count * 4 + 4);
    float *rest = malloc(count * 4 + 4), *alpha = malloc(count * 4 + 4);
    unsigned char *tether = malloc(count + 1);
    for (size_t c = 0; c < count; c++) {
        do {
            pair[2 * c] = test_rand(&rng) % n;
            pair[2 * c + 1] = test_rand(&rng) % n;
        } while (pair[2 * c] == pair[2 * c + 1]);
        rest[c] = test_randf(&rng, 0.0f, 0.5f);
        alpha[c] = c % 3 == 0 ? 0.0f : test_randf(&rng, 0.0f, 1e-6f);
        tether[c] = c % 5 == 2;
    }
    ck_assert_int_eq(pbfcl_pbf_set_distances(sim, count, pair, rest, alpha, tether), PBFCL_OK);
    ck_assert_uint_eq(pbfcl_pbf_distance_count(sim), count);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK); /* sorts: slots != ids */
    double *x = malloc(n * 24), *got = malloc(n * 24), *lambda = calloc(count + 1, 8);
    read_pred(sim, n, x);
    const pbfcl_constants *p = pbfcl_sim_params(sim);
    for (int it = 0; it < 2; it++) {
        ck_assert_int_eq(pbf_project(sim, PBF_PASS_POSITIONS, it, NULL), PBFCL_OK);
        ref_project(n, count, pair, rest, alpha, tether, w, p->mass, p->dt, it == 0, lambda, x);
        read_pred(sim, n, got);
        for (size_t k = 0; k < 3 * n; k++)
            expect(test_close(got[k], x[k], 2e-5, 1e-4),
                   "count %zu, iteration %d: x*[%zu].%zu = %.7g, reference %.7g", count, it, k / 3,
                   k % 3, got[k], x[k]);
    }
    float *force = malloc(count * 4 + 4);
    ck_assert_int_eq(pbfcl_pbf_read_distance_forces(sim, force), PBFCL_OK);
    for (size_t c = 0; c < count; c++) {
        double want = -lambda[c] / (p->dt * p->dt);
        expect(test_close(force[c], want, 1e-3, 2e-3), "count %zu: force[%zu] = %g, reference %g",
               count, c, force[c], want);
    }
    pbfcl_sim_destroy(sim);
    free(w);
    free(pair);
    free(rest);
    free(alpha);
    free(tether);
    free(x);
    free(got);
    free(lambda);
    free(force);
}

static void reference_at_sizes(pbfcl_cl *cl)
{
    size_t wg = 1; /* the kernels' work-group size (pbfcl_sim_kernel_config) */
    while (wg * 2 <= cl->dev.max_wg && wg * 2 <= 256)
        wg *= 2;
    size_t counts[] = {0, 1, wg - 1, wg + 1, 263};
    size_t n = test_small() ? 40 : 300;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        check_count(cl, n, counts[k], 0x5eed + k);
}

START_TEST(test_distance_reference)
{
    test_each_device(reference_at_sizes);
}
END_TEST

/* Each bad constraint is refused naming its index and the fix; the old ones stay. */
static void bad_constraints(pbfcl_cl *cl)
{
    uint64_t rng = 7;
    float w[8];
    pbfcl_sim *sim = make_sim(cl, 8, &rng, w);
    unsigned good[2] = {0, 2};
    float one = 0.1f, zero = 0.0f;
    ck_assert_int_eq(pbfcl_pbf_set_distances(sim, 1, good, &one, &zero, NULL), PBFCL_OK);
    struct {
        unsigned pair[4];
        float rest[2], alpha[2];
        const char *says;
    } cases[] = {
        {{0, 2, 3, 3}, {0.1f, 0.1f}, {0, 0}, "distance constraint 1 joins particle 3 to itself"},
        {{0, 2, 3, 8}, {0.1f, 0.1f}, {0, 0}, "give it ids below 8"},
        {{0, 2, 3, 4}, {0.1f, -1.0f}, {0, 0}, "constraint 1 has rest length -1"},
        {{0, 2, 3, 4}, {0.1f, NAN}, {0, 0}, "constraint 1 has rest length nan"},
        {{0, 2, 3, 4}, {0.1f, 0.1f}, {0, -1e-3f}, "constraint 1 has compliance -0.001"},
        {{0, 2, 3, 4}, {0.1f, 0.1f}, {0, INFINITY}, "finite compliance >= 0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        test_capture_begin();
        pbfcl_status st =
            pbfcl_pbf_set_distances(sim, 2, cases[k].pair, cases[k].rest, cases[k].alpha, NULL);
        const char *msg = test_capture_end();
        ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
        ck_assert_msg(strstr(msg, cases[k].says), "case %zu: '%s' lacks '%s'", k, msg,
                      cases[k].says);
        ck_assert_uint_eq(pbfcl_pbf_distance_count(sim), 1);
    }
    pbfcl_sim_destroy(sim);
}

START_TEST(test_distance_bad_input)
{
    test_each_device(bad_constraints);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("distance");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_test(dev, test_distance_reference);
    tcase_add_test(dev, test_distance_bad_input);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
