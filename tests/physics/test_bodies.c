/* Physics of shape-matched bodies (the solver with bodies, host/core/sim/sim.c and
 * cl/bodies/shape_match.cl) by invariants: a rigid body tumbling in free fall and onto the floor
 * keeps every pairwise distance of its particles, and spinning with gravity off keeps its
 * angular momentum about its centre of mass. */
#include "pbf/pbf.h"
#include "read_by_id.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define R 0.01f /* particle radius, m */

/* A cube of k^3 particles at spacing 2r with its lowest corner particle at lo. */
static float *cube(int k, const float lo[3], size_t *n)
{
    *n = (size_t)k * k * k;
    float *p = malloc(*n * 3 * sizeof *p);
    size_t c = 0;
    for (int z = 0; z < k; z++)
        for (int y = 0; y < k; y++)
            for (int x = 0; x < k; x++) {
                p[c++] = lo[0] + 2 * R * x;
                p[c++] = lo[1] + 2 * R * y;
                p[c++] = lo[2] + 2 * R * z;
            }
    return p;
}

/* The scene every test here starts from: the defaults (gravity -9.81 along y), particles of
 * radius R, in the box [0, x] x [0, y] x [0, z]. */
static void box_scene(pbfcl_scene *s, float x, float y, float z)
{
    const float size[3] = {x, y, z};
    pbfcl_scene_defaults(s);
    s->particle_radius = R;
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = 0.0f;
        s->domain_max[a] = size[a];
    }
}

/* A simulation of the particles at pos in the box [0, size]^3 with gravity g, all of them
 * one rigid body, velocities v = omega x (x - c) about their centre c. */
static pbfcl_sim *body_sim(pbfcl_cl *cl, const float *pos, size_t n, float size, float g,
                           const float omega[3])
{
    pbfcl_scene s;
    box_scene(&s, size, size, size);
    for (int a = 0; a < 3; a++)
        s.gravity[a] = a == 1 ? -g : 0.0f;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned *id = malloc(n * 4), *body = calloc(n, 4);
    float one = 1.0f, c[3] = {0, 0, 0}, *vel = malloc(n * 12);
    for (size_t i = 0; i < n; i++) {
        id[i] = (unsigned)i;
        for (int a = 0; a < 3; a++)
            c[a] += pos[3 * i + a] / (float)n;
    }
    for (size_t i = 0; i < n; i++) { /* before the first step slot i holds particle i */
        float d[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1], pos[3 * i + 2] - c[2]};
        vel[3 * i] = omega[1] * d[2] - omega[2] * d[1];
        vel[3 * i + 1] = omega[2] * d[0] - omega[0] * d[2];
        vel[3 * i + 2] = omega[0] * d[1] - omega[1] * d[0];
    }
    ck_assert_int_eq(pbfcl_sim_set_bodies(sim, 1, n, id, body, pos, &one, &one), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_write(sim, NULL, vel), PBFCL_OK);
    free(id);
    free(body);
    free(vel);
    return sim;
}

static double dist(const float *a, const float *b)
{
    double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* A 4^3 cube spinning at (1, 2, 0.5) rad/s dropped from 0.3 m falls, hits the floor and
 * tumbles for 1.5 s: every frame every pairwise distance of its particles is within 0.5 % of
 * its rest value, and the cube did fall (its lowest particle ends near the floor). */
static void run_free_fall(pbfcl_cl *cl)
{
    size_t n;
    float lo[3] = {0.2f, 0.3f, 0.2f}, omega[3] = {1.0f, 2.0f, 0.5f};
    float *rest = cube(4, lo, &n), *pos = malloc(n * 12), *vel = malloc(n * 12);
    pbfcl_sim *sim = body_sim(cl, rest, n, 0.5f, 9.81f, omega);
    int frames = test_small() ? 3 : 90;
    double worst = 0.0;
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, pos, vel);
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++) {
                double d0 = dist(rest + 3 * i, rest + 3 * j), d = dist(pos + 3 * i, pos + 3 * j);
                worst = fmax(worst, fabs(d - d0) / d0);
                expect(fabs(d - d0) <= 0.005 * d0,
                       "frame %d: particles %zu and %zu are %.6f m "
                       "apart, at rest %.6f m",
                       f, i, j, d, d0);
            }
    }
    float low = 1.0f;
    for (size_t i = 0; i < n; i++)
        low = fminf(low, pos[3 * i + 1]);
    fprintf(stderr, "    free fall: largest distance change %.3g %%, lowest particle %.4f m\n",
            100.0 * worst, low);
    if (!test_small())
        ck_assert_msg(low < 2.0f * R, "the cube did not reach the floor (lowest %.4f m)", low);
    pbfcl_sim_destroy(sim);
    free(rest);
    free(pos);
    free(vel);
}

START_TEST(test_bodies_free_fall_rigid)
{
    test_each_device(run_free_fall);
}
END_TEST

/* L = sum (x - c) x v (equal masses; per unit particle mass) and the centre c. */
static void angular_momentum(const float *pos, const float *vel, size_t n, double l[3])
{
    double c[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            c[a] += pos[3 * i + a] / (double)n;
    l[0] = l[1] = l[2] = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1], pos[3 * i + 2] - c[2]};
        const float *v = vel + 3 * i;
        l[0] += d[1] * v[2] - d[2] * v[1];
        l[1] += d[2] * v[0] - d[0] * v[2];
        l[2] += d[0] * v[1] - d[1] * v[0];
    }
}

/* With gravity off, a 5^3 cube spinning at (0.5, 1.5, 1) rad/s in the middle of the box keeps
 * its angular momentum about its centre within 0.5 % over 2 s (the issue asks 1 %; measured
 * 0.1 %, the rounding of positions in float), and its centre stays put. Moving the particles
 * along their velocities (x* = x + v dt) instead of the rigid prediction (shape_match_predict)
 * lost theta^2 of the spin per substep (theta = |omega| dt, 4 % here); taking the chord (x* -
 * x) / dt as the velocity instead of the body's motion (shape_match_velocity) loses
 * theta^2 / 6 (0.7 %). */
