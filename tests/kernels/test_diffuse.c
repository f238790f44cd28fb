/* Tests of the diffuse particles (spray, foam, bubbles; cl/diffuse/diffuse.cl,
 * host/core/diffuse/diffuse.c): each kernel of the stage against a plain C reference written from
 * Ihmsen et al.'s definitions at n = 1, the work-group size - 1, + 0, + 1 and primes; the motion of
 * each type against closed forms (spray: the parabola of the integrator; a bubble: its approach to
 * the terminal rise k_b |g| / k_d; foam: carried by a uniform flow, and its life running out); the
 * capacity never exceeded with the dropped count exact; and through the public API, a dam break
 * that makes spray, foam and bubbles beside a fluid at rest that makes none. */
#include "diffuse/diffuse.h"
#include "pbfcl.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NB 64u
#define H 0.04f /* kernel radius of the test fluid, m (r = 1 cm, h = 4r) */
#define R 0.01f

/* A fluid on the device: sorted positions and velocities, neighbour lists and cell ranges
 * from the real grid (hash, sort, reorder, cells, neighbours), and host copies in the same
 * (sorted) order. */
typedef struct fluid {
    pbfcl_grid grid;
    size_t n;
    float *pos, *vel; /* float4, sorted */
    unsigned *count, *list;
    cl_mem pos_buf, vel_buf, raw_pos_buf, raw_vel_buf;
    pbfcl_diffuse_fluid f;
} fluid;

static const float box_lo[3] = {-0.2f, 0.0f, -0.2f}, box_hi[3] = {0.2f, 0.4f, 0.2f};

static cl_mem upload(pbfcl_cl *cl, const void *data, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(cl->context, CL_MEM_READ_WRITE, bytes ? bytes : 16, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    if (bytes)
        ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, b, CL_TRUE, 0, bytes, data, 0, 0, 0),
                         CL_SUCCESS);
    return b;
}

