/* Physics of distance constraints (host/core/pbf/distance.c) against closed forms: an elastic
 * hanging rope stretches as Hooke's law with its compliance says, and its top edge carries the
 * weight below it, at two iteration and substep counts (XPBD: stiffness independent of both);
 * a rigid rope pendulum swings with the pendulum's period; a cloth hung from two corners at
 * the default settings stretches by at most 1 %. */
#include "pbf/distance.h"
#include "pbf/pbf.h"
#include "scene/cloth_cook.h"
#include "scene/scene.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define G 9.81f

/* A simulation of cook c in scene s's box and settings: its pinned particles static, the rest
 * group 0 of relative inverse mass 1. */
static pbfcl_sim *cook_sim_in(pbfcl_cl *cl, pbfcl_cloth_cook *c, const pbfcl_scene *s)
{
    pbfcl_sim *sim = NULL;
    size_t n = c->particles, np = 0, nf = 0;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, s, c->pos, n), PBFCL_OK);
    unsigned *pin = malloc(n * 4), *free_ids = malloc(n * 4), *group = calloc(n, 4);
    float *w = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        if (c->pinned[i])
            pin[np++] = (unsigned)i;
        else {
            w[nf] = 1.0f;
            free_ids[nf++] = (unsigned)i;
        }
    }
    ck_assert_int_eq(pbfcl_sim_set_static(sim, np, pin), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_groups(sim, nf, free_ids, group, w), PBFCL_OK);
    ck_assert_int_eq(
        pbfcl_pbf_set_distances(sim, c->constraints, c->pair, c->rest, c->compliance, c->tether),
        PBFCL_OK);
    free(pin);
    free(free_ids);
    free(group);
    free(w);
    return sim;
}

/* A simulation of cook c in the box [0, 1]^3 with gravity g down, iterations and substeps. */
static pbfcl_sim *cook_sim(pbfcl_cl *cl, pbfcl_cloth_cook *c, float g, int iterations, int substeps)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        s.domain_min[a] = 0.0f;
        s.domain_max[a] = 1.0f;
        s.gravity[a] = a == 1 ? -g : 0.0f;
    }
    s.solver.iterations = iterations;
    s.solver.substeps = substeps;
    return cook_sim_in(cl, c, &s);
}

