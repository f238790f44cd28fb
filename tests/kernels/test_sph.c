/* Tests of the weakly compressible SPH method (host/core/sph/sph.c, cl/sph/sph.cl): its constants
 * against the closed forms of Becker & Teschner 2007 from the scene's values; the density,
 * force and integrate stages against a plain C reference at awkward sizes (n = 1, a prime,
 * the work-group size +- 1), with the walls; the stages a step records; and the bad input
 * each names: a speed of sound too low for the scene, a frame the CFL condition cannot cut
 * into sph_max_steps steps, an unknown method. */
#include "scene/params.h"
#include "runtime/profile.h"
#include "sph/sph.h"
#include "solver_methods.h"
#include "stages_ref.h"
#include "test_util.h"
#include "wall_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The SPH constants of a scene from its values: c = 10 sqrt(2 |g| H) over the box's height H
 * along gravity unless given, B = rho0 c^2 / 7, eps = 0.01 (h / 2)^2, the rest lattice's
 * mass m = rho0 (2r)^3 / L (L the lattice's Poly6 sum) and the walls' density term rho0, and
 * the gradient's normalisation 1 / M on that lattice (Spiky's gradient). */
typedef struct ref_sph {
    double c, stiffness, eps, mass, wall_density, h, rho0, grad_scale;
} ref_sph;

/* Spiky's kernel W = 15 (h - r)^3 / (pi h^6) and -W'(r) / r, from its definition. */
static double ref_spiky(double r, double h)
{
    return r < h ? 15.0 / (PI * pow(h, 6)) * pow(h - r, 3) : 0.0;
}

static double ref_spiky_dw_r(double r, double h)
{
    return r < h && r > 0 ? 45.0 / (PI * pow(h, 6)) * (h - r) * (h - r) / r : 0.0;
}

/* What the pressure force's sum makes of the gradient of a linear field on the rest lattice
 * (spacing 2r, volume m / rho0 per particle): M = sum_j V (x_j - x_i)_x dW/dx_i with Spiky's
 * gradient; 1 in the continuum. */
static double ref_gradient_moment(double r, double h, double volume)
{
    double s = 2.0 * r, sum = 0.0;
    for (int i = -3; i <= 3; i++)
        for (int j = -3; j <= 3; j++)
            for (int l = -3; l <= 3; l++) {
                double dx = i * s, rr = s * sqrt((double)(i * i + j * j + l * l));
                sum += volume * dx * dx * ref_spiky_dw_r(rr, h);
            }
    return sum;
}

/* Spiky over the half-space beyond a wall plane at distance d, by quadrature (Simpson's rule
 * over the depth z beyond the plane and the radius s along it): phi = int W, and the moments
 * int u_n^2 (-W' / r) across the plane and int u_t^2 (-W' / r) along it (u = x - x_b). */
static void ref_spiky_wall(double d, double h, double *phi, double *m_n, double *m_t)
{
    *phi = *m_n = *m_t = 0.0;
    if (d >= h)
        return;
    const int m = 64; /* even */
    double dz = (h - d) / m;
    for (int a = 0; a <= m; a++) {
        double z = d + a * dz, smax = sqrt(fmax(h * h - z * z, 0.0)), ds = smax / m;
        double wa = ((a == 0 || a == m) ? 1 : (a % 2 ? 4 : 2)) * dz / 3.0, w0 = 0, wn = 0, wt = 0;
        for (int b = 0; b <= m; b++) {
            double sv = b * ds, r = sqrt(z * z + sv * sv);
            double wb = ((b == 0 || b == m) ? 1 : (b % 2 ? 4 : 2)) * ds / 3.0,
                   g = ref_spiky_dw_r(r, h);
            w0 += wb * 2.0 * PI * sv * ref_spiky(r, h);
            wn += wb * 2.0 * PI * sv * z * z * g;
            wt += wb * PI * sv * sv * sv * g; /* u_t^2 over the circle: s^2 / 2 */
        }
        *phi += wa * w0;
        *m_n += wa * wn;
        *m_t += wa * wt;
    }
}

