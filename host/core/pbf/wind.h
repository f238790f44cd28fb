/* Wind on cloth (as FleX's drag and lift): a force per dynamic triangle from its velocity
 * relative to the wind (solver.wind_x/y/z, solver.drag, solver.lift), shared by its three
 * vertices and added to their velocities before predict (wind.c, cl/pbf/wind.cl). Triangles name
 * particles by persistent id. A simulation without triangles, or with drag and lift 0,
 * launches nothing of theirs. */
#ifndef PBFCL_PBF_WIND_H
#define PBFCL_PBF_WIND_H

#include "pbf/pbf.h"

/* Replaces the triangles the wind acts on: triangle t joins the particles with ids tri[3t],
 * tri[3t + 1], tri[3t + 2] (three different ids below the particle count). count = 0 removes
 * them. Bad input is refused naming the triangle and the fix; the old triangles then stay. */
pbfcl_status pbfcl_pbf_set_triangles(pbfcl_sim *sim, size_t count, const unsigned *tri);

/* The number of triangles the wind acts on. */
size_t pbfcl_pbf_triangle_count(pbfcl_sim *sim);

/* Copies the triangles (3 ids each, pbfcl_pbf_triangle_count of them) into tri. */
void pbfcl_pbf_get_triangles(pbfcl_sim *sim, unsigned *tri);

/* Checkpoints: the triangles as sections ("triangles", their count, then "triangle_ids"). */
pbfcl_status pbfcl_pbf_wind_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx);
pbfcl_status pbfcl_pbf_wind_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx);

/* Reads each triangle's wind force of the last substep that had wind (N, xyz; count of
 * pbfcl_pbf_triangle_count) into force3, for tests. */
pbfcl_status pbfcl_pbf_read_wind_forces(pbfcl_sim *sim, float *force3);

#endif
