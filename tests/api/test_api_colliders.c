/* The collision shapes through the public API (pbfcl.h, "colliders"): shapes made, moved, read
 * and destroyed by id; the force and contacts of a shape a particle rests on; a solver with no
 * shapes launches no collider kernel and one with a shape does; misuse refused (a solver of
 * another method, a destroyed id, a NaN pose, which leaves the shape as it was); shapes in a
 * saved state: a fresh solver loaded from it continues bit for bit with moving shapes of every
 * kind, and a damaged shape entry is refused naming it. */
#include "each_device.h"
#include "memory_state.h"
#include "pbfcl.h"
#include "poly6_ref.h"
#include "sphere_mesh.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f

static char device[32]; /* the device under test, as pbfcl_context_desc wants it */

static pbfcl_solver *open_solver(pbfcl_context **ctx, int method)
{
    *ctx = test_open_context(device);
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
    ck_assert_int_eq(pbfcl_solver_create(*ctx, &d, &s), PBFCL_OK);
    return s;
}

static void close_solver(pbfcl_context *ctx, pbfcl_solver *s)
{
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}

/* Launches of kernels named colliders_* over the timed steps so far. */
static long long collider_launches(const pbfcl_solver *s)
{
    long long total = 0, launches;
    const char *name;
    int count = pbfcl_solver_kernel_times(s, -1, NULL, NULL, NULL);
    for (int i = 0; i < count; i++)
        if (pbfcl_solver_kernel_times(s, i, &name, NULL, &launches) &&
            !strncmp(name, "colliders_", 10))
            total += launches;
    return total;
}

START_TEST(test_api_shapes)
{
    pbfcl_context *ctx;
    pbfcl_solver *s = open_solver(&ctx, PBFCL_METHOD_PBF);
    float p[3] = {0.5f, 0.45f, 0.5f};
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, 1), PBFCL_OK);
    pbfcl_timers t;
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, &t), PBFCL_OK);
    ck_assert_int_eq(collider_launches(s), 0); /* no shapes: nothing new runs */
    pbfcl_shape_desc ball = {
        .type = PBFCL_SHAPE_KIND_SPHERE, .radius = 0.05f, .position = {0.1f, 0.1f, 0.1f}};
    pbfcl_shape_desc box = {.type = PBFCL_SHAPE_KIND_BOX,
                            .half_extents = {0.2f, 0.1f, 0.2f},
                            .position = {0.5f, 0.2f, 0.5f},
                            .static_friction = 1.0f};
    int a, b, n;
    ck_assert_int_eq(pbfcl_shape_create(s, &ball, &a), PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_create(s, &box, &b), PBFCL_OK);
    ck_assert_int_ne(a, b);
    ck_assert_int_eq(pbfcl_shape_destroy(s, a), PBFCL_OK); /* b keeps its id */
    ck_assert_int_eq(pbfcl_shape_count(s, &n), PBFCL_OK);
    ck_assert_int_eq(n, 1);
    for (int f = 0; f < 30; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, f == 29 ? &t : NULL), PBFCL_OK);
    ck_assert_int_gt(collider_launches(s), 0);
    float force[3], pos[3], q[4];
    unsigned contacts, inside;
    ck_assert_int_eq(pbfcl_shape_contacts(s, b, force, &contacts, &inside), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, 1), PBFCL_OK);
    double weight = ref_fluid_mass(1000.0, R, 4.0 * R) * 9.81; /* the default h_ratio */
    printf("  rests at %.5f, force (%g, %g, %g) N, weight %g N, %u contacts\n", pos[1], force[0],
           force[1], force[2], weight, contacts);
    ck_assert(fabsf(pos[1] - (0.3f + R)) < 1e-4f);
    ck_assert(fabs(force[1] + weight) < 0.01 * weight && contacts == 1 && inside == 0);
    /* moved by the API: the pose reads back; a NaN is refused and changes nothing */
    const float to[3] = {0.5f, 0.25f, 0.5f}, turn[4] = {0, 0, 0, 2}, bad[3] = {0, NAN, 0};
    ck_assert_int_eq(pbfcl_shape_set_motion(s, b, to, turn, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_set_motion(s, b, bad, NULL, NULL, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_shape_get_pose(s, b, pos, q), PBFCL_OK);
    ck_assert(pos[1] == 0.25f && q[3] == 1.0f); /* the rotation normalised */
    ck_assert_int_eq(pbfcl_shape_destroy(s, a), PBFCL_ERR_BAD_ARGUMENT); /* gone already */
    ck_assert_int_eq(pbfcl_shape_contacts(s, a, force, NULL, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_shape_create(NULL, &box, &a), PBFCL_ERR_BAD_ARGUMENT);
    close_solver(ctx, s);
}
END_TEST

START_TEST(test_api_shapes_need_pbf)
{
    pbfcl_context *ctx;
    pbfcl_solver *s = open_solver(&ctx, PBFCL_METHOD_SPH);
    pbfcl_shape_desc ball = {.type = PBFCL_SHAPE_KIND_SPHERE, .radius = 0.05f};
    int id = -5;
    test_capture_begin();
    ck_assert_int_eq(pbfcl_shape_create(s, &ball, &id), PBFCL_ERR_BAD_ARGUMENT);
    const char *log = test_capture_end();
    ck_assert_contains(log, "method pbf only");
    ck_assert_int_eq(id, -5);
    close_solver(ctx, s);
}
END_TEST

/* A solver of 8 x 8 x 8 fluid particles over the middle of the unit box. */
static pbfcl_solver *fluid_solver(pbfcl_context *ctx, bool fill)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = 512;
    d.scene.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        d.scene.domain_min[a] = 0.0f;
        d.scene.domain_max[a] = 1.0f;
    }
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    if (!fill)
        return s;
    float p[512 * 3];
    for (int i = 0; i < 512; i++) {
        p[3 * i] = 0.42f + 2 * R * (float)(i % 8);
        p[3 * i + 1] = 0.5f + 2 * R * (float)(i / 8 % 8);
        p[3 * i + 2] = 0.42f + 2 * R * (float)(i / 64);
    }
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, 512), PBFCL_OK);
    return s;
}

