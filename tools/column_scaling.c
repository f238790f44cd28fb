/* column_scaling: the scaling law of the density solve (docs/PERFORMANCE.md, "The scaling law
 * of the density solve"). Columns of water W x H x W particles (r = 1 cm) in a box as wide as
 * them rest on the floor for FRAMES frames of 1/60 s at a fixed count of substeps; the tool
 * finds, for each height H, the fewest solver iterations per substep that hold the column at
 * a mean density error of at most TARGET % over the second half of the frames (doubling, then
 * bisection; the error falls with the iterations). Plain Jacobi's count grows with H; a solve
 * whose work does not grow with the depth keeps it flat. Through the public API only. Built
 * and run by tools/column-scaling; by hand:
 *   cc -O2 -std=c11 -Iinclude tools/column_scaling.c build/host/libpbfcl.a -lOpenCL -lm -lpthread
 *   ./a.out [--heights 30,60,120,240] [--width 3] [--frames 40] [--substeps 4] [--target 1]
 *           [--max-iterations 1000] [--fixed 4] [--multilevel N] [--device NAME]
 * A column that blew up or overflowed a neighbour list prints an error of 1e9. */
#include <pbfcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEIGHTS 16

typedef struct options {
    int heights[MAX_HEIGHTS], nheights, width, frames, substeps, max_iterations, multilevel, fixed;
    double target;
    const char *device;
} options;

static void fail(const char *what, pbfcl_status st)
{
    fprintf(stderr, "column_scaling: %s failed: %s\n", what, pbfcl_status_message(st));
    exit(1);
}

/* The mean density error (%) over the second half of the frames of a W x H x W column held by
 * iterations per substep; a column that blew up or overflowed its neighbour lists counts as
 * failing (1e9). */
static double column_error(pbfcl_context *ctx, const options *o, int height, int iterations)
{
    const float r = 0.01f;
    pbfcl_scene_params sc;
    pbfcl_scene_params_defaults(&sc);
    sc.particle_radius = r;
    float top = 2.0f * r * (float)height * 1.25f + 0.05f;
    float lo[3] = {0.0f, 0.0f, 0.0f}, hi[3] = {2.0f * r * o->width, top, 2.0f * r * o->width};
    memcpy(sc.domain_min, lo, sizeof lo);
    memcpy(sc.domain_max, hi, sizeof hi);
    pbfcl_solver_params sv;
    pbfcl_solver_params_defaults(&sv);
    sv.substeps = o->substeps;
    sv.cfl = 2.0f; /* the fixed substeps, not the adaptive count */
    sv.iterations = iterations;
    sv.multilevel = o->multilevel;
    size_t n = (size_t)o->width * o->width * height;
    float *pos = malloc(n * 3 * sizeof *pos);
    size_t k = 0;
    for (int y = 0; y < height; y++)
        for (int z = 0; z < o->width; z++)
            for (int x = 0; x < o->width; x++, k++) {
                pos[3 * k] = r + 2.0f * r * x;
                pos[3 * k + 1] = r + 2.0f * r * y;
                pos[3 * k + 2] = r + 2.0f * r * z;
            }
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = n;
    d.scene = sc;
    d.solver = sv;
    pbfcl_solver *s = NULL;
    pbfcl_status st = pbfcl_solver_create(ctx, &d, &s);
    if (st != PBFCL_OK)
        fail("pbfcl_solver_create", st);
    if ((st = pbfcl_solver_add(s, pos, NULL, n)) != PBFCL_OK)
        fail("pbfcl_solver_add", st);
    double sum = 0.0;
    int counted = 0, broken = 0;
    for (int f = 1; f <= o->frames && !broken; f++) {
        pbfcl_stats stats;
        if ((st = pbfcl_solver_step(s, 0.0f, NULL)) != PBFCL_OK ||
            (st = pbfcl_solver_stats(s, &stats)) != PBFCL_OK)
            fail("a step", st);
        broken = stats.unstable || stats.neighbour_overflow > 0;
        if (2 * f > o->frames) {
            sum += stats.density_error_avg;
            counted++;
        }
    }
    pbfcl_solver_destroy(s);
    free(pos);
    return broken ? 1e9 : sum / counted;
}

/* The fewest iterations (at most max_iterations; 0 if even that fails) that hold the column,
 * and the error there. */
