/* pbfcl-dev: developer commands that time and list the core's internals (the radix sort,
 * split-and-compress, every kernel build), below the public API the pbfcl program uses. Built
 * from the core in the build tree beside pbfcl; not installed. */
#ifndef PBFCL_DEV_COMMANDS_H
#define PBFCL_DEV_COMMANDS_H

#include "runtime/clrt.h"

/* `pbfcl-dev bench-sort`: radix sort throughput in million pairs per second. */
int cmd_bench_sort(int argc, char **argv);

/* `pbfcl-dev bench-split`: split-and-compress against the neighbour lists, per stage. */
int cmd_bench_split(int argc, char **argv);

/* `pbfcl-dev kernel-builds`: every program with every build-option set pbfcl compiles it
 * with (what tools/validate-kernels compiles). */
int cmd_kernel_builds(int argc, char **argv);

/* Opens a core OpenCL context on device (NULL: $PBFCL_DEVICE, else the first GPU) with
 * $PBFCL_KERNEL_DIR and $PBFCL_TRACE_BUILDS applied, as the pbfcl program's contexts. */
pbfcl_status dev_cl_open(pbfcl_cl *cl, const char *device);

#endif
