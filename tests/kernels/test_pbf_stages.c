/* Reference tests of the per-particle PBF stages that need no neighbours or feed the host:
 * predict (forces, x*, confinement to the walls) and update, each against a plain C reference
 * at n = 1 and the work-group size - 1, + 0 and + 1 (the partial and the extra work-group);
 * then stats, bounds and copy_positions as the solver calls them (the passes themselves are
 * tested in test_particles): the walls, mass and box it gives them. The references use the
 * scene's values, not the product's derived constants. */
#include "pbf/pbf.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "sim/solver_method.h"
#include "stages_ref.h"
#include "test_util.h"
#include "wall_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A 0.5 m box, r = 1 cm, tilted gravity (three non-zero components). */
static void stage_scene(pbfcl_scene *s)
{
    pbfcl_scene_defaults(s);
    s->solver.multilevel = 0; /* the coarse correction: test_multilevel */
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = -0.25f;
        s->domain_max[a] = 0.25f;
    }
    s->gravity[0] = 1.5f;
    s->gravity[1] = -9.0f;
    s->gravity[2] = -0.5f;
}

/* n random positions in the box, some beyond the walls (box - r), and velocities. */
static void random_state(size_t n, uint64_t seed, float *x, float *v)
{
    for (size_t i = 0; i < 3 * n; i++) {
        x[i] = test_randf(&seed, -0.25f, 0.25f);
        v[i] = test_randf(&seed, -2.0f, 2.0f);
    }
}

/* predict's reference for particle i: v += g dt; x* = x + v dt; both x and x* clamped to
 * the walls; a velocity component into a wall that x* crossed is removed. */
static void ref_predict(const pbfcl_scene *s, const float *x, const float *v, double *xp,
                        double *vp, double *xc)
{
    double dt = (double)s->solver.dt / s->solver.substeps, r = s->particle_radius;
    for (int a = 0; a < 3; a++) {
        double lo = s->domain_min[a] + r, hi = s->domain_max[a] - r;
        double u = v[a] + (double)s->gravity[a] * dt, p = x[a] + u * dt;
        if ((p < lo && u < 0) || (p > hi && u > 0))
            u = 0.0;
        vp[a] = u;
        xp[a] = fmin(fmax(p, lo), hi);
        xc[a] = fmin(fmax((double)x[a], lo), hi);
    }
}

