/* `pbfcl kernel-builds`: every program of the program table with every set of build options
 * pbfcl compiles it with, one line each, so that tools/validate-kernels compiles exactly what
 * the runtime builds (same files, same order, same options string). */
#include "build_options.h"
#include "clrt.h"
#include "commands.h"
#include "programs.h"

#include <stdlib.h>
#include <string.h>

#define MAX_WG_SIZES 16

/* The work-group sizes pbfcl builds for when no device is asked about: the common choices
 * and 1024, the largest maximum of current GPUs (NVIDIA, AMD, Intel Xe). */
static const unsigned default_wg_sizes[] = {64, 128, 256, 1024};

/* The configuration the modules build with, apart from the work-group size. */
static const pbfcl_build_config base_config = {
    .wg_size = 256,
    .radix_bits = 4,
    .sort_items = 4,
    .grid_bits = 10,
    .max_neighbors = 64,
    .log_num_banks = 4,
};

typedef struct wg_list {
    unsigned size[MAX_WG_SIZES];
    int n;
} wg_list;

static void wg_add(wg_list *l, unsigned wg)
{
    for (int i = 0; i < l->n; i++)
        if (l->size[i] == wg)
            return;
    if (l->n < MAX_WG_SIZES)
        l->size[l->n++] = wg;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: pbfcl kernel-builds [--wg N]... [--no-devices]\n\n"
               "Prints one tab-separated line per program and build-option set pbfcl uses:\n"
               "  program name, its cl/ files in build order (comma-separated), the options.\n"
               "Work-group sizes: 64, 128, 256, 1024 and the maximum of every OpenCL device\n"
               "present (listed on '# device' comment lines), or only the --wg values given.\n"
               "  --wg N        build for work-group size N (1..65536); repeatable\n"
               "  --no-devices  do not ask the OpenCL devices for their maximum\n");
}

/* Parses the options into the work-group list; returns 0, or the exit code to stop with. */
static int parse_args(int argc, char **argv, wg_list *wgs, int *query_devices)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(argv[i], "--no-devices")) {
            *query_devices = 0;
        } else if (!strcmp(argv[i], "--wg") && i + 1 < argc) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || v < 1 || v > 65536) {
                fprintf(stderr,
                        "pbfcl: error: --wg needs a work-group size from 1 to 65536 "
                        "(got '%s')\n",
                        argv[i]);
                return 2;
            }
            wg_add(wgs, (unsigned)v);
            *query_devices = 0;
        } else {
            fprintf(stderr, "pbfcl: error: kernel-builds: unknown option '%s'\n\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    return 0;
}

/* Adds every present device's maximum work-group size, printing a comment line for each. */
static void add_device_maxima(wg_list *wgs)
{
    pbfcl_device_info *list = NULL;
    int n = 0;
    if (pbfcl_cl_enumerate(&list, &n) != PBFCL_OK)
        n = 0;
    for (int i = 0; i < n; i++) {
        printf("# device\t%d\t%zu\t%s / %s\n", list[i].index, list[i].max_wg, list[i].platform_name,
               list[i].device_name);
        if (list[i].max_wg > 0 && list[i].max_wg <= 65536)
            wg_add(wgs, (unsigned)list[i].max_wg);
    }
    free(list);
}

static void print_program(const pbfcl_program_desc *p, const wg_list *wgs)
{
    for (int w = 0; w < wgs->n; w++) {
        pbfcl_build_config cfg = base_config;
        cfg.wg_size = wgs->size[w];
        char options[1024];
        if (pbfcl_build_options(&cfg, options, sizeof options) < 0) {
            fprintf(stderr, "pbfcl: error: build options of %s do not fit in %zu bytes\n", p->name,
                    sizeof options);
            continue;
        }
        printf("%s\t", p->name);
        for (int f = 0; f < p->nfiles; f++)
            printf("%s%s", f ? "," : "", p->files[f]);
        printf("\t%s\n", options);
    }
}

int cmd_kernel_builds(int argc, char **argv)
{
    wg_list wgs = {.n = 0};
    int query_devices = 1;
    int rc = parse_args(argc, argv, &wgs, &query_devices);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (wgs.n == 0)
        for (size_t i = 0; i < sizeof default_wg_sizes / sizeof default_wg_sizes[0]; i++)
            wg_add(&wgs, default_wg_sizes[i]);
    printf("# program\tfiles\toptions\n");
    if (query_devices)
        add_device_maxima(&wgs);
    for (int id = 0; id < PBFCL_PROGRAM_COUNT; id++)
        print_program(pbfcl_program((pbfcl_program_id)id), &wgs);
    fflush(stdout);
    return ferror(stdout) ? 1 : 0;
}
