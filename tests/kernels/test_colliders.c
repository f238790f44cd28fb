/* Tests of the collision shapes' kernels (cl/colliders/colliders.cl) against plain C references in
 * double precision at awkward sizes (0, 1, work-group size - 1, wg, wg + 1, a prime):
 * colliders_narrow against a brute-force reference that tests every shape and every triangle
 * (no bounds, no grid: so the broad phase and the mesh's grid miss nothing) and moves x out of
 * the shape it starts inside, for moving
 * primitives (sphere, capsule, box, convex hull, signed distance field) and for a one- and a
 * two-sided mesh; an SDF's nodes against the exact distance to its mesh, and its samples
 * between them within the trilinear bound (exact where the distance is linear);
 * colliders_project (planes and Coulomb friction relative to the shape's motion) and
 * colliders_force (each shape's pushes and counts) against their references; the pose a
 * substep advances to; the multilevel correction's view of the shapes (ml_solids' cells,
 * ml_gather_shapes' touch words, ml_shape_push's sums); and bad shapes refused with the shape and
 * the fix named. */
#include "colliders/colliders_internal.h"
#include "runtime/programs.h"
#include "sphere_mesh.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K PBFCL_COLLIDER_CONTACTS
#define RADIUS 0.02f
#define DT 0.004f
#define TOL 1e-4 /* decisions this close to their threshold are not compared (float vs double) */

/* ---- the reference (double precision) ----------------------------------------------------- */

typedef struct dvec {
    double x, y, z;
} dvec;

static dvec v3(double x, double y, double z)
{
    return (dvec){x, y, z};
}
static dvec add(dvec a, dvec b)
{
    return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static dvec sub(dvec a, dvec b)
{
    return v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static dvec mul(dvec a, double s)
{
    return v3(a.x * s, a.y * s, a.z * s);
}
static double dot(dvec a, dvec b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static dvec cross(dvec a, dvec b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static double len(dvec a)
{
    return sqrt(dot(a, a));
}
static dvec fv(const float *f)
{
    return v3(f[0], f[1], f[2]);
}

/* v rotated by quaternion q (or its inverse), as a rotation matrix would. */
static dvec rot(const float *q, dvec v, bool inverse)
{
    double x = q[0], y = q[1], z = q[2], w = inverse ? -q[3] : q[3];
    double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    return v3(m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
              m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
              m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z);
}

typedef struct ref_contact {
    dvec n;
    double w;
    int shape;
    bool face; /* a mesh's face contact (its edges' are checked against it) */
} ref_contact;

#define REF_MOST 64 /* contacts a reference result holds (the kernel keeps the deepest K) */
typedef struct ref_result {
    ref_contact c[REF_MOST];
    int count;
    bool ambiguous; /* a decision within TOL of its threshold */
    unsigned inside;
    dvec move; /* of x, out of the shape it is inside */
} ref_result;

static void near_threshold(ref_result *r, double v, double threshold)
{
    if (fabs(v - threshold) < TOL)
        r->ambiguous = true;
}

/* The trilinear sample of SDF s (its nodes among planes) at local x and its normal, as the
 * kernel samples it (continued from the grid's nearest point outside it). */
static double ref_sdf(const pbfcl_collider_shape *s, const float *planes, dvec x, dvec *n,
                      ref_result *r)
{
    double h = s->grid_origin[3], u[3], uc[3], t[3], out[3], v[4] = {0};
    int c[3], dims[3];
    for (int k = 0; k < 3; k++) {
        dims[k] = (int)s->grid_dims[k];
        u[k] = (((double *)&x)[k] - s->grid_origin[k]) / h;
        uc[k] = fmin(fmax(u[k], 0.0), dims[k] - 1.0);
        c[k] = (int)fmin(floor(uc[k]), dims[k] - 2.0);
        t[k] = uc[k] - c[k];
        out[k] = (u[k] - uc[k]) * h;
    }
    for (int corner = 0; corner < 8; corner++) {
        int i = c[0] + (corner & 1), j = c[1] + (corner >> 1 & 1), k = c[2] + (corner >> 2);
        double w = (corner & 1 ? t[0] : 1 - t[0]) * (corner & 2 ? t[1] : 1 - t[1]) *
                   (corner & 4 ? t[2] : 1 - t[2]);
        const float *p = planes + 4 * (s->first + ((size_t)k * dims[1] + j) * dims[0] + i);
        for (int a = 0; a < 4; a++)
            v[a] += w * p[a];
    }
    dvec g = v3(v[0], v[1], v[2]);
    if (len(g) < 1e-2) /* the normal of a vanishing gradient is anyone's */
        r->ambiguous = true;
    g = len(g) > 0 ? mul(g, 1.0 / len(g)) : v3(0, 1, 0);
    dvec o = v3(out[0], out[1], out[2]);
    if (len(o) == 0) {
        *n = g;
        return v[3];
    }
    dvec from = add(o, mul(g, fmax(v[3], 0.0)));
    *n = mul(from, 1.0 / len(from));
    return len(from);
}

/* The signed distance of local x from primitive row (planes: the hull's; an SDF's nodes) and
 * its normal. */
static double ref_primitive(const pbfcl_collider_shape *s, const float *planes, dvec x, dvec *n,
                            ref_result *r)
{
    if (s->type == PBFCL_COLLIDER_SDF)
        return ref_sdf(s, planes, x, n, r);
    if (s->type == PBFCL_COLLIDER_SPHERE || s->type == PBFCL_COLLIDER_CAPSULE) {
        dvec a = x;
        if (s->type == PBFCL_COLLIDER_CAPSULE)
            a.x -= fmin(fmax(x.x, -s->size[1]), s->size[1]);
        *n = mul(a, 1.0 / len(a));
        return len(a) - s->size[0];
    }
    double best = -INFINITY, second = -INFINITY;
    int count = s->type == PBFCL_COLLIDER_BOX ? 6 : (int)s->count;
    for (int k = 0; k < count; k++) {
        dvec pn;
        double d;
        if (s->type == PBFCL_COLLIDER_BOX) {
            int axis = k / 2;
            double sg = k % 2 ? -1.0 : 1.0;
            pn = v3(axis == 0 ? sg : 0, axis == 1 ? sg : 0, axis == 2 ? sg : 0);
            d = dot(pn, x) - s->size[axis];
        } else {
            const float *p = planes + 4 * (s->first + k);
            pn = fv(p);
            d = dot(pn, x) + p[3];
        }
        if (d > best) {
            second = best;
            best = d;
            *n = pn;
        } else if (d > second)
            second = d;
    }
    if (s->type == PBFCL_COLLIDER_BOX) { /* outside: the distance to the nearest point */
        dvec out = v3(fmax(fabs(x.x) - s->size[0], 0), fmax(fabs(x.y) - s->size[1], 0),
                      fmax(fabs(x.z) - s->size[2], 0));
        if (len(out) > 0) {
            *n = v3(copysign(out.x, x.x), copysign(out.y, x.y), copysign(out.z, x.z));
            *n = mul(*n, 1.0 / len(out));
            return len(out);
        }
    }
    near_threshold(r, best - second, 0.0); /* a tie between faces picks either */
    return best;
}

/* Adds a contact unless it is a plane of the same shape held already (the kernel's
 * PBFCL_COLLIDER_SAME; near that threshold either way), or a mesh's edge or corner contact
 * (kind 'e'; 'f' a face's, 'p' a primitive's) whose point lies in the plane of a face of the
 * same mesh held already (within PBFCL_COLLIDER_ON_FACE; the faces come first). */
static void ref_add(ref_result *r, const pbfcl_collider_shape *s, int shape, char kind, dvec n,
                    dvec sp, double r_eff)
{
    dvec nw = rot(s->rotation, n, false), pw = add(rot(s->rotation, sp, false), fv(s->position));
    double w = -dot(nw, pw) - r_eff, same = PBFCL_COLLIDER_SAME, on = PBFCL_COLLIDER_ON_FACE;
    for (int j = 0; j < r->count; j++) {
        if (r->c[j].shape != shape)
            continue;
        double off = 1.0 - dot(r->c[j].n, nw), dw = fabs(r->c[j].w - w);
        if (off < same && dw < same)
            return;
        if (off < 3 * same && dw < 3 * same)
            r->ambiguous = true;
        if (kind == 'e' && r->c[j].face) {
            double from_face = fabs(dot(r->c[j].n, pw) + r->c[j].w + r_eff);
            if (from_face > on / 2 && from_face < 2 * on)
                r->ambiguous = true;
            if (from_face < on)
                return;
        }
    }
    ck_assert_msg(r->count < REF_MOST, "more than %d contacts in the reference", REF_MOST);
    r->c[r->count++] = (ref_contact){nw, w, shape, kind == 'f'};
}

/* The closest point of triangle a, b, c to x: the nearest of the face's interior projection,
 * edges and corners. */
static dvec ref_closest(dvec x, dvec a, dvec b, dvec c)
{
    dvec nrm = cross(sub(b, a), sub(c, a));
    nrm = mul(nrm, 1.0 / len(nrm));
    dvec best = a, ends[3][2] = {{a, b}, {b, c}, {c, a}};
    dvec p = sub(x, mul(nrm, dot(sub(x, a), nrm)));
    double e0 = dot(cross(sub(b, a), sub(p, a)), nrm), e1 = dot(cross(sub(c, b), sub(p, b)), nrm),
           e2 = dot(cross(sub(a, c), sub(p, c)), nrm);
    if (e0 >= 0 && e1 >= 0 && e2 >= 0)
        return p;
    for (int e = 0; e < 3; e++) {
        dvec u = sub(ends[e][1], ends[e][0]);
        double f = fmin(fmax(dot(sub(x, ends[e][0]), u) / dot(u, u), 0.0), 1.0);
        dvec q = add(ends[e][0], mul(u, f));
        if (len(sub(x, q)) < len(sub(x, best)))
            best = q;
    }
    return best;
}

/* Triangle t's contact for the path x0 -> x1 (the kernel's rules, written out): its face's
 * when faces, else its edge's or corner's. */
static void ref_triangle(ref_result *r, const pbfcl_collider_shape *s, int shape, const float *t,
                         dvec x0, dvec x1, double reach, double r_eff, bool faces)
{
    dvec a = fv(t), b = fv(t + 4), c = fv(t + 8), nrm = cross(sub(b, a), sub(c, a));
    nrm = mul(nrm, 1.0 / len(nrm));
    bool two = s->flags & PBFCL_COLLIDER_TWO_SIDED;
    double s0 = dot(sub(x0, a), nrm), side = (two && s0 < 0) ? -1 : 1;
    near_threshold(r, s0, 0.0);
    s0 *= side;
    double s1 = dot(sub(x1, a), nrm) * side;
    near_threshold(r, s0, -reach);
    near_threshold(r, s1, reach);
    if (s0 >= -reach && s1 < reach) {
        dvec p = x1;
        if (s1 < 0 && s0 > 0)
            p = add(x0, mul(sub(x1, x0), s0 / (s0 - s1)));
        /* x1's (or the crossing's) foot on the face, or x0's with x1 within reach of it */
        bool above = false;
        double near = len(sub(x1, ref_closest(x1, a, b, c)));
        near_threshold(r, near, reach);
        dvec feet[2] = {p, x0};
        for (int f = 0; f < 2 && (f == 0 || near < reach); f++) {
            dvec q = sub(feet[f], mul(nrm, dot(sub(feet[f], a), nrm)));
            double e0 = dot(cross(sub(b, a), sub(q, a)), nrm),
                   e1 = dot(cross(sub(c, b), sub(q, b)), nrm),
                   e2 = dot(cross(sub(a, c), sub(q, c)), nrm);
            near_threshold(r, e0, 0.0);
            near_threshold(r, e1, 0.0);
            near_threshold(r, e2, 0.0);
            above = above || (e0 >= 0 && e1 >= 0 && e2 >= 0);
        }
        if (s0 >= 0 && above) {
            dvec n = mul(nrm, side);
            if (faces)
                ref_add(r, s, shape, 'f', n, sub(x1, mul(n, s1)), r_eff);
            return;
        }
    }
    if (faces)
        return;
    dvec best = ref_closest(x1, a, b, c);
    double dist = len(sub(x1, best));
    near_threshold(r, dist, reach);
    near_threshold(r, s1, 0.0);
    if (!(dist < reach) || (!two && s1 < 0))
        return;
    ref_add(r, s, shape, 'e', mul(sub(x1, best), 1.0 / dist), best, r_eff);
}

/* Every contact of a particle moving x -> xs, testing every shape and triangle. */
static void reference_narrow(const pbfcl_colliders *c, const float *planes, const float *tris,
                             dvec x, dvec xs, ref_result *r)
{
    memset(r, 0, sizeof *r);
    for (int s = 0; s < c->count; s++) {
        const pbfcl_collider_shape *sh = &c->rows[s];
        double r_eff = RADIUS + sh->margin, reach = r_eff + RADIUS;
        dvec x0 = rot(sh->prev_rotation, sub(x, fv(sh->prev_position)), true);
        dvec x1 = rot(sh->rotation, sub(xs, fv(sh->position)), true);
        if (sh->type == PBFCL_COLLIDER_MESH) {
            for (int faces = 1; faces >= 0; faces--)
                for (unsigned t = 0; t < sh->count; t++)
                    ref_triangle(r, sh, s, tris + 12 * (sh->first + t), x0, x1, reach, r_eff,
                                 faces);
            continue;
        }
        dvec n, n0;
        double d = ref_primitive(sh, planes, x1, &n, r);
        double d0 = ref_primitive(sh, planes, x0, &n0, r);
        near_threshold(r, d, reach);
        near_threshold(r, d0, 0.0);
        if (d0 < 0 && r->inside == 0) {
            r->inside = (unsigned)s + 1;
            r->move = mul(rot(sh->prev_rotation, n0, false), r_eff - d0);
        }
        if (d < reach)
            ref_add(r, sh, s, 'p', n, sub(x1, mul(n, d)), r_eff);
    }
}

/* ---- the cases -------------------------------------------------------------------------- */

/* The constants the kernels read: r, dt, mass. */
static pbfcl_pbf_params params_block(void)
{
    pbfcl_pbf_params p = {0};
    p.radius = RADIUS;
    p.min_dist = 2 * RADIUS;
    p.dt = DT;
    p.inv_dt = 1.0f / DT;
    p.mass = 0.064f;
    for (int k = 0; k < 3; k++) { /* walls far away, but for the top: project clamps to it */
        p.box_min[k] = -10.0f;
        p.box_max[k] = k == 1 ? 0.2f : 10.0f;
    }
    return p;
}

static cl_mem params_buffer(pbfcl_cl *cl)
{
    pbfcl_pbf_params p = params_block();
    cl_mem buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, sizeof p, "params", &buf), PBFCL_OK);
    test_write_buffer(buf, &p, sizeof p);
    return buf;
}

static void add_shape(pbfcl_colliders *c, pbfcl_shape_desc d)
{
    int id;
    ck_assert_int_eq(pbfcl_colliders_add(c, &d, &id), PBFCL_OK);
}

/* Moving primitives: a sphere, a turning capsule, a box, a convex hull and a turning SDF. */
static void primitives(pbfcl_colliders *c)
{
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SPHERE,
                                    .radius = 0.1f,
                                    .position = {-0.2f, 0.0f, 0.0f},
                                    .velocity = {0.5f, -0.3f, 0.2f},
                                    .margin = 0.005f});
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_CAPSULE,
                                    .radius = 0.06f,
                                    .half_length = 0.1f,
                                    .position = {0.2f, 0.0f, 0.0f},
                                    .rotation = {0.2f, 0.3f, 0.1f, 0.9f},
                                    .angular_velocity = {1.0f, 2.0f, -3.0f}});
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_BOX,
                                    .half_extents = {0.08f, 0.05f, 0.1f},
                                    .position = {0.0f, 0.2f, 0.0f},
                                    .rotation = {-0.3f, 0.1f, 0.4f, 0.8f},
                                    .velocity = {0.0f, 1.0f, 0.0f},
                                    .angular_velocity = {0.0f, 0.0f, 4.0f}});
    static const float pts[] = {0.1f,  0,     0,     -0.1f, 0,    0,     0, 0.08f, 0,
                                0,     -0.1f, 0,     0,     0,    0.09f, 0, 0,     -0.1f,
                                0.05f, 0.05f, 0.05f, 0.0f,  0.0f, 0.0f}; /* the last lies inside */
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_CONVEX,
                                    .points = pts,
                                    .point_count = 8,
                                    .position = {0.0f, -0.2f, 0.05f},
                                    .rotation = {0.1f, 0.0f, 0.2f, 1.0f}});
    float *sv;
    unsigned *st;
    size_t nv, nt;
    sphere_mesh(3, 0.08f, &sv, &nv, &st, &nt); /* a coarse sphere: its edges and corners show */
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SDF,
                                    .vertices = sv,
                                    .vertex_count = nv,
                                    .triangles = st,
                                    .triangle_count = nt,
                                    .sdf_resolution = 13,
                                    .position = {0.2f, 0.2f, -0.1f},
                                    .rotation = {0.3f, -0.2f, 0.1f, 0.9f},
                                    .velocity = {-0.5f, 0.0f, 0.3f},
                                    .angular_velocity = {2.0f, 0.0f, 1.0f},
                                    .margin = 0.003f});
    free(sv);
    free(st);
}