static int iterations_needed(pbfcl_context *ctx, const options *o, int height, double *err)
{
    int lo = 0, hi = 1; /* lo fails (0 iterations always does), hi is tried */
    double e;
    while ((e = column_error(ctx, o, height, hi)) > o->target) {
        lo = hi;
        if (hi >= o->max_iterations)
            return *err = e, 0;
        hi = 2 * hi < o->max_iterations ? 2 * hi : o->max_iterations;
    }
    *err = e;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        double em = column_error(ctx, o, height, mid);
        if (em <= o->target)
            hi = mid, *err = em;
        else
            lo = mid;
    }
    return hi;
}

static int parse_heights(const char *s, options *o)
{
    o->nheights = 0;
    for (char *end; *s && o->nheights < MAX_HEIGHTS; s = *end ? end + 1 : end) {
        long h = strtol(s, &end, 10);
        if (end == s || h < 2 || h > 2000 || (*end && *end != ','))
            return 0;
        o->heights[o->nheights++] = (int)h;
    }
    return o->nheights > 0;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){{30, 60, 120, 240}, 4, 3, 40, 4, 1000, 0, 4, 1.0, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return 0;
        i++;
        if (!strcmp(a, "--heights") && parse_heights(v, o))
            continue;
        if (!strcmp(a, "--width") && (o->width = atoi(v)) >= 1 && o->width <= 64)
            continue;
        if (!strcmp(a, "--frames") && (o->frames = atoi(v)) >= 2)
            continue;
        if (!strcmp(a, "--substeps") && (o->substeps = atoi(v)) >= 1 && o->substeps <= 1000)
            continue;
        if (!strcmp(a, "--max-iterations") && (o->max_iterations = atoi(v)) >= 1 &&
            o->max_iterations <= 1000)
            continue;
        if (!strcmp(a, "--multilevel") && (o->multilevel = atoi(v)) >= 0)
            continue;
        if (!strcmp(a, "--fixed") && (o->fixed = atoi(v)) >= 1 && o->fixed <= 1000)
            continue;
        if (!strcmp(a, "--target") && (o->target = atof(v)) > 0.0)
            continue;
        if (!strcmp(a, "--device")) {
            o->device = v;
            continue;
        }
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    options o;
    if (!parse(argc, argv, &o)) {
        fprintf(stderr, "usage: column_scaling [--heights H,H,... (2..2000)] [--width W (1..64)] "
                        "[--frames F (>= 2)] [--substeps S (1..1000)] [--target PERCENT (> 0)] "
                        "[--max-iterations N (1..1000)] [--fixed N (1..1000)] [--multilevel N] "
                        "[--device NAME]\n");
        return 2;
    }
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.device = o.device;
    pbfcl_context *ctx = NULL;
    pbfcl_status st = pbfcl_context_create(PBFCL_VERSION, &cd, &ctx);
    if (st != PBFCL_OK)
        fail("pbfcl_context_create", st);
    char name[256];
    pbfcl_context_device_name(ctx, name, sizeof name);
    printf("# device: %s; columns %d x H x %d particles, r = 1 cm, %d substeps per 1/60 s frame, "
           "%d frames, multilevel %d\n",
           name, o.width, o.width, o.substeps, o.frames, o.multilevel);
    printf("# iterations: the fewest per substep whose mean density error over frames %d-%d is "
           "at most %g %% (0: not within %d)\n",
           o.frames / 2 + 1, o.frames, o.target, o.max_iterations);
    printf("# error_at_N: the mean density error with N = %d iterations (the default solver's 4)\n",
           o.fixed);
    printf("%8s %10s %12s %12s %10s %14s\n", "height", "particles", "iterations", "error_%",
           "vs_first", "error_at_N_%");
    int first = 0;
    for (int k = 0; k < o.nheights; k++) {
        double err;
        int it = iterations_needed(ctx, &o, o.heights[k], &err);
        if (k == 0)
            first = it;
        double at_fixed = column_error(ctx, &o, o.heights[k], o.fixed);
        printf("%8d %10d %12d %12.3f %10.2f %14.3f\n", o.heights[k],
               o.width * o.width * o.heights[k], it, err,
               first > 0 && it > 0 ? (double)it / first : 0.0, at_fixed);
        fflush(stdout);
    }
    pbfcl_context_destroy(ctx);
    return 0;
}
