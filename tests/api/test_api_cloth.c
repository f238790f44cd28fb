/* Cloth and ropes in the public API (include/pbfcl.h): distance constraints, solid groups and
 * triangles by particle index, read back as set, a pinned rope that hangs at its rest lengths
 * with tension in every edge, and every bad input refused with its index named. Runs on every
 * OpenCL device (or the one PBFCL_DEVICE names). */
#include "each_device.h"
#include "memory_state.h"
#include "pbfcl.h"
#include "test_files.h" /* test helpers that need nothing of pbfcl */

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define R 0.01f

/* ---- the device under test and the messages the library logs ---------------------------- */

static char device_spec[32]; /* the index of the device under test, as pbfcl_context_desc wants */
static char last_message[4096];
static int messages;

static int hold_warnings; /* warnings that a cloth cannot hold */
static char hold_message[4096];

static void capture_log(pbfcl_log_level level, const char *message, void *user)
{
    (void)user;
    snprintf(last_message, sizeof last_message, "%s", message);
    messages++;
    if (level == PBFCL_LOG_WARNING && strstr(message, "cannot hold")) {
        hold_warnings++;
        snprintf(hold_message, sizeof hold_message, "%s", message);
    }
}

/* Asserts that the last logged message contains text. */
static void expect_message(const char *text)
{
    ck_assert_msg(strstr(last_message, text), "expected a message containing '%s', got '%s'", text,
                  last_message);
}

/* A solver in a box of sx * sy * sz with room for capacity particles. */
static pbfcl_solver *open_solver(pbfcl_context *ctx, size_t capacity, float sx, float sy, float sz)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = capacity;
    d.scene.particle_radius = R;
    d.scene.domain_max[0] = sx;
    d.scene.domain_max[1] = sy;
    d.scene.domain_max[2] = sz;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    return s;
}

static double dist3(const float *a, const float *b)
{
    double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

/* A vertical rope of N particles at spacing 2r hanging from (0.15, 0.25, 0.15). */
#define N 6
static void add_rope(pbfcl_solver *s)
{
    float p[3 * N];
    for (int i = 0; i < N; i++) {
        p[3 * i] = 0.15f;
        p[3 * i + 1] = 0.25f - 2 * R * i;
        p[3 * i + 2] = 0.15f;
    }
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, N), PBFCL_OK);
}

/* The N - 1 edges of the rope, rest 2r, compliance 1e-6 (the last a tether). */
static void rope_edges(unsigned *pair, float *rest, float *comp, unsigned char *tether)
{
    for (int c = 0; c < N - 1; c++) {
        pair[2 * c] = (unsigned)c;
        pair[2 * c + 1] = (unsigned)c + 1;
        rest[c] = 2 * R;
        comp[c] = 1e-6f;
        tether[c] = c == N - 2;
    }
}

/* Asserts that one bad value in constraint 1 is refused naming it and text, and leaves the
 * constraints set before. */
static void refuse_distance(pbfcl_solver *s, unsigned a, unsigned b, float rest, float comp,
                            const char *text)
{
    unsigned pair[2 * (N - 1)];
    float r[N - 1], c[N - 1];
    unsigned char t[N - 1];
    rope_edges(pair, r, c, t);
    pair[2] = a;
    pair[3] = b;
    r[1] = rest;
    c[1] = comp;
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, r, c, t, N - 1), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("constraint 1 ");
    expect_message(text);
    size_t count = 0;
    ck_assert_int_eq(pbfcl_solver_distance_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, N - 1);
}

/* Distance constraints read back as set (pairs, rest lengths, compliances, tethers); a
 * particle joined to itself, an index out of range, a NaN or negative rest length and a
 * negative or NaN compliance are each refused naming the constraint, keeping the old ones; a
 * count other than the number set is refused; count 0 removes them. */
