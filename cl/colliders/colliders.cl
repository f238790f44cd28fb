/* Colliders as shapes (colliders.h): once per substep colliders_narrow finds, for each
 * particle, the shapes whose swept bounds it may touch (the broad phase: every shape's box
 * against the particle's path x -> x*; a mesh's own grid of triangles then) and keeps up to
 * PBFCL_COLLIDER_CONTACTS contact planes (the narrow phase, continuous along x -> x* for
 * meshes); colliders_project enforces them in every solver iteration with static and dynamic
 * friction relative to the shape's motion; colliders_force and colliders_force_fold sum each
 * shape's push per work-group (no float atomics) for the force and contact counts the host
 * reads. */

/* The closest point of triangle (a, b, c) to x (Ericson, Real-Time Collision Detection 5.1.5). */
static float3 col_closest_on_triangle(float3 x, float3 a, float3 b, float3 c)
{
    float3 ab = b - a, ac = c - a, ap = x - a;
    float d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0.0f && d2 <= 0.0f)
        return a;
    float3 bp = x - b;
    float d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0.0f && d4 <= d3)
        return b;
    float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f)
        return a + ab * (d1 / (d1 - d3));
    float3 cp = x - c;
    float d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0.0f && d5 <= d6)
        return c;
    float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f)
        return a + ac * (d2 / (d2 - d6));
    float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f)
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    float den = 1.0f / (va + vb + vc);
    return a + ab * (vb * den) + ac * (vc * den);
}

/* Whether p (on the plane of a, b, c with normal nrm) lies inside the triangle. */
static bool col_inside_triangle(float3 p, float3 a, float3 b, float3 c, float3 nrm)
{
    return dot(cross(b - a, p - a), nrm) >= 0.0f && dot(cross(c - b, p - b), nrm) >= 0.0f &&
           dot(cross(a - c, p - c), nrm) >= 0.0f;
}

#define COL_NONE 0
#define COL_FACE 1
#define COL_EDGE 2

/* The contact of a particle moving from x0 to x1 (local) with triangle t of a mesh: its
 * distance d above the surface at x1 along the local normal *n through the surface point *sp.
 * The side is the one x0 is on (two-sided) or the front (one-sided); a path that crosses the
 * triangle keeps the side it came from (continuous detection). The face's contact (x1 above
 * the triangle, or the path through it, or x0 above it with x1 within reach of it: COL_FACE),
 * else the edge's or corner's (the nearest point on its border: COL_EDGE); COL_NONE: none
 * within reach. x0 above the face is enough: at a container's inner corner a
 * particle whose x1 the density moved past one wall's plane is no longer above the other
 * wall's face, and that wall's border, in the first wall's plane, is no contact (col_add), so
 * nothing held it (at mesh-container's vertical corners 12 of 1M particles left the tank in
 * one frame). */
static int col_triangle_contact(__global const float4 *tris, uint t, float3 x0, float3 x1,
                                bool two_sided, float reach, float *d, float3 *n, float3 *sp)
{
    float3 a = tris[3 * t].xyz, b = tris[3 * t + 1].xyz, c = tris[3 * t + 2].xyz;
    float3 nrm = cross(b - a, c - a);
    float area = length(nrm);
    if (!(area > 0.0f))
        return COL_NONE;
    nrm /= area;
    float s0 = dot(x0 - a, nrm);
    float side = (two_sided && s0 < 0.0f) ? -1.0f : 1.0f;
    s0 *= side;
    float s1 = dot(x1 - a, nrm) * side;
    if (s0 >= -reach && s1 < reach) { /* the face: x1 or x0 above it, or the path through it */
        float3 p = x1;
        if (s1 < 0.0f && s0 > 0.0f)
            p = x0 + (x1 - x0) * (s0 / (s0 - s1));
        p -= dot(p - a, nrm) * nrm;
        float3 p0 = x0 - dot(x0 - a, nrm) * nrm;
        bool above = col_inside_triangle(p, a, b, c, nrm) ||
                     (col_inside_triangle(p0, a, b, c, nrm) &&
                      length(x1 - col_closest_on_triangle(x1, a, b, c)) < reach);
        if (s0 >= 0.0f && above) {
            *d = s1;
            *n = side * nrm;
            *sp = x1 - s1 * *n;
            return COL_FACE;
        }
    }
    float3 cp = col_closest_on_triangle(x1, a, b, c); /* an edge or corner */
    float dist = length(x1 - cp);
    if (!(dist < reach) || !(dist > 0.0f) || (!two_sided && s1 < 0.0f))
        return COL_NONE;
    *d = dist;
    *n = (x1 - cp) / dist;
    *sp = cp;
    return COL_EDGE;
}

