/* `pbfcl bench`'s options and report, shared by the bench on one device (cmd_bench.c, through
 * the public API) and the bench split over MPI ranks (host/dist/dist_bench.c): both fill a
 * bench_times with the measured frames and print the same tab-separated report. */
#ifndef PBFCL_BENCH_REPORT_H
#define PBFCL_BENCH_REPORT_H

#include "pbfcl.h"
#include "scene_options.h"

#include <stdbool.h>
#include <stdio.h>

/* The exit status of a bench whose measured steps include a broken one (1: an error, 2: bad
 * arguments). */
#define BENCH_EXIT_BROKEN 3

typedef struct bench_args {
    pbfcl_scene_options scene;
    long long steps, warmup;
    long long diffuse; /* --diffuse: capacity of spray, foam and bubbles; 0 = off */
} bench_args;

/* bench's usage and options. */
void bench_usage(FILE *f);

/* Returns 0 when parsed, 1 for --help, 2 on a usage error (message printed). */
int bench_parse_args(int argc, char **argv, bench_args *a);

/* One column of the measured times: a stage and its ms in each measured step, 0 in a step
 * that did not run it. */
typedef struct bench_stage {
    const char *name;
    double *ms;
} bench_stage;

/* One kernel's totals over the measured steps. */
typedef struct bench_kernel {
    const char *name;
    double ms;
    long long launches;
} bench_kernel;

/* The measured times: a column per stage that ran, in the order first seen, and the step's
 * total; substeps[step] is how many substeps (simulation steps of the outline) it took. */
typedef struct bench_times {
    bench_stage *stages;
    int stage_count;
    double *step_ms;
    int *substeps;
    long long steps;
    bench_kernel *kernels; /* the kernels' totals over the measured steps */
    int kernel_count;
    double wall_s;           /* host clock over the measured steps, launches and waits included */
    double *density_avg;     /* the stats' density_error_avg after each measured step, % */
    double *density_max;     /* density_error_max, % */
    unsigned overflow;       /* neighbour list overflows summed over the measured steps */
    unsigned *step_overflow; /* neighbour_overflow after each measured step */
    int *step_unstable;      /* the stats' unstable flag (NaN, or faster than max_speed) */
    int ranks;               /* > 1: split over MPI ranks (step_ms: the slowest rank's wall) */
    /* one device only: the solver, the scene's emitters and drains, run after every step as
     * `pbfcl run` runs them */
    pbfcl_solver *solver;
    pbfcl_scene_setup *setup;
    bool flow;               /* the scene has emitters or drains */
    double dt;               /* a step's simulated time, s */
    double *flow_ms;         /* host time of the flow after each measured step */
    size_t emitted, drained; /* particles, over the measured steps */
    double active_sum;       /* active particles after each measured step, summed */
    size_t active_end;       /* after the last step */
} bench_times;

/* The per-step arrays of t for t->steps steps; false when out of memory. */
bool bench_times_alloc(bench_times *t);

/* Releases what bench_times_alloc and bench_column allocated (not the solver or setup). */
void bench_times_free(bench_times *t);

/* The column of the stage called name (a static string), a new one (zeros) for a stage not
 * seen before; NULL when out of memory. */
bench_stage *bench_column(bench_times *t, const char *name);

/* The scene a bench runs: its name and parameters. */
typedef struct bench_scene {
    char name[64];
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
} bench_scene;

/* The report; n is the particles at the start (with emitters or drains the particle columns
 * use the mean active count of the measured steps). */
void bench_report(const bench_args *a, const bench_scene *scene, size_t n, const char *device,
                  const bench_times *t);

/* The mean step beside the median, and a line for every broken measured step (at most 10,
 * then a count) with a closing warning on stdout and stderr; returns how many were broken. */
long long bench_report_validity(const bench_times *t, long long warmup);

#endif