/* Positions by id. */
static void positions(pbfcl_sim *sim, float *pos)
{
    size_t n = pbfcl_sim_count(sim);
    float *p = malloc(n * 12);
    unsigned *id = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read(sim, p, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        memcpy(pos + 3 * id[i], p + 3 * i, 12);
    free(p);
    free(id);
}

/* A vertical rope of k segments of length L from y0 down, pinned at the top. */
static void rope(int k, float L, float y0, float stretch, pbfcl_cloth_cook *c)
{
    float *pts = malloc(3 * (k + 1) * sizeof *pts);
    for (int i = 0; i <= k; i++) {
        pts[3 * i] = 0.5f;
        pts[3 * i + 1] = y0 - L * i;
        pts[3 * i + 2] = 0.5f;
    }
    ck_assert_int_eq(pbfcl_cook_rope("rope", pts, (size_t)k + 1, stretch, 0.0f, c), PBFCL_OK);
    c->constraints = c->edges; /* stretch only: bends along a straight rope share the load */
    unsigned char *pinned = calloc((size_t)k + 1, 1);
    pinned[0] = 1;
    ck_assert_int_eq(pbfcl_cook_pin(c, pinned, false), PBFCL_OK);
    free(pinned);
    free(pts);
}

/* Segment j (from the top) of a rope of k equal particles of mass m carries (k - j) m g, so
 * the rope at rest under gravity is longer by alpha m g k (k + 1) / 2. Started there, its
 * mean length over 2 s and its top tension are Hooke's within 2 %. */
static void hooke_at(pbfcl_cl *cl, int iterations, int substeps)
{
    const int k = 4;
    const float L = 0.05f, alpha = 0.05f;
    pbfcl_cloth_cook c;
    rope(k, L, 0.8f, alpha, &c);
    pbfcl_sim *sim = cook_sim(cl, &c, G, iterations, substeps);
    double m = pbfcl_sim_params(sim)->mass;
    for (int i = 1; i <= k; i++) { /* start at the equilibrium of Hooke's law */
        double below = 0.0;
        for (int j = 0; j < i; j++)
            below += L + alpha * m * G * (k - j);
        c.pos[3 * i + 1] = 0.8f - (float)below;
    }
    ck_assert_int_eq(pbfcl_sim_write(sim, NULL, NULL), PBFCL_OK);
    float *p = malloc(3 * (k + 1) * sizeof *p);
    unsigned *id = malloc((k + 1) * 4);
    float *ordered = malloc(3 * (k + 1) * sizeof *ordered);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (int i = 0; i <= k; i++)
        memcpy(ordered + 3 * i, c.pos + 3 * id[i], 12);
    ck_assert_int_eq(pbfcl_sim_write(sim, ordered, NULL), PBFCL_OK);
    double mean = 0.0, tension = 0.0;
    const int frames = 120;
    float *force = malloc(c.constraints * sizeof *force);
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        positions(sim, p);
        mean += (p[1] - p[3 * k + 1]) / frames;
        ck_assert_int_eq(pbfcl_pbf_read_distance_forces(sim, force), PBFCL_OK);
        tension += force[0] / frames;
    }
    double want = k * L + alpha * m * G * k * (k + 1) / 2.0, extension = mean - k * L;
    printf("  %d iterations, %d substeps: extension %.5f m (Hooke %.5f), top tension %.5f N "
           "(%.5f)\n",
           iterations, substeps, extension, want - k * L, tension, k * m * G);
    ck_assert_msg(fabs(extension / (want - k * L) - 1.0) < 0.02,
                  "extension %.6f m, Hooke's law says %.6f", extension, want - k * L);
    ck_assert_msg(fabs(tension / (k * m * G) - 1.0) < 0.02, "top tension %.6f N, weight %.6f N",
                  tension, k * m * G);
    pbfcl_sim_destroy(sim);
    pbfcl_cook_free(&c);
    free(p);
    free(id);
    free(ordered);
    free(force);
}

static void hooke(pbfcl_cl *cl)
{
    hooke_at(cl, 4, 3);
    hooke_at(cl, 12, 6);
}

START_TEST(test_rope_hooke)
{
    test_each_device(hooke);
}
END_TEST

/* A rigid rope (one segment of length L, compliance 0) released at angle theta0 swings with
 * period 2 pi sqrt(L / g) (1 + theta0^2 / 16) within 2 %: from the times x crosses the
 * vertical (linear between frames) over two periods. */
static void pendulum(pbfcl_cl *cl)
{
    const float L = 0.2f, theta0 = 0.15f;
    float pts[6] = {0.5f, 0.8f, 0.5f, 0.5f + L * sinf(theta0), 0.8f - L * cosf(theta0), 0.5f};
    pbfcl_cloth_cook c;
    ck_assert_int_eq(pbfcl_cook_rope("pendulum", pts, 2, 0.0f, 0.0f, &c), PBFCL_OK);
    unsigned char pinned[2] = {1, 0};
    ck_assert_int_eq(pbfcl_cook_pin(&c, pinned, false), PBFCL_OK);
    pbfcl_sim *sim = cook_sim(cl, &c, G, 4, 3);
    float p[6], last = pts[3] - 0.5f;
    double crossings[8], dt = pbfcl_sim_scene(sim)->solver.dt;
    int found = 0;
    for (int f = 1; f <= 200 && found < 5; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        positions(sim, p);
        float x = p[3] - 0.5f;
        if ((x < 0.0f) != (last < 0.0f))
            crossings[found++] = dt * (f - 1 + last / (last - x));
        last = x;
    }
    ck_assert_int_ge(found, 5);
    double period = (crossings[4] - crossings[0]) / 2.0;
    double want = 2.0 * 3.14159265358979 * sqrt(L / G) * (1.0 + theta0 * theta0 / 16.0);
    printf("  pendulum period %.4f s, formula %.4f s\n", period, want);
    ck_assert_msg(fabs(period / want - 1.0) < 0.02, "period %.4f s, formula %.4f s", period, want);
    pbfcl_sim_destroy(sim);
    pbfcl_cook_free(&c);
}

