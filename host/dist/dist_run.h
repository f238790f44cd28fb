/* `pbfcl run` split over the ranks of mpirun (docs/DISTRIBUTED.md): the program's side of
 * host/dist/, built into pbfcl when MPI is found; its entry points are declared with the
 * program's commands (host/app/commands.h), which include nothing of the core. */
#ifndef PBFCL_DIST_RUN_H
#define PBFCL_DIST_RUN_H

#include "checkpoint.h"
#include "dist.h"
#include "runtime/clrt.h"

#include <mpi.h>
#include <stdbool.h>

/* --rebalance's value: 0 (off) or PBFCL_DIST_REBALANCE_MIN to MAX into *out; false (message
 * printed) if not valid (run and bench). */
bool dist_parse_rebalance(const char *val, double *out);

/* The signal that stops a split command (signals.h), the same on every rank: the largest any
 * rank caught, since one rank may see it alone (sent to its process) or all (mpirun
 * forwarding it); 0 if none. Collective: one MPI_Allreduce of an int. */
int dist_agreed_signal(MPI_Comm comm);

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

/* Checkpoints of a split run (dist_checkpoint.c). Reads path on rank 0 and hands its bytes to
 * every rank, which verifies them (pbfcl_checkpoint_parse): every rank gets the same
 * checkpoint or the same failure. */
pbfcl_status dist_checkpoint_read(MPI_Comm comm, const char *path, pbfcl_checkpoint **c,
                                  pbfcl_checkpoint_info *info);

/* Checks a checkpoint of n particles of scene that a split run resumes, as
 * pbfcl_solver_load_state checks a state (the count, the parameters, every field), and that
 * its particles are fluid with the ids 0..n-1; refuses what a split run cannot take, saying to
 * resume it on one rank (not collective). */
pbfcl_status dist_checkpoint_check(pbfcl_checkpoint *c, const pbfcl_scene *scene, size_t n);

/* Writes the split simulation's state after step to path as one device's checkpoint of setup's
 * scene (called name): gathered on rank 0 and written there, whole or not at all; every rank
 * gets rank 0's status (collective). */
pbfcl_status dist_checkpoint_write(pbfcl_dist *d, MPI_Comm comm, const char *path,
                                   pbfcl_scene_setup *setup, const char *name, long long step,
                                   double time);

#endif