/* A closed one-sided tetrahedron, away from it a two-sided square of two triangles, and below
 * them a one-sided floor of 32 triangles. */
static void meshes(pbfcl_colliders *c)
{
    static const float tv[] = {0, 0, 0, 0.2f, 0, 0, 0, 0.2f, 0, 0, 0, 0.2f};
    static const unsigned tt[] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_MESH,
                                    .vertices = tv,
                                    .vertex_count = 4,
                                    .triangles = tt,
                                    .triangle_count = 4,
                                    .position = {-0.3f, 0.0f, 0.0f},
                                    .velocity = {0.4f, 0.0f, 0.0f},
                                    .angular_velocity = {0.0f, 2.0f, 0.0f}});
    static const float qv[] = {-0.1f, 0, -0.1f, 0.1f, 0, -0.1f, 0.1f, 0, 0.1f, -0.1f, 0, 0.1f};
    static const unsigned qt[] = {0, 2, 1, 0, 3, 2};
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_MESH,
                                    .vertices = qv,
                                    .vertex_count = 4,
                                    .triangles = qt,
                                    .triangle_count = 2,
                                    .two_sided = 1,
                                    .position = {0.3f, 0.0f, 0.0f},
                                    .rotation = {0.3f, 0.0f, 0.0f, 1.0f}});
    float gv[25 * 3]; /* a one-sided floor of 4 x 4 squares: its grid has 4 x 1 x 4 cells */
    unsigned gt[32 * 3];
    for (int v = 0; v < 25; v++) {
        gv[3 * v] = -0.3f + 0.15f * (float)(v % 5);
        gv[3 * v + 1] = 0.01f * (float)((v * 7) % 3); /* not quite flat */
        gv[3 * v + 2] = -0.3f + 0.15f * (float)(v / 5);
    }
    for (int q = 0; q < 16; q++) {
        unsigned a = (unsigned)(q % 4 + 5 * (q / 4)), t[6] = {a, a + 5, a + 1, a + 1, a + 5, a + 6};
        memcpy(gt + 6 * q, t, sizeof t);
    }
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_MESH,
                                    .vertices = gv,
                                    .vertex_count = 25,
                                    .triangles = gt,
                                    .triangle_count = 32,
                                    .position = {0.0f, -0.45f, 0.1f},
                                    .velocity = {0.0f, 0.5f, 0.0f}});
}

/* n particles: x* within 0.15 of a random shape's centre (mesh: near a random triangle's surface)
 * and x a random move of up to 0.06 back. */
static void particles(const pbfcl_colliders *c, size_t n, bool near_mesh, uint64_t *rng, float *x,
                      float *xs)
{
    for (size_t i = 0; i < n; i++) {
        const float *at = c->shape[test_rand(rng) % (unsigned)c->count].row.position;
        for (int k = 0; k < 4; k++) /* about a shape */
            xs[4 * i + k] = k < 3 ? at[k] + test_randf(rng, -0.15f, 0.15f) : 0.0f;
        if (near_mesh) { /* a point of a triangle, moved a little off it, in the world */
            int s = (int)(test_rand(rng) % (unsigned)c->count);
            const pbfcl_collider_geometry *g = &c->shape[s].geo;
            const float *t = g->tris + 12 * (test_rand(rng) % g->tri_count);
            float u = test_randf(rng, 0, 1), v = test_randf(rng, 0, 1 - u);
            dvec p = v3(0, 0, 0);
            for (int k = 0; k < 3; k++)
                ((double *)&p)[k] = t[k] + u * (t[4 + k] - t[k]) + v * (t[8 + k] - t[k]) +
                                    test_randf(rng, -0.05f, 0.05f);
            p = add(rot(c->shape[s].row.rotation, p, false), fv(c->shape[s].row.position));
            xs[4 * i] = (float)p.x, xs[4 * i + 1] = (float)p.y, xs[4 * i + 2] = (float)p.z;
        }
        for (int k = 0; k < 4; k++)
            x[4 * i + k] = xs[4 * i + k] + (k < 3 ? test_randf(rng, -0.06f, 0.06f) : 0.0f);
    }
}

