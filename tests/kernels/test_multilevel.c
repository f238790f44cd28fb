/* Tests of the multilevel coarse correction (host/core/pbf/multilevel.c, cl/pbf/multilevel.cl)
 * against a plain C reference in double precision: the grids of a box and which of them the
 * one-group kernel takes; each grid kernel (smooth, restrict with the residual, prolong with the
 * first sweep; the coarsest grid's sweeps; the V-cycle of the small grids in one work-group) on
 * random fields, with phi = 0 on the faces to air or at the air cells' centres, at awkward
 * sizes (1 x 1 x 1, work-group size +- 1 cells in a row, odd sizes that leave half-empty coarse
 * cells, work-groups of 1, 7 and more items than cells); and a whole correction of a compressed
 * block and of a lone particle (the density of x* with the walls, the cells' compression, the
 * V-cycles, the gradient, its limit, the box), through the one-group kernel and through the
 * per-level launches alone; in the tight box a second correction starts warm from the first's
 * phi. */
#include "pbf/multilevel.h"
#include "runtime/build_options.h"
#include "runtime/programs.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "sim/solver_method.h"
#include "test_util.h"
#include "wall_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference ------------------------------------------------------------------------ */

/* A grid: dims, cells, cell edge dx, phi, rhs, flags (1 fluid, 0 air, 2 and up solid: a
 * collision shape's cells, which carry no flux, as the walls beyond the grid), and where phi = 0
 * lies toward air, surface cells from a fluid cell's centre (1/2: on the face between; 1: at the
 * air cell's centre, as with collision shapes). */
typedef struct ref_grid {
    unsigned d[3];
    size_t cells;
    double dx, *phi, *rhs, surface;
    unsigned *flag;
} ref_grid;

static size_t ref_index(const ref_grid *g, unsigned x, unsigned y, unsigned z)
{
    return x + g->d[0] * ((size_t)y + g->d[1] * z);
}

/* Sum of the neighbours' phi (air, solid 0) inside the grid and their weights: 1 a fluid cell,
 * 1 / g->surface air (the face's gradient -phi / (surface dx)), 0 solid. */
