/* pbfcl's entry point: dispatches to the subcommands. */
#include "commands.h"
#include "pbfcl.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"demo", cmd_demo, "interactive SDL2/OpenGL demo (the default with no command)"},
    {"devices", cmd_devices, "list OpenCL platforms and devices"},
    {"run", cmd_run, "simulate a scene headless: progress, PLY frames, statistics CSV"},
    {"bench", cmd_bench, "simulation step time per stage and particle-steps per second"},
    {"bench-sort", cmd_bench_sort, "radix sort throughput (million pairs/s)"},
    {"kernel-builds", cmd_kernel_builds, "every program and build-option set pbfcl compiles"},
    {"params", cmd_params, "the solver parameters: key, flag, default, unit, range"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: pbfcl <command> [options]\n       pbfcl --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nEvery command takes --device D (an index from `pbfcl devices` or part of a "
               "device or platform name; default $PBFCL_DEVICE, else the first GPU).\n"
               "`pbfcl <command> --help` describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cmd_demo(argc, argv); /* `pbfcl` alone opens the demo */
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("pbfcl %s\n", pbfcl_version_string());
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "pbfcl: error: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
