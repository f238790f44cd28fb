/* Mesh shapes sampled on the lattice row by row. Every lattice row along x is a line; the
 * triangles whose bounds reach the line are found by sweeping the slices (z) and, inside a
 * slice, the rows (y) over the triangles sorted by where their bounds begin. On each row, the
 * crossings of the line with those triangles (mesh_ray.c, the same exact test as the point
 * test's) are sorted by x, and a sweep from +x down gives each point its winding number; the
 * points within tol of one of the triangles are inside too. The answer is the point test's
 * (pbfcl_scene_mesh_inside) for every point, at a cost of O(rows x triangles per row). */
#include "scene/scene_mesh_rows.h"
#include "runtime/clock.h"
#include "scene/mesh_ray.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One triangle, ready for the rows: its corners (double and snapped), bounds, the range of
 * rows (b) and slices (c) its bounds reach, and its unit normal (0 if it has no area). */
typedef struct row_tri {
    double c[3][3], lo[3], hi[3], n[3];
    int64_t cs[3][3];
    long long b0, b1, c0, c1;
} row_tri;

/* A crossing of a row's line: its x in grid steps and which way the triangle faces. */
typedef struct row_cross {
    double x;
    int way;
} row_cross;

/* What the rows share: the scene, shape, lattice, grid, mask and working arrays. */
typedef struct row_fill {
    const pbfcl_scene *s;
    const pbfcl_fluid_shape *f;
    const pbfcl_lattice_frame *l;
    pbfcl_mesh_grid g;
    double extent; /* the shape's largest extent */
    pbfcl_mesh_mask *m;
    row_tri *tri;
    row_cross *cross;
} row_fill;

/* A triangle's index and the first row or slice its bounds reach, for sorting. */
typedef struct row_key {
    long long first;
    int t;
} row_key;

