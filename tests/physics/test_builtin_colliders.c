/* The built-in scenes of collision shapes run through the public API as pbfcl run runs them
 * (pbfcl_scene_setup_load, fill, pbfcl_scene_setup_apply_bodies): pour moves the water from
 * the tilting cup A into cup B (the particles in B's interior rise over the run and end there)
 * and no particle's path between two frames crosses a wall of either cup below its rim;
 * mesh-container keeps every particle inside its closed mesh tank and out of its SDF ramp at
 * every frame, with the default solver and with the fast one (one coarse correction a
 * substep, cfl 1), its particles' centres at least r / 2 from the tank's faces, and its ramp
 * is pushed as hard by either; a moving paddle shape pushes a fluid as a particle-filled paddle
 * on the same path does. */
#include "each_device.h"
#include "pbfcl.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char device[32]; /* the device under test, as pbfcl_context_desc wants it */

/* A solver of scene name (about target particles; 0: the scene's own) with its shapes; fast:
 * the fast solver instead of the scene's (2 iterations a substep, the first ending with the
 * multilevel coarse correction, a particle moving up to h a substep). */
static pbfcl_solver *scene_solver_with(pbfcl_context **ctx, const char *name, size_t target,
                                       bool fast, size_t *n, float *r)
{
    *ctx = test_open_context(device);
    pbfcl_scene_setup *setup;
    ck_assert_int_eq(pbfcl_scene_setup_load(name, &setup), PBFCL_OK);
    if (target)
        ck_assert_int_eq(pbfcl_scene_setup_set_particle_count(setup, target), PBFCL_OK);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    ck_assert_int_eq(pbfcl_scene_setup_get_params(setup, &d.scene, &d.solver), PBFCL_OK);
    if (fast) {
        d.solver.iterations = 2;
        d.solver.multilevel = 1;
        d.solver.cfl = 1.0f;
    }
    float *start;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &start, n), PBFCL_OK);
    d.capacity = *n;
    pbfcl_solver *s;
    ck_assert_int_eq(pbfcl_solver_create(*ctx, &d, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, start, NULL, *n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(setup, s), PBFCL_OK);
    *r = d.scene.particle_radius;
    pbfcl_free(start);
    pbfcl_scene_setup_destroy(setup);
    return s;
}

static pbfcl_solver *scene_solver(pbfcl_context **ctx, const char *name, size_t target, size_t *n,
                                  float *r)
{
    return scene_solver_with(ctx, name, target, false, n, r);
}

/* v rotated by the inverse of unit quaternion q (x, y, z, w). */
static void unrotate(const float q[4], const double v[3], double out[3])
{
    double x = -q[0], y = -q[1], z = -q[2], w = q[3];
    double t[3] = {2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])};
    out[0] = v[0] + w * t[0] + y * t[2] - z * t[1];
    out[1] = v[1] + w * t[1] + z * t[0] - x * t[2];
    out[2] = v[2] + w * t[2] + x * t[1] - y * t[0];
}

/* An open cup in its own frame: interior lo..hi, open at the top (y = hi[1]). */
typedef struct cup {
    double lo[3], hi[3];
} cup;

static bool in_cup(const cup *c, const double p[3])
{
    for (int k = 0; k < 3; k++)
        if (!(p[k] > c->lo[k] && p[k] < c->hi[k]))
            return false;
    return true;
}

/* Whether the straight path a -> b (the cup's frame) crosses one of its floor or walls more
 * than margin below its rim and inside the wall's extent. */
static bool crosses_wall(const cup *c, const double a[3], const double b[3], double margin)
{
    for (int k = 0; k < 3; k++)
        for (int side = 0; side < 2; side++) {
            double plane = side ? c->hi[k] : c->lo[k];
            if (k == 1 && side) /* the open top */
                continue;
            if ((a[k] - plane) * (b[k] - plane) >= 0.0)
                continue;
            double t = (plane - a[k]) / (b[k] - a[k]), p[3];
            for (int j = 0; j < 3; j++)
                p[j] = a[j] + t * (b[j] - a[j]);
            bool within = true;
            for (int j = 0; j < 3; j++)
                if (j != k)
                    within =
                        within && p[j] > c->lo[j] && p[j] < (j == 1 ? c->hi[j] - margin : c->hi[j]);
            if (within)
                return true;
        }
    return false;
}