/* The walls' moment of x along each axis of the box, 1 - mu_a prod_(b != a) f_b with
 * f_b = 1 - the tangential moments of axis b's two walls and mu_a = 1 - their normal moments
 * (the fluid left by walls that are planes of a box, as pbf_wall_density's density). */
static void ref_wall_moment(const pbfcl_pbf_params *p, const float *x, double m_w[3])
{
    double f[3], mu[3];
    for (int a = 0; a < 3; a++) {
        double phi, mn_lo, mt_lo, mn_hi, mt_hi;
        ref_spiky_wall((double)x[a] - p->box_min[a], p->h, &phi, &mn_lo, &mt_lo);
        ref_spiky_wall((double)p->box_max[a] - x[a], p->h, &phi, &mn_hi, &mt_hi);
        f[a] = 1.0 - mt_lo - mt_hi;
        mu[a] = 1.0 - mn_lo - mn_hi;
    }
    for (int a = 0; a < 3; a++)
        m_w[a] = 1.0 - mu[a] * f[(a + 1) % 3] * f[(a + 2) % 3];
}

static void ref_sph_of(const pbfcl_scene *s, double height, ref_sph *o)
{
    double g = sqrt((double)s->gravity[0] * s->gravity[0] + (double)s->gravity[1] * s->gravity[1] +
                    (double)s->gravity[2] * s->gravity[2]);
    double r = s->particle_radius;
    o->h = s->solver.h_ratio * r;
    o->rho0 = s->rest_density;
    o->c = s->solver.speed_of_sound > 0 ? s->solver.speed_of_sound : 10.0 * sqrt(2 * g * height);
    o->stiffness = o->rho0 * o->c * o->c / 7.0;
    o->eps = 0.01 * (o->h / 2) * (o->h / 2);
    double lattice = ref_lattice_density(r, o->h);
    o->mass = o->rho0 * pow(2 * r, 3) / lattice;
    o->wall_density = o->rho0; /* the walls' calibration is in units of the lattice mass */
    o->grad_scale = 1.0 / ref_gradient_moment(r, o->h, o->mass / o->rho0);
}

static void sph_scene(pbfcl_scene *s)
{
    pbfcl_scene_defaults(s);
    s->solver.method = PBFCL_METHOD_SPH;
}

/* The constants of the defaults (unit box, g along y: H = 1 m, c = 44.29 m/s) and of a scene
 * with every input changed (a slanted gravity, so H is the box's extent along it). */
