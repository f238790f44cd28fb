/* Tearing of cloth through the public API (pbfcl_solver_set_tearing, include/pbfcl.h): a cloth
 * whose two halves are thrown apart tears: the particle count grows, the mesh stays valid
 * (every triangle of three different particles, every triangle edge held by a constraint and
 * every constraint an edge of a triangle), the mass is kept and the cloth falls into pieces;
 * without a limit it holds together; bad limits are refused naming the group. Runs on every
 * OpenCL device (or the one PBFCL_DEVICE names). */
#include "each_device.h"
#include "memory_state.h"
#include "pbfcl.h"

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define NU 12
#define NV 6
#define N (NU * NV)
#define MASS 1e-3f /* kg per particle */

static char device_spec[32];
static char last_message[4096];

static void capture_log(pbfcl_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    snprintf(last_message, sizeof last_message, "%s", message);
}

/* A solver in the unit box without gravity with room for 2 N particles, no particles. */
static pbfcl_solver *blank(pbfcl_context *ctx)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = 2 * N;
    d.scene.particle_radius = R;
    for (int k = 0; k < 3; k++)
        d.scene.gravity[k] = 0.0f;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    return s;
}

/* A solver in the unit box without gravity with room for 2 N particles, and an NU x NV cloth
 * (spacing 2r, in the plane y = 0.5) of group 0 with its edges (compliance 0) and triangles,
 * its left half moving at -speed and its right half at +speed along x. */
static pbfcl_solver *cloth(pbfcl_context **ctx, float speed)
{
    *ctx = test_open_context(device_spec);
    pbfcl_solver *s = blank(*ctx);
    float p[3 * N], v[3 * N], w[N];
    unsigned ids[N], group[N], pair[2 * 3 * N], tri[3 * 2 * N];
    float rest[3 * N], comp[3 * N] = {0};
    size_t c = 0, t = 0;
    for (int j = 0; j < NV; j++)
        for (int i = 0; i < NU; i++) {
            int k = j * NU + i;
            p[3 * k] = 0.38f + 2 * R * i;
            p[3 * k + 1] = 0.5f;
            p[3 * k + 2] = 0.45f + 2 * R * j;
            v[3 * k] = i < NU / 2 ? -speed : speed;
            v[3 * k + 1] = v[3 * k + 2] = 0.0f;
            ids[k] = (unsigned)k;
            group[k] = 0;
            w[k] = 1.0f / MASS;
            unsigned a = (unsigned)k, right = a + 1, up = a + NU, diag = a + NU + 1;
            if (i + 1 < NU) {
                pair[2 * c] = a, pair[2 * c + 1] = right, rest[c++] = 2 * R;
            }
            if (j + 1 < NV) {
                pair[2 * c] = a, pair[2 * c + 1] = up, rest[c++] = 2 * R;
            }
            if (i + 1 < NU && j + 1 < NV) {
                pair[2 * c] = a, pair[2 * c + 1] = diag, rest[c++] = 2 * R * sqrtf(2.0f);
                unsigned cell[6] = {a, right, diag, a, diag, up};
                memcpy(tri + 3 * t, cell, sizeof cell);
                t += 2;
            }
        }
    ck_assert_int_eq(pbfcl_solver_add(s, p, v, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, group, w, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, NULL, c), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_triangles(s, tri, t), PBFCL_OK);
    return s;
}

static bool has(const unsigned *t, unsigned v)
{
    return t[0] == v || t[1] == v || t[2] == v;
}

/* Checks the mesh (triangles, constraints) of s and its mass; returns its pieces (sets of
 * particles joined through triangles). */
static int check_mesh(pbfcl_solver *s, size_t n)
{
    size_t nt = 0, nc = 0;
    ck_assert_int_eq(pbfcl_solver_triangle_count(s, &nt), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_distance_count(s, &nc), PBFCL_OK);
    unsigned *tri = malloc(3 * nt * sizeof *tri + 4), *pair = malloc(2 * nc * sizeof *pair + 4);
    ck_assert_int_eq(pbfcl_solver_get_triangles(s, tri, nt), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_distances(s, pair, NULL, NULL, NULL, nc), PBFCL_OK);
    for (size_t t = 0; t < nt; t++) {
        const unsigned *v = tri + 3 * t;
        ck_assert_msg(v[0] != v[1] && v[1] != v[2] && v[0] != v[2] && v[0] < n && v[1] < n &&
                          v[2] < n,
                      "triangle %zu is (%u, %u, %u) of %zu particles", t, v[0], v[1], v[2], n);
        for (int e = 0; e < 3; e++) {
            unsigned a = v[e], b = v[(e + 1) % 3];
            bool held = false;
            for (size_t c = 0; c < nc && !held; c++)
                held = (pair[2 * c] == a && pair[2 * c + 1] == b) ||
                       (pair[2 * c] == b && pair[2 * c + 1] == a);
            ck_assert_msg(held, "triangle %zu's edge %u-%u has no constraint", t, a, b);
        }
    }
    for (size_t c = 0; c < nc; c++) {
        bool edge = false;
        for (size_t t = 0; t < nt && !edge; t++)
            edge = has(tri + 3 * t, pair[2 * c]) && has(tri + 3 * t, pair[2 * c + 1]);
        ck_assert_msg(edge, "constraint %zu (%u-%u) is no edge of a triangle", c, pair[2 * c],
                      pair[2 * c + 1]);
    }
    float *w = malloc(n * sizeof *w), *x = malloc(3 * n * sizeof *x);
    ck_assert_int_eq(pbfcl_solver_get_inverse_masses(s, w, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, x, n), PBFCL_OK);
    double mass = 0.0;
    for (size_t i = 0; i < n; i++) {
        mass += 1.0 / w[i];
        for (int k = 0; k < 3; k++)
            ck_assert_msg(isfinite(x[3 * i + k]), "particle %zu is not finite", i);
    }
    ck_assert_msg(fabs(mass / (N * MASS) - 1.0) < 1e-5, "mass %.7g kg, was %.7g kg", mass,
                  N * MASS);
    unsigned *root = malloc(n * sizeof *root);
    for (size_t i = 0; i < n; i++)
        root[i] = (unsigned)i;
    for (size_t t = 0; t < nt; t++)
        for (int e = 1; e < 3; e++) {
            unsigned a = tri[3 * t], b = tri[3 * t + e];
            while (root[a] != a)
                a = root[a];
            while (root[b] != b)
                b = root[b];
            root[a] = b;
        }
    int pieces = 0;
    for (size_t i = 0; i < n; i++)
        pieces += root[i] == i;
    free(tri);
    free(pair);
    free(w);
    free(x);
    free(root);
    return pieces;
}