/* Puts n fluid particles (pos4, vel4 in any order) on the device and sorts them. */
static void fluid_make(fluid *fl, pbfcl_cl *cl, const float *pos4, const float *vel4, size_t n)
{
    memset(fl, 0, sizeof *fl);
    fl->n = n;
    pbfcl_grid_params gp;
    ck_assert_int_eq(pbfcl_grid_params_fit(box_lo, box_hi, H, &gp), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_create(&fl->grid, cl, &gp, n, MAX_NB), PBFCL_OK);
    fl->raw_pos_buf = upload(cl, pos4, n * 16);
    fl->raw_vel_buf = upload(cl, vel4, n * 16);
    fl->pos_buf = upload(cl, pos4, n * 16);
    fl->vel_buf = upload(cl, vel4, n * 16);
    pbfcl_grid *g = &fl->grid;
    ck_assert_int_eq(pbfcl_grid_hash(g, fl->raw_pos_buf, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_sort(g, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_reorder(g, fl->raw_pos_buf, fl->pos_buf, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_reorder(g, fl->raw_vel_buf, fl->vel_buf, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_cells(g, n, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_grid_neighbours(g, fl->pos_buf, false, n, H, H, NULL), PBFCL_OK);
    fl->pos = malloc(n * 16), fl->vel = malloc(n * 16);
    fl->count = malloc(n * 4), fl->list = malloc(n * MAX_NB * 4);
    cl_command_queue q = cl->queue;
    ck_assert_int_eq(clEnqueueReadBuffer(q, fl->pos_buf, CL_TRUE, 0, n * 16, fl->pos, 0, 0, 0), 0);
    ck_assert_int_eq(clEnqueueReadBuffer(q, fl->vel_buf, CL_TRUE, 0, n * 16, fl->vel, 0, 0, 0), 0);
    ck_assert_int_eq(
        clEnqueueReadBuffer(q, g->neighbor_count_buf, CL_TRUE, 0, n * 4, fl->count, 0, 0, 0), 0);
    ck_assert_int_eq(
        clEnqueueReadBuffer(q, g->neighbor_buf, CL_TRUE, 0, n * MAX_NB * 4, fl->list, 0, 0, 0), 0);
    fl->f = (pbfcl_diffuse_fluid){n,
                                  fl->pos_buf,
                                  fl->vel_buf,
                                  g->neighbor_count_buf,
                                  g->neighbor_buf,
                                  g->params_buf,
                                  g->cell_start_buf,
                                  g->cell_end_buf};
}

static void fluid_free(fluid *fl)
{
    cl_mem b[] = {fl->pos_buf, fl->vel_buf, fl->raw_pos_buf, fl->raw_vel_buf};
    for (int k = 0; k < 4; k++)
        clReleaseMemObject(b[k]);
    pbfcl_grid_destroy(&fl->grid);
    free(fl->pos), free(fl->vel), free(fl->count), free(fl->list);
}

/* A jittered lattice of spacing 2r filling rows of 7 x 7 from y = 0.05 up (so the last layer
 * is a surface), velocities random in [-2, 2] plus 1 m/s up. */
static void lattice_state(size_t n, uint64_t seed, float *pos4, float *vel4)
{
    for (size_t i = 0; i < n; i++) {
        size_t x = i % 7, z = (i / 7) % 7, y = i / 49;
        pos4[4 * i + 0] = -0.06f + 2 * R * (float)x + test_randf(&seed, -0.002f, 0.002f);
        pos4[4 * i + 1] = 0.05f + 2 * R * (float)y + test_randf(&seed, -0.002f, 0.002f);
        pos4[4 * i + 2] = -0.06f + 2 * R * (float)z + test_randf(&seed, -0.002f, 0.002f);
        pos4[4 * i + 3] = 0.0f;
        for (int a = 0; a < 3; a++)
            vel4[4 * i + a] = test_randf(&seed, -2.0f, 2.0f) + (a == 1 ? 1.0f : 0.0f);
        vel4[4 * i + 3] = 0.0f;
    }
}

/* ---- references from the paper's definitions --------------------------------------------- */

static double ref_phi(double v, double lo, double hi)
{
    if (v <= lo)
        return 0.0;
    return v >= hi ? 1.0 : (v - lo) / (hi - lo);
}

static void sub3(const float *a, const float *b, double *out)
{
    for (int k = 0; k < 3; k++)
        out[k] = (double)a[k] - (double)b[k];
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* n_i = sum_j x_ij/|x_ij| (1 - |x_ij|/h) normalised, w = |n_i| / sum_j (1 - |x_ij|/h). */
static void ref_normal(const fluid *fl, size_t i, double out[4])
{
    double sum[3] = {0, 0, 0}, weight = 0;
    for (unsigned k = 0; k < fl->count[i]; k++) {
        size_t j = fl->list[k * fl->n + i];
        double x[3];
        sub3(fl->pos + 4 * i, fl->pos + 4 * j, x);
        double d = sqrt(dot3(x, x));
        if (d <= 0 || d >= H)
            continue;
        double w = 1 - d / H;
        for (int a = 0; a < 3; a++)
            sum[a] += x[a] / d * w;
        weight += w;
    }
    double len = sqrt(dot3(sum, sum));
    for (int a = 0; a < 3; a++)
        out[a] = len > 0 ? sum[a] / len : 0;
    out[3] = len > 0 ? len / weight : 0;
}

/* v_diff, kappa, E and n_d of fluid particle i (Ihmsen et al. 2012, section 4). */
static void ref_potential(const fluid *fl, const pbfcl_diffuse_params *p, size_t i,
                          const double *normals, double out[4])
{
    const float *vi = fl->vel + 4 * i;
    const double *ni = normals + 4 * i;
    double speed = sqrt((double)vi[0] * vi[0] + (double)vi[1] * vi[1] + (double)vi[2] * vi[2]);
    double vhat_n = speed > 0 ? (vi[0] * ni[0] + vi[1] * ni[1] + vi[2] * ni[2]) / speed : 0;
    bool crest = ni[3] >= 0.25 && speed > 0 && vhat_n >= 0.6;
    double v_diff = 0, kappa = 0;
    for (unsigned k = 0; k < fl->count[i]; k++) {
        size_t j = fl->list[k * fl->n + i];
        double x[3], v[3];
        sub3(fl->pos + 4 * i, fl->pos + 4 * j, x);
        sub3(vi, fl->vel + 4 * j, v);
        double d = sqrt(dot3(x, x)), vl = sqrt(dot3(v, v));
        if (d <= 0 || d >= H)
            continue;
        double w = 1 - d / H;
        if (vl > 0)
            v_diff += vl * (1 - dot3(v, x) / (vl * d)) * w;
        if (crest && -dot3(x, ni) < 0) /* x_ji . n_i < 0: j lies behind i */
            kappa += (1 - dot3(ni, normals + 4 * j)) * w;
    }
    double e = 0.5 * speed * speed;
    out[0] = v_diff, out[1] = kappa, out[2] = e;
    out[3] = ref_phi(e, p->ke_min, p->ke_max) *
             (p->k_ta * ref_phi(v_diff, p->ta_min, p->ta_max) +
              p->k_wc * ref_phi(kappa, p->wc_min, p->wc_max)) *
             p->dt;
}

static void base_params(pbfcl_diffuse_params *p, size_t capacity)
{
    float g[3] = {0.0f, -9.81f, 0.0f};
    pbfcl_scene scene;
    pbfcl_scene_defaults(&scene);
    scene.solver.multilevel = 0; /* the coarse correction: test_multilevel */
    for (int a = 0; a < 3; a++)
        scene.domain_min[a] = box_lo[a], scene.domain_max[a] = box_hi[a];
    scene.particle_radius = R;
    pbfcl_diffuse_params_from_scene(&scene, 1.0f / 60.0f, g, 7, capacity, p);
    p->ta_min = 0.5f, p->ta_max = 4.0f, p->wc_min = 0.1f, p->wc_max = 1.0f;
    p->ke_min = 0.5f, p->ke_max = 5.0f, p->k_ta = 50.0f, p->k_wc = 70.0f;
}

/* ---- normals, potentials and emission counts --------------------------------------------- */

static void check_potentials_n(pbfcl_cl *cl, size_t n, int *crests, int *trapped)
{
    float *pos = malloc(n * 16), *vel = malloc(n * 16);
    lattice_state(n, 1000 + n, pos, vel);
    fluid fl;
    fluid_make(&fl, cl, pos, vel, n);
    pbfcl_diffuse d;
    ck_assert_int_eq(pbfcl_diffuse_create(&d, cl, 4 * n + 8, n), PBFCL_OK);
    base_params(&d.params, d.capacity);
    ck_assert_int_eq(pbfcl_diffuse_normals(&d, &fl.f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_diffuse_potentials(&d, &fl.f, NULL), PBFCL_OK);
    float *normal = malloc(n * 16), *pot = malloc(n * 16);
    unsigned *flags = malloc(n * 4);
    ck_assert_int_eq(pbfcl_diffuse_read_fluid(&d, n, normal, pot), PBFCL_OK);
    ck_assert_int_eq(pbfcl_diffuse_read_flags(&d, n, flags), PBFCL_OK);
    double *rn = malloc(n * 4 * sizeof *rn);
    for (size_t i = 0; i < n; i++)
        ref_normal(&fl, i, rn + 4 * i);
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 4; a++)
            expect(test_close(normal[4 * i + a], rn[4 * i + a], 1e-4, 1e-4),
                   "n=%zu particle %zu normal[%d]: %g, reference %g", n, i, a,
                   (double)normal[4 * i + a], rn[4 * i + a]);
        double rp[4];
        ref_potential(&fl, &d.params, i, rn, rp);
        for (int a = 0; a < 4; a++)
            expect(test_close(pot[4 * i + a], rp[a], 1e-4, 1e-4),
                   "n=%zu particle %zu potential[%d]: %g, reference %g", n, i, a,
                   (double)pot[4 * i + a], rp[a]);
        /* the count: the device's n_d rounded with the hash's number 0 of this particle */
        double xi = pbfcl_diffuse_random(d.params.frame, (pbfcl_uint)i, 0);
        unsigned want = (unsigned)fmin(floor((double)pot[4 * i + 3] + xi), PBFCL_DIFFUSE_MAX_EMIT);
        expect(flags[i] == want, "n=%zu particle %zu emits %u, reference %u", n, i, flags[i], want);
        *crests += rp[1] > 0, *trapped += rp[0] > 0;
    }
    free(normal), free(pot), free(flags), free(rn), free(pos), free(vel);
    pbfcl_diffuse_destroy(&d);
    fluid_free(&fl);
}

static void check_potentials(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_diffuse_build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size, sizes[] = {1, wg - 1, wg, wg + 1, 37, 293};
    int crests = 0, trapped = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        if (sizes[k] > 0)
            check_potentials_n(cl, sizes[k], &crests, &trapped);
    /* the states reach both potentials' branches */
    ck_assert_msg(crests > 0 && trapped > 0, "no wave crest (%d) or trapped air (%d) tested",
                  crests, trapped);
}

START_TEST(test_diffuse_potentials)
{
    test_each_device(check_potentials);
}
END_TEST

START_TEST(test_diffuse_phi)
{
    /* Ihmsen's clamp at and between its thresholds, and the step when hi <= lo */
    ck_assert_float_eq(pbfcl_diffuse_phi(1.0f, 2.0f, 6.0f), 0.0f);
    ck_assert_float_eq(pbfcl_diffuse_phi(2.0f, 2.0f, 6.0f), 0.0f);
    ck_assert_float_eq(pbfcl_diffuse_phi(3.0f, 2.0f, 6.0f), 0.25f);
    ck_assert_float_eq(pbfcl_diffuse_phi(6.0f, 2.0f, 6.0f), 1.0f);
    ck_assert_float_eq(pbfcl_diffuse_phi(60.0f, 2.0f, 6.0f), 1.0f);
    ck_assert_float_eq(pbfcl_diffuse_phi(1.0f, 2.0f, 2.0f), 0.0f);
    ck_assert_float_eq(pbfcl_diffuse_phi(2.0f, 2.0f, 2.0f), 1.0f);
    /* the random numbers lie in [0, 1) and their mean is 1/2 */
    double sum = 0;
    for (unsigned i = 0; i < 10000; i++) {
        float x = pbfcl_diffuse_random(3, i, 1);
        ck_assert(x >= 0.0f && x < 1.0f);
        sum += x;
    }
    ck_assert_msg(fabs(sum / 10000 - 0.5) < 0.01, "mean %g", sum / 10000);
}
END_TEST

/* ---- advection and classification -------------------------------------------------------- */

/* One diffuse particle through a frame, from the definitions (brute force over the fluid). */
static void ref_advect(const fluid *fl, const pbfcl_diffuse_params *p, const float *in_p,
                       const float *in_v, double out_p[4], double out_v[4], int *keep)
{
    double h2 = (double)p->h * p->h, vs[3] = {0, 0, 0}, ks = 0;
    unsigned nb = 0;
    for (size_t j = 0; j < fl->n; j++) {
        double e[3];
        sub3(fl->pos + 4 * j, in_p, e);
        double d2 = dot3(e, e);
        if (d2 >= h2)
            continue;
        double q = 1 - d2 / h2, k = q * q * q;
        nb++;
        for (int a = 0; a < 3; a++)
            vs[a] += fl->vel[4 * j + a] * k;
        ks += k;
    }
    int type = nb < p->spray_below ? 0 : nb > p->bubble_above ? 2 : 1;
    double life = in_v[3], dt = p->dt;
    for (int a = 0; a < 3; a++) {
        double vf = ks > 0 ? vs[a] / ks : 0, g = p->gravity[a], u = in_v[a];
        if (type == 0)
            u += g * dt;
        else if (type == 1)
            u = vf;
        else
            u = (u + dt * (-p->buoyancy * g + p->drag * vf)) / (1 + p->drag * dt);
        out_v[a] = u;
        out_p[a] = in_p[a] + u * dt;
    }
    if (type == 1)
        life -= dt;
    bool inside = true;
    for (int a = 0; a < 3; a++)
        inside = inside && out_p[a] >= p->box_min[a] && out_p[a] <= p->box_max[a];
    double share = fmin(fmax(life / p->lifetime, 0), 0.999);
    out_p[3] = type + share;
    out_v[3] = life;
    *keep = life > 0 && inside;
}

static void check_advect_n(pbfcl_cl *cl, size_t count, int seen[3])
{
    size_t n = 300;
    float *pos = malloc(n * 16), *vel = malloc(n * 16);
    lattice_state(n, 77, pos, vel);
    fluid fl;
    fluid_make(&fl, cl, pos, vel, n);
    pbfcl_diffuse d;
    ck_assert_int_eq(pbfcl_diffuse_create(&d, cl, count, n), PBFCL_OK);
    base_params(&d.params, count);
    d.params.lifetime = 0.5f;
    uint64_t seed = 5 + count;
    float *dp = malloc(count * 16), *dv = malloc(count * 16);
    for (size_t i = 0; i < count; i++) { /* in and around the fluid, some at the box's edge */
        dp[4 * i + 0] = test_randf(&seed, -0.1f, 0.1f);
        dp[4 * i + 1] = test_randf(&seed, 0.0f, 0.2f);
        dp[4 * i + 2] = i % 9 == 0 ? 0.1999f : test_randf(&seed, -0.1f, 0.1f);
        dp[4 * i + 3] = 1.5f;
        for (int a = 0; a < 3; a++)
            dv[4 * i + a] = test_randf(&seed, -1.0f, 1.0f);
        dv[4 * i + 3] = i % 5 == 0 ? 0.01f : test_randf(&seed, 0.02f, 0.5f);
    }
    ck_assert_int_eq(pbfcl_diffuse_write(&d, dp, dv, count), PBFCL_OK);
    ck_assert_int_eq(pbfcl_diffuse_advect(&d, &fl.f, NULL), PBFCL_OK);
    float *op = malloc(count * 16), *ov = malloc(count * 16);
    unsigned *keep = malloc(count * 4);
    ck_assert_int_eq(pbfcl_diffuse_read(&d, op, ov), PBFCL_OK);
    ck_assert_int_eq(pbfcl_diffuse_read_flags(&d, count, keep), PBFCL_OK);
    for (size_t i = 0; i < count; i++) {
        double rp[4], rv[4];
        int rk;
        ref_advect(&fl, &d.params, dp + 4 * i, dv + 4 * i, rp, rv, &rk);
        expect(floorf(op[4 * i + 3]) == floor(rp[3]), "count %zu particle %zu: type %g, ref %g",
               count, i, (double)op[4 * i + 3], rp[3]);
        for (int a = 0; a < 4; a++) {
            expect(test_close(op[4 * i + a], rp[a], 1e-5, 1e-4),
                   "count %zu particle %zu pos[%d]: %g, reference %g", count, i, a,
                   (double)op[4 * i + a], rp[a]);
            expect(test_close(ov[4 * i + a], rv[a], 1e-5, 1e-4),
                   "count %zu particle %zu vel[%d]: %g, reference %g", count, i, a,
                   (double)ov[4 * i + a], rv[a]);
        }
        expect((int)keep[i] == rk, "count %zu particle %zu keep %u, reference %d", count, i,
               keep[i], rk);
        seen[(int)floor(rp[3])]++;
    }
    free(op), free(ov), free(keep), free(dp), free(dv), free(pos), free(vel);
    pbfcl_diffuse_destroy(&d);
    fluid_free(&fl);
}

static void check_advect(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_diffuse_build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size, sizes[] = {1, wg - 1, wg, wg + 1, 101};
    int seen[3] = {0, 0, 0};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        if (sizes[k] > 0)
            check_advect_n(cl, sizes[k], seen);
    ck_assert_msg(seen[0] > 0 && seen[1] > 0 && seen[2] > 0,
                  "every type is tested: spray %d, foam %d, bubbles %d", seen[0], seen[1], seen[2]);
}

START_TEST(test_diffuse_advect)
{
    test_each_device(check_advect);
}
END_TEST

/* ---- closed forms ----------------------------------------------------------------------- */

/* A fluid of one particle far from where the diffuse particles go (a grid needs one). */
static void far_fluid(fluid *fl, pbfcl_cl *cl, float vx)
{
    float p[4] = {0.19f, 0.39f, 0.19f, 0}, v[4] = {vx, 0, 0, 0};
    fluid_make(fl, cl, p, v, 1);
}

/* A block of fluid at rest (or all moving at u) filling x, z in [-0.1, 0.1], y in [0, 0.3]. */
static void block_fluid(fluid *fl, pbfcl_cl *cl, const float u[3])
{
    size_t side = 11, tall = 16, n = side * side * tall;
    float *pos = malloc(n * 16), *vel = malloc(n * 16);
    size_t i = 0;
    for (size_t y = 0; y < tall; y++)
        for (size_t z = 0; z < side; z++)
            for (size_t x = 0; x < side; x++, i++) {
                float c[3] = {-0.1f + 2 * R * x, 0.005f + 2 * R * y, -0.1f + 2 * R * z};
                for (int a = 0; a < 3; a++)
                    pos[4 * i + a] = c[a], vel[4 * i + a] = u[a];
                pos[4 * i + 3] = vel[4 * i + 3] = 0;
            }
    fluid_make(fl, cl, pos, vel, n);
    free(pos), free(vel);
}

/* Spray: falls under gravity alone; with the integrator's v += g dt, x += v dt the position
 * after k frames is x0 + v0 k dt + g dt^2 k (k + 1) / 2, within g dt t / 2 of the parabola. */
static void check_spray(pbfcl_cl *cl)
{
    fluid fl;
    far_fluid(&fl, cl, 0.0f);
    pbfcl_diffuse d;
    ck_assert_int_eq(pbfcl_diffuse_create(&d, cl, 4, 1), PBFCL_OK);
    base_params(&d.params, 4);
    d.params.k_ta = d.params.k_wc = 0.0f; /* no emission */
    const float x0[4] = {-0.15f, 0.1f, 0.0f, 0.999f}, v0[4] = {0.5f, 2.0f, -0.3f, 1.0f};
    ck_assert_int_eq(pbfcl_diffuse_write(&d, x0, v0, 1), PBFCL_OK);
    double dt = d.params.dt, g = -9.81;
    for (int k = 1; k <= 20; k++) { /* 1/3 s: it rises and falls back to y = 0.22 m */
        ck_assert_int_eq(pbfcl_diffuse_update(&d, &fl.f, NULL), PBFCL_OK);
        ck_assert_uint_eq(d.count, 1);
        float p[4], v[4];
        ck_assert_int_eq(pbfcl_diffuse_read(&d, p, v), PBFCL_OK);
        double want[3] = {x0[0] + v0[0] * k * dt,
                          x0[1] + v0[1] * k * dt + g * dt * dt * k * (k + 1) / 2,
                          x0[2] + v0[2] * k * dt};
        for (int a = 0; a < 3; a++)
            ck_assert_msg(test_close(p[a], want[a], 2e-5, 1e-4), "frame %d x[%d] %g, want %g", k, a,
                          (double)p[a], want[a]);
        double t = k * dt, parabola = x0[1] + v0[1] * t + 0.5 * g * t * t;
        ck_assert(fabs(p[1] - parabola) <= 0.5 * fabs(g) * dt * t + 1e-5);
        ck_assert_float_eq(floorf(p[3]), 0.0f); /* spray */
        ck_assert_float_eq(v[3], 1.0f);         /* spray keeps its life */
    }
    pbfcl_diffuse_destroy(&d);
    fluid_free(&fl);
}

/* A bubble inside fluid at rest: v_k = v_inf (1 - (1 + k_d dt)^-k), v_inf = -k_b g / k_d. */
static void check_bubble(pbfcl_cl *cl)
{
    fluid fl;
    const float rest[3] = {0, 0, 0};
    block_fluid(&fl, cl, rest);
    pbfcl_diffuse d;
    ck_assert_int_eq(pbfcl_diffuse_create(&d, cl, 4, fl.n), PBFCL_OK);
    base_params(&d.params, 4);
    d.params.buoyancy = 0.5f, d.params.drag = 20.0f;
    const float x0[4] = {0.0f, 0.1f, 0.0f, 2.999f}, v0[4] = {0, 0, 0, 1.0f};
    ck_assert_int_eq(pbfcl_diffuse_write(&d, x0, v0, 1), PBFCL_OK);
    double dt = d.params.dt, vinf = 0.5 * 9.81 / 20.0, y = x0[1];
    for (int k = 1; k <= 20; k++) {
        ck_assert_int_eq(pbfcl_diffuse_update(&d, &fl.f, NULL), PBFCL_OK);
        float p[4], v[4];
        ck_assert_int_eq(pbfcl_diffuse_read(&d, p, v), PBFCL_OK);
        double want = vinf * (1 - pow(1 + 20.0 * dt, -k));
        y += want * dt;
        ck_assert_msg(test_close(v[1], want, 1e-5, 1e-4), "frame %d rise %g, want %g", k,
                      (double)v[1], want);
        ck_assert_msg(test_close(p[1], y, 1e-5, 1e-4), "frame %d y %g, want %g", k, (double)p[1],
                      y);
        ck_assert(fabsf(v[0]) < 1e-6f && fabsf(v[2]) < 1e-6f);
        ck_assert_float_eq(floorf(p[3]), 2.0f); /* a bubble */
    }
    float v[4];
    ck_assert_int_eq(pbfcl_diffuse_read(&d, NULL, v), PBFCL_OK);
    ck_assert_msg(fabs(v[1] - vinf) < 0.01 * vinf, "terminal rise %g, want %g", (double)v[1], vinf);
    pbfcl_diffuse_destroy(&d);
    fluid_free(&fl);
}

/* Foam on fluid moving uniformly at u: it moves with u and loses dt of life each frame; with
 * dt = 1/64 s and a life of 5/64 s (exact in floats) it is gone after the fifth frame. */
static void check_foam(pbfcl_cl *cl)
{
    fluid fl;
    const float u[3] = {0.25f, -0.125f, 0.5f};
    block_fluid(&fl, cl, u);
    pbfcl_diffuse d;
    ck_assert_int_eq(pbfcl_diffuse_create(&d, cl, 4, fl.n), PBFCL_OK);
    base_params(&d.params, 4);
    d.params.dt = 1.0f / 64.0f;
    d.params.spray_below = 1, d.params.bubble_above = 1000; /* foam wherever there is fluid */
    d.params.k_ta = d.params.k_wc = 0.0f;
    d.params.lifetime = 5.0f / 64.0f;
    const float x0[4] = {-0.05f, 0.15f, -0.05f, 1.999f}, v0[4] = {0, 0, 0, 5.0f / 64.0f};
    ck_assert_int_eq(pbfcl_diffuse_write(&d, x0, v0, 1), PBFCL_OK);
    for (int k = 1; k <= 5; k++) {
        float p[4], v[4];
        ck_assert_int_eq(pbfcl_diffuse_update(&d, &fl.f, NULL), PBFCL_OK);
        ck_assert_uint_eq(d.count, k < 5 ? 1u : 0u); /* gone when its life reaches 0 */
        if (k == 5)
            break;
        ck_assert_int_eq(pbfcl_diffuse_read(&d, p, v), PBFCL_OK);
        for (int a = 0; a < 3; a++) {
            ck_assert_msg(test_close(v[a], u[a], 1e-6, 1e-5), "frame %d v[%d] %g", k, a,
                          (double)v[a]);
            ck_assert(test_close(p[a], x0[a] + u[a] * k / 64.0, 1e-6, 1e-5));
        }
        ck_assert_float_eq(v[3], (5.0f - (float)k) / 64.0f);
        ck_assert_float_eq(floorf(p[3]), 1.0f); /* foam */
    }
    pbfcl_diffuse_destroy(&d);
    fluid_free(&fl);
}

START_TEST(test_diffuse_motion)
{
    test_each_device(check_spray);
    test_each_device(check_bubble);
    test_each_device(check_foam);
}
END_TEST

/* ---- emission and the capacity ---------------------------------------------------------- */

/* Each of n fluid particles emits exactly 3 (n_d = 3 exactly: Phi = 1 for every potential with
 * thresholds 0, k_ta dt = 3, no wave crest): the first capacity are kept, in emitter order,
 * each where the paper's cylinder puts it; the rest are dropped and counted; the next frame's
 * emissions are all dropped while the survivors stay. */
static void check_capacity_n(pbfcl_cl *cl, size_t n, size_t capacity)
{
    float *pos = malloc(n * 16), *vel = malloc(n * 16);
    lattice_state(n, 9 + n, pos, vel);
    fluid fl;
    fluid_make(&fl, cl, pos, vel, n);
    pbfcl_diffuse d;
    ck_assert_int_eq(pbfcl_diffuse_create(&d, cl, capacity, n), PBFCL_OK);
    base_params(&d.params, capacity);
    d.params.dt = 1.0f / 64.0f;
    d.params.ta_min = d.params.ta_max = 0.0f, d.params.ke_min = d.params.ke_max = 0.0f;
    d.params.wc_min = d.params.wc_max = 1e30f;
    d.params.k_ta = 192.0f, d.params.k_wc = 0.0f, d.params.lifetime = 100.0f;
    for (int frame = 0; frame < 2; frame++) {
        size_t before = d.count;
        ck_assert_int_eq(pbfcl_diffuse_update(&d, &fl.f, NULL), PBFCL_OK);
        size_t total = before + 3 * n, kept = total < capacity ? total : capacity;
        ck_assert_uint_eq(d.count, kept);
        unsigned long long dropped = 0;
        for (int f = 0, c = 0; f <= frame; f++) { /* every frame's overflow, added up */
            size_t t = (size_t)c + 3 * n, k = t < capacity ? t : capacity;
            dropped += t - k;
            c = (int)k;
        }
        ck_assert_uint_eq(d.dropped, dropped);
        if (frame > 0)
            break;
        float *p = malloc(kept * 16), *v = malloc(kept * 16);
        ck_assert_int_eq(pbfcl_diffuse_read(&d, p, v), PBFCL_OK);
        for (size_t s = 0; s < kept; s++) { /* slot s: particle s % 3 of fluid particle s / 3 */
            size_t j = s / 3, k = s % 3;
            const float *xj = fl.pos + 4 * j, *vj = fl.vel + 4 * j;
            double rad[3], along = 0, radial2 = 0, sp = 0;
            for (int a = 0; a < 3; a++)
                sp += (double)vj[a] * vj[a];
            sp = sqrt(sp);
            for (int a = 0; a < 3; a++) /* the velocity less v_j is the radial offset */
                rad[a] = v[4 * s + a] - vj[a], radial2 += rad[a] * rad[a];
            for (int a = 0; a < 3; a++)
                along += (p[4 * s + a] - xj[a] - rad[a]) * vj[a] / sp;
            double xr = pbfcl_diffuse_random(d.params.frame, (pbfcl_uint)j, 1 + 3 * (unsigned)k);
            double xh = pbfcl_diffuse_random(d.params.frame, (pbfcl_uint)j, 3 + 3 * (unsigned)k);
            expect(test_close(sqrt(radial2), R * sqrt(xr), 1e-6, 1e-4),
                   "slot %zu radius %g, want r sqrt(X_r) = %g", s, sqrt(radial2), R * sqrt(xr));
            expect(test_close(along, xh * sp * d.params.dt, 1e-6, 1e-3),
                   "slot %zu along the axis %g, want %g", s, along, xh * sp * d.params.dt);
            double perp = 0;
            for (int a = 0; a < 3; a++)
                perp += rad[a] * vj[a] / sp;
            expect(fabs(perp) < 1e-6, "slot %zu: the offset is not radial (%g)", s, perp);
            expect(v[4 * s + 3] == 100.0f, "slot %zu life %g", s, (double)v[4 * s + 3]);
        }
        free(p), free(v);
    }
    pbfcl_diffuse_destroy(&d);
    fluid_free(&fl);
    free(pos), free(vel);
}

static void check_capacity(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_diffuse_build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size;
    check_capacity_n(cl, 1, 1);          /* 2 of 3 dropped */
    check_capacity_n(cl, 37, 100);       /* 111: 11 dropped, then all 111 */
    check_capacity_n(cl, wg + 1, 10000); /* all fit the first time */
    check_capacity_n(cl, wg - 1 > 0 ? wg - 1 : 1, 3 * wg - 4);
}

START_TEST(test_diffuse_capacity)
{
    test_each_device(check_capacity);
}
END_TEST

/* ---- physics through the public API ----------------------------------------------------- */

/* A context on the device the kernel tests use ($PBFCL_DEVICE), with their kernels. */
static pbfcl_context *api_context(void)
{
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.kernel_dir = getenv("PBFCL_KERNEL_DIR"); /* as test_each_device builds them */
    char idx[16];
    int sel = test_selected_device();
    if (sel >= 0) {
        snprintf(idx, sizeof idx, "%d", sel);
        cd.device = idx;
    }
    pbfcl_context *ctx = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &cd, &ctx), PBFCL_OK);
    return ctx;
}

/* A scene's solver with diffuse particles on. */
static pbfcl_solver *api_solver(pbfcl_context *ctx, const char *scene, size_t particles,
                                size_t diffuse)
{
    pbfcl_scene_setup *setup;
    ck_assert_int_eq(pbfcl_scene_setup_load(scene, &setup), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_set_particle_count(setup, particles), PBFCL_OK);
    float *pos = NULL;
    size_t n = 0;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &pos, &n), PBFCL_OK);
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    sd.capacity = n;
    ck_assert_int_eq(pbfcl_scene_setup_get_params(setup, &sd.scene, &sd.solver), PBFCL_OK);
    pbfcl_solver *s;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &sd, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_diffuse(s, diffuse), PBFCL_OK);
    pbfcl_free(pos);
    pbfcl_scene_setup_destroy(setup);
    return s;
}