START_TEST(test_sph_constants)
{
    pbfcl_scene s[2];
    sph_scene(&s[0]);
    sph_scene(&s[1]);
    s[1].particle_radius = 0.004f;
    s[1].rest_density = 800.0f;
    s[1].solver.h_ratio = 3.5f;
    s[1].solver.artificial_viscosity = 0.3f;
    s[1].domain_max[0] = 2.0f;
    s[1].gravity[0] = 3.0f;
    s[1].gravity[1] = -4.0f; /* |g| = 5, H = 0.6 * 2 + 0.8 * 1 = 2 m */
    double heights[2] = {1.0, 2.0};
    for (int k = 0; k < 2; k++) {
        pbfcl_pbf_params p;
        pbfcl_sph_params sp;
        ck_assert_int_eq(pbfcl_pbf_params_from_scene(&s[k], &p), PBFCL_OK);
        pbfcl_sph_params_from_scene(&s[k], &p, &sp);
        ref_sph ref;
        ref_sph_of(&s[k], heights[k], &ref);
        fprintf(stderr, "    scene %d: c %.4g m/s, B %.4g Pa, m %.4g kg, rho_w %.5g, 1 / M %.5f\n",
                k, ref.c, ref.stiffness, ref.mass, ref.wall_density, ref.grad_scale);
        ck_assert_msg(test_close(sp.sound_speed, ref.c, 0, 1e-5), "c %g, want %g", sp.sound_speed,
                      ref.c);
        ck_assert(test_close(sp.stiffness, ref.stiffness, 0, 1e-5));
        ck_assert(test_close(sp.gamma, 7.0, 0, 0));
        ck_assert(test_close(sp.alpha, s[k].solver.artificial_viscosity, 0, 0));
        ck_assert(test_close(sp.visc_eps, ref.eps, 0, 1e-5));
        ck_assert_msg(test_close(sp.wall_density, ref.wall_density, 0, 1e-5), "rho_w %g, want %g",
                      sp.wall_density, ref.wall_density);
        ck_assert_msg(test_close(p.mass, ref.mass, 0, 1e-5), "m %g, want %g", p.mass, ref.mass);
        ck_assert_msg(test_close(sp.grad_scale, ref.grad_scale, 0, 1e-5), "1 / M %g, want %g",
                      sp.grad_scale, ref.grad_scale);
        ck_assert(test_close(p.self_density, ref.mass * ref_poly6(0, ref.h), 0, 1e-5));
    }
    /* 44.29 m/s for the unit box, by hand: 10 sqrt(2 * 9.81 * 1) */
    ck_assert(fabs(pbfcl_sph_sound_speed(&s[0], NULL) - 44.294469) < 1e-4);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------- */

static char log_text[4096];

static void capture_log(pbfcl_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    snprintf(log_text, sizeof log_text, "%s", message);
    fprintf(stderr, "  (message) %s\n", message);
}

/* The number after `key` in the last message; fails the test if there is none. */
static double number_after(const char *key)
{
    const char *at = strstr(log_text, key);
    ck_assert_msg(at != NULL, "'%s' not in the message: %s", key, log_text);
    return strtod(at + strlen(key), NULL);
}

/* Checks scene (n particles) and keeps its message. */
static pbfcl_status check(const pbfcl_scene *s)
{
    log_text[0] = '\0';
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
    pbfcl_status st = pbfcl_sim_check_scene(s, 1000);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    return st;
}

/* A speed of sound below 10 sqrt(2 g H) is refused naming the setting and a value that works:
 * that value passes, and one 1 % below it fails. */
START_TEST(test_sph_sound_too_low)
{
    pbfcl_scene s;
    sph_scene(&s);
    s.solver.speed_of_sound = 20.0f;
    ck_assert_int_eq(check(&s), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(log_text, "solver.speed_of_sound 20 "));
    double ok = number_after("use solver.speed_of_sound >= ");
    ck_assert_msg(ok >= 44.2945 && ok < 44.4, "suggested %g", ok);
    s.solver.speed_of_sound = (float)ok;
    ck_assert_int_eq(check(&s), PBFCL_OK);
    s.solver.speed_of_sound = (float)(ok * 0.99);
    ck_assert_int_eq(check(&s), PBFCL_ERR_BAD_ARGUMENT);
    s.solver.speed_of_sound = 0.0f; /* derived */
    ck_assert_int_eq(check(&s), PBFCL_OK);
}
END_TEST

/* A frame the CFL condition cuts into more than sph_max_steps steps is refused naming
 * solver.dt and a dt that works; with sph_max_steps raised as the message says it passes. */
START_TEST(test_sph_dt_beyond_cfl)
{
    pbfcl_scene s;
    sph_scene(&s);
    s.solver.dt = 1.0f; /* h = 4 cm, c = 44.3 m/s: steps of 0.2 h / 48.7 m/s = 164 us */
    ck_assert_int_eq(check(&s), PBFCL_ERR_BAD_ARGUMENT);
    double steps = number_after("solver.dt 1 s needs ");
    double dt_ok = number_after("use solver.dt <= ");
    double steps_ok = number_after("or solver.sph_max_steps >= ");
    ck_assert_msg(steps == steps_ok && fabs(steps - 1.0 / (0.008 / 48.72395)) < 2, "%g steps",
                  steps);
    /* by hand: 2000 steps of 0.2 * 0.04 / (44.2945 + 4.42945) s */
    ck_assert_msg(dt_ok <= 2000 * 0.008 / 48.72395 && dt_ok > 0.99 * 2000 * 0.008 / 48.72395,
                  "suggested dt %g", dt_ok);
    s.solver.dt = (float)dt_ok;
    ck_assert_int_eq(check(&s), PBFCL_OK);
    s.solver.dt = (float)(dt_ok * 1.01);
    ck_assert_int_eq(check(&s), PBFCL_ERR_BAD_ARGUMENT);
    s.solver.dt = 1.0f;
    s.solver.sph_max_steps = (int)steps_ok;
    ck_assert_int_eq(check(&s), PBFCL_OK);
}
END_TEST

/* An unknown method: a scene file's "method" names the setting and the methods there are; a
 * number where a name belongs is refused too (`--solver`: test_cli_input). */
START_TEST(test_sph_unknown_method)
{
    pbfcl_scene s;
#define SCENE_JSON(method)                                                                         \
    "{\"domain\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}, \"particle_radius\": 0.02, "           \
    "\"fluid\": [{\"min\": [0, 0, 0], "                                                            \
    "\"max\": [0.5, 0.5, 0.5]}], \"solver\": {\"method\": " method "}}"
    const char *texts[] = {SCENE_JSON("\"wcsph\""), SCENE_JSON("1")};
    for (int k = 0; k < 2; k++) {
        log_text[0] = '\0';
        pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
        pbfcl_status st = pbfcl_scene_parse_json_text("bad.json", texts[k], &s);
        pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
        ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(log_text, "bad.json: solver.method"));
        ck_assert_ptr_nonnull(strstr(log_text, "pbf or sph"));
    }
    ck_assert_int_eq(pbfcl_scene_parse_json_text("good.json", SCENE_JSON("\"sph\""), &s), PBFCL_OK);
    ck_assert_int_eq(s.solver.method, PBFCL_METHOD_SPH);
}
END_TEST

