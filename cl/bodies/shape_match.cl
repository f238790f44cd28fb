/* Shape matching (Mueller et al. 2005, as in Macklin et al. 2014): the particles of each body
 * are pulled towards goal positions c + R r_k, c the centre of mass of their predicted
 * positions, R the rotation of the best linear fit A_pq = sum_k m_k (x_k - c) r_k^T, r_k the
 * rest offset from the rest centre of mass. A body is a run of entries (sorted by body, each
 * naming a particle by persistent id), reduced in one launch for every body at once whatever
 * their sizes: a segmented scan within each work-group, then one pass per body over the
 * partial sums of the groups it spans, through the id-to-slot map of the particles
 * (particles_slots, cl/sim/particles.cl). Stages: shape_match_reduce, shape_match_finish,
 * shape_match_goal (host/core/bodies/shape_match.c). */
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -D"
#endif


/* The rows of a reduction (PBFCL_SHAPE_MATCH_ROWS, cl/common/pbfcl_shared.h); shape_match_momentum
 * uses the first three, and so does shape_match_reduce without contacts (SM_ROWS_POSE). */
#define SM_ROWS PBFCL_SHAPE_MATCH_ROWS
#define SM_ROWS_POSE 3u

/* A simulation split over devices (host/dist/dist_bodies.c) holds every body's entries on every
 * device but only some of their particles: here (uint per id) is PBFCL_EMPTY for a particle not
 * on this device, else below owned for one it owns (its sums are this device's share) and at
 * least owned for a copy of another's (a ghost: moved to its goal like its owner, summed by
 * none). One device passes the id-to-slot map as here and owned = PBFCL_EMPTY: every particle
 * its own. */

/* The segmented sum over the work-group of the first rows (at most SM_ROWS, the same in the
 * whole group) float4 per entry (v) of body b (entries of one body are contiguous): an
 * inclusive scan that adds a value only within its body, which leaves each body's sum over the
 * group at its last entry there. That entry writes it to sums[b] if the body lies within the
 * group, else to the group's head (the body of its first entry) or tail (of its last) partial
 * sums, which sm_body_sum adds up. s: SM_ROWS x WG_SIZE float4 of local memory. The scan's
 * steps cost in proportion to the rows: with 3 rows instead of 5 (no contacts) momentum took
 * 10.7 against 12.9 us at 1.128M particles with 64 bodies on an H200, reduce 10.8 against
 * 12.4 on average over a substep's four. rows must be a constant at each call: as a
 * variable the rows did not stay in registers (reduce 41 us). */
static void sm_segmented_sum(uint entries, uint b, float4 *v, uint rows,
                             __global const uint2 *body_range, __local float4 *s, __local uint *seg,
                             __global float4 *partial, __global float4 *sums)
{
    uint k = get_global_id(0), l = get_local_id(0), g = get_group_id(0);
    seg[l] = b;
    for (uint r = 0; r < rows; r++)
        s[r * WG_SIZE + l] = v[r];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < WG_SIZE; off <<= 1) {
        bool take = l >= off && seg[l - off] == b;
        float4 a[SM_ROWS];
        for (uint r = 0; r < rows; r++)
            a[r] = take ? s[r * WG_SIZE + l - off] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint r = 0; r < rows; r++) {
            v[r] += a[r];
            s[r * WG_SIZE + l] = v[r];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    bool last = k < entries && (l == WG_SIZE - 1 || seg[l + 1] != b);
    if (!last)
        return;
    uint2 range = body_range[b];
    uint first = g * WG_SIZE;
    /* the whole body in this group: its sums; else the head (the body of the group's first
     * entry) or tail (of its last) partial sums */
    bool whole = range.x >= first && range.y <= first + WG_SIZE;
    __global float4 *out =
        whole ? sums + SM_ROWS * b : partial + 2 * SM_ROWS * g + (range.x <= first ? 0 : SM_ROWS);
    for (uint r = 0; r < rows; r++)
        out[r] = v[r];
}

