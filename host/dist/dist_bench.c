/* `pbfcl bench` under mpirun with more than one rank (docs/DISTRIBUTED.md): every rank builds
 * the same scene and slabs and steps its part, as `pbfcl run` split over ranks does; each
 * measured frame starts at an MPI_Barrier, and its time is the slowest rank's wall clock for
 * it (a max-reduction), its stages' the largest device time of the ranks, its exchanges' the
 * slowest rank's time in them with the bytes and ghosts of every rank. Rank 0 prints the
 * report of `pbfcl bench` on one device (bench_report.h) and a table of the exchanges; a
 * broken measured frame gives every rank BENCH_EXIT_BROKEN. --rebalance R plans the slabs anew
 * as in `pbfcl run` (off by default: the slabs as first planned). A signal that any rank
 * catches (signals.h) stops every rank after the same frame: rank 0 reports the frames
 * measured so far, and every rank exits 128 + the signal, as a split run does. */
#include "dist.h"
#include "dist_run.h"

#include "bench_report.h"
#include "cli_args.h"
#include "commands.h"
#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "runtime/profile.h"
#include "signals.h"
#include "solver_methods.h"

#include "api_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a frame costs on this rank, reduced over the ranks: the maxima first, then the sums. */
enum {
    F_WALL,     /* s: the frame's wall clock */
    F_EXCHANGE, /* s: in the sync hooks (copies, reads, messages, waiting) */
    F_MPI,      /* s: of it in MPI calls */
    F_STAGE,    /* ms: each stage's device time (PBFCL_STAGE_COUNT of them) */
    F_RAN = F_STAGE + PBFCL_STAGE_COUNT,     /* 1 if the stage ran (PBFCL_STAGE_COUNT) */
    F_MAX_COUNT = F_RAN + PBFCL_STAGE_COUNT, /* the maxima end here */
    F_BYTES = F_MAX_COUNT,                   /* sent */
    F_GHOSTS,                                /* received, summed over the substeps */
    F_COUNT
};

/* A split bench on this rank. */
typedef struct dbench {
    MPI_Comm comm;
    int rank, size;
    pbfcl_scene_setup *setup;
    float *positions;
    size_t n;
    pbfcl_cl cl;
    bool cl_open;
    pbfcl_dist *d;
    pbfcl_profile *prof;
    bench_times t;
    /* per measured frame, on rank 0: the slowest rank's exchanges (ms), the bytes sent by every
     * rank per substep, the ghosts per rank and substep */
    double *exchange_ms, *mpi_ms, *bytes, *ghosts;
    char (*kernel_names)[48];
    int stop;              /* the signal every rank agreed stops the bench, or 0 */
    long long warm, steps; /* warm-up and measured frames done */
} dbench;

/* The options of a split bench besides bench's own (taken out of argv before bench parses). */
typedef struct dbench_options {
    long long rank_capacity; /* --rank-capacity: particles each rank has room for; 0: all */
    double rebalance;        /* --rebalance: the threshold (pbfcl_dist_set_rebalance); 0: off */
    bool overlap_off;        /* --overlap off: every exchange completed before the next stage */
} dbench_options;

/* Takes --rank-capacity N and --rebalance R out of argv into *o (0 when not given); 0, or 2 on
 * a bad value (message printed). */
static int take_split_options(int *argc, char **argv, dbench_options *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < *argc;) {
        bool capacity = pbfcl_cli_is(argv[i], "--rank-capacity");
        if (!capacity && !pbfcl_cli_is(argv[i], "--rebalance")) {
            i++;
            continue;
        }
        int at = i;
        const char *val;
        if (!pbfcl_cli_value(*argc, argv, &i, &val) ||
            !(capacity
                  ? pbfcl_cli_count("--rank-capacity", val, 1, 1000000000000LL, &o->rank_capacity)
                  : dist_parse_rebalance(val, &o->rebalance)))
            return 2;
        memmove(argv + at, argv + i, (size_t)(*argc - i + 1) * sizeof *argv); /* and the NULL */
        *argc -= i - at;
        i = at;
    }
    return 0;
}

/* Takes --overlap on|off out of argv into *off (false when not given); 0, or 2 on a bad value
 * (message printed). */
