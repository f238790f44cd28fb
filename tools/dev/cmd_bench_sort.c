/* `pbfcl-dev bench-sort`: radix sort throughput on random keys, timed with OpenCL profiling
 * events (warm-up excluded), printed as machine-readable columns; every result is verified
 * (sorted, stable, a permutation of the input). */
#include "runtime/clrt.h"
#include "app_env.h"
#include "dev_commands.h"
#include "grid/radix_sort.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_MAX_SIZES 16

/* --trace: print each command's device time (us) of every run. */
static bool bench_trace;

typedef struct bench_opts {
    const char *device;
    int runs;
    size_t sizes[BENCH_MAX_SIZES];
    int nsizes;
    unsigned bits[4];
    int nbits;
    int radix_bits, items, wg, tiles_per_group; /* 0: the device default */
} bench_opts;

static void bench_usage(FILE *f)
{
    fprintf(
        f, "usage: pbfcl-dev bench-sort [--device D] [--runs R] [--sizes N,N,...] [--bits B,B] "
           "[--trace]\n"
           "                        [--radix-bits B] [--items I] [--wg W] [--tiles-per-group T]\n\n"
           "Sorts random (uint key, uint value) pairs with the radix sort and prints one line\n"
           "per size and key width: n key_bits median_ms min_ms Mpairs_per_s kernel_ms ok.\n"
           "Times are from OpenCL profiling events, first kernel start to last kernel end,\n"
           "after one warm-up sort; kernel_ms is the median sum of the kernels' own times.\n"
           "Each result is checked: keys sorted, equal keys in input order, a permutation.\n\n"
           "  --device D      device index or name part (default $PBFCL_DEVICE, else first GPU)\n"
           "  --runs R        timed runs per case, 1..10000 (default 20)\n"
           "  --sizes list    pair counts (default 262144,1048576,4194304,16777216)\n"
           "  --bits list     key bits, each 1..32 (default 24,30)\n"
           "  --trace         print every command's device time (us) of each run\n"
           "  --verify        accepted for clarity: every result is verified anyway\n"
           "  --radix-bits B  bits per pass 1..8, --items I keys per work-item (multiple of\n"
           "                  4), --wg W work-group size (power of two), --tiles-per-group\n"
           "                  T tiles per histogram/scatter work-group 1..64: tuning overrides\n");
}

/* Parses a whole decimal number in [lo, hi]; prints the error naming opt if not. */
static int parse_ull(const char *opt, const char *s, unsigned long long lo, unsigned long long hi,
                     unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "pbfcl: error: %s needs a whole number from %llu to %llu (got '%s')\n", opt,
                lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses a comma-separated list into out (at most max values). */
static int parse_list(const char *opt, const char *s, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out, int max)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            fprintf(stderr, "pbfcl: error: %s takes at most %d values\n", opt, max);
            return -1;
        }
        if (parse_ull(opt, tok, lo, hi, &out[n++]) < 0)
            return -1;
    }
    if (n == 0)
        fprintf(stderr, "pbfcl: error: %s needs at least one value\n", opt);
    return n ? n : -1;
}

/* Parses one option with its value; returns 0, 1 for --help, or -1 on error. */
static int bench_option(bench_opts *o, const char *opt, const char *val)
{
    unsigned long long v[BENCH_MAX_SIZES] = {0};
    int n = 0;
    if (!strcmp(opt, "--device")) {
        o->device = val;
    } else if (!strcmp(opt, "--runs")) {
        n = parse_ull(opt, val, 1, 10000, v);
        o->runs = (int)v[0];
    } else if (!strcmp(opt, "--sizes")) {
        n = o->nsizes = parse_list(opt, val, 0, 1ull << 30, v, BENCH_MAX_SIZES);
        for (int i = 0; i < n; i++)
            o->sizes[i] = (size_t)v[i];
    } else if (!strcmp(opt, "--bits")) {
        n = o->nbits = parse_list(opt, val, 1, 32, v, 4);
        for (int i = 0; i < n; i++)
            o->bits[i] = (unsigned)v[i];
    } else if (!strcmp(opt, "--radix-bits")) {
        n = parse_ull(opt, val, 1, 8, v);
        o->radix_bits = (int)v[0];
    } else if (!strcmp(opt, "--items")) {
        n = parse_ull(opt, val, 4, 64, v);
        o->items = (int)v[0];
    } else if (!strcmp(opt, "--wg")) {
        n = parse_ull(opt, val, 16, 1024, v);
        o->wg = (int)v[0];
    } else if (!strcmp(opt, "--tiles-per-group")) {
        n = parse_ull(opt, val, 1, 64, v);
        o->tiles_per_group = (int)v[0];
    } else {
        fprintf(stderr, "pbfcl: error: bench-sort: unknown option '%s' (see --help)\n", opt);
        return -1;
    }
    return n < 0 ? -1 : 0;
}