/* Cup A (shape 0, its frame at the lip it pours over) and cup B (world, on the floor). */
static const cup cup_a = {{-0.2, -0.2, -0.12}, {0.0, 0.0, 0.12}};
static const cup cup_b = {{0.45, 0.01, 0.05}, {1.05, 0.30, 0.55}};

/* Particle i of pos in A's frame at its pose (p, q). */
static void in_a(const float *pos, size_t i, const float p[3], const float q[4], double out[3])
{
    double d[3] = {pos[3 * i] - (double)p[0], pos[3 * i + 1] - (double)p[1],
                   pos[3 * i + 2] - (double)p[2]};
    unrotate(q, d, out);
}

START_TEST(test_pour)
{
    pbfcl_context *ctx;
    size_t n;
    float r;
    pbfcl_solver *s = scene_solver(&ctx, "pour", 0, &n, &r);
    float *pos = malloc(n * 12), *last = malloc(n * 12), pa[3], qa[4], pl[3], ql[4];
    ck_assert_int_eq(pbfcl_solver_get_positions(s, last, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_get_pose(s, 0, pl, ql), PBFCL_OK);
    size_t in_a0 = 0, crossings = 0, at[4] = {0};
    for (size_t i = 0; i < n; i++) {
        double a[3];
        in_a(last, i, pl, ql, a);
        in_a0 += in_cup(&cup_a, a);
    }
    const int frames = 210, marks[4] = {60, 100, 140, 210}; /* 3.5 s at 60 frames a second */
    for (int f = 1; f <= frames; f++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, n), PBFCL_OK);
        ck_assert_int_eq(pbfcl_shape_get_pose(s, 0, pa, qa), PBFCL_OK);
        size_t in_b = 0;
        for (size_t i = 0; i < n; i++) {
            double a0[3], a1[3], b0[3], b1[3];
            in_a(last, i, pl, ql, a0);
            in_a(pos, i, pa, qa, a1);
            for (int k = 0; k < 3; k++)
                b0[k] = last[3 * i + k], b1[k] = pos[3 * i + k];
            in_b += in_cup(&cup_b, b1);
            bool through =
                crosses_wall(&cup_a, a0, a1, 2 * r) || crosses_wall(&cup_b, b0, b1, 2 * r);
            crossings += through;
            expect(!through,
                   "frame %d: particle %zu went through a wall, (%.4f, %.4f, %.4f) -> "
                   "(%.4f, %.4f, %.4f)",
                   f, i, b0[0], b0[1], b0[2], b1[0], b1[1], b1[2]);
        }
        for (int m = 0; m < 4; m++)
            if (f == marks[m])
                at[m] = in_b;
        memcpy(last, pos, n * 12);
        memcpy(pl, pa, sizeof pl);
        memcpy(ql, qa, sizeof ql);
    }
    printf("  pour: %zu particles, %zu in cup A at the start; in cup B after 1, 1.67, 2.33 and "
           "3.5 s: %zu, %zu, %zu, %zu; %zu crossings of a wall\n",
           n, in_a0, at[0], at[1], at[2], at[3], crossings);
    ck_assert_msg(in_a0 == n, "%zu of %zu particles start in cup A", in_a0, n);
    ck_assert_msg(at[0] < at[1] && at[1] < at[2] && at[2] <= at[3] && at[3] > n * 9 / 10,
                  "cup B holds %zu, %zu, %zu, %zu of %zu: expected to rise to over 90 %%", at[0],
                  at[1], at[2], at[3], n);
    free(pos);
    free(last);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* How deep p lies inside the ramp (at (1.15, 0.02, 0.3): x -0.25..0.25, y from its base at
 * -0.02 up to its slope, rising 0.2 m over 0.5 m from 0, z -0.3..0.3); negative outside. */
static double ramp_depth(const float *p)
{
    double x = p[0] - 1.15, y = p[1] - 0.02, z = p[2] - 0.3;
    double slope = (0.2 * (x + 0.25) - 0.5 * y) / sqrt(0.2 * 0.2 + 0.5 * 0.5);
    return fmin(fmin(fmin(x + 0.25, 0.25 - x), fmin(y + 0.02, slope)), fmin(z + 0.3, 0.3 - z));
}

