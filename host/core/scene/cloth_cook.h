/* The cloth cooker: turns a triangle mesh, a rectangular grid or a polyline (a rope) into the
 * particles and distance constraints that make a cloth or a rope of them (as FleX's cloth
 * cooker does, extensions/flexExtCloth.cpp): an edge constraint per mesh edge (stretch and
 * shear), a bend constraint across each edge two triangles share (between their opposite
 * vertices), and tethers from the free particles to each anchor of pinned ones. Host only; the
 * constraints name particles by their index in the cooked object. */
#ifndef PBFCL_CLOTH_COOK_H
#define PBFCL_CLOTH_COOK_H

#include "pbfcl.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pbfcl_cloth_cook {
    size_t particles;
    float *pos;            /* 3 per particle */
    unsigned char *pinned; /* 1 per particle: inverse mass 0 */
    size_t constraints;    /* edges, then bends, then tethers */
    size_t edges, bends, tethers;
    unsigned *pair; /* 2 per constraint */
    float *rest, *compliance;
    unsigned char *tether; /* 1 per constraint: acts only when stretched */
    size_t triangles;
    unsigned *tri; /* 3 per triangle (none for a rope) */
    float volume;  /* an inflatable's: the volume its mesh encloses at rest, m^3 */
} pbfcl_cloth_cook;

/* The most subdivisions of a sphere (pbfcl_cook_sphere): 20 * 4^6 = 81920 triangles. */
#define PBFCL_COOK_MAX_SUBDIVISIONS 6

/* A cloth of the mesh (nv vertices pos, nt triangles tri) with the stretch compliance of its
 * edges and the bend compliance of its bends (m/N). name names the object in errors: a
 * triangle with a vertex out of range, a repeated vertex or no area is refused with its index
 * and the fix. */
pbfcl_status pbfcl_cook_mesh(const char *name, const float *pos, size_t nv, const unsigned *tri,
                             size_t nt, float stretch, float bend, pbfcl_cloth_cook *out);

/* A cloth of nu x nv particles (each at least 2) at origin + i / (nu - 1) u + j / (nv - 1) v,
 * particle i + nu j, each cell two triangles. */
pbfcl_status pbfcl_cook_grid(const char *name, const float origin[3], const float u[3],
                             const float v[3], int nu, int nv, float stretch, float bend,
                             pbfcl_cloth_cook *out);

/* A rope through the n points (at least 2, no two neighbours at one place): an edge between
 * neighbours with compliance stretch, a bend between every other one with compliance bend. */
pbfcl_status pbfcl_cook_rope(const char *name, const float *points, size_t n, float stretch,
                             float bend, pbfcl_cloth_cook *out);

/* Refuses a mesh (nt triangles tri) that is not closed and manifold with its triangles wound
 * alike: every directed edge a -> b in one triangle and b -> a in one other. The error names
 * name, the triangle, its edge and the fix. */
pbfcl_status pbfcl_cook_check_closed(const char *name, const unsigned *tri, size_t nt);

/* The signed volume the triangles enclose (positive when counter-clockwise seen from outside),
 * in double precision about the first triangle's first vertex. */
double pbfcl_cook_volume(const float *pos, const unsigned *tri, size_t nt);

/* An inflatable's shell: a cloth of the mesh (pbfcl_cook_mesh), refused naming name, the
 * triangle or edge and the fix when a triangle is degenerate or out of range, the mesh is open
 * or not manifold, or it encloses a volume of 0 or less (wound clockwise); out->volume is the
 * volume it encloses. */
pbfcl_status pbfcl_cook_inflatable(const char *name, const float *pos, size_t nv,
                                   const unsigned *tri, size_t nt, float stretch, float bend,
                                   pbfcl_cloth_cook *out);

/* An inflatable sphere about center of radius (finite, > 0): an icosahedron subdivided
 * subdivisions times (0 to PBFCL_COOK_MAX_SUBDIVISIONS; 10 * 4^s + 2 vertices, 20 * 4^s
 * triangles), its vertices on the sphere; as pbfcl_cook_inflatable. */
pbfcl_status pbfcl_cook_sphere(const char *name, const float center[3], float radius,
                               int subdivisions, float stretch, float bend, pbfcl_cloth_cook *out);

/* Pins the particles of pinned (1 each) and, with tethers, adds tethers (compliance 0, acting
 * only when stretched) from every free particle to each anchor at their present (rest)
 * distance: an anchor is a set of pinned particles joined by edges (a pinned corner, a pinned
 * edge), and the tether goes to its particle nearest the free one. None without a pinned
 * particle. */
pbfcl_status pbfcl_cook_pin(pbfcl_cloth_cook *c, const unsigned char *pinned, bool tethers);

/* Releases what a cook made; accepts a zeroed struct. */
void pbfcl_cook_free(pbfcl_cloth_cook *c);

#endif