static double ref_neighbours(const ref_grid *g, const double *phi, size_t c, double *m)
{
    unsigned x = c % g->d[0], y = (c / g->d[0]) % g->d[1], z = c / (g->d[0] * g->d[1]);
    int off[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
    double s = 0.0;
    *m = 0.0;
    for (int k = 0; k < 6; k++) {
        long nx = (long)x + off[k][0], ny = (long)y + off[k][1], nz = (long)z + off[k][2];
        if (nx < 0 || ny < 0 || nz < 0 || nx >= g->d[0] || ny >= g->d[1] || nz >= g->d[2])
            continue;
        size_t i = ref_index(g, (unsigned)nx, (unsigned)ny, (unsigned)nz);
        s += g->flag[i] == 1 ? phi[i] : 0.0;
        *m += g->flag[i] == 1 ? 1.0 : (g->flag[i] == 0 ? 1.0 / g->surface : 0.0);
    }
    return s;
}

static void ref_smooth(ref_grid *g)
{
    double *out = malloc(g->cells * sizeof *out), w = PBFCL_ML_WEIGHT;
    for (size_t c = 0; c < g->cells; c++) {
        double m, s = ref_neighbours(g, g->phi, c, &m);
        double jacobi = m > 0 ? (s - g->rhs[c] * g->dx * g->dx) / m : 0.0;
        out[c] = g->flag[c] == 1 ? g->phi[c] + w * (jacobi - g->phi[c]) : 0.0;
    }
    memcpy(g->phi, out, g->cells * sizeof *out);
    free(out);
}

static void ref_residual(const ref_grid *g, double *res)
{
    for (size_t c = 0; c < g->cells; c++) {
        double m, s = ref_neighbours(g, g->phi, c, &m);
        res[c] = g->flag[c] == 1 ? g->rhs[c] - (s - m * g->phi[c]) / (g->dx * g->dx) : 0.0;
    }
}

/* Coarse grid c from the residual res of fine grid f: air where a child inside f is, else fluid
 * where one is, else solid. */
static void ref_restrict(const ref_grid *f, const double *res, ref_grid *c)
{
    c->surface = f->surface;
    for (size_t k = 0; k < c->cells; k++) {
        unsigned x = k % c->d[0], y = (k / c->d[0]) % c->d[1], z = k / (c->d[0] * c->d[1]);
        double s = 0.0;
        unsigned any_air = 0, any_fluid = 0;
        for (unsigned ch = 0; ch < 8; ch++) {
            unsigned fx = 2 * x + (ch & 1), fy = 2 * y + ((ch >> 1) & 1), fz = 2 * z + (ch >> 2);
            if (fx < f->d[0] && fy < f->d[1] && fz < f->d[2]) {
                size_t i = ref_index(f, fx, fy, fz);
                s += res[i];
                any_air |= f->flag[i] == 0;
                any_fluid |= f->flag[i] == 1;
            }
        }
        c->flag[k] = any_air ? 0 : (any_fluid ? 1 : 2);
        c->rhs[k] = c->flag[k] == 1 ? s / 8.0 : 0.0;
        c->phi[k] = 0.0;
    }
}

static void ref_prolong(ref_grid *f, const ref_grid *c)
{
    for (size_t k = 0; k < f->cells; k++) {
        unsigned x = k % f->d[0], y = (k / f->d[0]) % f->d[1], z = k / (f->d[0] * f->d[1]);
        if (f->flag[k] == 1)
            f->phi[k] += c->phi[ref_index(c, x / 2, y / 2, z / 2)];
    }
}

static void grid_alloc(ref_grid *g, const unsigned d[3], double dx)
{
    memcpy(g->d, d, sizeof g->d);
    g->cells = (size_t)d[0] * d[1] * d[2];
    g->dx = dx;
    g->surface = 0.5;
    g->phi = calloc(g->cells, sizeof *g->phi);
    g->rhs = calloc(g->cells, sizeof *g->rhs);
    g->flag = calloc(g->cells, sizeof *g->flag);
}

static void grid_free(ref_grid *g)
{
    free(g->phi);
    free(g->rhs);
    free(g->flag);
}

static void ref_v_cycle(ref_grid *lv, int levels)
{
    for (int l = 0; l + 1 < levels; l++) {
        for (int s = 0; s < PBFCL_ML_PRE_SWEEPS; s++)
            ref_smooth(&lv[l]);
        double *res = malloc(lv[l].cells * sizeof *res);
        ref_residual(&lv[l], res);
        ref_restrict(&lv[l], res, &lv[l + 1]);
        free(res);
    }
    for (int s = 0; s < PBFCL_ML_COARSEST_SWEEPS; s++)
        ref_smooth(&lv[levels - 1]);
    for (int l = levels - 2; l >= 0; l--) {
        ref_prolong(&lv[l], &lv[l + 1]);
        for (int s = 0; s < PBFCL_ML_POST_SWEEPS; s++)
            ref_smooth(&lv[l]);
    }
}

/* ---- the grids ---------------------------------------------------------------------------- */

/* A 1 x 0.25 x 0.05 m box at h = 5 cm: 20 x 5 x 1 cells, halved (rounded up) down to 2 x 1 x 1;
 * a box smaller than a cell is one cell; a box 0.2 m wide at h = 4 cm is 5 cells wide where its
 * float edges measure a hair more (0.29f to 0.49f: 5.0000005 cells; a sixth cell stood empty
 * beyond the wall, as air) and 6 where it is a thousandth of a cell wider than 5. */
START_TEST(test_grids)
{
    float lo[3] = {0, 0, 0}, hi[3] = {1.0f, 0.25f, 0.05f};
    unsigned d[PBFCL_ML_MAX_LEVELS][3];
    int levels;
    pbfcl_ml_grids(lo, hi, 0.05f, &levels, d);
    unsigned want[][3] = {{20, 5, 1}, {10, 3, 1}, {5, 2, 1}, {3, 1, 1}, {2, 1, 1}};
    ck_assert_int_eq(levels, 5);
    for (int l = 0; l < levels; l++)
        for (int a = 0; a < 3; a++)
            ck_assert_uint_eq(d[l][a], want[l][a]);
    float tiny[3] = {0.01f, 0.01f, 0.01f};
    pbfcl_ml_grids(lo, tiny, 0.04f, &levels, d);
    ck_assert_int_eq(levels, 1);
    ck_assert_uint_eq(d[0][0] * d[0][1] * d[0][2], 1);
    float t0[3] = {0.29f, 0.29f, 0.29f}, t1[3] = {0.49f, 0.49f, 0.49f};
    ck_assert(((double)t1[0] - t0[0]) / 0.04f > 5.0); /* the hair the grid must not count */
    pbfcl_ml_grids(t0, t1, 0.04f, &levels, d);
    ck_assert_uint_eq(d[0][0], 5);
    float wider[3] = {0.2002f, 0.2002f, 0.2002f};
    pbfcl_ml_grids(lo, wider, 0.04f, &levels, d);
    ck_assert_uint_eq(d[0][0], 6);
}
END_TEST

/* Which grids ml_group takes at the 1M dam break's box (143 x 90 x 54 cells of h, 8 grids down
 * to 2 x 1 x 1): grids 3-7 have 1512 + 216 + 30 + 6 + 2 = 1766 cells, 9 bytes each (phi, rhs,
 * flag) and 4 per top cell (tmp): 21,942 bytes (with each array rounded up to 16 bytes 21,968),
 * within an NVIDIA GPU's 48 KiB; grid 2 adds 11,592 cells (166,590 bytes in all), beyond it.
 * With 2 MiB, grid 2 fits but has more than 16 cells per work-item of 512; grid 1 (87,480 cells)
 * does not fit 1 MiB. No local memory: no grid (the per-level launches take them all). */
START_TEST(test_group_plan)
{
    unsigned d[PBFCL_ML_MAX_LEVELS][3];
    int levels;
    float lo[3] = {0, 0, 0},
          hi[3] = {143 * 0.01f - 0.001f, 90 * 0.01f - 0.001f, 54 * 0.01f - 0.001f};
    pbfcl_ml_grids(lo, hi, 0.01f, &levels, d);
    ck_assert_int_eq(levels, 8);
    ck_assert_uint_eq(d[3][0] * d[3][1] * d[3][2], 1512);
    ck_assert_uint_eq(pbfcl_ml_group_bytes(levels, d, 3), 21968);
    ck_assert_int_eq(pbfcl_ml_group_first(levels, d, 48 * 1024, 1024), 3);
    ck_assert_int_eq(pbfcl_ml_group_first(levels, d, 21968, 1024), 3);
    ck_assert_int_eq(pbfcl_ml_group_first(levels, d, 21967, 1024), 4);
    ck_assert_int_eq(pbfcl_ml_group_first(levels, d, 2 << 20, 1024), 2);
    ck_assert_int_eq(pbfcl_ml_group_first(levels, d, 2 << 20, 512), 3);
    ck_assert_int_eq(pbfcl_ml_group_first(levels, d, 1 << 20, 1 << 20), 2);
    ck_assert_int_eq(pbfcl_ml_group_first(levels, d, 0, 1024), levels);
    ck_assert_uint_eq(pbfcl_ml_group_bytes(levels, d, levels), 0);
}
END_TEST

/* ---- the grid kernels --------------------------------------------------------------------- */

static cl_program build(pbfcl_cl *cl)
{
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_MULTILEVEL);
    pbfcl_build_config cfg;
    pbfcl_sim_kernel_config(&cl->dev, &cfg);
    char options[512];
    ck_assert_int_ge(pbfcl_build_options(&cfg, options, sizeof options), 0);
    cl_program program = NULL;
    ck_assert_int_eq(pbfcl_cl_build(cl, desc->files, desc->nfiles, options, &program), PBFCL_OK);
    return program;
}

static cl_mem device_buf(pbfcl_cl *cl, size_t bytes, const void *data)
{
    cl_mem b = NULL;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, bytes, "test", &b), PBFCL_OK);
    if (data && bytes)
        test_write_buffer(b, data, bytes);
    return b;
}

static void set_arg(cl_kernel k, int i, size_t size, const void *v)
{
    ck_assert_int_eq(clSetKernelArg(k, (cl_uint)i, size, v), CL_SUCCESS);
}

/* Arguments i .. i + 2: the cells per axis. */
static void set_dims(cl_kernel k, int i, const cl_uint4 *dims)
{
    for (int a = 0; a < 3; a++)
        set_arg(k, i + a, sizeof(cl_uint), &dims->s[a]);
}

/* A grid of random phi in [-1, 1], rhs in [0, 50], flags (5 in 8 fluid, 1 in 4 air, 1 in 8
 * solid: 2, 3 or 4, the cells of three shapes) and surface
 * (1/2 or 1), and its device copy (float phi, rhs; uint flags). */
typedef struct dev_grid {
    ref_grid g;
    cl_mem phi, rhs, flag, out;
    cl_uint4 dims;
} dev_grid;