/* Body b's sums of sm_segmented_sum's first rows into a (SM_ROWS float4; the others 0), by the
 * work-group of body b (every work-item calls it; the sums are in every work-item's a): sums[b],
 * or the partial
 * sums of the groups first / WG_SIZE .. (end - 1) / WG_SIZE it spans (the first group's tail,
 * or its head if the body starts it, and the heads of the others), each work-item adding every
 * WG_SIZE-th of them and a tree in local memory s (SM_ROWS x WG_SIZE float4) adding those. One
 * work-item adding them in turn waited on each load: with 2000-particle bodies finish took
 * 15.4 us a launch on an H200. */
static void sm_body_sum(uint b, uint rows, __global const uint2 *body_range,
                        __global const float4 *partial, __global const float4 *sums,
                        __local float4 *s, float4 *a)
{
    uint l = get_local_id(0);
    uint2 range = body_range[b];
    uint g0 = range.x / WG_SIZE, g1 = (range.y - 1) / WG_SIZE;
    for (uint r = 0; r < SM_ROWS; r++)
        a[r] = (float4)(0.0f);
    if (g0 == g1) {
        for (uint r = 0; r < rows; r++)
            a[r] = sums[SM_ROWS * b + r];
        return; /* uniform in the group: no barrier is skipped by some */
    }
    uint first = 2 * SM_ROWS * g0 + (range.x == g0 * WG_SIZE ? 0 : SM_ROWS);
    for (uint g = g0 + l; g <= g1; g += WG_SIZE) {
        uint at = g == g0 ? first : 2 * SM_ROWS * g;
        for (uint r = 0; r < rows; r++)
            a[r] += partial[at + r];
    }
    for (uint r = 0; r < rows; r++)
        s[r * WG_SIZE + l] = a[r];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint width = WG_SIZE / 2; width > 0; width >>= 1) { /* WG_SIZE is a power of 2 */
        if (l < width)
            for (uint r = 0; r < rows; r++)
                s[r * WG_SIZE + l] += s[r * WG_SIZE + l + width];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint r = 0; r < rows; r++)
        a[r] = s[r * WG_SIZE];
}

/* Body b's whole sums (SM_ROWS float4) from sums, where shape_match_totals wrote them. */
static void sm_totals_of(uint b, __global const float4 *sums, float4 *a)
{
    for (uint r = 0; r < SM_ROWS; r++)
        a[r] = sums[SM_ROWS * b + r];
}

/* shape_match_totals: per body (a work-group each), the sums of the last shape_match_reduce or
 * shape_match_momentum whole (sm_body_sum of its first rows, the others 0) into totals
 * (SM_ROWS float4 per body), which a split simulation adds up over its devices before
 * shape_match_finish or shape_match_spin reads them (summed). */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
shape_match_totals(uint bodies, uint rows, __global const uint2 *body_range,
                   __global const float4 *partial, __global const float4 *sums,
                   __global float4 *totals)
{
    __local float4 s[SM_ROWS * WG_SIZE];
    uint b = get_group_id(0);
    if (b >= bodies)
        return; /* the whole group */
    float4 a[SM_ROWS];
    if (rows == SM_ROWS) /* constant counts, as in shape_match_reduce */
        sm_body_sum(b, SM_ROWS, body_range, partial, sums, s, a);
    else
        sm_body_sum(b, SM_ROWS_POSE, body_range, partial, sums, s, a);
    if (get_local_id(0) != 0)
        return;
    for (uint r = 0; r < SM_ROWS; r++)
        totals[SM_ROWS * b + r] = a[r];
}

