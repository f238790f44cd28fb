/* pbfcl's entry point: dispatches to the subcommands, answers --version, and fails if what a
 * command printed could not be written (a full disk behind stdout is an error, not a
 * success). */
#include "commands.h"
#include "pbfcl.h"

#include <stdbool.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"demo", cmd_demo, "interactive SDL2/OpenGL demo (the default with no command)"},
    {"devices", cmd_devices, "list OpenCL platforms and devices"},
    {"run", cmd_run,
     "simulate a scene headless: progress, PLY/VTK frames, statistics, checkpoints"},
    {"bench", cmd_bench, "simulation step time per stage and particle-steps per second"},
    {"params", cmd_params, "the solver parameters: key, flag, default, unit, range"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: pbfcl <command> [options]\n       pbfcl --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nEvery command takes --device D (an index from `pbfcl devices` or part of a "
               "device or platform name; default $PBFCL_DEVICE, else the first GPU).\n"
               "`pbfcl <command> --help` describes a command's options; `pbfcl --version` "
               "prints the version.\n"
               "Exit status: 0 success, 1 failure (device, files, simulation), 2 bad option or "
               "input, 128+N stopped by signal N (run).\n"
               "The benchmarks and listings of the core's internals (bench-sort, bench-split, "
               "kernel-builds) are in the developer tool pbfcl-dev of the build tree.\n");
}

/* The command's exit code, or 1 if its output to stdout was lost (e.g. a full disk). */
static int finish(int code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int saved = errno;
        fprintf(stderr, "pbfcl: error: cannot write to standard output: %s\n",
                saved ? strerror(saved) : "write error");
        return code == 0 ? 1 : code;
    }
    return code;
}

static bool wants_version(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--version"))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return finish(cmd_demo(argc, argv)); /* `pbfcl` alone opens the demo */
#ifndef PBFCL_HAVE_MPI
    const char *ranks =
        getenv("OMPI_COMM_WORLD_SIZE") ? getenv("OMPI_COMM_WORLD_SIZE") : getenv("PMI_SIZE");
    const char *rank =
        getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK") : getenv("PMI_RANK");
    if (ranks && atoi(ranks) > 1) {   /* K copies would write the same files side by side */
        if (!rank || atoi(rank) == 0) /* said once */
            fprintf(stderr,
                    "pbfcl: error: started by mpirun with %s ranks, but this pbfcl was built "
                    "without MPI; install Open MPI (tools/install-deps --mpi) and rebuild, "
                    "or run without mpirun\n",
                    ranks);
        return finish(2);
    }
#else
    if (!strcmp(argv[1], "run") && dist_launched()) /* mpirun -np K, K > 1: split over ranks */
        return finish(dist_cmd_run(argc - 1, argv + 1));
    if (!strcmp(argv[1], "bench") && dist_launched())
        return finish(dist_cmd_bench(argc - 1, argv + 1));
    if (!strcmp(argv[1], "demo") && dist_launched()) {
        if (dist_launched_rank() == 0) /* said once */
            fprintf(stderr,
                    "pbfcl: error: the demo is not split over MPI ranks (run and bench are); "
                    "start it without mpirun, or with mpirun -np 1\n");
        return finish(2);
    }
#endif
    if (wants_version(argc, argv)) {
        printf("pbfcl %s\n", pbfcl_version_string());
        return finish(0);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return finish(0);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return finish(commands[i].run(argc - 1, argv + 1));
    if (!strcmp(argv[1], "bench-sort") || !strcmp(argv[1], "bench-split") ||
        !strcmp(argv[1], "kernel-builds")) {
        fprintf(stderr,
                "pbfcl: error: '%s' is a developer command of the core's internals: run it with "
                "pbfcl-dev (built beside pbfcl in the build tree, not installed)\n",
                argv[1]);
        return 2;
    }
    fprintf(stderr, "pbfcl: error: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
