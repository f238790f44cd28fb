/* `pbfcl bench`: the simulation step's device time per stage from OpenCL profiling events,
 * median and minimum over the measured steps after warm-up steps (and the step's mean), and
 * particle-steps per second, as tab-separated columns. It runs the solver through the public
 * API (pbfcl.h), the path an embedding program takes. A measured step whose fluid collapsed
 * (mean density error above the run guard's limit, run_guard.h), whose neighbour lists were cut
 * short or that blew up is marked, and bench then exits with BENCH_EXIT_BROKEN: a speed is never
 * quoted for a broken run. */
#include "app_env.h"
#include "bench_report.h"
#include "commands.h"
#include "pbfcl.h"
#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"

#include <stdlib.h>
#include <string.h>

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

/* The kernels' totals over the measured steps (bench_steps timed them alone) into t. */
static pbfcl_status bench_kernels(bench_times *t)
{
    int count = pbfcl_solver_kernel_times(t->solver, -1, NULL, NULL, NULL);
    if (count <= 0)
        return PBFCL_OK;
    if (!(t->kernels = calloc((size_t)count, sizeof *t->kernels)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (int k = 0; k < count; k++)
        pbfcl_solver_kernel_times(t->solver, k, &t->kernels[k].name, &t->kernels[k].ms,
                                  &t->kernels[k].launches);
    t->kernel_count = count;
    return PBFCL_OK;
}

int cmd_bench(int argc, char **argv)
{
    bench_args a;
    int pr = bench_parse_args(argc, argv, &a);
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
    bench_times t = {.steps = a.steps, .ranks = 1};
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
    if (st == PBFCL_OK && !bench_times_alloc(&t))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = bench_steps(t.solver, &a, &t);
    if (st == PBFCL_OK)
        st = bench_kernels(&t);
    long long broken = 0;
    if (st == PBFCL_OK) {
        bench_report(&a, &scene, n, device, &t);
        broken = bench_report_validity(&t, a.warmup);
    } else
        pbfcl_errorf("bench failed: %s", pbfcl_status_message(st));
    bench_times_free(&t);
    pbfcl_solver_destroy(t.solver);
    pbfcl_scene_setup_destroy(setup);
    pbfcl_context_destroy(ctx);
    free(pos);
    return st != PBFCL_OK ? 1 : (broken > 0 ? BENCH_EXIT_BROKEN : 0);
}