static void dev_grid_make(pbfcl_cl *cl, dev_grid *dg, const unsigned d[3], double dx, uint64_t *rng)
{
    grid_alloc(&dg->g, d, dx);
    dg->g.surface = test_rand(rng) % 2 ? 0.5 : 1.0; /* on the face, or at the air cell's centre */
    size_t n = dg->g.cells;
    float *phi = malloc(n * 4), *rhs = malloc(n * 4);
    for (size_t c = 0; c < n; c++) {
        unsigned kind = (unsigned)(test_rand(rng) % 8);
        dg->g.flag[c] = kind < 2 ? 0u : (kind == 2 ? 2u + (unsigned)(test_rand(rng) % 3) : 1u);
        phi[c] = test_randf(rng, -1.0f, 1.0f);
        rhs[c] = test_randf(rng, 0.0f, 50.0f);
        dg->g.phi[c] = phi[c];
        dg->g.rhs[c] = rhs[c];
    }
    dg->phi = device_buf(cl, n * 4, phi);
    dg->rhs = device_buf(cl, n * 4, rhs);
    dg->flag = device_buf(cl, n * 4, dg->g.flag);
    dg->out = device_buf(cl, n * 4, phi);
    dg->dims = (cl_uint4){{d[0], d[1], d[2], (cl_uint)n}};
    free(phi);
    free(rhs);
}

static void dev_grid_free(dev_grid *dg)
{
    grid_free(&dg->g);
    pbfcl_cl_release_buffer(&dg->phi);
    pbfcl_cl_release_buffer(&dg->rhs);
    pbfcl_cl_release_buffer(&dg->flag);
    pbfcl_cl_release_buffer(&dg->out);
}

/* The device's n floats of buf against want (absolute near zero, relative elsewhere). */
static void expect_floats(cl_mem buf, const double *want, size_t n, const char *what)
{
    float *got = malloc(n * 4 + 4);
    test_read_buffer(buf, got, n * 4);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(test_close(got[i], want[i], 1e-4, 1e-4), "%s[%zu] = %.7g, want %.7g", what, i,
                      got[i], want[i]);
    free(got);
}

static void launch(pbfcl_cl *cl, cl_kernel k, size_t items)
{
    ck_assert_int_eq(pbfcl_cl_launch(cl, k, items, 64, NULL, PBFCL_STAGE_SOLVE), PBFCL_OK);
    ck_assert_int_eq(clFinish(cl->queue), CL_SUCCESS);
}

/* smooth, residual, restrict and prolong on one random grid of dims d. */
static void check_grid_kernels(pbfcl_cl *cl, cl_program program, const unsigned d[3], uint64_t *rng)
{
    dev_grid f;
    double dx = 0.04;
    dev_grid_make(cl, &f, d, dx, rng);
    cl_kernel k;
    float dx2 = (float)(dx * dx), inv_dx2 = (float)(1.0 / (dx * dx)), w = PBFCL_ML_WEIGHT;
    float surface = (float)(1.0 / f.g.surface);
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_smooth", &k), PBFCL_OK);
    cl_mem args[] = {f.phi, f.out, f.rhs, f.flag};
    for (int a = 0; a < 4; a++)
        set_arg(k, a, sizeof(cl_mem), &args[a]);
    set_dims(k, 4, &f.dims);
    set_arg(k, 7, 4, &dx2);
    set_arg(k, 8, 4, &w);
    set_arg(k, 9, 4, &surface);
    launch(cl, k, f.g.cells);
    clReleaseKernel(k);
    ref_grid smoothed = f.g;
    smoothed.phi = malloc(f.g.cells * sizeof(double));
    memcpy(smoothed.phi, f.g.phi, f.g.cells * sizeof(double));
    ref_smooth(&smoothed);
    expect_floats(f.out, smoothed.phi, f.g.cells, "smooth");
    free(smoothed.phi);

    /* the coarse grid from the residual, formed inside ml_restrict */
    double *res = malloc(f.g.cells * sizeof *res);
    ref_residual(&f.g, res);
    unsigned dc[3] = {(d[0] + 1) / 2, (d[1] + 1) / 2, (d[2] + 1) / 2};
    dev_grid c;
    dev_grid_make(cl, &c, dc, 2 * dx, rng);
    ref_restrict(&f.g, res, &c.g); /* c takes f's surface */
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_restrict", &k), PBFCL_OK);
    cl_mem rargs[] = {f.phi, f.rhs, f.flag};
    for (int a = 0; a < 3; a++)
        set_arg(k, a, sizeof(cl_mem), &rargs[a]);
    set_dims(k, 3, &f.dims);
    set_arg(k, 6, 4, &inv_dx2);
    set_arg(k, 7, sizeof(cl_mem), &c.rhs);
    set_arg(k, 8, sizeof(cl_mem), &c.flag);
    set_arg(k, 9, sizeof(cl_mem), &c.phi);
    set_dims(k, 10, &c.dims);
    set_arg(k, 13, 4, &surface);
    launch(cl, k, c.g.cells);
    clReleaseKernel(k);
    /* the residual is a difference of terms of 1e4 (phi / dx^2): scale the tolerance */
    float *got = malloc(c.g.cells * 4);
    test_read_buffer(c.rhs, got, c.g.cells * 4);
    for (size_t i = 0; i < c.g.cells; i++)
        ck_assert_msg(test_close(got[i] / 1e4, c.g.rhs[i] / 1e4, 1e-5, 1e-4),
                      "restrict rhs[%zu] = %g, want %g", i, got[i], c.g.rhs[i]);
    free(got);
    expect_floats(c.phi, c.g.phi, c.g.cells, "restrict phi");
    unsigned *flags = malloc(c.g.cells * 4);
    test_read_buffer(c.flag, flags, c.g.cells * 4);
    for (size_t i = 0; i < c.g.cells; i++)
        ck_assert_msg(flags[i] == c.g.flag[i], "restrict flag[%zu] = %u", i, flags[i]);
    free(flags);

    /* a coarse correction, prolonged and smoothed once (ml_prolong_smooth) */
    float *cphi = malloc(c.g.cells * 4);
    for (size_t i = 0; i < c.g.cells; i++)
        c.g.phi[i] = cphi[i] = test_randf(rng, -1.0f, 1.0f);
    test_write_buffer(c.phi, cphi, c.g.cells * 4);
    free(cphi);
    ref_prolong(&f.g, &c.g);
    ref_smooth(&f.g);
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_prolong_smooth", &k), PBFCL_OK);
    for (int a = 0; a < 4; a++)
        set_arg(k, a, sizeof(cl_mem), &args[a]);
    set_dims(k, 4, &f.dims);
    set_arg(k, 7, 4, &dx2);
    set_arg(k, 8, 4, &w);
    set_arg(k, 9, sizeof(cl_mem), &c.phi);
    set_dims(k, 10, &c.dims);
    set_arg(k, 13, 4, &surface);
    launch(cl, k, f.g.cells);
    clReleaseKernel(k);
    expect_floats(f.out, f.g.phi, f.g.cells, "prolong and smooth");
    free(res);
    dev_grid_free(&c);
    dev_grid_free(&f);
}

/* ml_coarsest's sweeps on a random grid of dims d (at most 2 x 2 x 2) against as many of the
 * reference's Jacobi sweeps. */