static int take_overlap(int *argc, char **argv, bool *off)
{
    *off = false;
    for (int i = 1; i < *argc;) {
        if (!pbfcl_cli_is(argv[i], "--overlap")) {
            i++;
            continue;
        }
        int at = i;
        const char *val;
        if (!pbfcl_cli_value(*argc, argv, &i, &val) || !pbfcl_dist_parse_overlap(val, off))
            return 2;
        memmove(argv + at, argv + i, (size_t)(*argc - i + 1) * sizeof *argv); /* and the NULL */
        *argc -= i - at;
        i = at;
    }
    return 0;
}

/* The scene, its parameters and slabs, checked alike on every rank before any device opens. */
static pbfcl_status prepare(const bench_args *a, dbench *b, bench_scene *scene,
                            pbfcl_dist_layout *l)
{
    if (a->diffuse > 0) {
        pbfcl_errorf("bench --diffuse: spray, foam and bubbles are not split over ranks; bench "
                     "them on one rank (without mpirun, or mpirun -np 1)");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_scene_options_build(&a->scene, &b->setup, &b->positions, &b->n));
    PBFCL_TRY(pbfcl_scene_setup_get_params(b->setup, &scene->sp, &scene->vp));
    PBFCL_TRY(pbfcl_scene_setup_name(b->setup, scene->name, sizeof scene->name));
    const pbfcl_scene *s = pbfcl_api_setup_scene(b->setup);
    PBFCL_TRY(pbfcl_dist_check_scene(s));
    if (s->emitter_count > 0 || s->drain_count > 0) { /* `pbfcl run` splits them (dist_flow.c) */
        pbfcl_errorf("bench: scene '%s' has emitters or drains, which bench does not run split "
                     "over ranks yet; bench it on one rank (without mpirun, or mpirun -np 1), or "
                     "split it with `pbfcl run`",
                     s->name);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_pbf_params p;
    PBFCL_TRY(pbfcl_pbf_params_from_scene(s, &p));
    return pbfcl_dist_plan(s, p.h, b->positions, b->n, b->size, l);
}

/* Every rank's device and part; a rank that fails says why, the others that one did. */
static pbfcl_status start(const bench_args *a, dbench *b, const pbfcl_dist_layout *l,
                          const dbench_options *o)
{
    dist_speak(true);
    pbfcl_status st = dist_open_device(b->comm, a->scene.device, &b->cl);
    b->cl_open = st == PBFCL_OK;
    if (st == PBFCL_OK && !b->cl.profiling) {
        pbfcl_errorf("bench needs a command queue with profiling; the device's was not made so");
        st = PBFCL_ERR_UNSUPPORTED;
    }
    int failed = st != PBFCL_OK, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, b->comm);
    if (any)
        return st != PBFCL_OK ? st : PBFCL_ERR_NO_DEVICE;
    const pbfcl_scene *s = pbfcl_api_setup_scene(b->setup);
    PBFCL_TRY(pbfcl_dist_create(&b->d, b->comm, &b->cl, s, l, b->positions, b->n,
                                (size_t)o->rank_capacity));
    PBFCL_TRY(pbfcl_dist_set_rebalance(b->d, o->rebalance)); /* checked when parsed */
    pbfcl_dist_set_overlap(b->d, !o->overlap_off);
    b->t.steps = a->steps;
    size_t m = (size_t)a->steps;
    if (!(b->prof = calloc(1, sizeof *b->prof)) || !bench_times_alloc(&b->t) ||
        !(b->exchange_ms = calloc(m, sizeof *b->exchange_ms)) ||
        !(b->mpi_ms = calloc(m, sizeof *b->mpi_ms)) || !(b->bytes = calloc(m, sizeof *b->bytes)) ||
        !(b->ghosts = calloc(m, sizeof *b->ghosts)))
        pbfcl_dist_abort(b->comm, 1, "out of host memory for the measured frames");
    return PBFCL_OK;
}

/* Frame s: this rank's costs (wall, exchanges, stage device times) reduced over the ranks
 * into rank 0's columns. */
