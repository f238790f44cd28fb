/* `pbfcl-dev kernel-builds`: every program of the library's program table, and pbfcl-dev's own
 * (split-and-compress, cl/dev/), with every set of build options pbfcl compiles it with, one
 * line each, so that tools/validate-kernels compiles exactly what the runtime builds (same
 * files, same order, same options string). */
#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "dev_commands.h"
#include "runtime/programs.h"
#include "diffuse/diffuse.h"
#include "grid/grid.h"
#include "sim/exchange.h"
#include "sim/particles.h"
#include "grid/radix_sort.h"
#include "grid/scan.h"
#include "bodies/kinematic.h"
#include "bodies/shape_match.h"
#include "pbf/pbf.h"
#include "sim/sim.h"
#include "sim/solver_method.h"
#include "sph/sph.h"
#include "split_compress.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LIMITS 16
#define MAX_LINES 256

/* Device maximum work-group sizes asked about when none are given: the sizes below and at
 * the module caps, and 1024, the maximum of current NVIDIA, AMD and Intel Xe GPUs. */
static const unsigned default_max_wg[] = {64, 128, 256, 1024};
/* Local memory of the devices asked about: the OpenCL 1.2 minimum that pbfcl targets. */
#define PORTABLE_LOCAL_MEM 32768u
/* GRID_BITS values built: a small scene's grid and the largest grid (1024 cells per axis). */
static const unsigned grid_bits_values[] = {5, 10};

/* The programs listed: the library's (pbfcl_program_id) and then pbfcl-dev's own. */
#define DEV_PROGRAM_SPLIT_COMPRESS PBFCL_PROGRAM_COUNT
#define LISTED_PROGRAMS (PBFCL_PROGRAM_COUNT + 1)

static const pbfcl_program_desc *listed_program(int id)
{
    return id == DEV_PROGRAM_SPLIT_COMPRESS ? pbfcl_split_compress_program()
                                            : pbfcl_program((pbfcl_program_id)id);
}

typedef struct device_limits {
    size_t max_wg;
    unsigned long long local_mem;
} device_limits;

typedef struct line_set {
    char *line[MAX_LINES];
    unsigned long long local_mem[MAX_LINES]; /* the least of the devices making the build */
    int n;
} line_set;

/* The configuration the module owning program id builds with on device d: each module says
 * itself (pbfcl_<module>_build_config), so this list cannot drift from what a run builds. */
static void module_config(int id, const device_limits *d, unsigned grid_bits,
                          pbfcl_build_config *cfg)
{
    pbfcl_device_info dev;
    memset(&dev, 0, sizeof dev);
    dev.max_wg = d->max_wg;
    dev.local_mem = d->local_mem;
    if (id == PBFCL_PROGRAM_SCAN) {
        pbfcl_scan_build_config(&dev, cfg);
    } else if (id == PBFCL_PROGRAM_RADIX_SORT) {
        pbfcl_radix_sort_config c = pbfcl_radix_sort_default_config(&dev);
        pbfcl_radix_sort_build_config(&c, cfg);
    } else if (id == PBFCL_PROGRAM_GRID) {
        pbfcl_grid_build_config(&dev, grid_bits, PBFCL_SIM_MAX_NEIGHBORS, cfg);
    } else if (id == PBFCL_PROGRAM_PARTICLES) {
        pbfcl_particles_build_config(&dev, cfg);
    } else if (id == DEV_PROGRAM_SPLIT_COMPRESS) {
        pbfcl_split_compress_build_config(&dev, grid_bits, cfg);
    } else if (id == PBFCL_PROGRAM_SHAPE_MATCH) {
        pbfcl_shape_match_build_config(&dev, cfg);
    } else if (id == PBFCL_PROGRAM_KINEMATIC) {
        pbfcl_kinematic_build_config(&dev, cfg);
    } else if (id == PBFCL_PROGRAM_EXCHANGE) {
        pbfcl_exchange_build_config(&dev, cfg);
    } else if (id == PBFCL_PROGRAM_DIFFUSE) {
        pbfcl_diffuse_build_config(&dev, cfg);
    } else if (id == PBFCL_PROGRAM_SPH) {
        pbfcl_solver_sph()->build_config(&dev, cfg);
    } else { /* pbf, and colliders (built with PBF's options) */
        pbfcl_solver_pbf()->build_config(&dev, cfg);
    }
}

/* Adds "program<TAB>files<TAB>options" unless already there, keeping the least local memory
 * of the devices that make this build; returns 0 or -1 if full. */