START_TEST(test_rope_pendulum)
{
    test_each_device(pendulum);
}
END_TEST

/* The largest stretch over the edges of cook c at positions pos: max of length / rest - 1. */
static double max_edge_stretch(const pbfcl_cloth_cook *c, const float *pos)
{
    double most = 0.0;
    for (size_t e = 0; e < c->edges; e++) {
        const float *a = pos + 3 * c->pair[2 * e], *b = pos + 3 * c->pair[2 * e + 1];
        double d = sqrt(pow(a[0] - b[0], 2) + pow(a[1] - b[1], 2) + pow(a[2] - b[2], 2));
        most = fmax(most, d / c->rest[e] - 1.0);
    }
    return most;
}

/* A scene's default cloth (as a file gives it: only the shape, mass and pins set; so zero
 * stretch compliance and tethers on), 0.4 m square of 21 x 21 particles, 0.2 kg, hanging from
 * its two top corners in the plane x-y, at the solver's default settings (4 iterations, 3
 * substeps): every edge within 1 % of its rest length over the third second (the largest
 * stretch over the edges and those frames). Without tethers it stretched by 250 % (it bounced);
 * with one tether to the nearest corner by 24 % (the two halves pulled apart at the middle);
 * with tethers to both corners averaged with the edges by 2.6 %; 0.45 % now (PoCL). */
static void hang(pbfcl_cl *cl)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    pbfcl_cloth_shape *shape = &s.cloths[s.cloth_count++];
    pbfcl_cloth_shape_defaults(shape, false);
    const float corner[3] = {0.3f, 0.8f, 0.5f}, u[3] = {0.4f, 0.0f, 0.0f}, v[3] = {0, -0.4f, 0};
    memcpy(shape->corner, corner, sizeof corner);
    memcpy(shape->u, u, sizeof u);
    memcpy(shape->v, v, sizeof v);
    shape->res[0] = shape->res[1] = 21;
    shape->mass = 0.2f;
    shape->pin = PBFCL_PIN_CORNER00 | PBFCL_PIN_CORNER10;
    pbfcl_cloth_cook c;
    ck_assert_int_eq(pbfcl_scene_cloth_cook(&s, 0, &c), PBFCL_OK);
    pbfcl_sim *sim = cook_sim(cl, &c, G, s.solver.iterations, s.solver.substeps);
    float *p = malloc(3 * c.particles * sizeof *p);
    double most = 0.0;
    const int frames = 180;
    for (int f = 0; f < frames; f++) {
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        positions(sim, p);
        if (f >= frames - 60)
            most = fmax(most, max_edge_stretch(&c, p));
    }
    printf("  cloth hung from two corners: largest edge stretch %.3f %% (%zu tethers)\n",
           100.0 * most, c.tethers);
    ck_assert_msg(most <= 0.01, "an edge stretched by %.3f %%, more than 1 %%", 100.0 * most);
    pbfcl_sim_destroy(sim);
    pbfcl_cook_free(&c);
    free(p);
}

START_TEST(test_cloth_hanging_stretch)
{
    test_each_device(hang);
}
END_TEST

/* A cloth beyond the 65,536 particles a cloth once held: 300 x 300 (90,000) particles, 2r
 * apart, hanging from its top edge, as a scene gives it. The scene accepts it (and refuses
 * one of 2049 x 2048, beyond PBFCL_CLOTH_MAX_POINTS, naming the key and the fix); the cooker
 * gives a grid's counts (edges (nu - 1) nv + nu (nv - 1) + (nu - 1)(nv - 1), a bend across
 * each interior edge, a tether from each free particle to the one anchor, 2 (nu - 1)(nv - 1)
 * triangles), and two frames keep the top row where it was, every particle finite and every
 * edge within 1 % of its rest length. */
