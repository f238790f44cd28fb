/* pbfcl-dev's entry point: dispatches to the developer commands (dev_commands.h) and opens
 * their core contexts with the program's environment (app_env.h). */
#include "app_env.h"
#include "dev_commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dev_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} dev_command;

static const dev_command commands[] = {
    {"bench-sort", cmd_bench_sort, "radix sort throughput (million pairs/s)"},
    {"bench-split", cmd_bench_split, "split-and-compress against the neighbour lists, per stage"},
    {"kernel-builds", cmd_kernel_builds, "every program and build-option set pbfcl compiles"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: pbfcl-dev <command> [options]\n\nDeveloper commands on the core's "
               "internals (the pbfcl program uses the public API only):\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`pbfcl-dev <command> --help` describes a command's options. The device is "
               "--device D, else $PBFCL_DEVICE, else the first GPU.\n");
}

pbfcl_status dev_cl_open(pbfcl_cl *cl, const char *device)
{
    PBFCL_TRY(pbfcl_cl_open(cl, device ? device : app_env_device()));
    cl->trace_builds = app_trace_builds();
    pbfcl_status st = pbfcl_cl_use_kernel_dir(cl, getenv("PBFCL_KERNEL_DIR"));
    if (st != PBFCL_OK)
        pbfcl_cl_destroy(cl);
    return st;
}

/* The command's exit code, or 1 if its output to stdout was lost (e.g. a full disk). */
static int finish(int code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int saved = errno;
        fprintf(stderr, "pbfcl-dev: error: cannot write to standard output: %s\n",
                saved ? strerror(saved) : "write error");
        return code == 0 ? 1 : code;
    }
    return code;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return finish(commands[i].run(argc - 1, argv + 1));
    fprintf(stderr, "pbfcl-dev: error: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