static void check_stages_n(pbfcl_cl *cl, size_t n)
{
    pbfcl_scene s;
    stage_scene(&s);
    float *x = malloc(n * 12), *v = malloc(n * 12), *got_x = malloc(n * 12),
          *got_v = malloc(n * 12), *got_p = malloc(n * 12), *rho = malloc(n * 4);
    random_state(n, 1234 + n, x, v);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, x, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_write(sim, NULL, v), PBFCL_OK);

    /* predict (no neighbours: slots stay in the caller's order) */
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, got_x, got_v, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, got_p, NULL, NULL, NULL, NULL), PBFCL_OK);
    for (size_t i = 0; i < n; i++) {
        double xp[3], vp[3], xc[3];
        ref_predict(&s, x + 3 * i, v + 3 * i, xp, vp, xc);
        for (int a = 0; a < 3; a++) {
            ck_assert_msg(test_close(got_p[3 * i + a], xp[a], 1e-6, 1e-5),
                          "n %zu: predict x*[%zu][%d] = %.7g, reference %.7g", n, i, a,
                          got_p[3 * i + a], xp[a]);
            ck_assert_msg(test_close(got_v[3 * i + a], vp[a], 1e-6, 1e-5),
                          "n %zu: predict v[%zu][%d] = %.7g, reference %.7g", n, i, a,
                          got_v[3 * i + a], vp[a]);
            ck_assert_msg(test_close(got_x[3 * i + a], xc[a], 1e-7, 1e-6),
                          "n %zu: predict x[%zu][%d] = %.7g, reference %.7g", n, i, a,
                          got_x[3 * i + a], xc[a]);
        }
    }
    /* update: v = (x* - x) / dt, x = x* */
    float *x_before = malloc(n * 12);
    memcpy(x_before, got_x, n * 12);
    ck_assert_int_eq(pbfcl_pbf_update(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, got_x, got_v, rho), PBFCL_OK);
    double dt = (double)s.solver.dt / s.solver.substeps;
    for (size_t i = 0; i < 3 * n; i++) {
        double want_v = ((double)got_p[i] - x_before[i]) / dt;
        ck_assert_msg(got_x[i] == got_p[i], "n %zu: update x[%zu] = %.7g, x* %.7g", n, i / 3,
                      got_x[i], got_p[i]);
        ck_assert_msg(test_close(got_v[i], want_v, 1e-4, 1e-4),
                      "n %zu: update v[%zu] = %.7g, (x* - x) / dt = %.7g", n, i / 3, got_v[i],
                      want_v);
    }
    /* stats, with a few particles moved beyond the walls (inside the box) */
    size_t beyond = 0;
    for (size_t i = 0; i < n; i += 3) {
        got_x[3 * i + (i % 3)] = (i % 2 ? 0.25f : -0.25f) * 0.999f; /* within r of the box */
        beyond++;
    }
    ck_assert_int_eq(pbfcl_sim_write(sim, got_x, NULL), PBFCL_OK);
    pbfcl_sim_stats st;
    ck_assert_int_eq(pbfcl_sim_stats_compute(sim, &st), PBFCL_OK);
    double r = s.particle_radius, ke = 0, vmax = 0, mom[3] = {0};
    /* the mass that puts the rest lattice (spacing 2r) at rho0 */
    double m = s.rest_density * pow(2.0 * r, 3) / ref_lattice_density(r, s.solver.h_ratio * r);
    unsigned outside = 0;
    for (size_t i = 0; i < n; i++) {
        double u2 = 0;
        bool out = false;
        for (int a = 0; a < 3; a++) {
            double q = got_x[3 * i + a];
            u2 += (double)got_v[3 * i + a] * got_v[3 * i + a];
            mom[a] += m * got_v[3 * i + a];
            out |= q < s.domain_min[a] + r || q > s.domain_max[a] - r;
        }
        ke += 0.5 * m * u2;
        vmax = fmax(vmax, sqrt(u2));
        outside += out;
    }
    ck_assert_uint_eq(outside, beyond); /* the reference itself sees the moved particles */
    ck_assert_msg(st.outside == outside, "n %zu: stats outside %u, reference %u", n, st.outside,
                  outside);
    ck_assert_uint_eq(st.nan, 0);
    ck_assert_msg(test_close(st.kinetic_energy, ke, 1e-9, 1e-4), "n %zu: kinetic %.7g, ref %.7g", n,
                  st.kinetic_energy, ke);
    ck_assert_msg(test_close(st.max_speed, vmax, 1e-6, 1e-5), "n %zu: max speed %.7g, ref %.7g", n,
                  st.max_speed, vmax);
    for (int a = 0; a < 3; a++)
        ck_assert_msg(test_close(st.momentum[a], mom[a], 1e-7, 1e-4),
                      "n %zu: momentum[%d] %.7g, ref %.7g", n, a, st.momentum[a], mom[a]);
    ck_assert_msg(st.density_error_avg < 1e-4 && st.density_error_max < 1e-4,
                  "densities are the rest density before any lambda: error %.3g %%",
                  st.density_error_avg);
    /* bounds */
    float b[3];
    ck_assert_int_eq(pbfcl_sim_bounds(sim, b), PBFCL_OK);
    double g = sqrt(1.5 * 1.5 + 9.0 * 9.0 + 0.5 * 0.5), down[3] = {1.5 / g, -9.0 / g, -0.5 / g};
    double reach = sqrt(3.0) * 0.5, up_max = 0, down_max = 0;
    for (size_t i = 0; i < n; i++) {
        double d = 0;
        for (int a = 0; a < 3; a++)
            d += got_x[3 * i + a] * down[a]; /* the box centre is 0 */
        d = fmin(fmax(d, -reach), reach);
        up_max = fmax(up_max, reach + d);
        down_max = fmax(down_max, reach - d);
    }
    ck_assert_msg(test_close(b[0], vmax, 1e-6, 1e-5), "n %zu: bounds |v| %.7g, ref %.7g", n, b[0],
                  vmax);
    ck_assert_msg(test_close(b[1], up_max, 1e-6, 1e-5), "n %zu: bounds[1] %.7g, ref %.7g", n, b[1],
                  up_max);
    ck_assert_msg(test_close(b[2], down_max, 1e-6, 1e-5), "n %zu: bounds[2] %.7g, ref %.7g", n,
                  b[2], down_max);
    /* copy_positions: (x, y, z, |v|), one float4 per particle, nothing beyond n */
    cl_int err;
    cl_mem dst = clCreateBuffer(cl->context, CL_MEM_READ_WRITE, (n + 1) * 16, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    float *out = malloc((n + 1) * 16);
    for (size_t i = 0; i < 4 * (n + 1); i++)
        out[i] = -7.0f;
    ck_assert_int_eq(
        clEnqueueWriteBuffer(cl->queue, dst, CL_TRUE, 0, (n + 1) * 16, out, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(pbfcl_sim_copy_positions(sim, dst), PBFCL_OK);
    ck_assert_int_eq(
        clEnqueueReadBuffer(cl->queue, dst, CL_TRUE, 0, (n + 1) * 16, out, 0, NULL, NULL),
        CL_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        double sp =
            sqrt((double)got_v[3 * i] * got_v[3 * i] + (double)got_v[3 * i + 1] * got_v[3 * i + 1] +
                 (double)got_v[3 * i + 2] * got_v[3 * i + 2]);
        for (int a = 0; a < 3; a++)
            ck_assert(out[4 * i + a] == got_x[3 * i + a]);
        ck_assert_msg(test_close(out[4 * i + 3], sp, 1e-6, 1e-5), "copy |v|[%zu] %.7g, ref %.7g", i,
                      out[4 * i + 3], sp);
    }
    ck_assert_msg(out[4 * n] == -7.0f, "copy_positions wrote past particle n - 1");
    clReleaseMemObject(dst);
    free(out);
    pbfcl_sim_destroy(sim);
    free(x);
    free(v);
    free(got_x);
    free(got_v);
    free(got_p);
    free(rho);
    free(x_before);
}

static void check_stages(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_solver_pbf()->build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size, sizes[] = {1, wg - 1, wg, wg + 1};
    for (size_t k = 0; k < 4; k++)
        check_stages_n(cl, sizes[k]);
}

START_TEST(test_stages_reference)
{
    test_each_device(check_stages);
}
END_TEST

/* The method behind the solver interface declares the stages its step records: a profiled
 * frame records time in every one of them and in no other. */
static void check_method_stages(pbfcl_cl *cl)
{
    const pbfcl_solver_method *m = pbfcl_solver_pbf();
    ck_assert_str_eq(m->name, "pbf");
    pbfcl_scene s;
    stage_scene(&s);
    size_t n = 300;
    float *x = malloc(n * 12), *v = malloc(n * 12);
    random_state(n, 99, x, v);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, x, n), PBFCL_OK);
    check_frame_stages(sim, m);
    free(x);
    free(v);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_method_stages)
{
    test_each_device(check_method_stages);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("pbf_stages");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_test(dev, test_stages_reference);
    tcase_add_test(dev, test_method_stages);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
