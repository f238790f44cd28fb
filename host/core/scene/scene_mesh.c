/* Triangle-mesh shapes of a scene: an OBJ mesh placed in the scene (scaled, rotated, moved)
 * after the checks that it is closed, inside the domain and holds a volume, and the test of
 * whether one point lies inside it: by the winding number of the surface about the point,
 * counted along a ray along +x (mesh_ray.c: exact, every crossing counted once), so that where
 * closed parts of one mesh overlap the overlap is inside (the union of their volumes); a point
 * within tol of the surface counts as inside, as on the other shapes. Sampling a whole lattice
 * goes row by row instead (scene_mesh_rows.c), with the same tests. */
#include "scene/mesh_ray.h"
#include "scene/scene.h"
#include "scene/scene_mesh.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

bool pbfcl_scene_mesh_inside(const pbfcl_scene *s, const pbfcl_fluid_shape *f, const double p[3],
                             double tol)
{
    for (int k = 0; k < 3; k++)
        if (p[k] < f->min[k] - tol || p[k] > f->max[k] + tol)
            return false;
    pbfcl_mesh_grid g = pbfcl_mesh_grid_of(f, tol);
    int64_t ps[3];
    for (int k = 0; k < 3; k++)
        ps[k] = pbfcl_mesh_snap(&g, k, p[k]);
    double margin = 2.0 * g.step;
    int winding = 0;
    for (int t = f->mesh_first; t < f->mesh_first + f->mesh_count; t++) {
        double c[3][3], lo[3], hi[3];
        for (int j = 0; j < 3; j++)
            pbfcl_mesh_corner(s, t, j, c[j]);
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(c[0][k], fmin(c[1][k], c[2][k]));
            hi[k] = fmax(c[0][k], fmax(c[1][k], c[2][k]));
        }
        bool near = true;
        for (int k = 0; k < 3; k++)
            near &= p[k] >= lo[k] - tol && p[k] <= hi[k] + tol;
        if (near && pbfcl_mesh_distance2(p, c[0], c[1], c[2]) <= tol * tol)
            return true;
        if (p[1] < lo[1] - margin || p[1] > hi[1] + margin || p[2] < lo[2] - margin ||
            p[2] > hi[2] + margin || p[0] > hi[0] + margin)
            continue;
        int64_t cs[3][3];
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                cs[j][k] = pbfcl_mesh_snap(&g, k, c[j][k]);
        double x;
        int way = pbfcl_mesh_ray_crossing((const int64_t(*)[3])cs, ps, &x);
        if (way != 0 && x > (double)ps[0])
            winding += way;
    }
    return winding != 0;
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

/* Whether mesh shape f, placed, lies in s's domain (checked before its volume: a mesh moved
 * far away loses its volume to rounding, and the message should say where it went). */
static bool placed_inside(const pbfcl_scene *s, const char *file, const char *where,
                          const char *obj_path, const pbfcl_fluid_shape *f)
{
    for (int k = 0; k < 3; k++) {
        float lo = s->domain_min[k], hi = s->domain_max[k], tol = 1e-6f * (hi - lo);
        if (!(hi > lo)) /* a domain with no room: its own check says so */
            return true;
        if (f->min[k] < lo - tol || f->max[k] > hi + tol) {
            pbfcl_errorf("%s: %s: '%s' once placed spans %g..%g along %c, %s the domain %g..%g; "
                         "change %s.translate or .scale, or make the domain larger",
                         file, where, obj_path, f->min[k], f->max[k], "xyz"[k],
                         f -> max[k]<lo || f -> min[k]> hi ? "wholly outside" : "reaching outside",
                         lo, hi, where);
            return false;
        }
    }
    return true;
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
    if (!placed_inside(s, file, where, obj_path, f))
        return PBFCL_ERR_BAD_ARGUMENT;
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