static void run_spin(pbfcl_cl *cl)
{
    size_t n;
    float lo[3] = {0.46f, 0.46f, 0.46f}, omega[3] = {0.5f, 1.5f, 1.0f};
    float *rest = cube(5, lo, &n), *pos = malloc(n * 12), *vel = malloc(n * 12);
    pbfcl_sim *sim = body_sim(cl, rest, n, 1.0f, 0.0f, omega);
    read_by_id(sim, pos, vel);
    double l0[3], l[3];
    angular_momentum(pos, vel, n, l0);
    double l0n = sqrt(l0[0] * l0[0] + l0[1] * l0[1] + l0[2] * l0[2]), worst = 0.0;
    int frames = test_small() ? 3 : 120;
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, pos, vel);
        angular_momentum(pos, vel, n, l);
        double e = sqrt((l[0] - l0[0]) * (l[0] - l0[0]) + (l[1] - l0[1]) * (l[1] - l0[1]) +
                        (l[2] - l0[2]) * (l[2] - l0[2])) /
                   l0n;
        worst = fmax(worst, e);
        expect(e <= 0.005, "frame %d: L = (%.5g, %.5g, %.5g), at the start (%.5g, %.5g, %.5g)", f,
               l[0], l[1], l[2], l0[0], l0[1], l0[2]);
    }
    float com[3];
    ck_assert_int_eq(pbfcl_sim_read_bodies(sim, com, NULL), PBFCL_OK);
    for (int a = 0; a < 3; a++)
        ck_assert_msg(fabsf(com[a] - (lo[a] + 4 * R)) < 1e-4f, "the centre moved to %g on axis %d",
                      com[a], a);
    fprintf(stderr, "    spin: largest change of L %.3g %%\n", 100.0 * worst);
    pbfcl_sim_destroy(sim);
    free(rest);
    free(pos);
    free(vel);
}

START_TEST(test_bodies_spin_angular_momentum)
{
    test_each_device(run_spin);
}
END_TEST

/* The largest distance of a body's particles (pos, by id first..first+count-1) from its rest
 * shape (rest, the same order) placed at its pose (centre com, rotation quaternion q). */
static double shape_error(const float *pos, const float *rest, size_t count, const float com[3],
                          const float q[4])
{
    double c0[3] = {0, 0, 0}, worst = 0.0, x = q[0], y = q[1], z = q[2], w = q[3];
    double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                   2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                   2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
    for (size_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++)
            c0[a] += rest[3 * i + a] / (double)count;
    for (size_t i = 0; i < count; i++) {
        double r[3] = {rest[3 * i] - c0[0], rest[3 * i + 1] - c0[1], rest[3 * i + 2] - c0[2]},
               e = 0;
        for (int a = 0; a < 3; a++) {
            double g = com[a] + m[3 * a] * r[0] + m[3 * a + 1] * r[1] + m[3 * a + 2] * r[2];
            e += (pos[3 * i + a] - g) * (pos[3 * i + a] - g);
        }
        worst = fmax(worst, sqrt(e));
    }
    return worst;
}

/* A soft body (stiffness 0.02) of 5^3 particles (8 cm across), stretched by 30 % along x and
 * released with gravity off: after one frame it is still deformed (by more than 5 % of its
 * size: it is soft), after 2 s every particle is within 1 % of its size of the rest shape at
 * the body's pose. */
static void run_soft(pbfcl_cl *cl)
{
    size_t n;
    float lo[3] = {0.46f, 0.46f, 0.46f}, zero[3] = {0, 0, 0};
    float *rest = cube(5, lo, &n), *pos = malloc(n * 12), *vel = malloc(n * 12);
    pbfcl_sim *sim = body_sim(cl, rest, n, 1.0f, 0.0f, zero);
    ck_assert_int_eq(pbfcl_sim_set_body(sim, 0, 0.02f, 1.0f), PBFCL_OK);
    float *stretched = malloc(n * 12), size = 8 * R, com[3], q[4];
    for (size_t i = 0; i < n; i++) { /* slot i holds particle i before the first step */
        memcpy(stretched + 3 * i, rest + 3 * i, 12);
        stretched[3 * i] = lo[0] + 4 * R + 1.3f * (rest[3 * i] - (lo[0] + 4 * R));
    }
    ck_assert_int_eq(pbfcl_sim_write(sim, stretched, NULL), PBFCL_OK);
    int frames = test_small() ? 2 : 120;
    double first = 0.0, last = 0.0;
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, pos, vel);
        ck_assert_int_eq(pbfcl_sim_read_bodies(sim, com, q), PBFCL_OK);
        last = shape_error(pos, rest, n, com, q);
        if (f == 0)
            first = last;
    }
    fprintf(stderr,
            "    soft body: shape error %.2f %% of its size after a frame, %.3f %% at the end\n",
            100.0 * first / size, 100.0 * last / size);
    ck_assert_msg(first > 0.05 * size, "the soft body was restored in one frame (error %.4f m)",
                  first);
    if (!test_small())
        ck_assert_msg(last <= 0.01 * size, "the soft body is %.4f m from its rest shape", last);
    pbfcl_sim_destroy(sim);
    free(rest);
    free(pos);
    free(vel);
    free(stretched);
}

START_TEST(test_bodies_soft_returns)
{
    test_each_device(run_soft);
}
END_TEST

/* The neighbour lists of the last search after a whole step: no solid (a body's particle or a
 * static one, no fluid flag; none of these self-collide) lists a particle of its own phase,
 * for which predict, shape_match_predict and kinematic_path must have tagged x* (cl/pbf/pbf.cl,
 * pbf_phase_tag); the solids do list the fluid beside them, and the fluid lists the solids. */
static void check_solid_lists(pbfcl_sim *sim)
{
    size_t n = pbfcl_sim_count(sim), max = pbfcl_sim_max_neighbors(sim);
    unsigned *phase = malloc(n * 4), *count = malloc(n * 4), *list = malloc(n * max * 4);
    float *w = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, NULL, count, list), PBFCL_OK);
    size_t solid_fluid = 0, fluid_solid = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < count[i]; k++) {
            unsigned j = list[k * n + i];
            bool fluid_i = phase[i] == PBFCL_SIM_PHASE_FLUID;
            bool fluid_j = phase[j] == PBFCL_SIM_PHASE_FLUID;
            expect(fluid_i || phase[j] != phase[i],
                   "solid %zu (phase %#x) lists %u of its own phase", i, phase[i], j);
            solid_fluid += !fluid_i && fluid_j;
            fluid_solid += fluid_i && !fluid_j;
        }
    ck_assert_msg(solid_fluid > 0 && fluid_solid > 0,
                  "solids and fluid must list each other (%zu, %zu pairs)", solid_fluid,
                  fluid_solid);
    free(phase), free(count), free(list), free(w);
}