/* ---- the stages against the C reference ---------------------------------------------- */

/* A jittered, 10 % compressed lattice in the corner of the box (touching three walls) with
 * random velocities of up to 0.5 m/s: every term of the force is at work. */
static void random_state(size_t n, float *x, float *v)
{
    uint64_t st = 2024;
    int side = 8;
    for (size_t i = 0; i < n; i++) {
        int idx[3] = {(int)(i % side), (int)(i / side % side), (int)(i / (side * side))};
        for (int a = 0; a < 3; a++) {
            x[3 * i + a] = 0.0105f + 0.018f * idx[a] + test_randf(&st, -0.002f, 0.002f);
            v[3 * i + a] = test_randf(&st, -0.5f, 0.5f);
        }
    }
}

/* The reference of particle i: density, pressure term and acceleration by brute force over
 * all particles, with the walls' density by quadrature (wall_ref.h). */
static void ref_particle(const pbfcl_scene *s, const ref_sph *c, const float *x, const float *v,
                         size_t n, size_t i, const double *rho_all, double *rho, double *pt,
                         double a[3])
{
    pbfcl_pbf_params p; /* the box and the calibration of the walls (checked in test_walls) */
    ck_assert_int_eq(pbfcl_pbf_params_from_scene(s, &p), PBFCL_OK);
    const double h = c->h, h2 = h * h;
    double w = ref_poly6(0, h), gw[3];
    for (size_t j = 0; j < n; j++) {
        double d[3], r2 = 0;
        for (int k = 0; k < 3; k++) {
            d[k] = (double)x[3 * i + k] - x[3 * j + k];
            r2 += d[k] * d[k];
        }
        if (j != i)
            w += ref_poly6(sqrt(r2), h);
    }
    *rho = c->mass * w + c->wall_density * ref_wall(&p, x + 3 * i, gw);
    if (!a)
        return;
    *pt = fmax(c->stiffness * (pow(*rho / c->rho0, 7) - 1), 0) / (*rho * *rho);
    double grad[3] = {0, 0, 0}, moment[3] = {0, 0, 0}, p_i = *pt * *rho * *rho;
    for (int k = 0; k < 3; k++)
        a[k] = s->gravity[k] - *pt * c->wall_density * gw[k];
    for (size_t j = 0; j < n; j++) {
        double d[3], u[3], r2 = 0, vx = 0;
        for (int k = 0; k < 3; k++) {
            d[k] = (double)x[3 * i + k] - x[3 * j + k];
            u[k] = (double)v[3 * i + k] - v[3 * j + k];
            r2 += d[k] * d[k];
            vx += u[k] * d[k];
        }
        if (j == i || r2 >= h2)
            continue;
        double rho_j = rho_all[j];
        double pt_j = fmax(c->stiffness * (pow(rho_j / c->rho0, 7) - 1), 0) / (rho_j * rho_j);
        double nu = s->solver.artificial_viscosity * (h / 2) * c->c * 2 / (*rho + rho_j);
        double visc = vx < 0 ? -nu * vx / (r2 + c->eps) : 0;
        double g = ref_spiky_dw_r(sqrt(r2), h) * c->grad_scale; /* grad W = -g d, normalised */
        double vol = c->mass / rho_j;
        for (int k = 0; k < 3; k++) {
            a[k] += c->mass * (*pt + pt_j + visc) * g * d[k];
            grad[k] -= vol * (pt_j * rho_j * rho_j - p_i) * g * d[k];
            moment[k] += vol * g * d[k] * d[k];
        }
    }
    /* the walls' share of the pressure gradient: the moment the fluid misses, at most the
     * walls' own, times the fluid's gradient (divided by at least its share of the moment) */
    double m_w[3];
    ref_wall_moment(&p, x + 3 * i, m_w);
    for (int k = 0; k < 3; k++) {
        double miss = fmin(fmax(1.0 - moment[k], 0.0), m_w[k]);
        a[k] -= c->wall_density / (*rho * *rho) * miss * grad[k] / fmax(moment[k], 1.0 - m_w[k]);
    }
}

