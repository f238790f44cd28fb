/* Tests of the PBF kernels (cl/pbf/pbf.cl): the SPH kernels Poly6 and Spiky against their
 * integrals and lattice sums, and the lambda, delta, collide and vorticity_viscosity stages
 * (with the walls' density, and the collision shapes' contact planes counted as walls) against
 * a plain C reference on small particle sets; bad configurations fail. */
#include "grid/grid.h"
#include "pbf/pbf.h"
#include "pbf/pbf_colliders.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "sim/solver_method.h"
#include "test_util.h"
#include "wall_ref.h"

#include "../../cl/colliders/colliders.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a phase is a solid's: a body's or a static particle (cl/common/pbfcl_shared.h, no fluid
 * flag). */
static bool solid_phase(unsigned phase)
{
    return (phase & PBFCL_PHASE_FLUID_BIT) == 0u;
}

/* Magnitude factor of the Spiky gradient: grad W(d) = ref_spiky_factor(|d|) * d. */
static double ref_spiky_factor(double r, double h)
{
    return (r < h && r > 0) ? -45.0 / (PI * pow(h, 6)) * (h - r) * (h - r) / r : 0.0;
}

START_TEST(test_poly6_integrates_to_one)
{
    /* Simpson's rule over the ball: integral of 4 pi r^2 W(r) dr from 0 to h. */
    const double h = 0.04;
    const int m = 2000;
    double sum = 0.0, dr = h / m;
    for (int k = 0; k <= m; k++) {
        double r = k * dr, w = (k == 0 || k == m) ? 1 : (k % 2 ? 4 : 2);
        sum += w * 4.0 * PI * r * r * ref_poly6(r, h);
    }
    double integral = sum * dr / 3.0;
    ck_assert_msg(fabs(integral - 1.0) < 1e-3, "Poly6 integrates to %.6f, not 1", integral);

    /* The same as a lattice sum at spacing h / 16. */
    double s = h / 16.0, lattice = 0.0;
    for (int i = -16; i <= 16; i++)
        for (int j = -16; j <= 16; j++)
            for (int k = -16; k <= 16; k++)
                lattice += s * s * s * ref_poly6(s * sqrt(i * i + j * j + k * k), h);
    ck_assert_msg(fabs(lattice - 1.0) < 1e-3, "Poly6 lattice sum %.6f, not 1", lattice);
}
END_TEST

START_TEST(test_spiky_gradient_sums_to_zero)
{
    const double r = 0.01, h = 4 * r, s = 2 * r;
    double g[3] = {0, 0, 0}, mag = 0.0;
    for (int i = -2; i <= 2; i++)
        for (int j = -2; j <= 2; j++)
            for (int k = -2; k <= 2; k++) {
                double d[3] = {-i * s, -j * s, -k * s};
                double f = ref_spiky_factor(s * sqrt(i * i + j * j + k * k), h);
                for (int a = 0; a < 3; a++) {
                    g[a] += f * d[a];
                    mag += fabs(f * d[a]);
                }
            }
    ck_assert(mag > 0.0);
    for (int a = 0; a < 3; a++)
        ck_assert_msg(fabs(g[a]) < 1e-9 * mag, "Spiky gradient sum[%d] = %g (scale %g)", a, g[a],
                      mag);
}
END_TEST

/* The solver's constants from the scene's values and the closed forms of the paper (Macklin
 * & Mueller 2013; Mueller et al. 2003 for Poly6 and Spiky), written here independently of
 * pbfcl_pbf_params_from_scene, so that a wrong epsilon, mass or s_corr constant in the product
 * makes the references disagree with the kernels. */
static void ref_params(const pbfcl_scene *s, pbfcl_pbf_params *p)
{
    const pbfcl_solver_settings *v = &s->solver;
    double r = s->particle_radius, h = v->h_ratio * r, rho0 = s->rest_density;
    double spacing = 2.0 * r, dq = v->scorr_dq * h;
    double lattice =
        ref_lattice_density(r, h); /* Poly6's sum on the rest lattice at m = rho0 (2r)^3 */
    memset(p, 0, sizeof *p);
    for (int a = 0; a < 3; a++) {
        p->box_min[a] = s->domain_min[a];
        p->box_max[a] = s->domain_max[a];
    }
    p->dt = (float)(v->dt / v->substeps);
    p->inv_dt = (float)(v->substeps / v->dt);
    p->h = (float)h;
    p->h2 = (float)(h * h);
    p->rest_density = (float)rho0;
    p->inv_rest_density = (float)(1.0 / rho0);
    p->mass = (float)(rho0 * pow(spacing, 3) / lattice); /* the rest lattice at rho0 */
    p->volume = (float)(pow(spacing, 3) / lattice);      /* m / rho0 */
    p->poly6 = (float)(315.0 / (64.0 * PI * pow(h, 9))); /* Poly6's normalisation */
    p->spiky_grad = (float)(-45.0 / (PI * pow(h, 6)));   /* Spiky's gradient */
    p->self_density = (float)(rho0 * pow(spacing, 3) / lattice * ref_poly6(0.0, h));
    p->epsilon = (float)(v->relaxation / (h * h)); /* relaxation in units of h^2 */
    p->scorr_k = (float)(v->scorr_k * h * h);      /* k in units of h^2 */
    p->scorr_inv_wdq = (float)(1.0 / ref_poly6(dq, h));
    p->scorr_n = (pbfcl_uint)v->scorr_n;
    p->radius = (float)r;
    p->min_dist = (float)spacing;
    p->vorticity = v->vorticity;
    p->viscosity = v->viscosity;
    p->contact_slop = v->contact_slop;
    p->friction_static = v->friction_static;
    p->friction_dynamic = v->friction_dynamic;
}

/* The reference constants of the scene a simulation was created with. */
static const pbfcl_pbf_params *ref_params_of(pbfcl_sim *sim)
{
    static pbfcl_pbf_params p;
    ref_params(pbfcl_sim_scene(sim), &p);
    return &p;
}

/* A scene for kernel tests: a 1 m box, r = 1 cm, no gravity. */
static void kernel_scene(pbfcl_scene *s)
{
    pbfcl_scene_defaults(s);
    s->solver.multilevel = 0; /* the coarse correction: test_multilevel */
    s->gravity[1] = 0.0f;
}

/* The product's derived constants (pbfcl_pbf_params_from_scene) equal the closed forms, for
 * the defaults and for a scene with every input changed; no device needed. */
START_TEST(test_derived_constants)
{
    pbfcl_scene scenes[2];
    kernel_scene(&scenes[0]);
    kernel_scene(&scenes[1]);
    pbfcl_scene *s = &scenes[1];
    s->particle_radius = 0.004f;
    s->rest_density = 800.0f;
    s->solver.dt = 0.01f;
    s->solver.substeps = 5;
    s->solver.h_ratio = 3.5f;
    s->solver.relaxation = 0.3f;
    s->solver.scorr_k = 0.02f;
    s->solver.scorr_n = 3.0f;
    s->solver.scorr_dq = 0.3f;
    s->solver.contact_slop = 0.1f;
    s->solver.friction_static = 0.7f;
    s->solver.friction_dynamic = 0.4f;
    s->solver.vorticity = 0.2f;
    s->solver.viscosity = 0.02f;
    for (int k = 0; k < 2; k++) {
        pbfcl_pbf_params got, want;
        ck_assert_int_eq(pbfcl_pbf_params_from_scene(&scenes[k], &got), PBFCL_OK);
        ref_params(&scenes[k], &want);
        const float *g = (const float *)&got, *w = (const float *)&want;
        static const char *const names[] = {"box_min[0]",
                                            "box_min[1]",
                                            "box_min[2]",
                                            "box_min[3]",
                                            "box_max[0]",
                                            "box_max[1]",
                                            "box_max[2]",
                                            "box_max[3]",
                                            "dt",
                                            "inv_dt",
                                            "h",
                                            "h2",
                                            "mass",
                                            "rest_density",
                                            "inv_rest_density",
                                            "volume",
                                            "poly6",
                                            "spiky_grad",
                                            "self_density",
                                            "epsilon",
                                            "scorr_k",
                                            "scorr_inv_wdq",
                                            "scorr_n",
                                            "radius",
                                            "min_dist",
                                            "vorticity",
                                            "viscosity",
                                            "contact_slop",
                                            "friction_static",
                                            "friction_dynamic"};
        for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
            double a = f == 22 ? (double)got.scorr_n : g[f],
                   b = f == 22 ? (double)want.scorr_n : w[f];
            ck_assert_msg(test_close(a, b, 1e-30, 2e-6),
                          "scene %d: %s is %.9g, the closed form "
                          "gives %.9g",
                          k, names[f], a, b);
        }
    }
}
END_TEST

/* A lattice of nx^3 particles of spacing `spacing` starting at lo, jittered by +-jitter. */
static float *lattice(int nx, float lo, float spacing, float jitter, uint64_t seed)
{
    float *p = malloc((size_t)nx * nx * nx * 3 * sizeof *p);
    uint64_t st = seed;
    size_t c = 0;
    for (int k = 0; k < nx; k++)
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < nx; i++) {
                int idx[3] = {i, j, k};
                for (int a = 0; a < 3; a++)
                    p[c++] = lo + idx[a] * spacing + test_randf(&st, -jitter, jitter);
            }
    return p;
}

/* The solver state after predict + neighbours on the device, read back. */
typedef struct kstate {
    size_t n;
    unsigned maxnb;
    float *x, *lambda, *delta;
    unsigned *count, *nbr;
} kstate;

static void kstate_read(pbfcl_sim *sim, kstate *k)
{
    k->n = pbfcl_sim_count(sim);
    k->maxnb = pbfcl_sim_max_neighbors(sim);
    k->x = malloc(k->n * 3 * sizeof(float));
    k->lambda = malloc(k->n * sizeof(float));
    k->delta = malloc(k->n * 3 * sizeof(float));
    k->count = malloc(k->n * sizeof(unsigned));
    k->nbr = malloc(k->n * k->maxnb * sizeof(unsigned));
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, k->x, k->lambda, k->delta, k->count, k->nbr),
                     PBFCL_OK);
}

static void kstate_free(kstate *k)
{
    free(k->x);
    free(k->lambda);
    free(k->delta);
    free(k->count);
    free(k->nbr);
}

static double dist3(const float *a, const float *b, double d[3])
{
    double r2 = 0;
    for (int c = 0; c < 3; c++) {
        d[c] = (double)a[c] - b[c];
        r2 += d[c] * d[c];
    }
    return sqrt(r2);
}

/* Reference density and lambda of particle i by brute force over all particles, with the
 * walls' density and gradient. */
static void ref_lambda(const kstate *k, const pbfcl_pbf_params *p, size_t i, double *rho,
                       double *lambda, unsigned *nbrs)
{
    double grad_i[3] = {0, 0, 0}, sum2 = 0;
    *rho = p->mass * ref_poly6(0, p->h);
    *nbrs = 0;
    for (size_t j = 0; j < k->n; j++) {
        double d[3], r = dist3(k->x + 3 * i, k->x + 3 * j, d);
        if (j == i || r >= p->h)
            continue;
        (*nbrs)++;
        *rho += p->mass * ref_poly6(r, p->h);
        double f = p->volume * ref_spiky_factor(r, p->h), g2 = 0;
        for (int c = 0; c < 3; c++) {
            grad_i[c] += f * d[c];
            g2 += f * d[c] * f * d[c];
        }
        sum2 += g2;
    }
    double gw[3];
    *rho += p->rest_density * ref_wall(p, k->x + 3 * i, gw);
    for (int c = 0; c < 3; c++)
        grad_i[c] += gw[c];
    sum2 += grad_i[0] * grad_i[0] + grad_i[1] * grad_i[1] + grad_i[2] * grad_i[2];
    double c = fmax(*rho / p->rest_density - 1.0, 0.0);
    *lambda = -c / (sum2 + p->epsilon);
}

/* The per-iteration correction limit of cl/pbf/pbf.cl, in units of r. */
#define PBF_MAX_CORRECTION 0.5

/* Scales v to length at most max_len (pbf_limit in cl/pbf/pbf.cl). */
static int ref_limited; /* how many ref_limit calls shortened their vector */