/* shape_match_reduce: per entry k of body b, with d = x*_k - c_b (c_b the body's centre from
 * the last finish or predict, which keeps the sums well conditioned) and mass fraction
 * f_k = m_k / M_b (rest.w): the three rows f_k d_a (r_k, 1), a = x, y, z, summed per body
 * (sm_segmented_sum); their xyz sum to A_pq / M_b, their w to the shift of the centre. Rows 3
 * and 4 are the particle's contacts with other solids from the last collide pass
 * (static_in, 2 float4 per slot: pbf_collide's static_out), or 0 with use_static 0 (no
 * collide pass since the last projection). Only the entries this device owns are summed
 * (here, owned: above). */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
shape_match_reduce(uint entries, __global const uint *entry_id, __global const uint *entry_body,
                   __global const float4 *rest, __global const uint *slot,
                   __global const float4 *pred, __global const float4 *body_com,
                   __global const uint2 *body_range, __global float4 *partial,
                   __global float4 *sums, uint use_static, __global const float4 *static_in,
                   __global const uint *here, uint owned)
{
    __local float4 s[SM_ROWS * WG_SIZE];
    __local uint seg[WG_SIZE];
    uint k = get_global_id(0);
    uint b = PBFCL_EMPTY;
    float4 v[SM_ROWS];
    for (uint r = 0; r < SM_ROWS; r++)
        v[r] = (float4)(0.0f);
    uint i = PBFCL_EMPTY;
    if (k < entries) {
        b = entry_body[k];
        i = here[entry_id[k]] < owned ? slot[entry_id[k]] : PBFCL_EMPTY; /* owned here */
    }
    if (i != PBFCL_EMPTY) {
        float4 rs = rest[k];
        float4 d = pred[i] - body_com[b];
        float4 fr = rs.w * (float4)(rs.xyz, 1.0f);
        v[0] = d.x * fr;
        v[1] = d.y * fr;
        v[2] = d.z * fr;
        if (use_static) {
            v[3] = static_in[2 * i];
            v[4] = static_in[2 * i + 1];
        }
    }
    if (use_static) /* two calls with a constant count each (sm_segmented_sum) */
        sm_segmented_sum(entries, b, v, SM_ROWS, body_range, s, seg, partial, sums);
    else
        sm_segmented_sum(entries, b, v, SM_ROWS_POSE, body_range, s, seg, partial, sums);
}

/* shape_match_momentum: per entry k of body b, with d = x_k - c_b and v_k its velocity (after
 * the forces of predict), the rows f_k d, f_k v_k and f_k d x v_k summed per body: the shift
 * of the centre, the centre's velocity and the angular momentum about c_b, per unit mass; the
 * entries this device owns only (here, owned). */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
shape_match_momentum(uint entries, __global const uint *entry_id, __global const uint *entry_body,
                     __global const float4 *rest, __global const uint *slot,
                     __global const float4 *pos, __global const float4 *vel,
                     __global const float4 *body_com, __global const uint2 *body_range,
                     __global float4 *partial, __global float4 *sums,
                     __global const uint *here, uint owned)
{
    __local float4 s[SM_ROWS * WG_SIZE];
    __local uint seg[WG_SIZE];
    uint k = get_global_id(0);
    uint b = PBFCL_EMPTY;
    float4 v[SM_ROWS];
    for (uint r = 0; r < SM_ROWS; r++)
        v[r] = (float4)(0.0f);
    uint i = PBFCL_EMPTY;
    if (k < entries) {
        b = entry_body[k];
        i = here[entry_id[k]] < owned ? slot[entry_id[k]] : PBFCL_EMPTY; /* owned here */
    }
    if (i != PBFCL_EMPTY) {
        float f = rest[k].w;
        float4 d = (float4)(pos[i].xyz - body_com[b].xyz, 0.0f), u = (float4)(vel[i].xyz, 0.0f);
        v[0] = f * d;
        v[1] = f * u;
        v[2] = f * cross(d, u);
    }
    sm_segmented_sum(entries, b, v, 3u, body_range, s, seg, partial, sums);
}