/* Whether the kernel's contact slots of particle i hold exactly the reference's contacts. */
static bool same_contacts(const ref_result *r, const float *planes, const int *shapes, size_t i)
{
    int count = 0;
    for (int k = 0; k < K; k++)
        count += shapes[K * i + k] >= 0;
    if (count != r->count)
        return false;
    for (int j = 0; j < r->count; j++) {
        bool found = false;
        for (int k = 0; k < K && !found; k++) {
            const float *p = planes + 4 * (K * i + k);
            found = shapes[K * i + k] == r->c[j].shape && fabs(p[0] - r->c[j].n.x) < 1e-3 &&
                    fabs(p[1] - r->c[j].n.y) < 1e-3 && fabs(p[2] - r->c[j].n.z) < 1e-3 &&
                    fabs(p[3] - r->c[j].w) < 1e-4;
        }
        if (!found)
            return false;
    }
    return true;
}

/* The device geometry as uploaded (planes and triangles of every shape). */
static void read_geometry(pbfcl_colliders *c, float **planes, float **tris)
{
    size_t np = 0, nt = 0;
    for (int s = 0; s < c->count; s++) {
        np += c->shape[s].geo.plane_count;
        nt += c->shape[s].geo.tri_count;
    }
    *planes = malloc(np * 16 + 16);
    *tris = malloc(nt * 48 + 16);
    test_read_buffer(c->plane_buf, *planes, np * 16);
    test_read_buffer(c->tri_buf, *tris, nt * 48);
}

static void check_narrow(pbfcl_cl *cl, bool mesh_case)
{
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    (mesh_case ? meshes : primitives)(c);
    cl_mem params = params_buffer(cl);
    size_t wg = 64;
    size_t sizes[] = {0, 1, wg - 1, wg, wg + 1, test_small() ? 131 : 4099};
    uint64_t rng = mesh_case ? 777 : 4242;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z], cap = n + 3, compared = 0, touching = 0;
        float *x = malloc(cap * 16), *xs = malloc(cap * 16), *planes = malloc(cap * K * 16);
        int *shapes = malloc(cap * K * sizeof *shapes);
        particles(c, n, mesh_case, &rng, x, xs);
        cl_mem pos, pred;
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 16, "x", &pos), PBFCL_OK);
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 16, "x*", &pred), PBFCL_OK);
        test_write_buffer(pos, x, n * 16);
        test_write_buffer(pred, xs, n * 16);
        pbfcl_colliders_run r = {cl, NULL, params, n, cap, wg, DT};
        ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pred, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_colliders_read_contacts(c, cl, n, planes, shapes), PBFCL_OK);
        unsigned *inside = malloc(cap * 4);
        float *moved = malloc(cap * 16);
        test_read_buffer(c->inside_buf, inside, n * 4);
        test_read_buffer(pos, moved, n * 16);
        float *gp, *gt;
        read_geometry(c, &gp, &gt);
        for (size_t i = 0; i < n; i++) {
            ref_result ref;
            reference_narrow(c, gp, gt, fv(x + 4 * i), fv(xs + 4 * i), &ref);
            if (ref.ambiguous || ref.count > K) /* more: the deepest K, ties either way */
                continue;
            compared++;
            touching += ref.count > 0;
            expect(same_contacts(&ref, planes, shapes, i),
                   "n %zu, particle %zu: the kernel's contacts (first shape %d of %d slots) are "
                   "not the reference's %d",
                   n, i, shapes[K * i], K, ref.count);
            expect(inside[i] == ref.inside, "n %zu, particle %zu: inside %u, expected %u", n, i,
                   inside[i], ref.inside);
            dvec want = add(fv(x + 4 * i), ref.move);
            expect(fabs(moved[4 * i] - want.x) < 1e-5 && fabs(moved[4 * i + 1] - want.y) < 1e-5 &&
                       fabs(moved[4 * i + 2] - want.z) < 1e-5 && moved[4 * i + 3] == x[4 * i + 3],
                   "n %zu, particle %zu: x (%g, %g, %g), expected (%g, %g, %g)", n, i, moved[4 * i],
                   moved[4 * i + 1], moved[4 * i + 2], want.x, want.y, want.z);
        }
        ck_assert(n < 100 || (compared > n * 9 / 10 && touching > n / 10));
        printf("    %s, n %zu: %zu compared, %zu with contacts\n",
               mesh_case ? "meshes" : "primitives", n, compared, touching);
        free(gp), free(gt), free(inside), free(moved), free(x), free(xs), free(planes),
            free(shapes);
        pbfcl_cl_release_buffer(&pos);
        pbfcl_cl_release_buffer(&pred);
    }
    pbfcl_cl_release_buffer(&params);
    pbfcl_colliders_destroy(c);
}

/* A cone of 10 triangles about its tip (0.1 m high, 0.1 m in radius), and particles whose x*
 * lies r / 2 to 3r / 2 above the tip, within r / 50 of its axis: no face lies beneath them,
 * and every triangle's corner at the tip is within reach, more edge contacts than the narrow
 * phase's one walk holds aside (COL_HELD_EDGES, 8, cl/colliders/colliders.cl), so it takes
 * its second walk. Their contacts are the reference's (one: the tip's plane); without the
 * second walk they had none. */
static void run_many_edges(pbfcl_cl *cl)
{
    enum { FAN = 10, N = 97 };
    float v[3 * (FAN + 1)] = {0, 0.1f, 0};
    unsigned t[3 * FAN];
    for (int k = 0; k < FAN; k++) {
        double a = 2.0 * 3.14159265358979 * k / FAN;
        v[3 * (k + 1)] = (float)(0.1 * cos(a));
        v[3 * (k + 1) + 2] = (float)(0.1 * sin(a));
        t[3 * k] = 0, t[3 * k + 1] = (unsigned)(1 + (k + 1) % FAN),
              t[3 * k + 2] = (unsigned)(1 + k);
    }
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_MESH,
                                    .vertices = v,
                                    .vertex_count = FAN + 1,
                                    .triangles = t,
                                    .triangle_count = FAN,
                                    .two_sided = 1,
                                    .position = {0.1f, -0.1f, 0.05f}});
    cl_mem params = params_buffer(cl);
    uint64_t rng = 2024;
    float x[4 * N], xs[4 * N], planes[4 * K * N];
    int shapes[K * N];
    for (int i = 0; i < N; i++) {
        float tip[3] = {0.1f, 0.0f, 0.05f};
        xs[4 * i] = tip[0] + test_randf(&rng, -0.02f, 0.02f) * RADIUS;
        xs[4 * i + 1] = tip[1] + test_randf(&rng, 0.5f, 1.5f) * RADIUS;
        xs[4 * i + 2] = tip[2] + test_randf(&rng, -0.02f, 0.02f) * RADIUS;
        xs[4 * i + 3] = x[4 * i + 3] = 0.0f;
        for (int k = 0; k < 3; k++)
            x[4 * i + k] = xs[4 * i + k] + (k == 1 ? 0.25f * RADIUS : 0.0f);
    }
    cl_mem pos, pred;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof x, "x", &pos), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof xs, "x*", &pred), PBFCL_OK);
    test_write_buffer(pos, x, sizeof x);
    test_write_buffer(pred, xs, sizeof xs);
    pbfcl_colliders_run r = {cl, NULL, params, N, N, 64, DT};
    ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pred, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_colliders_read_contacts(c, cl, N, planes, shapes), PBFCL_OK);
    float *gp, *gt;
    read_geometry(c, &gp, &gt);
    int compared = 0;
    for (int i = 0; i < N; i++) {
        ref_result ref;
        reference_narrow(c, gp, gt, fv(x + 4 * i), fv(xs + 4 * i), &ref);
        if (ref.ambiguous)
            continue;
        compared++;
        expect(ref.count == 1 && same_contacts(&ref, planes, shapes, i),
               "particle %d above the cone's tip: the kernel's contacts (first shape %d) are not "
               "the reference's %d",
               i, shapes[K * i], ref.count);
    }
    ck_assert_msg(compared > N * 9 / 10, "%d of %d compared", compared, N);
    printf("    many edges: %d particles above a cone's tip of %d triangles compared\n", compared,
           FAN);
    free(gp), free(gt);
    pbfcl_cl_release_buffer(&pos);
    pbfcl_cl_release_buffer(&pred);
    pbfcl_cl_release_buffer(&params);
    pbfcl_colliders_destroy(c);
}

START_TEST(test_colliders_many_edges)
{
    test_each_device(run_many_edges);
}
END_TEST

/* A container's inner corner: two two-sided walls of a mesh, x = 0 and z = 0 (each 0.4 m
 * square, cut into quads of 0.1 m), and particles resting r from both with their x* moved past
 * one wall's plane by r / 4 or r / 2 and up, at heights on and between the quads' borders. After
 * the narrow phase and one projection every x* is held r from both walls (within 1e-6 m), as
 * two walls of the box hold it. Not so when a face counts only if x1 lies above it: x1 past
 * the wall x = 0 is no longer above the wall z = 0, whose border in the plane x = 0 is no
 * contact of its own, and x* stayed up to r / 2 behind the wall z = 0 (it went out of
 * mesh-container's tank). */
static void run_inner_corner(pbfcl_cl *cl)
{
    enum { Q = 4, V = (Q + 1) * (Q + 1) };
    float v[2 * V * 3];
    unsigned t[2 * Q * Q * 6];
    for (int w = 0; w < 2; w++) /* wall 0: x = 0 (y, z), wall 1: z = 0 (x, y) */
        for (int k = 0; k < V; k++) {
            float u = 0.1f * (float)(k % (Q + 1)), h = 0.1f * (float)(k / (Q + 1));
            float *p = v + 3 * (w * V + k);
            p[0] = w ? u : 0.0f, p[1] = h, p[2] = w ? 0.0f : u;
        }
    for (int w = 0; w < 2; w++)
        for (int q = 0; q < Q * Q; q++) {
            unsigned a = (unsigned)(w * V + q % Q + (Q + 1) * (q / Q));
            unsigned tt[6] = {a, a + Q + 1, a + 1, a + 1, a + Q + 1, a + Q + 2};
            memcpy(t + 6 * (w * Q * Q + q), tt, sizeof tt);
        }
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_MESH,
                                    .vertices = v,
                                    .vertex_count = 2 * V,
                                    .triangles = t,
                                    .triangle_count = 4 * Q * Q,
                                    .two_sided = 1});
    cl_mem params = params_buffer(cl);
    enum { N = 3 * 5 };
    float x[4 * N], xs[4 * N], q[4 * N], w[N];
    for (int i = 0; i < N; i++) {
        /* past the wall x = 0 (z at rest), or past it and into z's contact plane, or the
         * other way round: by r / 4 or r / 2 */
        float y = 0.05f + 0.025f * (float)(i / 3), into = 0.25f * RADIUS * (float)(1 + i % 2);
        int kind = i % 3;
        float at[4] = {RADIUS, y, RADIUS, 0.0f};
        float to[4] = {kind == 2 ? RADIUS - into : -into, y + 0.3f * RADIUS,
                       kind == 0   ? RADIUS
                       : kind == 1 ? RADIUS - into
                                   : -into,
                       0.0f};
        memcpy(x + 4 * i, at, sizeof at);
        memcpy(xs + 4 * i, to, sizeof to);
        w[i] = 1.0f;
    }
    cl_mem pos, pred, im;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof x, "x", &pos), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof xs, "x*", &pred), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof w, "w", &im), PBFCL_OK);
    test_write_buffer(pos, x, sizeof x);
    test_write_buffer(pred, xs, sizeof xs);
    test_write_buffer(im, w, sizeof w);
    pbfcl_colliders_run r = {cl, NULL, params, N, N, 64, DT};
    ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pred, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_colliders_project(c, &r, pos, pred, im, NULL), PBFCL_OK);
    test_read_buffer(pred, q, sizeof q);
    for (int i = 0; i < N; i++)
        expect(q[4 * i] > RADIUS - 1e-6f && q[4 * i + 2] > RADIUS - 1e-6f,
               "particle %d (x* %g, %g, %g): held at (%g, %g, %g), not r = %g from both walls", i,
               xs[4 * i], xs[4 * i + 1], xs[4 * i + 2], q[4 * i], q[4 * i + 1], q[4 * i + 2],
               RADIUS);
    printf("    inner corner: %d particles past a wall's plane held r from both walls\n", N);
    /* pbfcl_colliders_hold, before the density, holds x* out of a mesh's planes as out of any
     * shape's: the same x* end where the iterations' projection put them */
    float held[4 * N];
    test_write_buffer(pred, xs, sizeof xs);
    ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pred, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_colliders_hold(c, &r, pos, pred, im, NULL), PBFCL_OK);
    test_read_buffer(pred, held, sizeof held);
    for (int i = 0; i < N; i++)
        expect(held[4 * i] == q[4 * i] && held[4 * i + 1] == q[4 * i + 1] &&
                   held[4 * i + 2] == q[4 * i + 2],
               "particle %d (x* %g, %g, %g): held at (%g, %g, %g), projected to (%g, %g, %g)", i,
               xs[4 * i], xs[4 * i + 1], xs[4 * i + 2], held[4 * i], held[4 * i + 1],
               held[4 * i + 2], q[4 * i], q[4 * i + 1], q[4 * i + 2]);
    pbfcl_cl_release_buffer(&pos);
    pbfcl_cl_release_buffer(&pred);
    pbfcl_cl_release_buffer(&im);
    pbfcl_cl_release_buffer(&params);
    pbfcl_colliders_destroy(c);
}

