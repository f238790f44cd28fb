/* Tearing of cloth (cloth_tear.h): the strained edges, the split of a vertex and the edges and
 * bends made anew around it from the triangles, as the cloth cooker makes them. */
#include "scene/cloth_tear.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct upair {
    unsigned lo, hi;
} upair;

/* A removed constraint: its pair and values, for the ones made anew. */
typedef struct kept {
    upair key;
    float rest, compliance;
} kept;

/* One side of a triangle: its edge (lo < hi) and the vertex opposite it. */
typedef struct half {
    unsigned lo, hi, opp;
} half;

/* The triangles of each vertex: list[first[v] .. first[v + 1]). */
typedef struct adjacency {
    unsigned *first, *list;
} adjacency;

typedef struct candidate {
    unsigned a, b;
    float strain;
} candidate;

static upair make_pair(unsigned a, unsigned b)
{
    return a < b ? (upair){a, b} : (upair){b, a};
}

static int upair_order(const void *x, const void *y)
{
    const upair *p = x, *q = y;
    if (p->lo != q->lo)
        return p->lo < q->lo ? -1 : 1;
    return (p->hi > q->hi) - (p->hi < q->hi);
}

static int kept_order(const void *x, const void *y)
{
    return upair_order(&((const kept *)x)->key, &((const kept *)y)->key);
}

static int half_order(const void *x, const void *y)
{
    const half *p = x, *q = y;
    if (p->lo != q->lo)
        return p->lo < q->lo ? -1 : 1;
    if (p->hi != q->hi)
        return p->hi < q->hi ? -1 : 1;
    return (p->opp > q->opp) - (p->opp < q->opp);
}

static int candidate_order(const void *x, const void *y) /* the most strained first */
{
    float p = ((const candidate *)x)->strain, q = ((const candidate *)y)->strain;
    return (p < q) - (p > q);
}

static void adjacency_free(adjacency *a)
{
    free(a->first);
    free(a->list);
    a->first = a->list = NULL;
}

