/* Physics of attachments (host/core/pbf/attach.c, cl/pbf/attach.cl) through the public API: a
 * rope hanging from a shape that moves sideways at constant velocity keeps its top exactly at
 * the shape's point and hangs straight down (Galilean invariance: in the shape's frame nothing
 * moves); a cloth whose top row is attached to a falling, spinning shape keeps that row at the
 * shape's local points every frame; a rigid body hanging from a pinned rope by an attachment
 * is in Hooke's equilibrium: the rope's top edge carries the rope's and the body's weight and
 * the body sits where the edges' and the attachment's stretches put it. */
#include "each_device.h"
#include "pbfcl.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define G 9.81f

static char device[32];

static pbfcl_solver *open_solver(pbfcl_context **ctx, size_t capacity, int iterations)
{
    *ctx = test_open_context(device);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = capacity;
    d.scene.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        d.scene.domain_min[a] = 0.0f;
        d.scene.domain_max[a] = 1.0f;
        d.scene.gravity[a] = a == 1 ? -G : 0.0f;
    }
    d.solver.method = PBFCL_METHOD_PBF;
    d.solver.iterations = iterations;
    d.solver.substeps = 4;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(*ctx, &d, &s), PBFCL_OK);
    return s;
}

static void close_solver(pbfcl_context *ctx, pbfcl_solver *s)
{
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}

/* v rotated by the unit quaternion q (x, y, z, w), in double. */
static void rotate(const float q[4], const float v[3], double out[3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    for (int a = 0; a < 3; a++)
        out[a] = m[a][0] * v[0] + m[a][1] * v[1] + m[a][2] * v[2];
}

/* The particles of indices from .. from + count - 1 into group 0 with inverse mass w. */
static void group(pbfcl_solver *s, unsigned from, unsigned count, float w)
{
    unsigned *ids = malloc(count * 4), *g = calloc(count, 4);
    float *inv = malloc(count * 4);
    for (unsigned k = 0; k < count; k++) {
        ids[k] = from + k;
        inv[k] = w;
    }
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, g, inv, count), PBFCL_OK);
    free(ids);
    free(g);
    free(inv);
}

/* The largest distance of the attached particles of s (count, at local points of shape id) from
 * their shape's points now. */
static double off_shape(pbfcl_solver *s, int id, size_t n, const unsigned *particle,
                        const float *local, size_t count)
{
    float *pos = malloc(3 * n * sizeof *pos), c[3], q[4];
    ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_get_pose(s, id, c, q), PBFCL_OK);
    double worst = 0.0;
    for (size_t k = 0; k < count; k++) {
        double r[3], d = 0.0;
        rotate(q, local + 3 * k, r);
        for (int a = 0; a < 3; a++)
            d += pow(pos[3 * particle[k] + a] - (c[a] + r[a]), 2);
        worst = fmax(worst, sqrt(d));
    }
    free(pos);
    return worst;
}

/* A rope of 8 particles (spacing 2r, rigid edges) hanging from a sphere that moves along x at
 * u, the rope starting with the same velocity: every frame its top is at the sphere's point
 * (1e-5 m), its bottom right below it (1e-3 m) and moving at u (1 %). */
START_TEST(test_attach_rope_moving_shape)
{
    const int k = 8;
    const float u = 0.25f, top[3] = {0.3f, 0.8f, 0.5f}, local[3] = {0.0f, -0.05f, 0.0f};
    pbfcl_context *ctx;
    pbfcl_solver *s = open_solver(&ctx, k, 4);
    pbfcl_shape_desc ball = {.type = PBFCL_SHAPE_KIND_SPHERE,
                             .radius = 0.02f,
                             .position = {top[0], top[1] + 0.05f, top[2]},
                             .velocity = {u, 0.0f, 0.0f}};
    int id;
    ck_assert_int_eq(pbfcl_shape_create(s, &ball, &id), PBFCL_OK);
    float pos[3 * 8], vel[3 * 8] = {0}, rest[7], comp[7] = {0};
    unsigned pair[14];
    int phases[8] = {PBFCL_PHASE_STATIC};
    for (int i = 0; i < k; i++) {
        memcpy(pos + 3 * i, top, sizeof top);
        pos[3 * i + 1] -= 2.0f * R * (float)i;
        vel[3 * i] = u;
    }
    for (int i = 0; i + 1 < k; i++) {
        pair[2 * i] = (unsigned)i;
        pair[2 * i + 1] = (unsigned)i + 1;
        rest[i] = 2.0f * R;
    }
    ck_assert_int_eq(pbfcl_solver_add(s, pos, vel, k), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phases, k), PBFCL_OK);
    group(s, 1, k - 1, 100.0f);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, NULL, k - 1), PBFCL_OK);
    unsigned p0 = 0;
    int kind = PBFCL_ATTACH_SHAPE;
    ck_assert_int_eq(pbfcl_solver_set_attachments(s, &p0, &kind, &id, local, NULL, 1), PBFCL_OK);
    double worst_top = 0.0, worst_lean = 0.0, worst_speed = 0.0;
    for (int f = 0; f < 45; f++) { /* 0.75 s: the sphere moves 0.19 m */
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        worst_top = fmax(worst_top, off_shape(s, id, k, &p0, local, 1));
        ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, k), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_velocities(s, vel, k), PBFCL_OK);
        double lean = hypot(pos[3 * (k - 1)] - pos[0], pos[3 * (k - 1) + 2] - pos[2]);
        worst_lean = fmax(worst_lean, lean);
        worst_speed = fmax(worst_speed, fabs(vel[3 * (k - 1)] / u - 1.0));
    }
    printf("  rope on a moving sphere: top off its point by %.2g m at most, bottom off the "
           "vertical by %.2g m, its speed off the sphere's by %.2g\n",
           worst_top, worst_lean, worst_speed);
    ck_assert_msg(worst_top < 1e-5, "the top is %g m from the sphere's point", worst_top);
    ck_assert_msg(worst_lean < 1e-3, "the bottom is %g m off the vertical", worst_lean);
    ck_assert_msg(worst_speed < 0.01, "the bottom's speed is off the sphere's by %g", worst_speed);
    close_solver(ctx, s);
}
END_TEST