static void check_coarsest(pbfcl_cl *cl, cl_program program, const unsigned d[3], uint64_t *rng)
{
    dev_grid g;
    double dx = 0.32;
    dev_grid_make(cl, &g, d, dx, rng);
    for (int s = 0; s < PBFCL_ML_COARSEST_SWEEPS; s++)
        ref_smooth(&g.g);
    cl_kernel k;
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_coarsest", &k), PBFCL_OK);
    float dx2 = (float)(dx * dx), w = PBFCL_ML_WEIGHT, surface = (float)(1.0 / g.g.surface);
    cl_uint sweeps = PBFCL_ML_COARSEST_SWEEPS;
    cl_mem args[] = {g.phi, g.out, g.rhs, g.flag};
    for (int a = 0; a < 4; a++)
        set_arg(k, a, sizeof(cl_mem), &args[a]);
    set_dims(k, 4, &g.dims);
    set_arg(k, 7, 4, &dx2);
    set_arg(k, 8, 4, &w);
    set_arg(k, 9, sizeof sweeps, &sweeps);
    set_arg(k, 10, 4, &surface);
    launch(cl, k, 1);
    clReleaseKernel(k);
    expect_floats(g.phi, g.g.phi, g.g.cells, "coarsest");
    dev_grid_free(&g);
}

/* ml_group's V-cycle of a random grid of dims d and the grids below it (halved, rounded up,
 * down to 2 x 2 x 2) in one work-group of wg items, against the reference's V-cycle from the
 * same phi, rhs and flags. */
static void check_group(pbfcl_cl *cl, cl_program program, const unsigned d[3], size_t wg,
                        uint64_t *rng)
{
    dev_grid top;
    double dx = 0.04;
    dev_grid_make(cl, &top, d, dx, rng);
    ref_grid lv[PBFCL_ML_MAX_LEVELS];
    lv[0] = top.g;
    int levels = 1;
    size_t cells = top.g.cells;
    while (lv[levels - 1].d[0] > 2 || lv[levels - 1].d[1] > 2 || lv[levels - 1].d[2] > 2) {
        const unsigned *u = lv[levels - 1].d;
        unsigned dc[3] = {(u[0] + 1) / 2, (u[1] + 1) / 2, (u[2] + 1) / 2};
        grid_alloc(&lv[levels], dc, ldexp(dx, levels));
        lv[levels].surface = top.g.surface;
        cells += lv[levels].cells;
        levels++;
    }
    ref_v_cycle(lv, levels);

    cl_kernel k;
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_group", &k), PBFCL_OK);
    size_t max_wg = pbfcl_cl_kernel_max_wg(cl, k);
    if (wg > max_wg)
        wg = max_wg;
    cl_uint nlev = (cl_uint)levels, pre = PBFCL_ML_PRE_SWEEPS, post = PBFCL_ML_POST_SWEEPS,
            coarsest = PBFCL_ML_COARSEST_SWEEPS;
    float dx2 = (float)(dx * dx), inv_dx2 = 1.0f / dx2, w = PBFCL_ML_WEIGHT;
    cl_mem args[] = {top.phi, top.rhs, top.flag};
    for (int a = 0; a < 3; a++)
        set_arg(k, a, sizeof(cl_mem), &args[a]);
    set_dims(k, 3, &top.dims);
    set_arg(k, 6, 4, &nlev);
    set_arg(k, 7, 4, &dx2);
    set_arg(k, 8, 4, &inv_dx2);
    set_arg(k, 9, 4, &w);
    set_arg(k, 10, 4, &pre);
    set_arg(k, 11, 4, &post);
    set_arg(k, 12, 4, &coarsest);
    size_t local[4] = {cells * 4, cells * 4, cells, top.g.cells * 4}; /* phi, rhs, flag, tmp */
    ck_assert(local[0] + local[1] + local[2] + local[3] <= cl->dev.local_mem);
    for (int a = 0; a < 4; a++)
        set_arg(k, 13 + a, local[a], NULL);
    float surface = (float)(1.0 / top.g.surface);
    set_arg(k, 17, 4, &surface);
    ck_assert_int_eq(pbfcl_cl_launch(cl, k, wg, wg, NULL, PBFCL_STAGE_SOLVE), PBFCL_OK);
    ck_assert_int_eq(clFinish(cl->queue), CL_SUCCESS);
    clReleaseKernel(k);
    char what[64];
    snprintf(what, sizeof what, "group %ux%ux%u wg %zu", d[0], d[1], d[2], wg);
    expect_floats(top.phi, top.g.phi, top.g.cells, what);
    for (int l = 1; l < levels; l++)
        grid_free(&lv[l]);
    dev_grid_free(&top);
}

/* ml_setup on n cells of random sums (fixed point, signed), counts (0 to 11), touch words (a
 * third touched) and phi, with and without the touch words and flags already set, keep 0.75:
 * rhs = max(sum, 0) x scale, times full / count where the cell's fluid touches a shape
 * and holds fewer than full particles (full = 8: cells of h = 4r); flags fluid where a particle is,
 * else air (or as they were, set); phi = keep x phi in a fluid cell, else 0; the sums, counts and
 * touch words zero after it. */