/* The fluid's level in the pool of float_cube (the mean height of the highest fluid particle of
 * each column of 2r beyond 4 cm of the cube, plus r) and the part of the cube's height below it
 * (each particle's cube of side 2r counted as if level); pos holds the nf fluid particles, then
 * the nc of the cube. */
static double submerged(const float *pos, size_t nf, size_t nc, double *level)
{
    double cx = 0.0, cz = 0.0;
    for (size_t i = nf; i < nf + nc; i++) {
        cx += pos[3 * i] / (double)nc;
        cz += pos[3 * i + 2] / (double)nc;
    }
    double top = 0.0;
    int columns = 0;
    for (int gx = 0; gx < 16; gx++)
        for (int gz = 0; gz < 16; gz++) {
            double x0 = 2 * R * gx, z0 = 2 * R * gz, best = -1.0;
            if (fabs(x0 + R - cx) < 0.06 + 0.04 && fabs(z0 + R - cz) < 0.06 + 0.04)
                continue; /* within 4 cm of the cube */
            for (size_t i = 0; i < nf; i++)
                if (pos[3 * i] >= x0 && pos[3 * i] < x0 + 2 * R && pos[3 * i + 2] >= z0 &&
                    pos[3 * i + 2] < z0 + 2 * R)
                    best = fmax(best, pos[3 * i + 1]);
            if (best > 0.0) {
                top += best;
                columns++;
            }
        }
    ck_assert_int_gt(columns, 20);
    *level = top / columns + R;
    double below = 0.0;
    for (size_t i = nf; i < nf + nc; i++)
        below += fmin(fmax((*level - (pos[3 * i + 1] - R)) / (2 * R), 0.0), 1.0);
    return below / (double)nc;
}

/* A pool of 16 x 10 x 16 particles (20 cm deep) in a 32 x 40 x 32 cm box and a cube of 6^3
 * particles (12 cm) of the given density dropped onto it from 2 cm above, settling for 3 s,
 * then watched for 1 s (every 4th frame): *fraction the mean over that second of the part of
 * the cube's height below the fluid's level (submerged), *bob how far its centre's height
 * ranged in it (a body at rest: 0), *bottom its lowest particle's height at the end. A single
 * frame's depth is no measure of a body that bobs: the fast solver's light cube read 36.7 %
 * at 3 s and 27.3 % at 10 s, around a mean of 34 %. */
static void float_cube(pbfcl_cl *cl, float density, bool fast, double *fraction, double *bob,
                       double *bottom)
{
    int fluid_n[3] = {16, 10, 16}, k = 6;
    size_t nf = (size_t)fluid_n[0] * fluid_n[1] * fluid_n[2], nc = (size_t)k * k * k, n;
    float lo[3] = {0.1f, 0.2f + 3 * R, 0.1f};
    float *cube_pos = cube(k, lo, &nc), *pos = malloc((nf + nc) * 12);
    size_t c = 0;
    for (int y = 0; y < fluid_n[1]; y++)
        for (int z = 0; z < fluid_n[2]; z++)
            for (int x = 0; x < fluid_n[0]; x++) {
                pos[c++] = R + 2 * R * x;
                pos[c++] = R + 2 * R * y;
                pos[c++] = R + 2 * R * z;
            }
    memcpy(pos + 3 * nf, cube_pos, nc * 12);
    n = nf + nc;
    pbfcl_scene s;
    box_scene(&s, 0.32f, 0.4f, 0.32f);
    if (fast) { /* the coarse correction's pressure on the body (ml_correct) */
        s.solver.iterations = 2;
        s.solver.multilevel = 1;
        s.solver.cfl = 1.0f;
    }
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned *id = malloc(nc * 4), *body = calloc(nc, 4);
    for (size_t i = 0; i < nc; i++)
        id[i] = (unsigned)(nf + i);
    float one = 1.0f, w = s.rest_density / density;
    ck_assert_int_eq(pbfcl_sim_set_bodies(sim, 1, nc, id, body, cube_pos, &one, &w), PBFCL_OK);
    float *vel = malloc(n * 12);
    double sum = 0.0, level_sum = 0.0, high = 0.0, low_centre = 1.0, low = 1.0;
    int samples = 0;
    for (int f = 0; f < 240; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        if (f < 180 || f % 4 != 3)
            continue;
        read_by_id(sim, pos, vel);
        double level, centre = 0.0;
        sum += submerged(pos, nf, nc, &level);
        level_sum += level;
        samples++;
        for (size_t i = nf; i < n; i++)
            centre += pos[3 * i + 1] / (double)nc;
        high = fmax(high, centre);
        low_centre = fmin(low_centre, centre);
    }
    check_solid_lists(sim);
    for (size_t i = nf; i < n; i++)
        low = fmin(low, pos[3 * i + 1]);
    *bottom = low;
    *fraction = sum / samples;
    *bob = high - low_centre;
    fprintf(stderr,
            "    density %g%s: level %.4f m, submerged %.1f %% (mean of 3 s - 4 s), its centre "
            "ranging %.4f m; cube bottom %.4f m at 4 s\n",
            density, fast ? ", fast solver" : "", level_sum / samples, 100.0 * *fraction, *bob,
            low - R);
    pbfcl_sim_destroy(sim);
    free(cube_pos);
    free(pos);
    free(vel);
    free(id);
    free(body);
}