static void run_mesh_container(bool fast)
{
    pbfcl_context *ctx;
    size_t n;
    float r;
    pbfcl_solver *s =
        scene_solver_with(&ctx, "mesh-container", test_small() ? 1500 : 5000, fast, &n, &r);
    float *pos = malloc(n * 12);
    const float lo[3] = {0.02f, 0.02f, 0.02f}, hi[3] = {1.58f, 0.98f, 0.58f};
    double deepest = -1.0, closest = 1.0, front = 0.0;
    const int frames = test_small() ? 30 : 120;
    for (int f = 1; f <= frames; f++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, n), PBFCL_OK);
        for (size_t i = 0; i < n; i++) {
            const float *p = pos + 3 * i;
            for (int k = 0; k < 3; k++) {
                closest = fmin(closest, fmin(p[k] - lo[k], hi[k] - p[k]));
                expect(p[k] > lo[k] && p[k] < hi[k],
                       "frame %d: particle %zu left the tank at (%.4f, %.4f, %.4f)", f, i, p[0],
                       p[1], p[2]);
            }
            double d = ramp_depth(p);
            deepest = fmax(deepest, d);
            expect(d < 0.25 * r, "frame %d: particle %zu is %.4f m inside the ramp", f, i, d);
            front = fmax(front, p[0]);
        }
    }
    printf("  mesh-container (%s): %zu particles, %d frames: closest to the tank %.4f m (r %.3f), "
           "deepest in the ramp %.4f m, the front at x %.3f\n",
           fast ? "fast solver" : "default solver", n, frames, closest, r, deepest, front);
    ck_assert(front > 0.9); /* the wave reached the ramp */
    ck_assert_msg(closest > 0.5 * r, "a particle's centre came within %.4f m of the tank (r %.3f)",
                  closest, r);
    free(pos);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}

START_TEST(test_mesh_container)
{
    run_mesh_container(false);
}
END_TEST

/* The fast solver's coarse correction: while it saw the tank's cells beyond its mesh as air, it
 * pushed the fluid toward the walls, and warm-started, or with phi = 0 on the faces to air, it
 * pushed a particle through the floor (frame 35). The mesh now closes those cells (ml_solids),
 * and the correction has no case of its own for meshes (host/core/pbf/multilevel.c,
 * pbfcl_pbf_multilevel). */
START_TEST(test_mesh_container_fast_solver)
{
    run_mesh_container(true);
}
END_TEST

/* The mean force on mesh-container's ramp (shape 1) over frames 31 to 60, when the wave runs onto
 * it, with the default solver or the fast one (about target particles). */
static double ramp_force(bool fast, size_t target)
{
    pbfcl_context *ctx;
    size_t n;
    float r;
    pbfcl_solver *s = scene_solver_with(&ctx, "mesh-container", target, fast, &n, &r);
    double sum = 0.0;
    for (int f = 1; f <= 60; f++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        float force[3];
        ck_assert_int_eq(pbfcl_shape_contacts(s, 1, force, NULL, NULL), PBFCL_OK);
        if (f > 30)
            sum += force[1] / 30.0;
    }
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    return sum;
}

/* The fast solver's correction pushes mesh-container's ramp as the default solver's iterations
 * do: the ramp's vertical force within 5 % (PoCL: -366.3 against -367.4 N at 5,130 particles;
 * -343.5 against -351.1 N at 1,560). While a solid cell beside the fluid took the first shape
 * within reach, the tank, a mesh whose bounds hold the ramp, took the pressure on the ramp's
 * faces: -254.8 N (-321.6 N at 1,560). */
START_TEST(test_mesh_container_ramp_force)
{
    size_t target = test_small() ? 1500 : 5000;
    double slow = ramp_force(false, target), fast = ramp_force(true, target);
    printf("  mesh-container's ramp: %.2f N (default solver), %.2f N (fast solver)\n", slow, fast);
    ck_assert_msg(slow < 0.0 && fabs(fast - slow) < 0.05 * fabs(slow),
                  "the ramp's force %.2f N with the fast solver, %.2f N with the default", fast,
                  slow);
}
END_TEST

