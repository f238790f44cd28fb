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

#endif