/* q1 q2, quaternions as (x, y, z, w). */
static float4 sm_quat_mul(float4 a, float4 b)
{
    return (float4)(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

/* The columns of the rotation matrix of unit quaternion q. */
static void sm_quat_matrix(float4 q, float4 *c0, float4 *c1, float4 *c2)
{
    float x = q.x, y = q.y, z = q.z, w = q.w;
    *c0 = (float4)(1.0f - 2.0f * (y * y + z * z), 2.0f * (x * y + z * w), 2.0f * (x * z - y * w),
                   0.0f);
    *c1 = (float4)(2.0f * (x * y - z * w), 1.0f - 2.0f * (x * x + z * z), 2.0f * (y * z + x * w),
                   0.0f);
    *c2 = (float4)(2.0f * (x * z + y * w), 2.0f * (y * z - x * w), 1.0f - 2.0f * (x * x + y * y),
                   0.0f);
}

/* The most iterations of the polar decomposition. From the last substep's rotation a few
 * suffice (the loop stops when the correction vanishes); from far away (bodies turned by 2
 * rad against their warm start, test_shape_match) 32 left some 2e-5 m from the goal, 64 none. */
#define SM_POLAR_ITERATIONS 256
/* The loop stops when the correction turns by less than 1e-6 rad. Its float rounding is
 * 1e-9 to 4e-8 rad, so a bound of 1e-9 was rarely reached: in test_bodies 5677 of 11000
 * decompositions ran all 256 iterations (44 us per launch at 1M particles on an H200, more
 * than the other shape-matching stages together); with 1e-6 none takes more than 9. */
#define SM_POLAR_CONVERGED 1e-6f

/* The rotation R of the polar decomposition A = R S, by Mueller et al. 2016 ("A Robust Method
 * to Extract the Rotational Part of Deformations"): starting from q, rotate by
 * omega = sum_i r_i x a_i / |sum_i r_i . a_i| (r_i, a_i the columns of R and A) until omega
 * vanishes. A is given by its rows, scaled to unit norm first (R does not depend on it). */
static float4 sm_polar_rotation(float4 a_row0, float4 a_row1, float4 a_row2, float4 q)
{
    float norm = sqrt(dot(a_row0.xyz, a_row0.xyz) + dot(a_row1.xyz, a_row1.xyz) +
                      dot(a_row2.xyz, a_row2.xyz));
    if (!(norm > 0.0f) || !isfinite(norm))
        return q;
    float4 a0 = (float4)(a_row0.x, a_row1.x, a_row2.x, 0.0f) / norm;
    float4 a1 = (float4)(a_row0.y, a_row1.y, a_row2.y, 0.0f) / norm;
    float4 a2 = (float4)(a_row0.z, a_row1.z, a_row2.z, 0.0f) / norm;
    for (int it = 0; it < SM_POLAR_ITERATIONS; it++) {
        float4 r0, r1, r2;
        sm_quat_matrix(q, &r0, &r1, &r2);
        float4 num = cross(r0, a0) + cross(r1, a1) + cross(r2, a2);
        float den = fabs(dot(r0, a0) + dot(r1, a1) + dot(r2, a2)) + 1e-9f;
        float4 omega = num / den;
        float w = length(omega.xyz);
        if (w < SM_POLAR_CONVERGED)
            break;
        float4 step = (float4)(sin(0.5f * w) * omega.xyz / w, cos(0.5f * w));
        q = normalize(sm_quat_mul(step, q));
    }
    return q;
}

/* The friction of a body's contacts with other solids (Coulomb, as Macklin et al. 2014 section
 * 6.1 has it per contact, here for the body as a whole): from the sums over its contacts of
 * its shares of their slides S (xyz; w the number of contacts) and of how far they closed A,
 * the move that undoes the mean slide S / n while |S| < mu_s A (static: the body stays put),
 * else a part mu_k A / |S| of it (dynamic). One contact particle undoing its own slide, as the
 * fluid's contacts do, would be spread over the whole body by the shape matching after it. */
static float4 sm_friction(float4 slides, float closed, float mu_s, float mu_k)
{
    float len = length(slides.xyz), a = fmax(closed, 0.0f);
    if (!(slides.w > 0.0f) || !(len > 0.0f))
        return (float4)(0.0f);
    float part = len < mu_s * a ? 1.0f : fmin(mu_k * a / len, 1.0f);
    return (float4)(-part * slides.xyz / slides.w, 0.0f);
}

/* The shift that moves the goals c + R r_k of a body's entries range (R by its rows r0..r2,
 * r_k = rest[k]) inside the walls wall_lo..wall_hi: per axis the depth of the deepest goal
 * beyond the lower wall less that beyond the upper one (0 for a body inside them). The wall
 * acts on the rigid body as a whole: the fit of a pose to particles that delta and collide
 * held at a wall puts some of them beyond it again (a heavy body on the floor of a dam break
 * sat 0.2 mm below the wall), and clamping them alone would bend the body. Called by the
 * whole work-group; s holds 2 WG_SIZE float4 of scratch. */
static float4 sm_wall_shift(uint2 range, __global const float4 *rest, float4 c, float4 r0,
                            float4 r1, float4 r2, float4 wall_lo, float4 wall_hi, __local float4 *s)
{
    uint l = get_local_id(0);
    float4 lo = (float4)(FLT_MAX), hi = (float4)(-FLT_MAX);
    for (uint k = range.x + l; k < range.y; k += WG_SIZE) {
        float4 r = (float4)(rest[k].xyz, 0.0f);
        float4 g = c + (float4)(dot(r0, r), dot(r1, r), dot(r2, r), 0.0f);
        lo = fmin(lo, g);
        hi = fmax(hi, g);
    }
    /* the sums' last reads of s are done, and every work-item's reads of the pose that the
     * first overwrites */
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    s[l] = lo;
    s[WG_SIZE + l] = hi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint width = WG_SIZE / 2; width > 0; width >>= 1) {
        if (l < width) {
            s[l] = fmin(s[l], s[l + width]);
            s[WG_SIZE + l] = fmax(s[WG_SIZE + l], s[WG_SIZE + l + width]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float4 below = fmax(wall_lo - s[0], (float4)(0.0f));
    float4 above = fmax(s[WG_SIZE] - wall_hi, (float4)(0.0f));
    return (float4)((below - above).xyz, 0.0f);
}

/* shape_match_finish: per body (a work-group each), from the sums of shape_match_reduce
 * (sm_body_sum), the new
 * centre c = c_last + sum f d, moved by the friction of its contacts with other solids
 * (sm_friction; mu_s, mu_k the static and dynamic coefficients; with use_static, as reduce
 * had it: else there are no contact rows), A = sum f d r^T and its rotation, warm-started from
 * the body's last rotation; then c is moved so that every goal lies inside the walls
 * wall_lo..wall_hi (sm_wall_shift; rest: the entries' rest offsets). Every work-item computes
 * the pose (the same), the first writes it.
 * body_rot: per body the quaternion (x, y, z, w), then the rows of R. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
shape_match_finish(uint bodies, __global const uint2 *body_range, __global const float4 *partial,
                   __global const float4 *sums, __global float4 *body_com,
                   __global float4 *body_rot, float mu_s, float mu_k, uint use_static,
                   __global const float4 *rest, float4 wall_lo, float4 wall_hi, uint summed)
{
    __local float4 s[SM_ROWS * WG_SIZE];
    uint b = get_group_id(0);
    if (b >= bodies)
        return; /* the whole group */
    float4 a[SM_ROWS];
    if (summed) /* the body's sums whole (shape_match_totals, combined over devices) in sums */
        sm_totals_of(b, sums, a);
    else if (use_static) /* constant counts, as in shape_match_reduce */
        sm_body_sum(b, SM_ROWS, body_range, partial, sums, s, a);
    else
        sm_body_sum(b, SM_ROWS_POSE, body_range, partial, sums, s, a);
    float4 a0 = a[0], a1 = a[1], a2 = a[2];
    float4 c = body_com[b];
    c.xyz += (float3)(a0.w, a1.w, a2.w) + sm_friction(a[3], a[4].x, mu_s, mu_k).xyz;
    float4 q = sm_polar_rotation(a0, a1, a2, body_rot[4 * b]);
    float4 r0, r1, r2;
    sm_quat_matrix(q, &r0, &r1, &r2);
    float4 row0 = (float4)(r0.x, r1.x, r2.x, 0.0f), row1 = (float4)(r0.y, r1.y, r2.y, 0.0f),
           row2 = (float4)(r0.z, r1.z, r2.z, 0.0f);
    c += sm_wall_shift(body_range[b], rest, c, row0, row1, row2, wall_lo, wall_hi, s);
    if (get_local_id(0) != 0)
        return;
    body_com[b] = c;
    body_rot[4 * b] = q;
    body_rot[4 * b + 1] = row0;
    body_rot[4 * b + 2] = row1;
    body_rot[4 * b + 3] = row2;
}

/* shape_match_goal: per entry k of body b, x*_k += stiffness_b (c_b + R_b r_k - x*_k)
 * (stiffness 1: a rigid body, below 1: soft), clamped to the walls wall_lo..wall_hi: the
 * pose of shape_match_finish keeps the goals inside them, up to the rounding of c + R r_k. Each
 * entry has its own particle, so the writes never meet. body_stiffness: per body, the fraction of
 * the way to the goal. */
__kernel void shape_match_goal(uint entries, __global const uint *entry_id,
                               __global const uint *entry_body, __global const float4 *rest,
                               __global const uint *slot, __global const float4 *body_com,
                               __global const float4 *body_rot,
                               __global const float *body_stiffness, float4 wall_lo, float4 wall_hi,
                               __global float4 *pred, __global const uint *here)
{
    uint k = get_global_id(0);
    if (k >= entries || here[entry_id[k]] == PBFCL_EMPTY)
        return; /* not on this device */
    uint b = entry_body[k], i = slot[entry_id[k]];
    float4 r = (float4)(rest[k].xyz, 0.0f);
    float4 goal = body_com[b] + (float4)(dot(body_rot[4 * b + 1], r), dot(body_rot[4 * b + 2], r),
                                         dot(body_rot[4 * b + 3], r), 0.0f);
    float4 x = pred[i];
    float4 moved = (float4)(x.xyz + body_stiffness[b] * (goal.xyz - x.xyz), 0.0f);
    pred[i] = (float4)(clamp(moved, wall_lo, wall_hi).xyz, x.w);
}

/* v rotated by the unit quaternion q. */
static float4 sm_rotate(float4 q, float4 v)
{
    float4 t = 2.0f * cross(q, v);
    return (float4)(v.xyz + q.w * t.xyz + cross(q.xyz, t.xyz), 0.0f);
}

/* The unit quaternion of the rotation by the vector w (axis w / |w|, angle |w|). */
static float4 sm_quat_exp(float4 w)
{
    float angle = length(w.xyz);
    if (!(angle > 1e-12f))
        return (float4)(0.5f * w.xyz, 1.0f); /* first order; normalised by the caller */
    return (float4)(sin(0.5f * angle) * w.xyz / angle, cos(0.5f * angle));
}

/* The rotation vector (axis times angle) of the unit quaternion q, the shorter way round. */
static float4 sm_quat_log(float4 q)
{
    if (q.w < 0.0f)
        q = -q;
    float s = length(q.xyz);
    if (!(s > 1e-12f))
        return (float4)(2.0f * q.xyz, 0.0f);
    return (float4)(q.xyz * (2.0f * atan2(s, q.w) / s), 0.0f);
}

/* x solving J x = y for the symmetric J given as diagonal jd and off-diagonal jo (xy, xz, yz),
 * regularised by 1e-6 of its trace (a body on one line has no inertia about it). */
static float4 sm_solve_inertia(float4 jd, float4 jo, float4 y)
{
    float e = 1e-6f * (jd.x + jd.y + jd.z);
    float a = jd.x + e, d = jd.y + e, f = jd.z + e, b = jo.x, c = jo.y, g = jo.z;
    float4 c0 = (float4)(d * f - g * g, c * g - b * f, b * g - c * d, 0.0f); /* cofactors */
    float4 c1 = (float4)(c0.y, a * f - c * c, b * c - a * g, 0.0f);
    float4 c2 = (float4)(c0.z, c1.z, a * d - b * b, 0.0f);
    float det = a * c0.x + b * c0.y + c * c0.z;
    if (!(fabs(det) > 0.0f))
        return (float4)(0.0f);
    return (float4)(dot(c0, y), dot(c1, y), dot(c2, y), 0.0f) / det;
}

/* shape_match_spin: per body (a work-group each), from the sums of shape_match_momentum: the centre
 * c = c_b + sum f d, its velocity v_c = sum f v, the angular momentum about it L = sum f d x v -
 * (sum f d) x v_c and the angular velocity omega = I^-1 L, I = R J R^T with J the rest inertia (per
 * unit mass, body_inertia: diagonal, then xy xz yz). Writes body_motion (v_c, omega, c, the
 * rotation q now) and the predicted pose (c + v_c dt, exp(omega dt) q) into body_com and body_rot
 * as the warm start of the solver's shape matching. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
shape_match_spin(uint bodies, float dt, __global const uint2 *body_range,
                 __global const float4 *partial, __global const float4 *sums,
                 __global const float4 *body_inertia, __global float4 *body_com,
                 __global float4 *body_rot, __global float4 *body_motion, uint summed)
{
    __local float4 s[SM_ROWS * WG_SIZE];
    uint b = get_group_id(0);
    if (b >= bodies)
        return; /* the whole group */
    float4 a[SM_ROWS];
    if (summed) /* as in shape_match_finish */
        sm_totals_of(b, sums, a);
    else
        sm_body_sum(b, 3u, body_range, partial, sums, s, a);
    if (get_local_id(0) != 0)
        return;
    float4 a0 = a[0], a1 = a[1], a2 = a[2];
    float4 c = (float4)(body_com[b].xyz + a0.xyz, 0.0f), vc = (float4)(a1.xyz, 0.0f);
    float4 l = (float4)(a2.xyz - cross(a0.xyz, vc.xyz), 0.0f);
    float4 q = body_rot[4 * b], r0 = body_rot[4 * b + 1], r1 = body_rot[4 * b + 2],
           r2 = body_rot[4 * b + 3];
    float4 l_body = l.x * r0 + l.y * r1 + l.z * r2; /* R^T L */
    float4 x = sm_solve_inertia(body_inertia[2 * b], body_inertia[2 * b + 1], l_body);
    float4 omega = (float4)(dot(r0, x), dot(r1, x), dot(r2, x), 0.0f); /* R x */
    body_motion[4 * b] = vc;
    body_motion[4 * b + 1] = omega;
    body_motion[4 * b + 2] = c;
    body_motion[4 * b + 3] = q;
    float4 qp = normalize(sm_quat_mul(sm_quat_exp(omega * dt), q));
    float4 c0, c1, c2;
    sm_quat_matrix(qp, &c0, &c1, &c2);
    body_com[b] = c + vc * dt;
    body_rot[4 * b] = qp;
    body_rot[4 * b + 1] = (float4)(c0.x, c1.x, c2.x, 0.0f);
    body_rot[4 * b + 2] = (float4)(c0.y, c1.y, c2.y, 0.0f);
    body_rot[4 * b + 3] = (float4)(c0.z, c1.z, c2.z, 0.0f);
}

/* shape_match_predict: per entry of a rigid body b (stiffness 1), the rigid prediction x* = c + v_c
 * dt + exp(omega dt) (x - c) from shape_match_spin's motion, instead of predict's x + v dt: moving
 * a spinning body's particles along their tangents stretches it, and the rotation fitted to
 * the stretched shape falls short of the spin by theta^3 (theta = |omega| dt), a loss of
 * theta^2 of the angular momentum per substep. */
__kernel void shape_match_predict(uint entries, float dt, __global const uint *entry_id,
                                  __global const uint *entry_body, __global const uint *slot,
                                  __global const float4 *body_motion,
                                  __global const float *body_stiffness, __global const float4 *pos,
                                  __global float4 *pred, __global const uint *here)
{
    uint k = get_global_id(0);
    if (k >= entries || here[entry_id[k]] == PBFCL_EMPTY)
        return; /* not on this device */
    uint b = entry_body[k], i = slot[entry_id[k]];
    if (body_stiffness[b] < 1.0f)
        return; /* a soft body keeps predict's x + v dt: its deformation moves too */
    float4 vc = body_motion[4 * b], omega = body_motion[4 * b + 1], c = body_motion[4 * b + 2];
    float4 d = (float4)(pos[i].xyz - c.xyz, 0.0f);
    float4 q = normalize(sm_quat_exp(omega * dt));
    /* xyz only: w keeps the phase's tag that predict wrote (cl/pbf/pbf.cl, pbf_phase_tag) */
    vstore3(c.xyz + vc.xyz * dt + sm_rotate(q, d).xyz, 0, (__global float *)(pred + i));
}

/* shape_match_velocity: per entry of a rigid body b after update, the velocity of the body's motion
 * over the substep, v = v_c + omega x (x - c), instead of update's (x* - x) / dt: that chord of
 * a rotation has less angular momentum than the rotation, by a fraction theta^2 / 6. v_c and
 * omega are those of shape_match_spin corrected by what the solver changed: (c - c_pred) / dt
 * and the rotation vector of q q_pred^-1 over dt (c, q from the last shape matching, c_pred,
 * q_pred the predicted pose); corrections, not the whole motion from the start pose, so that a
 * free body's spin is not rounded anew every substep. */
__kernel void shape_match_velocity(uint entries, float dt, __global const uint *entry_id,
                                   __global const uint *entry_body, __global const uint *slot,
                                   __global const float4 *body_motion,
                                   __global const float *body_stiffness,
                                   __global const float4 *body_com, __global const float4 *body_rot,
                                   __global const float4 *pos, __global float4 *vel,
                                   __global const uint *here)
{
    uint k = get_global_id(0);
    if (k >= entries || here[entry_id[k]] == PBFCL_EMPTY)
        return; /* not on this device */
    uint b = entry_body[k], i = slot[entry_id[k]];
    if (body_stiffness[b] < 1.0f)
        return; /* a soft body keeps update's velocities: its deformation moves too */
    float4 c = body_com[b], q = body_rot[4 * b];
    float4 vc = body_motion[4 * b], omega = body_motion[4 * b + 1];
    float4 c_pred = body_motion[4 * b + 2] + vc * dt;
    float4 q_pred = normalize(sm_quat_mul(sm_quat_exp(omega * dt), body_motion[4 * b + 3]));
    float4 q_pred_inv = (float4)(-q_pred.xyz, q_pred.w);
    omega += sm_quat_log(sm_quat_mul(q, q_pred_inv)) / dt;
    vc += (float4)(c.xyz - c_pred.xyz, 0.0f) / dt;
    float4 d = (float4)(pos[i].xyz - c.xyz, 0.0f);
    vel[i] = (float4)(vc.xyz + cross(omega.xyz, d.xyz), 0.0f);
}