static void check_setup(pbfcl_cl *cl, cl_program program, size_t n, uint64_t *rng)
{
    int *sum = malloc(n * 4);
    unsigned *count = malloc(n * 4), *touch = malloc(n * 4), *flag = malloc(n * 4);
    float *phi = malloc(n * 4);
    for (size_t c = 0; c < n; c++) {
        sum[c] = (int)(test_rand(rng) % 400001) - 100000; /* -1.5 to 4.6 strain */
        count[c] = (unsigned)(test_rand(rng) % 12);
        touch[c] = test_rand(rng) % 3 == 0 ? 1u << (5 * (test_rand(rng) % 6)) : 0u;
        flag[c] = (unsigned)(test_rand(rng) % 5);
        phi[c] = test_randf(rng, -1.0f, 1.0f);
    }
    const cl_float scale = 0.125f / 65536.0f, keep = 0.75f, full = 8.0f;
    const cl_uint cells = (cl_uint)n;
    cl_kernel k;
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_setup", &k), PBFCL_OK);
    for (int with_touch = 0; with_touch < 2; with_touch++) {
        cl_mem sb = device_buf(cl, n * 4, sum), cb = device_buf(cl, n * 4, count);
        cl_mem tb = device_buf(cl, n * 4, touch), fb = device_buf(cl, n * 4, flag);
        cl_mem pb = device_buf(cl, n * 4, phi), rb = device_buf(cl, n * 4, NULL);
        cl_mem none = NULL, t = with_touch ? tb : NULL;
        cl_uint flags_set = (cl_uint)with_touch;
        set_arg(k, 0, sizeof sb, &sb);
        set_arg(k, 1, sizeof cb, &cb);
        set_arg(k, 2, sizeof rb, &rb);
        set_arg(k, 3, sizeof fb, &fb);
        set_arg(k, 4, sizeof pb, &pb);
        set_arg(k, 5, sizeof scale, &scale);
        set_arg(k, 6, sizeof cells, &cells);
        set_arg(k, 7, sizeof keep, &keep);
        set_arg(k, 8, sizeof none, &none);
        set_arg(k, 9, sizeof none, &none);
        set_arg(k, 10, sizeof flags_set, &flags_set);
        set_arg(k, 11, sizeof t, &t);
        set_arg(k, 12, sizeof full, &full);
        launch(cl, k, n);
        double *rhs = malloc(n * sizeof *rhs), *phi_want = malloc(n * sizeof *phi_want);
        size_t filled = 0;
        for (size_t c = 0; c < n; c++) {
            double fill =
                with_touch && touch[c] && count[c] > 0 && count[c] < 8 ? 8.0 / count[c] : 1.0;
            filled += fill > 1.0 && sum[c] > 0;
            rhs[c] = (sum[c] > 0 ? sum[c] : 0) / 65536.0 * 0.125 * fill;
            phi_want[c] = count[c] > 0 ? 0.75 * phi[c] : 0.0;
        }
        expect_floats(rb, rhs, n, "ml_setup rhs");
        expect_floats(pb, phi_want, n, "ml_setup phi");
        unsigned *got = malloc(n * 4), *z[3] = {malloc(n * 4), malloc(n * 4), malloc(n * 4)};
        test_read_buffer(fb, got, n * 4);
        test_read_buffer(sb, z[0], n * 4);
        test_read_buffer(cb, z[1], n * 4);
        test_read_buffer(tb, z[2], n * 4);
        for (size_t c = 0; c < n; c++) {
            unsigned want = with_touch ? flag[c] : count[c] > 0;
            unsigned touch_after = with_touch ? 0u : touch[c]; /* NULL: not read or written */
            ck_assert_msg(got[c] == want, "ml_setup flag[%zu] = %u, want %u", c, got[c], want);
            ck_assert_msg(z[0][c] == 0 && z[1][c] == 0, "ml_setup left sum or count in cell %zu",
                          c);
            ck_assert_msg(z[2][c] == touch_after, "ml_setup touch[%zu] = %#x, want %#x", c, z[2][c],
                          touch_after);
        }
        if (n > 100) /* a large grid holds touched cells that the touch fills up */
            ck_assert_msg(!with_touch || filled > 0, "no touched cell was filled up");
        free(rhs), free(phi_want), free(got), free(z[0]), free(z[1]), free(z[2]);
        cl_mem bufs[] = {sb, cb, tb, fb, pb, rb};
        for (int b = 0; b < 6; b++)
            pbfcl_cl_release_buffer(&bufs[b]);
    }
    clReleaseKernel(k);
    free(sum), free(count), free(touch), free(flag), free(phi);
}

