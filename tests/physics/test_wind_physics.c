/* Physics of the wind on cloth (host/core/pbf/wind.c) against closed forms: a rigid triangle
 * falling face-down through still air reaches the terminal velocity of its drag,
 * sqrt(M g / (drag A)), within 2 %, at two substep counts, and stays level (no lift face-on);
 * the same triangle falling edge-on feels no drag (it falls as with drag and lift off); a
 * triangle tilted in a horizontal wind is pushed downwind and, with lift, up. */
#include "pbf/distance.h"
#include "pbf/pbf.h"
#include "pbf/wind.h"
#include "scene/cloth_cook.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define G 9.81f

typedef struct air {
    float wind[3], drag, lift, g;
    int substeps;
} air;

/* A rigid triangle of three free particles of the fluid's mass at corners (9 floats) in the
 * box [0, 1]^3, its three edges as distance constraints of compliance 0, in air a. */
static pbfcl_sim *triangle_sim(pbfcl_cl *cl, const float *corners, const air *a)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.particle_radius = R;
    for (int k = 0; k < 3; k++) {
        s.domain_min[k] = 0.0f;
        s.domain_max[k] = 1.0f;
        s.gravity[k] = k == 1 ? -a->g : 0.0f;
    }
    s.solver.substeps = a->substeps;
    s.solver.iterations = 8;
    s.solver.wind_x = a->wind[0];
    s.solver.wind_y = a->wind[1];
    s.solver.wind_z = a->wind[2];
    s.solver.drag = a->drag;
    s.solver.lift = a->lift;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, corners, 3), PBFCL_OK);
    unsigned ids[3] = {0, 1, 2}, group[3] = {0, 0, 0};
    float w[3] = {1.0f, 1.0f, 1.0f};
    ck_assert_int_eq(pbfcl_sim_set_groups(sim, 3, ids, group, w), PBFCL_OK);
    pbfcl_cloth_cook c;
    ck_assert_int_eq(pbfcl_cook_mesh("triangle", corners, 3, ids, 1, 0.0f, 0.0f, &c), PBFCL_OK);
    ck_assert_uint_eq(c.constraints, 3);
    ck_assert_int_eq(
        pbfcl_pbf_set_distances(sim, c.constraints, c.pair, c.rest, c.compliance, c.tether),
        PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_set_triangles(sim, 1, ids), PBFCL_OK);
    pbfcl_cook_free(&c);
    return sim;
}

