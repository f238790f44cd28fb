/* The geometry of a collision shape, built on the host from its description (pbfcl.h's
 * pbfcl_shape_desc): the checks that refuse a shape naming it and the fix, a convex hull's
 * planes from its points, a mesh's triangles and their uniform grid, and the local bounds. */
#ifndef PBFCL_COLLIDER_GEOMETRY_H
#define PBFCL_COLLIDER_GEOMETRY_H

#include "runtime/pbfcl_error.h"

#include <stddef.h>

/* The most points a convex hull is built from (its planes are found by testing every triple). */
#define PBFCL_COLLIDER_HULL_MAX_POINTS 128

/* The most cells along one axis of a mesh's triangle grid. */
#define PBFCL_COLLIDER_GRID_MAX 64

/* The most cells along the longest side of an SDF's mesh (its grid has 2 * 3 more). */
#define PBFCL_COLLIDER_SDF_MAX_RESOLUTION PBFCL_MAX_SDF_RESOLUTION

/* One shape's geometry in its own frame. */
typedef struct pbfcl_collider_geometry {
    unsigned type; /* PBFCL_COLLIDER_* (cl/colliders/colliders.h) */
    float size[4]; /* sphere, capsule, box */
    float *planes; /* convex: (n, d) per plane, dot(n, x) + d the distance outside; sdf: its
                      nodes, x fastest, each (the gradient xyz, the signed distance) */
    size_t plane_count;
    float *tris; /* mesh: 3 float4 corners per triangle */
    size_t tri_count;
    unsigned *cell_start; /* mesh: cells + 1 offsets into cell_tris (triangles of the shape) */
    unsigned *cell_tris;
    unsigned dims[3];           /* mesh: cells per axis; sdf: nodes per axis */
    float grid_origin[3], cell; /* mesh, sdf: the grid's lower corner (node) and cell edge */
    unsigned flags;             /* PBFCL_COLLIDER_TWO_SIDED */
    float lo[3], hi[3];         /* local bounds */
} pbfcl_collider_geometry;

/* Builds the geometry of desc (named name in messages), refusing one that is not valid. */
pbfcl_status pbfcl_collider_geometry_build(const pbfcl_shape_desc *desc, const char *name,
                                           pbfcl_collider_geometry *out);

/* The planes of the convex hull of n points (xyz triples) into out (free with the geometry);
 * fewer than 4 non-coplanar points or more than PBFCL_COLLIDER_HULL_MAX_POINTS refused. */
pbfcl_status pbfcl_collider_hull(const float *pts, size_t n, const char *name,
                                 pbfcl_collider_geometry *out);

/* The triangles (3 vertex indices each) over vertices as a mesh, with its grid. */
pbfcl_status pbfcl_collider_mesh(const float *vertices, size_t nv, const unsigned *tri, size_t nt,
                                 const char *name, pbfcl_collider_geometry *out);

/* The grid over a mesh's triangles (g->tris, tri_count, lo, hi): cells about the mean edge, at
 * most PBFCL_COLLIDER_GRID_MAX per axis. */
pbfcl_status pbfcl_collider_mesh_grid(pbfcl_collider_geometry *g);

/* The signed distance field of the closed mesh of triangles over vertices (refused if open),
 * resolution cells along its bounds' longest side (0: 32); its nodes into out->planes. */
pbfcl_status pbfcl_collider_sdf(const float *vertices, size_t nv, const unsigned *tri, size_t nt,
                                int resolution, const char *name, pbfcl_collider_geometry *out);

/* Releases what a build made; accepts a zeroed geometry. */
void pbfcl_collider_geometry_free(pbfcl_collider_geometry *g);

#endif
