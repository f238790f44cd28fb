/* The exact tests on mesh triangles shared by the point test (scene_mesh.c) and the row fill
 * (scene_mesh_rows.c). The ray test runs in integer coordinates (exact), and a ray through an
 * edge or a vertex is decided as if the point were moved by (0, e, e^2) for an infinitely
 * small e, so that every crossing is counted once. */
#include "scene/mesh_ray.h"

#include <math.h>

/* The number of grid steps across a mesh's largest extent. */
#define MESH_GRID_STEPS 67108864.0

pbfcl_mesh_grid pbfcl_mesh_grid_of(const pbfcl_fluid_shape *f, double tol)
{
    double extent = tol;
    for (int k = 0; k < 3; k++)
        extent = fmax(extent, (double)f->max[k] - f->min[k]);
    return (pbfcl_mesh_grid){{f->min[0], f->min[1], f->min[2]}, extent / MESH_GRID_STEPS};
}

int64_t pbfcl_mesh_snap(const pbfcl_mesh_grid *g, int k, double x)
{
    return (int64_t)llround((x - g->lo[k]) / g->step);
}

void pbfcl_mesh_corner(const pbfcl_scene *s, int t, int j, double out[3])
{
    const float *v = s->meshes.vertices[s->meshes.triangles[t][j]];
    for (int k = 0; k < 3; k++)
        out[k] = v[k];
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

/* Twice the signed area of the yz projection of u, v, w (no perturbation): the x component
 * of (v - u) x (w - u), so positive where the triangle u, v, w faces +x. */
static int64_t area2(const int64_t u[3], const int64_t v[3], const int64_t w[3])
{
    return (v[1] - u[1]) * (w[2] - u[2]) - (v[2] - u[2]) * (w[1] - u[1]);
}

int pbfcl_mesh_ray_crossing(const int64_t c[3][3], const int64_t p[3], double *x)
{
    int64_t a = area2(c[0], c[1], c[2]);
    if (a == 0) /* parallel to the ray: the moved point never lies on it */
        return 0;
    int s0 = edge_side(c[0], c[1], p), s1 = edge_side(c[1], c[2], p), s2 = edge_side(c[2], c[0], p);
    if (s0 != s1 || s1 != s2)
        return 0;
    /* The crossing's x from the barycentric weights (all of a's sign, summing to a). */
    double w0 = (double)area2(c[1], c[2], p), w1 = (double)area2(c[2], c[0], p),
           w2 = (double)area2(c[0], c[1], p);
    *x = (w0 * (double)c[0][0] + w1 * (double)c[1][0] + w2 * (double)c[2][0]) / (double)a;
    return a > 0 ? 1 : -1;
}

double pbfcl_mesh_distance2(const double p[3], const double a[3], const double b[3],
                            const double c[3])
{
    /* Ericson, Real-Time Collision Detection, 5.1.5: the closest point by the Voronoi regions
     * of the corners and edges. */
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
