/* The surfaces a solver's particles make, read through the public API for drawing and export:
 * the triangles set with pbfcl_solver_set_triangles (cloth, inflatables) and the ropes, chains
 * of distance constraints between particles of no triangle, as polylines. */
#ifndef PBFCL_SOLVER_MESH_H
#define PBFCL_SOLVER_MESH_H

#include "pbfcl.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pbfcl_solver_mesh {
    size_t n;           /* the particles when it was read */
    size_t tri_count;   /* triangles over particle indices */
    unsigned *tri;      /* 3 per triangle */
    size_t line_count;  /* rope polylines */
    size_t *line_start; /* line l is line_pts[line_start[l] .. line_start[l + 1] - 1] */
    unsigned *line_pts; /* particle indices along the ropes */
    size_t vert_count;  /* the particles of the triangles and ropes, ascending */
    unsigned *vert;     /* their particle indices */
    unsigned *vert_of;  /* n entries: a particle's vertex, or UINT32_MAX for none */
} pbfcl_solver_mesh;

/* Reads the triangles and distance constraints of a solver of n particles (replacing what m
 * held; m zeroed first or read before). */
pbfcl_status pbfcl_solver_mesh_read(pbfcl_solver_mesh *m, pbfcl_solver *s, size_t n);

/* Sets m's lines (m zeroed but for m->n, the particle count) to the ropes of count distance
 * constraints (pair, rest, tether as pbfcl_solver_get_distances gives them; tether may be
 * NULL), in_tri[p] != 0 (m->n entries) for the particles of a triangle: the constraints that are no
 * tether and join two particles of no triangle, less the bends (a constraint longer than two others
 * that join its ends through one particle), chained into polylines (a particle with more than two
 * neighbours ends its lines). */
pbfcl_status pbfcl_solver_mesh_ropes(pbfcl_solver_mesh *m, const unsigned *pair, const float *rest,
                                     const unsigned char *tether, size_t count,
                                     const unsigned char *in_tri);

/* Frees what m holds and zeroes it; accepts a zeroed struct. */
void pbfcl_solver_mesh_free(pbfcl_solver_mesh *m);

#endif
