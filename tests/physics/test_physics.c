/* Physics validation of the PBF solver by invariants and known behaviour: a block at rest
 * density settles, density error falls with solver iterations, a dam break stays bounded
 * and its front advances, momentum is conserved without gravity, runs are deterministic. */
#include "pbf/pbf.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f /* particle radius of every test, m */

/* A scene with the default solver in the box [0, size]. */
static void box_scene(pbfcl_scene *s, float sx, float sy, float sz)
{
    pbfcl_scene_defaults(s);
    s->particle_radius = R;
    float size[3] = {sx, sy, sz};
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = 0.0f;
        s->domain_max[a] = size[a];
    }
}

/* A block of nx * ny * nz particles at spacing factor * 2r from lo + r. */
static float *block(const int nn[3], const float lo[3], float factor, size_t *n)
{
    *n = (size_t)nn[0] * nn[1] * nn[2];
    float *p = malloc(*n * 3 * sizeof *p), s = 2.0f * R * factor;
    size_t c = 0;
    for (int k = 0; k < nn[2]; k++)
        for (int j = 0; j < nn[1]; j++)
            for (int i = 0; i < nn[0]; i++) {
                p[c++] = lo[0] + R + i * s;
                p[c++] = lo[1] + R + j * s;
                p[c++] = lo[2] + R + k * s;
            }
    return p;
}

static pbfcl_sim *make_sim(pbfcl_cl *cl, const pbfcl_scene *s, const float *pos, size_t n)
{
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, s, pos, n), PBFCL_OK);
    return sim;
}

static void run_frames(pbfcl_sim *sim, int frames)
{
    for (int f = 0; f < frames; f++)
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
}

static pbfcl_sim_stats stats_of(pbfcl_sim *sim)
{
    pbfcl_sim_stats st;
    ck_assert_int_eq(pbfcl_sim_stats_compute(sim, &st), PBFCL_OK);
    return st;
}