static void ref_limit(double v[3], double max_len)
{
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    ref_limited += len > max_len;
    if (len > max_len)
        for (int c = 0; c < 3; c++)
            v[c] *= max_len / len;
}

/* Set: ref_delta_limited sums over i's neighbour list, as the kernel does, instead of every
 * particle within h. The lists are built at the substep's first x*, so after an iteration some
 * pairs within h are not in them and some listed ones are no longer within h. */
static int ref_listed;

/* Reference delta of particle i from the device's lambdas, limited as the kernel does. */
static void ref_delta_limited(const kstate *k, const pbfcl_pbf_params *p, size_t i, double out[3])
{
    double wdq = ref_poly6(p->h * 0.2, p->h);
    out[0] = out[1] = out[2] = 0;
    size_t count = ref_listed ? k->count[i] : k->n;
    for (size_t m = 0; m < count; m++) {
        size_t j = ref_listed ? k->nbr[m * k->n + i] : m;
        double d[3], r = dist3(k->x + 3 * i, k->x + 3 * j, d);
        if (j == i || r >= p->h)
            continue;
        double s = -p->scorr_k * pow(ref_poly6(r, p->h) / wdq, p->scorr_n);
        double f = (k->lambda[i] + k->lambda[j] + s) * ref_spiky_factor(r, p->h) * p->volume;
        for (int c = 0; c < 3; c++)
            out[c] += f * d[c];
    }
    double gw[3];
    ref_wall(p, k->x + 3 * i, gw);
    for (int c = 0; c < 3; c++)
        out[c] += k->lambda[i] * gw[c];
    ref_limit(out, PBF_MAX_CORRECTION * p->radius);
}

/* ref_delta_limited, cut where x* + delta would leave the walls (the kernel writes x* + delta
 * inside them). */
static void ref_delta(const kstate *k, const pbfcl_pbf_params *p, size_t i, double out[3])
{
    ref_delta_limited(k, p, i, out);
    for (int c = 0; c < 3; c++) {
        double x = k->x[3 * i + c], lo = p->box_min[c] + p->radius, hi = p->box_max[c] - p->radius;
        out[c] = fmin(fmax(x + out[c], lo), hi) - x;
    }
}

static pbfcl_sim *make_sim(pbfcl_cl *cl, const pbfcl_scene *s, const float *pos, size_t n)
{
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, s, pos, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    return sim;
}

/* The centre particle of a 9^3 lattice (a full h-ball of neighbours) of the given spacing from
 * 0.3 m: its density against the lattice sum and its neighbours; with symmetric, as its
 * neighbours' lambdas equal its own, the Spiky gradients of its delta cancel to a small part of
 * their sum. Returns its density / rho0 and its lambda. */
static void centre_of_lattice(pbfcl_cl *cl, float spacing, bool symmetric, double *rho_rel,
                              double *lambda)
{
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = 9;
    float *pos = lattice(nx, 0.3f, spacing, 0.0f, 1);
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    float *rho = malloc(n * sizeof *rho);
    kstate k;
    kstate_read(sim, &k);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, NULL, rho), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    const float c = 0.3f + 4 * spacing, centre[3] = {c, c, c};
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        double d[3];
        if (dist3(k.x + 3 * i, centre, d) > 1e-5)
            continue;
        found = 1;
        double ref_rho, ref_l;
        unsigned nb;
        ref_lambda(&k, p, i, &ref_rho, &ref_l, &nb);
        ck_assert_msg(test_close(rho[i], ref_rho, 1e-3, 1e-5), "density %g, lattice sum %g", rho[i],
                      ref_rho);
        *rho_rel = rho[i] / p->rest_density;
        *lambda = k.lambda[i];
        /* 26 within h, plus any of the 6 at exactly h that rounding brings inside */
        ck_assert_msg(k.count[i] >= 26 && k.count[i] <= 32, "%u neighbours", k.count[i]);
        double scale = 0;
        for (size_t j = 0; symmetric && j < n; j++) {
            double r = dist3(k.x + 3 * i, k.x + 3 * j, d);
            scale += p->volume * fabs((k.lambda[i] + k.lambda[j]) * ref_spiky_factor(r, p->h)) * r;
        }
        for (int a = 0; symmetric && a < 3; a++)
            ck_assert_msg(fabs(k.delta[3 * i + a]) < 1e-3 * scale,
                          "delta of a symmetric lattice %g (terms sum to %g)", k.delta[3 * i + a],
                          scale);
    }
    ck_assert_msg(found, "centre particle not found");
    kstate_free(&k);
    free(rho);
    free(pos);
    pbfcl_sim_destroy(sim);
}

/* The rest lattice (spacing 2r) is at the rest density (the mass is calibrated on it) and its
 * lambda vanishes (its delta, the tensile term's alone, is float noise); a lattice compressed to
 * spacing 1.9r has equal, negative lambdas, whose gradients cancel. */
static void check_lattice_density(pbfcl_cl *cl)
{
    double rho_rel, lambda;
    centre_of_lattice(cl, 0.02f, false, &rho_rel, &lambda);
    ck_assert_msg(fabs(rho_rel - 1.0) < 1e-4, "rest lattice density %.6f rho0, not rho0", rho_rel);
    ck_assert_msg(fabs(lambda) < 1e-6, "lambda of the rest lattice %g, not 0", lambda);
    centre_of_lattice(cl, 0.019f, true, &rho_rel, &lambda);
    ck_assert_msg(rho_rel > 1.1 && lambda < 0.0, "compressed lattice: density %.4f rho0, lambda %g",
                  rho_rel, lambda);
}

START_TEST(test_lattice_density)
{
    test_each_device(check_lattice_density);
}
END_TEST

static double max_abs(const float *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return m;
}

/* lambda and delta of a compressed, jittered lattice (n = 7^3, not a work-group multiple)
 * against the brute-force reference, with the tensile exponent n = scorr_n (the kernel
 * unrolls the default 4 and loops for the others). */
static void check_lambda_delta_n(pbfcl_cl *cl, float scorr_n)
{
    pbfcl_scene s;
    kernel_scene(&s);
    s.solver.scorr_n = scorr_n;
    s.solver.scorr_k = 0.01f; /* a tensile term that shows against the lambdas */
    const int nx = test_small() ? 5 : 7;
    float *pos = lattice(nx, 0.4f, 0.019f, 0.002f, 7);
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    kstate k;
    kstate_read(sim, &k);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    double lscale = max_abs(k.lambda, n), dscale = max_abs(k.delta, 3 * n);
    ck_assert_msg(lscale > 0 && dscale > 0, "a compressed lattice must give lambda and delta");
    ref_limited = 0;
    for (size_t i = 0; i < n; i++) {
        double rho, lambda, dref[3];
        unsigned nb;
        ref_lambda(&k, p, i, &rho, &lambda, &nb);
        ck_assert_uint_eq(k.count[i], nb);
        ck_assert_msg(test_close(k.lambda[i], lambda, 1e-4 * lscale, 1e-3),
                      "lambda[%zu] = %g, reference %g", i, k.lambda[i], lambda);
        ref_delta(&k, p, i, dref);
        for (int c = 0; c < 3; c++)
            ck_assert_msg(test_close(k.delta[3 * i + c], dref[c], 1e-4 * dscale, 1e-3),
                          "delta[%zu][%d] = %g, reference %g", i, c, k.delta[3 * i + c], dref[c]);
    }
    /* the jittered, 5 % compressed lattice has corrections on both sides of the limit */
    fprintf(stderr, "    lambda/delta: %d of %zu corrections limited to %.1f r\n", ref_limited, n,
            PBF_MAX_CORRECTION);
    ck_assert_msg(ref_limited < (int)n, "every correction was limited");
    kstate_free(&k);
    free(pos);
    pbfcl_sim_destroy(sim);
}

static void check_lambda_delta(pbfcl_cl *cl)
{
    check_lambda_delta_n(cl, 4.0f);
    if (test_small()) { /* Oclgrind: see docs/ALGORITHM.md, "Oclgrind and reused buffers" */
        fprintf(stderr, "    lambda/delta with n = 3 is not run under Oclgrind: a second "
                        "simulation here inherits the first one's records of initialised bytes "
                        "and gets false reports; it runs on every real device\n");
        return;
    }
    check_lambda_delta_n(cl, 3.0f);
}

START_TEST(test_lambda_delta_reference)
{
    test_each_device(check_lambda_delta);
}
END_TEST

/* The index of the lattice particle nearest to (x, y, z). */
static size_t nearest(const kstate *k, float x, float y, float z)
{
    const float q[3] = {x, y, z};
    size_t best = 0;
    double bd = 1e30, d[3];
    for (size_t i = 0; i < k->n; i++) {
        double r = dist3(k->x + 3 * i, q, d);
        if (r < bd)
            bd = r, best = i;
    }
    return best;
}

/* The walls' density: the rest lattice (spacing 2r) in a corner of the box, touching three
 * walls, has the interior's density at the middle of a wall face (the calibration) and within
 * 2 % of it along the edges and at the corner (the union of the walls' half-spaces is exact
 * only for a separable kernel); then lambda and delta of a compressed, jittered lattice in
 * the corner against the reference with the walls' density by quadrature. */
static void check_walls(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = 9;
    const float r = s.particle_radius, sp = 2 * r;
    float *pos = lattice(nx, r, sp, 0.0f, 1);
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    float *rho = malloc(n * sizeof *rho);
    kstate k;
    kstate_read(sim, &k);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, NULL, rho), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    const float mid = r + 4 * sp;
    double inner = rho[nearest(&k, mid, mid, mid)];
    double face = rho[nearest(&k, mid, r, mid)], edge = rho[nearest(&k, mid, r, r)];
    double corner = rho[nearest(&k, r, r, r)];
    fprintf(stderr,
            "    walls: rest lattice density / rho0 inside %.4f, wall face %.4f, edge %.4f, "
            "corner %.4f (scale %.4f)\n",
            inner / p->rest_density, face / p->rest_density, edge / p->rest_density,
            corner / p->rest_density, pbfcl_pbf_wall_scale(p));
    ck_assert_msg(test_close(face, inner, 0, 1e-3), "wall face %g, inside %g", face, inner);
    ck_assert_msg(test_close(edge, inner, 0, 0.02), "edge %g, inside %g", edge, inner);
    ck_assert_msg(test_close(corner, inner, 0, 0.02), "corner %g, inside %g", corner, inner);
    kstate_free(&k);
    free(pos);
    pbfcl_sim_destroy(sim);

    const int nj = test_small() ? 4 : 6;
    pos = lattice(nj, r, 0.019f, 0.002f, 11);
    n = (size_t)nj * nj * nj;
    sim = make_sim(cl, &s, pos, n);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    kstate_read(sim, &k);
    p = ref_params_of(sim);
    double lscale = max_abs(k.lambda, n), dscale = max_abs(k.delta, 3 * n);
    ck_assert_msg(lscale > 0 && dscale > 0, "a compressed lattice must give lambda and delta");
    for (size_t i = 0; i < n; i++) {
        double rr, lambda, dref[3];
        unsigned nb;
        ref_lambda(&k, p, i, &rr, &lambda, &nb);
        ck_assert_msg(test_close(k.lambda[i], lambda, 1e-4 * lscale, 1e-3),
                      "lambda[%zu] = %g, reference %g", i, k.lambda[i], lambda);
        ref_delta(&k, p, i, dref);
        for (int c = 0; c < 3; c++)
            ck_assert_msg(test_close(k.delta[3 * i + c], dref[c], 1e-4 * dscale, 1e-3),
                          "delta[%zu][%d] = %g, reference %g", i, c, k.delta[3 * i + c], dref[c]);
    }
    kstate_free(&k);
    free(rho);
    free(pos);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_walls)
{
    test_each_device(check_walls);
}
END_TEST

/* ---- the collision shapes in the density (cl/pbf/pbf.cl, pbf_shape_factor) ---------------- */

/* The planes and shapes of the last narrow phase (PBFCL_COLLIDER_CONTACTS per particle). */
typedef struct shape_planes {
    float *plane;
    int *shape;
} shape_planes;