static void large(pbfcl_cl *cl)
{
    const int nu = 300, nv = 300;
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.particle_radius = R;
    const float span = 2.0f * R * (nu - 1), corner[3] = {0.1f, 0.1f + span, 0.2f};
    for (int a = 0; a < 3; a++) {
        s.domain_min[a] = 0.0f;
        s.domain_max[a] = a < 2 ? span + 0.2f : 0.4f;
    }
    pbfcl_cloth_shape *shape = &s.cloths[s.cloth_count++];
    pbfcl_cloth_shape_defaults(shape, false);
    memcpy(shape->corner, corner, sizeof corner);
    shape->u[0] = span;
    shape->v[1] = -span;
    shape->res[0] = 2049;
    shape->res[1] = 2048;
    shape->mass = 90.0f;
    shape->pin = PBFCL_PIN_EDGE_U0;
    test_capture_begin();
    ck_assert(!pbfcl_scene_check_cloths(&s));
    const char *msg = test_capture_end();
    ck_assert_msg(strstr(msg, "cloth[0].resolution 2049 x 2048 is 4196352 particles, beyond the "
                              "4194304 a cloth may have; make it coarser or split it"),
                  "'%s'", msg);
    shape->res[0] = nu;
    shape->res[1] = nv;
    ck_assert(pbfcl_scene_check_cloths(&s));
    pbfcl_cloth_cook c;
    ck_assert_int_eq(pbfcl_scene_cloth_cook(&s, 0, &c), PBFCL_OK);
    size_t n = (size_t)nu * nv,
           edges = (size_t)(nu - 1) * nv + (size_t)nu * (nv - 1) + (size_t)(nu - 1) * (nv - 1);
    ck_assert_uint_eq(c.particles, n);
    ck_assert_uint_eq(c.edges, edges);
    ck_assert_uint_eq(c.bends, edges - 2 * (size_t)(nu - 1) - 2 * (size_t)(nv - 1));
    ck_assert_uint_eq(c.tethers, n - (size_t)nu);
    ck_assert_uint_eq(c.triangles, 2 * (size_t)(nu - 1) * (nv - 1));
    pbfcl_sim *sim = cook_sim_in(cl, &c, &s);
    for (int f = 0; f < 2; f++)
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    float *p = malloc(3 * n * sizeof *p);
    positions(sim, p);
    for (size_t i = 0; i < 3 * n; i++)
        ck_assert_msg(isfinite(p[i]), "particle %zu is not finite", i / 3);
    for (size_t i = 0; i < (size_t)nu; i++)
        for (int a = 0; a < 3; a++)
            ck_assert_float_eq(p[3 * i + a], c.pos[3 * i + a]);
    double most = max_edge_stretch(&c, p);
    printf("  a 300 x 300 cloth: %zu constraints, largest edge stretch %.3f %% after 2 frames\n",
           c.constraints, 100.0 * most);
    ck_assert_msg(most <= 0.01, "an edge stretched by %.3f %%", 100.0 * most);
    pbfcl_sim_destroy(sim);
    pbfcl_cook_free(&c);
    free(p);
}

START_TEST(test_cloth_beyond_the_old_limit)
{
    test_each_device(large);
}
END_TEST

/* Gravity off, no pins: a 12 x 12 cloth (0.22 m, rigid edges) and a rope of 30 particles
 * (0.29 m, compliance 1e-4 m/N, particles twice as heavy) crossing above it, each particle
 * given a random velocity (0.3 m/s about a drift of (0.05, 0.03, -0.04) m/s). The distance
 * constraints move a pair's particles by w_a dlambda and -w_b dlambda along the gradient, so
 * their momentum changes cancel: over 90 frames the total momentum stays within 0.1 % of the
 * start's (a correction applied to one side only, or not weighted by inverse mass, drifts by
 * far more), while the constraints do work (the particles' spread of velocities falls). */