/* Fills o from argv; returns 0, 1 when --help was printed, or -1 on a bad option. */
static int bench_parse(bench_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->runs = 20;
    size_t sizes[] = {1u << 18, 1u << 20, 1u << 22, 1u << 24};
    memcpy(o->sizes, sizes, sizeof sizes);
    o->nsizes = 4;
    o->bits[0] = 24, o->bits[1] = 30, o->nbits = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            bench_usage(stdout);
            return 1;
        }
        char *eq = strchr(argv[i], '='); /* --name=value: the same as --name value */
        if (eq && !strncmp(argv[i], "--", 2)) {
            *eq = '\0';
            if (bench_option(o, argv[i], eq + 1) < 0) {
                *eq = '=';
                return -1;
            }
            *eq = '=';
            continue;
        }
        static const char *const known[] = {"--device", "--runs",           "--sizes",
                                            "--bits",   "--radix-bits",     "--items",
                                            "--wg",     "--tiles-per-group"};
        bool is_known = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            is_known |= !strcmp(argv[i], known[k]);
        if (!strcmp(argv[i], "--verify")) /* results are always verified */
            continue;
        if (!is_known && strcmp(argv[i], "--trace")) {
            fprintf(stderr, "pbfcl: error: bench-sort: unknown option '%s' (see --help)\n",
                    argv[i]);
            return -1;
        }
        if (!strcmp(argv[i], "--trace")) {
            bench_trace = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "pbfcl: error: bench-sort: option '%s' needs a value (see --help)\n",
                    argv[i]);
            return -1;
        }
        if (bench_option(o, argv[i], argv[i + 1]) < 0)
            return -1;
        i++;
    }
    return 0;
}

/* The device buffers of one benchmark: the pairs sorted and a pristine copy of the input. */
typedef struct bench_buffers {
    cl_mem keys_buf, values_buf, keys0_buf, values0_buf;
} bench_buffers;

static void bench_buffers_destroy(bench_buffers *b)
{
    pbfcl_cl_release_buffer(&b->keys_buf);
    pbfcl_cl_release_buffer(&b->values_buf);
    pbfcl_cl_release_buffer(&b->keys0_buf);
    pbfcl_cl_release_buffer(&b->values0_buf);
}

static pbfcl_status bench_buffers_create(bench_buffers *b, pbfcl_cl *cl, size_t n)
{
    memset(b, 0, sizeof *b);
    size_t bytes = n * sizeof(cl_uint);
    pbfcl_status st = pbfcl_cl_check_memory(cl, 4ull * bytes, bytes, "bench-sort pairs");
    cl_mem *bufs[4] = {&b->keys_buf, &b->values_buf, &b->keys0_buf, &b->values0_buf};
    for (int i = 0; i < 4 && st == PBFCL_OK; i++)
        st = pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, bytes, "bench-sort pairs", bufs[i]);
    if (st != PBFCL_OK)
        bench_buffers_destroy(b);
    return st;
}

/* Restores the unsorted input into the sorted buffers (not timed). */
static pbfcl_status bench_reset(pbfcl_cl *cl, const bench_buffers *b, size_t n)
{
    if (n == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueCopyBuffer(cl->queue, b->keys0_buf, b->keys_buf, 0, 0,
                                       n * sizeof(cl_uint), 0, NULL, NULL));
    PBFCL_CL_CHECK(clEnqueueCopyBuffer(cl->queue, b->values0_buf, b->values_buf, 0, 0,
                                       n * sizeof(cl_uint), 0, NULL, NULL));
    PBFCL_CL_CHECK(clFinish(cl->queue));
    return PBFCL_OK;
}