START_TEST(test_colliders_inner_corner)
{
    test_each_device(run_inner_corner);
}
END_TEST

/* ---- the multilevel grid's solid cells (cl/pbf/multilevel.cl) -------------------------------- */

/* The multilevel correction's grid in its tests: cells of 0.03 m, 31 x 29 x 27 from ML_LO. */
static const float ML_LO[3] = {-0.43f, -0.41f, -0.37f}, ML_DX = 0.03f;
static const cl_uint ML_DIMS[3] = {31, 29, 27};

/* The shapes of the multilevel tests: a square mesh turned 0.5 rad about y at y = 0.015, first
 * (so that a kernel that takes the first shape within reach takes it over the primitives'
 * cells), then the moving primitives. */
static pbfcl_colliders *ml_shapes(void)
{
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    static const float qv[] = {-0.1f, 0, -0.1f, 0.1f, 0, -0.1f, 0.1f, 0, 0.1f, -0.1f, 0, 0.1f};
    static const unsigned qt[] = {0, 2, 1, 0, 3, 2};
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_MESH,
                                    .vertices = qv,
                                    .vertex_count = 4,
                                    .triangles = qt,
                                    .triangle_count = 2,
                                    .position = {0.01f, 0.015f, -0.02f},
                                    .rotation = {0.0f, 0.2474f, 0.0f, 0.9689f}});
    primitives(c);
    return c;
}

/* The multilevel program, built for work-groups of wg. */
static cl_program ml_program(pbfcl_cl *cl, size_t wg)
{
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_MULTILEVEL);
    pbfcl_build_config cfg = {.wg_size = (unsigned)wg};
    char options[512];
    ck_assert_int_ge(pbfcl_build_options(&cfg, options, sizeof options), 0);
    cl_program program = NULL;
    ck_assert_int_eq(pbfcl_cl_build(cl, desc->files, desc->nfiles, options, &program), PBFCL_OK);
    return program;
}

/* The touch word's side f (cl/pbf/multilevel.cl, ML_TOUCH_BITS: 5-bit fields). */
static unsigned touch_side(unsigned touch, int f)
{
    return (touch >> (5 * f)) & 31u;
}

/* ml_solids and ml_shape_push (the multilevel correction's collision shapes, host/core/pbf/
 * multilevel.c) on a grid of 0.03 m cells, 31 x 29 x 27 from (-0.43, -0.41, -0.37), over the
 * moving primitives and a mesh after a narrow phase (which moves them to the substep's end and
 * uploads the table). ml_solids, from random particle counts and touch words (each fluid cell's
 * six sides touched by 0 to 3 devices) over stale flags: every cell with particles is fluid (1);
 * an empty cell beside one is solid where a fluid neighbour's touch word marks the side facing it,
 * as 2 + the primitive nearest its centre within two cells (its bounds too), else the first mesh
 * whose bounds reach as near (2, the first shape, if none; the mesh is added first, so that a
 * kernel taking the first shape within reach fails), and air (0) where none does, whatever lies
 * there; an empty cell with no fluid beside it is 2 + the first primitive whose distance at its
 * centre (ref_primitive, in the shape's end pose) is below 0, else air. Distances and bounds within
 * TOL of their thresholds, and ties between primitives, are not compared. ml_shape_push: from
 * random phi, each shape's sum over the faces between a fluid cell and a cell of it of rho0 dx^2
 * phi (x the cell's share) along the normal into the shape, added to what its pressure sums held,
 * against a double-precision sum, with and without shares. */