/* The contacts being collected for one particle: planes (n, w) with dot(n, q) + w >= 0 the
 * constraint, their shapes and features (a mesh's face contact: its triangle t; an edge's or
 * corner's: -2 - t; a primitive's: -1; to skip one met in two cells). */
typedef struct col_contacts {
    float4 plane[PBFCL_COLLIDER_CONTACTS];
    float depth[PBFCL_COLLIDER_CONTACTS];
    int shape[PBFCL_COLLIDER_CONTACTS];
    int feature[PBFCL_COLLIDER_CONTACTS];
} col_contacts;

/* Adds a contact of shape s (local normal n through local surface point sp, distance d at x*)
 * in world terms, replacing the shallowest when full; not when it is a plane of s already held
 * (coplanar triangles of a finely cut wall, or the two triangles of an edge, would fill every
 * slot with one plane and crowd out a second wall's at a corner), nor when it is a mesh's edge
 * or corner (feature <= -2) whose point lies in the plane of a face of s held already: the
 * border of a triangle beside the one beneath, or a wall's edge at a container's inner corner.
 * As a plane such an edge contact is tilted off the wall: a particle sliding along the wall
 * crossed it and was pushed along the wall (at the vertical corners of mesh-container's tank,
 * straight up at 11 to 50 m/s), while the face's plane holds the particle as it is. The
 * meshes' faces are added before their edges (col_mesh_contacts). */
static void col_add(col_contacts *c, __global const pbfcl_collider_shape *sh, int s, int feature,
                    float d, float3 n, float3 sp, float r_eff)
{
    float4 rot = col_load4(sh->rotation);
    float3 nw = col_rotate(rot, n), pw = col_rotate(rot, sp) + col_load4(sh->position).xyz;
    float4 plane = (float4)(nw, -dot(nw, pw) - r_eff);
    for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++) { /* met before, or the same plane again */
        if (c->shape[k] != s)
            continue;
        if (c->feature[k] == feature || (dot(c->plane[k].xyz, nw) > 1.0f - PBFCL_COLLIDER_SAME &&
                                         fabs(c->plane[k].w - plane.w) < PBFCL_COLLIDER_SAME))
            return;
        if (feature <= -2 && c->feature[k] >= 0 &&
            fabs(dot(c->plane[k].xyz, pw) + c->plane[k].w + r_eff) < PBFCL_COLLIDER_ON_FACE)
            return;
    }
    int slot = -1;
    float worst = d;
    for (int k = 0; k < PBFCL_COLLIDER_CONTACTS && slot < 0; k++)
        if (c->shape[k] < 0)
            slot = k;
    if (slot < 0)
        for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++)
            if (c->depth[k] > worst) {
                worst = c->depth[k];
                slot = k;
            }
    if (slot < 0)
        return;
    c->plane[slot] = plane;
    c->depth[slot] = d;
    c->shape[slot] = s;
    c->feature[slot] = feature;
}

/* An edge's or corner's contact held aside while the faces are collected (col_mesh_walk). */
typedef struct col_edge {
    float3 n, sp;
    float d;
    int feature;
} col_edge;

/* The edge contacts one walk holds aside, at most: more and the edges take a second walk. */
#define COL_HELD_EDGES 8

/* One walk of mesh shape sh's (index s) grid over the triangles near the local path x0 -> x1.
 * The first (held != NULL) adds every face's contact and holds the edges' and corners' aside in
 * held[0 .. *count - 1], in the order met (each triangle once); false when they were more than
 * COL_HELD_EDGES. The second (held == NULL) adds the edges' and corners' alone. */