static void check_grid_kernels_all(pbfcl_cl *cl)
{
    cl_program program = build(cl);
    uint64_t rng = 29;
    size_t setup_cells[] = {1, 63, 65, 1001};
    for (size_t s = 0; s < sizeof setup_cells / sizeof setup_cells[0]; s++)
        check_setup(cl, program, setup_cells[s], &rng);
    unsigned sizes[][3] = {{1, 1, 1}, {63, 1, 1}, {65, 1, 1}, {3, 5, 7}, {2, 9, 4}, {11, 6, 5}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        check_grid_kernels(cl, program, sizes[s], &rng);
    unsigned coarsest[][3] = {{1, 1, 1}, {2, 1, 1}, {2, 2, 2}, {1, 2, 2}};
    for (size_t s = 0; s < sizeof coarsest / sizeof coarsest[0]; s++)
        check_coarsest(cl, program, coarsest[s], &rng);
    /* each size with work-groups of 1, 7 and 64 items; under Oclgrind (small) one each */
    unsigned group[][3] = {{1, 1, 1}, {2, 1, 1}, {65, 1, 1}, {3, 5, 7}, {2, 9, 4}, {11, 6, 5}};
    size_t wgs[] = {1, 7, 64};
    for (size_t s = 0; s < sizeof group / sizeof group[0]; s++)
        for (size_t w = 0; w < sizeof wgs / sizeof wgs[0]; w++)
            if (!test_small() || w == s % 3)
                check_group(cl, program, group[s], wgs[w], &rng);
    clReleaseProgram(program);
}

START_TEST(test_grid_kernels)
{
    test_each_device(check_grid_kernels_all);
}
END_TEST

/* ---- a whole correction ------------------------------------------------------------------- */

/* The reference correction of the particles at x* = x (n, xyz), each at x0 at the start of the
 * substep, with neighbour lists (count, nbr of capacity maxnb, entry k of i at k * n + i)
 * under constants p and gravity g along -y: into out. weight: each particle's share of the
 * pressure's move, 1 the fluid's, a body's its w, 0 a particle that stays (a solid of either
 * kind fills its cell with no strain); NULL: all fluid. */
static void ref_correction(const pbfcl_pbf_params *p, double g, size_t n, const float *x,
                           const float *x0, const unsigned *count, const unsigned *nbr,
                           unsigned maxnb, const double *weight, int warm, double **kept,
                           float *out)
{
    unsigned d[PBFCL_ML_MAX_LEVELS][3];
    int levels;
    pbfcl_ml_grids(p->box_min, p->box_max, p->h, &levels, d);
    ref_grid lv[PBFCL_ML_MAX_LEVELS];
    for (int l = 0; l < levels; l++)
        grid_alloc(&lv[l], d[l], ldexp(p->h, l));
    size_t *cell = malloc(n * sizeof *cell);
    double *sum = calloc(lv[0].cells, sizeof *sum), *fill = malloc(n * sizeof *fill);
    for (size_t i = 0; i < n; i++) {
        unsigned c[3];
        for (int a = 0; a < 3; a++) {
            double f = floor((x[3 * i + a] - p->box_min[a]) / p->h);
            c[a] = f < 0 ? 0 : (f > d[0][a] - 1 ? d[0][a] - 1 : (unsigned)f);
        }
        cell[i] = ref_index(&lv[0], c[0], c[1], c[2]);
        lv[0].flag[cell[i]] = 1;
        fill[i] = 1.0;                  /* a solid's density is the rest density */
        if (weight && weight[i] != 1.0) /* a solid's particle fills its cell, with no strain */
            continue;
        double w = 0.0, grad[3];
        for (unsigned k = 0; k < count[i] && k < maxnb; k++) {
            const float *y = x + 3 * nbr[k * n + i];
            double dd[3] = {x[3 * i] - y[0], x[3 * i + 1] - y[1], x[3 * i + 2] - y[2]};
            w += ref_poly6(sqrt(dd[0] * dd[0] + dd[1] * dd[1] + dd[2] * dd[2]), p->h);
        }
        double rho = p->self_density + p->mass * w + p->rest_density * ref_wall(p, x + 3 * i, grad);
        double s = rho / p->rest_density - 1.0;
        fill[i] = fmin(fmax((rho / p->rest_density - 0.5) / 0.3, 0.0), 1.0);
        sum[cell[i]] += s < -1 ? -1 : (s > 1 ? 1 : s);
    }
    double cell_volume = pow(p->h, 3);
    for (size_t c = 0; c < lv[0].cells; c++)
        lv[0].rhs[c] = fmax(sum[c], 0.0) * p->volume / cell_volume;
    /* warm: from PBFCL_ML_WARM x the last correction's phi in the cells fluid now */
    for (size_t c = 0; c < lv[0].cells && warm; c++)
        lv[0].phi[c] = lv[0].flag[c] ? PBFCL_ML_WARM * (*kept)[c] : 0.0;
    for (int c = 0; c < (warm ? PBFCL_ML_WARM_CYCLES : PBFCL_ML_CYCLES); c++)
        ref_v_cycle(lv, levels);
    if (!*kept)
        *kept = malloc(lv[0].cells * sizeof **kept);
    memcpy(*kept, lv[0].phi, lv[0].cells * sizeof **kept);
    /* a resting column's support, and against the particle's own move up to PBFCL_ML_REACH x
     * its cell's compression x h more; of that move the part its density gives: none at half of
     * rest density or less (half of its support air), all at 0.8 or more (a flat free surface's
     * particle, on the rest lattice 0.81) */
    double support = fmin(0.5 * p->radius, PBFCL_ML_SUPPORT * g * p->dt * p->dt);
    const ref_grid *g0 = &lv[0];
    for (size_t i = 0; i < n; i++) {
        double w = weight ? weight[i] : 1.0; /* m_fluid / m: 0 stays */
        if (w == 0.0) {
            memcpy(out + 3 * i, x + 3 * i, 12);
            continue;
        }
        size_t k = cell[i];
        unsigned c[3] = {k % g0->d[0], (k / g0->d[0]) % g0->d[1], k / (g0->d[0] * g0->d[1])};
        size_t stride[3] = {1, g0->d[0], (size_t)g0->d[0] * g0->d[1]};
        double dv[3], len = 0.0;
        for (int a = 0; a < 3; a++) {
            double t = (x[3 * i + a] - p->box_min[a]) / p->h - c[a];
            t = t < 0 ? 0 : (t > 1 ? 1 : t);
            double here = g0->phi[k], below = 0.0, above = 0.0;
            /* to air, phi = 0 surface cells away (on the face: no shapes here) */
            if (c[a] > 0) {
                size_t j = k - stride[a];
                below = g0->flag[j] ? (here - g0->phi[j]) / p->h : here / (g0->surface * p->h);
            }
            if (c[a] + 1 < g0->d[a]) {
                size_t j = k + stride[a];
                above = g0->flag[j] ? (g0->phi[j] - here) / p->h : -here / (g0->surface * p->h);
            }
            /* gravity along -y: a cell with fluid below and air above along y (the free
             * surface's) moves by its lower face's gradient alone */
            int fluid_below = c[a] > 0 && g0->flag[k - stride[a]];
            int air_above = c[a] + 1 < g0->d[a] && !g0->flag[k + stride[a]];
            if (a == 1 && fluid_below && air_above)
                dv[a] = below;
            else
                dv[a] = below + (above - below) * t;
            len += dv[a] * dv[a];
        }
        len = sqrt(len);
        double against = 0.0;
        for (int a = 0; a < 3 && len > 0.0; a++)
            against -= dv[a] * (x[3 * i + a] - x0[3 * i + a]) / len;
        double extra = fmin(fmax(against, 0.0), PBFCL_ML_REACH * p->h * g0->rhs[k]);
        /* a body's particle: the pressure's move of its mass, w times the fluid's, within the
         * fine iterations' limit for a solid, 0.5 r (w times that where it is lighter) */
        double limit = w == 1.0 ? support + extra : 0.5 * p->radius * fmax(w, 1.0);
        len *= w;
        for (int a = 0; a < 3; a++) {
            dv[a] *= w;
            double v = x[3 * i + a] + fill[i] * (len > limit ? dv[a] * limit / len : dv[a]);
            double lo = p->box_min[a] + p->radius, hi = p->box_max[a] - p->radius;
            out[3 * i + a] = (float)(v < lo ? lo : (v > hi ? hi : v));
        }
    }
    for (int l = 0; l < levels; l++)
        grid_free(&lv[l]);
    free(cell);
    free(sum);
    free(fill);
}

/* Solids of each kind among the n particles at pos (by id): every 7th static; those at 2 and
 * 4 mod 7 two shape-matched bodies, of relative inverse masses 0.5 (twice the fluid's density)
 * and 2 (half of it), which the correction moves by the fluid's pressure, w times the fluid's
 * move; those at 6 mod 7 a cloth (w 1.5), which stays, as the statics do. */
static void set_solids(pbfcl_sim *sim, size_t n, const float *pos)
{
    unsigned *ids = malloc(n * sizeof *ids), *body = malloc(n * sizeof *body);
    float *rest = malloc(n * 12), *w = malloc(n * sizeof *w);
    size_t entries = 0;
    for (unsigned b = 0; b < 2; b++)
        for (size_t i = 2 + 2 * b; i < n; i += 7) {
            ids[entries] = (unsigned)i;
            body[entries] = b;
            memcpy(rest + 3 * entries++, pos + 3 * i, 12);
        }
    const float stiffness[2] = {1.0f, 1.0f}, inv_mass[2] = {0.5f, 2.0f};
    ck_assert_int_eq(pbfcl_sim_set_bodies(sim, 2, entries, ids, body, rest, stiffness, inv_mass),
                     PBFCL_OK);
    size_t count = 0;
    for (size_t i = 0; i < n; i += 7)
        ids[count++] = (unsigned)i;
    ck_assert_int_eq(pbfcl_sim_set_static(sim, count, ids), PBFCL_OK);
    count = 0;
    for (size_t i = 6; i < n; i += 7) {
        ids[count] = (unsigned)i;
        body[count] = 0;
        w[count++] = 1.5f;
    }
    ck_assert_int_eq(pbfcl_sim_set_groups(sim, count, ids, body, w), PBFCL_OK);
    free(ids);
    free(body);
    free(rest);
    free(w);
}

/* One correction of nx^3 particles at spacing 0.99 * 2r (jittered by 0.05 r) on the floor of
 * the default box under gravity 100 m/s^2 (so that the limit, 0.5 r, leaves most moves
 * whole), against the reference from the same x* and lists; it moves the block by a good part
 * of the limit. A lone particle in the middle of the box is not compressed and stays. Tight: the
 * box only 0.1 r wider than the block and 0.5 m tall, so that the coarse grids hold fluid too
 * (in the unit box the block fills no cell of 8 h). With group_local, ml_group's local memory
 * capped there (0: the per-level launches alone). Falling: gravity 9.81 m/s^2 instead, where a
 * resting column's 2 |g| dt^2 holds the moves, and every particle falling at 0.5 to 1 m/s
 * (x* predicted from it): the correction may move a particle farther against that fall, within
 * its cell's compression, and must (some particle moves more than 2 |g| dt^2). Statics: the
 * solids of set_solids, which fill their cells with no strain; the statics and the cloth stay,
 * the fluid still moves (here by a tenth of the limit; before the fluid was told from a solid by
 * its phase word's fluid flag, not at all), and the bodies move by the pressure, the light one
 * farther than the heavy one (with bodies left where they were, the reference fails this).
 * x* after the correction into got (n x 3). */
static void check_correction_n(pbfcl_cl *cl, int nx, int tight, size_t group_local, int falling,
                               int statics, float *got)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    double g = falling ? 9.81 : 100.0;
    s.gravity[1] = (float)-g;
    float r = s.particle_radius, sp = 0.99f * 2 * r;
    if (tight) {
        for (int a = 0; a < 3; a += 2) {
            s.domain_min[a] = 0.2f - 0.1f * r;
            s.domain_max[a] = 0.2f + 2 * r + (nx - 1) * sp + 0.1f * r;
        }
        s.domain_max[1] = 0.5f;
    }
    size_t n = (size_t)nx * nx * nx;
    float *pos = malloc(n * 3 * sizeof *pos);
    uint64_t rng = 7;
    for (size_t i = 0; i < n; i++) {
        int idx[3] = {(int)(i % nx), (int)(i / nx % nx), (int)(i / nx / nx)};
        for (int a = 0; a < 3; a++)
            pos[3 * i + a] =
                n == 1 ? 0.5f
                       : 0.2f * (a != 1) + r + idx[a] * sp + test_randf(&rng, -0.05f, 0.05f) * r;
    }
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    if (statics) /* every 7th particle static, two bodies and a cloth: solids of each kind */
        set_solids(sim, n, pos);
    float *x = malloc(n * 12), *x0 = malloc(n * 12), *after = malloc(n * 12),
          *want = malloc(n * 12);
    if (falling || statics) { /* with solids, predict tags x* with the phases the search reads:
                                 x* = x from v = g dt up, which gravity takes back */
        float up = (float)(g * pbfcl_sim_params(sim)->dt);
        for (size_t i = 0; i < 3 * n; i++)
            x0[i] = i % 3 != 1 ? 0.0f : (falling ? -(float)test_randf(&rng, 0.5f, 1.0f) : up);
        ck_assert_int_eq(pbfcl_sim_write(sim, NULL, x0), PBFCL_OK);
        ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK);
    }
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK); /* the densities the moves read */
    unsigned maxnb = pbfcl_sim_max_neighbors(sim);
    unsigned *count = malloc(n * 4), *nbr = malloc(n * 4 * maxnb);
    ck_assert_int_eq(pbfcl_pbf_read_solver(sim, x, NULL, NULL, count, nbr), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, x0, NULL, NULL), PBFCL_OK);
    double *weight = NULL; /* each particle's share of the pressure's move, in the reads' order */
    if (statics) {
        unsigned *phase = malloc(n * sizeof *phase);
        float *inv_mass = malloc(n * sizeof *inv_mass);
        ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, inv_mass), PBFCL_OK);
        weight = malloc(n * sizeof *weight);
        for (size_t i = 0; i < n; i++) {
            unsigned group = phase[i] & PBFCL_PHASE_GROUP_BITS; /* a body b's: b + 1 */
            bool body = !(phase[i] & PBFCL_PHASE_FLUID_BIT) && group >= 1 && group <= 2;
            weight[i] = phase[i] & PBFCL_PHASE_FLUID_BIT ? 1.0 : (body ? inv_mass[i] : 0.0);
        }
        free(phase);
        free(inv_mass);
    }
    ck_assert_int_eq(pbfcl_pbf_multilevel_group_limit(sim, group_local), PBFCL_OK);
    const pbfcl_pbf_params *p = pbfcl_sim_params(sim);
    double moved = 0.0, limit = 0.5 * r, support = 2.0 * g * p->dt * p->dt;
    double moved_solid[2] = {0.0, 0.0}; /* the heavy body's, the light one's, up */
    /* in the tight box a second correction from where the first left x* (the same lists),
     * warm (from the first's phi): it gathers into sums and counts that the first left zero */
    double *kept = NULL;
    for (int pass = 0; pass < (tight ? 2 : 1); pass++) {
        if (pass > 0) {
            memcpy(x, after, n * 12);
            ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
        }
        ck_assert_int_eq(pbfcl_pbf_multilevel(sim, pass > 0, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_pbf_read_solver(sim, after, NULL, NULL, NULL, NULL), PBFCL_OK);
        ref_correction(p, g, n, x, x0, count, nbr, maxnb, weight, pass > 0, &kept, want);
        for (size_t i = 0; i < 3 * n; i++) {
            ck_assert_msg(fabs(after[i] - want[i]) <= 1e-3 * limit + 1e-6,
                          "n %zu, correction %d: coordinate %zu moved to %.7g, want %.7g (from "
                          "%.7g)",
                          n, pass + 1, i, after[i], want[i], x[i]);
            if (pass == 0 && weight && weight[i / 3] != 1.0 && i % 3 == 1) /* up: no wall */
                moved_solid[weight[i / 3] > 1.0] =
                    fmax(moved_solid[weight[i / 3] > 1.0], fabs(after[i] - x[i]));
            else if (pass == 0)
                moved = fmax(moved, fabs(after[i] - x[i]));
        }
    }
    fprintf(stderr,
            "    multilevel correction of %zu particles (%s, %s box%s%s): largest move %.3g r\n", n,
            group_local ? "one-group kernel" : "per-level launches", tight ? "tight" : "unit",
            falling ? ", falling" : "", statics ? ", solids" : "", moved / r);
    if (statics) { /* the light body (w 2) moves more than twice as far as the heavy (w 0.5) */
        fprintf(stderr, "    bodies of w 0.5 and 2: largest moves up %.3g and %.3g r\n",
                moved_solid[0] / r, moved_solid[1] / r);
        ck_assert_msg(moved_solid[0] > 0.0 && moved_solid[1] > 2.0 * moved_solid[0],
                      "the bodies moved %g and %g m", moved_solid[0], moved_solid[1]);
    }
    memcpy(got, after, n * 12);
    if (falling)
        ck_assert_msg(support < 0.5 * limit && moved > 1.2 * support,
                      "falling: the largest move %g m is not beyond a resting column's %g m", moved,
                      support);
    else if (n > 1)
        ck_assert_msg(moved > (statics ? 0.05 : 0.1) * limit, "the block moved at most %g m",
                      moved);
    else
        ck_assert_msg(moved == 0.0, "a lone particle (no compression) moved %g m", moved);
    pbfcl_sim_destroy(sim);
    free(weight);
    free(kept);
    free(pos);
    free(x);
    free(x0);
    free(after);
    free(want);
    free(count);
    free(nbr);
}