/* A 6 x 6 cloth (spacing 2r) whose top row is attached to a small box that falls at 0.3 m/s and
 * spins at 3 rad/s about y: every frame the row is at the box's local points (1e-5 m), and the
 * cloth stays finite. */
START_TEST(test_attach_cloth_spinning_shape)
{
    const int w = 6, n = w * w;
    pbfcl_context *ctx;
    pbfcl_solver *s = open_solver(&ctx, (size_t)n, 4);
    const float c0[3] = {0.5f, 0.8f, 0.5f};
    pbfcl_shape_desc box = {.type = PBFCL_SHAPE_KIND_BOX,
                            .half_extents = {0.02f, 0.02f, 0.02f},
                            .position = {c0[0], c0[1], c0[2]},
                            .velocity = {0.0f, -0.3f, 0.0f},
                            .angular_velocity = {0.0f, 3.0f, 0.0f}};
    int id;
    ck_assert_int_eq(pbfcl_shape_create(s, &box, &id), PBFCL_OK);
    float pos[3 * 36], local[3 * 6];
    int phases[36] = {0}, kind[6];
    unsigned pair[2 * 60], top[6], ids[30], g[30] = {0};
    float rest[60], comp[60] = {0}, inv[30];
    int target[6];
    size_t edges = 0;
    for (int r = 0; r < w; r++)
        for (int c = 0; c < w; c++) {
            int i = r * w + c;
            pos[3 * i] = c0[0] + 2.0f * R * (float)(c - w / 2);
            pos[3 * i + 1] = c0[1] - 0.04f - 2.0f * R * (float)r;
            pos[3 * i + 2] = c0[2];
            if (c + 1 < w) {
                pair[2 * edges] = (unsigned)i;
                pair[2 * edges + 1] = (unsigned)i + 1;
                rest[edges++] = 2.0f * R;
            }
            if (r + 1 < w) {
                pair[2 * edges] = (unsigned)i;
                pair[2 * edges + 1] = (unsigned)(i + w);
                rest[edges++] = 2.0f * R;
            }
        }
    for (int c = 0; c < w; c++) {
        phases[c] = PBFCL_PHASE_STATIC;
        top[c] = (unsigned)c;
        kind[c] = PBFCL_ATTACH_SHAPE;
        target[c] = id;
        for (int a = 0; a < 3; a++)
            local[3 * c + a] = pos[3 * c + a] - c0[a];
    }
    for (int i = w; i < n; i++) {
        ids[i - w] = (unsigned)i;
        inv[i - w] = 200.0f;
    }
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, (size_t)n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phases, (size_t)n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_groups(s, ids, g, inv, (size_t)(n - w)), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, NULL, edges), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_attachments(s, top, kind, target, local, NULL, (size_t)w),
                     PBFCL_OK);
    double worst = 0.0;
    for (int f = 0; f < 30; f++) { /* 0.5 s: 1.5 rad about y, 0.15 m down */
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        worst = fmax(worst, off_shape(s, id, (size_t)n, top, local, (size_t)w));
    }
    pbfcl_stats st;
    ck_assert_int_eq(pbfcl_solver_stats(s, &st), PBFCL_OK);
    float q[4];
    ck_assert_int_eq(pbfcl_shape_get_pose(s, id, NULL, q), PBFCL_OK);
    printf("  cloth on a falling, spinning box (turned %.2f rad): its row off the box's points "
           "by %.2g m at most\n",
           2.0 * atan2(q[1], q[3]), worst);
    ck_assert_msg(worst < 1e-5, "the attached row is %g m from the box's points", worst);
    ck_assert_uint_eq(st.nan, 0);
    close_solver(ctx, s);
}
END_TEST