START_TEST(test_distances)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 64, 0.3f, 0.3f, 0.3f);
    add_rope(s);
    unsigned pair[2 * (N - 1)], gp[2 * (N - 1)];
    float rest[N - 1], comp[N - 1], gr[N - 1], gc[N - 1];
    unsigned char tether[N - 1], gt[N - 1];
    rope_edges(pair, rest, comp, tether);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, tether, N - 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_distances(s, gp, gr, gc, gt, N - 1), PBFCL_OK);
    ck_assert_mem_eq(gp, pair, sizeof pair);
    ck_assert_mem_eq(gr, rest, sizeof rest);
    ck_assert_mem_eq(gc, comp, sizeof comp);
    for (int c = 0; c < N - 1; c++)
        ck_assert_int_eq(gt[c] != 0, tether[c] != 0);
    refuse_distance(s, 2, 2, 2 * R, 0.0f, "to itself");
    refuse_distance(s, 1, N, 2 * R, 0.0f, "beyond the particle count");
    refuse_distance(s, 1, 2, NAN, 0.0f, "rest length");
    refuse_distance(s, 1, 2, -0.01f, 0.0f, "rest length");
    refuse_distance(s, 1, 2, 2 * R, -1.0f, "compliance");
    refuse_distance(s, 1, 2, 2 * R, NAN, "compliance");
    ck_assert_int_eq(pbfcl_solver_get_distances(s, gp, gr, gc, gt, N - 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_distance_count");
    float force[N - 1];
    ck_assert_int_eq(pbfcl_solver_get_distance_forces(s, force, N), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, NULL, NULL, NULL, NULL, 0), PBFCL_OK);
    size_t count = 1;
    ck_assert_int_eq(pbfcl_solver_distance_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 0);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

/* Asserts that setting group entry 1 to (id, group, w) is refused naming it and text. */
static void refuse_group(pbfcl_solver *s, unsigned id, unsigned group, float w, const char *text)
{
    unsigned ids[2] = {1, id}, g[2] = {0, group};
    float iw[2] = {125.0f, w};
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, g, iw, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("entry 1 ");
    expect_message(text);
}

/* A rope pinned at its top (a static particle) and put into a solid group with half a fluid
 * particle's mass (inverse mass 250 1/kg, read back; its phases PBFCL_PHASE_SOLID_GROUP(3),
 * which the phase call refuses) hangs: after a second each edge's tension
 * is the weight of the particles below it (within 2 %) and its length the rest length within
 * 10 % (the iterations' slack). A static particle, one named twice or out of range, a group
 * out of range and a zero, negative or NaN inverse mass are refused naming the entry. */
START_TEST(test_groups_rope)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 64, 0.3f, 0.3f, 0.3f);
    add_rope(s);
    int ph[N] = {PBFCL_PHASE_STATIC};
    ck_assert_int_eq(pbfcl_solver_set_phases(s, ph, N), PBFCL_OK);
    refuse_group(s, 0, 0, 125.0f, "static");
    refuse_group(s, 1, 0, 125.0f, "twice");
    refuse_group(s, N, 0, 125.0f, "beyond the particle count");
    refuse_group(s, 2, PBFCL_SOLVER_MAX_GROUPS, 125.0f, "group beyond");
    refuse_group(s, 2, 0, 0.0f, "inverse mass");
    refuse_group(s, 2, 0, -1.0f, "inverse mass");
    refuse_group(s, 2, 0, NAN, "inverse mass");
    unsigned ids[N - 1], g[N - 1];
    float w[N - 1];
    for (int k = 0; k < N - 1; k++) {
        ids[k] = (unsigned)k + 1;
        g[k] = 3;
        w[k] = 250.0f;
    }
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, g, w, N - 1), PBFCL_OK);
    int words[N];
    ck_assert_int_eq(pbfcl_solver_get_particle_phases(s, words, N), PBFCL_OK);
    ck_assert_int_eq(words[0], pbfcl_make_phase(PBFCL_PHASE_GROUP_STATIC, 0));
    for (int i = 1; i < N; i++)
        ck_assert_int_eq(words[i], PBFCL_PHASE_SOLID_GROUP(3));
    ck_assert_int_eq(pbfcl_solver_set_particle_phases(s, words, N), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_set_groups");
    size_t grouped = 2; /* a rope's particle is removed only once it leaves its group */
    ck_assert_int_eq(pbfcl_solver_remove(s, &grouped, 1), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("particles[0] = 2 belongs to solid group 3");
    unsigned pair[2 * (N - 1)];
    float rest[N - 1], comp[N - 1];
    unsigned char tether[N - 1];
    rope_edges(pair, rest, comp, tether);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, tether, N - 1), PBFCL_OK);
    for (int f = 0; f < 60; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 1.0f / 60.0f, NULL), PBFCL_OK);
    float inv[N], pos[3 * N], force[N - 1];
    ck_assert_int_eq(pbfcl_solver_get_inverse_masses(s, inv, N), PBFCL_OK);
    ck_assert_float_eq(inv[0], 0.0f);
    for (int i = 1; i < N; i++)
        ck_assert_msg(fabsf(inv[i] - 250.0f) < 0.01f, "particle %d: inverse mass %g", i, inv[i]);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_distance_forces(s, force, N - 1), PBFCL_OK);
    for (int c = 0; c < N - 1; c++) { /* edge c carries the N - 1 - c particles below it */
        double d = dist3(pos + 3 * c, pos + 3 * c + 3), weight = (N - 1 - c) * 9.81 / 250.0;
        ck_assert_msg(fabs(d - 2 * R) < 0.1 * 2 * R, "edge %d: length %g", c, d);
        ck_assert_msg(fabs(force[c] - weight) < 0.02 * weight, "edge %d: tension %g N, weight %g N",
                      c, force[c], weight);
    }
    /* setting phases clears the groups, so a grouped particle can be pinned (static) */
    int pin[N] = {PBFCL_PHASE_STATIC, PBFCL_PHASE_FLUID, PBFCL_PHASE_FLUID,
                  PBFCL_PHASE_FLUID,  PBFCL_PHASE_FLUID, PBFCL_PHASE_STATIC};
    ck_assert_int_eq(pbfcl_solver_set_phases(s, pin, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_particle_phases(s, words, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_inverse_masses(s, inv, N), PBFCL_OK);
    for (int i = 0; i < N; i++) {
        bool pinned = i == 0 || i == N - 1;
        ck_assert_msg(pinned ? words[i] == pbfcl_make_phase(PBFCL_PHASE_GROUP_STATIC, 0)
                             : words[i] == pbfcl_make_phase(0, PBFCL_PHASE_FLAG_FLUID |
                                                                   PBFCL_PHASE_FLAG_SELF_COLLIDE),
                      "particle %d: phase 0x%x after set_phases", i, (unsigned)words[i]);
        ck_assert_msg(pinned ? inv[i] == 0.0f : inv[i] != 250.0f,
                      "particle %d: inverse mass %g after set_phases", i, inv[i]);
    }
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

/* A rope of 40 particles 2r apart hanging from its static top particle, rigid edges
 * (compliance 0), with tethers from each free particle to the top or not, at iterations;
 * stepped 61 frames. Returns the warnings that it cannot hold and the edges' mean stretch at
 * the check's step (30) as the test computes it. */
#define LONG 40
static int hang_long_rope(bool tethers, int iterations, double *stretch)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = LONG;
    d.scene.particle_radius = R;
    d.scene.domain_max[0] = d.scene.domain_max[2] = 0.3f;
    d.scene.domain_max[1] = 1.0f;
    d.solver.iterations = iterations;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    float p[3 * LONG];
    for (int i = 0; i < LONG; i++) {
        p[3 * i] = p[3 * i + 2] = 0.15f;
        p[3 * i + 1] = 0.9f - 2 * R * i;
    }
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, LONG), PBFCL_OK);
    int ph[LONG] = {PBFCL_PHASE_STATIC};
    ck_assert_int_eq(pbfcl_solver_set_phases(s, ph, LONG), PBFCL_OK);
    unsigned ids[LONG - 1], g[LONG - 1], pair[4 * LONG];
    float w[LONG - 1], rest[2 * LONG], comp[2 * LONG] = {0};
    unsigned char tether[2 * LONG] = {0};
    size_t c = 0;
    for (int k = 0; k < LONG - 1; k++) {
        ids[k] = (unsigned)k + 1;
        g[k] = 0;
        w[k] = 250.0f;
        pair[2 * c] = (unsigned)k;
        pair[2 * c + 1] = (unsigned)k + 1;
        rest[c++] = 2 * R;
    }
    for (int k = 1; tethers && k < LONG; k++, c++) {
        pair[2 * c] = (unsigned)k;
        pair[2 * c + 1] = 0;
        rest[c] = 2 * R * k;
        tether[c] = 1;
    }
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, g, w, LONG - 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, tether, c), PBFCL_OK);
    hold_warnings = 0;
    hold_message[0] = '\0';
    for (int f = 1; f <= 61; f++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        if (f != 30)
            continue;
        ck_assert_int_eq(pbfcl_solver_get_positions(s, p, LONG), PBFCL_OK);
        *stretch = 0.0;
        for (int k = 0; k < LONG - 1; k++)
            *stretch += fmax(0.0, dist3(p + 3 * k, p + 3 * k + 3) / (2 * R) - 1.0) / (LONG - 1);
    }
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
    return hold_warnings;
}