/* Archimedes: a cube of density 500 kg/m^3 in still water settles with 50 +/- 7 % of its
 * volume submerged (it floats tilted, as a cube of half the water's density does; measured
 * 50.1 %, the mean of its fourth second) and at rest: its centre ranges at most r / 4 over that
 * second (measured 0.4 mm); one of 2000 kg/m^3 sinks to the floor: its lowest particle ends
 * below 3r, with at most one layer of fluid particles trapped under it (measured 2.5r: a film
 * the density constraint does not drain, docs/ALGORITHM.md, "Bodies"). With the fast solver (2
 * iterations, the coarse correction, cfl 1) the light cube floats, 10 to 90 % submerged, and
 * bobs by at most 2r: measured 28.6 %, ranging 1.22 cm, far from Archimedes' depth and never at
 * rest (docs/PERFORMANCE.md, "A floating body's depth, measured over a second"); before the
 * correction moved bodies it sank to the floor. */
static void run_archimedes(pbfcl_cl *cl)
{
    if (test_small()) {
        fprintf(stderr, "    (skipped under Oclgrind: 4 s of a 2.8k-particle pool)\n");
        return;
    }
    double fraction, bob, bottom;
    for (int fast = 0; fast < 2; fast++) {
        float_cube(cl, 500.0f, fast, &fraction, &bob, &bottom);
        if (fast)
            ck_assert_msg(fraction > 0.1 && fraction < 0.9 && bob <= 2.0 * R,
                          "a cube of 500 kg/m^3 is %.1f %% submerged with the fast solver, its "
                          "centre ranging %.4f m",
                          100.0 * fraction, bob);
        else
            ck_assert_msg(fabs(fraction - 0.5) <= 0.07 && bob <= 0.25 * R,
                          "a cube of 500 kg/m^3 is %.1f %% submerged, its centre ranging %.4f m",
                          100.0 * fraction, bob);
        float_cube(cl, 2000.0f, fast, &fraction, &bob, &bottom);
        ck_assert_msg(bottom < 3.0 * R, "a cube of 2000 kg/m^3 stays %.4f m above the floor%s",
                      bottom - R, fast ? " with the fast solver" : "");
    }
}

START_TEST(test_bodies_archimedes)
{
    test_each_device(run_archimedes);
}
END_TEST

/* A solid moves at most PBFCL_PBF_SOLID_CFL h a substep whatever the cfl lets the fluid (the
 * neighbour lists are searched at x* before the fluid is pushed aside): a 4^3 cube falling at
 * 3 m/s in an empty box at cfl 1 (1 substep at least) takes ceil(dt (v cfl / 0.5 + g dt) /
 * (cfl h)) = 3 substeps in its first frame, as at cfl 0.5; the same particles as fluid take
 * ceil(dt (v + g dt) / h) = 2. The substeps follow the first frame's bounds. */
static int falling_substeps(pbfcl_cl *cl, bool body)
{
    size_t n;
    float lo[3] = {0.4f, 0.6f, 0.4f};
    float *pos = cube(4, lo, &n), *vel = calloc(n * 3, sizeof(float));
    for (size_t i = 0; i < n; i++)
        vel[3 * i + 1] = -3.0f;
    pbfcl_scene s;
    box_scene(&s, 1.0f, 1.0f, 1.0f);
    s.solver.cfl = 1.0f;
    s.solver.substeps = 1;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned *id = malloc(n * 4), *which = calloc(n, 4);
    for (size_t i = 0; i < n; i++)
        id[i] = (unsigned)i;
    float one = 1.0f, w = 2.0f;
    if (body)
        ck_assert_int_eq(pbfcl_sim_set_bodies(sim, 1, n, id, which, pos, &one, &w), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_write(sim, NULL, vel), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    int got = pbfcl_sim_substeps(sim);
    pbfcl_sim_destroy(sim);
    free(pos), free(vel), free(id), free(which);
    return got;
}

static void run_solid_substeps(pbfcl_cl *cl)
{
    double dt = 1.0 / 60.0, g = 9.81, h = 4.0 * R, v = 3.0;
    int want_body = (int)ceil(dt * (v * 1.0 / PBFCL_PBF_SOLID_CFL + g * dt) / (1.0 * h));
    int want_fluid = (int)ceil(dt * (v + g * dt) / h);
    ck_assert_int_eq(want_body, 3);
    ck_assert_int_eq(want_fluid, 2);
    int body = falling_substeps(cl, true), fluid = falling_substeps(cl, false);
    fprintf(stderr,
            "    falling at 3 m/s, cfl 1: a body %d substeps (want %d), fluid %d (want %d)\n", body,
            want_body, fluid, want_fluid);
    ck_assert_int_eq(body, want_body);
    ck_assert_int_eq(fluid, want_fluid);
}

START_TEST(test_bodies_solid_substeps)
{
    test_each_device(run_solid_substeps);
}
END_TEST

/* Two bodies collide in zero gravity: a 4^3 cube of 500 kg/m^3 at 0.6 m/s and a 5^3 cube of
 * 2000 kg/m^3 at -0.3 m/s along x, offset by half a cube in y so that they also start to spin.
 * Their total momentum sum m v stays within 1 % of the start (of the larger momentum of the
 * two) through the impact and after, and they did meet (the light cube turned back). */
static void run_collision(pbfcl_cl *cl)
{
    size_t na, nb;
    float lo_a[3] = {0.2f, 0.5f, 0.46f}, lo_b[3] = {0.6f, 0.47f, 0.45f};
    float *pa = cube(4, lo_a, &na), *pb = cube(5, lo_b, &nb);
    size_t n = na + nb;
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *rest = malloc(n * 12);
    memcpy(rest, pa, na * 12);
    memcpy(rest + 3 * na, pb, nb * 12);
    pbfcl_scene s;
    box_scene(&s, 1.0f, 1.0f, 1.0f);
    for (int a = 0; a < 3; a++)
        s.gravity[a] = 0.0f;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, rest, n), PBFCL_OK);
    unsigned *id = malloc(n * 4), *body = malloc(n * 4);
    float one[2] = {1.0f, 1.0f}, w[2] = {1000.0f / 500.0f, 1000.0f / 2000.0f};
    double mass[2] = {500.0 * 8 * R * R * R, 2000.0 * 8 * R * R * R};
    for (size_t i = 0; i < n; i++) {
        id[i] = (unsigned)i;
        body[i] = i < na ? 0 : 1;
        vel[3 * i] = i < na ? 0.6f : -0.3f;
        vel[3 * i + 1] = vel[3 * i + 2] = 0.0f;
    }
    ck_assert_int_eq(pbfcl_sim_set_bodies(sim, 2, n, id, body, rest, one, w), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_write(sim, NULL, vel), PBFCL_OK);
    double p0[3] = {0, 0, 0}, scale = fmax(na * mass[0] * 0.6, nb * mass[1] * 0.3), worst = 0.0;
    for (size_t i = 0; i < n; i++)
        p0[0] += mass[body[i]] * vel[3 * i];
    int frames = test_small() ? 3 : 60;
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, pos, vel);
        double p[3] = {0, 0, 0};
        for (size_t i = 0; i < n; i++)
            for (int a = 0; a < 3; a++)
                p[a] += mass[body[i]] * vel[3 * i + a];
        double e = sqrt((p[0] - p0[0]) * (p[0] - p0[0]) + p[1] * p[1] + p[2] * p[2]) / scale;
        worst = fmax(worst, e);
        expect(e <= 0.01, "frame %d: momentum (%.4g, %.4g, %.4g), at the start (%.4g, 0, 0)", f,
               p[0], p[1], p[2], p0[0]);
    }
    double va = 0.0;
    for (size_t i = 0; i < na; i++)
        va += vel[3 * i] / (double)na;
    fprintf(stderr, "    collision: largest momentum change %.3g %%, light cube's v_x %.3f m/s\n",
            100.0 * worst, va);
    if (!test_small())
        ck_assert_msg(va < 0.0, "the cubes did not meet (the light one still moves at %.3f m/s)",
                      va);
    pbfcl_sim_destroy(sim);
    free(pa);
    free(pb);
    free(pos);
    free(vel);
    free(rest);
    free(id);
    free(body);
}