static void check_ml_shapes(pbfcl_cl *cl)
{
    pbfcl_colliders *c = ml_shapes();
    cl_mem params = params_buffer(cl), pos, pred;
    size_t wg = 64;
    float x1[4] = {0.0f, 0.5f, 0.0f, 0.0f};
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 16, "x", &pos), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 16, "x*", &pred), PBFCL_OK);
    test_write_buffer(pos, x1, 16);
    test_write_buffer(pred, x1, 16);
    pbfcl_colliders_run r = {cl, NULL, params, 1, 1, wg, DT};
    ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pred, NULL), PBFCL_OK);
    pbfcl_colliders_solid_view sv;
    ck_assert(pbfcl_colliders_solids(c, &sv));
    ck_assert_uint_eq(sv.count, (unsigned)c->count);

    /* the multilevel program, and a params block whose box starts at the grid's corner */
    cl_program program = ml_program(cl, wg);
    pbfcl_pbf_params p = {0};
    const float *lo = ML_LO, dx = ML_DX;
    const cl_uint *d = ML_DIMS;
    memcpy(p.box_min, lo, 3 * sizeof *lo);
    cl_mem grid_params;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, sizeof p, "params", &grid_params),
                     PBFCL_OK);
    test_write_buffer(grid_params, &p, sizeof p);

    size_t cells = (size_t)d[0] * d[1] * d[2];
    unsigned *counts = malloc(cells * 4), *touch = malloc(cells * 4), *flag = malloc(cells * 4),
             *got = malloc(cells * 4);
    uint64_t rng = 99;
    for (size_t i = 0; i < cells; i++) {
        counts[i] = test_rand(&rng) % 5 == 0 ? 1 + test_rand(&rng) % 4 : 0; /* a fifth fluid */
        touch[i] = 0;
        for (int f = 0; f < 6 && counts[i] > 0; f++) /* a side in 6 touched, by 1 to 3 devices */
            if (test_rand(&rng) % 6 == 0)
                touch[i] |= (1u + (unsigned)(test_rand(&rng) % 3)) << (5 * f);
        flag[i] = counts[i] > 0;
        got[i] = test_rand(&rng) % 9; /* stale flags: every one is written */
    }
    cl_mem count_buf, touch_buf, flag_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "counts", &count_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "touch", &touch_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "flags", &flag_buf),
                     PBFCL_OK);
    test_write_buffer(count_buf, counts, cells * 4);
    test_write_buffer(touch_buf, touch, cells * 4);
    test_write_buffer(flag_buf, got, cells * 4);
    cl_kernel k;
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_solids", &k), PBFCL_OK);
    cl_uint count = sv.count;
    ck_assert_int_eq(clSetKernelArg(k, 0, sizeof(cl_mem), &grid_params), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 1, sizeof(cl_mem), &count_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 2, sizeof(cl_mem), &touch_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 3, sizeof(cl_mem), &flag_buf), CL_SUCCESS);
    for (cl_uint a = 0; a < 3; a++)
        ck_assert_int_eq(clSetKernelArg(k, 4 + a, sizeof(cl_uint), &d[a]), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 7, sizeof dx, &dx), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 8, sizeof(cl_mem), &sv.shapes), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 9, sizeof(cl_mem), &sv.planes), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 10, sizeof count, &count), CL_SUCCESS);
    ck_assert_int_eq(pbfcl_cl_launch(cl, k, cells, wg, NULL, PBFCL_STAGE_SOLVE), PBFCL_OK);
    clReleaseKernel(k);
    test_read_buffer(flag_buf, got, cells * 4);
    float *gp, *gt;
    read_geometry(c, &gp, &gt);
    size_t solid = 0, compared = 0, aired = 0;
    int per_shape[PBFCL_COLLIDER_MAX_SHAPES] = {0};
    for (size_t i = 0; i < cells; i++) {
        unsigned want = flag[i];
        bool near = false, beside = false, touched = false;
        dvec at = v3(lo[0] + (i % d[0] + 0.5) * dx, lo[1] + ((i / d[0]) % d[1] + 0.5) * dx,
                     lo[2] + (i / (d[0] * d[1]) + 0.5) * dx);
        size_t ix[3] = {i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])};
        size_t step[3] = {1, d[0], (size_t)d[0] * d[1]};
        for (int f = 0; f < 6 && want == 0; f++) { /* neighbour on side f; this cell on its f ^ 1 */
            int a = f / 2, up = f % 2;
            if (up ? ix[a] + 1 >= d[a] : ix[a] == 0)
                continue;
            size_t j = up ? i + step[a] : i - step[a];
            beside = beside || counts[j] > 0;
            touched = touched || (counts[j] > 0 && touch_side(touch[j], f ^ 1) > 0);
        }
        double reach = touched ? 2.0 * dx : 0.0, nearest = INFINITY, second = INFINITY;
        int primitive = -1, mesh = -1; /* touched: the nearest primitive, the first mesh */
        bool inside_any = false; /* an empty cell beside fluid, not touched: air, even inside */
        for (int s = 0; s < c->count && want == 0 && !near && (touched || !beside); s++) {
            const pbfcl_collider_shape *sh = &c->rows[s];
            bool out = false;
            const double xyz[3] = {at.x, at.y, at.z};
            for (int a = 0; a < 3; a++) {
                double below = sh->bounds_min[a] - reach - xyz[a];
                double above = xyz[a] - sh->bounds_max[a] - reach;
                near = near || fabs(below) < TOL || fabs(above) < TOL;
                out = out || below > 0 || above > 0;
            }
            if (out || near)
                continue;
            if (sh->type == PBFCL_COLLIDER_MESH) {
                mesh = touched && mesh < 0 ? s : mesh;
                continue;
            }
            dvec n, local = rot(sh->rotation, sub(at, fv(sh->position)), true);
            ref_result rr = {0};
            double dist = ref_primitive(sh, gp, local, &n, &rr);
            near = fabs(dist - reach) < TOL;
            if (!touched && dist < 0 && !near)
                want = 2u + (unsigned)s;
            if (touched && dist < reach && !near) {
                if (dist < nearest) {
                    second = nearest;
                    nearest = dist;
                    primitive = s;
                } else {
                    second = fmin(second, dist);
                }
            }
        }
        near = near || (primitive >= 0 && second - nearest < TOL); /* a tie picks either */
        if (touched)
            want = 2u + (unsigned)(primitive >= 0 ? primitive : (mesh >= 0 ? mesh : 0));
        if (near)
            continue;
        if (beside && !touched && counts[i] == 0) { /* inside a primitive or not, air */
            for (int s = 0; s < c->count; s++) {
                const pbfcl_collider_shape *sh = &c->rows[s];
                if (sh->type == PBFCL_COLLIDER_MESH)
                    continue;
                dvec n, local = rot(sh->rotation, sub(at, fv(sh->position)), true);
                ref_result rr = {0};
                inside_any = inside_any || ref_primitive(sh, gp, local, &n, &rr) < -TOL;
            }
            aired += inside_any;
        }
        compared++;
        solid += want >= 2;
        if (want >= 2)
            per_shape[want - 2]++;
        expect(got[i] == want, "cell %zu at (%g, %g, %g): flag %u, expected %u", i, at.x, at.y,
               at.z, got[i], want);
    }
    printf("    ml_solids: %zu of %zu cells compared, %zu solid, %d by the mesh; %zu inside a "
           "primitive beside untouched fluid, air\n",
           compared, cells, solid, per_shape[0], aired);
    for (int s = 0; s < c->count; s++) /* every shape holds cells, the mesh too */
        ck_assert_msg(per_shape[s] > 0, "shape %d has no solid cell", s);
    ck_assert_msg(aired > 0, "no cell inside a primitive beside untouched fluid was compared");

    /* ml_shape_push: the pressure sums of every shape, from random phi and shares */
    float *phi = malloc(cells * 4), *share = malloc(cells * 4);
    for (size_t i = 0; i < cells; i++) {
        phi[i] = test_randf(&rng, -1.0f, 0.2f);
        share[i] = test_randf(&rng, 0.0f, 1.0f);
    }
    size_t groups = sv.groups, rows = (size_t)count * groups;
    float *before = malloc(rows * 16), *after = malloc(rows * 16);
    for (size_t i = 0; i < rows * 4; i++)
        before[i] = test_randf(&rng, -1.0f, 1.0f);
    cl_mem phi_buf, share_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "phi", &phi_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "share", &share_buf),
                     PBFCL_OK);
    test_write_buffer(phi_buf, phi, cells * 4);
    test_write_buffer(share_buf, share, cells * 4);
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_shape_push", &k), PBFCL_OK);
    const float rho0 = 1000.0f, scale = rho0 * dx * dx;
    for (int shared = 0; shared < 2; shared++) {
        test_write_buffer(sv.pressure, before, rows * 16);
        cl_mem sh = shared ? share_buf : NULL;
        ck_assert_int_eq(clSetKernelArg(k, 0, sizeof(cl_mem), &phi_buf), CL_SUCCESS);
        ck_assert_int_eq(clSetKernelArg(k, 1, sizeof(cl_mem), &flag_buf), CL_SUCCESS);
        for (cl_uint a = 0; a < 3; a++)
            ck_assert_int_eq(clSetKernelArg(k, 2 + a, sizeof(cl_uint), &d[a]), CL_SUCCESS);
        ck_assert_int_eq(clSetKernelArg(k, 5, sizeof scale, &scale), CL_SUCCESS);
        ck_assert_int_eq(clSetKernelArg(k, 6, sizeof(cl_mem), &sh), CL_SUCCESS);
        ck_assert_int_eq(clSetKernelArg(k, 7, sizeof(cl_mem), &sv.pressure), CL_SUCCESS);
        ck_assert_int_eq(clSetKernelArg(k, 8, wg * 16, NULL), CL_SUCCESS);
        size_t global[2] = {groups * wg, count}, local[2] = {wg, 1};
        ck_assert_int_eq(
            clEnqueueNDRangeKernel(cl->queue, k, 2, NULL, global, local, 0, NULL, NULL),
            CL_SUCCESS);
        test_read_buffer(sv.pressure, after, rows * 16);
        for (cl_uint s = 0; s < count; s++) {
            double want[3] = {0, 0, 0}, got3[3] = {0, 0, 0}, mag = 0;
            for (size_t i = 0; i < cells; i++) {
                if (got[i] != 1u)
                    continue;
                size_t at[3] = {i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])};
                size_t step[3] = {1, d[0], (size_t)d[0] * d[1]};
                double w = (double)phi[i] * (shared ? share[i] : 1.0) * rho0 * dx * dx;
                for (int a = 0; a < 3; a++) {
                    if (at[a] > 0 && got[i - step[a]] == 2u + s)
                        want[a] -= w, mag += fabs(w);
                    if (at[a] + 1 < d[a] && got[i + step[a]] == 2u + s)
                        want[a] += w, mag += fabs(w);
                }
            }
            for (size_t g = 0; g < groups; g++)
                for (int a = 0; a < 3; a++) {
                    size_t row = 4 * (s * groups + g) + (size_t)a;
                    got3[a] += (double)after[row] - before[row];
                }
            for (int a = 0; a < 3; a++)
                ck_assert_msg(fabs(got3[a] - want[a]) <= 1e-4 * mag + 1e-3,
                              "shares %d, shape %u, axis %d: pressure sum %.6g, expected %.6g",
                              shared, s, a, got3[a], want[a]);
            ck_assert_msg(mag > 0, "shape %u: no fluid face", s);
        }
    }
    clReleaseKernel(k);
    free(phi), free(share), free(before), free(after), free(counts), free(touch), free(flag),
        free(got), free(gp), free(gt);
    pbfcl_cl_release_buffer(&phi_buf);
    pbfcl_cl_release_buffer(&share_buf);
    pbfcl_cl_release_buffer(&flag_buf);
    pbfcl_cl_release_buffer(&count_buf);
    pbfcl_cl_release_buffer(&touch_buf);
    pbfcl_cl_release_buffer(&grid_params);
    pbfcl_cl_release_buffer(&params);
    pbfcl_cl_release_buffer(&pos);
    pbfcl_cl_release_buffer(&pred);
    clReleaseProgram(program);
    pbfcl_colliders_destroy(c);
}

START_TEST(test_colliders_multilevel_solids)
{
    test_each_device(check_ml_shapes);
}
END_TEST

/* ml_gather_shapes' touch words (cl/pbf/multilevel.cl, ML_TOUCH_BITS) on 2,999 particles (999
 * under Oclgrind) at random around the moving primitives and the mesh of check_ml_shapes, after a
 * narrow phase: each cell's word against one formed from the contact planes the narrow phase left
 * (read back), as pbf_shape_load counts them: a plane counts where d = n.x + w + r lies below h
 * (its Poly6 wall part above 0) and no plane of the same shape within 60 degrees lies nearer; a
 * counting plane marks side 2a of the particle's cell where its normal's a component exceeds 1/2
 * (the shape on the -a side) and 2a + 1 where it is below -1/2. Every 5th particle is a body's
 * (bodies on: no touch) and every 7th a ghost (another device's: nothing gathered). Planes within
 * TOL of h, of a 60 degree cut, or as near as another of their shape, are not compared (their cells
 * are left out). The kernel's count of each cell is checked too (every particle but the ghosts). */