/* The boundary density of x (units of rho0): the walls' (ref_wall) and particle i's contact
 * planes, each the half-space beyond the plane through its shape's surface (less the margin,
 * plane.w holds -r - margin) by quadrature (ref_wall_phi), combined as 1 - (1 - walls) prod_k
 * (1 - phi_k), the nearer of two planes of one shape within 60 degrees of each other only. */
static double ref_shape_boundary(const pbfcl_pbf_params *p, const shape_planes *sp, size_t i,
                                 const double x[3])
{
    const int kc = PBFCL_COLLIDER_CONTACTS;
    double scale = pbfcl_pbf_wall_scale(p), phi[PBFCL_COLLIDER_CONTACTS];
    double f_walls = 1.0; /* the walls' part (ref_wall's, of x in double) */
    for (int a = 0; a < 3; a++)
        f_walls *= 1.0 - ref_wall_phi(x[a] - p->box_min[a], p->h, scale) -
                   ref_wall_phi(p->box_max[a] - x[a], p->h, scale);
    for (int k = 0; k < kc; k++) {
        const float *pl = sp->plane + 4 * (kc * i + k);
        double d = pl[0] * x[0] + pl[1] * x[1] + pl[2] * x[2] + pl[3] + p->radius;
        phi[k] = sp->shape[kc * i + k] < 0 ? 0.0 : ref_wall_phi(fmax(d, 0.0), p->h, scale);
    }
    double f = 1.0;
    for (int k = 0; k < kc; k++) {
        bool kept = phi[k] > 0.0;
        for (int j = 0; j < kc && kept; j++) {
            const float *a = sp->plane + 4 * (kc * i + j), *b = sp->plane + 4 * (kc * i + k);
            if (j != k && sp->shape[kc * i + j] == sp->shape[kc * i + k] &&
                a[0] * b[0] + a[1] * b[1] + a[2] * b[2] > 0.5 &&
                (phi[j] > phi[k] || (phi[j] == phi[k] && j < k)))
                kept = false;
        }
        if (kept)
            f *= 1.0 - phi[k];
    }
    return 1.0 - f_walls * f;
}

/* ref_shape_boundary of particle i and its gradient by central differences. */
static double ref_shape_wall(const pbfcl_pbf_params *p, const shape_planes *sp, size_t i,
                             const float *xf, double grad[3])
{
    double x[3] = {xf[0], xf[1], xf[2]}, e = 1e-6;
    for (int a = 0; a < 3; a++) {
        double hi[3] = {x[0], x[1], x[2]}, lo[3] = {x[0], x[1], x[2]};
        hi[a] += e;
        lo[a] -= e;
        grad[a] = (ref_shape_boundary(p, sp, i, hi) - ref_shape_boundary(p, sp, i, lo)) / (2 * e);
    }
    return ref_shape_boundary(p, sp, i, x);
}

/* ref_lambda and ref_delta_limited (cut at the walls) with the shapes' planes in the
 * boundary. */
static void ref_lambda_shapes(const kstate *k, const pbfcl_pbf_params *p, const shape_planes *sp,
                              size_t i, double *rho, double *lambda)
{
    double grad_i[3] = {0, 0, 0}, sum2 = 0;
    *rho = p->mass * ref_poly6(0, p->h);
    for (size_t j = 0; j < k->n; j++) {
        double d[3], r = dist3(k->x + 3 * i, k->x + 3 * j, d);
        if (j == i || r >= p->h)
            continue;
        *rho += p->mass * ref_poly6(r, p->h);
        double f = p->volume * ref_spiky_factor(r, p->h);
        for (int c = 0; c < 3; c++) {
            grad_i[c] += f * d[c];
            sum2 += f * d[c] * f * d[c];
        }
    }
    double gw[3];
    *rho += p->rest_density * ref_shape_wall(p, sp, i, k->x + 3 * i, gw);
    for (int c = 0; c < 3; c++)
        grad_i[c] += gw[c];
    sum2 += grad_i[0] * grad_i[0] + grad_i[1] * grad_i[1] + grad_i[2] * grad_i[2];
    *lambda = -fmax(*rho / p->rest_density - 1.0, 0.0) / (sum2 + p->epsilon);
}

static void ref_delta_shapes(const kstate *k, const pbfcl_pbf_params *p, const shape_planes *sp,
                             size_t i, double out[3])
{
    double wdq = ref_poly6(p->h * 0.2, p->h);
    out[0] = out[1] = out[2] = 0;
    for (size_t j = 0; j < k->n; j++) {
        double d[3], r = dist3(k->x + 3 * i, k->x + 3 * j, d);
        if (j == i || r >= p->h)
            continue;
        double s = -p->scorr_k * pow(ref_poly6(r, p->h) / wdq, p->scorr_n);
        double f = (k->lambda[i] + k->lambda[j] + s) * ref_spiky_factor(r, p->h) * p->volume;
        for (int c = 0; c < 3; c++)
            out[c] += f * d[c];
    }
    double gw[3];
    ref_shape_wall(p, sp, i, k->x + 3 * i, gw);
    for (int c = 0; c < 3; c++)
        out[c] += k->lambda[i] * gw[c];
    ref_limit(out, PBF_MAX_CORRECTION * p->radius);
    for (int c = 0; c < 3; c++) {
        double x = k->x[3 * i + c], lo = p->box_min[c] + p->radius, hi = p->box_max[c] - p->radius;
        out[c] = fmin(fmax(x + out[c], lo), hi) - x;
    }
}

/* The floor y < 0.3 and the wall x < 0.3 as box shapes (of margin `margin`) in the 1 m box, and
 * each particle's contact planes written as a narrow phase would find them, computed here: the
 * floor's (shape 0) and the wall's (shape 1) where the particle is within h of them (less the
 * margin), and (tilted) a third plane of the floor's shape tilted by 30 degrees, farther than the
 * floor's plane for even particles (it does not count) and nearer for odd ones (the floor's does
 * not): the one-surface rule. */
#define SHAPE_FACE 0.3f
static void shape_corner(pbfcl_sim *sim, float margin, bool tilted)
{
    pbfcl_shape_desc floor_box = {.type = PBFCL_SHAPE_KIND_BOX,
                                  .position = {0.5f, SHAPE_FACE - 0.1f, 0.5f},
                                  .half_extents = {0.4f, 0.1f, 0.4f},
                                  .margin = margin};
    pbfcl_shape_desc wall_box = floor_box;
    wall_box.position[0] = SHAPE_FACE - 0.1f;
    wall_box.position[1] = 0.5f;
    wall_box.half_extents[0] = 0.1f;
    wall_box.half_extents[1] = 0.4f;
    int id;
    ck_assert_int_eq(pbfcl_colliders_add(pbfcl_pbf_colliders(sim), &floor_box, &id), PBFCL_OK);
    ck_assert_int_eq(pbfcl_colliders_add(pbfcl_pbf_colliders(sim), &wall_box, &id), PBFCL_OK);
    kstate k;
    kstate_read(sim, &k);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    const int kc = PBFCL_COLLIDER_CONTACTS;
    float *planes = calloc(k.n * kc * 4 + 4, sizeof *planes);
    int *shapes = malloc(k.n * kc * sizeof *shapes + sizeof *shapes);
    const float tilt[3] = {0.5f, 0.8660254f, 0.0f};
    for (size_t i = 0; i < k.n; i++) {
        const float *x = k.x + 3 * i;
        float *pl = planes + 4 * kc * i;
        int *sh = shapes + kc * i, m = 0;
        for (int j = 0; j < kc; j++)
            sh[j] = -1;
        float d_floor = x[1] - SHAPE_FACE - margin, d_wall = x[0] - SHAPE_FACE - margin;
        if (d_floor < p->h) { /* n (0, 1, 0), w = -0.3 - r - margin */
            pl[4 * m + 1] = 1.0f;
            pl[4 * m + 3] = -SHAPE_FACE - p->radius - margin;
            sh[m++] = 0;
        }
        if (d_floor < p->h && tilted) {
            float d = d_floor + (i % 2 ? -0.2f : 0.3f) * p->radius; /* its distance, >= 0 */
            d = d > 0.0f ? d : 0.0f;
            for (int c = 0; c < 3; c++)
                pl[4 * m + c] = tilt[c];
            pl[4 * m + 3] = d - p->radius - (tilt[0] * x[0] + tilt[1] * x[1]);
            sh[m++] = 0;
        }
        if (d_wall < p->h) {
            pl[4 * m] = 1.0f;
            pl[4 * m + 3] = -SHAPE_FACE - p->radius - margin;
            sh[m++] = 1;
        }
    }
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    pbfcl_build_config cfg;
    pbfcl_sim_kernel_config(&v.cl->dev, &cfg);
    pbfcl_colliders_run r = {v.cl, &cfg, v.params_buf, v.n, v.capacity, v.wg, v.params->dt};
    ck_assert_int_eq(
        pbfcl_colliders_write_contacts(pbfcl_pbf_colliders(sim), &r, k.n, planes, shapes),
        PBFCL_OK);
    free(planes);
    free(shapes);
    kstate_free(&k);
}

static shape_planes shape_planes_read(pbfcl_sim *sim, size_t n)
{
    shape_planes sp = {malloc(n * PBFCL_COLLIDER_CONTACTS * 16 + 16),
                       malloc(n * PBFCL_COLLIDER_CONTACTS * 4 + 4)};
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    ck_assert_int_eq(
        pbfcl_colliders_read_contacts(pbfcl_pbf_colliders(sim), v.cl, n, sp.plane, sp.shape),
        PBFCL_OK);
    return sp;
}

/* The shapes as walls, their contact planes given (shape_corner): shape_calibration, then lambda
 * and delta of compressed, jittered lattices in the corner of two box shapes (n = 1, and 4^3 or 6^3
 * less one: not work-group multiples; the shapes with no margin and with a margin of r / 2) against
 * the reference with the planes' half-spaces by quadrature. */
/* The rest lattice (spacing 2r) against a box shape's face has the interior's density, as
 * against a wall of the box (the same calibration), and within 2 % of it in the inner corner
 * of two box shapes. */
static void shape_calibration(pbfcl_cl *cl, const pbfcl_scene *sc)
{
    pbfcl_scene s = *sc;
    const int nx = 9;
    const float r = s.particle_radius, sp2 = 2 * r, lo = SHAPE_FACE + r;
    float *pos = lattice(nx, lo, sp2, 0.0f, 1);
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    shape_corner(sim, 0.0f, false);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    float *rho = malloc(n * sizeof *rho);
    kstate k;
    kstate_read(sim, &k);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, NULL, rho), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    const float mid = lo + 4 * sp2;
    double inner = rho[nearest(&k, mid, mid, mid)];
    double face = rho[nearest(&k, mid, lo, mid)], edge = rho[nearest(&k, lo, lo, mid)];
    fprintf(stderr,
            "    shapes as walls: rest lattice density / rho0 inside %.4f, shape face %.4f, "
            "corner of two shapes %.4f\n",
            inner / p->rest_density, face / p->rest_density, edge / p->rest_density);
    ck_assert_msg(test_close(face, inner, 0, 1e-3), "shape face %g, inside %g", face, inner);
    ck_assert_msg(test_close(edge, inner, 0, 0.02), "corner %g, inside %g", edge, inner);
    kstate_free(&k);
    free(rho);
    free(pos);
    pbfcl_sim_destroy(sim);
}

