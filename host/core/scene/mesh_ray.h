/* The exact tests on a scene's mesh triangles that sampling shares (host/core/mesh_ray.c):
 * the grid of integer coordinates the ray test snaps to, whether the ray from a point along +x
 * crosses a triangle (and where, and which way the triangle faces), and the distance from a
 * point to a triangle. */
#ifndef PBFCL_MESH_RAY_H
#define PBFCL_MESH_RAY_H

#include "scene/scene.h"

#include <stdint.h>

/* The grid the ray test snaps to: 2^26 steps across a mesh shape's largest extent (at least
 * tol), so that products of coordinate differences stay far inside 64 bits. */
typedef struct pbfcl_mesh_grid {
    double lo[3], step;
} pbfcl_mesh_grid;

/* The grid of mesh shape f for points tested with tolerance tol. */
pbfcl_mesh_grid pbfcl_mesh_grid_of(const pbfcl_fluid_shape *f, double tol);

/* Coordinate x along axis k on grid g, rounded to the nearest step. */
int64_t pbfcl_mesh_snap(const pbfcl_mesh_grid *g, int k, double x);

/* Corner j of triangle t of s's meshes, in double. */
void pbfcl_mesh_corner(const pbfcl_scene *s, int t, int j, double out[3]);

/* Whether the ray from p along +x meets the triangle with snapped corners c, decided as if p
 * were moved by (0, e, e^2) for an infinitely small e (so a ray through an edge or a vertex
 * meets exactly one of the triangles there): 0 if the ray's line misses it; else +1 where the
 * triangle faces +x (the ray leaves an outward-facing surface there), -1 where it faces -x,
 * and *x the crossing's x in grid steps. Only p's y and z are read: the caller compares *x
 * with p's x. */
int pbfcl_mesh_ray_crossing(const int64_t c[3][3], const int64_t p[3], double *x);

/* The squared distance from p to the triangle a, b, c. */
double pbfcl_mesh_distance2(const double p[3], const double a[3], const double b[3],
                            const double c[3]);

#endif