START_TEST(test_diffuse_dam_break)
{
    if (test_device_count() == 0)
        return;
    pbfcl_context *ctx = api_context();
    size_t cap = 20000, particles = test_small() ? 800 : 4000;
    pbfcl_solver *s = api_solver(ctx, "dam-break", particles, cap);
    size_t most = 0, count = 0;
    int types[3] = {0, 0, 0};
    pbfcl_timers t;
    for (int frame = 0; frame < 90; frame++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, &t), PBFCL_OK);
        ck_assert_uint_eq(pbfcl_solver_diffuse_count(s, &count, NULL), PBFCL_OK);
        ck_assert_uint_le(count, cap);
        double diffuse_ms = 0.0;
        ck_assert_int_eq(pbfcl_solver_timer_ms(s, "diffuse", &diffuse_ms), PBFCL_OK);
        if (count > 0)
            ck_assert(diffuse_ms > 0.0);
        most = count > most ? count : most;
        if (frame % 10 == 9 && count > 0) {
            float *p = malloc(count * 16);
            ck_assert_int_eq(pbfcl_solver_get_diffuse(s, p, NULL, count), PBFCL_OK);
            for (size_t i = 0; i < count; i++)
                types[(int)p[4 * i + 3]]++;
            free(p);
        }
    }
    printf("dam break, %zu particles: at most %zu diffuse; spray %d, foam %d, bubbles %d seen\n",
           particles, most, types[0], types[1], types[2]);
    ck_assert_msg(most >= 50, "a dam break made only %zu diffuse particles", most);
    ck_assert_msg(types[0] > 0 && types[1] > 0 && types[2] > 0, "spray %d foam %d bubbles %d",
                  types[0], types[1], types[2]);
    /* wrong sizes and off */
    float one[4];
    ck_assert_int_eq(pbfcl_solver_get_diffuse(s, one, NULL, count + 1), PBFCL_ERR_BUFFER_SIZE);
    ck_assert_int_eq(pbfcl_solver_set_diffuse(s, 0), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_diffuse_count(s, &count, NULL), PBFCL_OK);
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, &t), PBFCL_OK);
    double off_ms = -1.0;
    ck_assert_int_eq(pbfcl_solver_timer_ms(s, "diffuse", &off_ms), PBFCL_OK);
    ck_assert(off_ms == 0.0); /* off: the stage does not run */
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

