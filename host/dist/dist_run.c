/* `pbfcl run` under mpirun with more than one rank: every rank builds the same scene and
 * plans the same slabs, opens its own device and steps its part (host/dist/); rank 0 writes
 * the statistics (reduced over the ranks) and the frames (gathered by id). Bad input is
 * refused by rank 0 alone, before any device is opened, and every rank exits with status 2; a
 * rank that fails later stops every rank with its message (pbfcl_dist_abort). */
#include "dist.h"
#include "dist_run.h"

#include "body_csv.h"
#include "cli_args.h"
#include "commands.h"
#include "export_ply.h"
#include "export_vtk.h"
#include "run_outputs.h"
#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "scene/scene.h"
#include "scene_options.h"
#include "signals.h"
#include "solver_methods.h"
#include "stats_csv.h"

#include "api_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool dist_launched(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *v = getenv(vars[k]);
        if (v && atoi(v) > 1)
            return true;
    }
    return false;
}

int dist_launched_rank(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
        if (getenv(vars[k]))
            return atoi(getenv(vars[k]));
    return 0;
}

/* --rebalance's default (docs/DISTRIBUTED.md, "Rebalancing", says how it was chosen). */
#define DRUN_REBALANCE_DEFAULT 1.2

bool dist_parse_rebalance(const char *val, double *out)
{
    if (!pbfcl_parse_double(val, out) ||
        (*out != 0.0 && !(*out >= PBFCL_DIST_REBALANCE_MIN && *out <= PBFCL_DIST_REBALANCE_MAX))) {
        pbfcl_errorf("--rebalance: '%s' is not valid; expected 0 (off) or a threshold from %g to "
                     "%g (the most particles a rank may own, as a multiple of the mean)",
                     val, PBFCL_DIST_REBALANCE_MIN, PBFCL_DIST_REBALANCE_MAX);
        return false;
    }
    return true;
}

/* The options of a split run. */
typedef struct drun_args {
    pbfcl_scene_options scene;
    long long steps, every;
    const char *export_dir, *stats_path;
    const char *checkpoint_path, *resume_path;
    long long checkpoint_every; /* 0: only at the end */
    long long rank_capacity;    /* --rank-capacity: particles each rank has room for; 0: all */
    double rebalance;           /* --rebalance: the threshold (pbfcl_dist_set_rebalance); 0 off */
    bool overlap_off;           /* --overlap off (pbfcl_dist_set_overlap) */
    pbfcl_export_format format;
    bool z_up, force, quiet;
} drun_args;

/* A split run's state on this rank. */
typedef struct drun {
    MPI_Comm comm;
    int rank, size;
    pbfcl_scene_setup *setup;
    float *positions, *pos, *vel, *rho;
    size_t n;
    pbfcl_cl cl;
    bool cl_open;
    pbfcl_dist *d;
    pbfcl_stats_csv csv;
    int bodies;                /* the scene's bodies; with --export rank 0 writes bodies.csv */
    int *phases;               /* rank 0, with bodies: each particle's (by id), the scene's */
    pbfcl_body_motion *motion; /* rank 0: a frame's rows of bodies.csv */
    pbfcl_body_csv body_csv;
    size_t capacity;                       /* the particles to come: the fill and emitted */
    long long emitted[PBFCL_MAX_EMITTERS]; /* each emitter's particles so far */
    unsigned *out_ids; /* rank 0: each particle's id in the frames, by the simulation's id (as
                        * one device's run_outputs: kept across drains, the next for emitted) */
    size_t *drained;   /* rank 0: the simulation's ids a step's drains removed */
    unsigned next_id;  /* rank 0: the frames' id of the next emitted particle */
    pbfcl_pvd_entry *pvd;
    size_t pvd_count;
    pbfcl_stats last;
    long long substeps;
    pbfcl_checkpoint *checkpoint; /* when resuming */
    long long first_step;         /* 0, or the checkpoint's step */
    long long done;               /* the last step completed */
    int stop;                     /* the signal every rank agreed stops the run, or 0 */
} drun;

/* Messages: rank 0's alone while every rank says the same (the set-up), each rank's with its
 * number once the ranks go their own ways (devices, steps). */
static int log_rank;
static bool log_every_rank;

