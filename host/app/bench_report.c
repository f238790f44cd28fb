/* `pbfcl bench`'s options and report (bench_report.h): the usage, the parsing of the options,
 * and the report of the measured steps, the same whether they ran on one device or split over
 * MPI ranks. */
#include "bench_report.h"

#include "cli_args.h"
#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "run_guard.h"

#include <stdlib.h>
#include <string.h>

#define BENCH_DEFAULT_STEPS 50
#define BENCH_DEFAULT_WARMUP 5
#define BENCH_MAX_STEPS 100000LL
#define BENCH_MAX_DIFFUSE 100000000LL

void bench_usage(FILE *f)
{
    fprintf(f, "usage: pbfcl bench [--scene NAME|FILE] [--particles N] [--steps S] [--warmup W] "
               "[--diffuse N] [--device D] [solver options]\n\n"
               "Times simulation steps (frames) on the device: per stage and per step, the median "
               "and minimum of the OpenCL profiling-event times over S steps after W warm-up "
               "steps, and particles * steps per second. A scene's emitters and drains run after "
               "every step, as in `pbfcl run`; their host time is reported apart. Output: "
               "tab-separated columns; lines starting with # are comments. A measured step "
               "whose fluid collapsed (density error above 50 %%), whose neighbour lists were "
               "cut short or that blew up is marked BROKEN and bench exits with status 3.\n\n");
    fprintf(f, "  %-24s %s\n", "--steps S", "measured steps (default 50; 1 to 100000)");
    fprintf(f, "  %-24s %s\n", "--warmup W",
            "steps run first, not measured (default 5; 0 to 100000)");
    fprintf(f, "  %-24s %s\n", "--diffuse N",
            "also make spray, foam and bubbles, up to N of them (the diffuse stage; default 0: "
            "off; 1 to 100000000)");
    pbfcl_scene_options_help(f);
}