START_TEST(test_bodies_collision_momentum)
{
    test_each_device(run_collision);
}
END_TEST

/* A 4^3 cube of 1000 kg/m^3 on a heavy plate (25 x 2 x 10 particles, 1e5 kg/m^3) held by the
 * box's wall and floor, gravity tilted by theta towards the wall: the cube's slide along the
 * plate after t seconds (mean x of its particles against the start). The cube is turned by 30
 * degrees against the plate's rows: aligned with them its particles sat in the hollows of the
 * plate's and had to climb out of them, a roughness of the particle surfaces that held it at
 * 40 degrees without friction. */
static void slides(pbfcl_cl *cl, double theta_deg, float mu_s, float mu_k, bool static_plate,
                   double settle, int times, const double *t, double *moved)
{
    int plate_n[3] = {25, 2, 10};
    size_t np = (size_t)plate_n[0] * plate_n[1] * plate_n[2], nc;
    float lo[3] = {0.37f, 5 * R, 0.07f}, *vel;
    float *cube_pos = cube(4, lo, &nc), *pos = malloc((np + nc) * 12);
    for (size_t i = 0; i < nc; i++) { /* turned by 30 degrees about y, across the plate's rows */
        float *q = cube_pos + 3 * i, x = q[0] - (lo[0] + 3 * R), z = q[2] - (lo[2] + 3 * R);
        q[0] = lo[0] + 3 * R + 0.8660254f * x - 0.5f * z;
        q[2] = lo[2] + 3 * R + 0.5f * x + 0.8660254f * z;
    }
    size_t c = 0, n = np + nc;
    for (int y = 0; y < plate_n[1]; y++)
        for (int z = 0; z < plate_n[2]; z++)
            for (int x = 0; x < plate_n[0]; x++) {
                pos[c++] = R + 2 * R * x;
                pos[c++] = R + 2 * R * y;
                pos[c++] = R + 2 * R * z;
            }
    memcpy(pos + 3 * np, cube_pos, nc * 12);
    pbfcl_scene s;
    box_scene(&s, 0.6f, 0.3f, 0.24f);
    double th = theta_deg * 3.14159265358979 / 180.0;
    const float tilted[3] = {(float)(-9.81 * sin(th)), (float)(-9.81 * cos(th)), 0.0f};
    s.gravity[0] = settle > 0.0 ? 0.0f : tilted[0];
    s.gravity[1] = settle > 0.0 ? -9.81f : tilted[1];
    s.gravity[2] = 0.0f;
    s.solver.friction_static = mu_s;
    s.solver.friction_dynamic = mu_k;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned *id = malloc(n * 4), *body = malloc(n * 4);
    float one[2] = {1.0f, 1.0f}, w[2] = {1000.0f / 1e5f, 1.0f};
    for (size_t i = 0; i < n; i++) {
        id[i] = (unsigned)i;
        body[i] = i < np ? 0 : 1;
    }
    if (static_plate) { /* the cube alone is a body (0); the plate's particles are static */
        for (size_t i = np; i < n; i++)
            body[i] = 0;
        ck_assert_int_eq(
            pbfcl_sim_set_bodies(sim, 1, nc, id + np, body + np, pos + 3 * np, one, w + 1),
            PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_set_static(sim, np, id), PBFCL_OK);
    } else {
        ck_assert_int_eq(pbfcl_sim_set_bodies(sim, 2, n, id, body, pos, one, w), PBFCL_OK);
    }
    vel = malloc(n * 12);
    float *now = malloc(n * 12), *base = malloc(n * 12);
    memcpy(base, pos, n * 12);
    if (settle > 0.0) { /* settled on the level plate first, then tilted */
        for (int frame = 0; frame < (int)lround(settle * 60.0); frame++)
            ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, base, vel);
        pbfcl_sim_set_gravity(sim, tilted);
    }
    for (int k = 0, frame = 0; k < times; k++) {
        for (; frame < (int)lround(t[k] * 60.0); frame++)
            ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, now, vel);
        double dx = 0.0;
        for (size_t i = np; i < n; i++)
            dx += (now[3 * i] - base[3 * i]) / (double)nc;
        moved[k] = -dx;
    }
    pbfcl_sim_destroy(sim);
    free(cube_pos);
    free(pos);
    free(now);
    free(base);
    free(vel);
    free(id);
    free(body);
}