static void check_shape_walls(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    const float r = s.particle_radius, lo = SHAPE_FACE + r;
    float *pos, *rho;
    size_t n;
    pbfcl_sim *sim;
    kstate k;
    const pbfcl_pbf_params *p;
    if (test_small()) /* Oclgrind: see check_lambda_delta */
        fprintf(stderr, "    shapes as walls: under Oclgrind only the jittered lattice with a "
                        "margin (a second simulation here gets false reports)\n");
    else
        shape_calibration(cl, &s);
    const int nj = test_small() ? 4 : 6;
    for (int m = test_small() ? 1 : 0; m < 2; m++)
        for (int one = 0; one < (test_small() ? 1 : 2); one++) {
            float margin = m ? 0.5f * r : 0.0f;
            pos = lattice(nj, lo + margin, 0.019f, 0.002f, 11);
            n = one ? 1 : (size_t)nj * nj * nj - 1;
            if (one) /* alone, r + a little from the floor shape's face */
                pos[0] = pos[2] = 0.5f, pos[1] = SHAPE_FACE + margin + 1.2f * r;
            sim = make_sim(cl, &s, pos, n);
            shape_corner(sim, margin, true);
            ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
            ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
            rho = malloc(n * sizeof *rho);
            kstate_read(sim, &k);
            ck_assert_int_eq(pbfcl_sim_read(sim, NULL, NULL, rho), PBFCL_OK);
            shape_planes sp = shape_planes_read(sim, n);
            p = ref_params_of(sim);
            double lscale = fmax(max_abs(k.lambda, n), 1e-12);
            double dscale = fmax(max_abs(k.delta, 3 * n), 1e-12);
            int planes = 0;
            for (size_t i = 0; i < n; i++) {
                double rr, lambda, dref[3];
                ref_lambda_shapes(&k, p, &sp, i, &rr, &lambda);
                planes += sp.shape[PBFCL_COLLIDER_CONTACTS * i] >= 0;
                ck_assert_msg(test_close(rho[i], rr, 0, 1e-4), "rho[%zu] = %g, reference %g", i,
                              rho[i], rr);
                ck_assert_msg(test_close(k.lambda[i], lambda, 1e-4 * lscale, 1e-3),
                              "lambda[%zu] = %g, reference %g", i, k.lambda[i], lambda);
                ref_delta_shapes(&k, p, &sp, i, dref);
                for (int c = 0; c < 3; c++)
                    ck_assert_msg(test_close(k.delta[3 * i + c], dref[c], 1e-4 * dscale, 1e-3),
                                  "delta[%zu][%d] = %g, reference %g", i, c, k.delta[3 * i + c],
                                  dref[c]);
            }
            fprintf(stderr, "    shapes as walls (margin %.3f): n %zu, %d with planes\n", margin, n,
                    planes);
            ck_assert_msg(planes > 0, "no particle has a contact plane");
            free(sp.plane);
            free(sp.shape);
            kstate_free(&k);
            free(rho);
            free(pos);
            pbfcl_sim_destroy(sim);
        }
}

START_TEST(test_shape_walls)
{
    test_each_device(check_shape_walls);
}
END_TEST

/* The reference of pbf_collide for particle i: x* moves by c (half the overlap of q = x* + dx
 * with each neighbour, walls holding q), x by e (the part of c undoing a deep overlap x had).
 * branch[0..2] count the pairs where x does not move, moves by less than x*, by as much. */
static void ref_collide(const kstate *k, const float *x, const pbfcl_pbf_params *p, size_t i,
                        double c[3], double e[3], int branch[3])
{
    double q[3], qj[3], d[3], dx[3];
    for (int a = 0; a < 3; a++) {
        q[a] = (double)k->x[3 * i + a] + k->delta[3 * i + a];
        c[a] = e[a] = 0.0;
    }
    for (size_t j = 0; j < k->n; j++) {
        for (int a = 0; a < 3; a++)
            qj[a] = (double)k->x[3 * j + a] + k->delta[3 * j + a];
        double r = 0.0;
        for (int a = 0; a < 3; a++) {
            d[a] = q[a] - qj[a];
            r += d[a] * d[a];
        }
        r = sqrt(r);
        if (j == i || !(r < p->min_dist && r > 0))
            continue;
        double overlap = p->min_dist - r;
        double overlap_x = p->min_dist * (1.0 - p->contact_slop) - dist3(x + 3 * i, x + 3 * j, dx);
        double moved_x = fmin(fmax(overlap_x, 0.0), overlap);
        branch[moved_x <= 0.0 ? 0 : moved_x < overlap ? 1 : 2]++;
        for (int a = 0; a < 3; a++) {
            c[a] += 0.5 * overlap / r * d[a];
            e[a] += 0.5 * moved_x / r * d[a];
        }
    }
}

/* collide: particles closer than 2r are pushed apart by half the overlap each, walls hold;
 * x moves by the part that undoes a deep overlap it had (all three cases occur). */