/* Positions by id. */
static void positions(pbfcl_sim *sim, float *pos)
{
    float p[9];
    unsigned id[3];
    ck_assert_int_eq(pbfcl_sim_read(sim, p, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (size_t i = 0; i < 3; i++)
        memcpy(pos + 3 * id[i], p + 3 * i, 12);
}

/* The mean of the three particles along axis k. */
static double mean(const float *p, int k)
{
    return (p[k] + p[3 + k] + p[6 + k]) / 3.0;
}

/* A horizontal right triangle (legs 0.2 m, A = 0.02 m^2) of 3 m falls from y = 0.9 with drag
 * chosen for a terminal velocity near 0.5 m/s: after 0.4 s (about 8 time constants v_t / g)
 * its speed over the next 0.1 s is v_t = sqrt(3 m g / (drag A)) within 2 %, and its corners
 * stay level within 0.1 mm. */
static void terminal_at(pbfcl_cl *cl, int substeps)
{
    const float corners[9] = {0.4f, 0.9f, 0.4f, 0.6f, 0.9f, 0.4f, 0.4f, 0.9f, 0.6f};
    air a = {{0.0f, 0.0f, 0.0f}, 50.0f, 2.0f, G, substeps};
    pbfcl_sim *sim = triangle_sim(cl, corners, &a);
    double m = pbfcl_sim_params(sim)->mass, dt = pbfcl_sim_scene(sim)->solver.dt;
    double want = sqrt(3.0 * m * G / (a.drag * 0.02));
    float p[9] = {0};
    double y1 = 0.0, t1 = 0.0;
    int frames = (int)lround(0.5 / dt), from = (int)lround(0.4 / dt);
    for (int f = 1; f <= frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        positions(sim, p);
        if (f == from) {
            y1 = mean(p, 1);
            t1 = f * dt;
        }
        for (int i = 0; i < 3; i++)
            ck_assert_msg(fabsf(p[3 * i + 1] - (float)mean(p, 1)) < 1e-4f,
                          "frame %d: corner %d at y %.6f, the mean %.6f: tipped over", f, i,
                          p[3 * i + 1], mean(p, 1));
    }
    double got = (y1 - mean(p, 1)) / (frames * dt - t1);
    printf("  %d substeps: terminal velocity %.5f m/s, closed form %.5f m/s\n", substeps, got,
           want);
    ck_assert_msg(fabs(got / want - 1.0) < 0.02,
                  "%d substeps: falls at %.5f m/s, terminal velocity %.5f m/s", substeps, got,
                  want);
    pbfcl_sim_destroy(sim);
}

static void terminal(pbfcl_cl *cl)
{
    terminal_at(cl, 3);
    terminal_at(cl, 8);
}

START_TEST(test_wind_terminal_velocity)
{
    test_each_device(terminal);
}
END_TEST

/* The triangle upright in the plane z = 0.5 falls edge-on: with drag and lift on it falls
 * exactly as with them off, as fast as free fall (g t within 0.1 %). */
static void edge_on(pbfcl_cl *cl)
{
    const float corners[9] = {0.4f, 0.9f, 0.5f, 0.6f, 0.9f, 0.5f, 0.5f, 0.7f, 0.5f};
    air on = {{0.0f, 0.0f, 0.0f}, 50.0f, 2.0f, G, 3}, off = on;
    off.drag = off.lift = 0.0f;
    pbfcl_sim *a = triangle_sim(cl, corners, &on), *b = triangle_sim(cl, corners, &off);
    float pa[9], pb[9], start[9];
    positions(a, start);
    double dt = pbfcl_sim_scene(a)->solver.dt;
    const int frames = 15;
    for (int f = 1; f <= frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(a, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_step(b, NULL), PBFCL_OK);
        positions(a, pa);
        positions(b, pb);
        for (int k = 0; k < 9; k++)
            ck_assert_msg(pa[k] == pb[k], "frame %d: edge-on x[%d] = %.7f, without air %.7f", f, k,
                          pa[k], pb[k]);
    }
    float v[9];
    ck_assert_int_eq(pbfcl_sim_read(a, NULL, v, NULL), PBFCL_OK);
    double vy = mean(v, 1), want = -G * frames * dt;
    printf("  edge-on: v_y %.5f m/s, free fall %.5f m/s\n", vy, want);
    ck_assert_msg(fabs(vy / want - 1.0) < 1e-3, "edge-on: v_y %.5f m/s, free fall %.5f m/s", vy,
                  want);
    pbfcl_sim_destroy(a);
    pbfcl_sim_destroy(b);
}

START_TEST(test_wind_edge_on)
{
    test_each_device(edge_on);
}
END_TEST

/* Without gravity, a triangle tilted 45 degrees about z (its normal (1, 1, 0) / sqrt 2) in a
 * wind along +x (its upwind edge the higher): drag pushes it downwind (+x); lift pushes it
 * across the wind, here up (+y: the wind meets its face whose normal points upwind and down and
 * is turned down, the plate up); lift off, it does not move along y beyond rounding. */
static void tilted(pbfcl_cl *cl)
{
    const float corners[9] = {0.5f, 0.5f, 0.4f, 0.6f, 0.4f, 0.4f, 0.5f, 0.5f, 0.6f};
    air with_lift = {{2.0f, 0.0f, 0.0f}, 1.0f, 1.0f, 0.0f, 3}, no_lift = with_lift;
    no_lift.lift = 0.0f;
    pbfcl_sim *a = triangle_sim(cl, corners, &with_lift), *b = triangle_sim(cl, corners, &no_lift);
    float start[9], pa[9], pb[9];
    positions(a, start);
    for (int f = 0; f < 10; f++) {
        ck_assert_int_eq(pbfcl_sim_step(a, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_step(b, NULL), PBFCL_OK);
    }
    positions(a, pa);
    positions(b, pb);
    double dxa = mean(pa, 0) - mean(start, 0), dya = mean(pa, 1) - mean(start, 1);
    double dxb = mean(pb, 0) - mean(start, 0), dyb = mean(pb, 1) - mean(start, 1);
    printf("  tilted: with lift moved (%.5f, %.5f) m, without (%.5f, %.5f) m\n", dxa, dya, dxb,
           dyb);
    ck_assert_msg(dxa > 1e-3 && dxb > 1e-3, "not pushed downwind: %g, %g m", dxa, dxb);
    ck_assert_msg(dya > 1e-3, "lift moved it %g m along y; want up", dya);
    ck_assert_msg(fabs(dyb) < 1e-3 * dxb, "without lift it moved %g m along y (%g along x)", dyb,
                  dxb);
    pbfcl_sim_destroy(a);
    pbfcl_sim_destroy(b);
}

START_TEST(test_wind_tilted)
{
    test_each_device(tilted);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("wind_physics");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_test(dev, test_wind_terminal_velocity);
    tcase_add_test(dev, test_wind_edge_on);
    tcase_add_test(dev, test_wind_tilted);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
