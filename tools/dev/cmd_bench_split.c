/* `pbfcl-dev bench-split`: split-and-compress (tools/dev/split_compress.c) against the
 * neighbour lists on a dam-break particle set: device time per stage from OpenCL profiling events
 * (warm-up excluded, median and minimum of repeats), and how far the two densities differ. */
#include "app_env.h"
#include "dev_commands.h"
#include "grid/grid.h"
#include "scene/scene.h"
#include "scene_options.h"
#include "sim/sim.h"
#include "split_compress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_SPLIT_MAX_SIZES 8

/* The timed stages of one repeat, in order: shared, the list path, the split path. */
#define BENCH_SPLIT_STAGES(X)                                                                      \
    X(BS_HASH, "hash")                                                                             \
    X(BS_SORT, "sort")                                                                             \
    X(BS_REORDER, "reorder")                                                                       \
    X(BS_CELLS, "cells")                                                                           \
    X(BS_NEIGHBOURS, "neighbours")                                                                 \
    X(BS_LIST_DENSITY, "list_density")                                                             \
    X(BS_SPLIT_COUNT, "split_count")                                                               \
    X(BS_SPLIT_SCAN, "split_scan")                                                                 \
    X(BS_SPLIT_WRITE, "split_write")                                                               \
    X(BS_SPLIT_READ_BLOCKS, "split_read_blocks")                                                   \
    X(BS_SPLIT_DENSITY, "split_density")

typedef enum bench_split_stage {
#define BS_ENUM_(id, name) id,
    BENCH_SPLIT_STAGES(BS_ENUM_)
#undef BS_ENUM_
        BS_COUNT
} bench_split_stage;

static const char *const bs_names[BS_COUNT] = {
#define BS_NAME_(id, name) name,
    BENCH_SPLIT_STAGES(BS_NAME_)
#undef BS_NAME_
};

typedef struct bench_split_opts {
    const char *device;
    size_t sizes[BENCH_SPLIT_MAX_SIZES];
    int nsizes;
    long long runs, warmup, block_size, wg;
} bench_split_opts;

static void bench_split_usage(FILE *f)
{
    fprintf(
        f,
        "usage: pbfcl-dev bench-split [--device D] [--particles N,N,...] [--runs R] [--warmup W]\n"
        "                         [--block K] [--wg W]\n\n"
        "Fills the dam-break scene with about N particles (the rest lattice, spacing 2r,\n"
        "h = 4r), then per repeat runs the grid's hash, sort, reorder and cells (shared),\n"
        "the neighbour-list path (neighbours, list_density) and split-and-compress\n"
        "(split_count, split_scan, split_write, split_read_blocks, split_density) and\n"
        "prints, tab-separated, each stage's median and minimum device time over R\n"
        "repeats after W warm-up ones (split_read_blocks: host wall time of the blocking\n"
        "read of the block count), the two paths' totals, and the accuracy: the largest\n"
        "relative difference of the densities and the particles whose neighbour counts\n"
        "differ.\n\n"
        "  --device D         device index or name part (default $PBFCL_DEVICE, else first "
        "GPU)\n"
        "  --particles list   particle counts (default 20000,100000; each 1 to 10^8)\n"
        "  --runs R           timed repeats, 1..1000 (default 20)\n"
        "  --warmup W         untimed repeats first, 0..100 (default 2)\n"
        "  --block K          particles per block, 1..work-group size (default: the\n"
        "                     work-group size)\n"
        "  --wg W             split-and-compress work-group size at most W (default: the\n"
        "                     module's choice, 64 or the device's limit); a tuning override\n");
}

/* Parses one option with its value into o; returns 0 or -1 (message printed). */
static int bench_split_option(bench_split_opts *o, const char *opt, const char *val)
{
    long long v = 0, lo = 1, hi = 1000;
    long long *dst = NULL;
    if (!strcmp(opt, "--device")) {
        o->device = val;
        return 0;
    } else if (!strcmp(opt, "--particles")) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", val);
        o->nsizes = 0;
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (o->nsizes == BENCH_SPLIT_MAX_SIZES || !pbfcl_parse_llong(t, &v) || v < 1 ||
                v > 100000000LL) {
                pbfcl_errorf("--particles: '%s' is not valid; expected at most %d counts, each "
                             "from 1 to 100000000",
                             val, BENCH_SPLIT_MAX_SIZES);
                return -1;
            }
            o->sizes[o->nsizes++] = (size_t)v;
        }
        return o->nsizes ? 0 : -1;
    } else if (!strcmp(opt, "--runs")) {
        dst = &o->runs;
    } else if (!strcmp(opt, "--warmup")) {
        dst = &o->warmup, lo = 0, hi = 100;
    } else if (!strcmp(opt, "--block")) {
        dst = &o->block_size, hi = 65536;
    } else if (!strcmp(opt, "--wg")) {
        dst = &o->wg, hi = 65536;
    } else {
        pbfcl_errorf("bench-split: unknown option '%s' (see `pbfcl-dev bench-split --help`)", opt);
        return -1;
    }
    if (!pbfcl_parse_llong(val, &v) || v < lo || v > hi) {
        pbfcl_errorf("%s: '%s' is not valid; expected an integer from %lld to %lld", opt, val, lo,
                     hi);
        return -1;
    }
    *dst = v;
    return 0;
}

