/* `pbfcl run` split over the ranks of mpirun (docs/DISTRIBUTED.md): the program's side of
 * host/dist/, built into pbfcl when MPI is found; its entry points are declared with the
 * program's commands (host/app/commands.h), which include nothing of the core. */
#ifndef PBFCL_DIST_RUN_H
#define PBFCL_DIST_RUN_H

#include "runtime/clrt.h"

#include <mpi.h>
#include <stdbool.h>

/* The rank among the ranks of the same machine. */
int dist_local_rank(MPI_Comm comm);

/* Opens this rank's device (dist_device.c): entry (local rank mod count) of a --device list
 * "A,B,...", else of $PBFCL_DEVICE, else the local rank's GPU (mod their count). */
pbfcl_status dist_open_device(MPI_Comm comm, const char *spec, pbfcl_cl *cl);

/* The messages of a command split over ranks: the library's log goes to stderr prefixed with
 * this rank's number once every rank speaks; until then only rank 0's (dist_speak). */
void dist_log_setup(int rank);

/* every_rank false: only rank 0 speaks (the others' stderr goes to /dev/null), as while the
 * ranks check the same input; true: every rank, each message with its rank's number. */
void dist_speak(bool every_rank);

#endif
