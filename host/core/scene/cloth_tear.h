/* Tearing of cloth (as FleX's NvFlexExtTearClothMesh), on the host over plain tables: where a
 * stretch edge (a distance constraint between two vertices of one triangle) is strained beyond
 * its cloth's limit, one of its vertices is split along the plane through it across the edge:
 * a new particle (a copy of it, the two sharing its mass) takes the triangles on the far side,
 * and the edges and bends around it are made anew from the triangles, with the rest lengths and
 * compliances of the constraints they replace. Host only; indices are particle ids. */
#ifndef PBFCL_CLOTH_TEAR_H
#define PBFCL_CLOTH_TEAR_H

#include "pbfcl.h"

#include <stddef.h>

/* The tables a tear reads and edits; every array is malloc'ed and may be reallocated. */
typedef struct pbfcl_tear_mesh {
    size_t particles;  /* grows by one per split: the new particle is the last */
    float *pos;        /* 3 per particle */
    float *inv_mass;   /* 1 per particle (any unit; 0: pinned, never split); halved masses */
    float *max_strain; /* 1 per particle: an edge tears beyond the larger of its ends' (0: never) */
    unsigned *source;  /* 1 per particle: the particle a split copied (itself if none) */
    size_t triangles;
    unsigned *tri; /* 3 per triangle */
    size_t constraints;
    unsigned *pair; /* 2 per constraint */
    float *rest, *compliance;
    unsigned char *tether; /* tethers are never torn nor remade */
} pbfcl_tear_mesh;

/* Splits at most max_splits vertices, the most strained edges (|x_a - x_b| / L - 1 above the
 * limit) first; the number done into *splits. A pinned vertex is not split; an edge whose two
 * vertices have all their triangles on one side of the plane is left. */
pbfcl_status pbfcl_cloth_tear(pbfcl_tear_mesh *m, size_t max_splits, size_t *splits);

/* Releases the tables; accepts a zeroed struct. */
void pbfcl_tear_mesh_free(pbfcl_tear_mesh *m);

#endif
