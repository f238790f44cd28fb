/* A signed distance field shape's geometry: a closed mesh (every edge shared by exactly two
 * triangles, in opposite directions; an open one is refused) sampled on a grid of nodes, each
 * holding the exact distance to the mesh (negative inside) and its gradient, for the kernels'
 * trilinear samples (cl/colliders/colliders.cl). The sign comes from exact ray crossings along x,
 * row by row (scene/mesh_ray.h); the distance from the closest point of every triangle. */
#include "colliders/collider_geometry.h"

#include "scene/mesh_ray.h"

#include "pbfcl_shared.h"
#include "../../../cl/colliders/colliders.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Cells along the longest side of the mesh's bounds when the description gives 0. */
#define SDF_DEFAULT_RESOLUTION 32

/* Cells of padding beyond the mesh's bounds on every side. */
#define SDF_PAD 3

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Whether directed edge key (a << 32 | b) is in the sorted keys. */
static size_t edge_count(const uint64_t *keys, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first key >= key */
        size_t mid = (lo + hi) / 2;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t c = 0;
    while (lo + c < n && keys[lo + c] == key)
        c++;
    return c;
}

/* Refuses a mesh that is not closed and consistently oriented: each directed edge (a, b) of a
 * triangle must appear once, and (b, a) once in another triangle. */
static pbfcl_status check_closed(const unsigned *tri, size_t nt, const char *name)
{
    uint64_t *keys = malloc(3 * nt * sizeof *keys);
    if (!keys)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t t = 0; t < nt; t++)
        for (int j = 0; j < 3; j++)
            keys[3 * t + j] = (uint64_t)tri[3 * t + j] << 32 | tri[3 * t + (j + 1) % 3];
    qsort(keys, 3 * nt, sizeof *keys, cmp_u64);
    pbfcl_status st = PBFCL_OK;
    for (size_t t = 0; t < nt && st == PBFCL_OK; t++)
        for (int j = 0; j < 3 && st == PBFCL_OK; j++) {
            unsigned a = tri[3 * t + j], b = tri[3 * t + (j + 1) % 3];
            size_t same = edge_count(keys, 3 * nt, (uint64_t)a << 32 | b);
            size_t back = edge_count(keys, 3 * nt, (uint64_t)b << 32 | a);
            if (same == 1 && back == 1)
                continue;
            if (same == 1 && back == 0)
                pbfcl_errorf("%s: an SDF is computed from a closed mesh, and the edge from vertex "
                             "%u to %u of triangle %zu has no triangle on its other side (the "
                             "mesh is open): close the mesh, or use a triangle mesh shape",
                             name, a, b, t);
            else
                pbfcl_errorf("%s: an SDF is computed from a closed mesh whose triangles all face "
                             "one way, and the edge from vertex %u to %u of triangle %zu is met "
                             "%zu times that way and %zu the other: give each edge to two "
                             "triangles, counter-clockwise from outside",
                             name, a, b, t, same, back);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
    free(keys);
    return st;
}

/* The closest point *q of triangle a, b, c to p (Ericson, Real-Time Collision Detection 5.1.5). */
static void closest_on_triangle(const double *p, const double *a, const double *b, const double *c,
                                double *q)
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ac[k] = c[k] - a[k];
        ap[k] = p[k] - a[k];
        bp[k] = p[k] - b[k];
        cp[k] = p[k] - c[k];
    }
#define DOT(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    double d1 = DOT(ab, ap), d2 = DOT(ac, ap), d3 = DOT(ab, bp), d4 = DOT(ac, bp);
    double d5 = DOT(ab, cp), d6 = DOT(ac, cp);
#undef DOT
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2, u, v = 0.0;
    const double *from = a, *dir = ab, *dir2 = NULL;
    if (d1 <= 0.0 && d2 <= 0.0)
        u = 0.0;
    else if (d3 >= 0.0 && d4 <= d3)
        from = b, u = 0.0;
    else if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0)
        u = d1 / (d1 - d3);
    else if (d6 >= 0.0 && d5 <= d6)
        from = c, u = 0.0;
    else if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0)
        dir = ac, u = d2 / (d2 - d6);
    else if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        double bc[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]};
        u = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; k++)
            q[k] = b[k] + bc[k] * u;
        return;
    } else {
        double den = 1.0 / (va + vb + vc);
        u = vb * den, v = vc * den, dir2 = ac;
    }
    for (int k = 0; k < 3; k++)
        q[k] = from[k] + dir[k] * u + (dir2 ? dir2[k] * v : 0.0);
}

/* What the node loop shares: the mesh in double, each triangle's bounds, the buckets that
 * list the triangles each cell of a uniform grid over the mesh's bounds meets (searched in
 * rings around a node), the stamps that visit a triangle listed in several cells once. */