static void check_collide(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = 5;
    float *pos = lattice(nx, 0.011f, 0.017f, 0.003f, 3); /* overlapping, touching a wall */
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    kstate k;
    kstate_read(sim, &k);
    float *x = malloc(n * 3 * sizeof *x), *out = malloc(n * 3 * sizeof *out),
          *x_out = malloc(n * 3 * sizeof *x_out);
    ck_assert_int_eq(pbfcl_sim_read(sim, x, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_collide(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, out, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, x_out, NULL, NULL), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    int branch[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double c[3], e[3];
        ref_collide(&k, x, p, i, c, e, branch);
        double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
        double limit = 0.5 * p->radius, scale = len > limit ? limit / len : 1.0;
        for (int a = 0; a < 3; a++) {
            double lo = p->box_min[a] + p->radius, hi = p->box_max[a] - p->radius;
            double q = (double)k.x[3 * i + a] + k.delta[3 * i + a];
            double want = fmin(fmax(q + scale * c[a], lo), hi) - (double)k.x[3 * i + a];
            double want_x = fmin(fmax(x[3 * i + a] + scale * e[a], lo), hi);
            ck_assert_msg(test_close(out[3 * i + a], want, 2e-6, 1e-4),
                          "collide delta[%zu][%d] = %g, reference %g", i, a, out[3 * i + a], want);
            ck_assert_msg(test_close(x_out[3 * i + a], want_x, 2e-6, 1e-5),
                          "collide x[%zu][%d] = %g, reference %g", i, a, x_out[3 * i + a], want_x);
        }
    }
    ck_assert_msg(branch[0] > 0 && branch[1] > 0 && branch[2] > 0,
                  "contacts where x stays, moves less than x*, as much: %d, %d, %d", branch[0],
                  branch[1], branch[2]);
    free(x);
    free(x_out);
    free(out);
    kstate_free(&k);
    free(pos);
    pbfcl_sim_destroy(sim);
}

/* collide reads only the near part of the neighbour lists (the pairs within 2r plus the
 * contact skin at the search) while no particle has moved half the skin since the search.
 * Two particles listed beyond the near radius are moved into contact after the search (as
 * iterations would move them): delta reports the move and collide separates the pair from
 * the whole lists. Without the report it would read the empty near part and leave the
 * overlap. */
/* A simulation of two particles 3.3r apart along x about the box's centre c (beyond the near
 * radius 2r + 0.75r, within h = 4r), after predict and the neighbour search; r and c out. */
static pbfcl_sim *far_pair(pbfcl_cl *cl, float *r, float *c)
{
    pbfcl_scene s;
    kernel_scene(&s);
    *r = s.particle_radius;
    *c = 0.5f * (s.domain_min[0] + s.domain_max[0]);
    const float y = 0.5f * (s.domain_min[1] + s.domain_max[1]);
    const float z = 0.5f * (s.domain_min[2] + s.domain_max[2]);
    const float far = 3.3f * *r;
    float pos[6] = {*c - 0.5f * far, y, z, *c + 0.5f * far, y, z};
    return make_sim(cl, &s, pos, 2);
}

/* For a pair after its search and the lambda that records it: writes its positions x (as x and
 * x*), runs lambda, delta and one collide pass, and gives q - x* after delta (before) and after
 * collide (after, read_solver's delta) and the pair's distance in q after each. */
static void collide_pair(pbfcl_sim *sim, const float x[6], float before[6], float after[6],
                         double *d_before, double *d_after)
{
    ck_assert_int_eq(pbfcl_sim_write(sim, x, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, before, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_collide(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, after, NULL, NULL), PBFCL_OK);
    *d_before = fabs((double)(x[3] + before[3]) - (x[0] + before[0]));
    *d_after = fabs((double)(x[3] + after[3]) - (x[0] + after[0]));
}

static void check_collide_after_move(pbfcl_cl *cl)
{
    float r, c;
    pbfcl_sim *sim = far_pair(cl, &r, &c);
    kstate k;
    kstate_read(sim, &k);
    ck_assert_uint_eq(k.count[0], 1); /* listed, but not near (test_neighbours checks that) */
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK); /* records x* at the search */
    float x[6];
    ck_assert_int_eq(pbfcl_sim_read(sim, x, NULL, NULL), PBFCL_OK);
    const float gap = 1.2f * r; /* into contact: 1.2r apart, 0.8r overlap */
    for (int i = 0; i < 2; i++)
        x[3 * i] = c + (x[3 * i] < c ? -0.5f : 0.5f) * gap;
    float before[6], after[6];
    double d_before, d_after;
    collide_pair(sim, x, before, after, &d_before, &d_after);
    ck_assert_msg(d_before < 2.0 * r, "delta separated the pair already (%g r)", d_before / r);
    double limit = 2.0 * 0.5 * r; /* each moves at most 0.5r per pass */
    double want = fmin(2.0 * r, d_before + limit);
    ck_assert_msg(fabs(d_after - want) < 1e-3 * r, "after collide the pair is %g r apart, not %g r",
                  d_after / r, want / r);
    kstate_free(&k);
    pbfcl_sim_destroy(sim);
}

/* The same with a static particle moved into contact and the fluid one where it was: only a
 * solid reported a move (delta's solid bit), so only the solids and the fluid beside them (here
 * the fluid particle, which the static one lists) read their whole lists, and the fluid one
 * takes the whole push (the static one has inverse mass 0): it must move by the per-pass limit.
 * Reading only its near part it would not move at all. */
static void check_collide_after_solid_move(pbfcl_cl *cl)
{
    if (test_small()) { /* Oclgrind */
        fprintf(stderr, "    collide after a solid's move is not run under Oclgrind: its check of "
                        "unwritten memory crashes in pbf_collide's solid path (as with vorticity "
                        "and bodies below); it runs on every real device\n");
        return;
    }
    float r, c;
    pbfcl_sim *sim = far_pair(cl, &r, &c);
    const unsigned static_id = 1;
    ck_assert_int_eq(pbfcl_sim_set_static(sim, 1, &static_id), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK); /* the phases' tags into x* */
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK); /* records x* at the search */
    float x[6], w[2];
    unsigned phase[2];
    ck_assert_int_eq(pbfcl_sim_read(sim, x, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    int st = solid_phase(phase[0]) ? 0 : 1, fl = 1 - st;
    ck_assert_uint_eq(phase[fl], PBFCL_SIM_PHASE_FLUID);
    const float gap = 1.2f * r; /* the static one into contact: 1.2r apart, 0.8r overlap */
    x[3 * st] = x[3 * fl] + (x[3 * st] > x[3 * fl] ? gap : -gap);
    float before[6], after[6];
    double d_before, d_after;
    collide_pair(sim, x, before, after, &d_before, &d_after);
    ck_assert_msg(fabsf(before[3 * fl]) < 0.01f * r && before[3 * st] == 0.0f,
                  "delta moved the pair (%g, %g r): the fluid one must not report a move",
                  before[3 * fl] / r, before[3 * st] / r);
    double want = d_before + 0.5 * r; /* the fluid one moves the limit, 0.5r; the static not */
    ck_assert_msg(fabs(d_after - want) < 1e-3 * r && after[3 * st] == 0.0f,
                  "after collide the pair is %g r apart, not %g r (static moved %g)", d_after / r,
                  want / r, after[3 * st]);
    pbfcl_sim_destroy(sim);
}

/* The grid of a simulation (its cell ids and moved flags). */
static pbfcl_grid *grid_of(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    return v.grid;
}

/* The region (cl/common/pbfcl_shared.h, PBFCL_MOVED_LEVEL) of each of the n sorted particles' cells
 * at the last search, into region (n uints). */
static void read_regions(pbfcl_sim *sim, size_t n, unsigned *region)
{
    pbfcl_grid *g = grid_of(sim);
    ck_assert_int_eq(
        clEnqueueReadBuffer(g->cl->queue, g->cell_id_buf, CL_TRUE, 0, n * 4, region, 0, NULL, NULL),
        CL_SUCCESS);
    for (size_t i = 0; i < n; i++)
        region[i] >>= 3 * PBFCL_MOVED_LEVEL;
}

/* One particle moved into contact with a still one that lists it beyond its near part, the two
 * in cells of two regions of the grid: the mover's report must reach the still one's region
 * (delta flags the regions of all cells around the mover's), so both read their whole lists
 * and both are pushed, each by the per-pass limit. With the report in the mover's region only,
 * the still one would read its near part and stay. */
static void check_collide_after_one_moves(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    s.solver.contact_interval = 1; /* near radius 2r + 0.75r: the pair 3.3r apart is not near */
    pbfcl_pbf_params p; /* the simulation's grid, for a region border near the box's centre */
    pbfcl_grid_params gp;
    ck_assert_int_eq(pbfcl_pbf_params_from_scene(&s, &p), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_params_fit(s.domain_min, s.domain_max, p.h, &gp), PBFCL_OK);
    const float r = s.particle_radius, c = 0.5f * (s.domain_min[0] + s.domain_max[0]);
    float edge = gp.cell_size * (float)(1u << PBFCL_MOVED_LEVEL);
    float border = gp.origin[0] + edge * roundf((c - gp.origin[0]) / edge);
    const float y = 0.5f * (s.domain_min[1] + s.domain_max[1]);
    const float z = 0.5f * (s.domain_min[2] + s.domain_max[2]);
    float pos[6] = {border - 1.65f * r, y, z, border + 1.65f * r, y, z}; /* 3.3r apart */
    pbfcl_sim *sim = make_sim(cl, &s, pos, 2);
    ck_assert(grid_of(sim)->params.cell_size == gp.cell_size &&
              grid_of(sim)->params.origin[0] == gp.origin[0]);
    unsigned region[2];
    read_regions(sim, 2, region);
    ck_assert_msg(region[0] != region[1], "the pair lies in one region (%u): the test needs two",
                  region[0]);
    pbfcl_grid *g = grid_of(sim);
    unsigned near[2], flags[2];
    ck_assert_int_eq(
        clEnqueueReadBuffer(g->cl->queue, g->neighbor_near_buf, CL_TRUE, 0, 8, near, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_msg(near[0] == 0 && near[1] == 0, "the pair is near at the search (%u, %u)", near[0],
                  near[1]);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK); /* records x*, clears the flags */
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(clEnqueueReadBuffer(g->cl->queue, g->moved_buf, CL_TRUE, region[k] * 4, 4,
                                             &flags[k], 0, NULL, NULL),
                         CL_SUCCESS);
    ck_assert_msg(flags[0] == 0 && flags[1] == 0, "lambda left the flags %u, %u", flags[0],
                  flags[1]);
    float x[6];
    ck_assert_int_eq(pbfcl_sim_read(sim, x, NULL, NULL), PBFCL_OK);
    int mover = x[0] < x[3] ? 0 : 1, still = 1 - mover; /* the left one moves right */
    x[3 * mover] = x[3 * still] - 1.2f * r;             /* 1.2r apart: 0.8r overlap */
    float before[6], after[6];
    double d_before, d_after;
    collide_pair(sim, x, before, after, &d_before, &d_after);
    ck_assert_msg(d_before < 2.0 * r, "delta separated the pair already (%g r)", d_before / r);
    double want = fmin(2.0 * r, d_before + 2.0 * 0.5 * r); /* both move, by at most 0.5r each */
    ck_assert_msg(fabs(d_after - want) < 1e-3 * r,
                  "after collide the pair is %g r apart, not %g r (the still one moved %g r)",
                  d_after / r, want / r, (after[3 * still] - before[3 * still]) / r);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_collide_after_one_moves)
{
    test_each_device(check_collide_after_one_moves);
}
END_TEST

/* delta's moved flags against a reference: a lattice at rest, a few of its particles (fluid
 * ones at awkward indices, and static ones) moved by r after the search; of the regions that
 * hold particles, the flags of exactly those that hold a cell next to (or at) the cell of a
 * particle whose q is more than half the contact skin from where it was at the search carry its
 * kind's bit (fluid 1, solid 2), computed from the cell ids and the positions read back; the
 * others are clear (the lambda after the search cleared them). The lattice spans region
 * borders. */
static void check_moved_flags(pbfcl_cl *cl)
{
    if (test_small()) { /* Oclgrind: see docs/ALGORITHM.md, "Oclgrind and reused buffers" */
        fprintf(stderr, "    the moved flags' reference is not run under Oclgrind: its "
                        "simulation, larger than the ones before it, inherits their records of "
                        "initialised bytes and gets false reports in the sort; it runs on every "
                        "real device (delta's reports run here in the collide tests)\n");
        return;
    }
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = 12; /* 0.3 .. 0.52 m: cells of 4 cm, regions of 16 cm */
    const size_t n = (size_t)nx * nx * nx;
    float *pos = lattice(nx, 0.3f, 0.02f, 0.0f, 3);
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    const unsigned statics[] = {5, 700, 1100, 1727};
    ck_assert_int_eq(pbfcl_sim_set_static(sim, 4, statics), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK); /* the phases' tags */
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK); /* records x*, clears the flags */
    float *search = malloc(n * 12), *x = malloc(n * 12), *dq = malloc(n * 12);
    unsigned *phase = malloc(n * 4), *cell = malloc(n * 4);
    float *w = malloc(n * 4);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, search, NULL, NULL, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    memcpy(x, search, n * 12);
    const float r = s.particle_radius;
    for (size_t i = 0; i < n; i += 97) /* every 97th */
        x[3 * i + i % 3] += (i % 2 ? 1.0f : -1.0f) * r;
    for (size_t i = 0; i < n; i++)
        if (solid_phase(phase[i])) /* and every static particle */
            x[3 * i + 1] += r;
    ck_assert_int_eq(pbfcl_sim_write(sim, x, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, x, NULL, dq, NULL, NULL), PBFCL_OK);
    pbfcl_grid *g = grid_of(sim);
    ck_assert_int_eq(
        clEnqueueReadBuffer(g->cl->queue, g->cell_id_buf, CL_TRUE, 0, n * 4, cell, 0, NULL, NULL),
        CL_SUCCESS);
    size_t regions = g->moved_regions;
    unsigned *got = malloc(regions * 4), *want = calloc(regions, 4);
    ck_assert_int_eq(clEnqueueReadBuffer(g->cl->queue, g->moved_buf, CL_TRUE, 0, regions * 4, got,
                                         0, NULL, NULL),
                     CL_SUCCESS);
    const double half_skin = 0.5 * 0.75 * s.solver.contact_interval * r;
    const unsigned top = (1u << g->params.grid_bits) - 1u, level = PBFCL_MOVED_LEVEL;
    size_t movers = 0, solid_movers = 0;
    for (size_t i = 0; i < n; i++) {
        double d2 = 0.0;
        for (int a = 0; a < 3; a++) {
            double d = (double)x[3 * i + a] + dq[3 * i + a] - search[3 * i + a];
            d2 += d * d;
        }
        ck_assert_msg(fabs(sqrt(d2) - half_skin) > 0.01 * half_skin,
                      "particle %zu moved %g r, too close to half the skin to tell", i,
                      sqrt(d2) / r);
        if (!(d2 > half_skin * half_skin))
            continue;
        movers++;
        solid_movers += solid_phase(phase[i]);
        unsigned cx, cy, cz, bit = solid_phase(phase[i]) ? 2u : 1u;
        pbfcl_morton_decode(cell[i], &cx, &cy, &cz);
        unsigned lo[3] = {cx ? cx - 1 : 0, cy ? cy - 1 : 0, cz ? cz - 1 : 0};
        unsigned hi[3] = {cx < top ? cx + 1 : top, cy < top ? cy + 1 : top,
                          cz < top ? cz + 1 : top};
        for (unsigned rz = lo[2] >> level; rz <= hi[2] >> level; rz++)
            for (unsigned ry = lo[1] >> level; ry <= hi[1] >> level; ry++)
                for (unsigned rx = lo[0] >> level; rx <= hi[0] >> level; rx++)
                    want[pbfcl_morton_encode(rx, ry, rz)] |= bit;
    }
    /* the regions that hold a particle (the flags anyone reads) exactly; the others keep what
     * they had (all set since the grid was made) and so hold at least the reference's bits */
    bool *held = calloc(regions, sizeof *held);
    for (size_t i = 0; i < n; i++)
        held[cell[i] >> (3 * level)] = true;
    size_t flagged = 0, checked = 0;
    for (size_t k = 0; k < regions; k++) {
        if (held[k])
            ck_assert_msg(got[k] == want[k], "region %zu: flags %u, the reference %u", k, got[k],
                          want[k]);
        else
            ck_assert_msg((got[k] & want[k]) == want[k],
                          "region %zu (no particle): flags %u lack the reference's %u", k, got[k],
                          want[k]);
        flagged += held[k] && want[k] != 0;
        checked += held[k];
    }
    free(held);
    fprintf(stderr,
            "    moved flags: %zu movers (%zu static), %zu of the %zu regions with particles "
            "flagged (%zu regions)\n",
            movers, solid_movers, flagged, checked, regions);
    ck_assert(movers >= 15 && solid_movers == 4 && flagged > 0 && flagged < checked);
    free(pos);
    free(search);
    free(x);
    free(dq);
    free(phase);
    free(cell);
    free(w);
    free(got);
    free(want);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_moved_flags_reference)
{
    test_each_device(check_moved_flags);
}
END_TEST

START_TEST(test_collide_after_solid_move)
{
    test_each_device(check_collide_after_solid_move);
}
END_TEST

START_TEST(test_collide_after_move)
{
    test_each_device(check_collide_after_move);
}
END_TEST

START_TEST(test_collide_reference)
{
    test_each_device(check_collide);
}
END_TEST

/* The Chebyshev weights (Wang 2015): 1 for the first two iterations and for rho = 0, then
 * 2 / (2 - rho^2), then the recurrence 4 / (4 - rho^2 w), which falls to its fixed point
 * 2 / (1 + sqrt(1 - rho^2)), the optimal over-relaxation for spectral radius rho. */
START_TEST(test_chebyshev_weights)
{
    const double rho = 0.95, limit = 2.0 / (1.0 + sqrt(1.0 - rho * rho));
    double w = 1.0;
    for (int it = 0; it < 200; it++) {
        double next = pbfcl_pbf_chebyshev_weight(it, rho, w);
        ck_assert_double_eq(pbfcl_pbf_chebyshev_weight(it, 0.0, w), 1.0);
        if (it < 2)
            ck_assert_double_eq(next, 1.0);
        else if (it == 2)
            ck_assert_double_eq_tol(next, 2.0 / (2.0 - rho * rho), 1e-12);
        else
            ck_assert_msg(next <= w && next >= limit - 1e-12,
                          "weight %d: %.9f after %.9f (limit %.9f)", it, next, w, limit);
        w = next;
    }
    ck_assert_double_eq_tol(w, limit, 1e-9);
}
END_TEST

/* delta with a Chebyshev weight w: the step is w dx + (w - 1) D, D the step the last delta
 * took (q - x*, walls included), dx the reference of delta at the new x*; a second delta after
 * one plain iteration, on an overlapping lattice touching a wall. */
static void check_delta_chebyshev(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    s.solver.chebyshev_rho = 0.95f; /* deltas record their steps */
    const int nx = 5;
    float *pos = lattice(nx, 0.011f, 0.017f, 0.003f, 3); /* overlapping, touching a wall */
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    float *d0 = malloc(n * 3 * sizeof *d0), *out = malloc(n * 3 * sizeof *out);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, d0, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_apply_delta(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    kstate k;
    kstate_read(sim, &k);
    const float w = 1.7f;
    pbfcl_pbf_set_chebyshev_weight(sim, w);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    pbfcl_pbf_set_chebyshev_weight(sim, 1.0f);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, out, NULL, NULL), PBFCL_OK);
    const pbfcl_pbf_params *p = pbfcl_sim_params(sim);
    double dscale = 1e-6; /* the size of the steps, for the tolerance */
    for (size_t i = 0; i < 3 * n; i++)
        dscale = fmax(dscale, fabs(d0[i]));
    int clamped = 0, moved = 0;
    ref_listed = 1; /* the second iteration's x* moved from where the lists were built */
    for (size_t i = 0; i < n; i++) {
        double dx[3];
        ref_delta_limited(&k, p, i, dx);
        for (int a = 0; a < 3; a++) {
            double lo = p->box_min[a] + p->radius, hi = p->box_max[a] - p->radius;
            double x = k.x[3 * i + a], step = w * dx[a] + (w - 1.0) * d0[3 * i + a];
            double want = fmin(fmax(x + step, lo), hi) - x;
            clamped += want != step;
            moved += fabs(want - dx[a]) > 1e-3 * dscale;
            /* the two terms can cancel: each carries the plain delta test's 1e-3 */
            double terms = fabs(w * dx[a]) + fabs((w - 1.0) * d0[3 * i + a]);
            ck_assert_msg(test_close(out[3 * i + a], want, 1e-4 * dscale + 1e-3 * terms, 1e-3),
                          "Chebyshev delta[%zu][%d] = %g, reference %g", i, a, out[3 * i + a],
                          want);
        }
    }
    ref_listed = 0;
    ck_assert_msg(moved > 0 && clamped > 0, "steps that differ from plain delta %d, at a wall %d",
                  moved, clamped);
    kstate_free(&k);
    free(d0);
    free(out);
    free(pos);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_delta_chebyshev_reference)
{
    test_each_device(check_delta_chebyshev);
}
END_TEST

/* The state the vorticity_viscosity stage starts from, read back, and its reference. */
typedef struct vstate {
    float *x, *v, *rho;
    float *strength; /* v.w: V_j |omega_j| of the last stage (0 for a solid particle) */
    unsigned *phase; /* NULL: all fluid */
    float *inv_mass;
    unsigned *count, *list;   /* the neighbour lists the stage reads ([k * n + i]) */
    double *omega, *eta, *dv; /* reference: omega_i, eta_i = grad |omega|, XSPH increment */
} vstate;

static double cross_x(const double a[3], const double b[3], int c)
{
    int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
    return a[c1] * b[c2] - a[c2] * b[c1];
}

/* omega_i = sum_j V_j (v_j - v_i) x -grad W_ij and the XSPH increment
 * c sum_j share_ij 2 V_i V_j / (V_i + V_j) W_ij (v_j - v_i), with V = m / rho, over the listed
 * j within h (the lists are of x* at the last search: a pair can have come within h since);
 * eta_i = sum_j s_j grad W_ij with s_j the V_j |omega_j| of the stage before
 * (0 for a body's or an obstacle's particle). With phases: pairs of two non-fluid particles
 * are left out, share_ij = 2 w_i / (w_i + w_j) (w = 1 for fluid), and a non-fluid particle has
 * no vorticity. */
static void ref_vorticity_viscosity(vstate *st, size_t n, const pbfcl_pbf_params *p)
{
    for (size_t i = 0; i < n; i++) {
        double vi = p->mass / st->rho[i];
        bool solid_i = st->phase && solid_phase(st->phase[i]);
        double w_i = st->phase ? st->inv_mass[i] : 1.0;
        for (unsigned k = 0; k < st->count[i]; k++) {
            size_t j = st->list[(size_t)k * n + i];
            double d[3], u[3], g[3];
            double r = dist3(st->x + 3 * i, st->x + 3 * j, d);
            bool solid_j = st->phase && solid_phase(st->phase[j]);
            if (j == i || r >= p->h || (solid_i && solid_j))
                continue;
            double w_j = st->phase ? st->inv_mass[j] : 1.0, share = 2.0 * w_i / (w_i + w_j);
            double vj = p->mass / st->rho[j], f = ref_spiky_factor(r, p->h);
            double vol = 2.0 * vi * vj / (vi + vj) * ref_poly6(r, p->h);
            double s_j = solid_j ? 0.0 : st->strength[j];
            for (int c = 0; c < 3; c++) {
                u[c] = (double)st->v[3 * j + c] - st->v[3 * i + c];
                g[c] = -f * d[c]; /* grad_j W */
            }
            for (int c = 0; c < 3; c++) {
                st->omega[3 * i + c] += vj * cross_x(u, g, c);
                st->dv[3 * i + c] += p->viscosity * share * vol * u[c];
                st->eta[3 * i + c] += s_j * f * d[c];
            }
        }
        if (solid_i)
            for (int c = 0; c < 3; c++)
                st->omega[3 * i + c] = 0.0;
    }
}

/* What v.w must hold after a vorticity_viscosity stage that left omega (xyz triples) at
 * densities rho: V_i |omega_i| (0 for a body's or an obstacle's particle, which has none). */
static double want_strength(const vstate *st, size_t i, const pbfcl_pbf_params *p,
                            const double omega[3])
{
    if (st->phase && solid_phase(st->phase[i]))
        return 0.0;
    return p->mass / st->rho[i] *
           sqrt(omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2]);
}

/* Marks lattice ids 100-107 static (inverse mass 0), and gives ids 0-7 the phase of body 0
 * with w = 1 and ids 60-67 that of body 1 with w = 0.5 through their phases alone: the
 * kernels' solid paths without the shape-matching stages, which this test does not need. */
static void vorticity_solids(pbfcl_sim *sim, size_t n)
{
    unsigned statics[8];
    for (int k = 0; k < 8; k++)
        statics[k] = 100u + (unsigned)k;
    ck_assert_int_eq(pbfcl_sim_set_static(sim, 8, statics), PBFCL_OK);
    unsigned *id = malloc(n * 4), *phase = malloc(n * 4);
    float *w = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    for (size_t i = 0; i < n; i++) {
        if (id[i] < 8)
            phase[i] = 1, w[i] = 1.0f;
        else if (id[i] >= 60 && id[i] < 68)
            phase[i] = 2, w[i] = 0.5f;
    }
    ck_assert_int_eq(pbfcl_sim_write_phases(sim, phase, w), PBFCL_OK);
    free(id), free(phase), free(w);
}

/* Reference delta of a solid particle i (solid_phase(phase[i]), relative inverse mass w_i): w_i (m
 * / rho0) sum_j (lambda_j + s_corr) grad Spiky(x*_i - x*_j) over every particle j within h not
 * of its phase (no lambda of its own; s_corr, the reaction to the fluid's, only where j is
 * fluid), limited to w_i times the fluid's limit (at least the fluid's), then kept inside the
 * walls. */
static void ref_delta_solid(const kstate *k, const pbfcl_pbf_params *p, const unsigned *phase,
                            double w_i, size_t i, double out[3])
{
    double wdq = ref_poly6(p->h * 0.2, p->h);
    out[0] = out[1] = out[2] = 0;
    for (size_t j = 0; j < k->n; j++) {
        double d[3], r = dist3(k->x + 3 * i, k->x + 3 * j, d);
        if (j == i || r >= p->h || phase[j] == phase[i])
            continue;
        double s =
            solid_phase(phase[j]) ? 0.0 : -p->scorr_k * pow(ref_poly6(r, p->h) / wdq, p->scorr_n);
        double f = (k->lambda[j] + s) * ref_spiky_factor(r, p->h) * p->volume;
        for (int c = 0; c < 3; c++)
            out[c] += w_i * f * d[c];
    }
    ref_limit(out, PBF_MAX_CORRECTION * p->radius * fmax(w_i, 1.0));
    for (int c = 0; c < 3; c++) {
        double x = k->x[3 * i + c], lo = p->box_min[c] + p->radius, hi = p->box_max[c] - p->radius;
        out[c] = fmin(fmax(x + out[c], lo), hi) - x;
    }
}

/* lambda and delta with solids: in a compressed, jittered lattice (n = 7^3) two bodies'
 * particles and static ones (vorticity_solids), the lists searched again with their phases. A
 * solid lists every particle within h except those of its own phase, has lambda 0 and the rest
 * density (its volume m / rho0), and moves by the reference of ref_delta_solid; a fluid
 * particle's count, density, lambda and delta are those of the reference over every particle
 * within h (the solids count as fluid of their volume). */
static void check_lambda_delta_solids(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    s.solver.scorr_k = 0.01f;
    const int nx = test_small() ? 5 : 7;
    float *pos = lattice(nx, 0.4f, 0.019f, 0.002f, 7);
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    vorticity_solids(sim, n);
    unsigned *phase = malloc(n * 4);
    float *w = malloc(n * 4), *rho = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    for (size_t i = 0; i < n; i++) /* body 1 six times lighter than the fluid: its own limit */
        w[i] = phase[i] == 2 ? 6.0f : w[i];
    ck_assert_int_eq(pbfcl_sim_write_phases(sim, phase, w), PBFCL_OK);
    /* predict writes the phases' tags into x*, where the neighbour search finds them */
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    kstate k;
    kstate_read(sim, &k);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, NULL, rho), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    double lscale = max_abs(k.lambda, n), dscale = max_abs(k.delta, 3 * n);
    ck_assert_msg(lscale > 0 && dscale > 0, "a compressed lattice must give lambda and delta");
    size_t solids = 0, own = 0;
    double moved = 0;
    int limited_solids = 0;
    for (size_t i = 0; i < n; i++) {
        double rr, lambda, dref[3];
        unsigned nb;
        ref_lambda(&k, p, i, &rr, &lambda, &nb);
        if (!solid_phase(phase[i])) {
            ck_assert_uint_eq(k.count[i], nb);
            ck_assert_msg(test_close(rho[i], rr, 0, 1e-4), "rho[%zu] = %g, reference %g", i, rho[i],
                          rr);
            ck_assert_msg(test_close(k.lambda[i], lambda, 1e-4 * lscale, 1e-3),
                          "lambda[%zu] = %g, reference %g", i, k.lambda[i], lambda);
            ref_delta(&k, p, i, dref);
        } else {
            unsigned same = 0;
            for (size_t j = 0; j < n; j++) {
                double d[3];
                same += j != i && phase[j] == phase[i] && dist3(k.x + 3 * i, k.x + 3 * j, d) < p->h;
            }
            for (unsigned m = 0; m < k.count[i]; m++)
                ck_assert_msg(phase[k.nbr[m * n + i]] != phase[i],
                              "solid %zu (phase %u) lists %u of its own phase", i, phase[i],
                              k.nbr[m * n + i]);
            ck_assert_msg(k.count[i] == nb - same, "solid %zu: %u listed, expected %u - %u", i,
                          k.count[i], nb, same);
            ck_assert_msg(k.lambda[i] == 0.0f, "solid %zu: lambda %g", i, k.lambda[i]);
            ck_assert_msg(rho[i] == p->rest_density, "solid %zu: density %g, expected rho0 %g", i,
                          rho[i], p->rest_density);
            int before = ref_limited;
            ref_delta_solid(&k, p, phase, w[i], i, dref);
            limited_solids += ref_limited > before;
            solids++;
            own += same;
            moved += fabs(k.delta[3 * i]) + fabs(k.delta[3 * i + 1]) + fabs(k.delta[3 * i + 2]);
        }
        for (int c = 0; c < 3; c++)
            ck_assert_msg(test_close(k.delta[3 * i + c], dref[c], 1e-4 * dscale, 1e-3),
                          "delta[%zu][%d] = %g, reference %g (phase %u)", i, c, k.delta[3 * i + c],
                          dref[c], phase[i]);
    }
    fprintf(stderr,
            "    lambda/delta with solids: %zu solids (%d limited), %zu pairs of one phase "
            "unlisted\n",
            solids, limited_solids, own);
    ck_assert_uint_eq(solids, 24);
    ck_assert_msg(own > 0 && moved > 0, "the solids must have neighbours of their own phase and "
                                        "be moved by the fluid");
    kstate_free(&k);
    free(phase), free(w), free(rho), free(pos);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_lambda_delta_solids_reference)
{
    test_each_device(check_lambda_delta_solids);
}
END_TEST