static bool col_mesh_walk(col_contacts *c, __global const pbfcl_collider_shape *sh, int s,
                          __global const float4 *tris, __global const uint *cell_start,
                          __global const uint *cell_tris, float3 x0, float3 x1, float reach,
                          float r_eff, col_edge *held, int *count)
{
    float4 go = col_load4(sh->grid_origin);
    int3 dims = (int3)((int)sh->grid_dims[0], (int)sh->grid_dims[1], (int)sh->grid_dims[2]);
    float3 lo = (fmin(x0, x1) - reach - go.xyz) / go.w, hi = (fmax(x0, x1) + reach - go.xyz) / go.w;
    if (any(hi < 0.0f) || any(lo >= convert_float3(dims)))
        return true;
    int3 c0 = clamp(convert_int3(floor(lo)), (int3)(0), dims - 1);
    int3 c1 = clamp(convert_int3(floor(hi)), (int3)(0), dims - 1);
    bool two = (sh->flags & PBFCL_COLLIDER_TWO_SIDED) != 0u, fits = true;
    for (int z = c0.z; z <= c1.z; z++)
        for (int y = c0.y; y <= c1.y; y++)
            for (int x = c0.x; x <= c1.x; x++) {
                uint cell = sh->grid_first + (uint)((z * dims.y + y) * dims.x + x);
                for (uint e = cell_start[cell]; e < cell_start[cell + 1]; e++) {
                    uint t = cell_tris[e];
                    float d;
                    float3 n, sp;
                    int kind = col_triangle_contact(tris, t, x0, x1, two, reach, &d, &n, &sp);
                    if (kind == COL_FACE && held)
                        col_add(c, sh, s, (int)t, d, n, sp, r_eff);
                    if (kind != COL_EDGE)
                        continue;
                    if (!held) {
                        col_add(c, sh, s, -2 - (int)t, d, n, sp, r_eff);
                        continue;
                    }
                    bool met = false; /* a triangle in two cells */
                    for (int k = 0; k < *count; k++)
                        met = met || held[k].feature == -2 - (int)t;
                    if (met)
                        continue;
                    if (*count == COL_HELD_EDGES) {
                        fits = false;
                        continue;
                    }
                    held[*count].n = n;
                    held[*count].sp = sp;
                    held[*count].d = d;
                    held[*count].feature = -2 - (int)t;
                    (*count)++;
                }
            }
    return fits;
}

/* The contacts of mesh shape sh: its faces', then those of its edges and corners that no face
 * held covers (col_add), in one walk of its grid (a second where the edges did not fit). */
static void col_mesh_contacts(col_contacts *c, __global const pbfcl_collider_shape *sh, int s,
                              __global const float4 *tris, __global const uint *cell_start,
                              __global const uint *cell_tris, float3 x0, float3 x1, float reach,
                              float r_eff)
{
    col_edge held[COL_HELD_EDGES];
    int count = 0;
    if (!col_mesh_walk(c, sh, s, tris, cell_start, cell_tris, x0, x1, reach, r_eff, held, &count)) {
        col_mesh_walk(c, sh, s, tris, cell_start, cell_tris, x0, x1, reach, r_eff, NULL, NULL);
        return;
    }
    for (int k = 0; k < count; k++)
        col_add(c, sh, s, held[k].feature, held[k].d, held[k].n, held[k].sp, r_eff);
}

/* The broad and narrow phase of one substep: for particle i, moving from x to x*, the contact
 * planes of every shape within reach (r + margin + r: contacts found for the iterations' moves
 * too; r + margin + 2r, or h, for the planes the fluid's density counts as walls), with the shape
 * (-1: none) in each slot, and pushes zeroed. A particle that starts the substep inside a primitive
 * shape or an SDF is flagged in inside[i] (the shape's index + 1; 0: none) and its x moved out
 * along the distance's gradient to r + margin from the surface (its x* then goes out by the
 * contact, and it leaves without gaining speed). */