/* A cloth that cannot hold warns once: a long rigid rope hanging at 1 iteration without
 * tethers is stretched far beyond 5 % on average after 30 steps, and exactly one warning over
 * 61 steps names group 0, its mean stretch (the test's own, to 0.1 %) and what to change;
 * the same rope with tethers at the default 4 iterations stays within 5 % and says nothing. */
START_TEST(test_hold_warning)
{
    double stretch = 0.0;
    int warned = hang_long_rope(false, 1, &stretch);
    printf("  a 40-particle rope at 1 iteration, no tethers: stretched %.2f %% on average\n",
           100.0 * stretch);
    ck_assert_msg(stretch > 0.05, "the rope held (%g %%): no test of the warning", 100 * stretch);
    ck_assert_int_eq(warned, 1);
    const char *at = strstr(hold_message, "stretched by ");
    ck_assert_msg(at, "'%s'", hold_message);
    ck_assert_msg(fabs(strtod(at + 13, NULL) - 100.0 * stretch) < 0.1, "'%s': the test's %.2f %%",
                  hold_message, 100.0 * stretch);
    ck_assert_ptr_nonnull(strstr(hold_message, "solid group 0 "));
    ck_assert_ptr_nonnull(strstr(hold_message, "1 iterations and 3 substeps cannot hold them"));
    ck_assert_ptr_nonnull(strstr(hold_message, "more iterations"));
    ck_assert_ptr_nonnull(strstr(hold_message, "tethers"));
    warned = hang_long_rope(true, 4, &stretch);
    printf("  the same with tethers at 4 iterations: %.2f %%\n", 100.0 * stretch);
    ck_assert_msg(stretch < 0.05, "stretched %g %% with tethers", 100 * stretch);
    ck_assert_int_eq(warned, 0);
}
END_TEST