static void print_stats(const char *what, const pbfcl_sim_stats *st)
{
    fprintf(stderr,
            "    %s: density error avg %.3f %% max %.3f %%, max speed %.4f m/s, KE %.3g J, "
            "neighbours %.1f/%u, outside %u, nan %u, P = (%.3g, %.3g, %.3g)\n",
            what, st->density_error_avg, st->density_error_max, st->max_speed, st->kinetic_energy,
            st->neighbours_avg, st->neighbours_max, st->outside, st->nan, st->momentum[0],
            st->momentum[1], st->momentum[2]);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A block at rest density filling the floor of a box settles: after 2 s the mean density
 * error is <= 1 %, the rms speed is <= 2 cm/s, nothing is outside, no NaN, and over the last
 * 0.5 s the fastest particle of a frame moves at <= 5 cm/s in the median frame. The median,
 * not one frame: in a block at rest the fastest of its particles changes from frame to frame
 * (with the solver of issue 10, 4 plain iterations, a 11-layer block's reached 30 cm/s in one
 * frame of its second second and 4.2 cm/s at 2 s; docs/PERFORMANCE.md, "A quiet rest"), so
 * one frame's fastest particle measures chance; a block that keeps jittering fails the median.
 * Without the walls' density (cl/pbf/pbf.cl, pbf_wall_density) the wall layer was
 * under-dense and its particles jittered at 5-7 cm/s; what is left are slow rearrangements of
 * the settling block, see docs/PERFORMANCE.md, "Known limits". */
static void check_settle(pbfcl_cl *cl)
{
    int nn[3] = {16, 10, 16};
    if (test_small())
        nn[0] = nn[1] = nn[2] = 6;
    pbfcl_scene s;
    box_scene(&s, nn[0] * 2 * R, nn[1] * 2 * R * 1.5f, nn[2] * 2 * R);
    size_t n;
    float lo[3] = {0, 0, 0};
    float *pos = block(nn, lo, 1.0f, &n);
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    enum { WINDOW = 30 }; /* the last 0.5 s */
    int frames = test_small() ? 10 : 120, window = test_small() ? 5 : WINDOW;
    double fastest[WINDOW];
    run_frames(sim, frames - window);
    for (int f = 0; f < window; f++) {
        run_frames(sim, 1);
        fastest[f] = stats_of(sim).max_speed;
    }
    qsort(fastest, (size_t)window, sizeof fastest[0], compare_double);
    double median = 0.5 * (fastest[(window - 1) / 2] + fastest[window / 2]);
    pbfcl_sim_stats st = stats_of(sim);
    print_stats("settle 2 s", &st);
    fprintf(stderr,
            "    settle: fastest particle over the last %d frames: median %.4f m/s, "
            "least %.4f, largest %.4f\n",
            window, median, fastest[0], fastest[window - 1]);
    ck_assert_uint_eq(st.nan, 0);
    ck_assert_uint_eq(st.outside, 0);
    ck_assert_msg(st.density_error_avg <= 1.0, "mean density error %.3f %% > 1 %%",
                  st.density_error_avg);
    double mass = pbfcl_sim_params(sim)->mass * (double)n;
    double rms = sqrt(2.0 * st.kinetic_energy / mass);
    ck_assert_msg(rms <= 0.02, "rms speed %.4f m/s > 0.02 m/s", rms);
    ck_assert_msg(median <= 0.05, "fastest particle %.4f m/s in the median frame > 0.05 m/s",
                  median);
    pbfcl_sim_destroy(sim);
    free(pos);
}

START_TEST(test_settle)
{
    test_each_device(check_settle);
}
END_TEST

/* The density error at the end of one frame from a compressed block, with a given number of
 * solver iterations (densities recomputed at the final positions): the iterations alone, the
 * multilevel coarse correction off (solver.multilevel 0), which would otherwise do their work,
 * and substeps of at most h / 2 a particle (cfl 0.5; at cfl 1, 8 iterations left 0.158 %). */
static double error_after_rho(pbfcl_cl *cl, int iterations, float chebyshev_rho)
{
    int nn[3] = {12, 12, 12};
    pbfcl_scene s;
    box_scene(&s, 0.4f, 0.4f, 0.4f);
    s.solver.iterations = iterations;
    s.solver.chebyshev_rho = chebyshev_rho;
    s.solver.multilevel = 0;
    s.solver.cfl = 0.5f;
    s.solver.substeps = 1;
    size_t n;
    float lo[3] = {0.05f, 0.0f, 0.05f};
    float *pos = block(nn, lo, 0.95f, &n);
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    run_frames(sim, 1);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    pbfcl_sim_stats st = stats_of(sim);
    char what[64];
    snprintf(what, sizeof what, "%d iterations, chebyshev %g", iterations, chebyshev_rho);
    print_stats(what, &st);
    pbfcl_sim_destroy(sim);
    free(pos);
    return st.density_error_avg;
}

static double error_after(pbfcl_cl *cl, int iterations)
{
    return error_after_rho(cl, iterations, 0.0f);
}

/* The density error falls with each doubling of the iterations until it is solved (below
 * 0.001 %, the walls' density lets 4 iterations get there), and stays solved. */
static void check_iterations(pbfcl_cl *cl)
{
    const double solved = 1e-3; /* % */
    double prev = error_after(cl, 0);
    ck_assert_msg(prev > 1.0, "the compressed block starts at %.4f %%", prev);
    const int its[] = {1, 2, 4, 8};
    for (int k = 0; k < 4; k++) {
        double e = error_after(cl, its[k]);
        if (prev > solved)
            ck_assert_msg(e < prev,
                          "density error %.4f %% after %d iterations is not below %.4f %%", e,
                          its[k], prev);
        else
            ck_assert_msg(e <= solved, "density error %.4f %% after %d iterations: it was solved",
                          e, its[k]);
        prev = e;
    }
    ck_assert_msg(prev <= solved, "density error %.4f %% after 8 iterations", prev);
}

START_TEST(test_iterations)
{
    test_each_device(check_iterations);
}
END_TEST

/* The mean density error over frames 21-30 of a column of water 48 particles tall in a box
 * as wide as it (6 x 6 particles, r = 1 cm), held at rest by 8 iterations in 2 substeps per
 * frame: the iterations must carry the floor's support up the whole column each substep (the
 * multilevel coarse correction off: it carries it at once). */
static double column_error(pbfcl_cl *cl, float chebyshev_rho)
{
    int nn[3] = {6, 48, 6};
    pbfcl_scene s;
    box_scene(&s, nn[0] * 2 * R, 1.2f, nn[2] * 2 * R);
    s.solver.substeps = 2;
    s.solver.cfl = 2.0f; /* the scene's 2 substeps, not the adaptive count */
    s.solver.iterations = 8;
    s.solver.chebyshev_rho = chebyshev_rho;
    s.solver.multilevel = 0;
    size_t n;
    float lo[3] = {0, 0, 0};
    float *pos = block(nn, lo, 1.0f, &n);
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    double sum = 0.0;
    pbfcl_sim_stats st;
    for (int frame = 1; frame <= 30; frame++) {
        run_frames(sim, 1);
        st = stats_of(sim);
        ck_assert_uint_eq(st.nan, 0);
        ck_assert_uint_eq(st.outside, 0);
        ck_assert_int_eq(st.substeps, 2);
        if (frame > 20)
            sum += st.density_error_avg / 10.0;
    }
    char what[64];
    snprintf(what, sizeof what, "column, chebyshev %g, frames 21-30 mean %.3f %%", chebyshev_rho,
             sum);
    print_stats(what, &st);
    pbfcl_sim_destroy(sim);
    free(pos);
    return sum;
}

/* Chebyshev acceleration (solver.chebyshev_rho 0.95) at least halves the column's density
 * error (measured: 1.3 % against 5.0 % on PoCL): plain Jacobi iterations spread the floor's
 * correction like a diffusion, about h sqrt(iterations) per substep, and the column
 * compresses until the error supports it; the Chebyshev weights spread it about h per
 * iteration. */
static void check_chebyshev(pbfcl_cl *cl)
{
    double plain = column_error(cl, 0.0f), fast = column_error(cl, 0.95f);
    ck_assert_msg(plain > 2.0, "plain Jacobi holds the column at %.3f %%: no test", plain);
    ck_assert_msg(fast <= 0.5 * plain, "density error %.3f %% with Chebyshev, %.3f %% without",
                  fast, plain);
}

START_TEST(test_chebyshev)
{
    test_each_device(check_chebyshev);
}
END_TEST

/* The accelerated solver of docs/PERFORMANCE.md: 8 Chebyshev-accelerated iterations with
 * collision passes after every second, and substeps in which a particle moves up to h; no
 * multilevel coarse correction. */
static void accelerate(pbfcl_scene *s)
{
    s->solver.iterations = 8;
    s->solver.chebyshev_rho = 0.95f;
    s->solver.multilevel = 0;
    s->solver.contact_interval = 2;
    s->solver.cfl = 1.0f;
}

/* The largest x of the (sorted) positions. */
static float front_of(pbfcl_sim *sim)
{
    size_t n = pbfcl_sim_count(sim);
    float *pos = malloc(n * 3 * sizeof *pos), front = -1e30f;
    ck_assert_int_eq(pbfcl_sim_read(sim, pos, NULL, NULL), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        front = fmaxf(front, pos[3 * i]);
    free(pos);
    return front;
}

/* Dam break, 2 s: no NaN, nothing outside, the front advances (checked until 0.3 s: it
 * reaches the far wall, 0.8 m, before 0.5 s), mean density error <= 2 %. */
static void dam_break(pbfcl_cl *cl, bool accelerated)
{
    int nn[3] = {12, 24, 10};
    if (test_small())
        nn[0] = 4, nn[1] = 8, nn[2] = 4;
    pbfcl_scene s;
    box_scene(&s, 0.8f, 0.6f, nn[2] * 2 * R);
    if (accelerated)
        accelerate(&s);
    size_t n;
    float lo[3] = {0, 0, 0};
    float *pos = block(nn, lo, 1.0f, &n);
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    float front = front_of(sim);
    const int marks[] = {6, 12, 18, 30, 60, 120};
    int frame = 0;
    for (int m = 0; m < 6; m++) {
        run_frames(sim, marks[m] - frame);
        frame = marks[m];
        pbfcl_sim_stats st = stats_of(sim);
        float f = front_of(sim);
        char what[64];
        snprintf(what, sizeof what, "dam break%s %.2f s, front %.3f m",
                 accelerated ? " (accelerated)" : "", frame / 60.0, f);
        print_stats(what, &st);
        ck_assert_uint_eq(st.nan, 0);
        ck_assert_uint_eq(st.outside, 0);
        if (frame <= 18)
            ck_assert_msg(f > front + 0.01f, "front %.3f m did not advance from %.3f m", f, front);
        if (frame == 120)
            ck_assert_msg(st.density_error_avg <= 2.0, "mean density error %.3f %% > 2 %%",
                          st.density_error_avg);
        front = f;
        if (test_small() && frame >= 12)
            break;
    }
    pbfcl_sim_destroy(sim);
    free(pos);
}

static void check_dam_break(pbfcl_cl *cl)
{
    dam_break(cl, false);
}

/* The same dam break with the accelerated solver keeps the same bounds. */
static void check_dam_break_accelerated(pbfcl_cl *cl)
{
    dam_break(cl, true);
}

START_TEST(test_dam_break_accelerated)
{
    test_each_device(check_dam_break_accelerated);
}
END_TEST

START_TEST(test_dam_break)
{
    test_each_device(check_dam_break);
}
END_TEST

/* Without gravity in a closed box, a compressed block expands; the total momentum stays
 * near zero: below 1 % of the momentum its particles carry (vorticity confinement is not
 * pairwise, everything else is). */
static void check_momentum(pbfcl_cl *cl)
{
    int nn[3] = {12, 12, 12};
    if (test_small())
        nn[0] = nn[1] = nn[2] = 5;
    pbfcl_scene s;
    box_scene(&s, 1.0f, 1.0f, 1.0f);
    s.gravity[1] = 0.0f;
    size_t n;
    float extent = (nn[0] - 1) * 2 * R * 0.9f + 2 * R;
    float c = 0.5f - extent / 2;
    float lo[3] = {c, c, c};
    float *pos = block(nn, lo, 0.9f, &n);
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    double mass = pbfcl_sim_params(sim)->mass * (double)n;
    for (int f = 0; f < (test_small() ? 4 : 20); f++) { /* before it reaches the walls */
        run_frames(sim, 1);
        pbfcl_sim_stats st = stats_of(sim);
        double p = sqrt(st.momentum[0] * st.momentum[0] + st.momentum[1] * st.momentum[1] +
                        st.momentum[2] * st.momentum[2]);
        double carried = sqrt(2.0 * mass * st.kinetic_energy); /* M * rms speed */
        if (f % 10 == 9 || p > 1e-2 * carried)
            print_stats("expanding block", &st);
        ck_assert_uint_eq(st.nan, 0);
        ck_assert_msg(carried > 0.0, "the block did not move");
        ck_assert_msg(p <= 1e-2 * carried, "momentum %.3g kg m/s, particles carry %.3g", p,
                      carried);
    }
    pbfcl_sim_destroy(sim);
    free(pos);
}

START_TEST(test_momentum)
{
    test_each_device(check_momentum);
}
END_TEST

/* Two particles at rest overlapping by 0.8r (1.2r apart), with nothing else acting on them:
 * one frame of one substep, returning their separation speed and distance. */
static void overlapping_pair(pbfcl_cl *cl, float slop, double *speed, double *dist)
{
    pbfcl_scene s;
    box_scene(&s, 0.5f, 0.5f, 0.5f);
    s.gravity[1] = 0.0f;
    s.solver.substeps = 1;
    s.solver.contact_slop = slop;
    s.solver.scorr_k = 0.0f; /* the tensile term would push them apart too */
    s.solver.viscosity = 0.0f;
    s.solver.vorticity = 0.0f;
    float pos[6] = {0.25f - 0.6f * R, 0.25f, 0.25f, 0.25f + 0.6f * R, 0.25f, 0.25f};
    pbfcl_sim *sim = make_sim(cl, &s, pos, 2);
    run_frames(sim, 1);
    float x[6], v[6];
    ck_assert_int_eq(pbfcl_sim_read(sim, x, v, NULL), PBFCL_OK);
    pbfcl_sim_destroy(sim);
    int a = x[0] < x[3] ? 0 : 3, b = 3 - a; /* a: the left particle */
    *speed = (double)v[b] - v[a];
    *dist = (double)x[b] - x[a];
    fprintf(stderr, "    overlapping pair, contact_slop %.1f: %.4f m/s apart, %.3f r apart\n", slop,
            *speed, *dist / R);
}

/* Contacts update x and x* (seed 001): an overlap the particles already had is removed
 * without a velocity, as far as it is deeper than contact_slop * 2r. With slop 0 the pair
 * ends 2r apart and at rest; with slop 1 (x* alone) it flies apart at the overlap per frame,
 * 0.8r / dt; the default slop 0.2 leaves half of that overlap (0.4r of 0.8r) to x*, so half
 * of that speed. */
static void check_contact_stabilisation(pbfcl_cl *cl)
{
    double v0, d0, v1, d1, vd, dd;
    overlapping_pair(cl, 0.0f, &v0, &d0);
    overlapping_pair(cl, 1.0f, &v1, &d1);
    overlapping_pair(cl, 0.2f, &vd, &dd);
    const double dt = 1.0 / 60.0;
    ck_assert_msg(fabs(v0) < 1e-3, "slop 0: the pair separates at %.4f m/s", v0);
    ck_assert_msg(fabs(d0 - 2 * R) < 1e-3 * R && fabs(d1 - 2 * R) < 1e-3 * R,
                  "the pair ends %.4f r (slop 0), %.4f r (slop 1) apart", d0 / R, d1 / R);
    ck_assert_msg(fabs(v1 - 0.8 * R / dt) < 1e-3 * v1,
                  "slop 1: the pair separates at %.4f m/s, expected %.4f", v1, 0.8 * R / dt);
    ck_assert_msg(fabs(vd - 0.5 * v1) < 1e-3 * v1, "slop 0.2: %.5f m/s, half of %.5f expected", vd,
                  v1);
    ck_assert_msg(dd >= 2 * R * (1 - 1e-4), "slop 0.2: the pair ends %.4f r apart", dd / R);
}

START_TEST(test_contact_stabilisation)
{
    test_each_device(check_contact_stabilisation);
}
END_TEST

/* A fine resolution with the default solver: a 0.6 m column of r = 2.8 mm (107 particles
 * tall, the radius of a 1M-particle dam break), 20 wide and 2 deep, collapses for 40 frames.
 * With a fixed 3 substeps the Jacobi iterations could not hold the column: it compressed
 * (36 % mean density error at 0.3 s), neighbour lists overflowed and it blew up at frame 37
 * (54 m/s). The adaptive substeps must keep it bounded: no NaN, nothing outside, no
 * neighbour list overflow, max speed below the blow-up guard, the XSPH blend per substep
 * scaled down by the extra substeps, and a mean density error <= 2 % in every frame.
 * That last bound sits on a chaotic peak (frames 14-18, when the collapsing front hits the
 * floor): over vorticity 0.0097-0.0104 the largest frame of one run was 1.66-2.03 %, so one
 * run decides by chance (vorticity 0.0099 went over with the solver that held it at 0.01).
 * The bound is on the median of three runs, vorticity 0.0099, 0.01 and 0.0101, frame by
 * frame; every other check holds for each run. Without the adaptive substeps the frames reach
 * 36 %. */
#define FINE_FRAMES 40
#define FINE_RUNS 3

/* One collapse of the fine column with vorticity epsilon; the frames' mean density errors into
 * err (frames of them). */
static void fine_column_run(pbfcl_cl *cl, float vorticity, int frames, double *err)
{
    const float r = 0.0028f;
    int nn[3] = {20, 107, 2};
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.particle_radius = r;
    s.domain_max[0] = 0.4f;
    s.domain_max[1] = 0.8f;
    s.domain_max[2] = nn[2] * 2 * r;
    s.solver.vorticity = vorticity;
    size_t n = (size_t)nn[0] * nn[1] * nn[2], c = 0;
    float *pos = malloc(n * 3 * sizeof *pos);
    for (int k = 0; k < nn[2]; k++)
        for (int j = 0; j < nn[1]; j++)
            for (int i = 0; i < nn[0]; i++) {
                pos[c++] = r + i * 2 * r;
                pos[c++] = r + j * 2 * r;
                pos[c++] = r + k * 2 * r;
            }
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    int most = 0;
    for (int f = 1; f <= frames; f++) {
        run_frames(sim, 1);
        pbfcl_sim_stats st = stats_of(sim);
        err[f - 1] = st.density_error_avg;
        most = st.substeps > most ? st.substeps : most;
        if (f % 10 == 0 || st.nan || st.outside || st.neighbour_overflow ||
            st.density_error_avg > 2.0 || st.max_speed >= s.solver.max_speed) {
            char what[80];
            snprintf(what, sizeof what, "fine column (vorticity %g) %.2f s, %d substeps",
                     (double)vorticity, f / 60.0, st.substeps);
            print_stats(what, &st);
        }
        ck_assert_uint_eq(st.nan, 0);
        ck_assert_uint_eq(st.outside, 0);
        ck_assert_uint_eq(st.neighbour_overflow, 0);
        ck_assert_msg(st.max_speed < s.solver.max_speed, "frame %d: max speed %.3g m/s", f,
                      st.max_speed);
        /* XSPH blends c * scene substeps / substeps per substep: the same per frame */
        double c = (double)s.solver.viscosity * s.solver.substeps / st.substeps;
        ck_assert_msg(fabs(pbfcl_sim_params(sim)->viscosity - c) <= 1e-6 * c,
                      "frame %d: XSPH c %.6g with %d substeps, expected %.6g", f,
                      pbfcl_sim_params(sim)->viscosity, st.substeps, c);
    }
    /* the free-fall speed over 0.6 m needs dt sqrt(2 g H) / (h / 2) = 11 substeps */
    ck_assert_msg(most > s.solver.substeps, "the substeps never adapted (at most %d)", most);
    pbfcl_sim_destroy(sim);
    free(pos);
}

static void check_fine_column(pbfcl_cl *cl)
{
    const float vorticity[FINE_RUNS] = {0.0099f, 0.01f, 0.0101f};
    int frames = test_small() ? 2 : FINE_FRAMES;
    double err[FINE_RUNS][FINE_FRAMES];
    for (int k = 0; k < FINE_RUNS; k++)
        fine_column_run(cl, vorticity[k], frames, err[k]);
    for (int f = 0; f < frames; f++) {
        double a = err[0][f], b = err[1][f], c = err[2][f];
        double median = fmax(fmin(a, b), fmin(fmax(a, b), c));
        ck_assert_msg(median <= 2.0,
                      "frame %d: mean density error %.3f / %.3f / %.3f %%, median > 2 %%", f + 1, a,
                      b, c);
    }
}

START_TEST(test_fine_column)
{
    test_each_device(check_fine_column);
}
END_TEST

static int cfl_warnings;

static void count_cfl_warning(pbfcl_log_level level, const char *message, void *user)
{
    (void)user;
    if (level == PBFCL_LOG_WARNING && strstr(message, "solver.cfl") &&
        strstr(message, "set solver.cfl to 1 or less"))
        cfl_warnings++;
}

/* The warnings about solver.cfl in 30 frames of a 4 x 4 x 4 block falling from 1 m (4.4 m/s
 * at the floor: 1.8 h a frame) with at least `substeps` substeps at cfl. */
static int cfl_warnings_of(pbfcl_cl *cl, int substeps, float cfl)
{
    pbfcl_scene s;
    box_scene(&s, 0.3f, 1.2f, 0.3f);
    s.solver.substeps = substeps;
    s.solver.cfl = cfl;
    int nn[3] = {4, 4, 4};
    size_t n;
    float lo[3] = {0.1f, 1.0f, 0.1f};
    float *pos = block(nn, lo, 1.0f, &n);
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    cfl_warnings = 0;
    pbfcl_set_log(count_cfl_warning, NULL, PBFCL_LOG_WARNING);
    run_frames(sim, 30);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    pbfcl_sim_destroy(sim);
    free(pos);
    return cfl_warnings;
}

/* A cfl above 1 that sets the substeps is warned of once, naming the setting and its limit; cfl
 * 1, or cfl 2 where the least substeps (8) are more than it asks, says nothing. */
static void check_cfl_warning(pbfcl_cl *cl)
{
    ck_assert_int_eq(cfl_warnings_of(cl, 1, 1.5f), 1);
    ck_assert_int_eq(cfl_warnings_of(cl, 1, 1.0f), 0);
    ck_assert_int_eq(cfl_warnings_of(cl, 8, 2.0f), 0);
}

START_TEST(test_cfl_warning)
{
    test_each_device(check_cfl_warning);
}
END_TEST

/* The positions after a dam-break run of `frames` frames. */
static float *run_positions(pbfcl_cl *cl, int frames, size_t *n)
{
    int nn[3] = {10, 16, 8};
    pbfcl_scene s;
    box_scene(&s, 0.6f, 0.5f, nn[2] * 2 * R);
    float lo[3] = {0, 0, 0};
    float *pos = block(nn, lo, 1.0f, n);
    pbfcl_sim *sim = make_sim(cl, &s, pos, *n);
    run_frames(sim, frames);
    ck_assert_int_eq(pbfcl_sim_read(sim, pos, NULL, NULL), PBFCL_OK);
    pbfcl_sim_destroy(sim);
    return pos;
}

/* Two runs of the same input on the same device give bit-identical positions. */
static void check_determinism(pbfcl_cl *cl)
{
    int frames = test_small() ? 3 : 30;
    size_t n1, n2;
    float *a = run_positions(cl, frames, &n1), *b = run_positions(cl, frames, &n2);
    ck_assert_uint_eq(n1, n2);
    size_t differ = 0;
    for (size_t i = 0; i < 3 * n1; i++)
        differ += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    ck_assert_msg(differ == 0, "%zu of %zu coordinates differ between two runs", differ, 3 * n1);
    free(a);
    free(b);
}

START_TEST(test_determinism)
{
    test_each_device(check_determinism);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("physics");
    TCase *tc = tcase_create("physics");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_iterations);
    tcase_add_test(tc, test_settle);
    tcase_add_test(tc, test_contact_stabilisation);
    tcase_add_test(tc, test_dam_break);
    tcase_add_test(tc, test_dam_break_accelerated);
    tcase_add_test(tc, test_momentum);
    tcase_add_test(tc, test_determinism);
    suite_add_tcase(suite, tc);
    /* the longest runs (two columns and the cfl's), three quarters of the suite's time on
     * rusticl: tagged so that the rusticl ctest entry (`tools/validate-kernels --rusticl-quick`)
     * can leave them out */
    TCase *longer = tcase_create("long");
    tcase_set_timeout(longer, 600);
    tcase_set_tags(longer, "long");
    tcase_add_test(longer, test_chebyshev);
    tcase_add_test(longer, test_fine_column);
    tcase_add_test(longer, test_cfl_warning);
    suite_add_tcase(suite, longer);
    return test_run_suite(suite, true);
}
