/* Attachments through the public API (pbfcl.h, "attachments"): set, counted and read back;
 * every bad input refused naming the attachment, the particle and the fix, the old ones kept;
 * removing particles renumbers them; destroying a shape drops its attachments; setting phases
 * removes them; a saved state holds them, and a fresh solver loaded from it continues bit for
 * bit (a rope swinging from a moving, turning shape and a body hanging from it); a damaged
 * section is refused naming it. */
#include "each_device.h"
#include "memory_state.h"
#include "pbfcl.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define N 11 /* a fluid particle, a rope of 6 (its top static), a body of 4 */

static char device[32];

static pbfcl_solver *make_solver(pbfcl_context *ctx, int method)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = 16;
    d.scene.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        d.scene.domain_min[a] = 0.0f;
        d.scene.domain_max[a] = 1.0f;
    }
    d.solver.method = method;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    return s;
}

/* The scene: a fluid particle, a rope of 6 (particle 1 static) hanging from (0.4, 0.8, 0.5)
 * with its edges, a rigid square body of 4 below it (particles 7 .. 10), and a capsule (the id
 * returned) that moves and turns. */
static int rope_and_body(pbfcl_solver *s)
{
    float pos[3 * N] = {0.2f, 0.1f, 0.5f}; /* the fluid particle, on the floor */
    int phases[N] = {0, PBFCL_PHASE_STATIC, 0, 0, 0, 0, 0, 1, 1, 1, 1};
    for (int i = 0; i < 6; i++) {
        pos[3 * (1 + i)] = 0.4f;
        pos[3 * (1 + i) + 1] = 0.8f - 2.0f * R * (float)i;
        pos[3 * (1 + i) + 2] = 0.5f;
    }
    for (int c = 0; c < 4; c++) { /* 2r below the rope's end and beside it */
        pos[3 * (7 + c)] = 0.4f + R * (float)(c % 2 ? 1 : -1);
        pos[3 * (7 + c) + 1] = 0.8f - 12.0f * R;
        pos[3 * (7 + c) + 2] = 0.5f + R * (float)(c / 2 ? 1 : -1);
    }
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phases, N), PBFCL_OK);
    unsigned ids[5] = {2, 3, 4, 5, 6}, g[5] = {0}, pair[10];
    float inv[5] = {100, 100, 100, 100, 100}, rest[5], comp[5] = {0};
    for (int i = 0; i < 5; i++) {
        pair[2 * i] = (unsigned)i + 1;
        pair[2 * i + 1] = (unsigned)i + 2;
        rest[i] = 2.0f * R;
    }
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, g, inv, 5), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, NULL, 5), PBFCL_OK);
    pbfcl_shape_desc cap = {.type = PBFCL_SHAPE_KIND_CAPSULE,
                            .radius = 0.01f,
                            .half_length = 0.03f,
                            .position = {0.4f, 0.83f, 0.5f},
                            .velocity = {0.1f, 0.0f, 0.05f},
                            .angular_velocity = {0.0f, 2.0f, 1.0f}};
    int id;
    ck_assert_int_eq(pbfcl_shape_create(s, &cap, &id), PBFCL_OK);
    return id;
}

/* The rope's top on the capsule 3 cm below its centre; the rope's end on the body, at the
 * point 2r above the body's centre, where it is (sqrt(6) r from the body's particles). */
static void attach_both(pbfcl_solver *s, int shape)
{
    unsigned particle[2] = {1, 6};
    int kind[2] = {PBFCL_ATTACH_SHAPE, PBFCL_ATTACH_BODY}, target[2] = {shape, 0};
    float point[6] = {0, -0.03f, 0, 0, 2.0f * R, 0}, comp[2] = {0, 1e-4f};
    ck_assert_int_eq(pbfcl_solver_set_attachments(s, particle, kind, target, point, comp, 2),
                     PBFCL_OK);
}

/* set_attachments with one attachment (particle p, kind k, target t, point x, compliance c)
 * refused with a message holding says; the two set before are kept. */
static void refused(pbfcl_solver *s, unsigned p, int k, int t, float x, float c, const char *says)
{
    unsigned particle[2] = {6, p};
    int kind[2] = {PBFCL_ATTACH_BODY, k}, target[2] = {0, t};
    float point[6] = {0, 0, 0, x, 0, 0}, comp[2] = {0, c};
    test_capture_begin();
    ck_assert_int_eq(pbfcl_solver_set_attachments(s, particle, kind, target, point, comp, 2),
                     PBFCL_ERR_BAD_ARGUMENT);
    const char *log = test_capture_end();
    ck_assert_contains(log, "attachment 1");
    ck_assert_contains(log, says);
    size_t count;
    ck_assert_int_eq(pbfcl_solver_attachment_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 2);
}

