/* The surfaces of a solver's particles (solver_mesh.h): its triangles as they are, and its
 * ropes found among the distance constraints (edges kept, bends and tethers left out) and
 * chained into polylines. */
#include "solver_mesh.h"
#include "runtime/pbfcl_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void pbfcl_solver_mesh_free(pbfcl_solver_mesh *m)
{
    free(m->tri);
    free(m->line_start);
    free(m->line_pts);
    free(m->vert);
    free(m->vert_of);
    memset(m, 0, sizeof *m);
}

/* Edges as lists per particle (compressed rows): particle p's are at start[p] .. start[p+1]. */
typedef struct adjacency {
    size_t *start;
    unsigned *other, *edge;
} adjacency;

static bool adjacency_build(adjacency *a, const unsigned *ends, size_t count, size_t n)
{
    a->start = calloc(n + 2, sizeof *a->start);
    a->other = malloc((2 * count + 1) * sizeof *a->other);
    a->edge = malloc((2 * count + 1) * sizeof *a->edge);
    if (!a->start || !a->other || !a->edge)
        return false;
    for (size_t e = 0; e < 2 * count; e++)
        a->start[ends[e] + 2]++;
    for (size_t p = 0; p < n; p++)
        a->start[p + 2] += a->start[p + 1];
    for (size_t e = 0; e < 2 * count; e++) {
        size_t at = a->start[ends[e] + 1]++;
        a->other[at] = ends[e ^ 1];
        a->edge[at] = (unsigned)(e / 2);
    }
    return true;
}

static void adjacency_free(adjacency *a)
{
    free(a->start);
    free(a->other);
    free(a->edge);
}

/* Is edge e (a, b of length r) a bend: joined through a particle q by two shorter edges? */
static bool is_bend(const adjacency *a, const float *len, unsigned p, unsigned q, float r)
{
    for (size_t i = a->start[p]; i < a->start[p + 1]; i++) {
        unsigned mid = a->other[i];
        if (len[a->edge[i]] >= r || mid == q)
            continue;
        for (size_t k = a->start[mid]; k < a->start[mid + 1]; k++)
            if (a->other[k] == q && len[a->edge[k]] < r)
                return true;
    }
    return false;
}

/* Walks from particle p along edge slot i (unvisited) until a particle whose degree is not 2 or
 * an edge already taken, appending the particles to m's current line. */
static void walk(pbfcl_solver_mesh *m, const adjacency *a, unsigned char *taken, unsigned p,
                 size_t i, size_t *npts)
{
    m->line_pts[(*npts)++] = p;
    for (;;) {
        taken[a->edge[i]] = 1;
        p = a->other[i];
        m->line_pts[(*npts)++] = p;
        if (a->start[p + 1] - a->start[p] != 2)
            return;
        size_t next = a->start[p];
        if (taken[a->edge[next]])
            next++;
        if (taken[a->edge[next]])
            return; /* a closed loop is back at its start */
        i = next;
    }
}

/* Chains the segments (pairs of particles) into polylines. */
static pbfcl_status chain(pbfcl_solver_mesh *m, const unsigned *seg, size_t count)
{
    adjacency a = {0};
    unsigned char *taken = calloc(count + 1, 1);
    m->line_start = malloc((count + 2) * sizeof *m->line_start);
    m->line_pts = malloc((2 * count + 1) * sizeof *m->line_pts);
    pbfcl_status st = PBFCL_ERR_OUT_OF_MEMORY;
    if (taken && m->line_start && m->line_pts && adjacency_build(&a, seg, count, m->n)) {
        size_t npts = 0;
        for (int pass = 0; pass < 2; pass++) /* from the ends first, then around loops */
            for (unsigned p = 0; p < m->n; p++) {
                size_t degree = a.start[p + 1] - a.start[p];
                if (degree == 0 || (pass == 0 && degree == 2))
                    continue;
                for (size_t i = a.start[p]; i < a.start[p + 1]; i++)
                    if (!taken[a.edge[i]]) {
                        m->line_start[m->line_count++] = npts;
                        walk(m, &a, taken, p, i, &npts);
                    }
            }
        m->line_start[m->line_count] = npts;
        st = PBFCL_OK;
    }
    adjacency_free(&a);
    free(taken);
    return st;
}