static void check_ml_touch(pbfcl_cl *cl)
{
    const int N = test_small() ? 999 : 2999; /* Oclgrind: a third */
    pbfcl_colliders *c = ml_shapes();
    const float *lo = ML_LO, dx = ML_DX, h = 4.0f * RADIUS;
    const cl_uint *d = ML_DIMS;
    pbfcl_pbf_params p = params_block();
    p.h = h;
    p.h2 = h * h;
    p.poly6 = (float)(315.0 / (64.0 * 3.14159265358979 * pow(h, 9.0)));
    p.rest_density = 1000.0f;
    p.inv_rest_density = 1e-3f;
    for (int k = 0; k < 3; k++) {
        p.box_min[k] = lo[k];
        p.box_max[k] = 10.0f;
    }
    cl_mem params;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, sizeof p, "params", &params), PBFCL_OK);
    test_write_buffer(params, &p, sizeof p);
    float *x = malloc(N * 16);
    unsigned *phase = malloc(N * 4);
    unsigned char *ghost = malloc(N);
    uint64_t rng = 41;
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 3; k++)
            x[4 * i + k] = test_randf(&rng, -0.33f, 0.33f);
        x[4 * i + 3] = 0.0f;
        phase[i] = i % 5 == 4 ? 1u : PBFCL_PHASE_FLUID_WORD; /* every 5th a body's */
        ghost[i] = i % 7 == 6;
    }
    size_t wg = 64;
    cl_mem pos, pred;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, N * 16, "x", &pos), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, N * 16, "x*", &pred), PBFCL_OK);
    test_write_buffer(pos, x, N * 16);
    test_write_buffer(pred, x, N * 16);
    pbfcl_colliders_run r = {cl, NULL, params, N, N, wg, DT};
    ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pred, NULL), PBFCL_OK);
    cl_mem plane_buf, shape_buf, push_buf;
    ck_assert(pbfcl_colliders_planes(c, &plane_buf, &shape_buf, &push_buf));
    float *planes = malloc(N * K * 16);
    int *shape = malloc(N * K * 4);
    ck_assert_int_eq(pbfcl_colliders_read_contacts(c, cl, N, planes, shape), PBFCL_OK);

    cl_program program = ml_program(cl, wg);
    size_t cells = (size_t)d[0] * d[1] * d[2];
    unsigned *zero = calloc(cells, 4), *got = malloc(cells * 4), *got_count = malloc(cells * 4);
    unsigned none = 0;
    cl_mem sum_buf, count_buf, touch_buf, ncount, nlist, phase_buf, ghost_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "sums", &sum_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "counts", &count_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "touch", &touch_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, N * 4, "neighbour counts", &ncount),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 4, "neighbours", &nlist), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, N * 4, "phase", &phase_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, N, "ghost", &ghost_buf), PBFCL_OK);
    test_write_buffer(sum_buf, zero, cells * 4);
    test_write_buffer(count_buf, zero, cells * 4);
    test_write_buffer(touch_buf, zero, cells * 4);
    test_write_buffer(ncount, zero, N * 4); /* no neighbours: the touch reads only the planes */
    test_write_buffer(nlist, &none, 4);
    test_write_buffer(phase_buf, phase, N * 4);
    test_write_buffer(ghost_buf, ghost, N);
    cl_kernel k;
    ck_assert_int_eq(pbfcl_cl_kernel(program, "ml_gather_shapes", &k), PBFCL_OK);
    const cl_uint n = N, bodies = 1;
    const cl_float wall_scale = 1.0f, inv_dx = 1.0f / dx;
    ck_assert_int_eq(clSetKernelArg(k, 0, sizeof(cl_mem), &params), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 1, sizeof n, &n), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 2, sizeof(cl_mem), &pred), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 3, sizeof(cl_mem), &ncount), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 4, sizeof(cl_mem), &nlist), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 5, sizeof wall_scale, &wall_scale), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 6, sizeof bodies, &bodies), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 7, sizeof(cl_mem), &phase_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 8, sizeof inv_dx, &inv_dx), CL_SUCCESS);
    for (cl_uint a = 0; a < 3; a++)
        ck_assert_int_eq(clSetKernelArg(k, 9 + a, sizeof(cl_uint), &d[a]), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 12, sizeof(cl_mem), &sum_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 13, sizeof(cl_mem), &count_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 14, sizeof(cl_mem), &ghost_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 15, sizeof(cl_mem), &plane_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 16, sizeof(cl_mem), &shape_buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 17, sizeof(cl_mem), &touch_buf), CL_SUCCESS);
    ck_assert_int_eq(pbfcl_cl_launch(cl, k, N, wg, NULL, PBFCL_STAGE_SOLVE), PBFCL_OK);
    clReleaseKernel(k);
    test_read_buffer(touch_buf, got, cells * 4);
    test_read_buffer(count_buf, got_count, cells * 4);

    unsigned *want = calloc(cells, 4), *want_count = calloc(cells, 4);
    bool *unsure = calloc(cells, sizeof *unsure);
    size_t counting = 0;
    for (int i = 0; i < N; i++) {
        if (ghost[i])
            continue;
        size_t ix[3];
        for (int a = 0; a < 3; a++) {
            double f = floor((x[4 * i + a] - lo[a]) / dx);
            ix[a] = (size_t)fmin(fmax(f, 0.0), d[a] - 1.0);
        }
        size_t cell = ix[0] + d[0] * (ix[1] + (size_t)d[1] * ix[2]);
        want_count[cell]++;
        if (i % 5 == 4) /* a body's particle marks nothing */
            continue;
        double dist[K];
        for (int s = 0; s < K; s++) {
            const float *pl = planes + 4 * (K * i + s);
            dist[s] = shape[K * i + s] < 0 ? INFINITY
                                           : pl[0] * x[4 * i] + pl[1] * x[4 * i + 1] +
                                                 pl[2] * x[4 * i + 2] + pl[3] + RADIUS;
            if (fabs(dist[s] - h) < TOL)
                unsure[cell] = true;
        }
        for (int s = 0; s < K; s++) {
            if (!(dist[s] < h))
                continue;
            const float *ns = planes + 4 * (K * i + s);
            bool hidden = false;
            for (int t = 0; t < K; t++) {
                const float *nt = planes + 4 * (K * i + t);
                if (t == s || shape[K * i + t] != shape[K * i + s] || !(dist[t] < h))
                    continue;
                double cosine = ns[0] * nt[0] + ns[1] * nt[1] + ns[2] * nt[2];
                if (fabs(cosine - 0.5) < TOL || fabs(dist[t] - dist[s]) < TOL)
                    unsure[cell] = true;
                hidden = hidden || (cosine > 0.5 && dist[t] < dist[s]);
            }
            if (hidden)
                continue;
            counting++;
            for (int a = 0; a < 3; a++) {
                if (fabs(fabs(ns[a]) - 0.5) < TOL)
                    unsure[cell] = true;
                if (ns[a] > 0.5f)
                    want[cell] |= 1u << (5 * (2 * a));
                if (ns[a] < -0.5f)
                    want[cell] |= 1u << (5 * (2 * a + 1));
            }
        }
    }
    size_t touched = 0, compared = 0;
    for (size_t j = 0; j < cells; j++) {
        expect(got_count[j] == want_count[j], "cell %zu: %u particles counted, expected %u", j,
               got_count[j], want_count[j]);
        if (unsure[j])
            continue;
        compared++;
        touched += want[j] != 0;
        expect(got[j] == want[j], "cell %zu: touch word %#x, expected %#x", j, got[j], want[j]);
    }
    printf("    ml_gather_shapes: %zu planes counting, %zu of %zu cells compared, %zu touched\n",
           counting, compared, cells, touched);
    ck_assert_msg(touched > 20,
                  "only %zu cells touched: the shapes are not where the test put "
                  "them",
                  touched);
    clReleaseProgram(program);
    cl_mem bufs[] = {sum_buf,   count_buf, touch_buf, ncount, nlist,
                     phase_buf, ghost_buf, pos,       pred,   params};
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
        pbfcl_cl_release_buffer(&bufs[b]);
    free(x), free(phase), free(ghost), free(planes), free(shape), free(zero), free(got),
        free(got_count), free(want), free(want_count), free(unsure);
    pbfcl_colliders_destroy(c);
}

START_TEST(test_colliders_multilevel_touch)
{
    test_each_device(check_ml_touch);
}
END_TEST

static void run_narrow_primitives(pbfcl_cl *cl)
{
    check_narrow(cl, false);
}

static void run_narrow_meshes(pbfcl_cl *cl)
{
    check_narrow(cl, true);
}

START_TEST(test_colliders_narrow_primitives)
{
    test_each_device(run_narrow_primitives);
}
END_TEST

START_TEST(test_colliders_narrow_meshes)
{
    test_each_device(run_narrow_meshes);
}
END_TEST

/* ---- project and force -------------------------------------------------------------------- */

/* colliders_project for one particle (the kernel's rules in double precision), clamped below
 * the top wall of params_buffer. */
static void reference_project(const pbfcl_colliders *c, const float *x, float *q,
                              const float *planes, const int *shapes, float inv_mass, double *push)
{
    if (shapes[0] < 0 || inv_mass == 0.0f)
        return;
    dvec y = fv(q);
    for (int k = 0; k < K && shapes[k] >= 0; k++) {
        const float *pl = planes + 4 * k;
        const pbfcl_collider_shape *sh = &c->rows[shapes[k]];
        dvec n = fv(pl), before = y;
        double depth = -(dot(n, y) + pl[3]);
        if (!(depth > 0))
            continue;
        y = add(y, mul(n, depth));
        dvec vs = add(fv(sh->velocity), cross(fv(sh->angular_velocity), sub(y, fv(sh->position))));
        dvec slide = sub(sub(y, fv(x)), mul(vs, DT));
        slide = sub(slide, mul(n, dot(slide, n)));
        double l = len(slide);
        if (l < sh->friction_static * depth)
            y = sub(y, slide);
        else if (l > 0)
            y = sub(y, mul(slide, fmin(sh->friction_dynamic * depth / l, 1.0)));
        push[3 * k] += y.x - before.x, push[3 * k + 1] += y.y - before.y;
        push[3 * k + 2] += y.z - before.z;
    }
    y.y = fmin(y.y, 0.2 - RADIUS); /* the top wall (params_buffer) less r */
    q[0] = (float)y.x, q[1] = (float)y.y, q[2] = (float)y.z;
}

/* Random contacts for n particles: 0 to K planes each (unit normals, depths either side), of
 * random shapes; q near x; some of inverse mass 0. */
static void random_contacts(size_t n, int shapes_n, uint64_t *rng, float *x, float *q,
                            float *planes, int *shapes, float *inv_mass, unsigned *inside)
{
    for (size_t i = 0; i < n; i++) {
        int count = (int)(test_rand(rng) % (K + 1));
        for (int k = 0; k < 4; k++) {
            x[4 * i + k] = k < 3 ? test_randf(rng, -0.3f, 0.3f) : 1.0f;
            q[4 * i + k] = x[4 * i + k] + (k < 3 ? test_randf(rng, -0.01f, 0.01f) : 0.0f);
        }
        inv_mass[i] = test_rand(rng) % 5 == 0 ? 0.0f : test_randf(rng, 0.5f, 2.0f);
        inside[i] = test_rand(rng) % 7 == 0 ? 1 + test_rand(rng) % (unsigned)shapes_n : 0;
        for (int k = 0; k < K; k++) {
            dvec nrm = v3(test_randf(rng, -1, 1), test_randf(rng, -1, 1), test_randf(rng, -1, 1));
            nrm = mul(nrm, 1.0 / len(nrm));
            float *p = planes + 4 * (K * i + k);
            p[0] = (float)nrm.x, p[1] = (float)nrm.y, p[2] = (float)nrm.z;
            p[3] = -(float)dot(nrm, fv(q + 4 * i)) + test_randf(rng, -0.01f, 0.005f);
            shapes[K * i + k] = k < count ? (int)(test_rand(rng) % (unsigned)shapes_n) : -1;
        }
    }
}

