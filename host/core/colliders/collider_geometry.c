/* A collision shape's geometry from its description: the checks, a convex hull's planes (every
 * triple of points whose plane has all points on one side), a mesh's triangles and the uniform
 * grid of cells that lists the triangles each cell's box touches. */
#include "colliders/collider_geometry.h"

#include "scene/obj_mesh.h"

#include "pbfcl_shared.h"
#include "../../../cl/colliders/colliders.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void pbfcl_collider_geometry_free(pbfcl_collider_geometry *g)
{
    free(g->planes);
    free(g->tris);
    free(g->cell_start);
    free(g->cell_tris);
    memset(g, 0, sizeof *g);
}

static void sub3(const float *a, const float *b, double *out)
{
    for (int k = 0; k < 3; k++)
        out[k] = (double)a[k] - b[k];
}

static void cross3(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The points' bounds into g->lo, g->hi; false if any is not finite. */
static bool point_bounds(const float *pts, size_t n, pbfcl_collider_geometry *g)
{
    for (int k = 0; k < 3; k++) {
        g->lo[k] = INFINITY;
        g->hi[k] = -INFINITY;
    }
    for (size_t i = 0; i < 3 * n; i++) {
        if (!isfinite(pts[i]))
            return false;
        g->lo[i % 3] = fminf(g->lo[i % 3], pts[i]);
        g->hi[i % 3] = fmaxf(g->hi[i % 3], pts[i]);
    }
    return true;
}

/* Adds plane (n, d) unless one with the same normal is there. */
static void add_plane(pbfcl_collider_geometry *g, const double *n, double d, double tol)
{
    for (size_t p = 0; p < g->plane_count; p++) {
        const float *q = g->planes + 4 * p;
        if (fabs(q[0] - n[0]) + fabs(q[1] - n[1]) + fabs(q[2] - n[2]) < 1e-5 &&
            fabs(q[3] - d) < tol)
            return;
    }
    float *q = g->planes + 4 * g->plane_count++;
    for (int k = 0; k < 3; k++)
        q[k] = (float)n[k];
    q[3] = (float)d;
}

/* The plane through points a, b, c if every point lies on its inner side (within tol). */
static void try_face(const float *pts, size_t n, size_t a, size_t b, size_t c, double tol,
                     pbfcl_collider_geometry *g)
{
    double u[3], v[3], nrm[3];
    sub3(pts + 3 * b, pts + 3 * a, u);
    sub3(pts + 3 * c, pts + 3 * a, v);
    cross3(u, v, nrm);
    double len = sqrt(dot3(nrm, nrm));
    if (!(len > tol * tol))
        return;
    for (int k = 0; k < 3; k++)
        nrm[k] /= len;
    double pa[3] = {pts[3 * a], pts[3 * a + 1], pts[3 * a + 2]}, d = -dot3(nrm, pa);
    int above = 0, below = 0;
    for (size_t i = 0; i < n && !(above && below); i++) {
        double pi[3] = {pts[3 * i], pts[3 * i + 1], pts[3 * i + 2]}, s = dot3(nrm, pi) + d;
        above += s > tol;
        below += s < -tol;
    }
    if (above && below)
        return;
    if (above) { /* the points lie in front: the outward normal is the other way */
        for (int k = 0; k < 3; k++)
            nrm[k] = -nrm[k];
        d = -d;
    }
    add_plane(g, nrm, d, tol);
}

pbfcl_status pbfcl_collider_hull(const float *pts, size_t n, const char *name,
                                 pbfcl_collider_geometry *g)
{
    g->type = PBFCL_COLLIDER_CONVEX;
    if (n < 4 || n > PBFCL_COLLIDER_HULL_MAX_POINTS || !pts) {
        pbfcl_errorf("%s: a convex hull is built from 4 to %d points, not %zu: give at least 4 "
                     "points that are not all in one plane (fewer, or a mesh with more "
                     "vertices: use a triangle mesh shape)",
                     name, PBFCL_COLLIDER_HULL_MAX_POINTS, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!point_bounds(pts, n, g)) {
        pbfcl_errorf("%s: a point of the convex hull is not finite: give finite coordinates", name);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    double extent = fmax(g->hi[0] - g->lo[0], fmax(g->hi[1] - g->lo[1], g->hi[2] - g->lo[2]));
    double tol = 1e-5 * extent;
    g->planes = malloc(n * n * 2 * 4 * sizeof *g->planes); /* at most 2n - 4 faces, with room */
    if (!g->planes)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++)
            for (size_t c = b + 1; c < n; c++)
                try_face(pts, n, a, b, c, tol, g);
    if (g->plane_count < 4) { /* flat (or a line or a point): no volume */
        pbfcl_errorf("%s: the convex hull's %zu points lie in one plane (no volume): give at "
                     "least 4 points that are not coplanar",
                     name, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* The cell range [c0, c1] of box lo..hi in g's grid. */
static void cell_range(const pbfcl_collider_geometry *g, const float *lo, const float *hi,
                       unsigned *c0, unsigned *c1)
{
    for (int k = 0; k < 3; k++) {
        double a = floor((lo[k] - g->grid_origin[k]) / g->cell);
        double b = floor((hi[k] - g->grid_origin[k]) / g->cell);
        c0[k] = (unsigned)fmin(fmax(a, 0.0), g->dims[k] - 1.0);
        c1[k] = (unsigned)fmin(fmax(b, 0.0), g->dims[k] - 1.0);
    }
}

/* Lists each triangle in every cell its box touches (counts first when fill is false). */
static void grid_pass(pbfcl_collider_geometry *g, unsigned *at, bool fill)
{
    for (size_t t = 0; t < g->tri_count; t++) {
        float lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            const float *c = g->tris + 12 * t + k;
            lo[k] = fminf(c[0], fminf(c[4], c[8]));
            hi[k] = fmaxf(c[0], fmaxf(c[4], c[8]));
        }
        unsigned c0[3], c1[3];
        cell_range(g, lo, hi, c0, c1);
        for (unsigned z = c0[2]; z <= c1[2]; z++)
            for (unsigned y = c0[1]; y <= c1[1]; y++)
                for (unsigned x = c0[0]; x <= c1[0]; x++) {
                    size_t cell = ((size_t)z * g->dims[1] + y) * g->dims[0] + x;
                    if (fill)
                        g->cell_tris[at[cell]++] = (unsigned)t;
                    else
                        g->cell_start[cell + 1]++;
                }
    }
}

pbfcl_status pbfcl_collider_mesh_grid(pbfcl_collider_geometry *g)
{
    double edge = 0.0, extent = 0.0;
    for (size_t t = 0; t < g->tri_count; t++)
        for (int k = 0; k < 3; k++) {
            double d[3];
            sub3(g->tris + 12 * t + 4 * ((k + 1) % 3), g->tris + 12 * t + 4 * k, d);
            edge += sqrt(dot3(d, d)) / (3.0 * g->tri_count);
        }
    for (int k = 0; k < 3; k++)
        extent = fmax(extent, (double)g->hi[k] - g->lo[k]);
    g->cell = (float)fmax(fmax(edge, extent / PBFCL_COLLIDER_GRID_MAX) * 1.001, 1e-6);
    size_t cells = 1;
    for (int k = 0; k < 3; k++) {
        g->grid_origin[k] = g->lo[k];
        double span = ((double)g->hi[k] - g->lo[k]) / g->cell;
        g->dims[k] = (unsigned)fmin(fmax(ceil(span), 1.0), PBFCL_COLLIDER_GRID_MAX);
        cells *= g->dims[k];
    }
    g->cell_start = calloc(cells + 1, sizeof *g->cell_start);
    unsigned *at = malloc(cells * sizeof *at);
    if (!g->cell_start || !at) {
        free(at);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    grid_pass(g, NULL, false);
    for (size_t c = 0; c < cells; c++)
        g->cell_start[c + 1] += g->cell_start[c];
    memcpy(at, g->cell_start, cells * sizeof *at);
    g->cell_tris = malloc((g->cell_start[cells] + 1) * sizeof *g->cell_tris);
    if (g->cell_tris)
        grid_pass(g, at, true);
    free(at);
    return g->cell_tris ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
}

pbfcl_status pbfcl_collider_mesh(const float *v, size_t nv, const unsigned *tri, size_t nt,
                                 const char *name, pbfcl_collider_geometry *g)
{
    g->type = PBFCL_COLLIDER_MESH;
    if (!v || !tri || nv < 3 || nt < 1) {
        pbfcl_errorf("%s: a mesh needs at least 3 vertices and 1 triangle (it has %zu and %zu): "
                     "give vertices and triangles, or an OBJ file",
                     name, nv, nt);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!point_bounds(v, nv, g)) {
        pbfcl_errorf("%s: a vertex of the mesh is not finite: give finite coordinates", name);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!(g->tris = malloc(nt * 12 * sizeof *g->tris)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    g->tri_count = nt;
    size_t flat = 0;
    for (size_t t = 0; t < nt; t++) {
        double u[3], w[3], c[3];
        for (int j = 0; j < 3; j++) {
            if (tri[3 * t + j] >= nv) {
                pbfcl_errorf("%s: triangle %zu names vertex %u of %zu: give indices from 0 to "
                             "the vertex count less 1",
                             name, t, tri[3 * t + j], nv);
                return PBFCL_ERR_BAD_ARGUMENT;
            }
            memcpy(g->tris + 12 * t + 4 * j, v + 3 * tri[3 * t + j], 3 * sizeof(float));
            g->tris[12 * t + 4 * j + 3] = 0.0f;
        }
        sub3(g->tris + 12 * t + 4, g->tris + 12 * t, u);
        sub3(g->tris + 12 * t + 8, g->tris + 12 * t, w);
        cross3(u, w, c);
        flat += !(dot3(c, c) > 0.0);
    }
    if (flat == nt) {
        pbfcl_errorf("%s: every triangle of the mesh has zero area: give triangles with three "
                     "distinct corners not on a line",
                     name);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return pbfcl_collider_mesh_grid(g);
}

/* The vertices (and triangles) of desc's OBJ file, scaled, then the hull or the mesh. */
static pbfcl_status from_obj(const pbfcl_shape_desc *d, const char *name,
                             pbfcl_collider_geometry *g)
{
    pbfcl_obj m = {0};
    pbfcl_status st = pbfcl_obj_load(d->obj_path, &m);
    if (st != PBFCL_OK) {
        pbfcl_errorf("%s: the OBJ file %s is not a triangle mesh (see above): give a valid OBJ",
                     name, d->obj_path);
        return st;
    }
    float scale = d->scale != 0.0f ? d->scale : 1.0f;
    for (int i = 0; i < 3 * m.vertex_count; i++)
        m.vertices[i] *= scale;
    if (d->type == PBFCL_SHAPE_KIND_CONVEX)
        st = pbfcl_collider_hull(m.vertices, (size_t)m.vertex_count, name, g);
    else if (d->type == PBFCL_SHAPE_KIND_SDF)
        st = pbfcl_collider_sdf(m.vertices, (size_t)m.vertex_count, (const unsigned *)m.triangles,
                                (size_t)m.triangle_count, d->sdf_resolution, name, g);
    else
        st = pbfcl_collider_mesh(m.vertices, (size_t)m.vertex_count, (const unsigned *)m.triangles,
                                 (size_t)m.triangle_count, name, g);
    pbfcl_obj_free(&m);
    return st;
}

/* A size that must be finite and positive. */
static pbfcl_status positive(const char *name, const char *what, float v)
{
    if (isfinite(v) && v > 0.0f)
        return PBFCL_OK;
    pbfcl_errorf("%s: its %s is %g: give a finite size above 0 m", name, what, (double)v);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* A primitive's size and local bounds. */
static pbfcl_status primitive(const pbfcl_shape_desc *d, const char *name,
                              pbfcl_collider_geometry *g)
{
    float e[3] = {d->radius, d->radius, d->radius};
    if (d->type == PBFCL_SHAPE_KIND_BOX) {
        g->type = PBFCL_COLLIDER_BOX;
        const char *axis[3] = {"half extent x", "half extent y", "half extent z"};
        for (int k = 0; k < 3; k++) {
            PBFCL_TRY(positive(name, axis[k], d->half_extents[k]));
            e[k] = g->size[k] = d->half_extents[k];
        }
    } else {
        g->type =
            d->type == PBFCL_SHAPE_KIND_SPHERE ? PBFCL_COLLIDER_SPHERE : PBFCL_COLLIDER_CAPSULE;
        PBFCL_TRY(positive(name, "radius", d->radius));
        g->size[0] = d->radius;
        if (d->type == PBFCL_SHAPE_KIND_CAPSULE) {
            PBFCL_TRY(positive(name, "half length", d->half_length));
            g->size[1] = d->half_length;
            e[0] += d->half_length;
        }
    }
    for (int k = 0; k < 3; k++) {
        g->lo[k] = -e[k];
        g->hi[k] = e[k];
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_collider_geometry_build(const pbfcl_shape_desc *d, const char *name,
                                           pbfcl_collider_geometry *g)
{
    memset(g, 0, sizeof *g);
    pbfcl_status st;
    if (!(d->scale == 0.0f || (isfinite(d->scale) && d->scale > 0.0f))) {
        pbfcl_errorf("%s: its scale is %g: give a finite scale above 0 (or 0 for 1)", name,
                     (double)d->scale);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if ((unsigned)d->type > PBFCL_SHAPE_KIND_SDF) {
        pbfcl_errorf("%s: its type %d is none of sphere, capsule, box, convex, mesh, sdf", name,
                     (int)d->type);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (d->type <= PBFCL_SHAPE_KIND_BOX)
        st = primitive(d, name, g);
    else if (d->obj_path)
        st = from_obj(d, name, g);
    else if (d->type == PBFCL_SHAPE_KIND_CONVEX)
        st = pbfcl_collider_hull(d->points, d->point_count, name, g);
    else if (d->type == PBFCL_SHAPE_KIND_SDF)
        st = pbfcl_collider_sdf(d->vertices, d->vertex_count, d->triangles, d->triangle_count,
                                d->sdf_resolution, name, g);
    else
        st = pbfcl_collider_mesh(d->vertices, d->vertex_count, d->triangles, d->triangle_count,
                                 name, g);
    if (st == PBFCL_OK && d->type == PBFCL_SHAPE_KIND_MESH && d->two_sided)
        g->flags |= PBFCL_COLLIDER_TWO_SIDED;
    if (st != PBFCL_OK)
        pbfcl_collider_geometry_free(g);
    return st;
}