static int add_line(line_set *s, const pbfcl_program_desc *p, const char *options,
                    unsigned long long local_mem)
{
    char buf[2048];
    int len = snprintf(buf, sizeof buf, "%s\t", p->name);
    for (int f = 0; f < p->nfiles && len > 0 && (size_t)len < sizeof buf; f++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", f ? "," : "", p->files[f]);
    if (len > 0 && (size_t)len < sizeof buf)
        snprintf(buf + len, sizeof buf - (size_t)len, "\t%s", options);
    for (int i = 0; i < s->n; i++) {
        if (!strcmp(s->line[i], buf)) {
            if (local_mem < s->local_mem[i])
                s->local_mem[i] = local_mem;
            return 0;
        }
    }
    if (s->n == MAX_LINES || !(s->line[s->n] = strdup(buf)))
        return -1;
    s->local_mem[s->n++] = local_mem;
    return 0;
}

/* Collects the builds of every program on every device in limits[0..n). */
static int collect(const device_limits *limits, int n, line_set *out)
{
    for (int id = 0; id < LISTED_PROGRAMS; id++) {
        const pbfcl_program_desc *p = listed_program(id);
        for (int d = 0; d < n; d++) {
            for (size_t g = 0; g < sizeof grid_bits_values / sizeof grid_bits_values[0]; g++) {
                pbfcl_build_config cfg;
                module_config(id, &limits[d], grid_bits_values[g], &cfg);
                char options[1024];
                int len = pbfcl_build_options(&cfg, options, sizeof options);
                if (len < 0 || add_line(out, p, options, limits[d].local_mem) < 0) {
                    fprintf(stderr, "pbfcl: error: kernel-builds: too many or too long builds\n");
                    return 1;
                }
                /* PBF's stages over slot lists (a split run's overlap, pbf/pbf_lists.c) */
                if (id == PBFCL_PROGRAM_PBF &&
                    (snprintf(options + len, sizeof options - (size_t)len, " -D PBFCL_SLOT_LIST") >=
                         (int)(sizeof options - (size_t)len) ||
                     add_line(out, p, options, limits[d].local_mem) < 0)) {
                    fprintf(stderr, "pbfcl: error: kernel-builds: too many or too long builds\n");
                    return 1;
                }
            }
        }
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: pbfcl-dev kernel-builds [--wg N]... [--no-devices]\n\n"
               "Prints one tab-separated line per program and build-option set pbfcl uses (the\n"
               "library's programs, then pbfcl-dev's own split_compress of cl/dev/):\n"
               "  program name, its cl/ files in build order (comma-separated), the options,\n"
               "  and the least local memory (bytes) of the devices that make this build.\n"
               "The sets are what the modules choose on devices whose maximum work-group size\n"
               "is 64, 128, 256 or 1024 (with 32 KiB of local memory) and on every OpenCL device\n"
               "present (listed on '# device' comment lines), for GRID_BITS 5 and 10.\n"
               "  --wg N        a device maximum work-group size N (1..65536) to ask about\n"
               "                instead of the default ones; repeatable\n"
               "  --no-devices  do not ask the OpenCL devices present\n");
}

/* Parses the options into limits; returns 0, -1 after --help, or the exit code 2. */
static int parse_args(int argc, char **argv, device_limits *limits, int *n, int *query_devices)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(argv[i], "--no-devices")) {
            *query_devices = 0;
        } else if ((!strcmp(argv[i], "--wg") && i + 1 < argc) || !strncmp(argv[i], "--wg=", 5)) {
            char *end = NULL;
            const char *text = argv[i][4] == '=' ? argv[i] + 5 : argv[++i];
            long v = strtol(text, &end, 10);
            if (!*text || *end || v < 1 || v > 65536) {
                fprintf(stderr,
                        "pbfcl: error: --wg needs a work-group size from 1 to 65536 "
                        "(got '%s')\n",
                        text);
                return 2;
            }
            if (*n == MAX_LIMITS) {
                fprintf(stderr, "pbfcl: error: at most %d --wg values\n", MAX_LIMITS);
                return 2;
            }
            limits[(*n)++] = (device_limits){(size_t)v, PORTABLE_LOCAL_MEM};
        } else {
            fprintf(stderr, "pbfcl: error: kernel-builds: unknown option '%s'\n\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    return 0;
}

/* Adds every present device's limits, printing a comment line for each. */
static void add_devices(device_limits *limits, int *n)
{
    pbfcl_device_info *list = NULL;
    int count = 0;
    if (pbfcl_cl_enumerate(&list, &count) != PBFCL_OK)
        count = 0;
    for (int i = 0; i < count; i++) {
        printf("# device\t%d\t%zu\t%s / %s\n", list[i].index, list[i].max_wg, list[i].platform_name,
               list[i].device_name);
        if (*n < MAX_LIMITS && list[i].max_wg > 0)
            limits[(*n)++] = (device_limits){list[i].max_wg, (unsigned long long)list[i].local_mem};
    }
    free(list);
}

int cmd_kernel_builds(int argc, char **argv)
{
    device_limits limits[MAX_LIMITS];
    int n = 0, query_devices = 1;
    int rc = parse_args(argc, argv, limits, &n, &query_devices);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (n == 0)
        for (size_t i = 0; i < sizeof default_max_wg / sizeof default_max_wg[0]; i++)
            limits[n++] = (device_limits){default_max_wg[i], PORTABLE_LOCAL_MEM};
    printf("# program\tfiles\toptions\tlocal_mem\n");
    if (query_devices)
        add_devices(limits, &n);
    line_set lines = {.n = 0};
    rc = collect(limits, n, &lines);
    for (int i = 0; i < lines.n; i++) {
        if (!rc)
            printf("%s\t%llu\n", lines.line[i], lines.local_mem[i]);
        free(lines.line[i]);
    }
    fflush(stdout);
    return rc ? rc : ferror(stdout) ? 1 : 0;
}
