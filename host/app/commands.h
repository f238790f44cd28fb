/* The pbfcl subcommands: each takes the arguments after its name and returns an exit code. */
#ifndef PBFCL_COMMANDS_H
#define PBFCL_COMMANDS_H

/* `pbfcl devices`: lists every OpenCL platform and device. */
int cmd_devices(int argc, char **argv);

/* `pbfcl bench`: simulation step time per stage (median over steps) and particle-steps/s. */
int cmd_bench(int argc, char **argv);

/* `pbfcl run`: a headless simulation with progress, PLY frames and a statistics CSV. */
int cmd_run(int argc, char **argv);

/* `pbfcl params`: the solver parameters as a Markdown table (docs/SCENES.md holds it). */
int cmd_params(int argc, char **argv);

/* `pbfcl demo` (also `pbfcl` alone): the interactive SDL2/OpenGL demo. */
int cmd_demo(int argc, char **argv);

#ifdef PBFCL_HAVE_MPI
#include <stdbool.h>

/* `pbfcl run` split over the ranks of mpirun (host/dist/dist_run.c, docs/DISTRIBUTED.md). */
int dist_cmd_run(int argc, char **argv);

/* `pbfcl bench` split over the ranks of mpirun (host/dist/dist_bench.c): the report of bench
 * on one device, a step timed as the slowest rank's, and the exchanges' share. */
int dist_cmd_bench(int argc, char **argv);

/* True when mpirun (Open MPI or a PMI launcher) started this process with more than one rank;
 * the launcher's rank of this process (0 if none). No MPI call is made. */
bool dist_launched(void);
int dist_launched_rank(void);
#endif

#endif