/* Fluid at rest: a layer over the whole floor settles with speeds far below sqrt(2 ke_min)
 * (1 m/s at the default 0.5 J/kg), so Phi of the kinetic energy is 0, n_d is 0 and floor(0 +
 * X) is 0 for X < 1: exactly none are emitted. */
START_TEST(test_diffuse_rest)
{
    if (test_device_count() == 0)
        return;
    pbfcl_context *ctx = api_context();
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    sd.scene.domain_min[0] = sd.scene.domain_min[1] = sd.scene.domain_min[2] = 0.0f;
    sd.scene.domain_max[0] = sd.scene.domain_max[2] = 0.2f, sd.scene.domain_max[1] = 0.3f;
    size_t side = 10, layers = 6, n = side * side * layers;
    float *pos = malloc(n * 12);
    for (size_t i = 0; i < n; i++) {
        pos[3 * i + 0] = 0.01f + 0.02f * (float)(i % side);
        pos[3 * i + 2] = 0.01f + 0.02f * (float)((i / side) % side);
        pos[3 * i + 1] = 0.01f + 0.02f * (float)(i / (side * side));
    }
    sd.capacity = n;
    pbfcl_solver *s;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &sd, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_diffuse(s, 1000), PBFCL_OK);
    for (int frame = 0; frame < 60; frame++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        size_t count;
        ck_assert_int_eq(pbfcl_solver_diffuse_count(s, &count, NULL), PBFCL_OK);
        ck_assert_msg(count == 0, "frame %d: %zu diffuse particles in a fluid at rest", frame,
                      count);
    }
    pbfcl_stats st;
    ck_assert_int_eq(pbfcl_solver_stats(s, &st), PBFCL_OK);
    ck_assert_msg(st.max_speed < 0.5, "the layer is not at rest: %g m/s", st.max_speed);
    free(pos);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("diffuse");
    TCase *host = tcase_create("host");
    tcase_add_test(host, test_diffuse_phi);
    suite_add_tcase(suite, host);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_test(dev, test_diffuse_potentials);
    tcase_add_test(dev, test_diffuse_advect);
    tcase_add_test(dev, test_diffuse_motion);
    tcase_add_test(dev, test_diffuse_capacity);
    if (!test_small()) { /* the physics runs whole simulations: not under Oclgrind */
        tcase_add_test(dev, test_diffuse_dam_break);
        tcase_add_test(dev, test_diffuse_rest);
    }
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
