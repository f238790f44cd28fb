/* Distance constraints with XPBD compliance (Macklin, Mueller & Chentanez 2016) between
 * particles named by persistent id: the edges, bends and tethers of cloth and ropes, projected
 * in PBF's solver iteration after the bodies' shape matching (distance.c, cl/pbf/distance.cl). A
 * simulation without them launches nothing of theirs. */
#ifndef PBFCL_PBF_DISTANCE_H
#define PBFCL_PBF_DISTANCE_H

#include "pbf/pbf.h"

#include <stdbool.h>

/* Replaces the distance constraints: constraint c joins the particles with ids pair[2c] and
 * pair[2c + 1] (two different ids below the particle count) at rest length rest[c] (m, finite,
 * >= 0) with compliance compliance[c] (m/N, finite, >= 0: 0 is rigid); tether[c] != 0 (tether
 * may be NULL: none) makes it act only when stretched. count = 0 removes them all. Bad input is
 * refused naming the constraint, what is wrong and the fix; the old constraints then stay. */
pbfcl_status pbfcl_pbf_set_distances(pbfcl_sim *sim, size_t count, const unsigned *pair,
                                     const float *rest, const float *compliance,
                                     const unsigned char *tether);

/* Replaces the attachments' constraints (attach.c), kept after the caller's and apart from
 * them (never counted, read, saved or loaded here): constraint c joins ids pair[2c] and
 * pair[2c + 1] (below the capacity) at rest length rest[c] with compliance compliance[c]. */
pbfcl_status pbfcl_pbf_set_attached_distances(pbfcl_sim *sim, size_t count, const unsigned *pair,
                                              const float *rest, const float *compliance);

/* The number of distance constraints (the caller's). */
size_t pbfcl_pbf_distance_count(pbfcl_sim *sim);

/* Copies the constraints (as set; any pointer may be NULL) into arrays of count entries. */
pbfcl_status pbfcl_pbf_get_distances(pbfcl_sim *sim, unsigned *pair, float *rest, float *compliance,
                                     unsigned char *tether);

/* Reads each constraint's tension of the last substep, -lambda / dt^2 (N; positive when it
 * pulls its particles together). */
pbfcl_status pbfcl_pbf_read_distance_forces(pbfcl_sim *sim, float *force);

/* Checkpoints: the constraints as sections ("distances", then the pairs and rest values). */
pbfcl_status pbfcl_pbf_distance_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx);
pbfcl_status pbfcl_pbf_distance_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx);

#endif
