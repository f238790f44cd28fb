/* Tests of the inflatables' kernels (cl/pbf/inflatable.cl, host/core/pbf/inflatable.c): two solver
 * iterations of several closed meshes at once (randomly jittered bipyramids, a tetrahedron;
 * rigid and compliant, pressures above and below 1, some vertices static, the rest of random
 * inverse masses) on sorted particles against a plain C reference in double precision of the
 * volume, its gradient, XPBD's multiplier with the gas' compliance and the moves, at awkward
 * sizes (0 and 1 inflatables; triangles and vertices at the work-group size - 1, + 1, a prime,
 * several groups); the volumes and pressures read back; bad inflatables refused naming the
 * inflatable, the triangle and the fix. */
#include "pbf/constraint.h"
#include "pbf/inflatable.h"
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
#define MAX_MESHES 16

/* A mesh: a bipyramid of m ring vertices (m + 2 vertices, 2 m triangles) or, with m = 0, a
 * tetrahedron; its first particle index and its triangles' place in the whole list. */
typedef struct mesh {
    int m;
    size_t first, nv, nt;
} mesh;

/* Appends mesh e's vertices (about centre c, radius r, jittered) to pos from e->first and its
 * triangles (counter-clockwise from outside) to tri. */
static void make_mesh(const mesh *e, const float c[3], float r, uint64_t *rng, float *pos,
                      unsigned *tri)
{
    unsigned f = (unsigned)e->first;
    if (e->m == 0) {
        const float v[4][3] = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
        const unsigned t[12] = {0, 1, 2, 0, 3, 1, 0, 2, 3, 1, 3, 2};
        for (int i = 0; i < 4; i++)
            for (int a = 0; a < 3; a++)
                pos[3 * (f + i) + a] = c[a] + 0.5f * r * v[i][a] + test_randf(rng, -0.002f, 0.002f);
        for (int k = 0; k < 12; k++)
            tri[k] = f + t[k];
        return;
    }
    int m = e->m;
    for (int a = 0; a < 3; a++) {
        pos[3 * f + a] = c[a] + (a == 1 ? r : 0.0f);       /* top */
        pos[3 * (f + 1) + a] = c[a] - (a == 1 ? r : 0.0f); /* bottom */
    }
    for (int i = 0; i < m; i++) {
        float th = 6.2831853f * (float)i / (float)m, rr = r * test_randf(rng, 0.8f, 1.1f);
        float *p = pos + 3 * (f + 2 + i);
        p[0] = c[0] + rr * cosf(th);
        p[1] = c[1] + test_randf(rng, -0.1f, 0.1f) * r;
        p[2] = c[2] + rr * sinf(th);
    }
    for (int i = 0; i < m; i++) {
        unsigned a = f + 2 + (unsigned)i, b = f + 2 + (unsigned)((i + 1) % m);
        unsigned up[3] = {f, b, a}, down[3] = {f + 1, a, b};
        memcpy(tri + 6 * i, up, sizeof up);
        memcpy(tri + 6 * i + 3, down, sizeof down);
    }
}

/* The signed volume of triangles tri (nt) over x (by id), about their first vertex. */
static double ref_volume(const unsigned *tri, size_t nt, const double *x)
{
    const double *o = x + 3 * tri[0];
    double v = 0.0;
    for (size_t t = 0; t < nt; t++) {
        double p[3][3];
        for (int c = 0; c < 3; c++)
            for (int a = 0; a < 3; a++)
                p[c][a] = x[3 * tri[3 * t + c] + a] - o[a];
        v += (p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) -
              p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
              p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0])) /
             6.0;
    }
    return v;
}

/* One projection of inflatable with triangles tri (nt), V1 = pressure * rest, compliance alpha:
 * x (by id) and *lambda in place, *vol the volume it measured; w the inverse masses (1/kg). */