/* The cube's slide down the plate after t seconds. */
static double slide(pbfcl_cl *cl, double theta_deg, float mu_s, float mu_k, double t)
{
    double moved;
    slides(cl, theta_deg, mu_s, mu_k, false, 0.0, 1, &t, &moved);
    return moved;
}

/* Coulomb friction: tilted by 40 degrees (tan 0.84 above mu_s 0.5) the cube slides 0.2 s with
 * the acceleration g (sin 40 - mu_k cos 40), within 25 % of s = a t^2 / 2 (measured 13 %
 * further; each contact particle undoing its own part, before friction moved the whole body,
 * gave 2 %); without friction with g sin 40, within 10 % (measured 1 %). */
static void run_friction(pbfcl_cl *cl)
{
    if (test_small()) {
        fprintf(stderr, "    (skipped under Oclgrind: 0.2 s of 564 particles, twice)\n");
        return;
    }
    double g = 9.81, th = 40.0 * 3.14159265358979 / 180.0, t = 0.2;
    double kinetic = slide(cl, 40.0, 0.5f, 0.3f, t);
    double free_slide = slide(cl, 40.0, 0.0f, 0.0f, t);
    double want_k = 0.5 * g * (sin(th) - 0.3 * cos(th)) * t * t, want_0 = 0.5 * g * sin(th) * t * t;
    fprintf(stderr, "    friction: slid %.4f m (Coulomb %.4f m), frictionless %.4f m (%.4f m)\n",
            kinetic, want_k, free_slide, want_0);
    ck_assert_msg(fabs(kinetic - want_k) <= 0.25 * want_k, "slid %.4f m, Coulomb gives %.4f m",
                  kinetic, want_k);
    ck_assert_msg(fabs(free_slide - want_0) <= 0.1 * want_0,
                  "slid %.4f m without friction, g sin(theta) t^2 / 2 = %.4f m", free_slide,
                  want_0);
}

START_TEST(test_bodies_friction)
{
    test_each_device(run_friction);
}
END_TEST

/* Static friction: below the friction angle (atan 0.5 = 26.6 degrees) the cube stays put.
 * 1. On a static plate, settled level for 0.5 s and then tilted by 15 and by 20 degrees with
 *    mu_k only 0.1: in the 2 s after the tilt it moves less than 2 mm (measured 0.2-0.3 mm).
 *    Without the static limit (the dynamic one alone) it slides off the plate (0.36 m by 2 s),
 *    as g (sin - 0.1 cos) says.
 * 2. Dropped onto the heavy plate body already tilted (mu_k 0.3): once it has settled into the
 *    plate's rough surface (measured 1.1 cm at 15 degrees and 5.9 cm at 20 in the first 0.5 s),
 *    it moves less than 2 mm from 1 s to 2 s (measured 0). When each contact particle undid its
 *    own slide, shape matching spread that over the cube and it crept on at 3.1 and 4.4 cm/s. */
static void run_static_friction(pbfcl_cl *cl)
{
    if (test_small()) {
        fprintf(stderr, "    (skipped under Oclgrind: 2.5 s of 564 particles, four times)\n");
        return;
    }
    const double angle[2] = {15.0, 20.0}, t[3] = {0.5, 1.0, 2.0};
    for (int a = 0; a < 2; a++) {
        double moved[3];
        slides(cl, angle[a], 0.5f, 0.1f, true, 0.5, 3, t, moved);
        fprintf(stderr,
                "    static friction, static plate: tilted by %g degrees the cube moved %.4f, "
                "%.4f, %.4f m by 0.5, 1, 2 s\n",
                angle[a], moved[0], moved[1], moved[2]);
        for (int k = 0; k < 3; k++)
            ck_assert_msg(fabs(moved[k]) < 0.002,
                          "tilted by %g degrees, below the friction angle, the cube moved %.4f m "
                          "in %g s (bound 0.002 m)",
                          angle[a], moved[k], t[k]);
        slides(cl, angle[a], 0.5f, 0.3f, false, 0.0, 3, t, moved);
        fprintf(stderr,
                "    static friction, plate body: at %g degrees the cube moved %.4f, %.4f, %.4f m "
                "by 0.5, 1, 2 s\n",
                angle[a], moved[0], moved[1], moved[2]);
        ck_assert_msg(fabs(moved[2] - moved[1]) < 0.002,
                      "tilted by %g degrees, below the friction angle, the cube moved %.4f m from "
                      "1 s to 2 s (bound 0.002 m)",
                      angle[a], moved[2] - moved[1]);
    }
}

START_TEST(test_bodies_static_friction)
{
    test_each_device(run_static_friction);
}
END_TEST

/* A dam break against a static sphere (an obstacle): a block of fluid 0.12 x 0.24 x 0.2 m at
 * the left of a 0.4 x 0.4 x 0.2 m box falls and runs for 1.2 s into a sphere of radius
 * 0.06 m sampled on the lattice (the points within the radius, all of them static). Every
 * frame each static particle is where it started, bit for bit, and no fluid particle's centre
 * lies inside the sphere less 2 sqrt(3) r: a point deeper than that has all eight corners of
 * its lattice cell (diagonal 2 sqrt(3) r) inside the sphere, so a static particle within
 * sqrt(3) r < 2r, an overlap the contact constraint never leaves; nor within r of a static
 * particle's centre (half the contact distance 2r: an overlap of r is one the contact's
 * projection removes within a substep). The fluid did reach the sphere (some particle within
 * 3r of its surface). */