typedef struct sdf_build {
    const pbfcl_collider_geometry *g;
    double *tri;   /* 9 doubles per triangle */
    double *box;   /* 6 per triangle: lo, hi */
    double orient; /* +1: the triangles face out (counter-clockwise from outside), -1: in */
    size_t nt;
    double lo[3], cell; /* the buckets' lower corner and cell edge */
    int dims[3];
    unsigned *start, *items; /* cells + 1 offsets into items (triangles) */
    unsigned *stamp, visit;  /* per triangle: the visit that last met it */
} sdf_build;

/* The bucket cell range [c0, c1] of box b (lo, hi), or of point p (b NULL), clamped. */
static void bucket_range(const sdf_build *b, const double *lo, const double *hi, int *c0, int *c1)
{
    for (int k = 0; k < 3; k++) {
        c0[k] = (int)fmin(fmax(floor((lo[k] - b->lo[k]) / b->cell), 0.0), b->dims[k] - 1.0);
        c1[k] = (int)fmin(fmax(floor((hi[k] - b->lo[k]) / b->cell), 0.0), b->dims[k] - 1.0);
    }
}

/* The buckets: about 2 cbrt(T) cells along the longest side, at most 64; each triangle in
 * every cell its box meets (a count pass, then a fill pass). */
static pbfcl_status buckets_build(sdf_build *b)
{
    const pbfcl_collider_geometry *g = b->g;
    double extent = 0.0;
    for (int k = 0; k < 3; k++)
        extent = fmax(extent, (double)g->hi[k] - g->lo[k]);
    double per = fmin(fmax(ceil(2.0 * cbrt((double)b->nt)), 1.0), 64.0);
    b->cell = extent > 0.0 ? extent / per * 1.0001 : 1.0;
    size_t cells = 1;
    for (int k = 0; k < 3; k++) {
        b->lo[k] = g->lo[k];
        b->dims[k] = (int)fmin(fmax(ceil(((double)g->hi[k] - g->lo[k]) / b->cell), 1.0), 64.0);
        cells *= (size_t)b->dims[k];
    }
    b->start = calloc(cells + 1, sizeof *b->start);
    b->stamp = calloc(b->nt + 1, sizeof *b->stamp);
    if (!b->start || !b->stamp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t t = 0; t < b->nt; t++) {
            int c0[3], c1[3];
            bucket_range(b, b->box + 6 * t, b->box + 6 * t + 3, c0, c1);
            for (int z = c0[2]; z <= c1[2]; z++)
                for (int y = c0[1]; y <= c1[1]; y++)
                    for (int x = c0[0]; x <= c1[0]; x++) {
                        size_t c = ((size_t)z * b->dims[1] + y) * b->dims[0] + x;
                        if (pass)
                            b->items[b->stamp[c]++] = (unsigned)t; /* stamp: a cursor here */
                        else
                            b->start[c + 1]++;
                    }
        }
        if (pass)
            break;
        for (size_t c = 0; c < cells; c++)
            b->start[c + 1] += b->start[c];
        free(b->stamp);
        b->stamp = malloc((cells > b->nt ? cells : b->nt) * sizeof *b->stamp + 4);
        b->items = malloc((size_t)b->start[cells] * sizeof *b->items + 4);
        if (!b->stamp || !b->items)
            return PBFCL_ERR_OUT_OF_MEMORY;
        memcpy(b->stamp, b->start, cells * sizeof *b->stamp);
    }
    memset(b->stamp, 0, (cells > b->nt ? cells : b->nt) * sizeof *b->stamp);
    b->visit = 0;
    return PBFCL_OK;
}

/* The squared distance from p to box b (lo, hi). */
static double box_distance2(const double *p, const double *b)
{
    double s = 0.0;
    for (int k = 0; k < 3; k++) {
        double e = fmax(fmax(b[k] - p[k], p[k] - b[3 + k]), 0.0);
        s += e * e;
    }
    return s;
}

/* The triangles of bucket cell c against p: the nearest so far in *best2, *best_t, bq. */
static void bucket_visit(sdf_build *b, size_t c, const double *p, double *best2, size_t *best_t,
                         double *bq)
{
    for (unsigned e = b->start[c]; e < b->start[c + 1]; e++) {
        unsigned t = b->items[e];
        if (b->stamp[t] == b->visit || box_distance2(p, b->box + 6 * t) >= *best2) {
            b->stamp[t] = b->visit;
            continue;
        }
        b->stamp[t] = b->visit;
        const double *v = b->tri + 9 * (size_t)t;
        double q[3], d2 = 0.0;
        closest_on_triangle(p, v, v + 3, v + 6, q);
        for (int k = 0; k < 3; k++)
            d2 += (p[k] - q[k]) * (p[k] - q[k]);
        if (d2 < *best2) {
            *best2 = d2;
            *best_t = t;
            memcpy(bq, q, 3 * sizeof *q);
        }
    }
}