/* Returns 0 when parsed, 1 for --help, 2 on a usage error. */
static int bench_split_parse(bench_split_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->sizes[0] = 20000, o->sizes[1] = 100000, o->nsizes = 2;
    o->runs = 20, o->warmup = 2;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
        if (i + 1 >= argc) {
            pbfcl_errorf("%s needs a value (see `pbfcl-dev bench-split --help`)", argv[i]);
            return 2;
        }
        if (bench_split_option(o, argv[i], argv[i + 1]) < 0)
            return 2;
    }
    return 0;
}

/* One particle set and everything both paths need. */
typedef struct bench_split_set {
    pbfcl_scene scene;
    size_t n;
    float h, mass;
    pbfcl_grid grid;
    pbfcl_split_compress sc;
    cl_mem pos_buf, sorted_buf, list_rho_buf, list_count_buf, split_rho_buf, split_count_buf;
} bench_split_set;

static void bench_split_set_destroy(bench_split_set *s)
{
    cl_mem *bufs[] = {&s->pos_buf,        &s->sorted_buf,    &s->list_rho_buf,
                      &s->list_count_buf, &s->split_rho_buf, &s->split_count_buf};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        pbfcl_cl_release_buffer(bufs[k]);
    pbfcl_split_compress_destroy(&s->sc);
    pbfcl_grid_destroy(&s->grid);
}

/* Uploads the dam-break lattice of about target particles as float4. */
static pbfcl_status bench_split_positions(bench_split_set *s, pbfcl_cl *cl, size_t target)
{
    float *xyz = NULL;
    PBFCL_TRY(pbfcl_scene_load("dam-break", &s->scene));
    PBFCL_TRY(pbfcl_scene_set_particle_count(&s->scene, target));
    PBFCL_TRY(pbfcl_scene_fill(&s->scene, &xyz, &s->n));
    float *p4 = malloc(s->n * 16);
    pbfcl_status st = p4 ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; p4 && i < s->n; i++) {
        memcpy(&p4[4 * i], &xyz[3 * i], 12);
        p4[4 * i + 3] = 0.0f;
    }
    free(xyz);
    if (st == PBFCL_OK)
        st =
            pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, s->n * 16, "bench-split positions", &s->pos_buf);
    if (st == PBFCL_OK && clEnqueueWriteBuffer(cl->queue, s->pos_buf, CL_TRUE, 0, s->n * 16, p4, 0,
                                               NULL, NULL) != CL_SUCCESS)
        st = PBFCL_ERR_OPENCL;
    free(p4);
    return st;
}

static pbfcl_status bench_split_set_create(bench_split_set *s, pbfcl_cl *cl, size_t target,
                                           unsigned block_size, size_t wg)
{
    memset(s, 0, sizeof *s);
    PBFCL_TRY(bench_split_positions(s, cl, target));
    const pbfcl_scene *sc = &s->scene;
    double r = sc->particle_radius;
    s->h = (float)(sc->solver.h_ratio * r);
    s->mass = (float)(sc->rest_density * 8.0 * r * r * r);
    pbfcl_grid_params gp;
    PBFCL_TRY(pbfcl_grid_params_fit(sc->domain_min, sc->domain_max, s->h, &gp));
    PBFCL_TRY(pbfcl_grid_create(&s->grid, cl, &gp, s->n, PBFCL_SIM_MAX_NEIGHBORS));
    pbfcl_split_compress_desc d = {
        .grid_bits = gp.grid_bits, .capacity = s->n, .block_size = block_size, .wg_limit = wg};
    PBFCL_TRY(pbfcl_split_compress_create(&s->sc, cl, &d));
    size_t b4 = s->n * 4;
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, s->n * 16, "sorted", &s->sorted_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, b4, "list density", &s->list_rho_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, b4, "list counts", &s->list_count_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, b4, "split density", &s->split_rho_buf));
    return pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, b4, "split counts", &s->split_count_buf);
}