/* vorticity_viscosity: after one frame of an expanding, jittered lattice (a varied velocity
 * field), the stage is run again and its velocities, omegas and confinement forces are checked
 * against the reference, eta from the V |omega| the frame's last stage left in the velocities'
 * w; that V |omega| and the new one it leaves must be V_i |omega_i| of the reference's omega
 * (m / rho_i its volume). After the frame the force must not be zero: its last substep's eta
 * came through predict, the sort and update in w. With bodies (particles of two bodies' phases
 * and static particles in the lattice), the pairs and shares of the bodies' loop too. The
 * force's direction N = eta / |eta| is ill-conditioned where eta nearly vanishes: those particles
 * (|eta| below 1 % of the largest) are counted and left out, and must be few. */
static void check_vorticity_viscosity_of(pbfcl_cl *cl, bool bodies)
{
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = test_small() ? 5 : 6;
    float *pos = lattice(nx, 0.4f, 0.019f, 0.002f, 5);
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    if (bodies)
        vorticity_solids(sim, n);
    ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    vstate st = {malloc(n * 12),
                 malloc(n * 12),
                 malloc(n * 4),
                 malloc(n * 4),
                 bodies ? malloc(n * 4) : NULL,
                 bodies ? malloc(n * 4) : NULL,
                 malloc(n * 4),
                 malloc(n * PBFCL_SIM_MAX_NEIGHBORS * 4),
                 calloc(n * 3, 8),
                 calloc(n * 3, 8),
                 calloc(n * 3, 8)};
    float *v_out = malloc(n * 12), *w_out = malloc(n * 12), *f_out = malloc(n * 12);
    float *s_out = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, NULL, st.rho), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_vorticity(sim, w_out, f_out, st.strength), PBFCL_OK);
    if (bodies)
        ck_assert_int_eq(pbfcl_sim_read_phases(sim, st.phase, st.inv_mass), PBFCL_OK);
    double frame_force = 0;
    size_t solid = 0;
    for (size_t i = 0; i < 3 * n; i++)
        frame_force = fmax(frame_force, fabs(f_out[i]));
    ck_assert_msg(frame_force > 0, "no vorticity force after a frame: eta lost its V |omega|");
    for (size_t i = 0; i < n; i++) { /* the frame's last stage left V_i |omega_i| or the tag */
        double w[3] = {w_out[3 * i], w_out[3 * i + 1], w_out[3 * i + 2]};
        double want = want_strength(&st, i, p, w);
        ck_assert_msg(test_close(st.strength[i], want, 1e-6, 1e-4), "v.w [%zu] carried %g, want %g",
                      i, st.strength[i], want);
        solid += st.phase && solid_phase(st.phase[i]);
    }
    ck_assert_int_eq(pbfcl_sim_read(sim, st.x, st.v, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, NULL, st.count, st.list), PBFCL_OK);
    ck_assert_uint_eq(solid, bodies ? 24 : 0);
    ck_assert_int_eq(pbfcl_pbf_vorticity_viscosity(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, v_out, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_vorticity(sim, w_out, f_out, s_out), PBFCL_OK);
    ref_vorticity_viscosity(&st, n, p);
    double wmax = 0, dvmax = 0, etamax = 0, fmax_ = 0, smax = 0;
    for (size_t i = 0; i < 3 * n; i++) {
        wmax = fmax(wmax, fabs(st.omega[i]));
        dvmax = fmax(dvmax, fabs(st.dv[i]));
        etamax = fmax(etamax, fabs(st.eta[i]));
        fmax_ = fmax(fmax_, fabs(f_out[i]));
    }
    ck_assert_msg(wmax > 0 && dvmax > 0 && fmax_ > 0, "no vorticity or viscosity to check");
    for (size_t i = 0; i < n; i++)
        smax = fmax(smax, fabs(want_strength(&st, i, p, st.omega + 3 * i)));
    for (size_t i = 0; i < n; i++) {
        double want = want_strength(&st, i, p, st.omega + 3 * i);
        ck_assert_msg(test_close(s_out[i], want, 1e-4 * smax, 1e-3),
                      "v.w [%zu] left %g, reference %g", i, s_out[i], want);
    }
    size_t skipped = 0;
    for (size_t i = 0; i < n; i++) {
        const double *e = st.eta + 3 * i, *w = st.omega + 3 * i;
        double elen = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]), nrm[3];
        for (int c = 0; c < 3; c++) {
            double dv = (double)v_out[3 * i + c] - st.v[3 * i + c];
            ck_assert_msg(test_close(dv, st.dv[3 * i + c], 1e-4 * dvmax, 1e-3),
                          "viscosity dv[%zu][%d] = %g, reference %g", i, c, dv, st.dv[3 * i + c]);
            ck_assert_msg(test_close(w_out[3 * i + c], w[c], 1e-4 * wmax, 1e-3),
                          "omega[%zu][%d] = %g, reference %g", i, c, w_out[3 * i + c], w[c]);
            nrm[c] = e[c] / elen;
        }
        if (elen < 1e-2 * etamax) {
            skipped++;
            continue;
        }
        for (int c = 0; c < 3; c++) {
            double want = p->vorticity * cross_x(nrm, w, c);
            ck_assert_msg(test_close(f_out[3 * i + c], want, 1e-3 * fmax_, 1e-2),
                          "vorticity force[%zu][%d] = %g, reference %g", i, c, f_out[3 * i + c],
                          want);
        }
    }
    fprintf(stderr, "    vorticity%s: %zu of %zu forces left out (|eta| < 1 %% of the largest)\n",
            bodies ? " with bodies" : "", skipped, n);
    ck_assert_msg(skipped * 10 < n, "%zu of %zu forces not checked", skipped, n);
    free(st.x), free(st.v), free(st.rho), free(st.strength), free(st.phase), free(st.inv_mass);
    free(st.count), free(st.list);
    free(st.omega), free(st.eta), free(st.dv), free(v_out), free(w_out), free(f_out), free(s_out);
    free(pos);
    pbfcl_sim_destroy(sim);
}