__kernel void colliders_narrow(__constant pbfcl_pbf_params *p, uint n, __global float4 *pos,
                               __global const float4 *pred,
                               __global const pbfcl_collider_shape *shapes, uint shape_count,
                               __global const float4 *planes, __global const float4 *tris,
                               __global const uint *cell_start, __global const uint *cell_tris,
                               __global float4 *contact_plane, __global int *contact_shape,
                               __global float4 *push, __global uint *inside)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float3 x = pos[i].xyz, xs = pred[i].xyz;
    col_contacts c;
    for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++) {
        c.plane[k] = (float4)(0.0f);
        c.depth[k] = 0.0f;
        c.shape[k] = -1;
        c.feature[k] = -1;
    }
    uint in = 0;
    float3 out = (float3)(0.0f);
    for (uint s = 0; s < shape_count; s++) {
        __global const pbfcl_collider_shape *sh = shapes + s;
        /* the reach: contacts for the iterations' moves (r beyond contact) and the planes the
         * fluid's density counts within 3r (or h) of the surface less the margin
         * (cl/pbf/pbf.cl, pbf_shape_factor: beyond 3r a half-space holds 0.25 % of the
         * kernel's mass at h = 4r; reaching h put more planes of the finely cut walls of
         * mesh-container in the slots and let a particle through a wall) */
        float r_eff = p->radius + sh->margin;
        float reach = r_eff + fmax(p->radius, fmin(p->h - p->radius, 2.0f * p->radius));
        float3 lo = col_load4(sh->bounds_min).xyz - reach,
               hi = col_load4(sh->bounds_max).xyz + reach;
        if (any(fmax(x, xs) < lo) || any(fmin(x, xs) > hi))
            continue; /* the broad phase */
        float3 x0 =
            col_unrotate(col_load4(sh->prev_rotation), x - col_load4(sh->prev_position).xyz);
        float3 x1 = col_unrotate(col_load4(sh->rotation), xs - col_load4(sh->position).xyz);
        if (sh->type == PBFCL_COLLIDER_MESH) {
            col_mesh_contacts(&c, sh, (int)s, tris, cell_start, cell_tris, x0, x1, reach, r_eff);
            continue;
        }
        float3 nl, n0;
        float d = col_primitive_distance(sh, planes, x1, &nl);
        float d0 = col_primitive_distance(sh, planes, x0, &n0);
        if (d0 < 0.0f && in == 0u) { /* x out too, so that leaving gives no speed */
            in = s + 1u;
            out = col_rotate(col_load4(sh->prev_rotation), n0) * (r_eff - d0);
        }
        if (d < reach)
            col_add(&c, sh, (int)s, -1, d, nl, x1 - d * nl, r_eff);
    }
    for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++) {
        contact_plane[PBFCL_COLLIDER_CONTACTS * i + k] = c.plane[k];
        contact_shape[PBFCL_COLLIDER_CONTACTS * i + k] = c.shape[k];
        push[PBFCL_COLLIDER_CONTACTS * i + k] = (float4)(0.0f);
    }
    inside[i] = in;
    if (in)
        vstore3(x + out, 0, (__global float *)(pos + i));
}

/* One solver iteration's projection of particle i's contact planes on q (in place): out of
 * each plane it is behind, then Coulomb friction on the substep's slide relative to the shape
 * (x -> q against the shape's motion at the contact): held when the slide is within
 * friction_static times the depth, else shortened by friction_dynamic times the depth. The
 * moves add to push (the shape's force, colliders_force). Particles of inverse mass 0 stay.
 * The walls (less r) bound the result, as they bound delta's and collide's: a shape through a
 * wall does not push particles out of the box. */
__kernel void colliders_project(__constant pbfcl_pbf_params *p, uint n, __global const float4 *pos,
                                __global float4 *q, __global const float *inv_mass,
                                __global const pbfcl_collider_shape *shapes,
                                __global const float4 *contact_plane,
                                __global const int *contact_shape, __global float4 *push)
{
    uint i = get_global_id(0);
    if (i >= n || contact_shape[PBFCL_COLLIDER_CONTACTS * i] < 0 || inv_mass[i] == 0.0f)
        return;
    float4 qi = q[i];
    float3 x = pos[i].xyz, y = qi.xyz;
    for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++) {
        int s = contact_shape[PBFCL_COLLIDER_CONTACTS * i + k];
        if (s < 0)
            break;
        float4 pl = contact_plane[PBFCL_COLLIDER_CONTACTS * i + k];
        float depth = -(dot(pl.xyz, y) + pl.w);
        if (!(depth > 0.0f))
            continue;
        __global const pbfcl_collider_shape *sh = shapes + s;
        float3 before = y;
        y += depth * pl.xyz;
        float3 arm = y - col_load4(sh->position).xyz;
        float3 vs = col_load4(sh->velocity).xyz + cross(col_load4(sh->angular_velocity).xyz, arm);
        float3 slide = (y - x) - vs * p->dt;
        slide -= dot(slide, pl.xyz) * pl.xyz;
        float len = length(slide);
        if (len < sh->friction_static * depth)
            y -= slide;
        else if (len > 0.0f)
            y -= slide * fmin(sh->friction_dynamic * depth / len, 1.0f);
        /* w marks a contact that moved the particle (the fluid's pressure, which delta adds,
         * leaves it: colliders_force counts contacts by it) */
        push[PBFCL_COLLIDER_CONTACTS * i + k] +=
            (float4)(y - before, any(y != before) ? 1.0f : 0.0f);
    }
    float3 lo = (float3)(p->box_min[0], p->box_min[1], p->box_min[2]) + p->radius;
    float3 hi = (float3)(p->box_max[0], p->box_max[1], p->box_max[2]) - p->radius;
    q[i] = (float4)(clamp(y, lo, hi), qi.w); /* the walls win, as in delta and collide */
}