/* Device ms of the events prof recorded since the last call (all stages). */
static pbfcl_status bench_split_collect(pbfcl_profile *prof, double *ms)
{
    double stage_ms[PBFCL_STAGE_COUNT] = {0};
    PBFCL_CL_CHECK(pbfcl_profile_collect(prof, stage_ms));
    *ms = 0.0;
    for (int k = 0; k < PBFCL_STAGE_COUNT; k++)
        *ms += stage_ms[k];
    return PBFCL_OK;
}

/* Runs one repeat of every stage, one at a time, writing each one's ms into ms[BS_COUNT]. */
static pbfcl_status bench_split_repeat(bench_split_set *s, pbfcl_profile *prof, double *ms,
                                       size_t *blocks)
{
    pbfcl_grid *g = &s->grid;
    size_t n = s->n;
    PBFCL_TRY(pbfcl_grid_hash(g, s->pos_buf, n, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_HASH]));
    PBFCL_TRY(pbfcl_grid_sort(g, n, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_SORT]));
    PBFCL_TRY(pbfcl_grid_reorder(g, s->pos_buf, s->sorted_buf, n, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_REORDER]));
    PBFCL_TRY(pbfcl_grid_cells(g, n, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_CELLS]));
    PBFCL_TRY(pbfcl_grid_neighbours(g, s->sorted_buf, false, n, s->h, 0.0f, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_NEIGHBOURS]));
    PBFCL_TRY(pbfcl_split_list_density(&s->sc, g, s->sorted_buf, n, s->h, s->mass, s->list_rho_buf,
                                       s->list_count_buf, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_LIST_DENSITY]));
    PBFCL_TRY(pbfcl_split_count(&s->sc, g, n, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_SPLIT_COUNT]));
    PBFCL_TRY(pbfcl_split_scan(&s->sc, n, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_SPLIT_SCAN]));
    PBFCL_TRY(pbfcl_split_write(&s->sc, g, n, prof));
    PBFCL_TRY(bench_split_collect(prof, &ms[BS_SPLIT_WRITE]));
    double t0 = pbfcl_wall_seconds();
    PBFCL_TRY(pbfcl_split_read_blocks(&s->sc, blocks));
    ms[BS_SPLIT_READ_BLOCKS] = (pbfcl_wall_seconds() - t0) * 1e3;
    PBFCL_TRY(pbfcl_split_density(&s->sc, g, s->sorted_buf, *blocks, s->h, s->mass,
                                  s->split_rho_buf, s->split_count_buf, prof));
    return bench_split_collect(prof, &ms[BS_SPLIT_DENSITY]);
}

/* Reads both paths' densities and counts: the largest relative density difference and the
 * particles whose neighbour counts differ. */
static pbfcl_status bench_split_accuracy(bench_split_set *s, pbfcl_cl *cl, double *max_rel,
                                         size_t *count_diff)
{
    size_t n = s->n;
    float *a = malloc(n * 4), *b = malloc(n * 4);
    cl_uint *ca = malloc(n * 4), *cb = malloc(n * 4);
    pbfcl_status st = a && b && ca && cb ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    cl_mem bufs[] = {s->list_rho_buf, s->split_rho_buf, s->list_count_buf, s->split_count_buf};
    void *dst[] = {a, b, ca, cb};
    for (int k = 0; k < 4 && st == PBFCL_OK; k++)
        if (clEnqueueReadBuffer(cl->queue, bufs[k], CL_TRUE, 0, n * 4, dst[k], 0, NULL, NULL))
            st = PBFCL_ERR_OPENCL;
    *max_rel = 0.0;
    *count_diff = 0;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / fmax(fabs((double)a[i]), 1e-30);
        *max_rel = d > *max_rel || isnan(d) ? d : *max_rel;
        *count_diff += ca[i] != cb[i];
    }
    free(a);
    free(b);
    free(ca);
    free(cb);
    return st;
}

