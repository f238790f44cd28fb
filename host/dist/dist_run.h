/* `pbfcl run` split over the ranks of mpirun (docs/DISTRIBUTED.md): the program's side of
 * host/dist/, built into pbfcl when MPI is found. */
#ifndef PBFCL_DIST_RUN_H
#define PBFCL_DIST_RUN_H

#include "runtime/clrt.h"

#include <mpi.h>
#include <stdbool.h>

/* True when the program was started by mpirun (Open MPI or a PMI launcher such as MPICH's)
 * with more than one rank; no MPI call is made. */
bool dist_launched(void);

/* The launcher's rank of this process (0 if none is given); no MPI call is made. */
int dist_launched_rank(void);

/* `pbfcl run ARGS` on every rank: the options of the single-device run (less checkpoints),
 * statistics and frames written by rank 0. Returns the exit status. */
int dist_cmd_run(int argc, char **argv);

/* The rank among the ranks of the same machine. */
int dist_local_rank(MPI_Comm comm);

/* Opens this rank's device (dist_device.c): entry (local rank mod count) of a --device list
 * "A,B,...", else of $PBFCL_DEVICE, else the local rank's GPU (mod their count). */
pbfcl_status dist_open_device(MPI_Comm comm, const char *spec, pbfcl_cl *cl);

#endif
