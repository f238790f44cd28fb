/* `pbfcl run`: a headless simulation of a scene for a number of steps, with a progress bar,
 * optional frames (PLY or VTK), a per-step statistics CSV and checkpoints, stopped with a
 * clear message if the simulation blows up, and cleanly (summary, checkpoint) on Ctrl-C,
 * SIGTERM, SIGHUP or SIGPIPE (signals.h).
 * Outputs are checked before the run starts (run_outputs.c). The solver is driven through
 * the public API (include/pbfcl.h) only. */
#include "app_env.h"
#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "checkpoint.h"
#include "cli_args.h"
#include "commands.h"
#include "run_guard.h"
#include "run_outputs.h"
#include "scene_options.h"
#include "signals.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_DEFAULT_STEPS 300
#define RUN_MAX_STEPS 1000000000LL

/* The options of `pbfcl run`. */
typedef struct run_args {
    pbfcl_scene_options scene;
    long long steps;
    bool every_set, format_set, up_set, checkpoint_every_set, quiet;
    const char *resume_path;
    run_outputs out;
} run_args;

/* Everything a run holds; released by run_state_destroy. */
typedef struct run_state {
    char name[64];            /* the scene's */
    pbfcl_solver_desc desc;   /* capacity n and the parameters */
    float *positions;         /* initial positions (NULL when resuming); pbfcl_free'd */
    pbfcl_scene_setup *setup; /* the scene (the checkpoint's when resuming) */
    size_t n;                 /* active particles */
    size_t *removed;          /* room for n: the drained particles of a step */
    bool flow;                /* the scene has emitters or drains */
    unsigned *resume_ids;     /* when resuming: the frames' ids from the checkpoint */
    long long first_step;     /* 0, or the checkpoint's step when resuming */
    pbfcl_checkpoint *checkpoint;
    pbfcl_context *ctx;
    char device[256];
    pbfcl_solver *solver;
    pbfcl_stats last;
    run_guard guard;
    long long substeps; /* substeps taken, summed over the steps */
    long long done;     /* the last step completed */
} run_state;

static void run_usage(FILE *f)
{
    fprintf(f, "usage: pbfcl run [--scene NAME|FILE] [--particles N] [--steps S] [--export DIR "
               "[--every K] [--format ply|vtk] [--up y|z]] [--stats FILE.csv] [--checkpoint FILE "
               "[--checkpoint-every K]] [--resume FILE] [--force] [--quiet] [solver options]\n\n"
               "Runs a scene without a window and reports steps per second and the final "
               "density error.\n\n");
    static const char *const lines[][2] = {
        {"--steps S", "run until step S (default 300; 1 to 1e9)"},
        {"--export DIR", "write DIR/frame_NNNNN.ply|vtu at steps 0, K, 2K, ... (0: the initial "
                         "state); VTK adds DIR/frames.pvd with the simulated times; cloth and "
                         "ropes add DIR/mesh_NNNNN.ply|vtp, bodies DIR/bodies.csv, colliders "
                         "DIR/shapes.csv and DIR/shape_NN.obj"},
        {"--every K", "export every K steps (default 1)"},
        {"--format ply|vtk", "frame format (default ply; vtk: .vtu for ParaView)"},
        {"--up y|z", "the axis that is up in the frames (default y; z for z-up tools)"},
        {"--stats FILE.csv", "one row per step (columns: docs/SCENES.md)"},
        {"--checkpoint FILE", "write the whole state to FILE at the end, when stopped, and "
                              "every --checkpoint-every K steps"},
        {"--checkpoint-every K", "checkpoint every K steps (default: only at the end)"},
        {"--resume FILE", "continue the run saved in FILE (its scene and settings) up to --steps"},
        {"--force", "replace existing frames, statistics file or other files"},
        {"--quiet", "print only warnings and errors"},
        {"--version", "print pbfcl's version"},
    };
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++)
        fprintf(f, "  %-24s %s\n", lines[k][0], lines[k][1]);
    pbfcl_scene_options_help(f);
    fprintf(f,
            "\nExit status: 0 done, 1 failed (device, files, blow-up), 2 bad option, scene or "
            "checkpoint, 128 + N stopped by signal N (after a clean stop: 129 SIGHUP, 130 SIGINT, "
            "141 SIGPIPE, 143 SIGTERM).\n");
}