/* The paddle tank: a block of fluid 0.3 m long and 0.08 m deep from the paddle's face (x = 0.1)
 * in a tank 1.5 m long, 4 particles across z; the paddle (x from 0.04 to 0.1, the tank's whole
 * height and width) moves at 0.5 m/s along +x for 0.3 s, as a box of static particles (an
 * obstacle) or as a box shape. */
#define PADDLE_SCENE(paddle)                                                                       \
    "{\"name\": \"paddle-test\", \"domain\": {\"min\": [0, 0, 0], \"max\": [1.5, 0.3, 0.08]},"     \
    "\"particle_radius\": 0.01,"                                                                   \
    "\"fluid\": [{\"min\": [0.1, 0, 0], \"max\": [0.4, 0.08, 0.08]}]," paddle "}"
static const char paddle_obstacle[] =
    PADDLE_SCENE("\"obstacles\": [{\"box\": {\"min\": [0.04, 0, 0], \"max\": [0.1, 0.3, 0.08]},"
                 "\"velocity\": [0.5, 0, 0], \"until\": 0.3}]");
static const char paddle_shape[] =
    PADDLE_SCENE("\"colliders\": [{\"type\": \"box\", \"half_extents\": [0.03, 0.15, 0.04],"
                 "\"position\": [0.07, 0.15, 0.04], \"velocity\": [0.5, 0, 0], \"until\": 0.3}]");

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The paddle tank run 0.3 s: the fluid's front (the x that 99 % of its particles, the first
 * n_fluid, lie behind: a drop thrown ahead does not count) and its mean x. */
static void paddle_run(const char *file, const char *text, size_t n_fluid, double *front,
                       double *mean_x, size_t *n_out)
{
    pbfcl_context *ctx;
    size_t n;
    float r;
    pbfcl_solver *s = scene_solver(&ctx, test_temp_write(file, text), 0, &n, &r);
    if (n_fluid == 0)
        n_fluid = n;
    float *pos = malloc(n * 12), *xs = malloc(n_fluid * 4);
    for (int f = 0; f < 18; f++) /* 0.3 s at 60 frames/s */
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, n), PBFCL_OK);
    *mean_x = 0.0;
    for (size_t i = 0; i < n_fluid; i++) {
        xs[i] = pos[3 * i];
        *mean_x += pos[3 * i] / (double)n_fluid;
    }
    qsort(xs, n_fluid, sizeof *xs, cmp_float);
    *front = xs[(size_t)(0.99 * (double)(n_fluid - 1))];
    *n_out = n;
    free(xs);
    free(pos);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}

/* A moving paddle shape pushes the fluid as the particle-filled paddle on the same path does:
 * after 0.3 s (the paddle moved 0.15 m) the fluid's front has advanced from where it was
 * (x = 0.4) as far within 5 %, and its mean x has moved as far within 5 %. */
START_TEST(test_paddle_shape_as_obstacle)
{
    double front_s, mean_s, front_o, mean_o;
    size_t n_s, n_o;
    paddle_run("paddle-shape.json", paddle_shape, 0, &front_s, &mean_s, &n_s);
    paddle_run("paddle-obstacle.json", paddle_obstacle, n_s, &front_o, &mean_o, &n_o);
    const double front0 = 0.4, mean0 = 0.25; /* at the start */
    printf("  paddle: %zu fluid particles (+ %zu of the obstacle): the front at %.4f m with the "
           "shape, %.4f m with the obstacle; the mean x %.4f and %.4f m\n",
           n_s, n_o - n_s, front_s, front_o, mean_s, mean_o);
    ck_assert_msg(n_o > n_s, "the obstacle's particles come after the same fluid");
    ck_assert_msg(fabs(front_s - front_o) < 0.05 * (front_o - front0),
                  "front %.4f m with the shape, %.4f m with the obstacle", front_s, front_o);
    ck_assert_msg(fabs(mean_s - mean_o) < 0.05 * (mean_o - mean0),
                  "mean x %.4f m with the shape, %.4f m with the obstacle", mean_s, mean_o);
}
END_TEST

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_pour);
    tcase_add_test(tc, test_mesh_container);
    tcase_add_test(tc, test_mesh_container_fast_solver);
    tcase_add_test(tc, test_mesh_container_ramp_force);
    tcase_add_test(tc, test_paddle_shape_as_obstacle);
}

int main(void)
{
    return test_run_on_each_device("builtin_colliders", 900, add_tests, device);
}
