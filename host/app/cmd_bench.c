/* `pbfcl bench`: the simulation step's device time per stage from OpenCL profiling events,
 * median and minimum over the measured steps after warm-up steps (and the step's mean), and
 * particle-steps per second, as tab-separated columns. It runs the solver through the public
 * API (pbfcl.h), the path an embedding program takes. A measured step whose fluid collapsed
 * (mean density error above the run guard's limit, run_guard.h), whose neighbour lists were cut
 * short or that blew up is marked, and bench then exits with BENCH_EXIT_BROKEN: a speed is never
 * quoted for a broken run. */
#include "app_env.h"
#include "cli_args.h"
#include "commands.h"
#include "pbfcl.h"
#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "run_guard.h"
#include "scene_options.h"

#include <stdlib.h>
#include <string.h>

#define BENCH_DEFAULT_STEPS 50
#define BENCH_DEFAULT_WARMUP 5
#define BENCH_MAX_STEPS 100000LL
#define BENCH_MAX_DIFFUSE 100000000LL

/* The exit status of a bench whose measured steps include a broken one (1: an error, 2: bad
 * arguments). */
#define BENCH_EXIT_BROKEN 3

typedef struct bench_args {
    pbfcl_scene_options scene;
    long long steps, warmup;
    long long diffuse; /* --diffuse: capacity of spray, foam and bubbles; 0 = off */
} bench_args;

static void bench_usage(FILE *f)
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

/* Returns 0 when parsed, 1 for --help, 2 on a usage error (message printed). */
static int parse_bench_args(int argc, char **argv, bench_args *a)
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

/* One column of the measured times: a stage the solver reported (pbfcl_solver_timer) and its
 * ms in each measured step, 0 in a step that did not run it. */
typedef struct bench_stage {
    const char *name;
    double *ms;
} bench_stage;

/* The measured times: a column per stage that ran, in the order first seen, and the step's
 * total; substeps[step] is how many substeps (simulation steps of the outline) it took. */
typedef struct bench_times {
    bench_stage *stages;
    int stage_count;
    double *step_ms;
    int *substeps;
    long long steps;
    pbfcl_solver *solver;    /* its per-kernel totals cover the measured steps */
    double wall_s;           /* host clock over the measured steps, launches and waits included */
    double *density_avg;     /* the stats' density_error_avg after each measured step, % */
    double *density_max;     /* density_error_max, % */
    unsigned overflow;       /* neighbour list overflows summed over the measured steps */
    unsigned *step_overflow; /* neighbour_overflow after each measured step */
    int *step_unstable;      /* the stats' unstable flag (NaN, or faster than max_speed) */
    /* the scene's emitters and drains, run after every step as `pbfcl run` runs them */
    pbfcl_scene_setup *setup;
    bool flow;               /* the scene has emitters or drains */
    double dt;               /* a step's simulated time, s */
    double *flow_ms;         /* host time of the flow after each measured step */
    size_t emitted, drained; /* particles, over the measured steps */
    double active_sum;       /* active particles after each measured step, summed */
    size_t active_end;       /* after the last step */
} bench_times;

/* The column of the stage called name, a new one (zeros) for a stage not seen before; NULL
 * when out of memory. */
static bench_stage *bench_column(bench_times *t, const char *name)
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

/* The time of each stage measured step `step` ran into the stage's column. */
static pbfcl_status bench_record_stages(bench_times *t, long long step)
{
    int count = pbfcl_solver_timer_count(t->solver);
    for (int i = 0; i < count; i++) {
        const char *name;
        double ms;
        PBFCL_TRY(pbfcl_solver_timer(t->solver, i, &name, &ms));
        bench_stage *col = bench_column(t, name);
        if (!col)
            return PBFCL_ERR_OUT_OF_MEMORY;
        col->ms[step] = ms;
    }
    return PBFCL_OK;
}

/* After step number `done` (1-based, warm-up included): the drains and emitters at the time
 * reached, as `pbfcl run` runs them; their host time into *ms (the solver finished). */
static pbfcl_status bench_flow(bench_times *t, long long done, double *ms, size_t *drained,
                               size_t *added)
{
    *ms = 0.0;
    *drained = *added = 0;
    if (!t->flow)
        return PBFCL_OK;
    double start = pbfcl_wall_seconds();
    PBFCL_TRY(
        pbfcl_scene_setup_flow(t->setup, t->solver, (double)done * t->dt, NULL, drained, added));
    PBFCL_TRY(pbfcl_solver_finish(t->solver));
    *ms = 1e3 * (pbfcl_wall_seconds() - start);
    return PBFCL_OK;
}

