/* pbfcl split over several devices through MPI (docs/DISTRIBUTED.md, "The API"): a fluid
 * simulation whose particles are shared out among the ranks of an MPI communicator, one device
 * each, in slabs of the box along its longest axis balanced by particle count; each rank owns
 * its slab's particles and keeps copies of its neighbours' within the kernel radius. Only
 * programs built with MPI include this header (pbfcl.h holds nothing of MPI); they link the
 * library pbfcl_dist, which a pbfcl built where CMake finds MPI provides.
 *
 * Every function is collective over the solver's communicator (every rank calls it, in the
 * same order) unless its comment says otherwise. Bad input gives every rank the same status;
 * a rank whose device fails in the middle of a step or a gather ends every rank of the
 * communicator (MPI_Abort with status 1, after "pbfcl: rank R of K failed: ..." on stderr):
 * the others would wait for it in the next exchange for ever. */
#ifndef PBFCL_MPI_H
#define PBFCL_MPI_H

#include "pbfcl.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pbfcl_dist_solver pbfcl_dist_solver; /* opaque */

/* Creates a solver of desc split over the ranks of comm (duplicated: its messages do not mix
 * with the caller's), each on its own context ctx, holding count particles at positions with
 * velocities (xyz triples, NULL: at rest), the same arrays on every rank: particle k keeps id k
 * whichever rank holds it. desc->capacity is each rank's room, its own particles and the ghosts
 * within h of its slab (0: all count particles). Fluid, by the PBF or the SPH method; at most
 * count ranks; each inner slab at least h wide (else refused, saying what to change). */
PBFCL_API pbfcl_status pbfcl_dist_solver_create(MPI_Comm comm, pbfcl_context *ctx,
                                                const pbfcl_solver_desc *desc,
                                                const float *positions, const float *velocities,
                                                size_t count, pbfcl_dist_solver **out);

/* Destroys the solver (collective: it frees its communicator). NULL is accepted. */
PBFCL_API pbfcl_status pbfcl_dist_solver_destroy(pbfcl_dist_solver *s);

/* Rebalancing: 0 off (the default), or a threshold from 1.05 to 16: before a step, when a rank
 * owns more than threshold times the mean, the slabs are planned anew from the particles'
 * distribution and the particles move to their new ranks (docs/DISTRIBUTED.md, "Rebalancing").
 * Not collective, but every rank must set the same. */
PBFCL_API pbfcl_status pbfcl_dist_solver_set_rebalance(pbfcl_dist_solver *s, double threshold);

/* Advances one frame of the parameters' dt, in the substeps the fastest particle of all the
 * ranks asks for (every rank takes the same). */
PBFCL_API pbfcl_status pbfcl_dist_solver_step(pbfcl_dist_solver *s);

/* The particles this rank owns now and of the whole simulation; either may be NULL (not
 * collective). */
PBFCL_API pbfcl_status pbfcl_dist_solver_count(const pbfcl_dist_solver *s, size_t *local,
                                               size_t *total);

/* This rank's own particles: positions, velocities (xyz triples) and ids, any may be NULL,
 * count entries: count must equal the local count (not collective). */
PBFCL_API pbfcl_status pbfcl_dist_solver_get_local(pbfcl_dist_solver *s, float *positions,
                                                   float *velocities, unsigned *ids, size_t count);

/* Every particle, gathered by id on rank 0 of the communicator: positions, velocities (xyz
 * triples) and densities of total entries there, any may be NULL (the other ranks' are not
 * read). Fails on every rank, naming the id, if an id were held by no rank or by two. */
PBFCL_API pbfcl_status pbfcl_dist_solver_gather(pbfcl_dist_solver *s, float *positions,
                                                float *velocities, float *densities);

/* The statistics of the whole simulation (reduced over the ranks; every rank gets them), as
 * pbfcl_solver_stats gives one device's. */
PBFCL_API pbfcl_status pbfcl_dist_solver_stats(pbfcl_dist_solver *s, pbfcl_stats *out);

#ifdef __cplusplus
}
#endif

#endif
