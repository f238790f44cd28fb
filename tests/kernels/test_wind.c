/* Tests of the wind's kernels (cl/pbf/wind.cl, host/core/pbf/wind.c): the force stage on random
 * triangles (pinned vertices, heavy and light ones, particles in many triangles) over particles
 * whose slots are not their ids, against a plain C reference of the drag and lift model in
 * double precision, at awkward triangle counts (0, 1, wg - 1, wg + 1, a prime); an edge-on and
 * a face-on triangle against their closed forms; the stage's launches by their kernels' names;
 * bad triangles refused with the index and the fix. */
#include "pbf/constraint.h"
#include "pbf/pbf.h"
#include "pbf/wind.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define BOX 1.0f

static const float wind[3] = {0.7f, -0.3f, 1.1f};
static const float drag = 1.3f, lift = 0.8f;

/* A simulation of n particles at pos (random in [0.1, 0.9]^3 if NULL) with gravity off and the
 * wind above: every fourth particle static (pinned), the rest in group 0 with relative inverse
 * masses in [0.25, 2]; the inverse masses by id into w. */
static pbfcl_sim *make_sim(pbfcl_cl *cl, size_t n, const float *at, uint64_t *rng, float *w)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.solver.multilevel = 0; /* the coarse correction: test_multilevel */
    s.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        s.domain_min[a] = 0.0f;
        s.domain_max[a] = BOX;
        s.gravity[a] = 0.0f;
    }
    s.solver.wind_x = wind[0];
    s.solver.wind_y = wind[1];
    s.solver.wind_z = wind[2];
    s.solver.drag = drag;
    s.solver.lift = lift;
    float *pos = malloc(n * 12 + 12);
    for (size_t k = 0; k < 3 * n; k++)
        pos[k] = at ? at[k] : test_randf(rng, 0.1f, 0.9f);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned *pinned = malloc(n * 4 + 4), *ids = malloc(n * 4 + 4), *group = calloc(n + 1, 4);
    float *gw = malloc(n * 4 + 4);
    size_t np = 0, ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 4 == 1 && !at) {
            pinned[np++] = (unsigned)i;
            w[i] = 0.0f;
        } else {
            ids[ng] = (unsigned)i;
            w[i] = gw[ng++] = at ? 1.0f : test_randf(rng, 0.25f, 2.0f);
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

/* Velocities vel (by id, 3 per particle) given, then the slots shuffled (ids kept), so that
 * the stage must find each id's slot. */
static void set_velocities_and_shuffle(pbfcl_sim *sim, size_t n, const double *vel, uint64_t *rng)
{
    float *v = malloc(n * 12 + 12);
    for (size_t k = 0; k < 3 * n; k++)
        v[k] = (float)vel[k];
    ck_assert_int_eq(pbfcl_sim_write(sim, NULL, v), PBFCL_OK); /* slots are ids until a move */
    unsigned *keep = malloc(n * 4 + 4), *id = malloc(n * 4 + 4);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        keep[i] = (unsigned)i;
    test_shuffle(keep, n, rng);
    unsigned *new_id = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++)
        new_id[i] = id[keep[i]];
    ck_assert_int_eq(pbfcl_sim_compact(sim, keep, n, new_id), PBFCL_OK);
    free(v);
    free(keep);
    free(id);
    free(new_id);
}

/* The velocities by id. */
static void read_vel(pbfcl_sim *sim, size_t n, double *out)
{
    float *v = malloc(n * 12 + 12);
    unsigned *id = malloc(n * 4 + 4);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, v, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            out[3 * id[i] + a] = v[3 * i + a];
    free(v);
    free(id);
}

/* The reference force of the triangle with corners x[a], x[b], x[c] and corner velocities
 * v[a], v[b], v[c] (by id), from the model as written: drag along -v of the area seen from
 * the flow, lift across v in the plane of v and the normal, of size lift A |cos| sin |v|^2,
 * towards the side of the normal the flow comes from. */