/* Both ways, each against the reference and against each other: the same sums in the same
 * order, within float rounding. Small (Oclgrind): the tight 7^3 block both ways (its grids are
 * small), at rest, falling, with solids of each kind (set_solids; a correction that took the
 * fluid's phase word for a solid's moved nothing where statics or bodies were) and falling with
 * them (the light body moves beyond the fluid's limit, within a solid's),
 * the lone particle in the unit box (15,625 cells) one way. */
static void check_correction(pbfcl_cl *cl)
{
    int cases[][4] = {{7, 1, 0, 0},  {1, 0, 0, 0},  {7, 1, 1, 0},  {7, 1, 0, 1},
                      {7, 1, 1, 1},  {7, 0, 0, 0},  {11, 0, 0, 0}, {11, 1, 0, 0},
                      {11, 1, 1, 0}, {11, 1, 0, 1}, {11, 1, 1, 1}};
    /* nx, tight, falling, solids */
    for (int k = 0; k < (test_small() ? 5 : 11); k++) {
        int nx = cases[k][0], tight = cases[k][1], falling = cases[k][2], statics = cases[k][3];
        size_t n = (size_t)nx * nx * nx;
        float *group = malloc(n * 12), *levels = malloc(n * 12);
        check_correction_n(cl, nx, tight, SIZE_MAX, falling, statics, group);
        if (test_small() && !tight) {
            free(group);
            free(levels);
            continue;
        }
        check_correction_n(cl, nx, tight, 0, falling, statics, levels);
        double worst = 0.0;
        for (size_t i = 0; i < 3 * n; i++)
            worst = fmax(worst, fabs(group[i] - levels[i]));
        fprintf(stderr, "    one-group kernel against per-level launches: %.3g m apart at most\n",
                worst);
        ck_assert_msg(worst <= 1e-6, "the two ways differ by %g m", worst);
        free(group);
        free(levels);
    }
}

