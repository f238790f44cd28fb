/* `pbfcl run`: a headless simulation of a scene for a number of steps, with a progress bar,
 * optional PLY frames and a per-step statistics CSV, stopped with a clear message if the
 * simulation blows up. Outputs are checked before the run starts. The simulation runs through
 * the public API (pbfcl.h), so frames come in the particles' own order, the same every frame. */
#include "app_env.h"
#include "commands.h"
#include "export_ply.h"
#include "pbfcl.h"
#include "profile.h"
#include "scene_options.h"
#include "stats_csv.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_DEFAULT_STEPS 300
#define RUN_MAX_STEPS 1000000000LL

/* The options of `pbfcl run`. */
typedef struct run_args {
    pbfcl_scene_options scene;
    long long steps;
    const char *export_dir;
    long long every;
    bool every_set;
    const char *stats_path;
} run_args;

/* Everything a run holds; released by run_state_destroy. */
typedef struct run_state {
    pbfcl_scene_setup *setup; /* the scene, with the command line's overrides */
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
    char name[64];
    float *positions; /* initial positions, then the export buffer (n xyz) */
    float *velocities, *densities;
    size_t n;
    pbfcl_stats_csv csv;
    pbfcl_context *ctx;
    pbfcl_solver *solver;
    char device[300];
    pbfcl_stats last;
    long long overflow_steps; /* steps in which a neighbour list was cut short */
    long long substeps;       /* substeps taken, summed over the steps */
} run_state;

static void run_usage(FILE *f)
{
    fprintf(f, "usage: pbfcl run [--scene NAME|FILE] [--particles N] [--steps S] [--export DIR "
               "[--every K]] [--stats FILE.csv] [solver options]\n\n"
               "Runs a scene without a window and reports steps per second and the final "
               "density error.\n\n");
    fprintf(f, "  %-24s %s\n", "--steps S", "frames to simulate (default 300; 1 to 1e9)");
    fprintf(f, "  %-24s %s\n", "--export DIR",
            "write DIR/frame_NNNNN.ply at steps 0, K, 2K, ... (0: the initial state)");
    fprintf(f, "  %-24s %s\n", "--every K", "export every K steps (default 1)");
    fprintf(f, "  %-24s %s\n", "--stats FILE.csv", "one row per step (columns: docs/SCENES.md)");
    pbfcl_scene_options_help(f);
}

/* Parses one integer option value in [lo, hi]; false (with a message) if it is not valid. */
static bool parse_count(const char *opt, const char *text, long long lo, long long hi,
                        long long *out)
{
    if (pbfcl_parse_llong(text, out) && *out >= lo && *out <= hi)
        return true;
    pbfcl_errorf("%s: '%s' is not valid; expected an integer >= %lld and <= %lld", opt, text, lo,
                 hi);
    return false;
}

/* Returns 0 when parsed, 1 for --help, 2 on a usage error (message printed). */
static int parse_run_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    pbfcl_scene_options_init(&a->scene);
    a->steps = RUN_DEFAULT_STEPS;
    a->every = 1;
    for (int i = 1; i < argc;) {
        int r = pbfcl_scene_options_parse(&a->scene, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *opt = argv[i];
        if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
            return 1;
        bool known = !strcmp(opt, "--steps") || !strcmp(opt, "--export") ||
                     !strcmp(opt, "--every") || !strcmp(opt, "--stats");
        if (!known) {
            pbfcl_errorf("run: unknown option '%s' (see `pbfcl run --help`)", opt);
            return 2;
        }
        if (i + 1 >= argc || argv[i + 1][0] == '\0') {
            pbfcl_errorf("%s needs a value (see `pbfcl run --help`)", opt);
            return 2;
        }
        const char *val = argv[i + 1];
        i += 2;
        if (!strcmp(opt, "--steps") && !parse_count(opt, val, 1, RUN_MAX_STEPS, &a->steps))
            return 2;
        if (!strcmp(opt, "--every") && !parse_count(opt, val, 1, RUN_MAX_STEPS, &a->every))
            return 2;
        a->every_set |= !strcmp(opt, "--every");
        if (!strcmp(opt, "--export"))
            a->export_dir = val;
        if (!strcmp(opt, "--stats"))
            a->stats_path = val;
    }
    if (a->every_set && !a->export_dir) {
        pbfcl_errorf("--every sets how often --export writes a frame; give --export DIR too");
        return 2;
    }
    return 0;
}