/* Parses one of run's own valued options; false (message printed) if it is not valid. */
static bool parse_run_value(run_args *a, const char *opt, const char *val)
{
    run_outputs *o = &a->out;
    if (!strcmp(opt, "--steps"))
        return pbfcl_cli_count(opt, val, 1, RUN_MAX_STEPS, &a->steps);
    if (!strcmp(opt, "--every"))
        return (a->every_set = true) && pbfcl_cli_count(opt, val, 1, RUN_MAX_STEPS, &o->every);
    if (!strcmp(opt, "--checkpoint-every"))
        return (a->checkpoint_every_set = true) &&
               pbfcl_cli_count(opt, val, 1, RUN_MAX_STEPS, &o->checkpoint_every);
    if (!strcmp(opt, "--format") || !strcmp(opt, "--up")) {
        bool format = !strcmp(opt, "--format");
        const char *a0 = format ? "ply" : "y", *a1 = format ? "vtk" : "z";
        if (strcmp(val, a0) != 0 && strcmp(val, a1) != 0) {
            pbfcl_errorf("%s: '%s' is not valid; expected %s or %s", opt, val, a0, a1);
            return false;
        }
        if (format)
            o->format = strcmp(val, "vtk") ? PBFCL_FORMAT_PLY : PBFCL_FORMAT_VTK;
        else
            o->z_up = !strcmp(val, "z");
        a->format_set |= format;
        a->up_set |= !format;
        return true;
    }
    if (!strcmp(opt, "--export"))
        o->export_dir = val;
    else if (!strcmp(opt, "--stats"))
        o->stats_path = val;
    else if (!strcmp(opt, "--checkpoint"))
        o->checkpoint_path = val;
    else
        a->resume_path = o->resume_path = val;
    return true;
}

/* Checks the combinations of options; false (message printed) if one makes no sense. */
static bool check_combinations(const run_args *a)
{
    const run_outputs *o = &a->out;
    if ((a->every_set || a->format_set || a->up_set) && !o->export_dir) {
        pbfcl_errorf("--every, --format and --up set how --export writes frames; give --export "
                     "DIR too");
        return false;
    }
    if (a->checkpoint_every_set && !o->checkpoint_path) {
        pbfcl_errorf("--checkpoint-every sets how often --checkpoint writes; give --checkpoint "
                     "FILE too");
        return false;
    }
    if (a->resume_path) {
        pbfcl_scene_options given = a->scene, none;
        pbfcl_scene_options_init(&none);
        given.device = NULL;
        if (memcmp(&given, &none, sizeof none) != 0) {
            pbfcl_errorf("--resume continues the checkpoint's own scene and settings; leave "
                         "out --scene, --particles and the solver options (--device may be "
                         "given)");
            return false;
        }
    }
    return true;
}