static void ref_force(const double *x, const double *v, const unsigned *t, double f[3])
{
    double e1[3], e2[3], n[3], u[3];
    for (int a = 0; a < 3; a++) {
        e1[a] = x[3 * t[1] + a] - x[3 * t[0] + a];
        e2[a] = x[3 * t[2] + a] - x[3 * t[0] + a];
        u[a] = (v[3 * t[0] + a] + v[3 * t[1] + a] + v[3 * t[2] + a]) / 3.0 - wind[a];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double speed = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    double area = 0.5 * nl, c = 0.0;
    for (int a = 0; a < 3; a++)
        c += n[a] / nl * u[a] / speed;
    double s = sqrt(fmax(0.0, 1.0 - c * c)), side = c < 0 ? -1.0 : 1.0;
    /* l: unit, across u, in the plane of u and n, on the side of side * n */
    double l[3], ll = 0.0;
    for (int a = 0; a < 3; a++) {
        l[a] = side * n[a] / nl - fabs(c) * u[a] / speed;
        ll += l[a] * l[a];
    }
    ll = sqrt(ll);
    for (int a = 0; a < 3; a++) {
        double drag_f = -drag * area * fabs(c) * speed * speed * u[a] / speed;
        double lift_f = ll > 0 ? -lift * area * fabs(c) * s * speed * speed * l[a] / ll : 0.0;
        f[a] = drag_f + lift_f;
    }
}

/* The stage's launches, by kernel name: the wind's own (wind_slots, wind_triangles,
 * wind_gather), once each, and nothing under another stage's name (STYLE.md: one stage, one
 * name from kernel to test). */
static void check_stage_kernels(pbfcl_profile *prof)
{
    double ms[PBFCL_STAGE_COUNT] = {0};
    ck_assert_int_eq(pbfcl_profile_collect(prof, ms), CL_SUCCESS);
    const char *want[] = {"wind_slots", "wind_triangles", "wind_gather"};
    ck_assert_int_eq(prof->kernel_count, 3);
    for (int k = 0; k < 3; k++) {
        ck_assert_str_eq(prof->kernels[k].name, want[k]);
        ck_assert_int_eq(prof->kernels[k].launches, 1);
    }
}

/* count random triangles among n particles against the reference. */
static void check_count(pbfcl_cl *cl, size_t n, size_t count, uint64_t seed)
{
    uint64_t rng = seed;
    float *w = malloc(n * 4);
    pbfcl_sim *sim = make_sim(cl, n, NULL, &rng, w);
    unsigned *tri = malloc(3 * count * 4 + 4);
    for (size_t t = 0; t < count; t++) {
        unsigned *a = tri + 3 * t;
        do {
            for (int k = 0; k < 3; k++)
                a[k] = test_rand(&rng) % (unsigned)n;
        } while (a[0] == a[1] || a[1] == a[2] || a[0] == a[2]);
    }
    double *vel = malloc(n * 24), *x = malloc(n * 24), *got = malloc(n * 24);
    for (size_t k = 0; k < 3 * n; k++)
        vel[k] = test_randf(&rng, -2.0f, 2.0f);
    for (size_t i = 0; i < n; i++) /* a pinned particle's velocity is 0 after any step */
        if (w[i] == 0.0f)
            vel[3 * i] = vel[3 * i + 1] = vel[3 * i + 2] = 0.0;
    float *pos = malloc(n * 12 + 12);
    ck_assert_int_eq(pbfcl_sim_read(sim, pos, NULL, NULL), PBFCL_OK); /* slots are ids here */
    for (size_t k = 0; k < 3 * n; k++)
        x[k] = pos[k];
    set_velocities_and_shuffle(sim, n, vel, &rng);
    ck_assert_int_eq(pbfcl_pbf_set_triangles(sim, count, tri), PBFCL_OK);
    ck_assert_uint_eq(pbfcl_pbf_triangle_count(sim), count);
    pbfcl_profile *prof = count && cl->profiling ? calloc(1, sizeof *prof) : NULL;
    ck_assert_int_eq(pbf_project(sim, PBF_PASS_FORCES, 0, prof), PBFCL_OK);
    if (prof)
        check_stage_kernels(prof);
    free(prof);
    read_vel(sim, n, got);
    const pbfcl_constants *p = pbfcl_sim_params(sim);
    double *want = malloc(n * 24);
    memcpy(want, vel, n * 24);
    float *force = malloc(3 * count * 4 + 4);
    ck_assert_int_eq(pbfcl_pbf_read_wind_forces(sim, force), PBFCL_OK);
    for (size_t t = 0; t < count; t++) {
        double f[3];
        ref_force(x, vel, tri + 3 * t, f);
        for (int a = 0; a < 3; a++) {
            expect(test_close(force[3 * t + a], f[a], 1e-5, 1e-4),
                   "count %zu: force[%zu].%c = %.7g, reference %.7g", count, t, "xyz"[a],
                   force[3 * t + a], f[a]);
            for (int k = 0; k < 3; k++) {
                unsigned i = tri[3 * t + k];
                want[3 * i + a] += p->dt * (w[i] / p->mass) * f[a] / 3.0;
            }
        }
    }
    for (size_t k = 0; k < 3 * n; k++)
        expect(test_close(got[k], want[k], 1e-5, 1e-4),
               "count %zu: v[%zu].%c = %.7g, reference %.7g", count, k / 3, "xyz"[k % 3], got[k],
               want[k]);
    pbfcl_sim_destroy(sim);
    free(w);
    free(tri);
    free(vel);
    free(x);
    free(got);
    free(want);
    free(pos);
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
        check_count(cl, n, counts[k], 0x3141 + k);
}

START_TEST(test_wind_reference)
{
    test_each_device(reference_at_sizes);
}
END_TEST

/* A triangle in the plane x = 0.5 (normal along x) with its velocity 0 in a wind along x
 * (face-on: F = drag A |u|^2 along the wind, no lift) and one in the plane z = 0.5 with the
 * wind along x in its plane (edge-on: no force at all); drag and lift both on. */
static void closed_forms(pbfcl_cl *cl)
{
    const float at[18] = {0.5f, 0.2f, 0.2f, 0.5f, 0.6f, 0.2f, 0.5f, 0.2f, 0.5f,
                          0.2f, 0.2f, 0.5f, 0.6f, 0.2f, 0.5f, 0.2f, 0.7f, 0.5f};
    float w[6];
    uint64_t rng = 1;
    pbfcl_sim *sim = make_sim(cl, 6, at, &rng, w);
    const unsigned tri[6] = {0, 1, 2, 3, 4, 5};
    ck_assert_int_eq(pbfcl_pbf_set_triangles(sim, 2, tri), PBFCL_OK);
    pbfcl_scene s = *pbfcl_sim_scene(sim);
    s.solver.wind_x = 3.0f;
    s.solver.wind_y = s.solver.wind_z = 0.0f;
    ck_assert_int_eq(pbfcl_sim_set_scene(sim, &s), PBFCL_OK);
    ck_assert_int_eq(pbf_project(sim, PBF_PASS_FORCES, 0, NULL), PBFCL_OK);
    float f[6];
    ck_assert_int_eq(pbfcl_pbf_read_wind_forces(sim, f), PBFCL_OK);
    double area = 0.5 * 0.4 * 0.3, want = drag * area * 9.0;
    expect(test_close(f[0], want, 1e-6, 1e-5), "face-on: F.x = %.7g N, closed form %.7g", f[0],
           want);
    expect(fabsf(f[1]) < 1e-6f && fabsf(f[2]) < 1e-6f, "face-on: lift (%g, %g) N, want 0", f[1],
           f[2]);
    for (int a = 0; a < 3; a++)
        expect(f[3 + a] == 0.0f, "edge-on: F.%c = %g N, want 0", "xyz"[a], f[3 + a]);
    double v[18];
    read_vel(sim, 6, v);
    double dv = pbfcl_sim_params(sim)->dt * want / 3.0 / pbfcl_sim_params(sim)->mass;
    for (int i = 0; i < 6; i++)
        expect(test_close(v[3 * i], i < 3 ? dv : 0.0, 1e-6, 1e-5) && v[3 * i + 1] == 0.0 &&
                   v[3 * i + 2] == 0.0,
               "particle %d: v = (%g, %g, %g), want (%g, 0, 0)", i, v[3 * i], v[3 * i + 1],
               v[3 * i + 2], i < 3 ? dv : 0.0);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_wind_closed_forms)
{
    test_each_device(closed_forms);
}
END_TEST

/* Each bad triangle is refused naming its index and the fix; the old ones stay. */
static void bad_triangles(pbfcl_cl *cl)
{
    uint64_t rng = 7;
    float w[8];
    pbfcl_sim *sim = make_sim(cl, 8, NULL, &rng, w);
    unsigned good[3] = {0, 2, 3};
    ck_assert_int_eq(pbfcl_pbf_set_triangles(sim, 1, good), PBFCL_OK);
    struct {
        unsigned tri[6];
        const char *says;
    } cases[] = {
        {{0, 2, 3, 4, 4, 5}, "triangle 1 (particles 4, 4, 5 of 8) names a particle twice"},
        {{0, 2, 3, 4, 5, 8}, "triangle 1 (particles 4, 5, 8 of 8) names a particle beyond"},
        {{0, 0, 3, 4, 5, 6}, "triangle 0 (particles 0, 0, 3 of 8)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        test_capture_begin();
        pbfcl_status st = pbfcl_pbf_set_triangles(sim, 2, cases[k].tri);
        const char *msg = test_capture_end();
        ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
        ck_assert_msg(strstr(msg, cases[k].says), "case %zu: '%s' lacks '%s'", k, msg,
                      cases[k].says);
        ck_assert_uint_eq(pbfcl_pbf_triangle_count(sim), 1);
    }
    pbfcl_sim_destroy(sim);
}

START_TEST(test_wind_bad_input)
{
    test_each_device(bad_triangles);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("wind");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_test(dev, test_wind_reference);
    tcase_add_test(dev, test_wind_closed_forms);
    tcase_add_test(dev, test_wind_bad_input);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