/* A rope pinned at the top (3 free particles of mass m, edges of compliance a) holds a rigid
 * body of 5 particles (a square of four with one above its centre, all 2r apart; mass M) by an
 * attachment of compliance b to the point 2r above the body's top particle. At rest edge j
 * carries T_j = ((3 - j) m + M) g and the attachment M g, so, started there, the top edge's
 * tension averages T_0 and the body's centre of mass sits at the pin less the rest lengths and
 * the stretches a T_j and b M g (within 3 % of the stretches). */
START_TEST(test_attach_body_hangs_from_rope)
{
    const int k = 3;
    const double m = 0.01, rho = 1000.0, a = 5e-3, b = 5e-3, L = 2.0 * R;
    const double M = 5.0 * rho * pow(2.0 * R, 3.0), h = sqrt(2.0) * R;
    pbfcl_context *ctx;
    pbfcl_solver *s = open_solver(&ctx, 9, 8);
    float pos[3 * 9];
    double y = 0.8, stretch = 0.0;
    for (int i = 0; i <= k; i++) { /* the rope at its equilibrium */
        pos[3 * i] = 0.5f;
        pos[3 * i + 1] = (float)y;
        pos[3 * i + 2] = 0.5f;
        if (i < k) {
            double t = ((k - i) * m + M) * G;
            y -= L + a * t;
            stretch += a * t;
        }
    }
    stretch += b * M * G;
    double yt = y - (2.0 * R + b * M * G), com = yt - 4.0 * h / 5.0;
    const float sq[4][2] = {{-1, -1}, {1, -1}, {-1, 1}, {1, 1}};
    pos[3 * 4] = 0.5f;
    pos[3 * 4 + 1] = (float)yt;
    pos[3 * 4 + 2] = 0.5f;
    for (int c = 0; c < 4; c++) {
        pos[3 * (5 + c)] = 0.5f + R * sq[c][0];
        pos[3 * (5 + c) + 1] = (float)(yt - h);
        pos[3 * (5 + c) + 2] = 0.5f + R * sq[c][1];
    }
    int phases[9] = {PBFCL_PHASE_STATIC, 0, 0, 0, 1, 1, 1, 1, 1};
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, 9), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phases, 9), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_body(s, 0, 1.0f, (float)rho), PBFCL_OK);
    group(s, 1, k, (float)(1.0 / m));
    unsigned pair[6] = {0, 1, 1, 2, 2, 3};
    float rest[3] = {(float)L, (float)L, (float)L}, comp[3] = {(float)a, (float)a, (float)a};
    ck_assert_int_eq(pbfcl_solver_set_distances(s, pair, rest, comp, NULL, 3), PBFCL_OK);
    unsigned end = 3;
    int kind = PBFCL_ATTACH_BODY, body = 0;
    float point[3] = {0.0f, (float)(4.0 * h / 5.0 + 2.0 * R), 0.0f}, cb = (float)b;
    ck_assert_int_eq(pbfcl_solver_set_attachments(s, &end, &kind, &body, point, &cb, 1), PBFCL_OK);
    double tension = 0.0, mean = 0.0;
    const int frames = 60;
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        float force[3], c[3];
        ck_assert_int_eq(pbfcl_solver_get_distance_forces(s, force, 3), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_bodies(s, c, NULL, 1), PBFCL_OK);
        tension += force[0] / frames;
        mean += c[1] / frames;
    }
    double weight = (k * m + M) * G;
    printf("  body on a rope: top tension %.5f N (weight %.5f N), centre of mass %.5f m "
           "(Hooke %.5f m, stretches %.5f m)\n",
           tension, weight, mean, com, stretch);
    ck_assert_msg(fabs(tension / weight - 1.0) < 0.02, "top tension %g N, weight %g N", tension,
                  weight);
    ck_assert_msg(fabs(mean - com) < 0.03 * stretch, "centre of mass at %g m, Hooke's law says %g",
                  mean, com);
    close_solver(ctx, s);
}
END_TEST

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_attach_rope_moving_shape);
    tcase_add_test(tc, test_attach_cloth_spinning_shape);
    tcase_add_test(tc, test_attach_body_hangs_from_rope);
}

int main(void)
{
    return test_run_on_each_device("attach_physics", 600, add_tests, device);
}
