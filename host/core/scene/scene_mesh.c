/* Triangle-mesh shapes of a scene: an OBJ mesh placed in the scene (scaled, rotated, moved)
 * after the checks that it is closed and holds a volume, and the test of whether a lattice
 * point lies inside it, by the parity of the crossings of a ray along +x. The ray test runs in
 * integer coordinates (exact), and a ray through an edge or a vertex is decided as if the
 * point were moved by (0, e, e^2) for an infinitely small e, so that every crossing is counted
 * once; a point within tol of the surface counts as inside, as on the other shapes. */
#include "scene/scene.h"
#include "scene/scene_mesh.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The grid the ray test snaps to: 2^26 steps across the mesh's largest extent, so that the
 * products of coordinate differences stay far inside 64 bits. */
#define MESH_GRID_STEPS 67108864.0

/* A mesh's grid: its origin and step. */
typedef struct mesh_grid {
    double lo[3], step;
} mesh_grid;

static int64_t snap(const mesh_grid *g, int k, double x)
{
    return (int64_t)llround((x - g->lo[k]) / g->step);
}

/* The orientation of point p's yz projection against edge u-v (twice the signed area of the
 * triangle u, v, p), with p moved by (0, e, e^2): never 0 unless u and v project to one point. */
static int edge_side(const int64_t u[3], const int64_t v[3], const int64_t p[3])
{
    int64_t o = (v[1] - u[1]) * (p[2] - u[2]) - (v[2] - u[2]) * (p[1] - u[1]);
    if (o == 0) /* the leading terms of e: -(v_z - u_z) e, then (v_y - u_y) e^2 */
        o = v[2] != u[2] ? u[2] - v[2] : v[1] - u[1];
    return (o > 0) - (o < 0);
}

/* Twice the signed area of the yz projection of u, v, w (no perturbation). */
static int64_t area2(const int64_t u[3], const int64_t v[3], const int64_t w[3])
{
    return (v[1] - u[1]) * (w[2] - u[2]) - (v[2] - u[2]) * (w[1] - u[1]);
}

/* Whether the ray from p along +x crosses triangle t (snapped corners c). */
static bool ray_crosses(const int64_t c[3][3], const int64_t p[3])
{
    int64_t a = area2(c[0], c[1], c[2]);
    if (a == 0) /* parallel to the ray: the moved point never lies on it */
        return false;
    int s0 = edge_side(c[0], c[1], p), s1 = edge_side(c[1], c[2], p), s2 = edge_side(c[2], c[0], p);
    if (s0 != s1 || s1 != s2)
        return false;
    /* The crossing's x from the barycentric weights (all of a's sign, summing to a). */
    double w0 = (double)area2(c[1], c[2], p), w1 = (double)area2(c[2], c[0], p),
           w2 = (double)area2(c[0], c[1], p);
    double x = (w0 * (double)c[0][0] + w1 * (double)c[1][0] + w2 * (double)c[2][0]) / (double)a;
    return x > (double)p[0];
}

/* The squared distance from p to triangle a, b, c (Ericson, Real-Time Collision Detection,
 * 5.1.5: the closest point by the Voronoi regions of the corners and edges). */
static double distance2(const double p[3], const double a[3], const double b[3], const double c[3])
{
    double ab[3], ac[3], ap[3], q[3];
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ac[k] = c[k] - a[k];
        ap[k] = p[k] - a[k];
    }
#define DOT(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    double d1 = DOT(ab, ap), d2 = DOT(ac, ap), u = 0.0, v = 0.0;
    double bp[3] = {p[0] - b[0], p[1] - b[1], p[2] - b[2]};
    double cp[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    double d3 = DOT(ab, bp), d4 = DOT(ac, bp), d5 = DOT(ab, cp), d6 = DOT(ac, cp);
#undef DOT
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
    if (d1 <= 0.0 && d2 <= 0.0) {
    } else if (d3 >= 0.0 && d4 <= d3) {
        u = 1.0;
    } else if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        u = d1 / (d1 - d3);
    } else if (d6 >= 0.0 && d5 <= d6) {
        v = 1.0;
    } else if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        v = d2 / (d2 - d6);
    } else if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        v = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        u = 1.0 - v;
    } else {
        double sum = va + vb + vc;
        u = vb / sum;
        v = vc / sum;
    }
    double d = 0.0;
    for (int k = 0; k < 3; k++) {
        q[k] = a[k] + u * ab[k] + v * ac[k] - p[k];
        d += q[k] * q[k];
    }
    return d;
}

