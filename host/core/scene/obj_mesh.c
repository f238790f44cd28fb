/* A small Wavefront OBJ reader: "v x y z" and "f a b c ..." statements (the other statements,
 * such as vt, vn, o, g, s, usemtl and mtllib, are ignored), and the closed-surface and volume
 * checks of the mesh read. Every error names the file and the line. */
#include "scene/obj_mesh.h"
#include "scene/input_file.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The reader's state: the mesh so far, its array capacities, the file and the line. */
typedef struct obj_reader {
    pbfcl_obj *m;
    int vertex_cap, triangle_cap;
    const char *path;
    int line;
} obj_reader;

/* Grows *array (of elem_size * per entries) to hold count + 1 entries. */
static bool grow(void **array, int *cap, int count, size_t elem_size)
{
    if (count < *cap)
        return true;
    if (*cap > (1 << 28))
        return false;
    int next = *cap ? 2 * *cap : 64;
    void *p = realloc(*array, (size_t)next * elem_size);
    if (!p)
        return false;
    *array = p;
    *cap = next;
    return true;
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')
        p++;
    return p;
}

static bool at_token_end(const char *p)
{
    return *p == '\0' || *p == '\n' || isspace((unsigned char)*p);
}

/* "v x y z [w]" (or with a colour "v x y z r g b"): the first three numbers are the vertex. */
static pbfcl_status read_vertex(obj_reader *r, const char *p)
{
    float v[3];
    int count = 0;
    for (p = skip_space(p); *p && *p != '\n'; p = skip_space(p), count++) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || !at_token_end(end)) {
            int len = 0;
            while (!at_token_end(p + len) && len < 24)
                len++;
            pbfcl_errorf("%s:%d: '%.*s' is not a number (a vertex is \"v x y z\")", r->path,
                         r->line, len, p);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        if (!isfinite(x) || fabs(x) > FLT_MAX) {
            pbfcl_errorf("%s:%d: the vertex coordinate %.*s is not a finite single-precision "
                         "number",
                         r->path, r->line, (int)(end - p), p);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        if (count < 3)
            v[count] = (float)x;
        p = end;
    }
    if (count < 3 || count > 7) {
        pbfcl_errorf("%s:%d: a vertex has 3 coordinates (\"v x y z\", optionally a weight or a "
                     "colour after them), this one has %d number%s",
                     r->path, r->line, count, count == 1 ? "" : "s");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_obj *m = r->m;
    if (!grow((void **)&m->vertices, &r->vertex_cap, m->vertex_count, 3 * sizeof(float))) {
        pbfcl_errorf("%s:%d: out of memory for %d vertices", r->path, r->line, m->vertex_count);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    memcpy(&m->vertices[3 * m->vertex_count++], v, sizeof v);
    return PBFCL_OK;
}

/* One vertex of a face: "i", "i/t", "i//n" or "i/t/n"; i counts from 1, or back from the last
 * vertex if negative. Sets *index (0-based) and *next past the token. */
static pbfcl_status read_face_vertex(obj_reader *r, const char *p, int *index, const char **next)
{
    const char *q = p;
    while (!at_token_end(q))
        q++;
    *next = q;
    char *end;
    errno = 0;
    long i = strtol(p, &end, 10);
    bool ok = end != p && (end == q || *end == '/') && errno == 0;
    for (const char *c = end; ok && c < q; c++) /* the texture and normal indices */
        ok = isdigit((unsigned char)*c) || *c == '/' || *c == '-';
    if (!ok) {
        pbfcl_errorf("%s:%d: '%.*s' is not a face vertex (give \"i\", \"i/t\", \"i//n\" or "
                     "\"i/t/n\" with integer indices)",
                     r->path, r->line, (int)(q - p > 24 ? 24 : q - p), p);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    int n = r->m->vertex_count;
    if (i == 0 || i > n || i < -(long)n) {
        pbfcl_errorf("%s:%d: the face refers to vertex %ld, but %d vertices are defined above "
                     "it (indices count from 1, or back from -1 for the last vertex)",
                     r->path, r->line, i, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *index = i > 0 ? (int)i - 1 : n + (int)i;
    return PBFCL_OK;
}

/* Appends triangle (a, b, c) of the face on the current line. */
static pbfcl_status add_triangle(obj_reader *r, int a, int b, int c)
{
    pbfcl_obj *m = r->m;
    int cap = r->triangle_cap;
    if (!grow((void **)&m->triangles, &cap, m->triangle_count, 3 * sizeof(int)) ||
        !grow((void **)&m->lines, &r->triangle_cap, m->triangle_count, sizeof(int))) {
        pbfcl_errorf("%s:%d: out of memory for %d triangles", r->path, r->line, m->triangle_count);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    int *t = &m->triangles[3 * m->triangle_count];
    t[0] = a;
    t[1] = b;
    t[2] = c;
    m->lines[m->triangle_count++] = r->line;
    return PBFCL_OK;
}

/* The most vertices a face may have (a larger polygon is an error: split it). */
#define OBJ_MAX_FACE_VERTICES 256

/* "f a b c ...": a polygon of 3 or more distinct vertices, split into the fan (a, b, c),
 * (a, c, d), ... */
static pbfcl_status read_face(obj_reader *r, const char *p)
{
    int v[OBJ_MAX_FACE_VERTICES], count = 0;
    for (p = skip_space(p); *p && *p != '\n'; p = skip_space(p), count++) {
        if (count == OBJ_MAX_FACE_VERTICES) {
            pbfcl_errorf("%s:%d: the face has more than %d vertices; split it into smaller "
                         "polygons",
                         r->path, r->line, OBJ_MAX_FACE_VERTICES);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        PBFCL_TRY(read_face_vertex(r, p, &v[count], &p));
        for (int k = 0; k < count; k++)
            if (v[k] == v[count]) {
                pbfcl_errorf("%s:%d: the face uses vertex %d twice; a face needs distinct "
                             "vertices",
                             r->path, r->line, v[count] + 1);
                return PBFCL_ERR_BAD_ARGUMENT;
            }
    }
    if (count < 3) {
        pbfcl_errorf("%s:%d: a face needs at least 3 vertices, this one has %d", r->path, r->line,
                     count);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int k = 2; k < count; k++)
        PBFCL_TRY(add_triangle(r, v[0], v[k - 1], v[k]));
    return PBFCL_OK;
}

void pbfcl_obj_free(pbfcl_obj *m)
{
    if (!m)
        return;
    free(m->vertices);
    free(m->triangles);
    free(m->lines);
    memset(m, 0, sizeof *m);
}

pbfcl_status pbfcl_obj_parse(const char *path, const char *text, pbfcl_obj *out)
{
    memset(out, 0, sizeof *out);
    obj_reader r = {out, 0, 0, path, 0};
    pbfcl_status st = PBFCL_OK;
    for (const char *p = text; *p && st == PBFCL_OK; p++) {
        r.line++;
        p = skip_space(p);
        const char *word = p;
        while (!at_token_end(p))
            p++;
        size_t len = (size_t)(p - word);
        if (len == 1 && word[0] == 'v')
            st = read_vertex(&r, p);
        else if (len == 1 && word[0] == 'f')
            st = read_face(&r, p);
        p = strchr(p, '\n');
        if (!p)
            break;
    }
    if (st == PBFCL_OK && out->triangle_count == 0) {
        pbfcl_errorf("%s: the file has no faces (\"f a b c\" lines); give a closed triangle "
                     "mesh",
                     path);
        st = PBFCL_ERR_BAD_ARGUMENT;
    }
    if (st != PBFCL_OK)
        pbfcl_obj_free(out);
    return st;
}

pbfcl_status pbfcl_obj_load(const char *path, pbfcl_obj *out)
{
    char *text = NULL;
    memset(out, 0, sizeof *out);
    PBFCL_TRY(pbfcl_read_input_file(path, "OBJ file", "give a Wavefront OBJ mesh file",
                                    PBFCL_OBJ_MAX_BYTES, &text));
    pbfcl_status st = pbfcl_obj_parse(path, text, out);
    free(text);
    return st;
}

/* --- closed surfaces ------------------------------------------------------------------ */

/* A directed edge of a triangle between the welded vertices lo < hi; way +1 if it runs from
 * lo to hi. */
typedef struct obj_edge {
    int lo, hi, way, line;
} obj_edge;

/* A vertex's position and index, sorted to find the vertices at one position. */
typedef struct obj_point {
    float x[3];
    int index;
} obj_point;

/* Whether two points are at different positions. */
static bool positions_differ(const obj_point *a, const obj_point *b)
{
    return a->x[0] != b->x[0] || a->x[1] != b->x[1] || a->x[2] != b->x[2];
}

static int by_position(const void *pa, const void *pb)
{
    const obj_point *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->x[k] != b->x[k])
            return a->x[k] < b->x[k] ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int by_edge(const void *pa, const void *pb)
{
    const obj_edge *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* weld[v]: the first vertex at v's position. */
static void weld_vertices(const pbfcl_obj *m, obj_point *order, int *weld)
{
    for (int v = 0; v < m->vertex_count; v++) {
        memcpy(order[v].x, &m->vertices[3 * v], sizeof order[v].x);
        order[v].index = v;
    }
    qsort(order, (size_t)m->vertex_count, sizeof *order, by_position);
    for (int i = 0; i < m->vertex_count; i++) {
        bool same = i > 0 && !positions_differ(&order[i - 1], &order[i]);
        weld[order[i].index] = same ? weld[order[i - 1].index] : order[i].index;
    }
}

/* Checks the sorted edges: each undirected edge twice, once each way. */
static bool edges_paired(const obj_edge *e, size_t n, pbfcl_obj_edge_fault *fault)
{
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
            j++;
        bool same_way = j - i == 2 && e[i].way == e[i + 1].way;
        if (j - i != 2 || same_way) {
            if (fault)
                *fault =
                    (pbfcl_obj_edge_fault){e[i].lo, e[i].hi, (int)(j - i), e[i].line, same_way};
            return false;
        }
        i = j;
    }
    return true;
}

bool pbfcl_obj_closed(const pbfcl_obj *m, pbfcl_obj_edge_fault *fault)
{
    size_t nv = (size_t)m->vertex_count, nt = (size_t)m->triangle_count;
    obj_point *order = malloc((nv ? nv : 1) * sizeof *order);
    int *weld = malloc((nv ? nv : 1) * sizeof *weld);
    obj_edge *e = malloc(3 * (nt ? nt : 1) * sizeof *e);
    if (!order || !weld || !e) {
        free(order);
        free(weld);
        free(e);
        if (fault)
            *fault = (pbfcl_obj_edge_fault){0, 0, -1, 0, false};
        return false;
    }
    weld_vertices(m, order, weld);
    size_t n = 0;
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++) {
            int a = weld[m->triangles[3 * t + k]], b = weld[m->triangles[3 * t + (k + 1) % 3]];
            if (a != b) /* an edge of length 0 bounds nothing */
                e[n++] = (obj_edge){a < b ? a : b, a < b ? b : a, a < b ? 1 : -1, m->lines[t]};
        }
    qsort(e, n, sizeof *e, by_edge);
    bool closed = edges_paired(e, n, fault);
    free(order);
    free(weld);
    free(e);
    return closed;
}

double pbfcl_obj_volume(const pbfcl_obj *m)
{
    if (m->vertex_count == 0)
        return 0.0;
    const float *o = m->vertices; /* relative to the first vertex: less cancellation */
    double v = 0.0;
    for (int t = 0; t < m->triangle_count; t++) {
        double p[3][3];
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 3; k++)
                p[c][k] = (double)m->vertices[3 * m->triangles[3 * t + c] + k] - o[k];
        v += p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) -
             p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
             p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0]);
    }
    return v / 6.0;
}