static void record_frame(dbench *b, long long s, const double *mine)
{
    double most[F_MAX_COUNT], sums[F_COUNT - F_MAX_COUNT];
    MPI_Reduce(mine, most, F_MAX_COUNT, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    MPI_Reduce(mine + F_MAX_COUNT, sums, F_COUNT - F_MAX_COUNT, MPI_DOUBLE, MPI_SUM, 0, b->comm);
    if (b->rank != 0)
        return;
    for (int k = 0; k < PBFCL_STAGE_COUNT; k++) {
        if (most[F_RAN + k] == 0.0)
            continue;
        bench_stage *col = bench_column(&b->t, pbfcl_stage_name((pbfcl_stage)k));
        if (!col)
            pbfcl_dist_abort(b->comm, 1, "out of host memory for the stages' times");
        col->ms[s] = most[F_STAGE + k];
    }
    b->t.step_ms[s] = 1e3 * most[F_WALL];
    b->t.wall_s += most[F_WALL];
    b->exchange_ms[s] = 1e3 * most[F_EXCHANGE];
    b->mpi_ms[s] = 1e3 * most[F_MPI];
    double substeps = b->t.substeps[s] > 0 ? b->t.substeps[s] : 1;
    b->bytes[s] = sums[F_BYTES - F_MAX_COUNT] / substeps;
    b->ghosts[s] = sums[F_GHOSTS - F_MAX_COUNT] / substeps / b->size;
}

/* Measured frame s: a barrier, the frame timed on every rank, then the statistics (outside
 * the time). */
static void measure_frame(dbench *b, long long s)
{
    const pbfcl_dist_traffic *tr = pbfcl_dist_traffic_of(b->d);
    double mine[F_COUNT] = {0};
    MPI_Barrier(b->comm);
    pbfcl_dist_traffic before = *tr;
    double start = pbfcl_wall_seconds();
    pbfcl_dist_step(b->d, b->prof); /* a failure ends every rank */
    for (int e = 0; e < b->prof->count; e++)
        mine[F_RAN + b->prof->stage[e]] = 1.0;
    for (int k = 0; k < PBFCL_STAGE_COUNT; k++)
        mine[F_RAN + k] = b->prof->flushed_ms[k] > 0.0 ? 1.0 : mine[F_RAN + k];
    cl_int err = pbfcl_profile_collect(b->prof, mine + F_STAGE); /* waits for the device */
    mine[F_WALL] = pbfcl_wall_seconds() - start;
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "pbfcl_profile_collect", __FILE__, __LINE__);
        pbfcl_dist_abort(b->comm, 1, "reading the profiling events failed");
    }
    mine[F_EXCHANGE] = tr->seconds - before.seconds;
    mine[F_MPI] = tr->mpi_seconds - before.mpi_seconds;
    mine[F_BYTES] = (double)(tr->bytes - before.bytes);
    mine[F_GHOSTS] = (double)(tr->ghosts - before.ghosts);
    b->t.substeps[s] = (int)(tr->substeps - before.substeps);
    record_frame(b, s, mine);
    pbfcl_stats st;
    pbfcl_dist_stats(b->d, &st); /* every rank gets them; a failure ends every rank */
    b->t.density_avg[s] = st.density_error_avg;
    b->t.density_max[s] = st.density_error_max;
    b->t.overflow += st.neighbour_overflow;
    b->t.step_overflow[s] = st.neighbour_overflow;
    b->t.step_unstable[s] = st.unstable;
}

/* The kernels' totals over the measured frames: each kernel's largest over the ranks (time
 * and launches), gathered on rank 0; on a rank, the kernels of one name summed (the overlap's
 * stages over slot lists are their own kernels, of the program built with PBFCL_SLOT_LIST). */