/* Corner j of triangle t of s's meshes, in double. */
static void corner(const pbfcl_scene *s, int t, int j, double out[3])
{
    const float *v = s->meshes.vertices[s->meshes.triangles[t][j]];
    for (int k = 0; k < 3; k++)
        out[k] = v[k];
}

bool pbfcl_scene_mesh_inside(const pbfcl_scene *s, const pbfcl_fluid_shape *f, const double p[3],
                             double tol)
{
    double extent = tol;
    for (int k = 0; k < 3; k++) {
        if (p[k] < f->min[k] - tol || p[k] > f->max[k] + tol)
            return false;
        extent = fmax(extent, (double)f->max[k] - f->min[k]);
    }
    mesh_grid g = {{f->min[0], f->min[1], f->min[2]}, extent / MESH_GRID_STEPS};
    int64_t ps[3];
    for (int k = 0; k < 3; k++)
        ps[k] = snap(&g, k, p[k]);
    double margin = 2.0 * g.step;
    int crossings = 0;
    for (int t = f->mesh_first; t < f->mesh_first + f->mesh_count; t++) {
        double c[3][3], lo[3], hi[3];
        for (int j = 0; j < 3; j++)
            corner(s, t, j, c[j]);
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(c[0][k], fmin(c[1][k], c[2][k]));
            hi[k] = fmax(c[0][k], fmax(c[1][k], c[2][k]));
        }
        bool near = true;
        for (int k = 0; k < 3; k++)
            near &= p[k] >= lo[k] - tol && p[k] <= hi[k] + tol;
        if (near && distance2(p, c[0], c[1], c[2]) <= tol * tol)
            return true;
        if (p[1] < lo[1] - margin || p[1] > hi[1] + margin || p[2] < lo[2] - margin ||
            p[2] > hi[2] + margin || p[0] > hi[0] + margin)
            continue;
        int64_t cs[3][3];
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                cs[j][k] = snap(&g, k, c[j][k]);
        crossings += ray_crosses((const int64_t(*)[3])cs, ps);
    }
    return crossings & 1;
}

bool pbfcl_scene_check_mesh(const pbfcl_scene *s, const char *where, const pbfcl_fluid_shape *f)
{
    const pbfcl_scene_meshes *m = &s->meshes;
    if (m->vertex_count < 0 || m->vertex_count > PBFCL_MAX_MESH_VERTICES || m->triangle_count < 0 ||
        m->triangle_count > PBFCL_MAX_MESH_TRIANGLES || f->mesh_first < 0 || f->mesh_count < 4 ||
        f->mesh_first > m->triangle_count - f->mesh_count) {
        pbfcl_errorf("scene '%s': %s has triangles %d..%d, outside the scene's %d mesh "
                     "triangles",
                     s->name, where, f->mesh_first, f->mesh_first + f->mesh_count - 1,
                     m->triangle_count);
        return false;
    }
    for (int t = f->mesh_first; t < f->mesh_first + f->mesh_count; t++)
        for (int j = 0; j < 3; j++) {
            int v = m->triangles[t][j];
            bool ok = v >= 0 && v < m->vertex_count;
            for (int k = 0; ok && k < 3; k++)
                ok = isfinite(m->vertices[v][k]) && m->vertices[v][k] >= f->min[k] &&
                     m->vertices[v][k] <= f->max[k];
            if (!ok) {
                pbfcl_errorf("scene '%s': %s: triangle %d has a vertex (%d) that is not a "
                             "finite point of its bounds",
                             s->name, where, t - f->mesh_first, v);
                return false;
            }
        }
    return true;
}

/* --- placing a mesh ------------------------------------------------------------------- */