pbfcl_status pbfcl_solver_mesh_ropes(pbfcl_solver_mesh *m, const unsigned *pair, const float *rest,
                                     const unsigned char *tether, size_t count,
                                     const unsigned char *in_tri)
{
    unsigned *cand = malloc((2 * count + 1) * sizeof *cand), *seg = NULL;
    float *len = malloc((count + 1) * sizeof *len);
    size_t kept = 0, segs = 0;
    adjacency a = {0};
    pbfcl_status st = PBFCL_ERR_OUT_OF_MEMORY;
    if (cand && len) {
        for (size_t c = 0; c < count; c++) {
            unsigned p = pair[2 * c], q = pair[2 * c + 1];
            if ((tether && tether[c]) || p == q || p >= m->n || q >= m->n || in_tri[p] || in_tri[q])
                continue;
            cand[2 * kept] = p, cand[2 * kept + 1] = q;
            len[kept++] = rest[c];
        }
        seg = malloc((2 * kept + 1) * sizeof *seg);
    }
    if (seg && adjacency_build(&a, cand, kept, m->n)) {
        for (size_t e = 0; e < kept; e++)
            if (!is_bend(&a, len, cand[2 * e], cand[2 * e + 1], len[e])) {
                seg[2 * segs] = cand[2 * e];
                seg[2 * segs++ + 1] = cand[2 * e + 1];
            }
        st = chain(m, seg, segs);
    }
    adjacency_free(&a);
    free(cand);
    free(len);
    free(seg);
    return st;
}

/* The particles of the triangles and lines as the mesh's vertices. */
static pbfcl_status collect_vertices(pbfcl_solver_mesh *m, unsigned char *used)
{
    for (size_t l = 0; l < m->line_start[m->line_count]; l++)
        used[m->line_pts[l]] = 1;
    m->vert = malloc((m->n + 1) * sizeof *m->vert);
    m->vert_of = malloc((m->n + 1) * sizeof *m->vert_of);
    if (!m->vert || !m->vert_of)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t p = 0; p < m->n; p++) {
        m->vert_of[p] = used[p] ? (unsigned)m->vert_count : UINT32_MAX;
        if (used[p])
            m->vert[m->vert_count++] = (unsigned)p;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_mesh_read(pbfcl_solver_mesh *m, pbfcl_solver *s, size_t n)
{
    pbfcl_solver_mesh_free(m);
    m->n = n;
    size_t nd = 0;
    pbfcl_solver_params p;
    PBFCL_TRY(pbfcl_solver_get_params(s, NULL, &p));
    PBFCL_TRY(pbfcl_solver_triangle_count(s, &m->tri_count));
    /* distance constraints are PBF's: the library's read of an SPH solver's crashes */
    if (p.method == PBFCL_METHOD_PBF)
        PBFCL_TRY(pbfcl_solver_distance_count(s, &nd));
    m->tri = malloc((3 * m->tri_count + 1) * sizeof *m->tri);
    unsigned *pair = malloc((2 * nd + 1) * sizeof *pair);
    float *rest = malloc((nd + 1) * sizeof *rest);
    unsigned char *tether = malloc(nd + 1), *in_tri = calloc(n + 1, 1);
    pbfcl_status st =
        m->tri && pair && rest && tether && in_tri ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && m->tri_count)
        st = pbfcl_solver_get_triangles(s, m->tri, m->tri_count);
    if (st == PBFCL_OK && nd)
        st = pbfcl_solver_get_distances(s, pair, rest, NULL, tether, nd);
    for (size_t t = 0; st == PBFCL_OK && t < 3 * m->tri_count; t++)
        in_tri[m->tri[t]] = 1;
    if (st == PBFCL_OK)
        st = pbfcl_solver_mesh_ropes(m, pair, rest, tether, nd, in_tri);
    if (st == PBFCL_OK)
        st = collect_vertices(m, in_tri);
    free(pair);
    free(rest);
    free(tether);
    free(in_tri);
    if (st != PBFCL_OK)
        pbfcl_solver_mesh_free(m);
    return st;
}