/* Progress on stderr: a bar redrawn with \r on a terminal, else a line every ~10%. */
typedef struct progress {
    bool tty;
    double start, last_draw;
    long long total, every_line;
} progress;

static void progress_init(progress *p, long long total)
{
    p->tty = isatty(fileno(stderr));
    p->start = p->last_draw = pbfcl_wall_seconds();
    p->total = total;
    p->every_line = total >= 10 ? total / 10 : 1;
}

static void progress_update(progress *p, long long step)
{
    double t = pbfcl_wall_seconds(), elapsed = t - p->start;
    double rate = elapsed > 0 ? (double)step / elapsed : 0.0;
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
    } else if (step % p->every_line == 0 || step == p->total) {
        fprintf(stderr, "step %lld/%lld (%.0f%%): %.1f steps/s, ETA %.0f s\n", step, p->total,
                100.0 * (double)step / (double)p->total, rate, eta);
    }
    fflush(stderr);
}

/* Ends a terminal progress bar early (so messages start on a new line). */
static void progress_break(progress *p, long long step)
{
    if (p->tty && step < p->total)
        fputc('\n', stderr);
}

static void run_state_destroy(run_state *r, bool remove_empty_csv)
{
    pbfcl_solver_destroy(r->solver);
    r->solver = NULL;
    pbfcl_context_destroy(r->ctx);
    r->ctx = NULL;
    pbfcl_stats_csv_close(&r->csv, remove_empty_csv && r->csv.rows == 0);
    pbfcl_scene_setup_destroy(r->setup);
    r->setup = NULL;
    free(r->positions);
    free(r->velocities);
    free(r->densities);
    r->positions = r->velocities = r->densities = NULL;
}

/* Builds the scene, checks the outputs, opens the device and creates the simulation; all of
 * it before the first step, so bad input fails at once. */
static pbfcl_status run_prepare(const run_args *a, run_state *r)
{
    PBFCL_TRY(pbfcl_scene_options_build(&a->scene, &r->setup, &r->positions, &r->n));
    PBFCL_TRY(pbfcl_scene_setup_get_params(r->setup, &r->sp, &r->vp));
    PBFCL_TRY(pbfcl_scene_setup_name(r->setup, r->name, sizeof r->name));
    if (a->export_dir)
        PBFCL_TRY(pbfcl_export_dir_prepare(a->export_dir));
    if (a->stats_path)
        PBFCL_TRY(pbfcl_stats_csv_open(&r->csv, a->stats_path));
    if (a->export_dir) {
        r->velocities = malloc(r->n * 3 * sizeof(float));
        r->densities = malloc(r->n * sizeof(float));
        if (!r->velocities || !r->densities) {
            pbfcl_errorf("out of host memory for the export buffers of %zu particles", r->n);
            return PBFCL_ERR_OUT_OF_MEMORY;
        }
    }
    pbfcl_context_desc cd;
    app_context_desc(&cd, a->scene.device);
    PBFCL_TRY(pbfcl_context_create(PBFCL_VERSION, &cd, &r->ctx));
    PBFCL_TRY(pbfcl_context_device_name(r->ctx, r->device, sizeof r->device));
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    sd.capacity = r->n;
    sd.scene = r->sp;
    sd.solver = r->vp;
    PBFCL_TRY(pbfcl_solver_create(r->ctx, &sd, &r->solver));
    return pbfcl_solver_add(r->solver, r->positions, NULL, r->n);
}

/* True (with a message saying what to change) if the step's statistics show a blow-up. */
static bool blew_up(const run_state *r, const pbfcl_stats *st, long long step)
{
    float limit = 0.0f;
    if (!st->unstable || pbfcl_solver_speed_limit(r->solver, &limit) != PBFCL_OK)
        return false;
    const pbfcl_solver_params *v = &r->vp;
    if (st->nan > 0)
        pbfcl_errorf("the simulation blew up at step %lld: %u of %zu particles have a "
                     "non-finite position or velocity",
                     step, st->nan, r->n);
    else
        pbfcl_errorf("the simulation blew up at step %lld: a particle moves at %.3g m/s, above "
                     "the limit of %.3g m/s for this scene",
                     step, st->max_speed, limit);
    fprintf(stderr,
            "  try a smaller --dt (now %g), more --substeps (now %d) or more --iterations "
            "(now %d)%s\n",
            v->dt, v->substeps, v->iterations,
            st->nan > 0 ? "" : ", or raise --max-speed if such speeds are expected");
    return true;
}