static int by_first(const void *a, const void *b)
{
    const row_key *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

static int by_x_descending(const void *a, const void *b)
{
    const row_cross *x = a, *y = b;
    return (x->x < y->x) - (x->x > y->x);
}

static void set_bit(pbfcl_mesh_mask *m, long long i)
{
    m->bits[i >> 3] |= (unsigned char)(1u << (i & 7));
}

/* Prepares triangle t of the shape: the rows and slices are those within e of its bounds,
 * widened by one (the exact tests decide). */
static void prepare(const row_fill *r, int t, double e, row_tri *out)
{
    const pbfcl_lattice_frame *l = r->l;
    double u[3], v[3], len = 0.0;
    for (int j = 0; j < 3; j++) {
        pbfcl_mesh_corner(r->s, t, j, out->c[j]);
        for (int k = 0; k < 3; k++)
            out->cs[j][k] = pbfcl_mesh_snap(&r->g, k, out->c[j][k]);
    }
    for (int k = 0; k < 3; k++) {
        out->lo[k] = fmin(out->c[0][k], fmin(out->c[1][k], out->c[2][k]));
        out->hi[k] = fmax(out->c[0][k], fmax(out->c[1][k], out->c[2][k]));
        u[k] = out->c[1][k] - out->c[0][k];
        v[k] = out->c[2][k] - out->c[0][k];
    }
    for (int k = 0; k < 3; k++) {
        out->n[k] = u[(k + 1) % 3] * v[(k + 2) % 3] - u[(k + 2) % 3] * v[(k + 1) % 3];
        len += out->n[k] * out->n[k];
    }
    len = sqrt(len);
    for (int k = 0; k < 3; k++)
        out->n[k] = len > 0.0 ? out->n[k] / len : 0.0;
    out->b0 = (long long)floor((out->lo[1] - e - l->origin[1]) / l->spacing) - 1;
    out->b1 = (long long)ceil((out->hi[1] + e - l->origin[1]) / l->spacing) + 1;
    out->c0 = (long long)floor((out->lo[2] - e - l->origin[2]) / l->spacing) - 1;
    out->c1 = (long long)ceil((out->hi[2] + e - l->origin[2]) / l->spacing) + 1;
}

/* The x range of the row (y, z) where a point can lie within tol of triangle t: inside its
 * bounds widened by tol and, if it has a normal, within twice tol of its plane. */
static bool near_range(const row_fill *r, const row_tri *t, const double p[3], double *x0,
                       double *x1)
{
    double tol = r->l->tol, slab = 2.0 * tol + 1e-9 * r->extent;
    *x0 = t->lo[0] - tol;
    *x1 = t->hi[0] + tol;
    double off = t->n[1] * (p[1] - t->c[0][1]) + t->n[2] * (p[2] - t->c[0][2]);
    if (fabs(t->n[0]) < 1e-12) /* the row runs along the plane (or no plane) */
        return t->n[0] == 0.0 && t->n[1] == 0.0 && t->n[2] == 0.0 ? true : fabs(off) <= slab;
    double a = t->c[0][0] + (-slab - off) / t->n[0], b = t->c[0][0] + (slab - off) / t->n[0];
    *x0 = fmax(*x0, fmin(a, b));
    *x1 = fmin(*x1, fmax(a, b));
    return *x0 <= *x1;
}

/* Whether p lies within the shape's bounds widened by tol (the point test's first check). */
static bool in_bounds(const row_fill *r, const double p[3])
{
    double tol = r->l->tol;
    for (int k = 0; k < 3; k++)
        if (p[k] < r->f->min[k] - tol || p[k] > r->f->max[k] + tol)
            return false;
    return true;
}

/* Marks the points of the row (b, c) at row offset `row` within tol of triangle t. */
static void mark_near(const row_fill *r, const row_tri *t, double p[3], long long row)
{
    const pbfcl_lattice_frame *l = r->l;
    const pbfcl_mesh_mask *m = r->m;
    double tol = l->tol, x0, x1;
    for (int k = 1; k < 3; k++)
        if (p[k] < t->lo[k] - tol || p[k] > t->hi[k] + tol)
            return;
    if (!near_range(r, t, p, &x0, &x1))
        return;
    long long a0 = (long long)floor((x0 - l->origin[0]) / l->spacing) - 1;
    long long a1 = (long long)ceil((x1 - l->origin[0]) / l->spacing) + 1;
    a0 = a0 > m->lo[0] ? a0 : m->lo[0];
    a1 = a1 < m->lo[0] + m->n[0] - 1 ? a1 : m->lo[0] + m->n[0] - 1;
    for (long long a = a0; a <= a1; a++) {
        p[0] = l->origin[0] + l->spacing * a;
        if (p[0] >= t->lo[0] - tol && p[0] <= t->hi[0] + tol && in_bounds(r, p) &&
            pbfcl_mesh_distance2(p, t->c[0], t->c[1], t->c[2]) <= tol * tol)
            set_bit(r->m, row + (a - m->lo[0]));
    }
}

/* Fills the row (b, c) from its triangles act[0..n): the points near one of them, then the
 * points about which the crossings beyond them wind. */
static void fill_row(const row_fill *r, long long b, long long c, const int *act, int n)
{
    const pbfcl_lattice_frame *l = r->l;
    const pbfcl_mesh_mask *m = r->m;
    double p[3] = {0.0, l->origin[1] + l->spacing * b, l->origin[2] + l->spacing * c};
    double margin = 2.0 * r->g.step;
    long long row = ((c - m->lo[2]) * m->n[1] + (b - m->lo[1])) * m->n[0];
    int64_t ps[3] = {0, pbfcl_mesh_snap(&r->g, 1, p[1]), pbfcl_mesh_snap(&r->g, 2, p[2])};
    int crossings = 0;
    for (int i = 0; i < n; i++) {
        const row_tri *t = &r->tri[act[i]];
        mark_near(r, t, p, row);
        if (p[1] < t->lo[1] - margin || p[1] > t->hi[1] + margin || p[2] < t->lo[2] - margin ||
            p[2] > t->hi[2] + margin)
            continue;
        double x;
        int way = pbfcl_mesh_ray_crossing((const int64_t(*)[3])t->cs, ps, &x);
        if (way != 0)
            r->cross[crossings++] = (row_cross){x, way};
    }
    qsort(r->cross, (size_t)crossings, sizeof *r->cross, by_x_descending);
    int winding = 0, j = 0;
    for (long long a = m->lo[0] + m->n[0] - 1; a >= m->lo[0]; a--) {
        p[0] = l->origin[0] + l->spacing * a;
        double xs = (double)pbfcl_mesh_snap(&r->g, 0, p[0]);
        while (j < crossings && r->cross[j].x > xs)
            winding += r->cross[j++].way;
        if (winding != 0 && in_bounds(r, p))
            set_bit(r->m, row + (a - m->lo[0]));
    }
}

/* Progress of a long fill: a line after a second, then one a second at most. */
typedef struct row_progress {
    const char *what;
    int triangles;
    double start, last;
} row_progress;

static void report(row_progress *p, const pbfcl_mesh_mask *m, long long slices_done)
{
    double now = pbfcl_wall_seconds();
    if (now - p->start < 1.0 || now - p->last < 1.0)
        return;
    p->last = now;
    pbfcl_infof("setting up: %s's mesh (%d triangles) sampled on %lld x %lld lattice rows: "
                "%.0f%% after %.0f s",
                p->what ? p->what : "mesh", p->triangles, m->n[1], m->n[2],
                100.0 * (double)slices_done / (double)m->n[2], now - p->start);
}

/* Removes from act[0..*n) the triangles whose rows (slices if slices) end before index i. */
static void drop_ended(const row_tri *tri, int *act, int *n, long long i, bool slices)
{
    int kept = 0;
    for (int j = 0; j < *n; j++)
        if ((slices ? tri[act[j]].c1 : tri[act[j]].b1) >= i)
            act[kept++] = act[j];
    *n = kept;
}

/* Fills slice c from its triangles zact[0..nz): the rows of the slice, each with the
 * triangles whose rows reach it (ys and yact: room for nz). */
static void fill_slice(const row_fill *r, long long c, const int *zact, int nz, row_key *ys,
                       int *yact)
{
    const pbfcl_mesh_mask *m = r->m;
    for (int i = 0; i < nz; i++)
        ys[i] = (row_key){r->tri[zact[i]].b0, zact[i]};
    qsort(ys, (size_t)nz, sizeof *ys, by_first);
    int iy = 0, ny = 0;
    for (long long b = m->lo[1]; b < m->lo[1] + m->n[1]; b++) {
        if (ny == 0 && iy == nz)
            break;
        if (ny == 0 && ys[iy].first > b)
            b = ys[iy].first < m->lo[1] + m->n[1] ? ys[iy].first : m->lo[1] + m->n[1] - 1;
        while (iy < nz && ys[iy].first <= b)
            yact[ny++] = ys[iy++].t;
        drop_ended(r->tri, yact, &ny, b, false);
        if (ny > 0)
            fill_row(r, b, c, yact, ny);
    }
}

/* Sweeps the slices over the triangles sorted by their first slice (keys, t of them). */
static void sweep(const row_fill *r, const row_key *keys, int t, int *zact, row_key *ys, int *yact,
                  row_progress *progress)
{
    const pbfcl_mesh_mask *m = r->m;
    int iz = 0, nz = 0;
    for (long long c = m->lo[2]; c < m->lo[2] + m->n[2]; c++) {
        while (iz < t && keys[iz].first <= c)
            zact[nz++] = keys[iz++].t;
        drop_ended(r->tri, zact, &nz, c, true);
        if (nz > 0)
            fill_slice(r, c, zact, nz, ys, yact);
        report(progress, m, c - m->lo[2] + 1);
    }
}

pbfcl_status pbfcl_mesh_mask_build(const pbfcl_scene *s, const pbfcl_fluid_shape *f,
                                   const char *what, const pbfcl_lattice_frame *l,
                                   const long long lo[3], const long long hi[3], pbfcl_mesh_mask *m)
{
    memset(m, 0, sizeof *m);
    size_t points = 1;
    for (int k = 0; k < 3; k++) {
        m->lo[k] = lo[k];
        m->n[k] = hi[k] >= lo[k] ? hi[k] - lo[k] + 1 : 0;
        points *= (size_t)m->n[k];
    }
    int t = f->mesh_count;
    row_fill r = {s, f, l, pbfcl_mesh_grid_of(f, l->tol), 0.0, m, NULL, NULL};
    r.extent = r.g.step * 67108864.0;
    r.tri = malloc((size_t)(t ? t : 1) * sizeof *r.tri);
    r.cross = malloc((size_t)(t ? t : 1) * sizeof *r.cross);
    row_key *keys = malloc((size_t)(t ? t : 1) * sizeof *keys);
    row_key *ys = malloc((size_t)(t ? t : 1) * sizeof *ys);
    int *act = malloc(2 * (size_t)(t ? t : 1) * sizeof *act);
    m->bits = calloc(points / 8 + 1, 1);
    pbfcl_status st = PBFCL_OK;
    if (!r.tri || !r.cross || !keys || !ys || !act || !m->bits) {
        pbfcl_mesh_mask_free(m);
        st = PBFCL_ERR_OUT_OF_MEMORY;
    } else {
        double e = fmax(l->tol, 2.0 * r.g.step);
        for (int i = 0; i < t; i++) {
            prepare(&r, f->mesh_first + i, e, &r.tri[i]);
            keys[i] = (row_key){r.tri[i].c0, i};
        }
        qsort(keys, (size_t)t, sizeof *keys, by_first);
        double now = pbfcl_wall_seconds();
        row_progress progress = {what, t, now, now};
        sweep(&r, keys, t, act, ys, act + t, &progress);
    }
    free(r.tri);
    free(r.cross);
    free(keys);
    free(ys);
    free(act);
    return st;
}

bool pbfcl_mesh_mask_holds(const pbfcl_mesh_mask *m, long long a, long long b, long long c)
{
    a -= m->lo[0];
    b -= m->lo[1];
    c -= m->lo[2];
    if (a < 0 || b < 0 || c < 0 || a >= m->n[0] || b >= m->n[1] || c >= m->n[2])
        return false;
    long long i = (c * m->n[1] + b) * m->n[0] + a;
    return (m->bits[i >> 3] >> (i & 7)) & 1;
}

void pbfcl_mesh_mask_free(pbfcl_mesh_mask *m)
{
    free(m->bits);
    memset(m, 0, sizeof *m);
}