START_TEST(test_api_attach_set_and_refused)
{
    pbfcl_context *ctx = test_open_context(device);
    pbfcl_solver *s = make_solver(ctx, PBFCL_METHOD_PBF);
    int shape = rope_and_body(s);
    attach_both(s, shape);
    size_t count;
    unsigned particle[2];
    int kind[2], target[2];
    float point[6], comp[2];
    ck_assert_int_eq(pbfcl_solver_attachment_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 2);
    ck_assert_int_eq(pbfcl_solver_get_attachments(s, particle, kind, target, point, comp, 2),
                     PBFCL_OK);
    ck_assert(particle[0] == 1 && kind[0] == PBFCL_ATTACH_SHAPE && target[0] == shape);
    ck_assert(particle[1] == 6 && kind[1] == PBFCL_ATTACH_BODY && target[1] == 0);
    ck_assert(point[1] == -0.03f && point[4] == 2.0f * R && comp[1] == 1e-4f);
    refused(s, 99, PBFCL_ATTACH_SHAPE, shape, 0, 0, "particle 99) names a particle beyond");
    refused(s, 3, PBFCL_ATTACH_SHAPE, shape, 0, 0, "not static to a shape: make it static");
    refused(s, 1, PBFCL_ATTACH_BODY, 0, 0, 0, "of no solid group to a body");
    refused(s, 8, PBFCL_ATTACH_BODY, 0, 0, 0, "of no solid group to a body"); /* a body's own */
    refused(s, 0, PBFCL_ATTACH_BODY, 0, 0, 0, "of no solid group to a body"); /* fluid */
    refused(s, 1, PBFCL_ATTACH_SHAPE, shape + 7, 0, 0, "a shape that does not exist");
    refused(s, 4, PBFCL_ATTACH_BODY, 3, 0, 0, "a body that does not exist");
    refused(s, 6, PBFCL_ATTACH_BODY, 0, 0, 0, "attached already: attach each particle once");
    refused(s, 4, PBFCL_ATTACH_BODY, 0, NAN, 0, "a point that is not finite");
    refused(s, 4, PBFCL_ATTACH_BODY, 0, 0, -1.0f, "a negative compliance");
    refused(s, 1, 5, shape, 0, 0, "an unknown kind");
    test_capture_begin();
    ck_assert_int_eq(pbfcl_solver_set_attachments(s, NULL, kind, target, point, comp, 1),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_get_attachments(s, particle, kind, target, point, comp, 1),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_contains(test_capture_end(), "there are 2 attachments");
    /* removing the fluid particle renumbers them (1 to 0, 6 to 5) */
    for (int f = 0; f < 3; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    size_t gone = 0;
    ck_assert_int_eq(pbfcl_solver_remove(s, &gone, 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_attachments(s, particle, NULL, NULL, NULL, NULL, 2),
                     PBFCL_OK);
    ck_assert(particle[0] == 0 && particle[1] == 5);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    /* destroying the shape drops its attachment; the particle stays where it was */
    float before[3 * N], after[3 * N];
    ck_assert_int_eq(pbfcl_shape_destroy(s, shape), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_attachment_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 1);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, before, N - 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, after, N - 1), PBFCL_OK);
    ck_assert(!memcmp(before, after, 12));
    /* setting phases removes them */
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    s = make_solver(ctx, PBFCL_METHOD_PBF);
    shape = rope_and_body(s);
    attach_both(s, shape);
    int phases[N] = {0, PBFCL_PHASE_STATIC, 0, 0, 0, 0, 0, 1, 1, 1, 1};
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phases, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_attachment_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    /* another method has none */
    s = make_solver(ctx, PBFCL_METHOD_SPH);
    test_capture_begin();
    ck_assert_int_eq(pbfcl_solver_attachment_count(s, &count), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_contains(test_capture_end(), "method pbf");
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* The particles' positions and velocities (6 N floats), then the attachments' particles and
 * points (8 floats): what a saved-then-loaded solver must continue (memory_state_reader). */
static void particles_and_attachments(pbfcl_solver *s, float *out, void *user)
{
    (void)user;
    unsigned p[2];
    ck_assert_int_eq(pbfcl_solver_get_positions(s, out, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_velocities(s, out + 3 * N, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_attachments(s, p, NULL, NULL, out + 6 * N + 2, NULL, 2),
                     PBFCL_OK);
    out[6 * N] = (float)p[0];
    out[6 * N + 1] = (float)p[1];
}

/* The rope and body attached (saved after 8 frames) and a fresh solver loaded from the state
 * agree byte for byte over 8 more frames, their attachments too; a damaged attachment section
 * (a particle beyond the count, a NaN point) is refused naming it. */
START_TEST(test_api_attach_saved)
{
    pbfcl_context *ctx = test_open_context(device);
    pbfcl_solver *a = make_solver(ctx, PBFCL_METHOD_PBF), *b = make_solver(ctx, PBFCL_METHOD_PBF);
    attach_both(a, rope_and_body(a));
    for (int f = 0; f < 8; f++)
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
    memory_state m;
    float sa[6 * N + 8], va[3], vb[3];
    memory_state_expect_resumed(a, b, &m, 8, 6 * N + 8, particles_and_attachments, NULL, sa);
    memcpy(va, sa + 18, 12); /* the rope's end, held by the body: it moved */
    memcpy(vb, sa + 3 * N + 18, 12);
    printf("  loaded and straight agree over 8 frames; the rope's end at (%.4f, %.4f, %.4f), "
           "moving at (%.3f, %.3f, %.3f) m/s\n",
           va[0], va[1], va[2], vb[0], vb[1], vb[2]);
    const struct {
        const char *section;
        size_t at;
        unsigned value;
        const char *says;
    } bad[] = {{"attachment_particles", 4, 77, "names particle 77"},
               {"attachment_points", 4, 0x7fc00000u, "give a finite point"}};
    pbfcl_solver *c = make_solver(ctx, PBFCL_METHOD_PBF);
    for (int d = 0; d < 2; d++) {
        unsigned char keep[4], *at = NULL;
        for (int k = 0; k < m.count; k++)
            if (!strcmp(m.name[k], bad[d].section))
                at = (unsigned char *)m.data[k] + bad[d].at;
        ck_assert_ptr_nonnull(at);
        memcpy(keep, at, 4);
        memcpy(at, &bad[d].value, 4);
        test_capture_begin();
        ck_assert_int_eq(pbfcl_solver_load_state(c, memory_state_get, &m), PBFCL_ERR_BAD_ARGUMENT);
        const char *log = test_capture_end();
        ck_assert_contains(log, bad[d].section);
        ck_assert_contains(log, bad[d].says);
        memcpy(at, keep, 4);
    }
    memory_state_free(&m);
    ck_assert_int_eq(pbfcl_solver_destroy(a), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(b), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(c), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* A solver of docs/scenes/attached.json at about 800 particles (its cloth's edge on a moving
 * pole, its rope on a buoy), filled and set up by the scene setup. */
static pbfcl_solver *scene_solver(pbfcl_context *ctx, pbfcl_scene_setup *setup, bool fill)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    ck_assert_int_eq(pbfcl_scene_setup_get_params(setup, &d.scene, &d.solver), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_capacity(setup, &d.capacity), PBFCL_OK);
    pbfcl_solver *s;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    if (!fill)
        return s;
    float *pos;
    size_t n;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &pos, &n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n), PBFCL_OK);
    pbfcl_free(pos);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(setup, s), PBFCL_OK);
    return s;
}

/* The positions of the *user (size_t) particles (memory_state_reader). */
static void positions_of(pbfcl_solver *s, float *out, void *user)
{
    ck_assert_int_eq(pbfcl_solver_get_positions(s, out, *(size_t *)user), PBFCL_OK);
}

/* The scene with attachments of both kinds beside a body, a collider, a cloth and a rope (the
 * most sections a state has): saved after 4 frames, loaded into a fresh solver, the two agree
 * byte for byte over 4 more. */
START_TEST(test_api_attach_scene_saved)
{
    char path[1200];
    snprintf(path, sizeof path, "%s", __FILE__);
    char *tests = strstr(path, "tests/api/test_api_attach.c");
    ck_assert_ptr_nonnull(tests);
    snprintf(tests, sizeof path - (size_t)(tests - path), "docs/scenes/attached.json");
    pbfcl_scene_setup *setup;
    ck_assert_int_eq(pbfcl_scene_setup_load(path, &setup), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_set_particle_count(setup, 800), PBFCL_OK);
    pbfcl_context *ctx = test_open_context(device);
    pbfcl_solver *a = scene_solver(ctx, setup, true), *b = scene_solver(ctx, setup, false);
    for (int f = 0; f < 4; f++)
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
    size_t n, count;
    ck_assert_int_eq(pbfcl_solver_count(a, &n), PBFCL_OK);
    memory_state m;
    memory_state_expect_resumed(a, b, &m, 4, 3 * n, positions_of, &n, NULL);
    ck_assert_int_eq(pbfcl_solver_attachment_count(b, &count), PBFCL_OK);
    printf("  attached.json (%zu particles, %zu attachments, %d sections) resumes bit for bit\n", n,
           count, m.count);
    memory_state_free(&m);
    ck_assert_int_eq(pbfcl_solver_destroy(a), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(b), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_destroy(setup), PBFCL_OK);
}
END_TEST

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_api_attach_set_and_refused);
    tcase_add_test(tc, test_api_attach_saved);
    tcase_add_test(tc, test_api_attach_scene_saved);
}

int main(void)
{
    return test_run_on_each_device("api_attach", 600, add_tests, device);
}