static void run_project_force(pbfcl_cl *cl)
{
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    primitives(c);
    for (int s = 0; s < c->count; s++) { /* friction: none, static only, dynamic, both */
        c->shape[s].row.friction_static = (float)(s % 2) * 0.8f;
        c->shape[s].row.friction_dynamic = (float)(s / 2) * 0.5f;
    }
    cl_mem params = params_buffer(cl);
    size_t wg = 64, sizes[] = {0, 1, wg - 1, wg, wg + 1, test_small() ? 257 : 10007};
    uint64_t rng = 99;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z], cap = n + 1;
        float *x = malloc(cap * 16), *q = malloc(cap * 16), *qk = malloc(cap * 16);
        float *planes = malloc(cap * K * 16), *inv_mass = malloc(cap * 4),
              *push = malloc(cap * K * 16);
        int *shapes = malloc(cap * K * 4);
        unsigned *inside = malloc(cap * 4);
        double *ref_push = calloc(cap * K * 3, sizeof *ref_push);
        random_contacts(n, c->count, &rng, x, q, planes, shapes, inv_mass, inside);
        cl_mem pos, qb, im;
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 16, "x", &pos), PBFCL_OK);
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 16, "q", &qb), PBFCL_OK);
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "w", &im), PBFCL_OK);
        test_write_buffer(pos, x, n * 16);
        test_write_buffer(qb, x, n * 16);
        test_write_buffer(im, inv_mass, n * 4);
        pbfcl_colliders_run r = {cl, NULL, params, n, cap, wg, DT};
        /* the narrow phase builds, uploads the table and zeroes the pushes; then the contacts */
        ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pos, NULL), PBFCL_OK);
        test_write_buffer(pos, x, n * 16); /* as it was before narrow moved some out */
        test_write_buffer(qb, q, n * 16);
        test_write_buffer(c->contact_plane_buf, planes, n * K * 16);
        test_write_buffer(c->contact_shape_buf, shapes, n * K * 4);
        test_write_buffer(c->inside_buf, inside, n * 4);
        for (int it = 0; it < 2; it++) /* two iterations: the pushes add up */
            ck_assert_int_eq(pbfcl_colliders_project(c, &r, pos, qb, im, NULL), PBFCL_OK);
        for (size_t i = 0; i < n; i++)
            for (int it = 0; it < 2; it++)
                reference_project(c, x + 4 * i, q + 4 * i, planes + 4 * K * i, shapes + K * i,
                                  inv_mass[i], ref_push + 3 * K * i);
        test_read_buffer(qb, qk, n * 16);
        test_read_buffer(c->push_buf, push, n * K * 16);
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) {
                expect(fabsf(qk[4 * i + k] - q[4 * i + k]) < 2e-6f,
                       "n %zu, particle %zu: q.%c %.7f, expected %.7f", n, i, "xyz"[k],
                       qk[4 * i + k], q[4 * i + k]);
                for (int s = 0; s < K; s++)
                    expect(fabs(push[4 * (K * i + s) + k] - ref_push[3 * (K * i + s) + k]) < 2e-6,
                           "n %zu, particle %zu, contact %d: push.%c %g, expected %g", n, i, s,
                           "xyz"[k], push[4 * (K * i + s) + k], ref_push[3 * (K * i + s) + k]);
            }
        /* two substeps of the same contacts: the last one's force and contacts, the particles
         * found inside counted twice since the count was reset (as a change of shapes does) */
        c->accumulated = 0;
        ck_assert_int_eq(pbfcl_colliders_force(c, &r, im, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_colliders_force(c, &r, im, NULL), PBFCL_OK);
        for (int s = 0; s < c->count; s++) {
            double f[3] = {0}, in = 0;
            unsigned touching = 0, got_c, got_in;
            for (size_t i = 0; i < n; i++) {
                double m = inv_mass[i] > 0 ? 0.064 / inv_mass[i] : 0;
                bool t = false;
                for (int k = 0; k < K; k++)
                    if (shapes[K * i + k] == s) {
                        for (int a = 0; a < 3; a++)
                            f[a] -= m * push[4 * (K * i + k) + a] / ((double)DT * DT);
                        t = t || push[4 * (K * i + k)] != 0 || push[4 * (K * i + k) + 1] != 0 ||
                            push[4 * (K * i + k) + 2] != 0;
                    }
                touching += t;
                in += inside[i] == (unsigned)s + 1;
            }
            float got[3];
            ck_assert_int_eq(pbfcl_colliders_read(c, cl, c->shape[s].id, got, &got_c, &got_in),
                             PBFCL_OK);
            for (int a = 0; a < 3; a++)
                expect(test_close(got[a], f[a], 1e-3, 1e-4),
                       "n %zu, shape %d: force.%c %g, expected %g", n, s, "xyz"[a], got[a], f[a]);
            expect(got_c == touching && got_in == 2 * in,
                   "n %zu, shape %d: %u contacts, %u inside; expected %u, %g", n, s, got_c, got_in,
                   touching, 2 * in);
        }
        printf("    project and force, n %zu\n", n);
        free(x), free(q), free(qk), free(planes), free(inv_mass), free(push), free(shapes);
        free(inside), free(ref_push);
        pbfcl_cl_release_buffer(&pos);
        pbfcl_cl_release_buffer(&qb);
        pbfcl_cl_release_buffer(&im);
    }
    pbfcl_cl_release_buffer(&params);
    pbfcl_colliders_destroy(c);
}

START_TEST(test_colliders_project_force)
{
    test_each_device(run_project_force);
}
END_TEST

/* ---- signed distance fields: the nodes, and the samples between them --------------------- */

/* The box [-0.1, 0.1]^3 as 12 outward triangles. */
static const float box_v[] = {-0.1f, -0.1f, -0.1f, 0.1f,  -0.1f, -0.1f, 0.1f, 0.1f,
                              -0.1f, -0.1f, 0.1f,  -0.1f, -0.1f, -0.1f, 0.1f, 0.1f,
                              -0.1f, 0.1f,  0.1f,  0.1f,  0.1f,  -0.1f, 0.1f, 0.1f};
static const unsigned box_t[] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                 3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};

/* The exact signed distance from x to a closed mesh: to the nearest point of its triangles,
 * negative where its winding number (the solid angles of its triangles seen from x over 4 pi)
 * is 1 (not the ray crossings the build uses). */
static double ref_mesh_distance(const float *v, const unsigned *t, size_t nt, dvec x)
{
    double best = INFINITY, solid = 0.0;
    for (size_t f = 0; f < nt; f++) {
        dvec a = fv(v + 3 * t[3 * f]), b = fv(v + 3 * t[3 * f + 1]), c = fv(v + 3 * t[3 * f + 2]);
        best = fmin(best, len(sub(x, ref_closest(x, a, b, c))));
        a = sub(a, x), b = sub(b, x), c = sub(c, x); /* its solid angle (Van Oosterom 1983) */
        double la = len(a), lb = len(b), lc = len(c);
        solid += 2.0 * atan2(dot(a, cross(b, c)),
                             la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la);
    }
    return fabs(solid) > 2.0 * 3.14159265358979324 ? -best
                                                   : best; /* winding number |w| > 1/2: inside */
}

/* Node (i, j, k) of geometry g. */
static dvec sdf_node(const pbfcl_collider_geometry *g, unsigned i, unsigned j, unsigned k)
{
    return v3((double)g->grid_origin[0] + (double)g->cell * i,
              (double)g->grid_origin[1] + (double)g->cell * j,
              (double)g->grid_origin[2] + (double)g->cell * k);
}

/* The trilinear bound at x: the node values are exact and the distance changes by at most
 * the distance moved (it is 1-Lipschitz), so the sample is within sum_k w_k |x - x_k| of it. */
static double sdf_bound(const pbfcl_collider_geometry *g, dvec x, bool *linear_face)
{
    double u[3], t[3], bound = 0.0;
    unsigned c[3];
    for (int k = 0; k < 3; k++) {
        u[k] = (((double *)&x)[k] - g->grid_origin[k]) / g->cell;
        c[k] = (unsigned)fmin(floor(u[k]), g->dims[k] - 2.0);
        t[k] = u[k] - c[k];
    }
    int face = -1; /* the box's: the face whose region holds all 8 corners, outside */
    for (int corner = 0; corner < 8; corner++) {
        dvec p = sdf_node(g, c[0] + (corner & 1), c[1] + (corner >> 1 & 1), c[2] + (corner >> 2));
        double w = (corner & 1 ? t[0] : 1 - t[0]) * (corner & 2 ? t[1] : 1 - t[1]) *
                   (corner & 4 ? t[2] : 1 - t[2]);
        bound += w * len(sub(x, p));
        double q[3] = {p.x, p.y, p.z};
        int out = -1, outs = 0;
        for (int a = 0; a < 3; a++)
            if (fabs(q[a]) > 0.1 + 1e-9)
                out = 2 * a + (q[a] < 0), outs++;
        face = corner == 0 ? (outs == 1 ? out : -2) : (outs == 1 && out == face ? face : -2);
    }
    *linear_face = face >= 0;
    return bound;
}

/* An SDF of the mesh (v, t) at resolution res: every node against the exact distance, and
 * the kernel's samples at random points against the C trilinear sample (1e-5), against the
 * exact distance within the trilinear bound inside the grid, and exactly where the distance
 * is linear over the whole cell (box: a face's region outside). */
static void check_sdf(pbfcl_cl *cl, const char *what, const float *v, size_t nv, const unsigned *t,
                      size_t nt, int res, bool box)
{
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SDF,
                                    .vertices = v,
                                    .vertex_count = nv,
                                    .triangles = t,
                                    .triangle_count = nt,
                                    .sdf_resolution = res});
    const pbfcl_collider_geometry *g = &c->shape[0].geo;
    double node_err = 0.0;
    for (unsigned k = 0; k < g->dims[2]; k++)
        for (unsigned j = 0; j < g->dims[1]; j++)
            for (unsigned i = 0; i < g->dims[0]; i++) {
                const float *p = g->planes + 4 * (((size_t)k * g->dims[1] + j) * g->dims[0] + i);
                double want = ref_mesh_distance(v, t, nt, sdf_node(g, i, j, k));
                node_err = fmax(node_err, fabs(p[3] - want));
                expect(fabs(p[3] - want) < 1e-6 && fabs(len(fv(p)) - 1.0) < 1e-5,
                       "%s: node (%u, %u, %u) holds %.8f, |gradient| %.6f; the mesh's distance "
                       "is %.8f",
                       what, i, j, k, p[3], len(fv(p)), want);
            }
    /* samples: a big radius puts every point within reach, so each gets its contact plane */
    pbfcl_pbf_params pp = {.radius = 0.5f, .dt = DT, .inv_dt = 1.0f / DT, .mass = 0.064f};
    for (int k = 0; k < 3; k++)
        pp.box_min[k] = -10.0f, pp.box_max[k] = 10.0f;
    cl_mem params, pos;
    size_t n = test_small() ? 131 : 997, cap = n + 1;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, sizeof pp, "params", &params), PBFCL_OK);
    test_write_buffer(params, &pp, sizeof pp);
    float *x = malloc(cap * 16), *planes = malloc(cap * K * 16), *nodes, *tris;
    int *shapes = malloc(cap * K * sizeof *shapes);
    uint64_t rng = 31337;
    double lo = g->grid_origin[0], hi = lo + g->cell * (g->dims[0] - 1.0);
    for (size_t i = 0; i < n; i++) /* a tenth outside the grid */
        for (int k = 0; k < 4; k++)
            x[4 * i + k] = k == 3   ? 0.0f
                           : i % 10 ? test_randf(&rng, (float)lo, (float)hi)
                                    : test_randf(&rng, (float)lo - 0.1f, (float)hi + 0.1f);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 16, "x", &pos), PBFCL_OK);
    test_write_buffer(pos, x, n * 16);
    pbfcl_colliders_run r = {cl, NULL, params, n, cap, 64, DT};
    ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pos, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_colliders_read_contacts(c, cl, n, planes, shapes), PBFCL_OK);
    read_geometry(c, &nodes, &tris);
    double worst_c = 0.0, worst_ratio = 0.0, worst_linear = 0.0;
    size_t inside_grid = 0, linear = 0;
    for (size_t i = 0; i < n; i++) {
        dvec p = fv(x + 4 * i), nrm;
        const float *pl = planes + 4 * K * i;
        ck_assert_msg(shapes[K * i] == 0, "%s: point %zu has no contact", what, i);
        double got = pl[3] + dot(fv(pl), p) + pp.radius, want_c;
        ref_result rr = {0};
        want_c = ref_sdf(&c->rows[0], nodes, p, &nrm, &rr);
        worst_c = fmax(worst_c, fabs(got - want_c));
        expect(fabs(got - want_c) < 1e-5, "%s: point %zu, the kernel's sample %.7f, C's %.7f", what,
               i, got, want_c);
        bool in_grid = true; /* along each axis: a grid need not be a cube */
        for (int k = 0; k < 3; k++)
            in_grid = in_grid && ((double *)&p)[k] >= g->grid_origin[k] &&
                      ((double *)&p)[k] <= g->grid_origin[k] + g->cell * (g->dims[k] - 1.0);
        if (!in_grid)
            continue;
        inside_grid++;
        bool lin;
        double exact = ref_mesh_distance(v, t, nt, p), bound = sdf_bound(g, p, &lin);
        worst_ratio = fmax(worst_ratio, fabs(got - exact) / bound);
        expect(fabs(got - exact) <= bound + 1e-5,
               "%s: point %zu, the sample %.7f is %.3g from the mesh's distance %.7f, beyond the "
               "trilinear bound %.3g",
               what, i, got, fabs(got - exact), exact, bound);
        if (box && lin) {
            linear++;
            worst_linear = fmax(worst_linear, fabs(got - exact));
            expect(fabs(got - exact) < 1e-5,
                   "%s: point %zu, in a face's region the sample %.7f is not the distance %.7f",
                   what, i, got, exact);
        }
    }
    ck_assert(inside_grid > n / 2 && (!box || linear > n / 10));
    printf("    %s (%zu triangles, %u x %u x %u nodes): nodes within %.2g of the exact "
           "distance; samples within %.2g of C's, at most %.2f of the trilinear bound%s",
           what, nt, g->dims[0], g->dims[1], g->dims[2], node_err, worst_c, worst_ratio,
           box ? "" : "\n");
    if (box)
        printf(", %.2g where linear (%zu points)\n", worst_linear, linear);
    free(x), free(planes), free(shapes), free(nodes), free(tris);
    pbfcl_cl_release_buffer(&pos);
    pbfcl_cl_release_buffer(&params);
    pbfcl_colliders_destroy(c);
}

