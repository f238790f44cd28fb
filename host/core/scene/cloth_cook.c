/* The cloth cooker (cloth_cook.h): meshes, grids and polylines into distance constraints. */
#include "scene/cloth_cook.h"

#include "runtime/pbfcl_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHI 1.6180339887498949f /* the golden ratio: an icosahedron's vertices */

/* One side of a triangle: its edge (lo < hi) and the vertex opposite it. */
typedef struct half_edge {
    unsigned lo, hi, opposite;
} half_edge;

static int half_edge_order(const void *a, const void *b)
{
    const half_edge *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return (x->opposite > y->opposite) - (x->opposite < y->opposite);
}

static float dist(const float *pos, unsigned a, unsigned b)
{
    float d[3] = {pos[3 * a] - pos[3 * b], pos[3 * a + 1] - pos[3 * b + 1],
                  pos[3 * a + 2] - pos[3 * b + 2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* Appends the constraint a-b at its present length (room was made). */
static void add(pbfcl_cloth_cook *c, unsigned a, unsigned b, float compliance, bool tether)
{
    size_t k = c->constraints++;
    c->pair[2 * k] = a;
    c->pair[2 * k + 1] = b;
    c->rest[k] = dist(c->pos, a, b);
    c->compliance[k] = compliance;
    c->tether[k] = tether;
}

/* Makes room for the particles (copied from pos) and up to most constraints. */
static pbfcl_status alloc_cook(pbfcl_cloth_cook *c, const float *pos, size_t n, size_t most)
{
    memset(c, 0, sizeof *c);
    c->particles = n;
    c->pos = malloc(3 * n * sizeof *c->pos + 1);
    c->pinned = calloc(n + 1, 1);
    c->pair = malloc(2 * most * sizeof *c->pair + 1);
    c->rest = malloc(most * sizeof *c->rest + 1);
    c->compliance = malloc(most * sizeof *c->compliance + 1);
    c->tether = malloc(most + 1);
    if (!c->pos || !c->pinned || !c->pair || !c->rest || !c->compliance || !c->tether) {
        pbfcl_cook_free(c);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    memcpy(c->pos, pos, 3 * n * sizeof *pos);
    return PBFCL_OK;
}

/* Checks triangle t of name; says which and the fix. */
static pbfcl_status check_triangle(const char *name, const float *pos, size_t nv, const unsigned *v,
                                   size_t t)
{
    if (v[0] >= nv || v[1] >= nv || v[2] >= nv) {
        pbfcl_errorf("cloth '%s': triangle %zu (%u, %u, %u) names a vertex beyond its %zu "
                     "vertices; give vertex indices below %zu",
                     name, t, v[0], v[1], v[2], nv, nv);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    float e1[3], e2[3], n[3];
    for (int a = 0; a < 3; a++) {
        e1[a] = pos[3 * v[1] + a] - pos[3 * v[0] + a];
        e2[a] = pos[3 * v[2] + a] - pos[3 * v[0] + a];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    float area2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    float scale = (e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]) *
                  (e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]);
    if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2] || !(area2 > 1e-12f * scale)) {
        pbfcl_errorf("cloth '%s': triangle %zu (%u, %u, %u) is degenerate (no area); remove it "
                     "or move its vertices apart",
                     name, t, v[0], v[1], v[2]);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* The edges (first of each group of equal half-edges) and bends (across the first two). */
static void cook_edges(pbfcl_cloth_cook *c, half_edge *h, size_t nh, float stretch, float bend)
{
    qsort(h, nh, sizeof *h, half_edge_order);
    for (size_t k = 0; k < nh; k++)
        if (k == 0 || h[k].lo != h[k - 1].lo || h[k].hi != h[k - 1].hi)
            add(c, h[k].lo, h[k].hi, stretch, false);
    c->edges = c->constraints;
    for (size_t k = 1; k < nh; k++) {
        bool pair = h[k].lo == h[k - 1].lo && h[k].hi == h[k - 1].hi;
        bool first = k < 2 || h[k - 2].lo != h[k].lo || h[k - 2].hi != h[k].hi;
        if (pair && first && h[k].opposite != h[k - 1].opposite)
            add(c, h[k - 1].opposite, h[k].opposite, bend, false);
    }
    c->bends = c->constraints - c->edges;
}

pbfcl_status pbfcl_cook_mesh(const char *name, const float *pos, size_t nv, const unsigned *tri,
                             size_t nt, float stretch, float bend, pbfcl_cloth_cook *out)
{
    for (size_t t = 0; t < nt; t++)
        PBFCL_TRY(check_triangle(name, pos, nv, tri + 3 * t, t));
    half_edge *h = malloc(3 * nt * sizeof *h + 1);
    pbfcl_status st = h ? alloc_cook(out, pos, nv, 6 * nt + nv) : PBFCL_ERR_OUT_OF_MEMORY;
    out->tri = st == PBFCL_OK ? malloc(3 * nt * sizeof *tri + 1) : NULL;
    if (st == PBFCL_OK && !out->tri) {
        pbfcl_cook_free(out);
        st = PBFCL_ERR_OUT_OF_MEMORY;
    }
    if (st != PBFCL_OK) {
        free(h);
        return st;
    }
    memcpy(out->tri, tri, 3 * nt * sizeof *tri);
    out->triangles = nt;
    for (size_t t = 0; t < nt; t++)
        for (int s = 0; s < 3; s++) {
            unsigned a = tri[3 * t + s], b = tri[3 * t + (s + 1) % 3], o = tri[3 * t + (s + 2) % 3];
            h[3 * t + s] = (half_edge){a < b ? a : b, a < b ? b : a, o};
        }
    cook_edges(out, h, 3 * nt, stretch, bend);
    free(h);
    return PBFCL_OK;
}

pbfcl_status pbfcl_cook_grid(const char *name, const float origin[3], const float u[3],
                             const float v[3], int nu, int nv, float stretch, float bend,
                             pbfcl_cloth_cook *out)
{
    if (nu < 2 || nv < 2) {
        pbfcl_errorf("cloth '%s': a grid of %d x %d particles; give it at least 2 x 2", name, nu,
                     nv);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    size_t n = (size_t)nu * nv, nt = 2 * (size_t)(nu - 1) * (nv - 1);
    float *pos = malloc(3 * n * sizeof *pos);
    unsigned *tri = malloc(3 * nt * sizeof *tri);
    pbfcl_status st = pos && tri ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (int j = 0; st == PBFCL_OK && j < nv; j++)
        for (int i = 0; i < nu; i++)
            for (int a = 0; a < 3; a++)
                pos[3 * ((size_t)j * nu + i) + a] = origin[a] + u[a] * (float)i / (float)(nu - 1) +
                                                    v[a] * (float)j / (float)(nv - 1);
    size_t t = 0;
    for (int j = 0; st == PBFCL_OK && j + 1 < nv; j++)
        for (int i = 0; i + 1 < nu; i++) {
            unsigned p = (unsigned)(j * nu + i), q = p + 1, r = p + (unsigned)nu, s = r + 1;
            unsigned cell[6] = {p, q, s, p, s, r};
            memcpy(tri + 3 * t, cell, sizeof cell);
            t += 2;
        }
    if (st == PBFCL_OK)
        st = pbfcl_cook_mesh(name, pos, n, tri, nt, stretch, bend, out);
    free(pos);
    free(tri);
    return st;
}

pbfcl_status pbfcl_cook_rope(const char *name, const float *points, size_t n, float stretch,
                             float bend, pbfcl_cloth_cook *out)
{
    if (n < 2) {
        pbfcl_errorf("rope '%s' has %zu points; give it at least 2", name, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t k = 0; k + 1 < n; k++)
        if (!(dist(points, (unsigned)k, (unsigned)k + 1) > 0.0f)) {
            pbfcl_errorf("rope '%s': points %zu and %zu are at one place; move them apart or "
                         "drop one",
                         name, k, k + 1);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    PBFCL_TRY(alloc_cook(out, points, n, 3 * n));
    for (size_t k = 0; k + 1 < n; k++)
        add(out, (unsigned)k, (unsigned)k + 1, stretch, false);
    out->edges = out->constraints;
    for (size_t k = 0; k + 2 < n; k++)
        add(out, (unsigned)k, (unsigned)k + 2, bend, false);
    out->bends = out->constraints - out->edges;
    return PBFCL_OK;
}

/* The root of i in the forest of parents (path halving). */
static size_t find_root(size_t *parent, size_t i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* anchor[i]: for a pinned particle, the lowest index of its anchor (the pinned particles
 * joined to it by edges); n otherwise. */
static void find_anchors(const pbfcl_cloth_cook *c, size_t *anchor)
{
    size_t n = c->particles;
    for (size_t i = 0; i < n; i++)
        anchor[i] = i;
    for (size_t e = 0; e < c->edges; e++) {
        size_t a = c->pair[2 * e], b = c->pair[2 * e + 1];
        if (c->pinned[a] && c->pinned[b]) {
            size_t ra = find_root(anchor, a), rb = find_root(anchor, b);
            anchor[ra > rb ? ra : rb] = ra > rb ? rb : ra;
        }
    }
    for (size_t i = 0; i < n; i++)
        anchor[i] = c->pinned[i] ? find_root(anchor, i) : n;
}

/* A pinned particle keyed by its coordinate along one axis (the k-d tree's build). */
typedef struct pin_key {
    float key;
    unsigned index;
} pin_key;

static int pin_key_order(const void *a, const void *b)
{
    const pin_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Orders pins[lo, hi) as an implicit k-d tree: the median m splits along axis[m] (the range's
 * widest), the halves below and above it recursively; keys is scratch. O(m log^2 m). */
static void kd_build(const float *pos, size_t *pins, unsigned char *axis, pin_key *keys, size_t lo,
                     size_t hi)
{
    if (hi - lo < 2) {
        if (hi > lo)
            axis[lo] = 0;
        return;
    }
    float min[3], max[3];
    for (int a = 0; a < 3; a++)
        min[a] = max[a] = pos[3 * pins[lo] + a];
    for (size_t k = lo + 1; k < hi; k++)
        for (int a = 0; a < 3; a++) {
            float x = pos[3 * pins[k] + a];
            min[a] = x < min[a] ? x : min[a];
            max[a] = x > max[a] ? x : max[a];
        }
    int ax = 0;
    for (int a = 1; a < 3; a++)
        if (max[a] - min[a] > max[ax] - min[ax])
            ax = a;
    for (size_t k = lo; k < hi; k++)
        keys[k] = (pin_key){pos[3 * pins[k] + ax], (unsigned)pins[k]};
    qsort(keys + lo, hi - lo, sizeof *keys, pin_key_order);
    for (size_t k = lo; k < hi; k++)
        pins[k] = keys[k].index;
    size_t m = lo + (hi - lo) / 2;
    axis[m] = (unsigned char)ax;
    kd_build(pos, pins, axis, keys, lo, m);
    kd_build(pos, pins, axis, keys, m + 1, hi);
}

/* A lower bound of the distance from q to every point of the box [lo, hi]: as dist() computes
 * it (the same operations in the same order on gaps no longer than any point's), so a point
 * of the box is never nearer than it. */
static float box_dist(const float *q, const float lo[3], const float hi[3])
{
    float d[3];
    for (int a = 0; a < 3; a++)
        d[a] = q[a] < lo[a] ? lo[a] - q[a] : q[a] > hi[a] ? q[a] - hi[a] : 0.0f;
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* The nearest of pins[lo, hi) (a k-d tree within the box [bmin, bmax]) to particle i into
 * *best at *best_d, the lower index among equally near ones (as a scan in index order finds).
 * A half is skipped only when its box lies beyond *best_d, so no particle at the same
 * distance is missed. */
static void kd_nearest(const float *pos, const size_t *pins, const unsigned char *axis, size_t lo,
                       size_t hi, const float bmin[3], const float bmax[3], size_t i, long *best,
                       float *best_d)
{
    const float *q = pos + 3 * i;
    if (lo >= hi || (*best >= 0 && box_dist(q, bmin, bmax) > *best_d))
        return;
    size_t m = lo + (hi - lo) / 2, p = pins[m];
    float d = dist(pos, (unsigned)i, (unsigned)p);
    if (*best < 0 || d < *best_d || (d == *best_d && (long)p < *best)) {
        *best = (long)p;
        *best_d = d;
    }
    int ax = axis[m];
    float split = pos[3 * p + ax], below_max[3], above_min[3];
    memcpy(below_max, bmax, sizeof below_max);
    memcpy(above_min, bmin, sizeof above_min);
    below_max[ax] = split;
    above_min[ax] = split;
    if (q[ax] < split) { /* the near half first */
        kd_nearest(pos, pins, axis, lo, m, bmin, below_max, i, best, best_d);
        kd_nearest(pos, pins, axis, m + 1, hi, above_min, bmax, i, best, best_d);
    } else {
        kd_nearest(pos, pins, axis, m + 1, hi, above_min, bmax, i, best, best_d);
        kd_nearest(pos, pins, axis, lo, m, bmin, below_max, i, best, best_d);
    }
}

/* Adds a tether from free particle i to the nearest particle of each anchor (room made): the
 * pinned particles of anchor r are pins[first[r], first[r + 1]), a k-d tree (kd_build) within
 * the box box[6 r .. 6 r + 6) (min, max). */
static void add_tethers(pbfcl_cloth_cook *c, size_t i, const size_t *pins,
                        const unsigned char *axis, const size_t *first, const float *box,
                        size_t nroots)
{
    for (size_t r = 0; r < nroots; r++) {
        long best = -1;
        float best_d = 0.0f;
        kd_nearest(c->pos, pins, axis, first[r], first[r + 1], box + 6 * r, box + 6 * r + 3, i,
                   &best, &best_d);
        add(c, (unsigned)i, (unsigned)best, 0.0f, true);
    }
}

/* The pinned particles grouped by anchor, in the order of the anchors' roots (their lowest
 * particles), each group a k-d tree: pins[first[r], first[r + 1]) for anchor r of *nroots,
 * within the box box[6 r .. 6 r + 6) (min, max). */
static pbfcl_status group_pins(const pbfcl_cloth_cook *c, const size_t *anchor, size_t *pins,
                               unsigned char *axis, size_t *first, float *box, size_t *nroots)
{
    size_t n = c->particles, *slot = malloc(n * sizeof *slot + 1);
    pin_key *keys = malloc(n * sizeof *keys + 1);
    if (!slot || !keys) {
        free(slot);
        free(keys);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    *nroots = 0;
    for (size_t p = 0; p < n; p++) /* slot[root]: the anchor's number, then its count */
        if (c->pinned[p] && anchor[p] == p)
            slot[p] = (*nroots)++;
    for (size_t r = 0; r <= *nroots; r++)
        first[r] = 0;
    for (size_t p = 0; p < n; p++)
        if (c->pinned[p])
            first[slot[anchor[p]] + 1]++;
    for (size_t r = 0; r < *nroots; r++)
        first[r + 1] += first[r];
    for (size_t r = 0; r < *nroots; r++)
        keys[r].index = (unsigned)first[r]; /* each anchor's next place */
    for (size_t p = 0; p < n; p++)
        if (c->pinned[p])
            pins[keys[slot[anchor[p]]].index++] = p;
    for (size_t r = 0; r < *nroots; r++) {
        for (int a = 0; a < 3; a++)
            box[6 * r + a] = box[6 * r + 3 + a] = c->pos[3 * pins[first[r]] + a];
        for (size_t k = first[r]; k < first[r + 1]; k++)
            for (int a = 0; a < 3; a++) {
                float x = c->pos[3 * pins[k] + a];
                box[6 * r + a] = x < box[6 * r + a] ? x : box[6 * r + a];
                box[6 * r + 3 + a] = x > box[6 * r + 3 + a] ? x : box[6 * r + 3 + a];
            }
        kd_build(c->pos, pins, axis, keys, first[r], first[r + 1]);
    }
    free(slot);
    free(keys);
    return PBFCL_OK;
}

/* Grows c's constraint arrays to hold more more constraints. */
static pbfcl_status grow(pbfcl_cloth_cook *c, size_t more)
{
    size_t m = c->constraints + more;
    unsigned *pair = realloc(c->pair, 2 * m * sizeof *pair + 1);
    if (pair)
        c->pair = pair;
    float *rest = pair ? realloc(c->rest, m * sizeof *rest + 1) : NULL;
    if (rest)
        c->rest = rest;
    float *comp = rest ? realloc(c->compliance, m * sizeof *comp + 1) : NULL;
    if (comp)
        c->compliance = comp;
    unsigned char *tet = comp ? realloc(c->tether, m + 1) : NULL;
    if (!tet)
        return PBFCL_ERR_OUT_OF_MEMORY;
    c->tether = tet;
    return PBFCL_OK;
}

pbfcl_status pbfcl_cook_pin(pbfcl_cloth_cook *c, const unsigned char *pinned, bool tethers)
{
    size_t n = c->particles, anchors = 0, npins = 0;
    memcpy(c->pinned, pinned, n);
    for (size_t p = 0; p < n; p++)
        npins += pinned[p] != 0;
    size_t *anchor = malloc(n * sizeof *anchor + 1), *pins = malloc(n * sizeof *pins + 1);
    size_t *first = malloc((n + 1) * sizeof *first);
    unsigned char *axis = malloc(n + 1);
    float *box = malloc(6 * npins * sizeof *box + 1); /* at most an anchor a pinned particle */
    pbfcl_status st = anchor && pins && first && axis && box ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && tethers && npins > 0) {
        find_anchors(c, anchor);
        st = group_pins(c, anchor, pins, axis, first, box, &anchors);
    }
    if (st == PBFCL_OK)
        st = grow(c, tethers ? (n - npins) * anchors : 0);
    for (size_t i = 0; st == PBFCL_OK && tethers && anchors > 0 && i < n; i++)
        if (!pinned[i])
            add_tethers(c, i, pins, axis, first, box, anchors);
    c->tethers = c->constraints - c->edges - c->bends;
    free(anchor);
    free(pins);
    free(first);
    free(axis);
    free(box);
    return st;
}

/* A directed edge a -> b of triangle t. */
typedef struct directed_edge {
    unsigned a, b;
    size_t t;
} directed_edge;

static int directed_order(const void *x, const void *y)
{
    const directed_edge *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return (p->t > q->t) - (p->t < q->t);
}

/* Whether the sorted edges e (ne) hold a -> b. */
static bool has_edge(const directed_edge *e, size_t ne, unsigned a, unsigned b)
{
    size_t lo = 0, hi = ne;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].a < a || (e[mid].a == a && e[mid].b < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ne && e[lo].a == a && e[lo].b == b;
}

pbfcl_status pbfcl_cook_check_closed(const char *name, const unsigned *tri, size_t nt)
{
    directed_edge *e = malloc(3 * nt * sizeof *e + 1);
    if (!e)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t t = 0; t < nt; t++)
        for (int s = 0; s < 3; s++)
            e[3 * t + s] = (directed_edge){tri[3 * t + s], tri[3 * t + (s + 1) % 3], t};
    qsort(e, 3 * nt, sizeof *e, directed_order);
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 1; st == PBFCL_OK && k < 3 * nt; k++) /* first the edges run twice */
        if (e[k].a == e[k - 1].a && e[k].b == e[k - 1].b) {
            pbfcl_errorf("%s: triangles %zu and %zu both run from vertex %u to %u: more than two "
                         "triangles meet at that edge (not manifold) or one of them faces the "
                         "other way; give every edge two triangles, wound the same way (each "
                         "counter-clockwise seen from outside)",
                         name, e[k - 1].t, e[k].t, e[k].a, e[k].b);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
    for (size_t k = 0; st == PBFCL_OK && k < 3 * nt; k++) /* then those with no partner */
        if (!has_edge(e, 3 * nt, e[k].b, e[k].a)) {
            pbfcl_errorf("%s: the edge from vertex %u to %u of triangle %zu has no triangle on "
                         "its other side: the mesh is open (or that neighbour faces the other "
                         "way); close it so that it encloses a volume",
                         name, e[k].a, e[k].b, e[k].t);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
    free(e);
    return st;
}

double pbfcl_cook_volume(const float *pos, const unsigned *tri, size_t nt)
{
    double v = 0.0, o[3] = {pos[3 * tri[0]], pos[3 * tri[0] + 1], pos[3 * tri[0] + 2]};
    for (size_t t = 0; t < nt; t++) {
        double x[3][3];
        for (int c = 0; c < 3; c++)
            for (int a = 0; a < 3; a++)
                x[c][a] = pos[3 * tri[3 * t + c] + a] - o[a];
        v += (x[0][0] * (x[1][1] * x[2][2] - x[1][2] * x[2][1]) -
              x[0][1] * (x[1][0] * x[2][2] - x[1][2] * x[2][0]) +
              x[0][2] * (x[1][0] * x[2][1] - x[1][1] * x[2][0])) /
             6.0;
    }
    return v;
}

pbfcl_status pbfcl_cook_inflatable(const char *name, const float *pos, size_t nv,
                                   const unsigned *tri, size_t nt, float stretch, float bend,
                                   pbfcl_cloth_cook *out)
{
    if (nt < 4) {
        pbfcl_errorf("inflatable '%s' has %zu triangles; a closed mesh has at least 4: give its "
                     "whole surface",
                     name, nt);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t t = 0; t < nt; t++)
        PBFCL_TRY(check_triangle(name, pos, nv, tri + 3 * t, t));
    char what[160];
    snprintf(what, sizeof what, "inflatable '%s'", name);
    PBFCL_TRY(pbfcl_cook_check_closed(what, tri, nt));
    double v = pbfcl_cook_volume(pos, tri, nt);
    if (!(v > 0.0)) {
        pbfcl_errorf("inflatable '%s' encloses a volume of %g m^3; %s", name, v,
                     v < 0.0 ? "its triangles wind clockwise seen from outside: reverse the "
                               "order of each triangle's vertices"
                             : "give it a mesh that encloses a volume");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_cook_mesh(name, pos, nv, tri, nt, stretch, bend, out));
    out->volume = (float)v;
    return PBFCL_OK;
}

/* One subdivision of the sphere's triangles (*nt of tri into 4 each, new vertices at the
 * edges' midpoints pushed onto the unit sphere, appended to pos from *nv); h is scratch of 3 *nt
 * half-edges, the arrays have room. */
static void subdivide(float *pos, size_t *nv, unsigned *tri, size_t *nt, half_edge *h)
{
    for (size_t t = 0; t < *nt; t++)
        for (int s = 0; s < 3; s++) {
            unsigned a = tri[3 * t + s], b = tri[3 * t + (s + 1) % 3];
            h[3 * t + s] = (half_edge){a < b ? a : b, a < b ? b : a, (unsigned)(3 * t + s)};
        }
    qsort(h, 3 * *nt, sizeof *h, half_edge_order);
    unsigned *mid = malloc(3 * *nt * sizeof *mid + 1); /* per (triangle, side): its midpoint */
    for (size_t k = 0; mid && k < 3 * *nt; k++) {
        if (k == 0 || h[k].lo != h[k - 1].lo || h[k].hi != h[k - 1].hi) {
            double m[3], len = 0.0;
            for (int a = 0; a < 3; a++) {
                m[a] = 0.5 * ((double)pos[3 * h[k].lo + a] + pos[3 * h[k].hi + a]);
                len += m[a] * m[a];
            }
            for (int a = 0; a < 3; a++)
                pos[3 * *nv + a] = (float)(m[a] / sqrt(len));
            (*nv)++;
        }
        mid[h[k].opposite] = (unsigned)(*nv - 1);
    }
    size_t n0 = *nt;
    for (size_t t = 0; mid && t < n0; t++) {
        unsigned a = tri[3 * t], b = tri[3 * t + 1], c = tri[3 * t + 2];
        unsigned ab = mid[3 * t], bc = mid[3 * t + 1], ca = mid[3 * t + 2];
        unsigned four[12] = {a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca};
        memcpy(tri + 3 * t, four, 3 * sizeof *tri);
        memcpy(tri + 3 * (n0 + 3 * t), four + 3, 9 * sizeof *tri);
    }
    *nt = 4 * n0;
    free(mid);
}

pbfcl_status pbfcl_cook_sphere(const char *name, const float center[3], float radius,
                               int subdivisions, float stretch, float bend, pbfcl_cloth_cook *out)
{
    if (subdivisions < 0 || subdivisions > PBFCL_COOK_MAX_SUBDIVISIONS || !(radius > 0.0f) ||
        isinf(radius)) {
        pbfcl_errorf("inflatable '%s': a sphere of radius %g m and %d subdivisions; give a "
                     "finite radius > 0 and 0 to %d subdivisions",
                     name, (double)radius, subdivisions, PBFCL_COOK_MAX_SUBDIVISIONS);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    static const float ico[12][3] = {{-1, PHI, 0}, {1, PHI, 0}, {-1, -PHI, 0}, {1, -PHI, 0},
                                     {0, -1, PHI}, {0, 1, PHI}, {0, -1, -PHI}, {0, 1, -PHI},
                                     {PHI, 0, -1}, {PHI, 0, 1}, {-PHI, 0, -1}, {-PHI, 0, 1}};
    static const unsigned faces[60] = {0, 11, 5, 0, 5,  1,  0,  1,  7,  0,  7, 10, 0, 10, 11,
                                       1, 5,  9, 5, 11, 4,  11, 10, 2,  10, 7, 6,  7, 1,  8,
                                       3, 9,  4, 3, 4,  2,  3,  2,  6,  3,  6, 8,  3, 8,  9,
                                       4, 9,  5, 2, 4,  11, 6,  2,  10, 8,  6, 7,  9, 8,  1};
    size_t most_t = 20, nv = 12, nt = 20;
    for (int s = 0; s < subdivisions; s++)
        most_t *= 4;
    size_t most_v = most_t / 2 + 2;
    float *pos = malloc(3 * most_v * sizeof *pos);
    unsigned *tri = malloc(3 * most_t * sizeof *tri);
    half_edge *h = malloc(3 * most_t * sizeof *h);
    pbfcl_status st = pos && tri && h ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t v = 0; st == PBFCL_OK && v < 12; v++) {
        double len = sqrt(1.0 + PHI * PHI);
        for (int a = 0; a < 3; a++)
            pos[3 * v + a] = (float)(ico[v][a] / len);
    }
    if (st == PBFCL_OK)
        memcpy(tri, faces, sizeof faces);
    for (int s = 0; st == PBFCL_OK && s < subdivisions; s++)
        subdivide(pos, &nv, tri, &nt, h);
    for (size_t v = 0; st == PBFCL_OK && v < nv; v++)
        for (int a = 0; a < 3; a++)
            pos[3 * v + a] = center[a] + radius * pos[3 * v + a];
    if (st == PBFCL_OK)
        st = pbfcl_cook_inflatable(name, pos, nv, tri, nt, stretch, bend, out);
    free(pos);
    free(tri);
    free(h);
    return st;
}

void pbfcl_cook_free(pbfcl_cloth_cook *c)
{
    free(c->pos);
    free(c->pinned);
    free(c->pair);
    free(c->rest);
    free(c->compliance);
    free(c->tether);
    free(c->tri);
    memset(c, 0, sizeof *c);
}