/* The unsigned distance from p to the mesh and the unit vector from its closest point to p
 * (the outward normal of that triangle where p lies on it): the buckets in rings of cells
 * around p's (clamped) cell, until the next ring, at least (ring - 1) cells away, cannot hold
 * a nearer triangle. */
static double node_distance(sdf_build *b, const double *p, double *dir)
{
    double best2 = INFINITY, bq[3] = {0};
    size_t best_t = 0;
    if (++b->visit == 0) { /* the stamps wrapped: none is this visit's */
        memset(b->stamp, 0, b->nt * sizeof *b->stamp);
        b->visit = 1;
    }
    int c[3], unused[3];
    bucket_range(b, p, p, c, unused);
    int rings = b->dims[0] > b->dims[1] ? b->dims[0] : b->dims[1];
    rings = rings > b->dims[2] ? rings : b->dims[2];
    for (int r = 0; r <= rings; r++) {
        double bound = (r - 1) * b->cell;
        if (r > 1 && best2 <= bound * bound)
            break;
        for (int z = c[2] - r; z <= c[2] + r; z++)
            for (int y = c[1] - r; y <= c[1] + r; y++) {
                if (z < 0 || y < 0 || z >= b->dims[2] || y >= b->dims[1])
                    continue;
                bool face = abs(z - c[2]) == r || abs(y - c[1]) == r; /* else x = +-r only */
                for (int x = c[0] - r; x <= c[0] + r; x += face || r == 0 ? 1 : 2 * r)
                    if (x >= 0 && x < b->dims[0])
                        bucket_visit(b, ((size_t)z * b->dims[1] + y) * b->dims[0] + x, p, &best2,
                                     &best_t, bq);
            }
    }
    double d = sqrt(best2);
    if (d > 0.0) {
        for (int k = 0; k < 3; k++)
            dir[k] = (p[k] - bq[k]) / d;
        return d;
    }
    const double *v = b->tri + 9 * best_t; /* on the surface: the triangle's outward normal */
    double u[3], w[3];
    for (int k = 0; k < 3; k++) {
        u[k] = v[3 + k] - v[k];
        w[k] = v[6 + k] - v[k];
    }
    double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; k++)
        dir[k] = len > 0.0 ? b->orient * n[k] / len : (k == 1);
    return 0.0;
}

/* The node at index i along axis k. */
static double node_at(const pbfcl_collider_geometry *g, int k, unsigned i)
{
    return (double)g->grid_origin[k] + (double)g->cell * i;
}

/* One row of nodes (y index j, z index k): the crossings of the ray along +x from its start
 * with every triangle give each node's side (inside where the crossings beyond it sum to not
 * 0), then each node's distance and gradient. xs: room for a crossing per triangle. */
static void fill_row(sdf_build *b, const pbfcl_mesh_grid *mg, const int64_t (*snapped)[3][3],
                     unsigned j, unsigned k, double *xs, int *dirs)
{
    const pbfcl_collider_geometry *g = b->g;
    double p[3] = {node_at(g, 0, 0), node_at(g, 1, j), node_at(g, 2, k)};
    int64_t ps[3] = {0, pbfcl_mesh_snap(mg, 1, p[1]), pbfcl_mesh_snap(mg, 2, p[2])};
    size_t nx = 0;
    for (size_t t = 0; t < b->nt; t++) {
        const double *bx = b->box + 6 * t;
        if (p[1] < bx[1] - mg->step || p[1] > bx[4] + mg->step || p[2] < bx[2] - mg->step ||
            p[2] > bx[5] + mg->step)
            continue; /* the row's line misses its bounds (with a step to spare) */
        double x;
        int dir = pbfcl_mesh_ray_crossing(snapped[t], ps, &x);
        if (dir) {
            xs[nx] = mg->lo[0] + x * mg->step;
            dirs[nx++] = dir;
        }
    }
    for (unsigned i = 0; i < g->dims[0]; i++) {
        p[0] = node_at(g, 0, i);
        int wind = 0;
        for (size_t c = 0; c < nx; c++)
            wind += xs[c] > p[0] ? dirs[c] : 0;
        double dir[3], d = node_distance(b, p, dir), sign = wind != 0 ? -1.0 : 1.0;
        float *out = g->planes + 4 * (((size_t)k * g->dims[1] + j) * g->dims[0] + i);
        for (int a = 0; a < 3; a++)
            out[a] = (float)(sign * dir[a]);
        out[3] = (float)(sign * d);
    }
}

/* The grid: cells of the longest side over resolution, SDF_PAD more on every side, the
 * bounds' centre on a node. */
