/* Mesh shapes sampled on the lattice row by row (host/core/scene_mesh_rows.c): which lattice
 * points of an index box lie in a mesh shape, for all of them at once, with the same answer as
 * pbfcl_scene_mesh_inside gives point by point. */
#ifndef PBFCL_SCENE_MESH_ROWS_H
#define PBFCL_SCENE_MESH_ROWS_H

#include "scene/scene.h"

/* The lattice: point (a, b, c) is origin + spacing * (a, b, c); tol is the tolerance of the
 * inside tests (a point within tol of the surface counts as inside). */
typedef struct pbfcl_lattice_frame {
    double origin[3], spacing, tol;
} pbfcl_lattice_frame;

/* The lattice points of index box lo[k] .. lo[k] + n[k] - 1 that lie in a mesh shape, one
 * bit each, x fastest. */
typedef struct pbfcl_mesh_mask {
    long long lo[3], n[3];
    unsigned char *bits;
} pbfcl_mesh_mask;

/* Finds which points of the index box lo..hi (inclusive) lie in mesh shape f of s, into *m
 * (free it with pbfcl_mesh_mask_free): row by row along x, from the crossings of the row's
 * line with the triangles whose bounds reach it and the points near those triangles. Costs
 * O(rows x triangles per row + slices x triangles per slice); logs its progress after a
 * second, naming the shape by what ("obstacles[0]"). Fails only when out of memory (not logged: the
 * caller says what it does instead). */
pbfcl_status pbfcl_mesh_mask_build(const pbfcl_scene *s, const pbfcl_fluid_shape *f,
                                   const char *what, const pbfcl_lattice_frame *l,
                                   const long long lo[3], const long long hi[3],
                                   pbfcl_mesh_mask *m);

/* Whether lattice point (a, b, c) lies in the mask's shape (false outside its box). */
bool pbfcl_mesh_mask_holds(const pbfcl_mesh_mask *m, long long a, long long b, long long c);

/* Frees a mask (accepts a zeroed one). */
void pbfcl_mesh_mask_free(pbfcl_mesh_mask *m);

#endif
