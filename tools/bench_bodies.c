/* bench_bodies: ms per frame of a dam break with rigid bodies against the same fluid alone
 * (docs/PERFORMANCE.md, "Bodies"), over the timed frames and over their first second, with the
 * ratios per frame and per substep, through the public API only. Built and run by
 * tools/bench-bodies; by hand:
 *   cc -O2 -std=c11 -Iinclude tools/bench_bodies.c build/host/libpbfcl.a -lOpenCL -lm -lpthread
 *   ./a.out [FLUID_PARTICLES [BODIES [BODY_SIZE [FRAMES [DEVICE [default|accelerated]]]]]]
 * Bodies are boxes of BODY_SIZE particles (about 1:1:2 in x, y, z) of 500 kg/m^3 in the empty
 * part of the dam-break box, in a 4 x 4 x 4 arrangement (more bodies take more layers). */
#include <pbfcl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        pbfcl_status st_ = (call);                                                                 \
        if (st_ != PBFCL_OK) {                                                                     \
            fprintf(stderr, "bench_bodies: %s failed: %s\n", #call, pbfcl_status_message(st_));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The particles of nb boxes of about size particles each, at spacing 2r in the part of the box
 * x > 0.6 m, appended to *pos (count *n); their phases into phase. */
static void add_bodies(float **pos, int **phase, size_t *n, int nb, int size, float r,
                       const pbfcl_scene_params *sc)
{
    int k = (int)cbrt(size / 2.0);
    int nx = k, ny = k, nz = (size + k * k - 1) / (k * k);
    size_t per = (size_t)nx * ny * nz, total = *n + (size_t)nb * per;
    *pos = realloc(*pos, total * 3 * sizeof **pos);
    *phase = realloc(*phase, total * sizeof **phase);
    int layers = (nb + 15) / 16;
    float x0 = 0.6f, x1 = sc->domain_max[0] - 0.05f, y0 = 0.1f, y1 = sc->domain_max[1] - 0.05f;
    float z0 = sc->domain_min[2] + 0.02f, z1 = sc->domain_max[2] - 0.02f;
    for (int b = 0; b < nb; b++) {
        int ix = b % 4, iz = (b / 4) % 4, iy = b / 16;
        float ox = x0 + (x1 - x0) * ix / 4.0f, oy = y0 + (y1 - y0) * iy / (float)layers;
        float oz = z0 + (z1 - z0) * iz / 4.0f;
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < nx; x++) {
                    float *p = *pos + 3 * *n;
                    p[0] = ox + r + 2 * r * x;
                    p[1] = oy + r + 2 * r * y;
                    p[2] = oz + r + 2 * r * z;
                    (*phase)[(*n)++] = PBFCL_PHASE_BODY(b);
                }
    }
}

/* The frames of the dam break's first second after the warm-up: the bodies fall into the
 * breaking dam. */
#define FIRST_SECOND 60

/* What a case's timed frames took: ms per frame (mean over all of them, the least, the mean over
 * the first FIRST_SECOND) and substeps per frame (all; the first FIRST_SECOND). */
typedef struct timing {
    double mean, best, first_mean, substeps, first_substeps;
} timing;

/* Times frames frames after 10 warm-up frames. */
static timing time_frames(pbfcl_solver *s, int frames)
{
    pbfcl_timers t;
    for (int f = 0; f < 10; f++)
        CHECK(pbfcl_solver_step(s, 0.0f, NULL));
    timing r = {0.0, 1e30, 0.0, 0.0, 0.0};
    int first = frames < FIRST_SECOND ? frames : FIRST_SECOND;
    for (int f = 0; f < frames; f++) {
        CHECK(pbfcl_solver_step(s, 0.0f, &t));
        r.mean += t.total / frames;
        r.best = fmin(r.best, t.total);
        r.substeps += (double)t.substeps / frames;
        if (f < first) {
            r.first_mean += t.total / first;
            r.first_substeps += (double)t.substeps / first;
        }
    }
    return r;
}

/* Per kernel over the timed frames: us per launch, launches per substep and ms per frame, as
 * comment lines after the case's row (where the bodies' cost goes). */
static void print_kernels(const pbfcl_solver *s, const char *label, int frames, int substeps)
{
    const char *name;
    double ms;
    long long launches;
    int count = pbfcl_solver_kernel_times(s, 0, NULL, NULL, NULL);
    for (int k = 0; k < count; k++)
        if (pbfcl_solver_kernel_times(s, k, &name, &ms, &launches) && launches > 0)
            printf("# %-6s %-28s %10.2f us %8.2f per substep %8.3f ms per frame\n", label, name,
                   1e3 * ms / (double)launches, (double)launches / substeps, ms / frames);
}

/* The solver of a run: the defaults, or with accelerated the accelerated solver of
 * tools/bench-pbf-h200.sh (--iterations 8 --chebyshev 0.95 --cfl 1 --contact-interval 2). */
static void solver_settings(pbfcl_solver_params *sv, int accelerated)
{
    if (!accelerated)
        return;
    sv->iterations = 8;
    sv->chebyshev_rho = 0.95f;
    sv->cfl = 1.0f;
    sv->contact_interval = 2;
}

static timing run(pbfcl_context *ctx, size_t fluid, int nb, int size, int frames, int accelerated)
{
    pbfcl_scene_params sc;
    pbfcl_solver_params sv;
    float *pos = NULL;
    size_t n = 0;
    CHECK(pbfcl_load_scene("dam-break", fluid, &sc, &sv, &pos, &n));
    solver_settings(&sv, accelerated);
    float *copy = malloc(n * 3 * sizeof *copy);
    memcpy(copy, pos, n * 3 * sizeof *copy);
    pbfcl_free(pos);
    pos = copy;
    int *phase = calloc(n, sizeof *phase);
    size_t n_fluid = n;
    if (nb > 0)
        add_bodies(&pos, &phase, &n, nb, size, sc.particle_radius, &sc);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = n;
    d.scene = sc;
    d.solver = sv;
    pbfcl_solver *s = NULL;
    CHECK(pbfcl_solver_create(ctx, &d, &s));
    CHECK(pbfcl_solver_add(s, pos, NULL, n));
    if (nb > 0) {
        CHECK(pbfcl_solver_set_phases(s, phase, n));
        for (int b = 0; b < nb; b++)
            CHECK(pbfcl_solver_set_body(s, b, 1.0f, 500.0f));
    }
    timing r = time_frames(s, frames);
    printf("%-8s %10zu %10zu %6d %10.3f %10.3f %8.2f %12.3f %9.2f\n", nb ? "bodies" : "fluid",
           n_fluid, n - n_fluid, nb, r.mean, r.best, r.substeps, r.first_mean, r.first_substeps);
    print_kernels(s, nb ? "bodies" : "fluid", frames, (int)lround(r.substeps * frames));
    CHECK(pbfcl_solver_destroy(s));
    free(pos);
    free(phase);
    return r;
}

int main(int argc, char **argv)
{
    size_t fluid = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    int nb = argc > 2 ? atoi(argv[2]) : 64, size = argc > 3 ? atoi(argv[3]) : 2000;
    int frames = argc > 4 ? atoi(argv[4]) : 300;
    const char *solver = argc > 6 ? argv[6] : "default";
    int accelerated = strcmp(solver, "accelerated") == 0;
    if (fluid < 1000 || nb < 1 || nb > 1024 || size < 8 || frames < 1 ||
        (!accelerated && strcmp(solver, "default") != 0)) {
        fprintf(stderr, "usage: bench_bodies [FLUID_PARTICLES >= 1000 [BODIES 1..1024 [BODY_SIZE "
                        ">= 8 [FRAMES >= 1 [DEVICE [default|accelerated]]]]]]\n");
        return 2;
    }
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.device = argc > 5 ? argv[5] : NULL;
    pbfcl_context *ctx = NULL;
    CHECK(pbfcl_context_create(PBFCL_VERSION, &cd, &ctx));
    char name[256];
    CHECK(pbfcl_context_device_name(ctx, name, sizeof name));
    printf("# device: %s; dam-break, %d frames timed after 10, bodies of %d kg/m^3, %s solver\n",
           name, frames, 500, solver);
    printf("# ms_mean, ms_min, substeps: over the %d timed frames; first_*: over the first %d "
           "(the first second)\n",
           frames, frames < FIRST_SECOND ? frames : FIRST_SECOND);
    printf("%-8s %10s %10s %6s %10s %10s %8s %12s %9s\n", "run", "fluid", "solid", "bodies",
           "ms_mean", "ms_min", "substeps", "first_ms", "first_sub");
    timing f = run(ctx, fluid, 0, size, frames, accelerated),
           b = run(ctx, fluid, nb, size, frames, accelerated);
    printf("# bodies / fluid alone: %.3fx per frame (%.3fx per substep) over the %d frames; "
           "%.3fx (%.3fx) over the first %d\n",
           b.mean / f.mean, (b.mean / b.substeps) / (f.mean / f.substeps), frames,
           b.first_mean / f.first_mean,
           (b.first_mean / b.first_substeps) / (f.first_mean / f.first_substeps),
           frames < FIRST_SECOND ? frames : FIRST_SECOND);
    CHECK(pbfcl_context_destroy(ctx));
    return 0;
}