int bench_parse_args(int argc, char **argv, bench_args *a)
{
    memset(a, 0, sizeof *a);
    pbfcl_scene_options_init(&a->scene);
    a->steps = BENCH_DEFAULT_STEPS;
    a->warmup = BENCH_DEFAULT_WARMUP;
    for (int i = 1; i < argc;) {
        int r = pbfcl_scene_options_parse(&a->scene, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *opt = argv[i];
        if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
            return 1;
        bool steps = pbfcl_cli_is(opt, "--steps"), warmup = pbfcl_cli_is(opt, "--warmup");
        bool diffuse = pbfcl_cli_is(opt, "--diffuse");
        if (!steps && !warmup && !diffuse) {
            pbfcl_errorf("bench: unknown option '%s' (see `pbfcl bench --help`)", opt);
            return 2;
        }
        const char *val;
        if (!pbfcl_cli_value(argc, argv, &i, &val))
            return 2;
        if (diffuse ? !pbfcl_cli_count("--diffuse", val, 1, BENCH_MAX_DIFFUSE, &a->diffuse)
                    : !pbfcl_cli_count(steps ? "--steps" : "--warmup", val, steps ? 1 : 0,
                                       BENCH_MAX_STEPS, steps ? &a->steps : &a->warmup))
            return 2;
    }
    return 0;
}

bench_stage *bench_column(bench_times *t, const char *name)
{
    for (int k = 0; k < t->stage_count; k++)
        if (!strcmp(t->stages[k].name, name))
            return &t->stages[k];
    bench_stage *grown = realloc(t->stages, (size_t)(t->stage_count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    t->stages = grown;
    bench_stage *col = &t->stages[t->stage_count];
    if (!(col->ms = calloc((size_t)t->steps, sizeof *col->ms)))
        return NULL;
    col->name = name;
    t->stage_count++;
    return col;
}

/* Median and minimum of one column. */
static void column_stats(const bench_times *t, const double *col, double *median, double *min)
{
    double *v = malloc((size_t)t->steps * sizeof *v);
    if (!v) {
        *median = *min = 0.0;
        return;
    }
    memcpy(v, col, (size_t)t->steps * sizeof *v);
    *median = pbfcl_median(v, (int)t->steps);
    *min = v[0]; /* sorted by pbfcl_median */
    free(v);
}

static int by_time_desc(const void *a, const void *b)
{
    double x = ((const bench_kernel *)a)->ms, y = ((const bench_kernel *)b)->ms;
    return (x < y) - (x > y);
}

/* The kernels of the measured steps, slowest first: mean ms and launches per step. */
static void kernel_report(const bench_times *t)
{
    int count = t->kernel_count;
    bench_kernel *rows = calloc(count > 0 ? (size_t)count : 1, sizeof *rows);
    if (!rows)
        return;
    memcpy(rows, t->kernels, (size_t)count * sizeof *rows);
    qsort(rows, (size_t)count, sizeof *rows, by_time_desc);
    printf("kernel\tms_per_step\tlaunches_per_step\tus_per_launch\n");
    for (int k = 0; k < count; k++)
        printf("%s\t%.4f\t%.2f\t%.2f\n", rows[k].name, rows[k].ms / (double)t->steps,
               (double)rows[k].launches / (double)t->steps,
               rows[k].launches ? 1e3 * rows[k].ms / (double)rows[k].launches : 0.0);
    free(rows);
}

/* The report; n is the particles at the start (with emitters or drains the particle columns
 * use the mean active count of the measured steps). */
void bench_report(const bench_args *a, const bench_scene *scene, size_t n, const char *device,
                  const bench_times *t)
{
    const pbfcl_solver_params *v = &scene->vp;
    char method[128];
    if (v->method == PBFCL_METHOD_SPH)
        snprintf(method, sizeof method, "speed of sound %g m/s (0: derived); alpha %g; sph_cfl %g",
                 v->speed_of_sound, v->artificial_viscosity, v->sph_cfl);
    else
        snprintf(method, sizeof method, "iterations %d; stabilization %d", v->iterations,
                 v->stabilization_iterations);
    char path[256];
    if (t->ranks > 1)
        snprintf(path, sizeof path,
                 "split over %d MPI ranks: a step's time is the slowest rank's wall clock for "
                 "it, a stage's the largest device time of the ranks (pbfcl %s)",
                 t->ranks, pbfcl_version_string());
    else
        snprintf(path, sizeof path, "through the API (pbfcl %s)", pbfcl_version_string());
    printf("# pbfcl bench: device %s; scene %s; particles %zu; steps %lld after %lld "
           "warm-up; solver %s; substeps >= %d (adaptive); %s; %s\n",
           device, scene->name, n, t->steps, a->warmup, pbfcl_method_name(v->method), v->substeps,
           method, path);
    if (a->diffuse > 0 && t->solver) {
        size_t count = 0;
        unsigned long long dropped = 0;
        pbfcl_solver_diffuse_count(t->solver, &count, &dropped);
        printf("# diffuse particles (spray, foam, bubbles): capacity %lld; %zu after the last "
               "step; %llu emissions dropped for want of room\n",
               a->diffuse, count, dropped);
    }
    if (t->flow) {
        double med_flow = pbfcl_median(t->flow_ms, (int)t->steps);
        printf("# emitters and drains (after each step, as `pbfcl run` runs them): %zu particles "
               "emitted and %zu drained over the measured steps; active particles: mean %.0f, "
               "%zu after the last step (the particle columns below use the mean); their host "
               "time (not in the device time or the wall clock): median %.4f ms per step\n",
               t->emitted, t->drained, t->active_sum / (double)t->steps, t->active_end, med_flow);
        n = (size_t)(t->active_sum / (double)t->steps + 0.5);
    }
    printf("stage\tmedian_ms\tmin_ms\n");
    double med, min;
    for (int k = 0; k < t->stage_count; k++) {
        column_stats(t, t->stages[k].ms, &med, &min);
        printf("%s\t%.4f\t%.4f\n", t->stages[k].name, med, min);
    }
    column_stats(t, t->step_ms, &med, &min);
    printf("step\t%.4f\t%.4f\n", med, min);
    double *sub_ms = malloc((size_t)t->steps * sizeof *sub_ms);
    long long substeps = 0;
    for (long long s = 0; s < t->steps; s++) {
        substeps += t->substeps[s];
        if (sub_ms)
            sub_ms[s] = t->step_ms[s] / t->substeps[s];
    }
    double med_sub = sub_ms ? pbfcl_median(sub_ms, (int)t->steps) : 0.0;
    free(sub_ms);
    /* A step here is one frame of dt; a substep is one pass of the simulation-step outline. */
    printf("# particles\tsteps\tms_per_step\tparticle_steps_per_s\tsubsteps_per_step\t"
           "ms_per_substep\tparticle_substeps_per_s\n");
    printf("%zu\t%lld\t%.4f\t%.4g\t%.2f\t%.4f\t%.4g\n", n, t->steps, med,
           med > 0 ? (double)n / (med * 1e-3) : 0.0, (double)substeps / (double)t->steps, med_sub,
           med_sub > 0 ? (double)n / (med_sub * 1e-3) : 0.0);
    printf("# wall clock: %.4f ms per step (the host's time for the measured steps: device time, "
           "the gaps between launches and the per-step reads%s)\n",
           1e3 * t->wall_s / (double)t->steps,
           t->ranks > 1 ? "; the slowest rank's, the exchanges included" : "");
    double avg_sum = 0.0, avg_most = 0.0, max_most = 0.0;
    for (long long s = 0; s < t->steps; s++) {
        avg_sum += t->density_avg[s];
        avg_most = t->density_avg[s] > avg_most ? t->density_avg[s] : avg_most;
        max_most = t->density_max[s] > max_most ? t->density_max[s] : max_most;
    }
    printf("# density error of the measured steps (compression, %% of rest density): mean %.3f, "
           "largest step mean %.3f, largest particle %.3f; neighbour list overflows %u\n",
           avg_sum / (double)t->steps, avg_most, max_most, t->overflow);
    kernel_report(t);
}

/* Whether measured step s is broken: its fluid collapsed past the run guard's limit, its
 * neighbour lists were cut short, or it blew up. */
static bool bench_step_broken(const bench_times *t, long long s)
{
    return t->density_avg[s] > RUN_GUARD_DENSITY_PERCENT || t->step_overflow[s] > 0 ||
           t->step_unstable[s];
}

/* The mean step beside the median, and a line for every broken measured step (at most 10,
 * then a count) with a closing warning on stdout and stderr; returns how many were broken. */
long long bench_report_validity(const bench_times *t, long long warmup)
{
    double sum = 0.0, med, min;
    for (long long s = 0; s < t->steps; s++)
        sum += t->step_ms[s];
    column_stats(t, t->step_ms, &med, &min);
    printf("# step time over the measured steps: mean %.4f ms, median %.4f ms, min %.4f ms\n",
           sum / (double)t->steps, med, min);
    long long broken = 0;
    for (long long s = 0; s < t->steps; s++) {
        if (!bench_step_broken(t, s))
            continue;
        if (++broken <= 10)
            printf("# BROKEN measured step %lld (frame %lld of the run): density error mean %.3f "
                   "%% (the run "
                   "guard's limit is %g %%), neighbour lists cut short %u times%s\n",
                   s + 1, warmup + s + 1, t->density_avg[s], RUN_GUARD_DENSITY_PERCENT,
                   t->step_overflow[s], t->step_unstable[s] ? ", blew up (NaN or max_speed)" : "");
    }
    if (broken > 10)
        printf("# BROKEN: %lld more steps\n", broken - 10);
    if (broken > 0) {
        const char *msg = "WARNING: %lld of the %lld measured steps are broken (see the BROKEN "
                          "lines): the times above are not the speed of a sound run; raise "
                          "--substeps, --iterations or lower --cfl\n";
        printf("# ");
        printf(msg, broken, t->steps);
        fprintf(stderr, "pbfcl bench: ");
        fprintf(stderr, msg, broken, t->steps);
    }
    return broken;
}

bool bench_times_alloc(bench_times *t)
{
    size_t n = (size_t)t->steps;
    return (t->step_ms = calloc(n, sizeof *t->step_ms)) &&
           (t->substeps = calloc(n, sizeof *t->substeps)) &&
           (t->density_avg = calloc(n, sizeof *t->density_avg)) &&
           (t->density_max = calloc(n, sizeof *t->density_max)) &&
           (t->step_overflow = calloc(n, sizeof *t->step_overflow)) &&
           (t->step_unstable = calloc(n, sizeof *t->step_unstable)) &&
           (t->flow_ms = calloc(n, sizeof *t->flow_ms));
}

void bench_times_free(bench_times *t)
{
    for (int k = 0; k < t->stage_count; k++)
        free(t->stages[k].ms);
    free(t->stages);
    free(t->kernels);
    free(t->step_ms);
    free(t->substeps);
    free(t->density_avg);
    free(t->density_max);
    free(t->step_overflow);
    free(t->step_unstable);
    free(t->flow_ms);
}