/* Halves thrown apart at 3 m/s each with a limit of 30 %: within 20 frames the count grows, the
 * mesh is valid after every frame, the mass kept, and the cloth is in two pieces or more. The
 * same without a limit holds together with its 72 particles. */
START_TEST(test_tear_apart)
{
    pbfcl_context *ctx = NULL;
    pbfcl_solver *s = cloth(&ctx, 3.0f);
    const float limit = 0.3f;
    ck_assert_int_eq(pbfcl_solver_set_tearing(s, &limit, 1), PBFCL_OK);
    size_t n = 0;
    int pieces = 1;
    for (int f = 0; f < 20; f++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_count(s, &n), PBFCL_OK);
        pieces = check_mesh(s, n);
    }
    printf("  torn: %zu particles (from %d), %d pieces\n", n, N, pieces);
    ck_assert_uint_gt(n, N);
    ck_assert_int_ge(pieces, 2);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
    s = cloth(&ctx, 3.0f);
    for (int f = 0; f < 20; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_count(s, &n), PBFCL_OK);
    ck_assert_uint_eq(n, N);
    ck_assert_int_eq(check_mesh(s, n), 1);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

/* The positions, count and triangles of s after its step to frame 20 from frame `from`. */
static void run_to_20(pbfcl_solver *s, int from, float *x, size_t *n, unsigned *tri, size_t *nt)
{
    for (int f = from; f < 20; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_count(s, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, x, *n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_triangle_count(s, nt), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_triangles(s, tri, *nt), PBFCL_OK);
}

/* A tearing run saved at frame 4, once the first tears have split some vertices, and loaded
 * into a new solver tears on to frame 20 as the uninterrupted run does: the same particle
 * count (beyond the one at the save: later tears), positions and triangles, bit for bit (a
 * state without the limits stopped tearing at the resume). */
START_TEST(test_tear_resumes)
{
    pbfcl_context *ctx = NULL;
    pbfcl_solver *s = cloth(&ctx, 3.0f);
    const float limit = 0.3f;
    ck_assert_int_eq(pbfcl_solver_set_tearing(s, &limit, 1), PBFCL_OK);
    for (int f = 0; f < 4; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    size_t at_save = 0, n = 0, m = 0, nt = 0, mt = 0;
    ck_assert_int_eq(pbfcl_solver_count(s, &at_save), PBFCL_OK);
    memory_state *saved = calloc(1, sizeof *saved);
    ck_assert_int_eq(pbfcl_solver_save_state(s, memory_state_put, saved), PBFCL_OK);
    float x[3 * 2 * N], y[3 * 2 * N];
    unsigned tri[3 * 4 * N], tri2[3 * 4 * N];
    run_to_20(s, 4, x, &n, tri, &nt);
    pbfcl_solver *r = blank(ctx);
    ck_assert_int_eq(pbfcl_solver_load_state(r, memory_state_get, saved), PBFCL_OK);
    run_to_20(r, 4, y, &m, tri2, &mt);
    printf("  torn: %zu particles at the save (frame 4), %zu at frame 20, resumed %zu\n", at_save,
           n, m);
    ck_assert_uint_gt(at_save, N); /* torn before the save */
    ck_assert_uint_gt(n, at_save); /* and after it */
    ck_assert_uint_eq(m, n);
    ck_assert_uint_eq(mt, nt);
    ck_assert(memcmp(x, y, 3 * n * sizeof *x) == 0);
    ck_assert(memcmp(tri, tri2, 3 * nt * sizeof *tri) == 0);
    memory_state_free(saved);
    free(saved);
    pbfcl_solver_destroy(r);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

/* A negative or NaN limit is refused naming its group; more groups than the most too. */
START_TEST(test_tear_bad_limits)
{
    pbfcl_context *ctx = NULL;
    pbfcl_solver *s = cloth(&ctx, 0.0f);
    const float bad[3] = {0.5f, -1.0f, NAN};
    ck_assert_int_eq(pbfcl_solver_set_tearing(s, bad, 2), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_msg(strstr(last_message, "group 1's limit -1"), "got '%s'", last_message);
    const float nan_first[1] = {NAN};
    ck_assert_int_eq(pbfcl_solver_set_tearing(s, nan_first, 1), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_msg(strstr(last_message, "group 0's limit nan"), "got '%s'", last_message);
    ck_assert_int_eq(pbfcl_solver_set_tearing(s, NULL, 1), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_set_tearing(s, NULL, 0), PBFCL_OK);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_tear_apart);
    tcase_add_test(tc, test_tear_bad_limits);
    tcase_add_test(tc, test_tear_resumes);
}

int main(void)
{
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
    return test_run_on_each_device("api_tear", 600, add_tests, device_spec);
}