static void check_vorticity_viscosity(pbfcl_cl *cl)
{
    check_vorticity_viscosity_of(cl, false);
}

static void check_vorticity_viscosity_bodies(pbfcl_cl *cl)
{
    if (test_small()) { /* Oclgrind */
        fprintf(stderr,
                "    vorticity with bodies is not run under Oclgrind: its check of unwritten "
                "memory crashes in pbf_collide's solid path (as on the shape-matching "
                "kernels, tests/CMakeLists.txt); it runs on every real device\n");
        return;
    }
    check_vorticity_viscosity_of(cl, true);
}

START_TEST(test_vorticity_viscosity_reference)
{
    test_each_device(check_vorticity_viscosity);
}
END_TEST

/* Turning vorticity and viscosity off between frames: the stage then does not run, and the
 * confinement force it left must not keep acting (predict adds it every substep). After a frame
 * with both on the force is not zero; after one with both off it is zero everywhere. */
static void check_vorticity_off(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = 5;
    float *pos = lattice(nx, 0.4f, 0.019f, 0.002f, 5);
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = make_sim(cl, &s, pos, n);
    float *f = malloc(n * 12);
    ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_vorticity(sim, NULL, f, NULL), PBFCL_OK);
    double most = 0;
    for (size_t i = 0; i < 3 * n; i++)
        most = fmax(most, fabs(f[i]));
    ck_assert_msg(most > 0, "no vorticity force with vorticity on");
    s.solver.vorticity = 0.0f;
    s.solver.viscosity = 0.0f;
    ck_assert_int_eq(pbfcl_sim_set_scene(sim, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_vorticity(sim, NULL, f, NULL), PBFCL_OK);
    for (size_t i = 0; i < 3 * n; i++)
        ck_assert_msg(f[i] == 0.0f, "force [%zu] %g left after vorticity was turned off", i / 3,
                      f[i]);
    free(f), free(pos);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_vorticity_off_clears_force)
{
    test_each_device(check_vorticity_off);
}
END_TEST

START_TEST(test_vorticity_viscosity_bodies_reference)
{
    test_each_device(check_vorticity_viscosity_bodies);
}
END_TEST

/* body_contacts, the contacts of bodies with other solids that the substep's first collide pass
 * measures (static_out, which shape matching turns into each body's friction): in an overlapping
 * 5^3 lattice (id x + 5 y + 25 z), ids 0-7 are body 0 (w 1), ids 25-32 body 1 (w 0.5) on the layer
 * above it and ids 50-57 static on the next. For each body particle i, over every particle j of
 * another body or static closer than 2r (q = x* + dx), with n = (q_i - q_j) / |q_i - q_j| and rel =
 * (q_i - x_i) - (q_j - x_j): the sum of W_i / (W_i + W_j) (rel - (rel.n) n), the number of such
 * pairs and the sum of -W_i / (W_i + W_j) rel.n, W the whole bodies' inverse masses (w / 8; 0
 * static). Pairs with fluid and within a body are not counted. */