static pbfcl_status adjacency_make(const pbfcl_tear_mesh *m, adjacency *a)
{
    size_t n = m->particles, nt = m->triangles;
    a->first = calloc(n + 2, sizeof *a->first);
    a->list = malloc(3 * nt * sizeof *a->list + 1);
    if (!a->first || !a->list) {
        adjacency_free(a);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (size_t k = 0; k < 3 * nt; k++)
        a->first[m->tri[k] + 2]++;
    for (size_t v = 0; v < n; v++)
        a->first[v + 2] += a->first[v + 1];
    for (size_t k = 0; k < 3 * nt; k++) /* first[v + 1] counts v's triangles placed so far */
        a->list[a->first[m->tri[k] + 1]++] = (unsigned)(k / 3);
    return PBFCL_OK;
}

static bool has_vertex(const unsigned *t, unsigned v)
{
    return t[0] == v || t[1] == v || t[2] == v;
}

static bool shares_triangle(const pbfcl_tear_mesh *m, const adjacency *a, unsigned p, unsigned q)
{
    for (unsigned k = a->first[p]; k < a->first[p + 1]; k++)
        if (has_vertex(m->tri + 3 * a->list[k], q))
            return true;
    return false;
}

/* The edges and bends (sorted, each once) of the triangles ts[0 .. nt), as the cooker makes
 * them: every edge, and across each edge the first two triangles share, their opposite
 * vertices. */
static pbfcl_status derived_pairs(const pbfcl_tear_mesh *m, const unsigned *ts, size_t nt,
                                  upair **out, size_t *count)
{
    half *h = malloc(3 * nt * sizeof *h + 1);
    upair *p = malloc(6 * nt * sizeof *p + 1);
    if (!h || !p) {
        free(h);
        free(p);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (size_t t = 0; t < nt; t++)
        for (int s = 0; s < 3; s++) {
            const unsigned *v = m->tri + 3 * (size_t)ts[t];
            upair e = make_pair(v[s], v[(s + 1) % 3]);
            h[3 * t + s] = (half){e.lo, e.hi, v[(s + 2) % 3]};
        }
    qsort(h, 3 * nt, sizeof *h, half_order);
    size_t c = 0;
    for (size_t k = 0; k < 3 * nt; k++) {
        bool same = k > 0 && h[k].lo == h[k - 1].lo && h[k].hi == h[k - 1].hi;
        if (!same)
            p[c++] = (upair){h[k].lo, h[k].hi};
        bool first = k < 2 || h[k - 2].lo != h[k].lo || h[k - 2].hi != h[k].hi;
        if (same && first && h[k].opp != h[k - 1].opp)
            p[c++] = make_pair(h[k - 1].opp, h[k].opp);
    }
    qsort(p, c, sizeof *p, upair_order);
    size_t u = 0;
    for (size_t k = 0; k < c; k++)
        if (u == 0 || upair_order(&p[k], &p[u - 1]) != 0)
            p[u++] = p[k];
    free(h);
    *out = p;
    *count = u;
    return PBFCL_OK;
}

/* Room for one more particle and extra more constraints. */
static pbfcl_status grow(pbfcl_tear_mesh *m, size_t extra)
{
    size_t n = m->particles + 1, c = m->constraints + extra;
#define GROW(field, count)                                                                         \
    do {                                                                                           \
        void *p_ = realloc(m->field, (count) * sizeof *m->field + 1);                              \
        if (!p_)                                                                                   \
            return PBFCL_ERR_OUT_OF_MEMORY;                                                        \
        m->field = p_;                                                                             \
    } while (0)
    GROW(pos, 3 * n);
    GROW(inv_mass, n);
    GROW(max_strain, n);
    GROW(source, n);
    GROW(pair, 2 * c);
    GROW(rest, c);
    GROW(compliance, c);
    GROW(tether, c);
#undef GROW
    return PBFCL_OK;
}

/* The triangles with a vertex in the closed ring of v (v and the vertices of its triangles):
 * every triangle whose edges or bends a split of v may change. */
static pbfcl_status local_triangles(const pbfcl_tear_mesh *m, const adjacency *a, unsigned v,
                                    unsigned **out, size_t *count)
{
    unsigned char *mark = calloc(m->triangles + 1, 1);
    unsigned *ts = malloc(m->triangles * sizeof *ts + 1);
    if (!mark || !ts) {
        free(mark);
        free(ts);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    size_t c = 0;
    for (unsigned k = a->first[v]; k < a->first[v + 1]; k++)
        for (int s = 0; s < 3; s++) {
            unsigned r = m->tri[3 * a->list[k] + s];
            for (unsigned j = a->first[r]; j < a->first[r + 1]; j++)
                if (!mark[a->list[j]]) {
                    mark[a->list[j]] = 1;
                    ts[c++] = a->list[j];
                }
        }
    free(mark);
    *out = ts;
    *count = c;
    return PBFCL_OK;
}

/* Removes the constraints (tethers kept) whose pairs are in set (sorted, count), remembering
 * them sorted into *out. */
static pbfcl_status remove_pairs(pbfcl_tear_mesh *m, const upair *set, size_t count, kept **out,
                                 size_t *removed)
{
    kept *k = malloc(m->constraints * sizeof *k + 1);
    if (!k)
        return PBFCL_ERR_OUT_OF_MEMORY;
    size_t r = 0, w = 0;
    for (size_t c = 0; c < m->constraints; c++) {
        upair p = make_pair(m->pair[2 * c], m->pair[2 * c + 1]);
        if (!m->tether[c] && bsearch(&p, set, count, sizeof *set, upair_order)) {
            k[r++] = (kept){p, m->rest[c], m->compliance[c]};
            continue;
        }
        m->pair[2 * w] = m->pair[2 * c];
        m->pair[2 * w + 1] = m->pair[2 * c + 1];
        m->rest[w] = m->rest[c];
        m->compliance[w] = m->compliance[c];
        m->tether[w++] = m->tether[c];
    }
    m->constraints = w;
    qsort(k, r, sizeof *k, kept_order);
    *out = k;
    *removed = r;
    return PBFCL_OK;
}

/* Adds the constraints of pairs (count) whose pair with u read as v was removed (kept). */
static void remake(pbfcl_tear_mesh *m, const upair *pairs, size_t count, const kept *k,
                   size_t removed, unsigned v, unsigned u)
{
    for (size_t i = 0; i < count; i++) {
        kept key = {
            make_pair(pairs[i].lo == u ? v : pairs[i].lo, pairs[i].hi == u ? v : pairs[i].hi), 0.0f,
            0.0f};
        const kept *found = bsearch(&key, k, removed, sizeof *k, kept_order);
        if (!found)
            continue; /* the cloth had no such constraint (e.g. no bends) */
        size_t c = m->constraints++;
        m->pair[2 * c] = pairs[i].lo;
        m->pair[2 * c + 1] = pairs[i].hi;
        m->rest[c] = found->rest;
        m->compliance[c] = found->compliance;
        m->tether[c] = 0;
    }
}

/* Whether v's triangle t lies beyond the plane through v across the edge to o. */
static bool beyond(const pbfcl_tear_mesh *m, unsigned t, unsigned v, unsigned o)
{
    double d = 0.0;
    for (int k = 0; k < 3; k++) {
        double c = (m->pos[3 * m->tri[3 * t] + k] + m->pos[3 * m->tri[3 * t + 1] + k] +
                    m->pos[3 * m->tri[3 * t + 2] + k]) /
                       3.0 -
                   m->pos[3 * v + k];
        d += c * ((double)m->pos[3 * o + k] - m->pos[3 * v + k]);
    }
    return d > 0.0;
}

/* Splits v along the plane through it across its edge to o: a new particle u takes the
 * triangles beyond it, and the edges and bends of the triangles around are made anew; *done
 * false (nothing changed) if all of v's triangles lie on one side. */
static pbfcl_status split(pbfcl_tear_mesh *m, const adjacency *a, unsigned v, unsigned o,
                          bool *done)
{
    unsigned moving = 0, all = a->first[v + 1] - a->first[v];
    for (unsigned k = a->first[v]; k < a->first[v + 1]; k++)
        moving += beyond(m, a->list[k], v, o);
    *done = moving > 0 && moving < all;
    if (!*done)
        return PBFCL_OK;
    unsigned *ts = NULL;
    upair *before = NULL, *after = NULL;
    kept *k = NULL;
    size_t nt = 0, nb = 0, na = 0, removed = 0;
    pbfcl_status st = local_triangles(m, a, v, &ts, &nt);
    if (st == PBFCL_OK)
        st = derived_pairs(m, ts, nt, &before, &nb);
    if (st == PBFCL_OK)
        st = remove_pairs(m, before, nb, &k, &removed);
    if (st == PBFCL_OK)
        st = grow(m, 6 * nt);
    if (st == PBFCL_OK) {
        unsigned u = (unsigned)m->particles++;
        memcpy(m->pos + 3 * u, m->pos + 3 * v, 3 * sizeof *m->pos);
        m->inv_mass[v] *= 2.0f; /* the mass shared between the two */
        m->inv_mass[u] = m->inv_mass[v];
        m->max_strain[u] = m->max_strain[v];
        m->source[u] = m->source[v];
        for (unsigned j = a->first[v]; j < a->first[v + 1]; j++) {
            unsigned *t = m->tri + 3 * (size_t)a->list[j];
            if (beyond(m, a->list[j], v, o))
                for (int s = 0; s < 3; s++)
                    t[s] = t[s] == v ? u : t[s];
        }
        st = derived_pairs(m, ts, nt, &after, &na);
        if (st == PBFCL_OK)
            remake(m, after, na, k, removed, v, u);
    }
    free(ts);
    free(before);
    free(after);
    free(k);
    return st;
}

/* The edges strained beyond their limit, the most strained first. */
static pbfcl_status strained(const pbfcl_tear_mesh *m, const adjacency *a, candidate **out,
                             size_t *count)
{
    candidate *c = malloc(m->constraints * sizeof *c + 1);
    if (!c)
        return PBFCL_ERR_OUT_OF_MEMORY;
    size_t k = 0;
    for (size_t i = 0; i < m->constraints; i++) {
        unsigned p = m->pair[2 * i], q = m->pair[2 * i + 1];
        float limit = fmaxf(m->max_strain[p], m->max_strain[q]);
        if (m->tether[i] || !(limit > 0.0f) || !(m->rest[i] > 0.0f))
            continue;
        double d = 0.0;
        for (int s = 0; s < 3; s++)
            d += ((double)m->pos[3 * p + s] - m->pos[3 * q + s]) *
                 ((double)m->pos[3 * p + s] - m->pos[3 * q + s]);
        float strain = (float)(sqrt(d) / m->rest[i] - 1.0);
        if (strain > limit && shares_triangle(m, a, p, q))
            c[k++] = (candidate){p, q, strain};
    }
    qsort(c, k, sizeof *c, candidate_order);
    *out = c;
    *count = k;
    return PBFCL_OK;
}

pbfcl_status pbfcl_cloth_tear(pbfcl_tear_mesh *m, size_t max_splits, size_t *splits)
{
    *splits = 0;
    adjacency a = {0};
    candidate *c = NULL;
    size_t count = 0;
    pbfcl_status st = adjacency_make(m, &a);
    if (st == PBFCL_OK)
        st = strained(m, &a, &c, &count);
    for (size_t i = 0; st == PBFCL_OK && i < count && *splits < max_splits; i++) {
        unsigned p = c[i].a, q = c[i].b;
        if (!shares_triangle(m, &a, p, q))
            continue; /* an earlier split cut it */
        unsigned np = a.first[p + 1] - a.first[p], nq = a.first[q + 1] - a.first[q];
        unsigned order[2] = {np >= nq ? p : q, np >= nq ? q : p};
        bool done = false;
        for (int s = 0; s < 2 && !done && st == PBFCL_OK; s++)
            if (m->inv_mass[order[s]] > 0.0f)
                st = split(m, &a, order[s], order[1 - s], &done);
        if (st == PBFCL_OK && done) {
            ++*splits;
            adjacency_free(&a);
            st = adjacency_make(m, &a);
        }
    }
    adjacency_free(&a);
    free(c);
    return st;
}

void pbfcl_tear_mesh_free(pbfcl_tear_mesh *m)
{
    free(m->pos);
    free(m->inv_mass);
    free(m->max_strain);
    free(m->source);
    free(m->tri);
    free(m->pair);
    free(m->rest);
    free(m->compliance);
    free(m->tether);
    memset(m, 0, sizeof *m);
}