static void run_obstacle(pbfcl_cl *cl)
{
    const float c[3] = {0.25f, 0.09f, 0.11f}, rad = 0.06f;
    size_t fluid = 0, total = 0, cap = 4096;
    float *pos = malloc(cap * 12);
    for (int z = 0; z < 10; z++) /* the fluid block, lattice origin r */
        for (int y = 0; y < 12; y++)
            for (int x = 0; x < 6; x++) {
                pos[3 * total] = R + 2 * R * x;
                pos[3 * total + 1] = R + 2 * R * y;
                pos[3 * total + 2] = R + 2 * R * z;
                total++;
            }
    fluid = total;
    for (int z = 0; z < 10; z++) /* the sphere's lattice points */
        for (int y = 0; y < 20; y++)
            for (int x = 0; x < 20; x++) {
                float p[3] = {R + 2 * R * x, R + 2 * R * y, R + 2 * R * z};
                double d2 = 0.0;
                for (int a = 0; a < 3; a++)
                    d2 += (double)(p[a] - c[a]) * (p[a] - c[a]);
                if (d2 <= (double)rad * rad) {
                    memcpy(pos + 3 * total, p, 12);
                    total++;
                }
            }
    size_t statics = total - fluid;
    pbfcl_scene s;
    box_scene(&s, 0.4f, 0.4f, 0.2f);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, total), PBFCL_OK);
    unsigned *ids = malloc(statics * 4);
    for (size_t k = 0; k < statics; k++)
        ids[k] = (unsigned)(fluid + k);
    ck_assert_int_eq(pbfcl_sim_set_static(sim, statics, ids), PBFCL_OK);
    ck_assert_uint_eq(pbfcl_sim_static_count(sim), statics);
    float *now = malloc(total * 12), *vel = malloc(total * 12);
    double deepest = 1.0, closest_surface = 1.0, nearest = 1.0, bound = rad - 2.0 * sqrt(3.0) * R;
    int frames = test_small() ? 3 : 72;
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, now, vel);
        for (size_t i = fluid; i < total; i++)
            expect(memcmp(now + 3 * i, pos + 3 * i, 12) == 0,
                   "frame %d: static particle %zu moved from (%g, %g, %g) to (%g, %g, %g)", f, i,
                   pos[3 * i], pos[3 * i + 1], pos[3 * i + 2], now[3 * i], now[3 * i + 1],
                   now[3 * i + 2]);
        for (size_t i = 0; i < fluid; i++) {
            double d = dist(now + 3 * i, c);
            deepest = fmin(deepest, d);
            closest_surface = fmin(closest_surface, d - rad);
            expect(d >= bound,
                   "frame %d: fluid particle %zu is %.4f m from the sphere's centre, "
                   "inside %.4f m",
                   f, i, d, bound);
            if (d > rad + 2.0 * R)
                continue;
            for (size_t j = fluid; j < total; j++) {
                double e = dist(now + 3 * i, pos + 3 * j);
                nearest = fmin(nearest, e);
                expect(e >= R, "frame %d: fluid particle %zu is %.4f m from static particle %zu", f,
                       i, e, j);
            }
        }
    }
    if (!test_small()) /* the fluid reaches the sphere */
        check_solid_lists(sim);
    fprintf(stderr,
            "    obstacle: %zu static particles; closest fluid centre %.4f m from the "
            "centre (radius %.3f, bound %.4f), %.4f m from a static one\n",
            statics, deepest, rad, bound, nearest);
    if (!test_small())
        ck_assert_msg(closest_surface < 3.0 * R,
                      "the fluid never reached the sphere (closest "
                      "%.4f m from its surface)",
                      closest_surface);
    pbfcl_sim_destroy(sim);
    free(pos);
    free(ids);
    free(now);
    free(vel);
}

START_TEST(test_bodies_static_obstacle)
{
    test_each_device(run_obstacle);
}
END_TEST

/* The wedge of the mesh test: a prism along z over the whole depth of the box, its slope from
 * (0.18, 0) up to (0.32, 0.12) in x, y facing the fluid, its back wall at x = 0.32. */
static const char wedge_obj[] = "v 0.18 0 0\nv 0.32 0 0\nv 0.32 0.12 0\n"
                                "v 0.18 0 0.2\nv 0.32 0 0.2\nv 0.32 0.12 0.2\n"
                                "f 1 3 2\nf 4 5 6\nf 1 2 5 4\nf 2 3 6 5\nf 3 1 4 6\n";

/* How deep p lies inside the wedge, by its five planes (negative outside). */
static double wedge_depth(const float *p)
{
    double slope = (0.12 * (p[0] - 0.18) - 0.14 * p[1]) / sqrt(0.12 * 0.12 + 0.14 * 0.14);
    double d = fmin(0.32 - p[0], fmin((double)p[1], slope));
    return fmin(d, fmin((double)p[2], 0.2 - p[2]));
}

/* A dam break against a static mesh obstacle for 2 s: the scene file (a block of fluid 0.12 x
 * 0.24 x 0.2 m at the left of a 0.4 x 0.4 x 0.2 m box, the wedge above from an OBJ file) is
 * loaded, filled and given to the solver as the program does. Every frame each static
 * particle is where it started, bit for bit, no fluid centre lies deeper inside the wedge
 * (by its planes, computed here) than 2 sqrt(3) r, nor within r of a static particle (the
 * reasons of run_obstacle above), and the fluid went over the wedge (some particle beyond
 * its back wall). */