START_TEST(test_correction_reference)
{
    test_each_device(check_correction);
}
END_TEST

/* ml_compression (the fluid's mean compression, which chooses a substep's added corrections)
 * against the reference's mean of max(rho / rho0 - 1, 0) over the fluid's particles, from the
 * densities lambda left: a block at 0.9 x 2r (compressed), a row of particles 3r apart along
 * the floor (below rest: 0) and every 5th particle static (not fluid: left out). n = a cube of
 * side 7 (a partial work-group) and, off Oclgrind, of side 47 (103,823 particles), each summed
 * as the solver launches it and in 3 work-groups (whose work-items each sum many particles). */
static void compression_n(pbfcl_cl *cl, int nx)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.solver.iterations = 2;
    s.solver.multilevel = 1;
    s.gravity[1] = 0.0f;
    float r = s.particle_radius, sp = 0.9f * 2 * r;
    size_t block = (size_t)nx * nx * nx, row = 40, n = block + row;
    float *pos = malloc(n * 3 * sizeof *pos);
    for (size_t i = 0; i < block; i++) {
        int idx[3] = {(int)(i % nx), (int)(i / nx % nx), (int)(i / nx / nx)};
        for (int a = 0; a < 3; a++)
            pos[3 * i + a] = 0.05f + r + idx[a] * sp;
    }
    for (size_t i = 0; i < row; i++) {
        pos[3 * (block + i)] = 0.02f + 3 * r * (float)i;
        pos[3 * (block + i) + 1] = 0.95f;
        pos[3 * (block + i) + 2] = 0.95f;
    }
    size_t ns = 0;
    unsigned *fixed = malloc(n / 5 * sizeof *fixed + 4);
    for (size_t i = 0; i < n; i += 5)
        fixed[ns++] = (unsigned)i;
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_static(sim, ns, fixed), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_predict(sim, NULL), PBFCL_OK); /* x* = x: no gravity */
    ck_assert_int_eq(pbfcl_pbf_neighbours(sim, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_pbf_lambda(sim, NULL), PBFCL_OK);
    float *rho = malloc(n * sizeof *rho);
    unsigned *phase = malloc(n * sizeof *phase);
    ck_assert_int_eq(pbfcl_sim_read(sim, NULL, NULL, rho), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, NULL), PBFCL_OK);
    double sum = 0.0, above = 0.0;
    size_t fluid = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(phase[i] & PBFCL_PHASE_FLUID_BIT))
            continue;
        double e = fmax(rho[i] / s.rest_density - 1.0, 0.0);
        sum += e;
        above += e > 0.0;
        fluid++;
    }
    double want = sum / (double)fluid;
    ck_assert_msg(fluid < n && above > 0 && above < fluid, "the case needs all three kinds");
    const size_t groups[2] = {0, 3}; /* as the solver launches it; 3 work-groups */
    for (int k = 0; k < 2; k++) {
        double got;
        ck_assert_int_eq(pbfcl_pbf_multilevel_compression(sim, groups[k], &got), PBFCL_OK);
        fprintf(stderr,
                "    compression of %zu particles (%zu fluid, %.0f compressed), %s: %.6f, "
                "reference %.6f\n",
                n, fluid, above, k ? "3 work-groups" : "as launched", got, want);
        ck_assert_msg(fabs(got - want) <= 1e-5 * want, "mean compression %.7f, reference %.7f", got,
                      want);
    }
    free(rho);
    free(phase);
    free(fixed);
    free(pos);
    pbfcl_sim_destroy(sim);
}

static void check_compression(pbfcl_cl *cl)
{
    compression_n(cl, 7);
    if (!test_small())
        compression_n(cl, 47);
}

START_TEST(test_compression_reference)
{
    test_each_device(check_compression);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("multilevel");
    TCase *grids = tcase_create("grids"), *correction = tcase_create("correction");
    tcase_set_timeout(grids, 300);
    tcase_set_timeout(correction, 300);
    tcase_add_test(grids, test_grids);
    tcase_add_test(grids, test_group_plan);
    tcase_add_test(grids, test_grid_kernels);
    tcase_add_test(correction, test_correction_reference);
    tcase_add_test(correction, test_compression_reference);
    suite_add_tcase(suite, grids);
    suite_add_tcase(suite, correction);
    return test_run_suite(suite, true);
}