/* An SPH solver has no distance constraints: it counts none, reads none and refuses some,
 * naming the method (it crashed reading PBF's state). */
START_TEST(test_distances_sph)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = 64;
    d.scene.particle_radius = R;
    for (int a = 0; a < 3; a++)
        d.scene.domain_max[a] = 0.3f;
    d.solver.method = PBFCL_METHOD_SPH;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    add_rope(s);
    size_t count = 99;
    ck_assert_int_eq(pbfcl_solver_distance_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 0);
    unsigned pair[2 * (N - 1)];
    float rest[N - 1], comp[N - 1], force[1];
    unsigned char tether[N - 1];
    ck_assert_int_eq(pbfcl_solver_get_distances(s, pair, rest, comp, tether, 0), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_distance_forces(s, force, 0), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, NULL, NULL, NULL, NULL, 0), PBFCL_OK);
    rope_edges(pair, rest, comp, tether);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, tether, N - 1),
                     PBFCL_ERR_UNSUPPORTED);
    expect_message("solver.method pbf (this solver runs sph)");
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

/* Triangles read back as set; one out of range or degenerate is refused naming it and keeps
 * the old; a wrong count is refused; removing particles clears them, and renumbers the distance
 * constraints, dropping those of the removed particle. */
START_TEST(test_triangles)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 64, 0.3f, 0.3f, 0.3f);
    add_rope(s);
    unsigned tri[6] = {0, 1, 2, 2, 3, 4}, got[6] = {0};
    ck_assert_int_eq(pbfcl_solver_set_triangles(s, tri, 2), PBFCL_OK);
    size_t count = 0;
    ck_assert_int_eq(pbfcl_solver_triangle_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 2);
    ck_assert_int_eq(pbfcl_solver_get_triangles(s, got, 2), PBFCL_OK);
    ck_assert_mem_eq(got, tri, sizeof tri);
    unsigned far[6] = {0, 1, 2, 2, 3, N}, flat[6] = {0, 1, 2, 3, 4, 3};
    ck_assert_int_eq(pbfcl_solver_set_triangles(s, far, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("triangle 1 ");
    expect_message("beyond the particle count");
    ck_assert_int_eq(pbfcl_solver_set_triangles(s, flat, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("triangle 1 ");
    expect_message("degenerate");
    ck_assert_int_eq(pbfcl_solver_get_triangles(s, got, 1), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_get_triangles(s, got, 2), PBFCL_OK);
    ck_assert_mem_eq(got, tri, sizeof tri);
    unsigned pair[2 * (N - 1)], gp[6];
    float rest[N - 1], comp[N - 1];
    unsigned char tether[N - 1];
    rope_edges(pair, rest, comp, tether);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, tether, N - 1), PBFCL_OK);
    size_t gone = 2;
    ck_assert_int_eq(pbfcl_solver_remove(s, &gone, 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_triangle_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 0);
    /* the edges 1-2 and 2-3 went with particle 2; 3-4 and 4-5 are now 2-3 and 3-4 */
    ck_assert_int_eq(pbfcl_solver_distance_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 3);
    ck_assert_int_eq(pbfcl_solver_get_distances(s, gp, NULL, NULL, NULL, 3), PBFCL_OK);
    const unsigned want[6] = {0, 1, 2, 3, 3, 4};
    ck_assert_mem_eq(gp, want, sizeof want);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

/* The inflatables of s saved and loaded into a new solver: read back alike, and the next
 * frame of both the same bit for bit. */
static void check_saved_inflatables(pbfcl_context *ctx, pbfcl_solver *s)
{
    memory_state st = {0};
    ck_assert_int_eq(pbfcl_solver_save_state(s, memory_state_put, &st), PBFCL_OK);
    pbfcl_solver *t = open_solver(ctx, 64, 0.3f, 0.3f, 0.3f);
    ck_assert_int_eq(pbfcl_solver_load_state(t, memory_state_get, &st), PBFCL_OK);
    unsigned tc[2][1], tri[2][24];
    float rest[2], pr[2], comp[2], pa[2][21];
    pbfcl_solver *both[2] = {s, t};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(
            pbfcl_solver_get_inflatables(both[k], tc[k], tri[k], &rest[k], &pr[k], &comp[k], 1),
            PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_step(both[k], 0.0f, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_positions(both[k], pa[k], 7), PBFCL_OK);
    }
    ck_assert_uint_eq(tc[0][0], tc[1][0]);
    ck_assert_mem_eq(tri[0], tri[1], sizeof tri[0]);
    ck_assert(rest[0] == rest[1] && pr[0] == pr[1] && comp[0] == comp[1]);
    ck_assert_mem_eq(pa[0], pa[1], sizeof pa[0]);
    pbfcl_solver_destroy(t);
    memory_state_free(&st);
}

/* An octahedron of 6 particles (radius 5 cm, a solid group) as an inflatable of pressure 1.5
 * with gravity off: read back as set; after a second it encloses 1.5 times its rest volume
 * (within 1 %, from the positions and as the solver reports it, with a gauge pressure of 0
 * within 1 Pa: compliance 0 leaves no load); an open mesh, a particle out of range, a bad
 * pressure and a wrong count are refused naming the call and the inflatable; removing a
 * fluid particle beside it keeps them; a saved state holds them (loaded, the
 * next frame is the same bit for bit); an SPH solver refuses them. */
START_TEST(test_inflatables)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 64, 0.3f, 0.3f, 0.3f);
    pbfcl_scene_params sc;
    ck_assert_int_eq(pbfcl_solver_get_params(s, &sc, NULL), PBFCL_OK);
    sc.gravity[1] = 0.0f;
    ck_assert_int_eq(pbfcl_solver_set_params(s, &sc, NULL), PBFCL_OK);
    float p[21] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, -2, -2, -2};
    for (int k = 0; k < 21; k++)
        p[k] = 0.15f + 0.05f * p[k];
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, 7), PBFCL_OK); /* 6 and a fluid particle */
    unsigned ids[6] = {0, 1, 2, 3, 4, 5}, group[6] = {0}, tc = 8, got_tc = 0, got[24];
    float w[6] = {125, 125, 125, 125, 125, 125};
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, group, w, 6), PBFCL_OK);
    unsigned tri[24] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
    float rest = 4.0f / 3.0f * 0.05f * 0.05f * 0.05f, pressure = 1.5f, zero = 0.0f, gr, gp, gc;
    ck_assert_int_eq(pbfcl_solver_set_inflatables(s, &tc, tri, &rest, &pressure, &zero, 1),
                     PBFCL_OK);
    size_t count = 0, triangles = 0;
    ck_assert_int_eq(pbfcl_solver_inflatable_count(s, &count, &triangles), PBFCL_OK);
    ck_assert_uint_eq(count, 1);
    ck_assert_uint_eq(triangles, 8);
    ck_assert_int_eq(pbfcl_solver_get_inflatables(s, &got_tc, got, &gr, &gp, &gc, 1), PBFCL_OK);
    ck_assert_uint_eq(got_tc, 8);
    ck_assert_mem_eq(got, tri, sizeof tri);
    ck_assert(gr == rest && gp == pressure && gc == 0.0f);
    for (int f = 0; f < 60; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, p, 7), PBFCL_OK);
    double v = 0.0; /* about vertex 5 */
    for (int t = 0; t < 8; t++) {
        const float *a = p + 3 * tri[3 * t], *b = p + 3 * tri[3 * t + 1],
                    *c = p + 3 * tri[3 * t + 2];
        double x[3][3];
        for (int k = 0; k < 3; k++) {
            x[0][k] = a[k] - p[15 + k];
            x[1][k] = b[k] - p[15 + k];
            x[2][k] = c[k] - p[15 + k];
        }
        v += (x[0][0] * (x[1][1] * x[2][2] - x[1][2] * x[2][1]) -
              x[0][1] * (x[1][0] * x[2][2] - x[1][2] * x[2][0]) +
              x[0][2] * (x[1][0] * x[2][1] - x[1][1] * x[2][0])) /
             6.0;
    }
    float vol = 0.0f, gauge = 0.0f;
    ck_assert_int_eq(pbfcl_solver_get_inflatable_volumes(s, &vol, &gauge, 1), PBFCL_OK);
    printf("  octahedron at pressure 1.5: volume %.4g (solver %.4g), 1.5 V_rest %.4g m^3, "
           "gauge %.3g Pa\n",
           v, (double)vol, 1.5 * rest, (double)gauge);
    ck_assert_msg(fabs(v / (1.5 * rest) - 1.0) < 0.01, "volume %g, want %g", v, 1.5 * rest);
    ck_assert_msg(fabs(vol / (1.5 * rest) - 1.0) < 0.01, "reported %g, want %g", vol, 1.5 * rest);
    ck_assert_msg(fabs(gauge) < 1.0f, "gauge pressure %g Pa with nothing pressing", gauge);
    check_saved_inflatables(ctx, s);
    unsigned open[24];
    memcpy(open, tri, sizeof open);
    open[23] = 4; /* the last triangle (0, 3, 5) -> (0, 3, 4): edges without partners */
    ck_assert_int_eq(pbfcl_solver_set_inflatables(s, &tc, open, &rest, &pressure, &zero, 1),
                     PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_set_inflatables: the inflatables were refused");
    unsigned far[24];
    memcpy(far, tri, sizeof far);
    far[0] = 7;
    ck_assert_int_eq(pbfcl_solver_set_inflatables(s, &tc, far, &rest, &pressure, &zero, 1),
                     PBFCL_ERR_BAD_ARGUMENT);
    float bad = NAN;
    ck_assert_int_eq(pbfcl_solver_set_inflatables(s, &tc, tri, &rest, &bad, &zero, 1),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_get_inflatables(s, &got_tc, got, NULL, NULL, NULL, 2),
                     PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_inflatable_count");
    ck_assert_int_eq(pbfcl_solver_inflatable_count(s, &count, NULL), PBFCL_OK);
    ck_assert_uint_eq(count, 1);
    size_t gone = 6; /* the fluid particle (a group's are refused): the octahedron stays */
    ck_assert_int_eq(pbfcl_solver_remove(s, &gone, 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_inflatable_count(s, &count, NULL), PBFCL_OK);
    ck_assert_uint_eq(count, 1);
    ck_assert_int_eq(pbfcl_solver_get_inflatables(s, &got_tc, got, NULL, NULL, NULL, 1), PBFCL_OK);
    ck_assert_mem_eq(got, tri, sizeof tri);
    pbfcl_solver_destroy(s);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = 64;
    d.scene.domain_max[0] = d.scene.domain_max[1] = d.scene.domain_max[2] = 0.3f;
    d.solver.method = PBFCL_METHOD_SPH;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_inflatable_count(s, &count, NULL), PBFCL_ERR_UNSUPPORTED);
    expect_message("inflatables need solver.method pbf");
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_distances);
    tcase_add_test(tc, test_groups_rope);
    tcase_add_test(tc, test_triangles);
    tcase_add_test(tc, test_distances_sph);
    tcase_add_test(tc, test_inflatables);
    tcase_add_test(tc, test_hold_warning);
}

int main(void)
{
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
    (void)messages;
    return test_run_on_each_device("api_cloth", 600, add_tests, device_spec);
}