/* Moving shapes of every kind under and around the fluid, set through the API. */
static void moving_shapes(pbfcl_solver *s)
{
    static const float hull[] = {0, 0, 0, 0.1f, 0, 0, 0, 0.1f, 0, 0, 0, 0.1f};
    static const unsigned plate_t[] = {0, 2, 1, 0, 3, 2};
    static const float plate_v[] = {-0.3f, 0, -0.3f, 0.3f, 0, -0.3f, 0.3f, 0, 0.3f, -0.3f, 0, 0.3f};
    float *sv;
    unsigned *st;
    size_t nv, nt;
    sphere_mesh(4, 0.06f, &sv, &nv, &st, &nt);
    pbfcl_shape_desc d[5] = {{.type = PBFCL_SHAPE_KIND_BOX,
                              .half_extents = {0.1f, 0.02f, 0.1f},
                              .position = {0.45f, 0.35f, 0.5f},
                              .velocity = {0.2f, 0.1f, 0},
                              .angular_velocity = {0, 0.5f, 1.0f},
                              .friction = 0.3f},
                             {.type = PBFCL_SHAPE_KIND_SDF,
                              .vertices = sv,
                              .vertex_count = nv,
                              .triangles = st,
                              .triangle_count = nt,
                              .sdf_resolution = 10,
                              .position = {0.6f, 0.3f, 0.55f},
                              .velocity = {-0.3f, 0.2f, 0},
                              .angular_velocity = {1.0f, 0, 0}},
                             {.type = PBFCL_SHAPE_KIND_CONVEX,
                              .points = hull,
                              .point_count = 4,
                              .position = {0.5f, 0.25f, 0.4f},
                              .angular_velocity = {0, 2.0f, 0}},
                             {.type = PBFCL_SHAPE_KIND_MESH,
                              .vertices = plate_v,
                              .vertex_count = 4,
                              .triangles = plate_t,
                              .triangle_count = 2,
                              .two_sided = 1,
                              .position = {0.5f, 0.15f, 0.5f},
                              .velocity = {0, 0.05f, 0},
                              .static_friction = 0.5f},
                             {.type = PBFCL_SHAPE_KIND_CAPSULE,
                              .radius = 0.03f,
                              .half_length = 0.1f,
                              .position = {0.4f, 0.45f, 0.6f},
                              .angular_velocity = {0, 0, 3.0f},
                              .margin = 0.01f}};
    for (int k = 0; k < 5; k++) {
        int id;
        ck_assert_int_eq(pbfcl_shape_create(s, &d[k], &id), PBFCL_OK);
    }
    free(sv);
    free(st);
}