/* The force reduction of one substep, first half: work-group g of shape s = get_global_id(1)
 * (of G groups a shape, get_num_groups(0)) sums, over the particles g, g + G, ... (strided by
 * the work-items), the mass-weighted pushes m_i dx of the contacts with s (the contact planes'
 * and the fluid's pressure through them, pbf_delta) and counts the particles with a plane of s
 * that pushed (push.w) and those inside s, into sums[2 (s G + g)] = (sum m dx, contacts) and
 * sums[2 (s G + g) + 1] = (inside, 0, 0, 0). G is PBFCL_COLLIDER_FORCE_GROUPS times 1 to
 * PBFCL_COLLIDER_FORCE_SPLIT: enough work-groups to fill a GPU, folded into the
 * PBFCL_COLLIDER_FORCE_GROUPS partial sums a shape keeps by colliders_force_fold. Work-group
 * size WG_SIZE, a power of two. */
__kernel void colliders_force(__constant pbfcl_pbf_params *p, uint n,
                              __global const float *inv_mass, __global const int *contact_shape,
                              __global const float4 *push, __global const uint *inside,
                              __global float4 *sums)
{
    __local float4 sum[WG_SIZE];
    __local float count_in[WG_SIZE];
    uint l = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    int s = (int)get_global_id(1);
    float4 acc = (float4)(0.0f);
    float in = 0.0f;
    for (uint i = get_global_id(0); i < n; i += (uint)get_global_size(0)) {
        float m = inv_mass[i] > 0.0f ? p->mass / inv_mass[i] : 0.0f;
        bool touched = false;
        for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++)
            if (contact_shape[PBFCL_COLLIDER_CONTACTS * i + k] == s) {
                float4 d = push[PBFCL_COLLIDER_CONTACTS * i + k];
                acc.xyz += m * d.xyz;
                touched = touched || d.w != 0.0f;
            }
        acc.w += touched ? 1.0f : 0.0f;
        in += inside[i] == (uint)s + 1u ? 1.0f : 0.0f;
    }
    sum[l] = acc;
    count_in[l] = in;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint step = get_local_size(0) / 2; step > 0; step /= 2) {
        if (l < step) {
            sum[l] += sum[l + step];
            count_in[l] += count_in[l + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        uint at = 2u * ((uint)s * groups + g);
        sums[at] = sum[0];
        sums[at + 1] = (float4)(count_in[0], 0.0f, 0.0f, 0.0f);
    }
}

/* The force reduction's second half: work-item g < PBFCL_COLLIDER_FORCE_GROUPS of shape s =
 * get_global_id(1) adds colliders_force's sums of its work-groups g F .. g F + F - 1 (F = per,
 * colliders_force's work-groups a shape over PBFCL_COLLIDER_FORCE_GROUPS), in order, and the
 * multilevel correction's push on s (pressure[s FORCE_GROUPS + g], ml_shape_push,
 * cl/pbf/multilevel.cl), which it zeroes for the next substep's, into partial[2 (s
 * FORCE_GROUPS + g)] = (sum m dx, contacts) of this substep and partial[... + 1] += (inside,
 * 0, 0, 0), a running count (= when reset != 0). */
__kernel void colliders_force_fold(uint per, __global const float4 *sums, uint reset,
                                   __global float4 *partial, __global float4 *pressure)
{
    uint g = get_global_id(0);
    int s = (int)get_global_id(1);
    if (g >= PBFCL_COLLIDER_FORCE_GROUPS)
        return;
    uint slot = (uint)s * PBFCL_COLLIDER_FORCE_GROUPS + g;
    float4 a = (float4)(pressure[slot].xyz, 0.0f), b = (float4)(0.0f);
    for (uint j = 0; j < per; j++) {
        uint at = 2u * (slot * per + j);
        a += sums[at];
        b += sums[at + 1];
    }
    pressure[slot] = (float4)(0.0f);
    partial[2u * slot] = a;
    partial[2u * slot + 1u] = reset ? b : partial[2u * slot + 1u] + b;
}