static void ref_project(const unsigned *tri, size_t nt, size_t n, double v1, double alpha,
                        const float *w, double dt, int first, double *lambda, double *vol,
                        double *x)
{
    double *g = calloc(3 * n, sizeof *g);
    for (size_t t = 0; t < nt; t++) {
        const double *a = x + 3 * tri[3 * t], *b = x + 3 * tri[3 * t + 1],
                     *c = x + 3 * tri[3 * t + 2];
        double e[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double f[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double cr[3] = {e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2],
                        e[0] * f[1] - e[1] * f[0]};
        for (int s = 0; s < 3; s++)
            for (int k = 0; k < 3; k++)
                g[3 * tri[3 * t + s] + k] += cr[k] / 6.0;
    }
    *vol = ref_volume(tri, nt, x);
    double den = 0.0;
    for (size_t i = 0; i < n; i++)
        den += w[i] *
               (g[3 * i] * g[3 * i] + g[3 * i + 1] * g[3 * i + 1] + g[3 * i + 2] * g[3 * i + 2]);
    double l = first ? 0.0 : *lambda, at = alpha * (*vol / v1) / (dt * dt), dl = 0.0;
    if (den + at > 0.0)
        dl = (-(*vol - v1) - at * l) / (den + at);
    *lambda = l + dl;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            x[3 * i + k] =
                fmin(fmax(x[3 * i + k] + w[i] * g[3 * i + k] * dl, (double)R), (double)(BOX - R));
    free(g);
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

/* A simulation of the particles pos (n, gravity off) with every third particle static and the
 * rest in group 0 with random relative inverse masses; w the physical ones (1/kg) by id. */
static pbfcl_sim *make_sim(pbfcl_cl *cl, const float *pos, size_t n, uint64_t *rng, float *w)
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
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned *pinned = malloc(n * 4 + 4), *ids = malloc(n * 4 + 4), *group = calloc(n + 1, 4);
    float *gw = malloc(n * 4 + 4);
    size_t np = 0, ng = 0;
    double mass = pbfcl_sim_params(sim)->mass;
    for (size_t i = 0; i < n; i++) {
        if (i % 3 == 1) {
            pinned[np++] = (unsigned)i;
            w[i] = 0.0f;
        } else {
            ids[ng] = (unsigned)i;
            gw[ng] = test_randf(rng, 0.25f, 2.0f);
            w[i] = (float)(gw[ng++] / mass);
        }
    }
    ck_assert_int_eq(pbfcl_sim_set_static(sim, np, pinned), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_groups(sim, ng, ids, group, gw), PBFCL_OK);
    free(pinned);
    free(ids);
    free(group);
    free(gw);
    return sim;
}

/* The meshes of ring sizes ms (count of them; 0: a tetrahedron) against the reference, two
 * iterations. */
static void check_meshes(pbfcl_cl *cl, const int *ms, size_t count, uint64_t seed)
{
    uint64_t rng = seed;
    mesh e[MAX_MESHES];
    size_t n = 0, nt = 0, built = count ? count : 1; /* 0: a tetrahedron's particles, no mesh */
    for (size_t k = 0; k < built; k++) {
        e[k] = (mesh){ms[k], n, ms[k] ? (size_t)ms[k] + 2 : 4, ms[k] ? 2 * (size_t)ms[k] : 4};
        n += e[k].nv;
        nt += e[k].nt;
    }
    float *pos = calloc(3 * n + 1, 4), *w = malloc(n * 4 + 4);
    unsigned *tri = malloc(3 * nt * 4 + 4), tc[MAX_MESHES];
    float rest[MAX_MESHES], pressure[MAX_MESHES], alpha[MAX_MESHES];
    size_t t0 = 0;
    for (size_t k = 0; k < built; k++) {
        float c[3] = {0.2f + 0.15f * (float)(k % 5), 0.3f + 0.2f * (float)(k / 5 % 3), 0.5f};
        make_mesh(&e[k], c, 0.06f, &rng, pos, tri + 3 * t0);
        tc[k] = (unsigned)e[k].nt;
        t0 += e[k].nt;
    }
    pbfcl_sim *sim = make_sim(cl, pos, n, &rng, w);
    double *x = malloc(n * 24 + 24), *got = malloc(n * 24 + 24);
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            x[3 * i + a] = pos[3 * i + a];
    t0 = 0;
    for (size_t k = 0; k < count; k++) {
        rest[k] = (float)ref_volume(tri + 3 * t0, e[k].nt, x) * test_randf(&rng, 0.9f, 1.1f);
        ck_assert_msg(rest[k] > 0.0f, "mesh %zu is wound clockwise", k);
        pressure[k] = test_randf(&rng, 0.8f, 1.3f);
        alpha[k] = k % 3 == 0 ? 0.0f : test_randf(&rng, 1e-9f, 3e-8f);
        t0 += e[k].nt;
    }
    ck_assert_int_eq(pbfcl_pbf_set_inflatables(sim, count, tc, tri, rest, pressure, alpha),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK); /* sorts: slots != ids */
    read_pred(sim, n, x);
    const pbfcl_constants *p = pbfcl_sim_params(sim);
    double lambda[MAX_MESHES] = {0}, vol[MAX_MESHES];
    float gvol[MAX_MESHES], gauge[MAX_MESHES];
    for (int it = 0; it < 2; it++) {
        ck_assert_int_eq(pbf_project(sim, PBF_PASS_POSITIONS, it, NULL), PBFCL_OK);
        t0 = 0;
        for (size_t k = 0; k < count; k++) {
            ref_project(tri + 3 * t0, e[k].nt, n, (double)pressure[k] * rest[k], alpha[k], w, p->dt,
                        it == 0, &lambda[k], &vol[k], x);
            t0 += e[k].nt;
        }
        read_pred(sim, n, got);
        for (size_t i = 0; i < 3 * n; i++)
            ck_assert_msg(test_close(got[i], x[i], 2e-6, 1e-5),
                          "%zu meshes, iteration %d: x*[%zu].%zu = %.7g, reference %.7g", count, it,
                          i / 3, i % 3, got[i], x[i]);
        ck_assert_int_eq(pbfcl_pbf_read_inflatables(sim, gvol, gauge), PBFCL_OK);
        for (size_t k = 0; k < count; k++) {
            ck_assert_msg(test_close(gvol[k], vol[k], 1e-9, 1e-4),
                          "iteration %d: volume[%zu] = %.7g, reference %.7g", it, k, gvol[k],
                          vol[k]);
            double want = lambda[k] / (p->dt * p->dt);
            ck_assert_msg(test_close(gauge[k], want, 1e-2, 2e-3),
                          "iteration %d: pressure[%zu] = %g Pa, reference %g", it, k, gauge[k],
                          want);
        }
    }
    pbfcl_sim_destroy(sim);
    free(pos);
    free(w);
    free(tri);
    free(x);
    free(got);
}

static void reference_at_sizes(pbfcl_cl *cl)
{
    int wg = 1; /* the kernels' work-group size (pbfcl_sim_kernel_config) */
    while (wg * 2 <= (int)cl->dev.max_wg && wg * 2 <= 256)
        wg *= 2;
    /* ring sizes: triangles 2 m (wg - 2, wg + 2), vertices m + 2 (wg - 1, wg + 1), a prime
     * (53: 106 triangles), several groups, a tetrahedron (0), the smallest bipyramid (3) */
    int many[] = {3, wg / 2 - 1, wg / 2 + 1, wg - 3, wg - 1, 53, 3 * wg + 7, 0};
    int one[] = {0};
    check_meshes(cl, one, 0, 5);
    check_meshes(cl, one, 1, 6);
    check_meshes(cl, many, sizeof many / sizeof many[0], 7);
}

START_TEST(test_inflatable_reference)
{
    test_each_device(reference_at_sizes);
}
END_TEST

/* Setting the inflatables is refused with a message holding says; the old ones stay. */
static void expect_refused(pbfcl_sim *sim, const unsigned *tc, const unsigned *tri,
                           const float *rest, const float *pressure, const float *alpha,
                           const char *says)
{
    test_capture_begin();
    pbfcl_status st = pbfcl_pbf_set_inflatables(sim, 2, tc, tri, rest, pressure, alpha);
    const char *msg = test_capture_end();
    ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_msg(strstr(msg, says), "'%s' lacks '%s'", msg, says);
    size_t count = 0;
    pbfcl_pbf_inflatable_count(sim, &count, NULL);
    ck_assert_uint_eq(count, 2);
}

/* Each bad inflatable is refused with its message, and the ones set before stay. */
static void bad_inflatables(pbfcl_cl *cl)
{
    uint64_t rng = 11;
    float pos[3 * 12], w[12];
    unsigned tri[12 + 12];
    mesh a = {0, 0, 4, 4}, b = {0, 4, 4, 4};
    const float c0[3] = {0.3f, 0.5f, 0.5f}, c1[3] = {0.6f, 0.5f, 0.5f};
    make_mesh(&a, c0, 0.1f, &rng, pos, tri);
    make_mesh(&b, c1, 0.1f, &rng, pos, tri + 12);
    for (int i = 8; i < 12; i++)
        for (int k = 0; k < 3; k++)
            pos[3 * i + k] = 0.5f;
    pbfcl_sim *sim = make_sim(cl, pos, 12, &rng, w);
    unsigned tc[2] = {4, 4};
    float rest[2] = {1e-4f, 1e-4f}, pr[2] = {1, 1}, al[2] = {0, 0};
    ck_assert_int_eq(pbfcl_pbf_set_inflatables(sim, 2, tc, tri, rest, pr, al), PBFCL_OK);
    struct {
        int field; /* 0 the triangles, 1 rest, 2 pressure, 3 compliance, 4 counts */
        unsigned at;
        float value;
        const char *says;
    } cases[] = {
        {0, 13, 12,
         "inflatable 1: triangle 0 (4, 12, 6) needs three different particles below "
         "the count, 12"},
        {0, 13, 4, "inflatable 1: triangle 0 (4, 4, 6) needs three different"},
        {0, 13, 1, "inflatable 1: triangle 0 names particle 1, a vertex of inflatable 0 too"},
        {0, 14, 8,
         "inflatable 1: the edge from vertex 4 to 6 of triangle 2 has no triangle on "
         "its other side: the mesh is open"},
        {0, 14, 7, "inflatable 1: triangles 0 and 3 both run from vertex 5 to 7"},
        {1, 1, 0.0f, "inflatable 1 has rest volume 0; give the volume its mesh encloses"},
        {1, 0, NAN, "inflatable 0 has rest volume nan"},
        {2, 1, -1.0f, "inflatable 1 has pressure -1; give a finite pressure > 0"},
        {3, 0, INFINITY, "inflatable 0 has compliance inf"},
        {4, 1, 3.0f, "inflatable 1 has 3 triangles; a closed mesh has at least 4"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        unsigned t2[24], tc2[2] = {4, 4};
        float r2[2] = {1e-4f, 1e-4f}, p2[2] = {1, 1}, a2[2] = {0, 0};
        memcpy(t2, tri, sizeof t2);
        if (cases[k].field == 0)
            t2[cases[k].at] = (unsigned)cases[k].value;
        float *f[] = {NULL, r2, p2, a2};
        if (cases[k].field >= 1 && cases[k].field <= 3)
            f[cases[k].field][cases[k].at] = cases[k].value;
        if (cases[k].field == 4)
            tc2[cases[k].at] = (unsigned)cases[k].value;
        expect_refused(sim, tc2, t2, r2, p2, a2, cases[k].says);
        size_t count = 0;
        pbfcl_pbf_inflatable_count(sim, &count, NULL);
        ck_assert_uint_eq(count, 2);
    }
    /* a triangle turned round: its edges run the same way as its neighbours' */
    unsigned turned[24];
    memcpy(turned, tri, sizeof turned);
    turned[13] = tri[14];
    turned[14] = tri[13];
    expect_refused(sim, tc, turned, rest, pr, al,
                   "inflatable 1: triangles 0 and 2 both run from vertex 4 to 6: more than two "
                   "triangles meet at that edge (not manifold) or one of them faces the other way");
    /* a fourth triangle at one edge (inflatable 0's last triangle repeated as inflatable 1's) */
    unsigned extra[27], tc3[2] = {5, 4};
    memcpy(extra, tri, 12 * sizeof *extra);
    memcpy(extra + 12, tri + 9, 3 * sizeof *extra);
    memcpy(extra + 15, tri + 12, 12 * sizeof *extra);
    expect_refused(sim, tc3, extra, rest, pr, al, "inflatable 0: triangles 3 and 4 both run from");
    pbfcl_sim_destroy(sim);
}

START_TEST(test_inflatable_bad_input)
{
    test_each_device(bad_inflatables);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("inflatable");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_test(dev, test_inflatable_reference);
    tcase_add_test(dev, test_inflatable_bad_input);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