/* density and force of n particles against the reference, then the two halves of the
 * Verlet step against theirs. */
static void check_stages_n(pbfcl_sim *sim, const pbfcl_scene *s, size_t n)
{
    float *x = malloc(n * 12), *v = malloc(n * 12), *rho = malloc(n * 4), *pt = malloc(n * 4);
    float *a = malloc(n * 12), *x2 = malloc(n * 12), *v2 = malloc(n * 12);
    double *rho_ref = malloc(n * sizeof *rho_ref);
    ck_assert_int_eq(pbfcl_sim_neighbours_x(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sph_density(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sph_force(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, x, v, rho), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sph_read(sim, pt, a), PBFCL_OK);
    ref_sph c;
    ref_sph_of(s, 1.0, &c);
    for (size_t i = 0; i < n; i++)
        ref_particle(s, &c, x, v, n, i, NULL, &rho_ref[i], NULL, NULL);
    double amax = 0, ptmax = 0;
    for (size_t i = 0; i < n; i++) {
        amax = fmax(amax, sqrt(a[3 * i] * a[3 * i] + a[3 * i + 1] * a[3 * i + 1] +
                               a[3 * i + 2] * a[3 * i + 2]));
        ptmax = fmax(ptmax, pt[i]);
    }
    for (size_t i = 0; i < n; i++) {
        double r, p, ar[3];
        ref_particle(s, &c, x, v, n, i, rho_ref, &r, &p, ar);
        expect(test_close(rho[i], r, 1e-3, 1e-5), "n %zu: rho[%zu] = %g, reference %g", n, i,
               rho[i], r);
        expect(test_close(pt[i], p, 1e-4 * ptmax, 1e-3), "n %zu: p/rho^2[%zu] = %g, reference %g",
               n, i, pt[i], p);
        for (int k = 0; k < 3; k++)
            expect(test_close(a[3 * i + k], ar[k], 1e-4 * amax, 1e-3),
                   "n %zu: a[%zu][%d] = %g, reference %g", n, i, k, a[3 * i + k], ar[k]);
    }
    /* integrate: v_half = v + a dt / 2, x' = x + v_half dt within the walls, v* = v + a dt,
     * then v = v_half + a dt / 2 with the same a (v + a dt again); a velocity into a wall
     * that x' touches is removed from each */
    const pbfcl_pbf_params *pp = pbfcl_sim_params(sim);
    double dt = pp->dt;
    for (int half = 0; half < 2; half++) {
        ck_assert_int_eq(half ? pbfcl_sph_verlet_v(sim, NULL) : pbfcl_sph_verlet_x(sim, NULL),
                         PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_read(sim, x2, v2, NULL), PBFCL_OK);
        int clamped = 0;
        for (size_t i = 0; i < 3 * n; i++) {
            int k = (int)(i % 3);
            double lo = s->domain_min[k] + s->particle_radius;
            double hi = s->domain_max[k] - s->particle_radius;
            double vh = v[i] + 0.5 * dt * a[i], want_x = x[i] + dt * vh;
            bool at_lo = want_x <= lo, at_hi = want_x >= hi;
            clamped += at_lo || at_hi;
            want_x = fmin(fmax(want_x, lo), hi);
#define WALL(u) (((at_lo && (u) < 0) || (at_hi && (u) > 0)) ? 0.0 : (u))
            double want_v = half ? WALL(WALL(vh) + 0.5 * dt * a[i]) : WALL(v[i] + dt * a[i]);
#undef WALL
            expect(test_close(x2[i], want_x, 1e-6, 1e-6), "n %zu half %d: x[%zu] = %.7g, want %.7g",
                   n, half, i, x2[i], want_x);
            expect(test_close(v2[i], want_v, 1e-5 * amax * dt + 1e-6, 1e-5),
                   "n %zu half %d: v[%zu] = %.7g, want %.7g", n, half, i, v2[i], want_v);
        }
        if (half == 0)
            fprintf(stderr, "    n = %zu: |a| up to %.3g m/s^2, %d coordinates at a wall\n", n,
                    amax, clamped);
    }
    free(x);
    free(v);
    free(rho);
    free(pt);
    free(a);
    free(x2);
    free(v2);
    free(rho_ref);
}

/* One simulation grown by appending through n = 1, 37 and the work-group size - 1 and + 1
 * (one simulation, so that no buffer inherits another's records under Oclgrind). Under
 * Oclgrind only n = 37, in a simulation of that capacity: its records of initialised bytes
 * follow only whole-buffer host writes (docs/ALGORITHM.md, "Oclgrind and reused buffers"). */
static void check_stages(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_solver_sph()->build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size, sizes[] = {1, 37, wg - 1, wg + 1}, first = test_small() ? 1 : 0;
    size_t count = test_small() ? 2 : 4, most = sizes[count - 1] > 37 ? sizes[count - 1] : 37;
    pbfcl_scene s;
    sph_scene(&s);
    s.solver.artificial_viscosity = 0.5f; /* the viscosity shows beside the pressure */
    s.solver.dt = 1e-4f;                  /* a step of the CFL condition's order */
    s.solver.substeps = 1;
    float *x = malloc(most * 12), *v = malloc(most * 12);
    random_state(most, x, v);
    pbfcl_sim *sim = NULL;
    size_t have = first ? sizes[first] : 0;
    ck_assert_int_eq(pbfcl_sim_create_capacity(&sim, cl, &s, most, x, have), PBFCL_OK);
    if (have > 0) {
        ck_assert_int_eq(pbfcl_sim_write(sim, NULL, v), PBFCL_OK);
        check_stages_n(sim, &s, have);
    }
    for (size_t k = first; k < count; k++) {
        if (sizes[k] <= have)
            continue;
        ck_assert_int_eq(pbfcl_sim_append(sim, x + 3 * have, v + 3 * have, sizes[k] - have),
                         PBFCL_OK);
        have = sizes[k];
        check_stages_n(sim, &s, have);
    }
    if (test_small())
        fprintf(stderr, "    n = 1 and the work-group size +- 1 are not run under Oclgrind (a "
                        "simulation grown by appending draws false reports there); they run on "
                        "every real device\n");
    pbfcl_sim_destroy(sim);
    free(x);
    free(v);
}

START_TEST(test_sph_stages_reference)
{
    test_each_device(check_stages);
}
END_TEST

/* A profiled frame records time in every stage sph declares and in no other; a running
 * solver refuses a change of method. */
static void check_method_stages(pbfcl_cl *cl)
{
    if (test_small()) { /* Oclgrind: see docs/ALGORITHM.md, "Oclgrind and reused buffers" */
        fprintf(stderr, "    the stages of a frame are not checked under Oclgrind: a second "
                        "simulation here inherits the first one's records of initialised bytes "
                        "and gets false reports; it runs on every real device\n");
        return;
    }
    const pbfcl_solver_method *m = pbfcl_solver_sph();
    ck_assert_str_eq(m->name, "sph");
    pbfcl_scene s;
    sph_scene(&s);
    s.solver.dt = 0.002f; /* a short frame */
    size_t n = 100;
    float *x = malloc(n * 12), *v = malloc(n * 12);
    random_state(n, x, v);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, x, n), PBFCL_OK);
    check_frame_stages(sim, m);
    pbfcl_scene other = s;
    other.solver.method = PBFCL_METHOD_PBF;
    log_text[0] = '\0';
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
    ck_assert_int_eq(pbfcl_sim_set_scene(sim, &other), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    ck_assert_ptr_nonnull(strstr(log_text, "solver.method cannot change"));
    free(x);
    free(v);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_sph_method_stages)
{
    test_each_device(check_method_stages);
}
END_TEST

/* A frame of more launches than a profile holds at once (500 steps, about 10500 launches on
 * PoCL) is timed whole: each of the step's kernels counts its launches per step times the
 * steps (the profile reads its oldest events early instead of dropping the rest: at 4M
 * particles a bench's kernel table counted 341 of 533 steps). */
static void check_long_frame_profile(pbfcl_cl *cl)
{
    if (test_small()) {
        fprintf(stderr,
                "    the long frame is not profiled under Oclgrind (10^4 launches); it runs "
                "on every real device\n");
        return;
    }
    pbfcl_scene s;
    sph_scene(&s);
    s.solver.substeps = 500; /* the least number of steps in the frame */
    size_t n = 37;
    float *x = malloc(n * 12), *v = malloc(n * 12);
    random_state(n, x, v);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, x, n), PBFCL_OK);
    pbfcl_profile *prof = calloc(1, sizeof *prof);
    double ms[PBFCL_STAGE_COUNT] = {0};
    ck_assert_int_eq(pbfcl_sim_step(sim, prof), PBFCL_OK);
    int launched = prof->count + prof->flushed, steps = pbfcl_sim_substeps(sim);
    ck_assert_int_eq(pbfcl_profile_collect(prof, ms), CL_SUCCESS);
    ck_assert_int_ge(steps, 500);
    ck_assert_msg(launched > PBFCL_PROFILE_MAX_EVENTS, "%d launches", launched);
    const char *names[] = {"sph_density", "sph_force", "sph_verlet_x", "sph_verlet_v"};
    const long long per_step[] = {2, 2, 1, 1};
    long long total = 0;
    for (int k = 0; k < prof->kernel_count; k++)
        total += prof->kernels[k].launches;
    ck_assert_msg(total == launched, "%lld launches timed of %d", total, launched);
    for (int q = 0; q < 4; q++) {
        long long got = -1;
        for (int k = 0; k < prof->kernel_count; k++)
            if (!strcmp(prof->kernels[k].name, names[q]))
                got = prof->kernels[k].launches;
        ck_assert_msg(got == per_step[q] * steps, "%s: %lld launches in %d steps", names[q], got,
                      steps);
    }
    fprintf(stderr, "    a frame of %d steps: %d launches, all timed\n", steps, launched);
    free(prof);
    free(x);
    free(v);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_sph_long_frame_profile)
{
    test_each_device(check_long_frame_profile);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("sph");
    TCase *host = tcase_create("host");
    tcase_add_test(host, test_sph_constants);
    tcase_add_test(host, test_sph_sound_too_low);
    tcase_add_test(host, test_sph_dt_beyond_cfl);
    tcase_add_test(host, test_sph_unknown_method);
    suite_add_tcase(suite, host);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_test(dev, test_sph_stages_reference);
    tcase_add_test(dev, test_sph_method_stages);
    tcase_add_test(dev, test_sph_long_frame_profile);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
