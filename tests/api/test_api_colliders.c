/* The collision shapes through the public API (pbfcl.h, "colliders"): shapes made, moved, read
 * and destroyed by id; the force and contacts of a shape a particle rests on; a solver with no
 * shapes launches no collider kernel and one with a shape does; misuse refused (a solver of
 * another method, a destroyed id, a NaN pose, which leaves the shape as it was). */
#include "pbfcl.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f

static char device[16]; /* the device under test, as pbfcl_context_desc wants it */

static pbfcl_solver *open_solver(pbfcl_context **ctx, int method)
{
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.device = device;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &cd, ctx), PBFCL_OK);
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
    double weight = 1000.0 * 8.0 * R * R * R * 9.81; /* rest density (2r)^3 g */
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

int main(void)
{
    int devices = pbfcl_device_count(), failed = 0, ran = 0;
    if (devices == 0) {
        printf("SKIP: no OpenCL device present; install one (e.g. apt-get install "
               "pocl-opencl-icd) to run this suite\n");
        return PBFCL_TEST_SKIP;
    }
    int only = test_selected_device();
    if (only == -2)
        return 1;
    for (int i = 0; i < devices; i++) {
        if (only >= 0 && i != only)
            continue;
        snprintf(device, sizeof device, "%d", i);
        ran++;
        Suite *suite = suite_create("api_colliders");
        TCase *tc = tcase_create("api_colliders");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_api_shapes);
        tcase_add_test(tc, test_api_shapes_need_pbf);
        suite_add_tcase(suite, tc);
        SRunner *sr = srunner_create(suite);
        srunner_set_fork_status(sr, CK_NOFORK); /* the parent opened OpenCL already */
        srunner_run_all(sr, CK_NORMAL);
        failed += srunner_ntests_failed(sr);
        srunner_free(sr);
    }
    return ran && failed == 0 ? 0 : 1;
}