/* The floats of state_of: 512 particles' positions and velocities, then 11 per shape. */
#define STATE_FLOATS (6 * 512 + 5 * 11)

/* The particles' positions and velocities and every shape's pose and contacts, for a compare
 * byte for byte (memory_state_reader). */
static void state_of(pbfcl_solver *s, float *out, void *user)
{
    (void)user;
    ck_assert_int_eq(pbfcl_solver_get_positions(s, out, 512), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_velocities(s, out + 3 * 512, 512), PBFCL_OK);
    float *shape = out + 6 * 512;
    for (int id = 0; id < 5; id++, shape += 11) {
        unsigned contacts, inside;
        ck_assert_int_eq(pbfcl_shape_get_pose(s, id, shape, shape + 3), PBFCL_OK);
        ck_assert_int_eq(pbfcl_shape_contacts(s, id, shape + 7, &contacts, &inside), PBFCL_OK);
        shape[10] = (float)contacts + 1000.0f * (float)inside;
    }
}

/* Five moving shapes of every kind and a falling fluid: saved after 6 frames and loaded into a
 * fresh solver with no shapes, both run 6 frames more and agree byte for byte (particles, poses,
 * forces, contacts); a shape entry with a NaN position is refused naming it. */
START_TEST(test_api_shapes_saved)
{
    pbfcl_context *ctx = test_open_context(device);
    pbfcl_solver *a = fluid_solver(ctx, true), *b = fluid_solver(ctx, false);
    moving_shapes(a);
    for (int f = 0; f < 6; f++)
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
    memory_state m;
    memory_state_expect_resumed(a, b, &m, 6, STATE_FLOATS, state_of, NULL, NULL);
    int n;
    ck_assert_int_eq(pbfcl_shape_count(b, &n), PBFCL_OK);
    ck_assert_int_eq(n, 5);
    float force[3];
    unsigned contacts;
    ck_assert_int_eq(pbfcl_shape_contacts(a, 0, force, &contacts, NULL), PBFCL_OK);
    printf("  loaded and straight agree over 6 frames; the box's force (%g, %g, %g) N, %u "
           "contacts\n",
           force[0], force[1], force[2], contacts);
    /* damaged fields (an entry: the id, name, counts, grid and bounds take 128 bytes, then the
     * row: its position, ..., its type at 172) refused naming them */
    float nan = NAN;
    unsigned nine = 9, many = 65;
    const struct {
        const char *section;
        int shape;
        size_t at;
        const void *value;
        const char *says;
    } bad[] = {{"shape_entries", 1, 128, &nan, "position[1] x is nan"},
               {"shape_entries", 0, 128 + 172, &nine, "type[0] is 9"},
               {"shapes", 0, 0, &many, "count, accumulated, next id and dt are 65"}};
    pbfcl_solver *c = fluid_solver(ctx, false);
    for (int d = 0; d < 3; d++) {
        unsigned char keep[4];
        unsigned char *at = NULL;
        for (int k = 0; k < m.count; k++)
            if (!strcmp(m.name[k], bad[d].section))
                at = (unsigned char *)m.data[k] +
                     (bad[d].shape ? m.bytes[k] / 5 * bad[d].shape : 0) + bad[d].at;
        ck_assert_ptr_nonnull(at);
        memcpy(keep, at, 4);
        memcpy(at, bad[d].value, 4);
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

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_api_shapes);
    tcase_add_test(tc, test_api_shapes_need_pbf);
    tcase_add_test(tc, test_api_shapes_saved);
}

int main(void)
{
    return test_run_on_each_device("api_colliders", 600, add_tests, device);
}