/* Prints the rows of one particle set: per stage, then the paths' totals, then accuracy. */
static void bench_split_print(const bench_split_set *s, double *ms, int runs, size_t blocks,
                              double max_rel, size_t count_diff, unsigned overflow)
{
    double col[1000], total[2][1000];
    for (int r = 0; r < runs; r++) {
        total[0][r] = ms[r * BS_COUNT + BS_NEIGHBOURS] + ms[r * BS_COUNT + BS_LIST_DENSITY];
        total[1][r] = 0.0;
        for (int k = BS_SPLIT_COUNT; k <= BS_SPLIT_DENSITY; k++)
            total[1][r] += k == BS_SPLIT_READ_BLOCKS ? 0.0 : ms[r * BS_COUNT + k];
    }
    for (int k = 0; k < BS_COUNT + 2; k++) {
        for (int r = 0; r < runs; r++)
            col[r] = k < BS_COUNT ? ms[r * BS_COUNT + k] : total[k - BS_COUNT][r];
        double med = pbfcl_median(col, runs); /* sorted: col[0] is the minimum */
        const char *name = k < BS_COUNT    ? bs_names[k]
                           : k == BS_COUNT ? "list_total"
                                           : "split_total";
        printf("%zu\t%s\t%.4f\t%.4f\n", s->n, name, med, col[0]);
    }
    printf("# particles\tblocks\tparticles_per_block\tmax_rel_density_diff\tcount_diff\t"
           "list_overflow\n");
    printf("%zu\t%zu\t%.2f\t%.3g\t%zu\t%u\n", s->n, blocks,
           blocks ? (double)s->n / (double)blocks : 0.0, max_rel, count_diff, overflow);
    fflush(stdout);
}

/* Benchmarks one particle set: warm-up repeats, timed repeats, accuracy, rows. */
static pbfcl_status bench_split_case(const bench_split_opts *o, pbfcl_cl *cl, size_t target)
{
    static pbfcl_profile prof; /* large; one at a time */
    bench_split_set s;
    int runs = (int)o->runs;
    double *ms = calloc((size_t)runs * BS_COUNT, sizeof *ms), warm[BS_COUNT];
    size_t blocks = 0, count_diff = 0;
    unsigned overflow = 0;
    double max_rel = 0.0;
    pbfcl_status st =
        ms ? bench_split_set_create(&s, cl, target, (unsigned)o->block_size, (size_t)o->wg)
           : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        printf(
            "# pbfcl-dev bench-split: device %s / %s; dam-break lattice, %zu particles, h = %g m "
            "(4r), cell %g m; K %u, wg %zu, stage %u float4; %d runs after %lld warm-up\n",
            cl->dev.platform_name, cl->dev.device_name, s.n, (double)s.h,
            (double)s.grid.params.cell_size, s.sc.block_size, s.sc.wg, s.sc.stage_size, runs,
            o->warmup);
    if (st == PBFCL_OK)
        printf("particles\tstage\tmedian_ms\tmin_ms\n");
    for (long long w = 0; st == PBFCL_OK && w < o->warmup; w++)
        st = bench_split_repeat(&s, &prof, warm, &blocks);
    if (st == PBFCL_OK)
        st = pbfcl_grid_read_overflow(&s.grid, &overflow);
    for (int r = 0; st == PBFCL_OK && r < runs; r++)
        st = bench_split_repeat(&s, &prof, &ms[r * BS_COUNT], &blocks);
    if (st == PBFCL_OK)
        st = pbfcl_grid_read_overflow(&s.grid, &overflow);
    if (st == PBFCL_OK)
        st = bench_split_accuracy(&s, cl, &max_rel, &count_diff);
    if (st == PBFCL_OK)
        bench_split_print(&s, ms, runs, blocks, max_rel, count_diff, overflow / (unsigned)runs);
    pbfcl_profile_discard(&prof);
    if (ms)
        bench_split_set_destroy(&s);
    free(ms);
    return st;
}

int cmd_bench_split(int argc, char **argv)
{
    bench_split_opts o;
    int p = bench_split_parse(&o, argc, argv);
    if (p == 1)
        bench_split_usage(stdout);
    if (p != 0)
        return p == 1 ? 0 : 2;
    pbfcl_cl cl;
    pbfcl_status st = dev_cl_open(&cl, o.device);
    for (int i = 0; i < o.nsizes && st == PBFCL_OK; i++)
        st = bench_split_case(&o, &cl, o.sizes[i]);
    pbfcl_cl_destroy(&cl);
    if (st != PBFCL_OK)
        pbfcl_errorf("bench-split failed: %s", pbfcl_status_message(st));
    return st == PBFCL_OK ? 0 : 1;
}