/* Returns 0 when parsed, 1 for --help, 2 on a usage error (message printed). */
static int parse_run_args(int argc, char **argv, run_args *a)
{
    static const char *const valued[] = {"--steps",      "--export", "--every",
                                         "--stats",      "--format", "--up",
                                         "--checkpoint", "--resume", "--checkpoint-every"};
    memset(a, 0, sizeof *a);
    pbfcl_scene_options_init(&a->scene);
    a->steps = RUN_DEFAULT_STEPS;
    a->out.every = 1;
    a->out.resume_step = -1;
    for (int i = 1; i < argc;) {
        int r = pbfcl_scene_options_parse(&a->scene, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *opt = argv[i], *val;
        if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
            return 1;
        if (pbfcl_cli_is(opt, "--force") || pbfcl_cli_is(opt, "--quiet")) {
            bool *flag = pbfcl_cli_is(opt, "--force") ? &a->out.force : &a->quiet;
            if (!pbfcl_cli_flag(argv, &i))
                return 2;
            *flag = true;
            continue;
        }
        size_t k = 0;
        while (k < sizeof valued / sizeof valued[0] && !pbfcl_cli_is(opt, valued[k]))
            k++;
        if (k == sizeof valued / sizeof valued[0]) {
            pbfcl_errorf("run: unknown option '%s' (see `pbfcl run --help`)", opt);
            return 2;
        }
        if (!pbfcl_cli_value(argc, argv, &i, &val) || !parse_run_value(a, valued[k], val))
            return 2;
    }
    return check_combinations(a) ? 0 : 2;
}

/* Progress on stderr: a bar redrawn with \r on a terminal, else a line every ~10%. */
typedef struct progress {
    bool tty, quiet;
    double start, last_draw;
    long long first, total, every_line;
} progress;

static void progress_init(progress *p, long long first, long long total, bool quiet)
{
    p->tty = isatty(fileno(stderr));
    p->quiet = quiet;
    p->start = p->last_draw = pbfcl_wall_seconds();
    p->first = first;
    p->total = total;
    p->every_line = (total - first) >= 10 ? (total - first) / 10 : 1;
}

static void progress_update(progress *p, long long step)
{
    if (p->quiet)
        return;
    double t = pbfcl_wall_seconds(), elapsed = t - p->start;
    double rate = elapsed > 0 ? (double)(step - p->first) / elapsed : 0.0;
    double eta = rate > 0 ? (double)(p->total - step) / rate : 0.0;
    if (p->tty) {
        if (t - p->last_draw < 0.1 && step != p->total)
            return;
        p->last_draw = t;
        int width = 30, filled = (int)((double)width * (double)step / (double)p->total);
        fprintf(stderr, "\r[%.*s%*s] %lld/%lld steps  %.1f steps/s  ETA %.0f s  ", filled,
                "##############################", width - filled, "", step, p->total, rate, eta);
        if (step == p->total)
            fputc('\n', stderr);
    } else if ((step - p->first) % p->every_line == 0 || step == p->total) {
        fprintf(stderr, "step %lld/%lld (%.0f%%): %.1f steps/s, ETA %.0f s\n", step, p->total,
                100.0 * (double)step / (double)p->total, rate, eta);
    }
    fflush(stderr);
}

/* Ends a terminal progress bar early (so messages start on a new line). */
static void progress_break(progress *p, long long step)
{
    if (p->tty && !p->quiet && step < p->total)
        fputc('\n', stderr);
}

static void run_state_destroy(run_state *r)
{
    pbfcl_solver_destroy(r->solver);
    r->solver = NULL;
    pbfcl_context_destroy(r->ctx);
    r->ctx = NULL;
    pbfcl_checkpoint_free(r->checkpoint);
    r->checkpoint = NULL;
    pbfcl_free(r->positions);
    r->positions = NULL;
    pbfcl_scene_setup_destroy(r->setup);
    r->setup = NULL;
    free(r->removed);
    r->removed = NULL;
    free(r->resume_ids);
    r->resume_ids = NULL;
}

/* The capacity (the fill and every emitter's particles), whether the scene has emitters or
 * drains, and room for the drained particles of a step. */
static pbfcl_status load_flow(run_state *r)
{
    int emitters = 0, drains = 0;
    size_t capacity = 0;
    PBFCL_TRY(pbfcl_scene_setup_flow_count(r->setup, &emitters, &drains));
    PBFCL_TRY(pbfcl_scene_setup_capacity(r->setup, &capacity));
    r->desc.capacity = capacity > r->n ? capacity : r->n;
    r->flow = emitters > 0 || drains > 0;
    r->removed = malloc(r->desc.capacity * sizeof *r->removed);
    return r->removed ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
}

/* The scene the options name: its name, parameters and initial positions. */
static pbfcl_status load_scene(run_args *a, run_state *r)
{
    if (pbfcl_scene_is_file(a->scene.scene))
        a->out.scene_path = a->scene.scene;
    PBFCL_TRY(pbfcl_scene_options_build(&a->scene, &r->setup, &r->positions, &r->n));
    PBFCL_TRY(pbfcl_scene_setup_get_params(r->setup, &r->desc.scene, &r->desc.solver));
    PBFCL_TRY(pbfcl_scene_setup_name(r->setup, r->name, sizeof r->name));
    return load_flow(r);
}

/* The scene, particles and first step: from the scene options, or from the checkpoint. */
static pbfcl_status load_start(run_args *a, run_state *r)
{
    pbfcl_solver_desc_defaults(&r->desc);
    if (!a->resume_path)
        return load_scene(a, r);
    pbfcl_checkpoint_info info;
    PBFCL_TRY(pbfcl_checkpoint_read(a->resume_path, &r->checkpoint, &info));
    snprintf(r->name, sizeof r->name, "%s", info.name);
    r->desc.scene = info.scene;
    r->desc.solver = info.solver;
    r->n = info.n;
    r->first_step = info.step;
    a->out.resume_step = info.step;
    PBFCL_TRY(pbfcl_checkpoint_restore_setup(r->checkpoint, &info, &r->setup));
    PBFCL_TRY(load_flow(r));
    if (!(r->resume_ids = malloc(r->n * sizeof *r->resume_ids)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(pbfcl_checkpoint_restore_ids(r->checkpoint, r->resume_ids, r->n, r->desc.capacity,
                                           &a->out.resume_next_id));
    a->out.resume_ids = r->resume_ids;
    if (pbfcl_solver_desc_check(&r->desc) != PBFCL_OK) {
        pbfcl_errorf("checkpoint '%s' holds a scene this pbfcl rejects", a->resume_path);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (a->steps <= info.step) {
        pbfcl_errorf("checkpoint '%s' is at step %lld; give --steps above it to continue (it is "
                     "the step to run until)",
                     a->resume_path, info.step);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* Builds the scene, checks the outputs, opens the device and creates the solver; all of it
 * before the first step, so bad input fails at once. */
static pbfcl_status run_prepare(run_args *a, run_state *r)
{
    PBFCL_TRY(load_start(a, r));
    PBFCL_TRY(pbfcl_solver_desc_check(&r->desc)); /* before the device is opened */
    PBFCL_TRY(run_outputs_check(&a->out));
    pbfcl_context_desc cd;
    app_context_desc(&cd, a->scene.device);
    PBFCL_TRY(pbfcl_context_create(PBFCL_VERSION, &cd, &r->ctx));
    PBFCL_TRY(pbfcl_context_device_name(r->ctx, r->device, sizeof r->device));
    PBFCL_TRY(pbfcl_solver_create(r->ctx, &r->desc, &r->solver));
    if (r->checkpoint) {
        PBFCL_TRY(pbfcl_checkpoint_restore(r->checkpoint, r->solver));
        PBFCL_TRY(pbfcl_checkpoint_check_bodies(r->checkpoint, r->setup, r->solver));
        /* the solver's state holds the collision shapes where they were */
    } else {
        PBFCL_TRY(pbfcl_solver_add(r->solver, r->positions, NULL, r->n));
        PBFCL_TRY(pbfcl_scene_setup_apply_bodies(r->setup, r->solver));
        PBFCL_TRY(pbfcl_solver_compute_densities(r->solver)); /* frame 0's real density */
    }
    a->out.scene_name = r->name;
    a->out.setup = r->setup;
    return run_guard_init(&r->guard, r->solver);
}

/* One step: advance, measure, record, guard, export, checkpoint. */
static pbfcl_status run_step(run_args *a, run_state *r, long long step)
{
    double time = (double)step * r->desc.solver.dt;
    PBFCL_TRY(pbfcl_solver_step(r->solver, 0.0f, NULL));
    size_t n = 0;
    PBFCL_TRY(pbfcl_solver_count(r->solver, &n));
    if (n > r->n) { /* a tearing cloth's new particles, at the end, with the next ids */
        run_outputs_flow(&a->out, NULL, 0, n - r->n);
        r->n = n;
    }
    PBFCL_TRY(pbfcl_solver_stats(r->solver, &r->last));
    r->substeps += r->last.substeps;
    PBFCL_TRY(run_outputs_stats(&a->out, step, time, &r->last));
    if (run_guard_check(&r->guard, r->n, &r->last, step))
        return PBFCL_ERR_SIMULATION;
    if (r->flow) {
        size_t drained = 0, added = 0;
        PBFCL_TRY(pbfcl_scene_setup_flow(r->setup, r->solver, time, r->removed, &drained, &added));
        run_outputs_flow(&a->out, r->removed, drained, added);
        PBFCL_TRY(pbfcl_solver_count(r->solver, &r->n));
    }
    PBFCL_TRY(run_outputs_frame(&a->out, r->solver, step, time));
    r->done = step;
    return run_outputs_checkpoint(&a->out, r->solver, step, time, step == a->steps);
}

/* Steps first+1..steps, until done, failed or stopped by a signal. */
static pbfcl_status run_loop(run_args *a, run_state *r)
{
    progress prog;
    r->done = r->first_step;
    PBFCL_TRY(run_outputs_start(&a->out, r->solver, r->n, r->desc.capacity, r->desc.solver.dt));
    if (r->first_step == 0)
        PBFCL_TRY(run_outputs_frame(&a->out, r->solver, 0, 0.0));
    progress_init(&prog, r->first_step, a->steps, a->quiet);
    for (long long step = r->first_step + 1; step <= a->steps; step++) {
        pbfcl_status st = run_step(a, r, step);
        if (st != PBFCL_OK) {
            progress_break(&prog, step);
            return st;
        }
        progress_update(&prog, step);
        if (pbfcl_signals_caught() && step < a->steps) {
            progress_break(&prog, step);
            double time = (double)step * r->desc.solver.dt;
            return run_outputs_checkpoint(&a->out, r->solver, step, time, true);
        }
    }
    return PBFCL_OK;
}

static void print_summary(const run_args *a, const run_state *r, double wall)
{
    long long steps = r->done - r->first_step;
    int sig = pbfcl_signals_caught();
    if (sig && r->done < a->steps) /* SIGPIPE: standard output may be the closed pipe */
        fprintf(sig == SIGPIPE ? stderr : stdout,
                "pbfcl run: stopped by %s after step %lld of %lld%s%s\n", pbfcl_signals_name(sig),
                r->done, a->steps, a->out.checkpoint_path ? "; checkpoint written to " : "",
                a->out.checkpoint_path ? a->out.checkpoint_path : "");
    if (steps <= 0)
        return;
    printf("pbfcl run: %lld step%s, %zu particles, %.2f s, %.1f steps/s (%.1f substeps each), "
           "final density error %.3f %% avg, %.3f %% max\n",
           steps, steps == 1 ? "" : "s", r->n, wall, (double)steps / wall,
           (double)r->substeps / (double)steps, r->last.density_error_avg,
           r->last.density_error_max);
}

/* The first line: the scene, its size and the device; a closed pipe counts as SIGPIPE. */
static void print_start(const run_args *a, const run_state *r)
{
    if (r->first_step == 0)
        printf("pbfcl run: scene %s, %zu particles (radius %g m), %lld step%s of %g s on %s\n",
               r->name, r->n, r->desc.scene.particle_radius, a->steps, a->steps == 1 ? "" : "s",
               r->desc.solver.dt, r->device);
    else
        printf("pbfcl run: scene %s, %zu particles (radius %g m), resumed from %s: steps %lld to "
               "%lld of %g s on %s\n",
               r->name, r->n, r->desc.scene.particle_radius, a->resume_path, r->first_step + 1,
               a->steps, r->desc.solver.dt, r->device);
    fflush(stdout);
    pbfcl_signals_check_pipe(stdout);
}

/* 0, 1 or 2; 128 + the signal if one stopped the run before its last step. */
static int exit_code(pbfcl_status st, const run_args *a, const run_state *r)
{
    if (st == PBFCL_OK) {
        int sig = pbfcl_signals_caught();
        return sig && r->done < a->steps ? 128 + sig : 0;
    }
    return st == PBFCL_ERR_BAD_ARGUMENT ? 2 : 1;
}

int cmd_run(int argc, char **argv)
{
    run_args a;
    int parsed = parse_run_args(argc, argv, &a);
    if (parsed == 1)
        run_usage(stdout);
    if (parsed != 0)
        return parsed == 1 ? 0 : 2;
    run_state r;
    memset(&r, 0, sizeof r);
    pbfcl_signals_install(); /* before anything is created: a signal now undoes it */
    if (!a.quiet)            /* the library's progress on long set-ups (a mesh sampled) on stderr */
        pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    pbfcl_status st = run_prepare(&a, &r);
    bool started = false;
    if (st == PBFCL_OK && !a.quiet)
        print_start(&a, &r);
    if (st == PBFCL_OK && pbfcl_signals_caught()) { /* stopped before the first step */
        int sig = pbfcl_signals_caught();
        fprintf(sig == SIGPIPE ? stderr : stdout,
                "pbfcl run: stopped by %s before the first step; nothing was written\n",
                pbfcl_signals_name(sig));
    } else if (st == PBFCL_OK) {
        started = true;
        double start = pbfcl_wall_seconds();
        st = run_loop(&a, &r);
        double wall = pbfcl_wall_seconds() - start;
        if (st == PBFCL_OK && !a.quiet)
            print_summary(&a, &r, wall);
        if (st == PBFCL_OK && r.guard.cut_steps > 0)
            pbfcl_warnf("neighbour lists were cut short in %lld of %lld steps", r.guard.cut_steps,
                        r.done - r.first_step);
    }
    pbfcl_status closed = run_outputs_finish(&a.out, started);
    if (st == PBFCL_OK)
        st = closed;
    run_state_destroy(&r);
    if (st != PBFCL_OK && st != PBFCL_ERR_SIMULATION && st != PBFCL_ERR_BAD_ARGUMENT)
        fprintf(stderr, "pbfcl: run failed: %s\n", pbfcl_status_message(st));
    int code = exit_code(st, &a, &r);
    fflush(stdout); /* with the handlers on: a closed pipe is not fatal */
    pbfcl_signals_restore();
    return code;
}
