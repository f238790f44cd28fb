/* The read side of the collision shapes' API (pbfcl.h, "colliders"): a shape's id by index, its
 * kind, size and velocities, and its surface as triangles for drawing and export: spheres and
 * capsules tessellated as a lathe about their axis, a box's corners, a convex hull's faces
 * clipped from its planes, a mesh's triangles with their shared corners welded again. */
#include "api_internal.h"
#include "pbf/pbf_colliders.h"
#include "sim/solver_method.h"

#include "pbfcl_shared.h"
#include "../../cl/colliders/colliders.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SURFACE_PI 3.14159265358979323846

/* The shapes of a live solver handle running PBF; NULL (logged as func's) otherwise. */
static pbfcl_colliders *shapes_of(const char *func, const pbfcl_solver *s)
{
    pbfcl_sim *sim;
    const pbfcl_scene *scene;
    if (!pbfcl_api_solver_diffuse(func, s, &sim, &scene))
        return NULL;
    if (scene->solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("%s: shapes belong to method pbf only, and this solver runs %s", func,
                     pbfcl_method_name(scene->solver.method));
        return NULL;
    }
    return pbfcl_pbf_colliders(sim);
}

/* Shape id's view; logs and fails for an id of no shape. */
static pbfcl_status view_of(const char *func, const pbfcl_solver *s, int id, pbfcl_collider_view *v)
{
    pbfcl_colliders *c = shapes_of(func, s);
    if (!c)
        return PBFCL_ERR_BAD_ARGUMENT;
    for (int i = 0; i < pbfcl_colliders_count(c); i++)
        if (pbfcl_colliders_view_at(c, i, v) == PBFCL_OK && v->id == id)
            return PBFCL_OK;
    pbfcl_errorf("%s: shape id %d: there is no such shape (destroyed, or never made)", func, id);
    return PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status pbfcl_shape_id(const pbfcl_solver *s, int index, int *id)
{
    pbfcl_colliders *c = shapes_of("pbfcl_shape_id", s);
    pbfcl_collider_view v;
    if (!c || !id)
        return PBFCL_ERR_BAD_ARGUMENT;
    if (pbfcl_colliders_view_at(c, index, &v) != PBFCL_OK) {
        pbfcl_errorf("pbfcl_shape_id: index %d is not below the %d shapes", index,
                     pbfcl_colliders_count(c));
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *id = v.id;
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_get_info(const pbfcl_solver *s, int id, pbfcl_shape_info *info)
{
    pbfcl_collider_view v;
    if (!info) {
        pbfcl_errorf("pbfcl_shape_get_info: info must not be NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(view_of("pbfcl_shape_get_info", s, id, &v));
    memset(info, 0, sizeof *info);
    const pbfcl_collider_geometry *g = v.geo;
    info->type = (pbfcl_shape_type)g->type;
    snprintf(info->name, sizeof info->name, "%s", v.name);
    if (g->type == PBFCL_COLLIDER_SPHERE || g->type == PBFCL_COLLIDER_CAPSULE)
        info->radius = g->size[0];
    if (g->type == PBFCL_COLLIDER_CAPSULE)
        info->half_length = g->size[1];
    if (g->type == PBFCL_COLLIDER_BOX)
        memcpy(info->half_extents, g->size, sizeof info->half_extents);
    info->two_sided = (g->flags & PBFCL_COLLIDER_TWO_SIDED) != 0;
    memcpy(info->velocity, v.velocity, sizeof info->velocity);
    memcpy(info->angular_velocity, v.angular_velocity, sizeof info->angular_velocity);
    return PBFCL_OK;
}

/* A surface being built: vertices (xyz) and triangles, grown as needed. */
typedef struct surface {
    float *v;
    unsigned *t;
    size_t nv, nt, cap_v, cap_t;
    bool failed;
} surface;

static unsigned add_vertex(surface *m, float x, float y, float z)
{
    if (m->nv == m->cap_v) {
        size_t cap = m->cap_v ? 2 * m->cap_v : 256;
        float *v = realloc(m->v, cap * 3 * sizeof *v);
        if (!v) {
            m->failed = true;
            return 0;
        }
        m->v = v, m->cap_v = cap;
    }
    float *p = m->v + 3 * m->nv;
    p[0] = x, p[1] = y, p[2] = z;
    return (unsigned)m->nv++;
}

static void add_triangle(surface *m, unsigned a, unsigned b, unsigned c)
{
    if (m->failed)
        return;
    if (m->nt == m->cap_t) {
        size_t cap = m->cap_t ? 2 * m->cap_t : 256;
        unsigned *t = realloc(m->t, cap * 3 * sizeof *t);
        if (!t) {
            m->failed = true;
            return;
        }
        m->t = t, m->cap_t = cap;
    }
    unsigned *p = m->t + 3 * m->nt++;
    p[0] = a, p[1] = b, p[2] = c;
}

/* A ring of segs vertices at angle theta from the +x pole, moved by shift along x. */
static unsigned ring(surface *m, float radius, float shift, double theta, int segs)
{
    unsigned first = (unsigned)m->nv;
    for (int j = 0; j < segs; j++) {
        double phi = 2.0 * SURFACE_PI * j / segs;
        double r = radius * sin(theta);
        add_vertex(m, (float)(radius * cos(theta)) + shift, (float)(r * cos(phi)),
                   (float)(r * sin(phi)));
    }
    return first;
}

/* A sphere (half_length 0) or a capsule along x: poles at +x and -x, rings between, the
 * equator twice for a capsule (once on each cap's side of the cylinder). */
static void lathe(surface *m, float radius, float half_length, int segs)
{
    int half = segs / 2;
    unsigned rings[132];
    int n = 0;
    unsigned north = add_vertex(m, radius + half_length, 0.0f, 0.0f);
    for (int k = 1; k < half; k++)
        if (2 * k < half)
            rings[n++] = ring(m, radius, half_length, SURFACE_PI * k / half, segs);
    if (half_length > 0.0f) {
        rings[n++] = ring(m, radius, half_length, SURFACE_PI / 2, segs);
        rings[n++] = ring(m, radius, -half_length, SURFACE_PI / 2, segs);
    } else if (half % 2 == 0) {
        rings[n++] = ring(m, radius, 0.0f, SURFACE_PI / 2, segs);
    }
    for (int k = 1; k < half; k++)
        if (2 * k > half)
            rings[n++] = ring(m, radius, -half_length, SURFACE_PI * k / half, segs);
    unsigned south = add_vertex(m, -radius - half_length, 0.0f, 0.0f);
    for (int j = 0; j < segs; j++) {
        unsigned j1 = (unsigned)((j + 1) % segs);
        add_triangle(m, north, rings[0] + (unsigned)j, rings[0] + j1);
        for (int k = 0; k + 1 < n; k++) {
            unsigned a = rings[k] + (unsigned)j, b = rings[k] + j1;
            unsigned c = rings[k + 1] + (unsigned)j, d = rings[k + 1] + j1;
            add_triangle(m, a, c, d);
            add_triangle(m, a, d, b);
        }
        add_triangle(m, rings[n - 1] + (unsigned)j, south, rings[n - 1] + j1);
    }
}

static void box(surface *m, const float *h)
{
    for (int c = 0; c < 8; c++)
        add_vertex(m, c & 1 ? h[0] : -h[0], c & 2 ? h[1] : -h[1], c & 4 ? h[2] : -h[2]);
    /* each face's corners counter-clockwise seen from outside */
    static const unsigned faces[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                         {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (int f = 0; f < 6; f++) {
        add_triangle(m, faces[f][0], faces[f][1], faces[f][2]);
        add_triangle(m, faces[f][0], faces[f][2], faces[f][3]);
    }
}

/* Clips the polygon in (n points, xyz doubles) to dot(p, x) + d <= eps into out; returns the
 * points kept. */
static int clip(const double *in, int n, const float *p, double eps, double *out)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        const double *a = in + 3 * i, *b = in + 3 * ((i + 1) % n);
        double da = p[0] * a[0] + p[1] * a[1] + p[2] * a[2] + p[3] - eps;
        double db = p[0] * b[0] + p[1] * b[1] + p[2] * b[2] + p[3] - eps;
        if (da <= 0.0)
            memcpy(out + 3 * k++, a, 3 * sizeof *a);
        if ((da <= 0.0) != (db <= 0.0)) {
            double t = da / (da - db);
            for (int c = 0; c < 3; c++)
                out[3 * k + c] = a[c] + t * (b[c] - a[c]);
            k++;
        }
    }
    return k;
}

/* A convex hull's faces: a large square in each plane, clipped by every other plane, as a fan
 * (the square's corners run counter-clockwise about the plane's outward normal, and clipping
 * keeps their order). */
static void hull(surface *m, const pbfcl_collider_geometry *g)
{
    size_t np = g->plane_count, room = np + 8;
    double *poly = malloc(room * 3 * sizeof *poly), *next = malloc(room * 3 * sizeof *next);
    double size = 1.0, eps;
    for (int k = 0; k < 3; k++)
        size += fabs((double)g->lo[k]) + fabs((double)g->hi[k]);
    eps = 1e-6 * size;
    for (size_t i = 0; poly && next && i < np; i++) {
        const float *p = g->planes + 4 * i;
        double n[3] = {p[0], p[1], p[2]}, u[3], v[3];
        double a[3] = {fabs(n[0]) < 0.9 ? 1.0 : 0.0, fabs(n[0]) < 0.9 ? 0.0 : 1.0, 0.0};
        u[0] = a[1] * n[2] - a[2] * n[1], u[1] = a[2] * n[0] - a[0] * n[2];
        u[2] = a[0] * n[1] - a[1] * n[0];
        double ul = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        for (int c = 0; c < 3; c++)
            u[c] /= ul;
        v[0] = n[1] * u[2] - n[2] * u[1], v[1] = n[2] * u[0] - n[0] * u[2];
        v[2] = n[0] * u[1] - n[1] * u[0]; /* u x v = n */
        static const double corner[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
        for (int q = 0; q < 4; q++)
            for (int c = 0; c < 3; c++)
                poly[3 * q + c] =
                    -p[3] * n[c] + 4.0 * size * (corner[q][0] * u[c] + corner[q][1] * v[c]);
        int count = 4;
        for (size_t j = 0; j < np && count >= 3; j++) {
            if (j == i)
                continue;
            count = clip(poly, count, g->planes + 4 * j, eps, next);
            double *swap = poly;
            poly = next, next = swap;
        }
        if (count < 3)
            continue;
        unsigned first = (unsigned)m->nv;
        for (int q = 0; q < count; q++)
            add_vertex(m, (float)poly[3 * q], (float)poly[3 * q + 1], (float)poly[3 * q + 2]);
        for (int q = 1; q + 1 < count; q++)
            add_triangle(m, first, first + (unsigned)q, first + (unsigned)q + 1);
    }
    m->failed = m->failed || !poly || !next;
    free(poly);
    free(next);
}

static const float *sort_corners; /* for by_position: the corners being sorted */

static int by_position(const void *a, const void *b)
{
    const float *p = sort_corners + 4 * *(const size_t *)a,
                *q = sort_corners + 4 * *(const size_t *)b;
    for (int k = 0; k < 3; k++)
        if (p[k] != q[k])
            return p[k] < q[k] ? -1 : 1;
    return 0;
}

/* A mesh's triangles, corners at one place made one vertex again. */
static void mesh(surface *m, const pbfcl_collider_geometry *g)
{
    size_t corners = 3 * g->tri_count;
    size_t *order = malloc((corners + 1) * sizeof *order);
    unsigned *vertex = malloc((corners + 1) * sizeof *vertex);
    if (!order || !vertex) {
        m->failed = true;
        free(order);
        free(vertex);
        return;
    }
    for (size_t i = 0; i < corners; i++)
        order[i] = i;
    sort_corners = g->tris;
    qsort(order, corners, sizeof *order, by_position);
    for (size_t i = 0; i < corners; i++) {
        const float *p = g->tris + 4 * order[i];
        if (i == 0 || by_position(&order[i - 1], &order[i]) != 0)
            add_vertex(m, p[0], p[1], p[2]);
        vertex[order[i]] = (unsigned)m->nv - 1;
    }
    for (size_t t = 0; t < g->tri_count; t++)
        add_triangle(m, vertex[3 * t], vertex[3 * t + 1], vertex[3 * t + 2]);
    free(order);
    free(vertex);
}

pbfcl_status pbfcl_shape_get_surface(const pbfcl_solver *s, int id, int segments, float *vertices,
                                     size_t *vertex_count, unsigned *triangles,
                                     size_t *triangle_count)
{
    const char *func = "pbfcl_shape_get_surface";
    pbfcl_collider_view v;
    PBFCL_TRY(view_of(func, s, id, &v));
    if (!vertex_count || !triangle_count || (segments != 0 && (segments < 4 || segments > 256))) {
        pbfcl_errorf("%s: vertex_count and triangle_count must not be NULL, and segments must "
                     "be 0 or 4 to 256 (got %d)",
                     func, segments);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    const pbfcl_collider_geometry *g = v.geo;
    surface m = {0};
    if (g->type == PBFCL_COLLIDER_SPHERE || g->type == PBFCL_COLLIDER_CAPSULE)
        lathe(&m, g->size[0], g->type == PBFCL_COLLIDER_CAPSULE ? g->size[1] : 0.0f,
              segments ? segments : 24);
    else if (g->type == PBFCL_COLLIDER_BOX)
        box(&m, g->size);
    else if (g->type == PBFCL_COLLIDER_CONVEX)
        hull(&m, g);
    else
        mesh(&m, g);
    pbfcl_status st = m.failed ? PBFCL_ERR_OUT_OF_MEMORY : PBFCL_OK;
    if (st == PBFCL_OK && vertices && triangles) {
        if (*vertex_count < m.nv || *triangle_count < m.nt) {
            pbfcl_errorf("%s: %s has %zu vertices and %zu triangles, room for %zu and %zu given",
                         func, v.name, m.nv, m.nt, *vertex_count, *triangle_count);
            st = PBFCL_ERR_BUFFER_SIZE;
        } else {
            if (m.nv > 0) /* an SDF keeps no triangles: none, and no memcpy from NULL */
                memcpy(vertices, m.v, m.nv * 3 * sizeof *vertices);
            if (m.nt > 0)
                memcpy(triangles, m.t, m.nt * 3 * sizeof *triangles);
        }
    }
    *vertex_count = m.nv;
    *triangle_count = m.nt;
    free(m.v);
    free(m.t);
    return st;
}