static void gather_kernels(dbench *b)
{
    enum { K = PBFCL_PROFILE_MAX_KERNELS };
    typedef struct krow {
        char name[48];
        double ms, launches;
    } krow;
    krow mine[K];
    memset(mine, 0, sizeof mine);
    for (int k = 0, m = 0; k < b->prof->kernel_count && k < K; k++) {
        const pbfcl_kernel_time *t = &b->prof->kernels[k];
        int j = 0;
        while (j < m && strncmp(mine[j].name, t->name, sizeof mine[j].name - 1))
            j++;
        if (j == m)
            snprintf(mine[m++].name, sizeof mine[j].name, "%s", t->name);
        mine[j].ms += t->ms;
        mine[j].launches += (double)t->launches;
    }
    krow *all = b->rank == 0 ? calloc((size_t)b->size * K, sizeof *all) : NULL;
    b->kernel_names = b->rank == 0 ? calloc((size_t)b->size * K, sizeof *b->kernel_names) : NULL;
    b->t.kernels = b->rank == 0 ? calloc((size_t)b->size * K, sizeof *b->t.kernels) : NULL;
    if (b->rank == 0 && (!all || !b->kernel_names || !b->t.kernels))
        pbfcl_dist_abort(b->comm, 1, "out of host memory for the kernels' times");
    MPI_Gather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, b->comm);
    for (int i = 0; b->rank == 0 && i < b->size * K; i++) {
        if (!all[i].name[0])
            continue;
        int k = 0;
        while (k < b->t.kernel_count && strcmp(b->kernel_names[k], all[i].name))
            k++;
        bench_kernel *row = &b->t.kernels[k];
        if (k == b->t.kernel_count) {
            memcpy(b->kernel_names[k], all[i].name, sizeof all[i].name);
            row->name = b->kernel_names[k];
            b->t.kernel_count++;
        }
        row->ms = all[i].ms > row->ms ? all[i].ms : row->ms;
        long long launches = (long long)all[i].launches;
        row->launches = launches > row->launches ? launches : row->launches;
    }
    free(all);
}

/* Median and mean of v[0..n-1]. */
static void median_mean(const double *v, long long n, double *median, double *mean)
{
    double *c = malloc((size_t)n * sizeof *c), sum = 0.0;
    for (long long i = 0; i < n; i++)
        sum += v[i];
    *mean = sum / (double)n;
    *median = *mean;
    if (c) {
        memcpy(c, v, (size_t)n * sizeof *c);
        *median = pbfcl_median(c, (int)n);
    }
    free(c);
}

/* The exchanges' table: per measured frame, median and mean. */
static void report_exchanges(const dbench *b)
{
    long long n = b->t.steps;
    double *share = malloc((size_t)n * sizeof *share), med, mean;
    if (!share)
        return;
    for (long long s = 0; s < n; s++)
        share[s] = b->t.step_ms[s] > 0 ? 100.0 * b->exchange_ms[s] / b->t.step_ms[s] : 0.0;
    printf("# exchanges between the %d ranks per step: the slowest rank's time in them (device "
           "copies, reads, MPI) and in MPI calls alone (messages, waiting for the others), their "
           "share of the step's time, the bytes every rank sent per substep and the ghosts per "
           "rank and substep\n",
           b->size);
    printf("exchange\tmedian\tmean\n");
    const char *names[] = {"exchange_ms", "mpi_ms", "exchange_share_pct", "mb_sent_per_substep",
                           "ghosts_per_rank"};
    const double *cols[] = {b->exchange_ms, b->mpi_ms, share, b->bytes, b->ghosts};
    for (int c = 0; c < 5; c++) {
        median_mean(cols[c], n, &med, &mean);
        double scale = c == 3 ? 1e-6 : 1.0;
        printf("%s\t%.4f\t%.4f\n", names[c], med * scale, mean * scale);
    }
    free(share);
}

/* Warm-up, then the measured frames, each rank checking for a signal after every frame but
 * the last (dist_agreed_signal, outside the measured time). */
static void step_all(const bench_args *a, dbench *b)
{
    while (b->warm < a->warmup && !b->stop) {
        pbfcl_dist_step(b->d, NULL); /* a failure ends every rank */
        b->warm++;
        b->stop = dist_agreed_signal(b->comm);
    }
    if (clFinish(b->cl.queue) != CL_SUCCESS)
        pbfcl_dist_abort(b->comm, 1, "the warm-up's clFinish failed");
    if (b->stop)
        return;
    if (b->rank == 0) {
        fprintf(stderr, "pbfcl bench: measuring %lld steps on %d ranks after %lld warm-up steps\n",
                a->steps, b->size, a->warmup);
        fflush(stderr);
    }
    while (b->steps < a->steps && !b->stop) {
        measure_frame(b, b->steps);
        b->steps++;
        b->stop = b->steps < a->steps ? dist_agreed_signal(b->comm) : 0;
    }
}

/* What a signal stopped: the frames measured so far, or none (rank 0; SIGPIPE: standard output
 * may be the closed pipe). */