static pbfcl_status bench_steps(pbfcl_solver *solver, const bench_args *a, bench_times *t)
{
    double flow_ms;
    size_t drained, added;
    for (long long s = 0; s < a->warmup; s++) {
        PBFCL_TRY(pbfcl_solver_step(solver, 0.0f, NULL));
        PBFCL_TRY(bench_flow(t, s + 1, &flow_ms, &drained, &added));
    }
    PBFCL_TRY(pbfcl_solver_finish(solver)); /* warm-up done before timing */
    double start = pbfcl_wall_seconds();
    for (long long s = 0; s < a->steps; s++) {
        pbfcl_timers timers;
        PBFCL_TRY(pbfcl_solver_step(solver, 0.0f, &timers)); /* waits for the device */
        t->substeps[s] = timers.substeps;
        t->step_ms[s] = timers.total;
        PBFCL_TRY(bench_record_stages(t, s));
        /* the accuracy of what was timed; its kernel and read are not part of the wall clock */
        double stats_start = pbfcl_wall_seconds();
        pbfcl_stats stats;
        PBFCL_TRY(pbfcl_solver_stats(solver, &stats));
        t->density_avg[s] = stats.density_error_avg;
        t->density_max[s] = stats.density_error_max;
        t->overflow += stats.neighbour_overflow;
        t->step_overflow[s] = stats.neighbour_overflow;
        t->step_unstable[s] = stats.unstable;
        /* the flow's host time is reported apart, like the stats it is not in the wall clock */
        PBFCL_TRY(bench_flow(t, a->warmup + s + 1, &t->flow_ms[s], &drained, &added));
        t->emitted += added;
        t->drained += drained;
        PBFCL_TRY(pbfcl_solver_count(solver, &t->active_end));
        t->active_sum += (double)t->active_end;
        start += pbfcl_wall_seconds() - stats_start;
    }
    t->wall_s = pbfcl_wall_seconds() - start;
    return PBFCL_OK;
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

/* One kernel's totals over the measured steps. */
typedef struct kernel_row {
    const char *name;
    double ms;
    long long launches;
} kernel_row;

static int by_time_desc(const void *a, const void *b)
{
    double x = ((const kernel_row *)a)->ms, y = ((const kernel_row *)b)->ms;
    return (x < y) - (x > y);
}

/* The kernels of the measured steps, slowest first: mean ms and launches per step. */
static void kernel_report(const bench_times *t)
{
    int count = pbfcl_solver_kernel_times(t->solver, -1, NULL, NULL, NULL);
    kernel_row *rows = calloc(count > 0 ? (size_t)count : 1, sizeof *rows);
    if (!rows)
        return;
    for (int k = 0; k < count; k++)
        pbfcl_solver_kernel_times(t->solver, k, &rows[k].name, &rows[k].ms, &rows[k].launches);
    qsort(rows, (size_t)count, sizeof *rows, by_time_desc);
    printf("kernel\tms_per_step\tlaunches_per_step\tus_per_launch\n");
    for (int k = 0; k < count; k++)
        printf("%s\t%.4f\t%.2f\t%.2f\n", rows[k].name, rows[k].ms / (double)t->steps,
               (double)rows[k].launches / (double)t->steps,
               1e3 * rows[k].ms / (double)rows[k].launches);
    free(rows);
}

/* The scene a bench runs: its name and parameters. */
typedef struct bench_scene {
    char name[64];
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
} bench_scene;

/* The report; n is the particles at the start (with emitters or drains the particle columns
 * use the mean active count of the measured steps). */
static void bench_report(const bench_args *a, const bench_scene *scene, size_t n,
                         const char *device, const bench_times *t)
{
    const pbfcl_solver_params *v = &scene->vp;
    char method[128];
    if (v->method == PBFCL_METHOD_SPH)
        snprintf(method, sizeof method, "speed of sound %g m/s (0: derived); alpha %g; sph_cfl %g",
                 v->speed_of_sound, v->artificial_viscosity, v->sph_cfl);
    else
        snprintf(method, sizeof method, "iterations %d; stabilization %d", v->iterations,
                 v->stabilization_iterations);
    printf("# pbfcl bench: device %s; scene %s; particles %zu; steps %lld after %lld "
           "warm-up; solver %s; substeps >= %d (adaptive); %s; through the API (pbfcl %s)\n",
           device, scene->name, n, t->steps, a->warmup, pbfcl_method_name(v->method), v->substeps,
           method, pbfcl_version_string());
    if (a->diffuse > 0) {
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
           "the gaps between launches and the per-step reads)\n",
           1e3 * t->wall_s / (double)t->steps);
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
static long long bench_report_validity(const bench_times *t, long long warmup)
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

/* Opens the context and a solver holding the scene's particles and bodies. */
static pbfcl_status bench_open(const bench_args *a, const bench_scene *scene,
                               const pbfcl_scene_setup *setup, const float *pos, size_t n,
                               pbfcl_context **ctx, pbfcl_solver **solver)
{
    pbfcl_context_desc cd;
    app_context_desc(&cd, a->scene.device);
    PBFCL_TRY(pbfcl_context_create(PBFCL_VERSION, &cd, ctx));
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    size_t capacity = 0; /* room for every emitter's particles */
    PBFCL_TRY(pbfcl_scene_setup_capacity(setup, &capacity));
    sd.capacity = capacity > n ? capacity : n;
    sd.scene = scene->sp;
    sd.solver = scene->vp;
    PBFCL_TRY(pbfcl_solver_create(*ctx, &sd, solver));
    PBFCL_TRY(pbfcl_solver_add(*solver, pos, NULL, n));
    PBFCL_TRY(pbfcl_scene_setup_apply_bodies(setup, *solver));
    return a->diffuse > 0 ? pbfcl_solver_set_diffuse(*solver, (size_t)a->diffuse) : PBFCL_OK;
}

int cmd_bench(int argc, char **argv)
{
    bench_args a;
    int pr = parse_bench_args(argc, argv, &a);
    if (pr == 1) {
        bench_usage(stdout);
        return 0;
    }
    if (pr)
        return 2;
    bench_scene scene;
    pbfcl_scene_setup *setup = NULL;
    float *pos = NULL;
    size_t n = 0;
    pbfcl_context *ctx = NULL;
    bench_times t = {.steps = a.steps};
    char device[300] = "";
    pbfcl_status st = pbfcl_scene_options_build(&a.scene, &setup, &pos, &n);
    if (st == PBFCL_OK)
        st = pbfcl_scene_setup_get_params(setup, &scene.sp, &scene.vp);
    if (st == PBFCL_OK)
        st = pbfcl_scene_setup_name(setup, scene.name, sizeof scene.name);
    if (st == PBFCL_OK)
        st = bench_open(&a, &scene, setup, pos, n, &ctx, &t.solver);
    int emitters = 0, drains = 0;
    if (st == PBFCL_OK)
        st = pbfcl_scene_setup_flow_count(setup, &emitters, &drains);
    t.setup = setup;
    t.flow = emitters > 0 || drains > 0;
    t.dt = scene.vp.dt;
    if (st == PBFCL_OK)
        st = pbfcl_context_device_name(ctx, device, sizeof device);
    if (st == PBFCL_OK && (!(t.step_ms = calloc((size_t)a.steps, sizeof *t.step_ms)) ||
                           !(t.substeps = calloc((size_t)a.steps, sizeof *t.substeps)) ||
                           !(t.density_avg = calloc((size_t)a.steps, sizeof *t.density_avg)) ||
                           !(t.density_max = calloc((size_t)a.steps, sizeof *t.density_max)) ||
                           !(t.step_overflow = calloc((size_t)a.steps, sizeof *t.step_overflow)) ||
                           !(t.step_unstable = calloc((size_t)a.steps, sizeof *t.step_unstable)) ||
                           !(t.flow_ms = calloc((size_t)a.steps, sizeof *t.flow_ms))))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = bench_steps(t.solver, &a, &t);
    long long broken = 0;
    if (st == PBFCL_OK) {
        bench_report(&a, &scene, n, device, &t);
        broken = bench_report_validity(&t, a.warmup);
    } else
        pbfcl_errorf("bench failed: %s", pbfcl_status_message(st));
    for (int k = 0; k < t.stage_count; k++)
        free(t.stages[k].ms);
    free(t.stages);
    free(t.step_ms);
    free(t.substeps);
    free(t.density_avg);
    free(t.density_max);
    free(t.step_overflow);
    free(t.step_unstable);
    free(t.flow_ms);
    pbfcl_solver_destroy(t.solver);
    pbfcl_scene_setup_destroy(setup);
    pbfcl_context_destroy(ctx);
    free(pos);
    return st != PBFCL_OK ? 1 : (broken > 0 ? BENCH_EXIT_BROKEN : 0);
}