/* Warns, the first time, that a step cut neighbour lists short (the run goes on). */
static void check_overflow(run_state *r, long long step)
{
    if (r->last.neighbor_overflow == 0)
        return;
    unsigned max_neighbors = 0;
    pbfcl_solver_max_neighbors(r->solver, &max_neighbors);
    if (r->overflow_steps++ == 0)
        pbfcl_warnf("step %lld: %u times a particle had more than %u neighbours and its list was "
                    "cut short (the fluid is compressed beyond what the solver resolves); try a "
                    "smaller --dt, more --substeps or more --iterations",
                    step, r->last.neighbor_overflow, max_neighbors);
}

/* Reads the particles back (particle k is the k-th of the initial lattice) and writes
 * DIR/frame_<step>.ply. */
static pbfcl_status export_frame(run_state *r, const char *dir, long long step)
{
    char path[4096];
    PBFCL_TRY(pbfcl_ply_frame_path(path, sizeof path, dir, step));
    PBFCL_TRY(pbfcl_solver_get_positions(r->solver, r->positions, r->n));
    PBFCL_TRY(pbfcl_solver_get_velocities(r->solver, r->velocities, r->n));
    PBFCL_TRY(pbfcl_solver_get_densities(r->solver, r->densities, r->n));
    return pbfcl_ply_write(path, r->n, r->positions, r->velocities, r->densities);
}

/* Steps 1..steps: advance, measure, guard, record, export, report progress. */
static pbfcl_status run_loop(const run_args *a, run_state *r)
{
    progress prog;
    double dt = r->vp.dt;
    if (a->export_dir)
        PBFCL_TRY(export_frame(r, a->export_dir, 0));
    progress_init(&prog, a->steps);
    for (long long step = 1; step <= a->steps; step++) {
        pbfcl_status st = pbfcl_solver_step(r->solver, 0.0f, NULL);
        if (st == PBFCL_OK)
            st = pbfcl_solver_stats(r->solver, &r->last);
        r->substeps += r->last.substeps;
        if (st == PBFCL_OK && a->stats_path)
            st = pbfcl_stats_csv_row(&r->csv, step, (double)step * dt, &r->last);
        if (st == PBFCL_OK && blew_up(r, &r->last, step))
            st = PBFCL_ERR_SIMULATION;
        if (st == PBFCL_OK)
            check_overflow(r, step);
        if (st == PBFCL_OK && a->export_dir && step % a->every == 0)
            st = export_frame(r, a->export_dir, step);
        if (st != PBFCL_OK) {
            progress_break(&prog, step);
            return st;
        }
        progress_update(&prog, step);
    }
    return PBFCL_OK;
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
    pbfcl_status st = run_prepare(&a, &r);
    if (st == PBFCL_OK) {
        printf("pbfcl run: scene %s, %zu particles (radius %g m), %lld step%s of %g s on %s\n",
               r.name, r.n, r.sp.particle_radius, a.steps, a.steps == 1 ? "" : "s", r.vp.dt,
               r.device);
        fflush(stdout);
        double start = pbfcl_wall_seconds();
        st = run_loop(&a, &r);
        double wall = pbfcl_wall_seconds() - start;
        if (st == PBFCL_OK)
            printf("pbfcl run: %lld step%s, %zu particles, %.2f s, %.1f steps/s (%.1f substeps "
                   "each), final density error %.3f %% avg, %.3f %% max\n",
                   a.steps, a.steps == 1 ? "" : "s", r.n, wall, (double)a.steps / wall,
                   (double)r.substeps / (double)a.steps, r.last.density_error_avg,
                   r.last.density_error_max);
        if (st == PBFCL_OK && r.overflow_steps > 0)
            pbfcl_warnf("neighbour lists were cut short in %lld of %lld steps", r.overflow_steps,
                        a.steps);
    }
    run_state_destroy(&r, true);
    if (st != PBFCL_OK && st != PBFCL_ERR_SIMULATION && st != PBFCL_ERR_BAD_ARGUMENT)
        fprintf(stderr, "pbfcl: run failed: %s\n", pbfcl_status_message(st));
    return st == PBFCL_OK ? 0 : (st == PBFCL_ERR_BAD_ARGUMENT ? 2 : 1);
}