static void run_mesh_obstacle(pbfcl_cl *cl)
{
    char dir[] = "/tmp/pbfcl_wedge_XXXXXX", obj[64], json[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(obj, sizeof obj, "%s/wedge.obj", dir);
    snprintf(json, sizeof json, "%s/scene.json", dir);
    FILE *f = fopen(obj, "w");
    fputs(wedge_obj, f);
    fclose(f);
    f = fopen(json, "w");
    fputs("{\"domain\": {\"min\": [0,0,0], \"max\": [0.4,0.4,0.2]}, \"particle_radius\": 0.01, "
          "\"fluid\": [{\"min\": [0,0,0], \"max\": [0.12,0.24,0.2]}], "
          "\"obstacles\": [{\"mesh\": {\"file\": \"wedge.obj\"}}]}",
          f);
    fclose(f);
    pbfcl_scene s;
    ck_assert_int_eq(pbfcl_scene_load(json, &s), PBFCL_OK);
    remove(obj);
    remove(json);
    rmdir(dir);
    float *pos = NULL;
    size_t total = 0;
    ck_assert_int_eq(pbfcl_scene_fill(&s, &pos, &total), PBFCL_OK);
    int *phase = malloc(total * sizeof *phase);
    ck_assert_int_eq(pbfcl_scene_phases(&s, phase, total), PBFCL_OK);
    size_t fluid = 0;
    while (fluid < total && phase[fluid] == 0)
        fluid++;
    size_t statics = total - fluid;
    ck_assert_uint_eq(fluid, 6u * 12u * 10u);
    ck_assert_uint_gt(statics, 100u);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, total), PBFCL_OK);
    unsigned *ids = malloc(statics * 4);
    for (size_t k = 0; k < statics; k++)
        ids[k] = (unsigned)(fluid + k);
    ck_assert_int_eq(pbfcl_sim_set_static(sim, statics, ids), PBFCL_OK);
    float *now = malloc(total * 12), *vel = malloc(total * 12);
    double deepest = -1.0, nearest = 1.0, farthest = 0.0, bound = 2.0 * sqrt(3.0) * R;
    int frames = test_small() ? 3 : 120;
    for (int fr = 0; fr < frames; fr++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        read_by_id(sim, now, vel);
        for (size_t i = fluid; i < total; i++)
            expect(memcmp(now + 3 * i, pos + 3 * i, 12) == 0,
                   "frame %d: static particle %zu moved from (%g, %g, %g) to (%g, %g, %g)", fr, i,
                   pos[3 * i], pos[3 * i + 1], pos[3 * i + 2], now[3 * i], now[3 * i + 1],
                   now[3 * i + 2]);
        for (size_t i = 0; i < fluid; i++) {
            const float *q = now + 3 * i;
            double depth = wedge_depth(q);
            deepest = fmax(deepest, depth);
            farthest = fmax(farthest, q[0]);
            expect(depth < bound,
                   "frame %d: fluid particle %zu at (%.4f, %.4f, %.4f) is %.4f m inside the wedge "
                   "(bound %.4f m)",
                   fr, i, q[0], q[1], q[2], depth, bound);
            if (depth < -2.0 * R)
                continue;
            for (size_t j = fluid; j < total; j++) {
                double e = dist(q, pos + 3 * j);
                nearest = fmin(nearest, e);
                expect(e >= R, "frame %d: fluid particle %zu is %.4f m from static particle %zu",
                       fr, i, e, j);
            }
        }
    }
    fprintf(stderr,
            "    mesh obstacle: %zu static particles; deepest fluid centre %.4f m inside the "
            "wedge (bound %.4f), nearest %.4f m from a static one, farthest x %.3f\n",
            statics, deepest, bound, nearest, farthest);
    if (!test_small())
        ck_assert_msg(farthest > 0.33, "the fluid never went over the wedge (farthest x %.3f)",
                      farthest);
    pbfcl_sim_destroy(sim);
    free(pos);
    free(phase);
    free(ids);
    free(now);
    free(vel);
}

START_TEST(test_bodies_mesh_obstacle)
{
    test_each_device(run_mesh_obstacle);
}
END_TEST

/* The built-in dam-break-bodies at about 5000 particles, set up as the program does (the
 * bodies' stiffness and density, the obstacles static), for 20 frames: the statistics count
 * no particle outside the walls in any frame. A body resting on the floor is inside: the
 * pose fitted to its particles held at the wall put the heavy body's bottom row 0.2 mm below
 * the wall limit for 16 frames, where shape matching did not clamp its goals to the walls. */
static void run_dam_break_bodies_inside(pbfcl_cl *cl)
{
    pbfcl_scene s;
    ck_assert_int_eq(pbfcl_scene_load("dam-break-bodies", &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_set_particle_count(&s, 5000), PBFCL_OK);
    float *pos = NULL;
    size_t total = 0, entries = 0, statics = 0;
    ck_assert_int_eq(pbfcl_scene_fill(&s, &pos, &total), PBFCL_OK);
    int *phase = malloc(total * sizeof *phase);
    unsigned *id = malloc(total * 4), *body = malloc(total * 4), *fixed = malloc(total * 4);
    float *rest = malloc(total * 12), stiffness[PBFCL_MAX_BODIES], inv_mass[PBFCL_MAX_BODIES];
    ck_assert_int_eq(pbfcl_scene_phases(&s, phase, total), PBFCL_OK);
    for (size_t i = 0; i < total; i++) {
        if (phase[i] < 0)
            fixed[statics++] = (unsigned)i;
        if (phase[i] <= 0)
            continue;
        id[entries] = (unsigned)i;
        body[entries] = (unsigned)(phase[i] - 1);
        memcpy(rest + 3 * entries++, pos + 3 * i, 12);
    }
    for (int b = 0; b < s.body_count; b++) {
        stiffness[b] = s.bodies[b].stiffness;
        inv_mass[b] = s.rest_density / s.bodies[b].density;
    }
    ck_assert_int_gt(s.body_count, 0);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, total), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_bodies(sim, (size_t)s.body_count, entries, id, body, rest,
                                          stiffness, inv_mass),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_static(sim, statics, fixed), PBFCL_OK);
    int frames = test_small() ? 3 : 20;
    unsigned worst = 0;
    for (int f = 0; f < frames; f++) {
        pbfcl_sim_stats st;
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_stats_compute(sim, &st), PBFCL_OK);
        worst = st.outside > worst ? st.outside : worst;
        expect(st.outside == 0, "frame %d: %u of %zu particles outside the walls", f + 1,
               st.outside, total);
    }
    fprintf(stderr, "    dam-break-bodies: %zu particles, %d bodies, at most %u outside\n", total,
            s.body_count, worst);
    pbfcl_sim_destroy(sim);
    free(pos);
    free(phase);
    free(id);
    free(body);
    free(fixed);
    free(rest);
}

START_TEST(test_bodies_dam_break_inside_walls)
{
    test_each_device(run_dam_break_bodies_inside);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bodies");
    TCase *tc = tcase_create("bodies");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_bodies_free_fall_rigid);
    tcase_add_test(tc, test_bodies_spin_angular_momentum);
    tcase_add_test(tc, test_bodies_collision_momentum);
    tcase_add_test(tc, test_bodies_soft_returns);
    tcase_add_test(tc, test_bodies_archimedes);
    tcase_add_test(tc, test_bodies_solid_substeps);
    tcase_add_test(tc, test_bodies_friction);
    tcase_add_test(tc, test_bodies_static_friction);
    tcase_add_test(tc, test_bodies_static_obstacle);
    tcase_add_test(tc, test_bodies_mesh_obstacle);
    tcase_add_test(tc, test_bodies_dam_break_inside_walls);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