static pbfcl_status sdf_grid(pbfcl_collider_geometry *g, int resolution, const char *name)
{
    int res = resolution ? resolution : SDF_DEFAULT_RESOLUTION;
    if (res < 2 || res > PBFCL_COLLIDER_SDF_MAX_RESOLUTION) {
        pbfcl_errorf("%s: its SDF resolution is %d cells: give 2 to %d (0 for %d)", name, res,
                     PBFCL_COLLIDER_SDF_MAX_RESOLUTION, SDF_DEFAULT_RESOLUTION);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    double extent = 0.0;
    for (int k = 0; k < 3; k++)
        extent = fmax(extent, (double)g->hi[k] - g->lo[k]);
    g->cell = (float)(extent / res);
    size_t nodes = 1;
    for (int k = 0; k < 3; k++) {
        double centre = 0.5 * ((double)g->lo[k] + g->hi[k]);
        unsigned half = (unsigned)ceil(0.5 * ((double)g->hi[k] - g->lo[k]) / g->cell) + SDF_PAD;
        g->dims[k] = 2 * half + 1;
        g->grid_origin[k] = (float)(centre - (double)half * g->cell);
        nodes *= g->dims[k];
    }
    g->plane_count = nodes; /* the nodes live where a hull's planes do: one float4 each */
    g->planes = malloc(nodes * 4 * sizeof *g->planes);
    return g->planes ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
}

/* The triangles in double, their bounds and snapped corners, and the mesh's orientation. */
static pbfcl_status sdf_prepare(sdf_build *b, const pbfcl_mesh_grid *mg, int64_t (**snapped)[3][3])
{
    const pbfcl_collider_geometry *g = b->g;
    b->nt = g->tri_count;
    b->tri = malloc(b->nt * 9 * sizeof *b->tri);
    b->box = malloc(b->nt * 6 * sizeof *b->box);
    *snapped = malloc(b->nt * sizeof **snapped);
    if (!b->tri || !b->box || !*snapped)
        return PBFCL_ERR_OUT_OF_MEMORY;
    double volume = 0.0;
    for (size_t t = 0; t < b->nt; t++) {
        double *v = b->tri + 9 * t, *bx = b->box + 6 * t;
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                v[3 * j + k] = g->tris[12 * t + 4 * j + k];
                (*snapped)[t][j][k] = pbfcl_mesh_snap(mg, k, v[3 * j + k]);
            }
        for (int k = 0; k < 3; k++) {
            bx[k] = fmin(v[k], fmin(v[3 + k], v[6 + k]));
            bx[3 + k] = fmax(v[k], fmax(v[3 + k], v[6 + k]));
        }
        volume += v[0] * (v[4] * v[8] - v[5] * v[7]) - v[1] * (v[3] * v[8] - v[5] * v[6]) +
                  v[2] * (v[3] * v[7] - v[4] * v[6]);
    }
    b->orient = volume < 0.0 ? -1.0 : 1.0;
    return PBFCL_OK;
}

pbfcl_status pbfcl_collider_sdf(const float *v, size_t nv, const unsigned *tri, size_t nt,
                                int resolution, const char *name, pbfcl_collider_geometry *g)
{
    PBFCL_TRY(pbfcl_collider_mesh(v, nv, tri, nt, name, g)); /* the triangles, checked */
    g->type = PBFCL_COLLIDER_SDF;
    free(g->cell_start); /* the triangles' grid is a mesh shape's */
    free(g->cell_tris);
    g->cell_start = g->cell_tris = NULL;
    PBFCL_TRY(check_closed(tri, nt, name));
    PBFCL_TRY(sdf_grid(g, resolution, name));
    double extent = 0.0;
    for (int k = 0; k < 3; k++)
        extent = fmax(extent, (double)g->grid_origin[k] + (g->dims[k] - 1.0) * g->cell - g->lo[k]);
    pbfcl_mesh_grid mg = {{g->lo[0], g->lo[1], g->lo[2]}, extent / 67108864.0};
    sdf_build b = {.g = g};
    int64_t(*snapped)[3][3] = NULL;
    pbfcl_status st = sdf_prepare(&b, &mg, &snapped);
    if (st == PBFCL_OK)
        st = buckets_build(&b);
    double *xs = malloc(nt * sizeof *xs + 8);
    int *dirs = malloc(nt * sizeof *dirs + 4);
    if (st == PBFCL_OK && (!xs || !dirs))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    for (unsigned k = 0; st == PBFCL_OK && k < g->dims[2]; k++)
        for (unsigned j = 0; j < g->dims[1]; j++)
            fill_row(&b, &mg, (const int64_t(*)[3][3])snapped, j, k, xs, dirs);
    free(xs);
    free(dirs);
    free(snapped);
    free(b.tri);
    free(b.box);
    free(b.start);
    free(b.items);
    free(b.stamp);
    free(g->tris); /* the nodes hold all the kernels need */
    g->tris = NULL;
    g->tri_count = 0;
    return st;
}