static void run_sdf(pbfcl_cl *cl)
{
    check_sdf(cl, "box mesh", box_v, 8, box_t, 12, 16, true);
    float *v;
    unsigned *t;
    size_t nv, nt;
    sphere_mesh(test_small() ? 3 : 6, 0.1f, &v, &nv, &t, &nt);
    check_sdf(cl, "sphere mesh", v, nv, t, nt, test_small() ? 9 : 21, false);
    free(v);
    free(t);
    /* an L-shaped prism: a notch where a node's side needs the crossings of both bars */
    static const float lxy[6][2] = {{0, 0},         {0.2f, 0},     {0.2f, 0.06f},
                                    {0.06f, 0.06f}, {0.06f, 0.2f}, {0, 0.2f}};
    float lv[12 * 3];
    unsigned lt[20 * 3], *at = lt;
    for (int k = 0; k < 12; k++) /* 0-5 at z = 0, 6-11 at z = 0.1 */
        lv[3 * k] = lxy[k % 6][0], lv[3 * k + 1] = lxy[k % 6][1], lv[3 * k + 2] = k < 6 ? 0 : 0.1f;
    for (unsigned k = 1; k < 5; k++) { /* the caps, fans from vertex 0 */
        unsigned cap[6] = {0, k + 1, k, 6, 6 + k, 7 + k};
        memcpy(at, cap, sizeof cap), at += 6;
    }
    for (unsigned k = 0; k < 6; k++) { /* the sides, facing out of the counter-clockwise L */
        unsigned n = (k + 1) % 6, side[6] = {k, n, 6 + n, k, 6 + n, 6 + k};
        memcpy(at, side, sizeof side), at += 6;
    }
    check_sdf(cl, "L prism", lv, 12, lt, 20, 14, false);
}

START_TEST(test_colliders_sdf)
{
    test_each_device(run_sdf);
}
END_TEST

/* ---- the pose a substep advances to, and bad shapes --------------------------------------- */

/* A shape turning at w about z for one substep ends rotated by w dt about z, moved by v dt;
 * one moving until 1.5 substeps moves 1.5 v dt and stops, its velocity 0. */
static void run_advance(pbfcl_cl *cl)
{
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_BOX,
                                    .half_extents = {0.1f, 0.1f, 0.1f},
                                    .position = {1.0f, 2.0f, 3.0f},
                                    .velocity = {0.5f, 0.0f, -1.0f},
                                    .angular_velocity = {0.0f, 0.0f, 10.0f}});
    cl_mem params = params_buffer(cl), pos;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 16, "x", &pos), PBFCL_OK);
    pbfcl_colliders_run r = {cl, NULL, params, 0, 1, 64, DT};
    ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pos, NULL), PBFCL_OK);
    float p[3], q[4], half = 10.0f * DT / 2;
    ck_assert_int_eq(pbfcl_colliders_get_pose(c, 0, p, q), PBFCL_OK);
    ck_assert(fabsf(p[0] - (1.0f + 0.5f * DT)) < 1e-6f && fabsf(p[2] - (3.0f - DT)) < 1e-6f);
    ck_assert(fabsf(q[2] - sinf(half)) < 1e-6f && fabsf(q[3] - cosf(half)) < 1e-6f);
    ck_assert(c->rows[0].prev_position[0] == 1.0f && c->rows[0].prev_rotation[3] == 1.0f);
    /* until 1.5 substeps: a whole substep, half of one, then still with its velocities 0 */
    add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SPHERE,
                                    .radius = 0.1f,
                                    .velocity = {1.0f, 0.0f, 0.0f},
                                    .until = 1.5f * DT});
    float x[3];
    for (int s = 0; s < 3; s++) {
        ck_assert_int_eq(pbfcl_colliders_narrow(c, &r, pos, pos, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_colliders_get_pose(c, 1, x, NULL), PBFCL_OK);
        float want = (float)fmin(s + 1, 1.5) * DT;
        ck_assert_msg(fabsf(x[0] - want) < 1e-7f, "substep %d: x %g, expected %g", s, x[0], want);
    }
    ck_assert(c->rows[1].velocity[0] == 0.0f && c->rows[1].prev_position[0] == x[0]);
    pbfcl_cl_release_buffer(&pos);
    pbfcl_cl_release_buffer(&params);
    pbfcl_colliders_destroy(c);
}

START_TEST(test_colliders_advance)
{
    test_each_device(run_advance);
}
END_TEST

/* desc is refused with PBFCL_ERR_BAD_ARGUMENT (or want) and a message holding both words. */
static void refused(pbfcl_colliders *c, pbfcl_shape_desc d, pbfcl_status want, const char *w1,
                    const char *w2)
{
    int id = -7;
    test_capture_begin();
    pbfcl_status st = pbfcl_colliders_add(c, &d, &id);
    const char *log = test_capture_end();
    ck_assert_msg(st == want, "%s: status %d, expected %d", w1, st, want);
    ck_assert_msg(strstr(log, w1) && strstr(log, w2), "message '%s' lacks '%s' or '%s'", log, w1,
                  w2);
    ck_assert_int_eq(id, -7);
}

START_TEST(test_colliders_bad_shapes)
{
    pbfcl_colliders *c;
    ck_assert_int_eq(pbfcl_colliders_create(&c), PBFCL_OK);
    pbfcl_status bad = PBFCL_ERR_BAD_ARGUMENT;
    const float flat[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.5f, 0.5f, 0};
    refused(c,
            (pbfcl_shape_desc){
                .type = PBFCL_SHAPE_KIND_CONVEX, .name = "plate", .points = flat, .point_count = 5},
            bad, "'plate'", "not coplanar");
    refused(c,
            (pbfcl_shape_desc){
                .type = PBFCL_SHAPE_KIND_CONVEX, .name = "three", .points = flat, .point_count = 3},
            bad, "'three'", "at least 4 points");
    refused(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SPHERE, .name = "ball", .radius = 0},
            bad, "'ball'", "radius");
    refused(c,
            (pbfcl_shape_desc){
                .type = PBFCL_SHAPE_KIND_BOX, .name = "crate", .half_extents = {1, -1, 1}},
            bad, "'crate'", "half extent y");
    refused(
        c,
        (pbfcl_shape_desc){
            .type = PBFCL_SHAPE_KIND_SPHERE, .name = "lost", .radius = 1, .position = {0, NAN, 0}},
        bad, "'lost'", "position is not finite");
    refused(c,
            (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_CAPSULE,
                               .name = "pill",
                               .radius = 1,
                               .rotation = {INFINITY, 0, 0, 1}},
            bad, "'pill'", "rotation");
    const char *obj = test_temp_write("bad.obj", "v 0 0 0\nv 1 0 0\nf 1 2 7\n");
    refused(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_MESH, .name = "cup", .obj_path = obj},
            bad, "'cup'", "valid OBJ");
    refused(c,
            (pbfcl_shape_desc){
                .type = PBFCL_SHAPE_KIND_MESH, .name = "nofile", .obj_path = "/nonexistent/x.obj"},
            PBFCL_ERR_IO, "'nofile'", "valid OBJ");
    static const float tv[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    static const unsigned open[] = {0, 2, 1, 0, 1, 3, 0, 3, 2},
                          flipped[] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 3, 2};
    refused(c,
            (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SDF,
                               .name = "lid",
                               .vertices = tv,
                               .vertex_count = 4,
                               .triangles = open,
                               .triangle_count = 3},
            bad, "'lid'", "close the mesh");
    refused(c,
            (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SDF,
                               .name = "inside out",
                               .vertices = tv,
                               .vertex_count = 4,
                               .triangles = flipped,
                               .triangle_count = 4},
            bad, "'inside out'", "counter-clockwise from outside");
    static const unsigned tet[] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    refused(c,
            (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SDF,
                               .name = "fine",
                               .vertices = tv,
                               .vertex_count = 4,
                               .triangles = tet,
                               .triangle_count = 4,
                               .sdf_resolution = 1000},
            bad, "'fine'", "2 to 128");
    ck_assert_int_eq(pbfcl_colliders_count(c), 0);
    for (int i = 0; i < PBFCL_COLLIDER_MAX_SHAPES; i++)
        add_shape(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SPHERE, .radius = 1});
    refused(c, (pbfcl_shape_desc){.type = PBFCL_SHAPE_KIND_SPHERE, .name = "extra", .radius = 1},
            bad, "'extra'", "destroy one");
    test_temp_remove();
    pbfcl_colliders_destroy(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("colliders");
    TCase *tc = tcase_create("colliders");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_colliders_narrow_primitives);
    tcase_add_test(tc, test_colliders_narrow_meshes);
    tcase_add_test(tc, test_colliders_inner_corner);
    tcase_add_test(tc, test_colliders_many_edges);
    tcase_add_test(tc, test_colliders_sdf);
    tcase_add_test(tc, test_colliders_project_force);
    tcase_add_test(tc, test_colliders_advance);
    tcase_add_test(tc, test_colliders_bad_shapes);
    tcase_add_test(tc, test_colliders_multilevel_solids);
    tcase_add_test(tc, test_colliders_multilevel_touch);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