/* Runs one timed sort: *span_ms from the first event's start to the last one's end,
 * *kernel_ms the sum of the events' own times. */
static pbfcl_status bench_one(pbfcl_radix_sort *s, const bench_buffers *b, size_t n, unsigned bits,
                              double *span_ms, double *kernel_ms)
{
    static pbfcl_profile prof;
    PBFCL_TRY(bench_reset(s->cl, b, n));
    pbfcl_status st =
        pbfcl_radix_sort_pairs(s, b->keys_buf, b->values_buf, n, bits, &prof, PBFCL_STAGE_SORT);
    if (st != PBFCL_OK) {
        pbfcl_profile_discard(&prof);
        return st;
    }
    PBFCL_CL_CHECK(clFinish(s->cl->queue));
    cl_ulong first = ~(cl_ulong)0, last = 0;
    for (int i = 0; i < prof.count; i++) {
        cl_ulong t0 = 0, t1 = 0;
        clGetEventProfilingInfo(prof.events[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(prof.events[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        if (bench_trace)
            printf("%s%.1f", i ? " " : "# us: ", (double)(t1 - t0) * 1e-3);
        first = t0 < first ? t0 : first;
        last = t1 > last ? t1 : last;
    }
    if (bench_trace && prof.count)
        printf("\n");
    *span_ms = prof.count ? (double)(last - first) * 1e-6 : 0.0;
    double ms[PBFCL_STAGE_COUNT] = {0};
    PBFCL_CL_CHECK(pbfcl_profile_collect(&prof, ms));
    *kernel_ms = ms[PBFCL_STAGE_SORT];
    return PBFCL_OK;
}

/* Checks the sorted result against the input: keys ascending, equal keys with increasing
 * values (the values are the input indices), and every input pair present once. */
static bool bench_verify(const cl_uint *keys0, const cl_uint *keys, const cl_uint *values, size_t n)
{
    unsigned char *seen = calloc(n ? n : 1, 1);
    bool ok = seen != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        cl_uint v = values[i];
        ok = v < n && !seen[v] && keys[i] == keys0[v] &&
             (i == 0 || keys[i - 1] < keys[i] || (keys[i - 1] == keys[i] && values[i - 1] < v));
        if (ok)
            seen[v] = 1;
        else
            fprintf(stderr, "pbfcl: error: sort result wrong at index %zu (key %u value %u)\n", i,
                    keys[i], v);
    }
    free(seen);
    return ok;
}

/* Uploads random keys below 2^bits and values 0..n-1 as the pristine input. */
static pbfcl_status bench_upload(pbfcl_cl *cl, const bench_buffers *b, cl_uint *keys,
                                 cl_uint *values, size_t n, unsigned bits, uint64_t *rng)
{
    cl_uint mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1u;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = *rng += 0x9e3779b97f4a7c15ull;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        keys[i] = (cl_uint)(x ^ (x >> 31)) & mask;
        values[i] = (cl_uint)i;
    }
    if (n == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(cl->queue, b->keys0_buf, CL_TRUE, 0, n * sizeof(cl_uint),
                                        keys, 0, NULL, NULL));
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(cl->queue, b->values0_buf, CL_TRUE, 0, n * sizeof(cl_uint),
                                        values, 0, NULL, NULL));
    return PBFCL_OK;
}

/* Benchmarks one size and key width and prints its line; host holds 4 arrays of n uints. */
static pbfcl_status bench_case(pbfcl_radix_sort *s, const bench_buffers *b, cl_uint *host[4],
                               size_t n, unsigned bits, int runs, uint64_t *rng)
{
    PBFCL_TRY(bench_upload(s->cl, b, host[0], host[1], n, bits, rng));
    double span, kern, *spans = calloc((size_t)runs, sizeof *spans);
    double *kerns = calloc((size_t)runs, sizeof *kerns);
    pbfcl_status st = spans && kerns ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = bench_one(s, b, n, bits, &span, &kern); /* warm-up */
    for (int r = 0; r < runs && st == PBFCL_OK; r++)
        st = bench_one(s, b, n, bits, &spans[r], &kerns[r]);
    if (st == PBFCL_OK && n > 0) {
        cl_int e = clEnqueueReadBuffer(s->cl->queue, b->keys_buf, CL_TRUE, 0, n * sizeof(cl_uint),
                                       host[2], 0, NULL, NULL);
        if (e == CL_SUCCESS)
            e = clEnqueueReadBuffer(s->cl->queue, b->values_buf, CL_TRUE, 0, n * sizeof(cl_uint),
                                    host[3], 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            pbfcl_report_cl(e, "clEnqueueReadBuffer", __FILE__, __LINE__);
            st = PBFCL_ERR_OPENCL;
        }
    }
    if (st == PBFCL_OK) {
        bool ok = bench_verify(host[0], host[2], host[3], n);
        double med = pbfcl_median(spans, runs), kmed = pbfcl_median(kerns, runs);
        printf("%zu %u %.4f %.4f %.1f %.4f %s\n", n, bits, med, spans[0],
               med > 0 ? (double)n / (med * 1e3) : 0.0, kmed, ok ? "ok" : "WRONG");
        fflush(stdout);
        if (!ok)
            st = PBFCL_ERR_SIMULATION;
    }
    free(spans);
    free(kerns);
    return st;
}

/* Applies the tuning overrides to the device's default configuration. */
static pbfcl_radix_sort_config bench_config(const bench_opts *o, const pbfcl_cl *cl)
{
    pbfcl_radix_sort_config c = pbfcl_radix_sort_default_config(&cl->dev);
    if (o->radix_bits)
        c.radix_bits = (unsigned)o->radix_bits;
    if (o->items)
        c.items = (size_t)o->items;
    if (o->wg)
        c.wg = (size_t)o->wg;
    if (o->tiles_per_group)
        c.tiles_per_group = (unsigned)o->tiles_per_group;
    return c;
}

static pbfcl_status bench_run(const bench_opts *o, pbfcl_cl *cl)
{
    size_t cap = 0;
    for (int i = 0; i < o->nsizes; i++)
        cap = o->sizes[i] > cap ? o->sizes[i] : cap;
    pbfcl_radix_sort_config c = bench_config(o, cl);
    pbfcl_radix_sort sort;
    bench_buffers b;
    memset(&b, 0, sizeof b);
    cl_uint *host[4] = {0};
    pbfcl_status st = pbfcl_radix_sort_create_with(&sort, cl, cap, &c);
    if (st == PBFCL_OK)
        st = bench_buffers_create(&b, cl, cap);
    for (int i = 0; i < 4 && st == PBFCL_OK; i++)
        if (!(host[i] = malloc((cap ? cap : 1) * sizeof(cl_uint))))
            st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK) {
        printf("# device: %s / %s; radix_bits %u, items %zu, wg %zu, tiles/group %u, runs %d\n",
               cl->dev.platform_name, cl->dev.device_name, c.radix_bits, c.items, c.wg,
               c.tiles_per_group, o->runs);
        printf("n key_bits median_ms min_ms Mpairs_per_s kernel_ms ok\n");
    }
    uint64_t rng = 12345;
    for (int i = 0; i < o->nsizes && st == PBFCL_OK; i++)
        for (int j = 0; j < o->nbits && st == PBFCL_OK; j++)
            st = bench_case(&sort, &b, host, o->sizes[i], o->bits[j], o->runs, &rng);
    for (int i = 0; i < 4; i++)
        free(host[i]);
    bench_buffers_destroy(&b);
    pbfcl_radix_sort_destroy(&sort);
    return st;
}

int cmd_bench_sort(int argc, char **argv)
{
    bench_opts o;
    bench_trace = false;
    int p = bench_parse(&o, argc, argv);
    if (p != 0)
        return p > 0 ? 0 : 2;
    pbfcl_cl cl;
    pbfcl_status st = dev_cl_open(&cl, o.device);
    if (st == PBFCL_OK)
        st = bench_run(&o, &cl);
    pbfcl_cl_destroy(&cl);
    if (st != PBFCL_OK)
        fprintf(stderr, "pbfcl: error: bench-sort failed: %s\n", pbfcl_status_message(st));
    return st == PBFCL_OK ? 0 : 1;
}