static void rank_log(pbfcl_log_level level, const char *message, void *user)
{
    (void)user;
    if (!log_every_rank && log_rank != 0)
        return;
    const char *kind = level == PBFCL_LOG_ERROR     ? "error: "
                       : level == PBFCL_LOG_WARNING ? "warning: "
                                                    : "";
    if (log_every_rank)
        fprintf(stderr, "pbfcl: rank %d: %s%s\n", log_rank, kind, message);
    else
        fprintf(stderr, "pbfcl: %s%s\n", kind, message);
}

/* While the ranks agree, only rank 0 speaks: the others' stderr goes to /dev/null (the
 * program's own messages bypass the log) until every_rank. */
static int saved_stderr = -1;

void dist_speak(bool every_rank)
{
    fflush(stderr);
    if (!every_rank && log_rank != 0 && saved_stderr < 0) {
        saved_stderr = dup(STDERR_FILENO);
        if (!freopen("/dev/null", "w", stderr))
            saved_stderr = -1;
    } else if (every_rank && saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
    log_every_rank = every_rank;
}

void dist_log_setup(int rank)
{
    log_rank = rank;
    pbfcl_set_log(rank_log, NULL, PBFCL_LOG_WARNING);
    dist_speak(false);
}

static void drun_usage(void)
{
    printf("usage: mpirun -np K pbfcl run [--scene NAME|FILE] [--particles N] [--steps S] "
           "[--export DIR [--every K] [--format ply|vtk] [--up y|z]] [--stats FILE.csv] "
           "[--force] [--quiet] [--device A,B,...] [solver options]\n\n"
           "Runs a scene split over the K ranks: slabs of the box along its longest axis with "
           "equal shares of the particles, one device per rank (entry local-rank of the "
           "--device list, else the local rank's GPU); rank 0 writes the frames and "
           "statistics. --checkpoint FILE [--checkpoint-every K] writes one checkpoint (the "
           "format of one device's) and --resume FILE continues one on any number of ranks "
           "(docs/DISTRIBUTED.md).\n\n"
           "  --rank-capacity N        room for N particles on each rank, its own and its "
           "ghosts (default: all of them; not with --resume)\n"
           "  --rebalance R            plan the slabs anew when a rank owns more than R times "
           "the mean (0 off, or %g to %g; default %g)\n"
           "  --overlap on|off         compute the interior while the ghosts' values travel "
           "(default on; the same frames either way)\n",
           PBFCL_DIST_REBALANCE_MIN, PBFCL_DIST_REBALANCE_MAX, DRUN_REBALANCE_DEFAULT);
}

/* One of the valued options; false (message printed) if not valid. */
static bool parse_value(drun_args *a, const char *opt, const char *val)
{
    if (!strcmp(opt, "--steps"))
        return pbfcl_cli_count(opt, val, 1, 1000000000LL, &a->steps);
    if (!strcmp(opt, "--every"))
        return pbfcl_cli_count(opt, val, 1, 1000000000LL, &a->every);
    if (!strcmp(opt, "--format") || !strcmp(opt, "--up")) {
        bool format = !strcmp(opt, "--format");
        const char *a0 = format ? "ply" : "y", *a1 = format ? "vtk" : "z";
        if (strcmp(val, a0) && strcmp(val, a1)) {
            pbfcl_errorf("%s: '%s' is not valid; expected %s or %s", opt, val, a0, a1);
            return false;
        }
        if (format)
            a->format = strcmp(val, "vtk") ? PBFCL_FORMAT_PLY : PBFCL_FORMAT_VTK;
        else
            a->z_up = !strcmp(val, "z");
        return true;
    }
    if (!strcmp(opt, "--checkpoint-every"))
        return pbfcl_cli_count(opt, val, 1, 1000000000LL, &a->checkpoint_every);
    if (!strcmp(opt, "--rank-capacity"))
        return pbfcl_cli_count(opt, val, 1, 1000000000000LL, &a->rank_capacity);
    if (!strcmp(opt, "--rebalance"))
        return dist_parse_rebalance(val, &a->rebalance);
    if (!strcmp(opt, "--overlap"))
        return pbfcl_dist_parse_overlap(val, &a->overlap_off);
    if (!strcmp(opt, "--export"))
        a->export_dir = val;
    else if (!strcmp(opt, "--checkpoint"))
        a->checkpoint_path = val;
    else if (!strcmp(opt, "--resume"))
        a->resume_path = val;
    else
        a->stats_path = val;
    return true;
}

/* Checks the combinations of options, as `pbfcl run` on one device; false (message printed) if
 * one makes no sense. */
static bool check_combinations(const drun_args *a)
{
    if (a->resume_path && a->rank_capacity) {
        pbfcl_errorf("--rank-capacity: a resumed split run loads the whole state on each rank "
                     "before keeping its slab; leave it out with --resume");
        return false;
    }
    if (a->checkpoint_every && !a->checkpoint_path) {
        pbfcl_errorf("--checkpoint-every sets how often --checkpoint writes; give --checkpoint "
                     "FILE too");
        return false;
    }
    pbfcl_scene_options given = a->scene, none;
    pbfcl_scene_options_init(&none);
    given.device = NULL;
    if (a->resume_path && memcmp(&given, &none, sizeof none) != 0) {
        pbfcl_errorf("--resume continues the checkpoint's own scene and settings; leave out "
                     "--scene, --particles and the solver options (--device may be given)");
        return false;
    }
    return true;
}

/* 0 parsed, 1 --help, 2 a usage error (message printed). */
static int parse_args(int argc, char **argv, drun_args *a)
{
    static const char *const valued[] = {"--steps",         "--export",    "--every",
                                         "--format",        "--up",        "--stats",
                                         "--checkpoint",    "--resume",    "--checkpoint-every",
                                         "--rank-capacity", "--rebalance", "--overlap"};
    memset(a, 0, sizeof *a);
    pbfcl_scene_options_init(&a->scene);
    a->steps = 300;
    a->every = 1;
    a->rebalance = DRUN_REBALANCE_DEFAULT;
    for (int i = 1; i < argc;) {
        int r = pbfcl_scene_options_parse(&a->scene, argc, argv, &i);
        if (r != 0) {
            if (r < 0)
                return 2;
            continue;
        }
        const char *opt = argv[i], *val;
        if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
            return 1;
        if (pbfcl_cli_is(opt, "--force") || pbfcl_cli_is(opt, "--quiet")) {
            bool *flag = pbfcl_cli_is(opt, "--force") ? &a->force : &a->quiet;
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
        if (!pbfcl_cli_value(argc, argv, &i, &val) || !parse_value(a, valued[k], val))
            return 2;
    }
    return check_combinations(a) ? 0 : 2;
}

/* Rank 0's outputs, checked before any device is opened: the export directory (no frames of
 * another run in it unless --force: a resumed run's from its first step on), the statistics
 * file and the checkpoint's path. */
static pbfcl_status check_outputs(const drun_args *a, long long first_step)
{
    if (a->export_dir)
        PBFCL_TRY(pbfcl_export_dir_prepare(a->export_dir));
    if (a->stats_path)
        PBFCL_TRY(pbfcl_stats_csv_check(a->stats_path, a->force));
    if (a->checkpoint_path)
        PBFCL_TRY(run_outputs_check_checkpoint(a->checkpoint_path, a->force));
    if (!a->export_dir)
        return PBFCL_OK;
    char first[4096]; /* the first frame this run writes */
    PBFCL_TRY(pbfcl_frame_path(first, sizeof first, a->export_dir,
                               (first_step / a->every + (first_step > 0)) * a->every, a->format));
    if (!a->force && access(first, F_OK) == 0) {
        pbfcl_errorf("'%s' already holds frames ('%s'); give --force to replace them, or another "
                     "--export directory",
                     a->export_dir, first);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* The scene, its slabs and the outputs: the same verdict on every rank (rank 0 checks the
 * files and tells the others). */
/* The checkpoint to resume, its scene and its state checked (every rank reads the same). */
static pbfcl_status load_checkpoint(const drun_args *a, drun *r)
{
    pbfcl_checkpoint_info info;
    PBFCL_TRY(dist_checkpoint_read(r->comm, a->resume_path, &r->checkpoint, &info));
    PBFCL_TRY(pbfcl_checkpoint_restore_setup(r->checkpoint, &info, &r->setup));
    r->n = info.n;
    r->first_step = info.step;
    if (a->steps <= info.step) {
        pbfcl_errorf("checkpoint '%s' is at step %lld; give --steps above it to continue (it is "
                     "the step to run until)",
                     a->resume_path, info.step);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    const pbfcl_scene *scene = pbfcl_api_setup_scene(r->setup);
    PBFCL_TRY(pbfcl_dist_check_scene(scene));
    return dist_checkpoint_check(r->checkpoint, scene, r->n);
}

/* Rank 0's bodies.csv in the export directory (as one device's run writes it: run_outputs.c),
 * with the particles' phases by id for the bodies' velocities. */
static pbfcl_status open_bodies(const drun_args *a, drun *r)
{
    r->phases = malloc(r->n * sizeof *r->phases + 4);
    r->motion = calloc((size_t)r->bodies, sizeof *r->motion);
    if (!r->phases || !r->motion)
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(pbfcl_scene_phases(pbfcl_api_setup_scene(r->setup), r->phases, r->n));
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", a->export_dir, PBFCL_BODY_CSV_NAME);
    return pbfcl_body_csv_open(&r->body_csv, path, a->force);
}

/* Rank 0's rows of bodies.csv for frame step: the poses (the same on every rank) and the
 * velocities from the particles gathered for the frame. */
static pbfcl_status write_bodies(const drun_args *a, drun *r, long long step, double time)
{
    if (!r->motion)
        return PBFCL_OK;
    float pose[7 * PBFCL_MAX_BODIES];
    PBFCL_TRY(pbfcl_sim_read_bodies(pbfcl_dist_sim(r->d), pose, pose + 3 * r->bodies));
    for (int b = 0; b < r->bodies; b++) {
        memcpy(r->motion[b].pos, pose + 3 * b, sizeof r->motion[b].pos);
        memcpy(r->motion[b].quat, pose + 3 * r->bodies + 4 * b, sizeof r->motion[b].quat);
    }
    pbfcl_body_velocities(r->pos, r->vel, r->phases, r->n, r->bodies, r->motion);
    return pbfcl_body_csv_frame(&r->body_csv, step, time, r->motion, r->bodies, a->z_up);
}

/* The scene, its slabs (planned when the devices open for a resumed run, from its positions)
 * and the outputs: the same verdict on every rank (rank 0 checks the files and tells the
 * others). */
static pbfcl_status prepare(const drun_args *a, drun *r, pbfcl_dist_layout *l)
{
    if (a->resume_path) {
        PBFCL_TRY(load_checkpoint(a, r));
    } else {
        PBFCL_TRY(pbfcl_scene_options_build(&a->scene, &r->setup, &r->positions, &r->n));
        const pbfcl_scene *scene = pbfcl_api_setup_scene(r->setup);
        PBFCL_TRY(pbfcl_dist_check_scene(scene));
        r->bodies = scene->body_count;
        if ((r->bodies > 0 || scene->emitter_count > 0 || scene->drain_count > 0) &&
            a->checkpoint_path) {
            pbfcl_errorf("--checkpoint: a run split over ranks does not save %s yet; run scene "
                         "'%s' on one rank (without mpirun, or mpirun -np 1) to checkpoint it, "
                         "or leave out --checkpoint",
                         r->bodies > 0 ? "bodies" : "emitters' or drains' progress", scene->name);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        if (r->bodies > 0 && a->rank_capacity) {
            pbfcl_errorf("--rank-capacity: a split run with bodies needs room for every particle "
                         "on each rank (each body's particles are named by id on every rank); "
                         "leave it out");
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        PBFCL_TRY(pbfcl_scene_setup_capacity(r->setup, &r->capacity));
        pbfcl_pbf_params p;
        PBFCL_TRY(pbfcl_pbf_params_from_scene(scene, &p));
        PBFCL_TRY(pbfcl_dist_plan(scene, p.h, r->positions, r->n, r->size, l));
    }
    const pbfcl_scene *scene = pbfcl_api_setup_scene(r->setup);
    if (scene->collider_count > 0 && (a->checkpoint_path || a->resume_path)) {
        pbfcl_errorf("%s: a split run's checkpoint does not hold the collision shapes yet; "
                     "checkpoint a scene with colliders on one rank (without mpirun, or mpirun "
                     "-np 1)",
                     a->resume_path ? "--resume" : "--checkpoint");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    int st = r->rank == 0 ? (int)check_outputs(a, r->first_step) : 0;
    MPI_Bcast(&st, 1, MPI_INT, 0, r->comm);
    if (st == PBFCL_OK && r->rank == 0 && a->stats_path)
        st = (int)pbfcl_stats_csv_open(&r->csv, a->stats_path, a->force);
    if (st == PBFCL_OK && r->rank == 0 && a->export_dir && r->bodies > 0)
        st = (int)open_bodies(a, r);
    MPI_Bcast(&st, 1, MPI_INT, 0, r->comm);
    return (pbfcl_status)st;
}

/* Every rank's device and part; a rank that fails says why, the others that one did. */
static pbfcl_status start(const drun_args *a, drun *r, const pbfcl_dist_layout *l)
{
    dist_speak(true);
    pbfcl_status st = dist_open_device(r->comm, a->scene.device, &r->cl);
    r->cl_open = st == PBFCL_OK;
    int failed = st != PBFCL_OK, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, r->comm);
    if (any)
        return st != PBFCL_OK ? st : PBFCL_ERR_NO_DEVICE;
    const pbfcl_scene *scene = pbfcl_api_setup_scene(r->setup);
    if (r->checkpoint)
        PBFCL_TRY(pbfcl_dist_create_loaded(&r->d, r->comm, &r->cl, scene, r->n,
                                           pbfcl_checkpoint_section, r->checkpoint));
    else /* room for the emitters' particles too (capacity: n without emitters) */
        PBFCL_TRY(pbfcl_dist_create(&r->d, r->comm, &r->cl, scene, l, r->positions, r->n,
                                    a->rank_capacity           ? (size_t)a->rank_capacity
                                    : scene->emitter_count > 0 ? r->capacity
                                                               : 0));
    PBFCL_TRY(pbfcl_dist_set_rebalance(r->d, a->rebalance)); /* checked when parsed */
    pbfcl_dist_set_overlap(r->d, !a->overlap_off);
    size_t n = r->rank == 0 ? (r->capacity > r->n ? r->capacity : r->n) : 0; /* emitted too */
    r->pos = malloc(12 * n + 12);
    r->vel = malloc(12 * n + 12);
    r->out_ids = malloc(4 * n + 4);
    r->drained = malloc(sizeof *r->drained * n + 8);
    for (size_t i = 0; r->out_ids && i < r->n && r->rank == 0; i++)
        r->out_ids[i] = (unsigned)i;
    r->next_id = (unsigned)r->n;
    r->rho = malloc(4 * n + 4);
    if (!r->pos || !r->vel || !r->rho || !r->out_ids || !r->drained)
        pbfcl_dist_abort(r->comm, 1, "out of host memory for the frames");
    /* frame 0's real density; a resumed state holds its own */
    return r->checkpoint ? PBFCL_OK : pbfcl_dist_compute_density(r->d);
}

/* Frame step (if the export asks for it): gathered by id, written by rank 0. */
static pbfcl_status write_frame(const drun_args *a, drun *r, long long step)
{
    if (!a->export_dir || step % a->every != 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_dist_gather(r->d, r->pos, r->vel, r->rho));
    if (r->rank != 0)
        return PBFCL_OK;
    double time = (double)step * pbfcl_api_setup_scene(r->setup)->solver.dt;
    pbfcl_frame f = {r->n, r->pos, r->vel, r->rho, r->out_ids, NULL, step, time, a->z_up};
    char path[4096];
    PBFCL_TRY(write_bodies(a, r, step, time));
    PBFCL_TRY(pbfcl_frame_path(path, sizeof path, a->export_dir, step, a->format));
    if (a->format == PBFCL_FORMAT_PLY)
        return pbfcl_ply_write(path, &f);
    PBFCL_TRY(pbfcl_vtu_write(path, &f));
    pbfcl_pvd_entry *grown = realloc(r->pvd, (r->pvd_count + 1) * sizeof *grown);
    if (!grown)
        return PBFCL_ERR_OUT_OF_MEMORY;
    r->pvd = grown;
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path; /* frame_NNNNN.vtu */
    size_t len = strlen(name) < sizeof grown->file ? strlen(name) : sizeof grown->file - 1;
    memcpy(grown[r->pvd_count].file, name, len);
    grown[r->pvd_count].file[len] = '\0';
    grown[r->pvd_count++].time = time;
    snprintf(path, sizeof path, "%s/frames.pvd", a->export_dir);
    return pbfcl_pvd_write(path, r->pvd, r->pvd_count);
}

/* A rank-0 output that failed mid-run ends every rank (the others would wait for it). */
static void output_ok(drun *r, pbfcl_status st, const char *what)
{
    if (st != PBFCL_OK)
        pbfcl_dist_abort(r->comm, 1, what);
}

/* With PBFCL_DIST_PROFILE=1, the exchanges' time by part (pbfcl_dist_part), the most of any
 * rank for each, per substep too (docs/DISTRIBUTED.md). */
static void report_parts(const drun_args *a, drun *r, double substeps)
{
    const char *env = getenv("PBFCL_DIST_PROFILE");
    if (!env || !strcmp(env, "") || !strcmp(env, "0"))
        return;
    const pbfcl_dist_traffic *t = pbfcl_dist_traffic_of(r->d);
    double most[PBFCL_DIST_PART_COUNT];
    MPI_Reduce(t->part_seconds, most, PBFCL_DIST_PART_COUNT, MPI_DOUBLE, MPI_MAX, 0, r->comm);
    if (r->rank != 0 || a->quiet)
        return;
    printf("pbfcl run: the exchanges by part (the most of any rank):\n");
    for (int p = 0; p < PBFCL_DIST_PART_COUNT; p++)
        printf("  %-9s %9.3f s %9.3f ms/substep  %s\n", pbfcl_dist_part_name(p), most[p],
               1e3 * most[p] / substeps, pbfcl_dist_part_what(p));
    printf("  between device and host: %.3g MB per substep on rank 0\n",
           (double)t->bus_bytes / substeps / 1e6);
    printf("  MPI messages: %.1f per substep sent by rank 0 to the other ranks\n",
           (double)t->messages / substeps);
    if (t->overlapped > 0)
        printf("  overlap: %.1f exchanges per substep in flight while the interior ran (rank "
               "0: %.0f interior, %.0f boundary particles)\n",
               (double)t->overlapped / substeps, (double)t->interior / substeps,
               (double)t->boundary / substeps);
    else
        printf("  overlap: off\n");
}

/* The exchanges' share of the run: the slowest rank's time in them, the bytes sent by all per
 * substep and the ghosts per rank (docs/PERFORMANCE.md's model of them). */
static void report_traffic(const drun_args *a, drun *r, double wall)
{
    const pbfcl_dist_traffic *t = pbfcl_dist_traffic_of(r->d);
    double mine[2] = {t->seconds, t->mpi_seconds}, most[2];
    double sums[2] = {(double)t->bytes, (double)t->ghosts}, all[2];
    MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, r->comm);
    MPI_Reduce(sums, all, 2, MPI_DOUBLE, MPI_SUM, 0, r->comm);
    double substeps = t->substeps ? (double)t->substeps : 1.0;
    if (r->rank == 0 && !a->quiet)
        printf("pbfcl run: exchanges between ranks: %.2f s of %.2f s on the slowest rank, %.2f s "
               "of it in MPI (messages and waiting for the others); %.3g MB sent per substep, "
               "%.0f ghosts per rank\n",
               most[0], wall, most[1], all[0] / substeps / 1e6, all[1] / substeps / r->size);
    report_parts(a, r, substeps);
    const pbfcl_dist_balance *b = pbfcl_dist_balance_of(r->d);
    if (r->rank == 0 && !a->quiet && b->threshold > 0)
        printf("pbfcl run: slabs planned anew %llu times (a rank above %g times the mean of %.0f; "
               "%llu refused for want of room)\n",
               b->rebalances, b->threshold, (double)r->n / r->size, b->refusals);
}

/* The checkpoint after step, if one is due (every --checkpoint-every steps, at the last, and
 * when a signal stops the run: final). */
static pbfcl_status checkpoint(const drun_args *a, drun *r, long long step, double time, bool final)
{
    if (!a->checkpoint_path ||
        (!final && (a->checkpoint_every == 0 || step % a->checkpoint_every != 0)))
        return PBFCL_OK;
    const pbfcl_scene *scene = pbfcl_api_setup_scene(r->setup);
    return dist_checkpoint_write(r->d, r->comm, a->checkpoint_path, r->setup, scene->name, step,
                                 time);
}

int dist_agreed_signal(MPI_Comm comm)
{
    int mine = pbfcl_signals_caught(), any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    return any;
}

/* The summary: how far the run went, its speed and its last density error. */
static void print_summary(const drun_args *a, const drun *r, double wall)
{
    long long steps = r->done - r->first_step;
    if (r->rank != 0 || a->quiet)
        return;
    if (r->stop) /* SIGPIPE: standard output may be the closed pipe */
        fprintf(r->stop == SIGPIPE ? stderr : stdout,
                "pbfcl run: stopped by %s after step %lld of %lld%s%s\n",
                pbfcl_signals_name(r->stop), r->done, a->steps,
                a->checkpoint_path ? "; checkpoint written to " : "",
                a->checkpoint_path ? a->checkpoint_path : "");
    if (steps <= 0)
        return;
    printf("pbfcl run: %lld steps, %zu particles on %d ranks, %.2f s, %.1f steps/s (%.1f "
           "substeps each), final density error %.3f %% avg, %.3f %% max\n",
           steps, r->n, r->size, wall, (double)steps / wall, (double)r->substeps / (double)steps,
           r->last.density_error_avg, r->last.density_error_max);
}

/* The drains and the emitters after a step (as one device's run: after the statistics, in the
 * step's frame), the same on every rank (pbfcl_dist_drain, pbfcl_dist_emit). */
static pbfcl_status flow(drun *r, double time)
{
    const pbfcl_scene *scene = pbfcl_api_setup_scene(r->setup);
    if (scene->emitter_count == 0 && scene->drain_count == 0)
        return PBFCL_OK;
    size_t removed = 0, added = 0, kept = 0;
    PBFCL_TRY(pbfcl_dist_drain(r->d, scene, r->rank == 0 ? r->drained : NULL, &removed));
    PBFCL_TRY(pbfcl_dist_emit(r->d, scene, r->emitted, time, &added));
    for (size_t i = 0, k = 0; r->rank == 0 && i < r->n; i++) /* the frames' ids, as one device */
        if (k < removed && r->drained[k] == i)
            k++;
        else
            r->out_ids[kept++] = r->out_ids[i];
    for (size_t i = 0; r->rank == 0 && i < added; i++)
        r->out_ids[kept++] = r->next_id++;
    r->n = pbfcl_dist_total(r->d);
    return PBFCL_OK;
}

/* Steps first+1..steps: step, statistics, guard, drains and emitters, frame, checkpoint; a signal
 * that any rank caught stops every rank after the same step, with a checkpoint, as one device's
 * run. */
static pbfcl_status loop(const drun_args *a, drun *r)
{
    if (!r->checkpoint)
        output_ok(r, write_frame(a, r, 0), "writing frame 0 failed (see above)");
    double dt = pbfcl_api_setup_scene(r->setup)->solver.dt, start = pbfcl_wall_seconds();
    long long tenth = a->steps >= 10 ? a->steps / 10 : 1;
    r->done = r->first_step;
    for (long long step = r->first_step + 1; step <= a->steps && !r->stop; step++) {
        PBFCL_TRY(pbfcl_dist_step(r->d, NULL));
        PBFCL_TRY(pbfcl_dist_stats(r->d, &r->last));
        r->substeps += r->last.substeps;
        if (r->rank == 0 && a->stats_path)
            output_ok(r, pbfcl_stats_csv_row(&r->csv, step, (double)step * dt, &r->last),
                      "writing the statistics failed (see above)");
        if (r->last.unstable) {
            if (r->rank == 0)
                fprintf(stderr,
                        "pbfcl: error: the simulation blew up at step %lld (fastest particle "
                        "%.3g m/s, %u non-finite); lower dt or raise substeps or iterations\n",
                        step, r->last.max_speed, r->last.nan);
            return PBFCL_ERR_SIMULATION;
        }
        PBFCL_TRY(flow(r, (double)step * dt));
        output_ok(r, write_frame(a, r, step), "writing a frame failed (see above)");
        r->stop = step < a->steps ? dist_agreed_signal(r->comm) : 0;
        PBFCL_TRY(checkpoint(a, r, step, (double)step * dt, step == a->steps || r->stop));
        r->done = step;
        if (r->rank == 0 && !a->quiet && (step % tenth == 0 || step == a->steps)) {
            double t = pbfcl_wall_seconds() - start;
            fprintf(stderr, "step %lld/%lld: %.1f steps/s\n", step, a->steps,
                    (double)(step - r->first_step) / t);
        }
    }
    report_traffic(a, r, pbfcl_wall_seconds() - start);
    print_summary(a, r, pbfcl_wall_seconds() - start);
    return PBFCL_OK;
}

static void drun_release(drun *r)
{
    pbfcl_dist_destroy(r->d);
    if (r->cl_open)
        pbfcl_cl_destroy(&r->cl);
    if (r->rank == 0) {
        pbfcl_stats_csv_close(&r->csv, 0);
        pbfcl_body_csv_close(&r->body_csv);
    }
    free(r->phases);
    free(r->motion);
    free(r->out_ids);
    free(r->drained);
    pbfcl_scene_setup_destroy(r->setup);
    pbfcl_checkpoint_free(r->checkpoint);
    pbfcl_free(r->positions);
    free(r->pos);
    free(r->vel);
    free(r->rho);
    free(r->pvd);
}

/* The whole run on this rank; its exit status: 0, 1, 2, or 128 + the signal that stopped it
 * before its last step (as one device's). */
static int run_all(const drun_args *a, drun *r)
{
    pbfcl_dist_layout l = {0, 0, NULL};
    pbfcl_status st = prepare(a, r, &l);
    if (st == PBFCL_OK)
        st = start(a, r, &l);
    if (st == PBFCL_OK && r->rank == 0 && !a->quiet) {
        const pbfcl_scene *s = pbfcl_api_setup_scene(r->setup);
        char from[1200] = "";
        if (r->checkpoint)
            snprintf(from, sizeof from, ", resumed from %s after step %lld", a->resume_path,
                     r->first_step);
        printf("pbfcl run: scene %s, %zu particles (radius %g m), %lld steps of %g s on %d "
               "ranks%s (slabs along %c; rank 0 on %s)\n",
               s->name, r->n, s->particle_radius, a->steps - r->first_step, s->solver.dt, r->size,
               from, "xyz"[pbfcl_dist_layout_of(r->d)->axis], r -> cl.dev.device_name);
        fflush(stdout);
    }
    if (st == PBFCL_OK && (r->stop = dist_agreed_signal(r->comm)) != 0) {
        if (r->rank == 0) /* stopped before the first step */
            fprintf(r->stop == SIGPIPE ? stderr : stdout,
                    "pbfcl run: stopped by %s before the first step; nothing was written\n",
                    pbfcl_signals_name(r->stop));
    } else if (st == PBFCL_OK) {
        st = loop(a, r);
    }
    free(l.cuts);
    if (st == PBFCL_OK)
        return r->stop ? 128 + r->stop : 0;
    return st == PBFCL_ERR_BAD_ARGUMENT ? 2 : 1;
}

int dist_cmd_run(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    drun r;
    memset(&r, 0, sizeof r);
    r.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(r.comm, &r.rank);
    MPI_Comm_size(r.comm, &r.size);
    pbfcl_signals_install(); /* after MPI_Init: the run stops after a step (dist_agreed_signal) */
    dist_log_setup(r.rank);
    drun_args a;
    int code = parse_args(argc, argv, &a);
    if (code == 1 && r.rank == 0)
        drun_usage();
    if (code == 0)
        code = run_all(&a, &r);
    else if (code == 1)
        code = 0;
    drun_release(&r);
    dist_speak(true);
    fflush(stdout); /* with the handlers on: a closed pipe is not fatal */
    pbfcl_signals_restore();
    MPI_Finalize();
    return code;
}