static void report_stop(const bench_args *a, const dbench *b)
{
    FILE *f = b->stop == SIGPIPE ? stderr : stdout;
    if (b->steps > 0)
        fprintf(f,
                "pbfcl bench: stopped by %s after %lld of %lld measured steps; the report above "
                "holds those %lld\n",
                pbfcl_signals_name(b->stop), b->steps, a->steps, b->steps);
    else
        fprintf(f,
                "pbfcl bench: stopped by %s in the warm-up (step %lld of %lld); nothing was "
                "measured\n",
                pbfcl_signals_name(b->stop), b->warm, a->warmup);
}

/* Warm-up, measured frames, report (rank 0); the number of broken frames on every rank. */
static long long bench_all(const bench_args *a, dbench *b, const bench_scene *scene)
{
    step_all(a, b);
    b->t.steps = b->steps; /* all of them, or those a signal left */
    long long broken = 0;
    if (b->steps > 0)
        gather_kernels(b);
    if (b->rank == 0 && b->steps > 0) {
        char device[320];
        snprintf(device, sizeof device, "%s (rank 0 of %d)", b->cl.dev.device_name, b->size);
        bench_report(a, scene, b->n, device, &b->t);
        report_exchanges(b);
        broken = bench_report_validity(&b->t, a->warmup);
        const pbfcl_dist_balance *bal = pbfcl_dist_balance_of(b->d);
        if (bal->threshold > 0)
            printf("# slabs planned anew %llu times (a rank above %g times the mean of %.0f; %llu "
                   "refused for want of room)\n",
                   bal->rebalances, bal->threshold, (double)b->n / b->size, bal->refusals);
    }
    if (b->rank == 0 && b->stop)
        report_stop(a, b);
    fflush(stdout);
    MPI_Bcast(&broken, 1, MPI_LONG_LONG, 0, b->comm);
    return broken;
}

static void dbench_release(dbench *b)
{
    pbfcl_dist_destroy(b->d);
    if (b->prof)
        pbfcl_profile_discard(b->prof);
    free(b->prof);
    if (b->cl_open)
        pbfcl_cl_destroy(&b->cl);
    pbfcl_scene_setup_destroy(b->setup);
    pbfcl_free(b->positions);
    bench_times_free(&b->t);
    free(b->exchange_ms);
    free(b->mpi_ms);
    free(b->bytes);
    free(b->ghosts);
    free(b->kernel_names);
}

int dist_cmd_bench(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dbench b;
    memset(&b, 0, sizeof b);
    b.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(b.comm, &b.rank);
    MPI_Comm_size(b.comm, &b.size);
    b.t.ranks = b.size;
    dist_log_setup(b.rank);
    pbfcl_signals_install(); /* after MPI_Init: the bench stops after a frame (step_all) */
    bench_args a;
    dbench_options o;
    int code = take_split_options(&argc, argv, &o);
    if (code == 0)
        code = take_overlap(&argc, argv, &o.overlap_off);
    if (code == 0)
        code = bench_parse_args(argc, argv, &a);
    if (code == 1 && b.rank == 0) {
        bench_usage(stdout);
        printf("  %-24s %s\n", "--rank-capacity N",
               "split over ranks: room for N particles on each rank, its own and its ghosts "
               "(default: all of them)");
        printf("  %-24s %s\n", "--overlap on|off",
               "split over ranks: compute the interior while the ghosts' values travel "
               "(default on; the same frames either way)");
        printf("  %-24s plan the slabs anew when a rank owns more than R times the mean (0 off, "
               "or %g to %g; default 0: the slabs as first planned)\n",
               "--rebalance R", PBFCL_DIST_REBALANCE_MIN, PBFCL_DIST_REBALANCE_MAX);
    }
    if (code == 0) {
        pbfcl_dist_layout l = {0, 0, NULL};
        bench_scene scene;
        pbfcl_status st = prepare(&a, &b, &scene, &l);
        if (st == PBFCL_OK)
            st = start(&a, &b, &l, &o);
        if (st == PBFCL_OK) {
            long long broken = bench_all(&a, &b, &scene);
            code = b.stop ? 128 + b.stop : broken > 0 ? BENCH_EXIT_BROKEN : 0;
        } else
            code = st == PBFCL_ERR_BAD_ARGUMENT ? 2 : 1;
        free(l.cuts);
    } else if (code == 1)
        code = 0;
    dbench_release(&b);
    dist_speak(true);
    fflush(stdout); /* with the handlers on: a closed pipe is not fatal */
    pbfcl_signals_restore();
    MPI_Finalize();
    return code;
}