/* Vertex v of m placed by pl into out. */
static void place(const pbfcl_mesh_placement *pl, const float v[3], float out[3])
{
    double x[3], deg = 3.14159265358979323846 / 180.0;
    for (int k = 0; k < 3; k++)
        x[k] = (double)pl->scale[k] * v[k];
    for (int axis = 0; axis < 3; axis++) { /* about x, then y, then z */
        double a = pl->rotate[axis] * deg, c = cos(a), sn = sin(a);
        int i = (axis + 1) % 3, j = (axis + 2) % 3;
        double xi = c * x[i] - sn * x[j], xj = sn * x[i] + c * x[j];
        x[i] = xi;
        x[j] = xj;
    }
    for (int k = 0; k < 3; k++)
        out[k] = (float)(x[k] + pl->translate[k]);
}

/* Reports why m is not closed. */
static void report_open(const char *file, const char *where, const char *obj_path,
                        const pbfcl_obj_edge_fault *e)
{
    if (e->faces < 0)
        pbfcl_errorf("%s: %s.file: out of memory checking '%s'", file, where, obj_path);
    else if (e->same_way)
        pbfcl_errorf("%s: %s.file: '%s' is not consistently oriented: the two faces at the edge "
                     "between its vertices %d and %d (one on line %d) run it the same way; "
                     "reverse the vertex order of the faces on one side",
                     file, where, obj_path, e->a + 1, e->b + 1, e->line);
    else
        pbfcl_errorf("%s: %s.file: '%s' is not closed: the edge between its vertices %d and %d "
                     "belongs to %d face%s (one on line %d), where a closed mesh has exactly 2 "
                     "at every edge; fill the holes or remove the extra faces",
                     file, where, obj_path, e->a + 1, e->b + 1, e->faces, e->faces == 1 ? "" : "s",
                     e->line);
}

pbfcl_status pbfcl_scene_add_mesh(pbfcl_scene *s, const char *file, const char *where,
                                  const char *obj_path, const pbfcl_obj *m,
                                  const pbfcl_mesh_placement *pl, pbfcl_fluid_shape *f)
{
    pbfcl_scene_meshes *sm = &s->meshes;
    pbfcl_obj_edge_fault fault;
    if (!pbfcl_obj_closed(m, &fault)) {
        report_open(file, where, obj_path, &fault);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (m->vertex_count > PBFCL_MAX_MESH_VERTICES - sm->vertex_count ||
        m->triangle_count > PBFCL_MAX_MESH_TRIANGLES - sm->triangle_count) {
        pbfcl_errorf("%s: %s.file: '%s' has %d vertices and %d triangles, and the scene's meshes "
                     "may have %d and %d in all (%d and %d used before it); simplify the mesh",
                     file, where, obj_path, m->vertex_count, m->triangle_count,
                     PBFCL_MAX_MESH_VERTICES, PBFCL_MAX_MESH_TRIANGLES, sm->vertex_count,
                     sm->triangle_count);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    memset(f, 0, sizeof *f);
    f->kind = PBFCL_SHAPE_MESH;
    f->mesh_first = sm->triangle_count;
    f->mesh_count = m->triangle_count;
    for (int k = 0; k < 3; k++) {
        f->min[k] = INFINITY;
        f->max[k] = -INFINITY;
    }
    for (int v = 0; v < m->vertex_count; v++) {
        float *out = sm->vertices[sm->vertex_count + v];
        place(pl, &m->vertices[3 * v], out);
        for (int k = 0; k < 3; k++) {
            f->min[k] = fminf(f->min[k], out[k]);
            f->max[k] = fmaxf(f->max[k], out[k]);
        }
    }
    pbfcl_obj placed = {&sm->vertices[sm->vertex_count][0], m->triangles, m->lines, m->vertex_count,
                        m->triangle_count};
    double volume = fabs(pbfcl_obj_volume(&placed)), extent = 0.0;
    for (int k = 0; k < 3; k++)
        extent = fmax(extent, (double)f->max[k] - f->min[k]);
    if (!(volume > 1e-6 * extent * extent * extent)) {
        pbfcl_errorf("%s: %s: '%s' encloses no volume (%g m^3 within bounds %g m across) once "
                     "placed; give a solid mesh and a scale above 0",
                     file, where, obj_path, volume, extent);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int t = 0; t < m->triangle_count; t++)
        for (int j = 0; j < 3; j++)
            sm->triangles[sm->triangle_count + t][j] = sm->vertex_count + m->triangles[3 * t + j];
    sm->vertex_count += m->vertex_count;
    sm->triangle_count += m->triangle_count;
    return PBFCL_OK;
}