static void check_collide_body_contacts(pbfcl_cl *cl)
{
    if (test_small()) { /* Oclgrind */
        fprintf(stderr,
                "    collide with bodies is not run under Oclgrind: its check of unwritten "
                "memory crashes in pbf_collide's solid path; it runs on every real device\n");
        return;
    }
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = 5;
    float *pos = lattice(nx, 0.011f, 0.017f, 0.003f, 3); /* overlapping, as check_collide's */
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned entry_id[16], entry_body[16], statics[8];
    float rest[48], stiffness[2] = {1.0f, 1.0f}, w_body[2] = {1.0f, 0.5f};
    for (unsigned k = 0; k < 16; k++) {
        entry_id[k] = k < 8 ? k : 25 + (k - 8);
        entry_body[k] = k < 8 ? 0 : 1;
        memcpy(rest + 3 * k, pos + 3 * entry_id[k], 12);
    }
    for (unsigned k = 0; k < 8; k++)
        statics[k] = 50 + k;
    ck_assert_int_eq(
        pbfcl_sim_set_bodies(sim, 2, 16, entry_id, entry_body, rest, stiffness, w_body), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_static(sim, 8, statics), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_body_slots(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    kstate k;
    kstate_read(sim, &k);
    float *x = malloc(n * 12), *w = malloc(n * 4), *out = malloc(n * 32);
    unsigned *id = malloc(n * 4), *phase = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read(sim, x, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_collide(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_body_contacts(sim, out), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    int pairs = 0, with_static = 0, between_bodies = 0;
    for (size_t i = 0; i < n; i++) {
        if (!solid_phase(phase[i]) || phase[i] == PBFCL_SIM_PHASE_STATIC)
            continue;
        double slides[3] = {0, 0, 0}, count = 0.0, closed = 0.0;
        double w_i = w[i] / 8.0, qi[3];
        for (int a = 0; a < 3; a++)
            qi[a] = (double)k.x[3 * i + a] + k.delta[3 * i + a];
        for (size_t j = 0; j < n; j++) {
            if (j == i || !solid_phase(phase[j]) || phase[j] == phase[i])
                continue;
            double d[3], r = 0.0, rel[3], along = 0.0;
            for (int a = 0; a < 3; a++) {
                double qj = (double)k.x[3 * j + a] + k.delta[3 * j + a];
                d[a] = qi[a] - qj;
                r += d[a] * d[a];
                rel[a] = (qi[a] - x[3 * i + a]) - (qj - x[3 * j + a]);
            }
            r = sqrt(r);
            if (!(r < p->min_dist && r > 0.0))
                continue;
            for (int a = 0; a < 3; a++)
                along += rel[a] * d[a] / r;
            double w_j = phase[j] == PBFCL_SIM_PHASE_STATIC ? 0.0 : w[j] / 8.0;
            double share = w_i / (w_i + w_j);
            for (int a = 0; a < 3; a++)
                slides[a] += share * (rel[a] - along * d[a] / r);
            count += 1.0;
            closed -= share * along;
            pairs++;
            with_static += phase[j] == PBFCL_SIM_PHASE_STATIC;
            between_bodies += phase[j] != PBFCL_SIM_PHASE_STATIC;
        }
        const float *o = out + 8 * i;
        for (int a = 0; a < 3; a++)
            ck_assert_msg(test_close(o[a], slides[a], 1e-7, 1e-3),
                          "particle id %u: slides[%d] %g, reference %g", id[i], a, o[a], slides[a]);
        ck_assert_msg(o[3] == (float)count, "particle id %u: %g contacts, reference %g", id[i],
                      o[3], count);
        ck_assert_msg(test_close(o[4], closed, 1e-7, 1e-3),
                      "particle id %u: closed %g, reference %g", id[i], o[4], closed);
    }
    fprintf(stderr, "    body contacts: %d pairs (%d with static particles, %d between bodies)\n",
            pairs, with_static, between_bodies);
    ck_assert(with_static > 0 && between_bodies > 0);
    free(x), free(w), free(out), free(id), free(phase);
    kstate_free(&k);
    free(pos);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_collide_body_contacts_reference)
{
    test_each_device(check_collide_body_contacts);
}
END_TEST

/* Friction a contact undoes (pbf_friction, cl/pbf/pbf.cl): of rel's tangential part t, all of
 * it while |t| < mu_s overlap, else t scaled by min(mu_k overlap / |t|, 1); into f with weight. */
static void ref_friction(const pbfcl_pbf_params *p, const double rel[3], const double n[3],
                         double overlap, double weight, double f[3])
{
    double along = rel[0] * n[0] + rel[1] * n[1] + rel[2] * n[2], t[3], len = 0.0;
    for (int a = 0; a < 3; a++) {
        t[a] = rel[a] - along * n[a];
        len += t[a] * t[a];
    }
    len = sqrt(len);
    if (!(len > 0.0))
        return;
    double scale =
        len < p->friction_static * overlap ? 1.0 : fmin(p->friction_dynamic * overlap / len, 1.0);
    for (int a = 0; a < 3; a++)
        f[a] -= weight * scale * t[a];
}

/* The reference of collide with solids for particle i (phases, inverse masses w, matched: the
 * shape-matched bodies): pairs of one group without self-collide skipped, i's share of a pair
 * w_i / (w_i + w_j) (a fluid particle's w is 1), friction where a solid takes part but not for a
 * matched body's particle against another solid. c, e as ref_collide's; f the friction. Returns
 * whether a solid was among i's contacts. */
static bool ref_collide_solids(const kstate *k, const float *x, const unsigned *phase,
                               const float *w, unsigned matched, const pbfcl_pbf_params *p,
                               size_t i, double c[3], double e[3], double f[3])
{
    double q[3], qj[3], d[3], dx[3], n[3], rel[3];
    bool solid_i = solid_phase(phase[i]), touched = false;
    bool matched_i = solid_i && PBFCL_SIM_PHASE_BODY_OF(phase[i]) < matched;
    double w_i = solid_i ? w[i] : 1.0;
    for (int a = 0; a < 3; a++) {
        q[a] = (double)k->x[3 * i + a] + k->delta[3 * i + a];
        c[a] = e[a] = f[a] = 0.0;
    }
    for (size_t j = 0; j < k->n; j++) {
        if (j == i || (phase[j] == phase[i] && !(phase[i] & PBFCL_PHASE_SELF_COLLIDE_BIT)))
            continue;
        double r = 0.0;
        for (int a = 0; a < 3; a++) {
            qj[a] = (double)k->x[3 * j + a] + k->delta[3 * j + a];
            d[a] = q[a] - qj[a];
            r += d[a] * d[a];
        }
        r = sqrt(r);
        if (!(r < p->min_dist && r > 0))
            continue;
        bool solid_j = solid_phase(phase[j]);
        touched |= solid_j;
        double share = w_i / (w_i + (solid_j ? w[j] : 1.0));
        double overlap = p->min_dist - r;
        double overlap_x = p->min_dist * (1.0 - p->contact_slop) - dist3(x + 3 * i, x + 3 * j, dx);
        double moved_x = fmin(fmax(overlap_x, 0.0), overlap);
        for (int a = 0; a < 3; a++) {
            c[a] += share * overlap / r * d[a];
            e[a] += share * moved_x / r * d[a];
            n[a] = d[a] / r;
            rel[a] = (q[a] - x[3 * i + a]) - (qj[a] - x[3 * j + a]);
        }
        if ((solid_i || solid_j) && !(matched_i && solid_j))
            ref_friction(p, rel, n, overlap, share, f);
    }
    return touched;
}

/* Whether a solid lies within h of particle i's x* (the neighbour search's radius). */
static bool near_a_solid(const kstate *k, const unsigned *phase, double h, size_t i)
{
    for (size_t j = 0; j < k->n; j++) {
        double d[3];
        if (j != i && solid_phase(phase[j]) && dist3(k->x + 3 * i, k->x + 3 * j, d) < h)
            return true;
    }
    return false;
}

/* collide with solids: two bodies and static particles in a corner of an overlapping 7^3 lattice
 * (id x + 7 y + 49 z: ids 0-7 body 0 with w 1, ids 49-56 body 1 with w 0.5, ids 98-105 static),
 * the rest fluid. The fluid beside a solid and the solids take the bodies' path (pbf_collide),
 * the fluid away from them the fluid's (pbf_collide_fluid with the bodies on); every particle's
 * q and x must match one reference of both, and each path must have particles. */
static void check_collide_solids(pbfcl_cl *cl)
{
    if (test_small()) { /* Oclgrind */
        fprintf(stderr,
                "    collide with solids is not run under Oclgrind: its check of unwritten "
                "memory crashes in pbf_collide's solid path; it runs on every real device\n");
        return;
    }
    pbfcl_scene s;
    kernel_scene(&s);
    const int nx = 7;
    float *pos = lattice(nx, 0.011f, 0.017f, 0.003f, 3); /* overlapping, touching a wall */
    size_t n = (size_t)nx * nx * nx;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    unsigned entry_id[16], entry_body[16], statics[8];
    float rest[48], stiffness[2] = {1.0f, 1.0f}, w_body[2] = {1.0f, 0.5f};
    for (unsigned k = 0; k < 16; k++) {
        entry_id[k] = k < 8 ? k : 49 + (k - 8);
        entry_body[k] = k < 8 ? 0 : 1;
        memcpy(rest + 3 * k, pos + 3 * entry_id[k], 12);
    }
    for (unsigned k = 0; k < 8; k++)
        statics[k] = 98 + k;
    ck_assert_int_eq(
        pbfcl_sim_set_bodies(sim, 2, 16, entry_id, entry_body, rest, stiffness, w_body), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_static(sim, 8, statics), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_body_slots(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_delta(sim, NULL), PBFCL_OK);
    kstate k;
    kstate_read(sim, &k);
    float *x = malloc(n * 12), *w = malloc(n * 4), *out = malloc(n * 12), *x_out = malloc(n * 12);
    unsigned *phase = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read(sim, x, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, w), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_collide(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, NULL, NULL, out, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, x_out, NULL, NULL), PBFCL_OK);
    const pbfcl_pbf_params *p = ref_params_of(sim);
    int far_fluid = 0, fluid_on_solid = 0, solids = 0;
    for (size_t i = 0; i < n; i++) {
        double c[3], e[3], f[3];
        bool touched = ref_collide_solids(&k, x, phase, w, 2, p, i, c, e, f);
        if (solid_phase(phase[i]))
            solids++;
        else if (touched)
            fluid_on_solid++;
        else if (!near_a_solid(&k, phase, p->h, i))
            far_fluid++;
        double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
        double limit = 0.5 * p->radius, scale = len > limit ? limit / len : 1.0;
        for (int a = 0; a < 3; a++) {
            double lo = p->box_min[a] + p->radius, hi = p->box_max[a] - p->radius;
            double q = (double)k.x[3 * i + a] + k.delta[3 * i + a];
            double want = fmin(fmax(q + scale * c[a] + f[a], lo), hi) - (double)k.x[3 * i + a];
            double want_x = fmin(fmax(x[3 * i + a] + scale * e[a], lo), hi);
            ck_assert_msg(test_close(out[3 * i + a], want, 2e-6, 1e-4),
                          "collide with solids: delta[%zu][%d] = %g, reference %g (phase %#x)", i,
                          a, out[3 * i + a], want, phase[i]);
            ck_assert_msg(test_close(x_out[3 * i + a], want_x, 2e-6, 1e-5),
                          "collide with solids: x[%zu][%d] = %g, reference %g (phase %#x)", i, a,
                          x_out[3 * i + a], want_x, phase[i]);
        }
    }
    fprintf(stderr,
            "    collide with solids: %d solids, %d fluid particles touching one, %d beyond h of "
            "every solid\n",
            solids, fluid_on_solid, far_fluid);
    ck_assert_int_eq(solids, 24);
    ck_assert(fluid_on_solid > 0 && far_fluid > 0);
    free(x), free(w), free(out), free(x_out), free(phase);
    kstate_free(&k);
    free(pos);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_collide_solids_reference)
{
    test_each_device(check_collide_solids);
}
END_TEST

/* Solver settings the solver cannot run with are rejected with PBFCL_ERR_BAD_ARGUMENT. */
static void check_bad_config(pbfcl_cl *cl)
{
    pbfcl_scene s;
    kernel_scene(&s);
    float pos[3] = {0.5f, 0.5f, 0.5f};
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 0), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_null(sim);
    s.solver.scorr_n = 2.5f;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 1), PBFCL_ERR_BAD_ARGUMENT);
    kernel_scene(&s);
    s.solver.h_ratio = 1.5f;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 1), PBFCL_ERR_BAD_ARGUMENT);
    s.solver.h_ratio = 2.0f; /* no neighbour within h at rest */
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 1), PBFCL_ERR_BAD_ARGUMENT);
    s.solver.h_ratio = 4.48f; /* 56 neighbours at rest: no room in lists of 64 */
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 1), PBFCL_ERR_BAD_ARGUMENT);
    s.solver.h_ratio = 4.47f; /* 32 neighbours at rest */
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 1), PBFCL_OK);
    pbfcl_sim_destroy(sim);
    sim = NULL;
    kernel_scene(&s);
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, (size_t)1 << 27), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_null(sim);
    /* more particles than the device memory holds: refused before anything is allocated
     * (pos is never read, the check comes first), naming the most it holds: that many fit its
     * memory and its largest buffer (the neighbour lists), one more does not */
    unsigned long long per = pbfcl_sim_bytes_needed(&s, 2) - pbfcl_sim_bytes_needed(&s, 1);
    size_t too_many = (size_t)(cl->dev.global_mem / per) + 1;
    if (too_many <= (size_t)1 << 26 && pbfcl_sim_bytes_needed(&s, too_many) > cl->dev.global_mem) {
        test_capture_begin();
        pbfcl_status st = pbfcl_sim_create(&sim, cl, &s, pos, too_many);
        const char *msg = test_capture_end();
        ck_assert_int_eq(st, PBFCL_ERR_OUT_OF_MEMORY);
        ck_assert_ptr_null(sim);
        const char *at = strstr(msg, "holds at most ");
        unsigned long long held = 0, lists = 4ull * PBFCL_SIM_MAX_NEIGHBORS;
        ck_assert_msg(at && sscanf(at + 14, "%llu", &held) == 1, "no count held in: %s", msg);
        ck_assert(pbfcl_sim_bytes_needed(&s, held) <= cl->dev.global_mem &&
                  held * lists <= cl->dev.max_alloc);
        ck_assert(pbfcl_sim_bytes_needed(&s, held + 1) > cl->dev.global_mem ||
                  (held + 1) * lists > cl->dev.max_alloc);
    }
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 1), PBFCL_OK);
    pbfcl_sim_destroy(sim);
    pbfcl_sim_destroy(NULL);
}

START_TEST(test_bad_config)
{
    test_each_device(check_bad_config);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("pbf_kernels");
    TCase *host = tcase_create("host");
    tcase_add_test(host, test_poly6_integrates_to_one);
    tcase_add_test(host, test_spiky_gradient_sums_to_zero);
    tcase_add_test(host, test_derived_constants);
    tcase_add_test(host, test_chebyshev_weights);
    suite_add_tcase(suite, host);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_test(dev, test_lattice_density);
    tcase_add_test(dev, test_lambda_delta_reference);
    tcase_add_test(dev, test_lambda_delta_solids_reference);
    tcase_add_test(dev, test_walls);
    tcase_add_test(dev, test_shape_walls);
    tcase_add_test(dev, test_collide_reference);
    tcase_add_test(dev, test_collide_after_move);
    tcase_add_test(dev, test_collide_after_solid_move);
    tcase_add_test(dev, test_collide_after_one_moves);
    tcase_add_test(dev, test_moved_flags_reference);
    tcase_add_test(dev, test_collide_body_contacts_reference);
    tcase_add_test(dev, test_collide_solids_reference);
    tcase_add_test(dev, test_delta_chebyshev_reference);
    tcase_add_test(dev, test_vorticity_viscosity_reference);
    tcase_add_test(dev, test_vorticity_viscosity_bodies_reference);
    tcase_add_test(dev, test_vorticity_off_clears_force);
    tcase_add_test(dev, test_bad_config);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
