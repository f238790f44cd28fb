/* Inflatables: closed triangle meshes over particles named by persistent id that hold a volume
 * of gas (FleX's inflatables; Mueller et al. 2007, section 4.4), a constraint kind of PBF's
 * solver iteration projected after the distance constraints (inflatable.c, cl/pbf/inflatable.cl).
 * The gas of inflatable k holds V1 = pressure * rest volume when nothing presses on it; its
 * compliance alpha (m^3/Pa) at V1 makes its ambient pressure V1 / alpha, and at volume V its
 * pressure is Boyle's, V1 / alpha * V1 / V (docs/ALGORITHM.md, "Inflatables"); compliance 0
 * holds V1 exactly. A simulation without them launches nothing of theirs. */
#ifndef PBFCL_PBF_INFLATABLE_H
#define PBFCL_PBF_INFLATABLE_H

#include "pbf/pbf.h"

/* Replaces the inflatables: inflatable k is the next tri_count[k] triangles of tri (3 particle
 * ids each, counter-clockwise seen from outside), a closed manifold mesh (every edge in two
 * triangles, once each way), no particle in two inflatables, with rest volume rest[k] (m^3,
 * finite, > 0), pressure pressure[k] (finite, > 0: it holds pressure * rest when unloaded) and
 * compliance compliance[k] (m^3/Pa, finite, >= 0). count = 0 removes them. Bad input is
 * refused naming the inflatable (and triangle), what is wrong and the fix; the old ones stay.
 * The winding is not checked here (the cooker, cloth_cook.h, checks it). */
pbfcl_status pbfcl_pbf_set_inflatables(pbfcl_sim *sim, size_t count, const unsigned *tri_count,
                                       const unsigned *tri, const float *rest,
                                       const float *pressure, const float *compliance);

/* The number of inflatables and of their triangles (either pointer may be NULL). */
void pbfcl_pbf_inflatable_count(pbfcl_sim *sim, size_t *count, size_t *triangles);

/* Copies the inflatables as set (any pointer may be NULL). */
pbfcl_status pbfcl_pbf_get_inflatables(pbfcl_sim *sim, unsigned *tri_count, unsigned *tri,
                                       float *rest, float *pressure, float *compliance);

/* Each inflatable's volume (m^3) at the start of the last iteration of the last substep and its
 * gas' pressure above the ambient one, lambda / dt^2 (Pa); either pointer may be NULL. */
pbfcl_status pbfcl_pbf_read_inflatables(pbfcl_sim *sim, float *volume, float *gauge);

/* Checkpoints: "inflatables" (the count), then "inflatable_triangle_counts",
 * "inflatable_triangles" and "inflatable_params" (rest volume, pressure, compliance, 0). */
pbfcl_status pbfcl_pbf_inflatable_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx);
pbfcl_status pbfcl_pbf_inflatable_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx);

#endif