static void momentum(pbfcl_cl *cl)
{
    pbfcl_cloth_cook cloth, line;
    const float o[3] = {0.39f, 0.5f, 0.39f}, u[3] = {0.22f, 0, 0}, v[3] = {0, 0, 0.22f};
    ck_assert_int_eq(pbfcl_cook_grid("cloth", o, u, v, 12, 12, 0.0f, 1e-3f, &cloth), PBFCL_OK);
    float pts[3 * 30];
    for (int i = 0; i < 30; i++) {
        pts[3 * i] = 0.36f + 0.01f * i;
        pts[3 * i + 1] = 0.56f;
        pts[3 * i + 2] = 0.5f;
    }
    ck_assert_int_eq(pbfcl_cook_rope("rope", pts, 30, 1e-4f, 1e-3f, &line), PBFCL_OK);
    size_t nc = cloth.particles, n = nc + line.particles, m = cloth.constraints + line.constraints;
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *w = malloc(n * 4);
    memcpy(pos, cloth.pos, nc * 12);
    memcpy(pos + 3 * nc, line.pos, line.particles * 12);
    unsigned *pair = malloc(m * 8), *ids = malloc(n * 4), *group = malloc(n * 4);
    float *rest = malloc(m * 4), *comp = malloc(m * 4);
    for (size_t k = 0; k < m; k++) {
        const pbfcl_cloth_cook *c = k < cloth.constraints ? &cloth : &line;
        size_t e = k < cloth.constraints ? k : k - cloth.constraints;
        unsigned base = c == &cloth ? 0 : (unsigned)nc;
        pair[2 * k] = base + c->pair[2 * e];
        pair[2 * k + 1] = base + c->pair[2 * e + 1];
        rest[k] = c->rest[e];
        comp[k] = c->compliance[e];
    }
    uint64_t rng = 26;
    const float drift[3] = {0.05f, 0.03f, -0.04f};
    for (size_t i = 0; i < n; i++) {
        ids[i] = (unsigned)i;
        group[i] = i >= nc;
        w[i] = i >= nc ? 0.5f : 1.0f;
        for (int a = 0; a < 3; a++)
            vel[3 * i + a] = drift[a] + test_randf(&rng, -0.3f, 0.3f);
    }
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        s.domain_min[a] = 0.0f;
        s.domain_max[a] = 1.0f;
        s.gravity[a] = 0.0f;
    }
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_groups(sim, n, ids, group, w), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_set_distances(sim, m, pair, rest, comp, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_write(sim, pos, vel), PBFCL_OK); /* no step yet: slots = ids */
    double p0[3] = {0}, worst = 0.0, spread0 = 0.0, spread = 0.0;
    for (int f = 0; f <= 90; f++) {
        if (f > 0)
            ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_read(sim, pos, vel, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_read_ids(sim, ids), PBFCL_OK);
        double p[3] = {0}, vv = 0.0, mass = 0.0;
        for (size_t i = 0; i < n; i++) {
            double mi = 1.0 / w[ids[i]]; /* relative masses: the ratio is what counts */
            mass += mi;
            for (int a = 0; a < 3; a++)
                p[a] += mi * vel[3 * i + a];
        }
        for (size_t i = 0; i < n; i++)
            for (int a = 0; a < 3; a++)
                vv += pow(vel[3 * i + a] - p[a] / mass, 2) / n;
        if (f == 0) {
            memcpy(p0, p, sizeof p);
            spread0 = sqrt(vv);
        }
        spread = sqrt(vv);
        double d = sqrt(pow(p[0] - p0[0], 2) + pow(p[1] - p0[1], 2) + pow(p[2] - p0[2], 2));
        worst = fmax(worst, d / sqrt(p0[0] * p0[0] + p0[1] * p0[1] + p0[2] * p0[2]));
    }
    printf("  cloth and rope, gravity off: momentum within %.4f %% over 90 frames (velocity "
           "spread %.3f -> %.3f m/s)\n",
           100.0 * worst, spread0, spread);
    ck_assert_msg(worst < 1e-3, "the momentum changed by %.4f %%", 100.0 * worst);
    ck_assert_msg(spread < 0.5 * spread0, "the constraints did no work: spread %g -> %g m/s",
                  spread0, spread);
    pbfcl_sim_destroy(sim);
    pbfcl_cook_free(&cloth);
    pbfcl_cook_free(&line);
    free(pos);
    free(vel);
    free(w);
    free(pair);
    free(ids);
    free(group);
    free(rest);
    free(comp);
}

START_TEST(test_cloth_rope_momentum)
{
    test_each_device(momentum);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cloth");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_test(dev, test_rope_hooke);
    tcase_add_test(dev, test_rope_pendulum);
    tcase_add_test(dev, test_cloth_hanging_stretch);
    tcase_add_test(dev, test_cloth_rope_momentum);
    tcase_add_test(dev, test_cloth_beyond_the_old_limit);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
