/* Shape matching (Mueller et al. 2005, as in Macklin et al. 2014): the particles of each body
 * are pulled towards goal positions c + R r_k, c the centre of mass of their predicted
 * positions, R the rotation of the best linear fit A_pq = sum_k m_k (x_k - c) r_k^T, r_k the
 * rest offset from the rest centre of mass. A body is a run of entries (sorted by body, each
 * naming a particle by persistent id), reduced in one launch for every body at once whatever
 * their sizes: a segmented scan within each work-group, then one pass per body over the
 * partial sums of the groups it spans. Stages: shape_match_slots, shape_match_reduce,
 * shape_match_finish, shape_match_goal (host/core/shape_match.c). */
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -D"
#endif

/* shape_match_slots: slot[id[i]] = i, the current slot of every persistent id (the reorder
 * moves particles every substep; the entries name them by id). */
__kernel void shape_match_slots(uint n, __global const uint *id, __global uint *slot)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    slot[id[i]] = i;
}

/* shape_match_reduce: per entry k of body b, with d = x*_k - c_b (c_b the body's centre from
 * the last finish, which keeps the sums well conditioned) and mass fraction f_k = m_k / M_b
 * (rest.w): the three rows f_k d_a (r_k, 1), a = x, y, z; their xyz sum to A_pq / M_b, their w
 * to the shift of the centre. A segmented inclusive scan over the work-group (entries of one
 * body are contiguous) leaves each body's sum over the group at its last entry there, which
 * writes it to sums[b] if the body lies within the group, else to the group's head (the body
 * of its first entry) or tail (of its last) partial sums, which shape_match_finish adds up. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
shape_match_reduce(uint entries, __global const uint *entry_id, __global const uint *entry_body,
                   __global const float4 *rest, __global const uint *slot,
                   __global const float4 *pred, __global const float4 *body_com,
                   __global const uint2 *body_range, __global float4 *partial,
                   __global float4 *sums)
{
    __local float4 s0[WG_SIZE], s1[WG_SIZE], s2[WG_SIZE];
    __local uint seg[WG_SIZE];
    uint k = get_global_id(0), l = get_local_id(0), g = get_group_id(0);
    uint b = PBFCL_EMPTY;
    float4 v0 = (float4)(0.0f), v1 = v0, v2 = v0;
    if (k < entries) {
        b = entry_body[k];
        float4 r = rest[k];
        float4 d = pred[slot[entry_id[k]]] - body_com[b];
        float4 fr = r.w * (float4)(r.xyz, 1.0f);
        v0 = d.x * fr;
        v1 = d.y * fr;
        v2 = d.z * fr;
    }
    seg[l] = b;
    s0[l] = v0;
    s1[l] = v1;
    s2[l] = v2;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < WG_SIZE; off <<= 1) {
        bool take = l >= off && seg[l - off] == b;
        float4 a0 = take ? s0[l - off] : (float4)(0.0f);
        float4 a1 = take ? s1[l - off] : (float4)(0.0f);
        float4 a2 = take ? s2[l - off] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        v0 += a0;
        v1 += a1;
        v2 += a2;
        s0[l] = v0;
        s1[l] = v1;
        s2[l] = v2;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    bool last = k < entries && (l == WG_SIZE - 1 || seg[l + 1] != b);
    if (!last)
        return;
    uint2 range = body_range[b];
    uint first = g * WG_SIZE;
    if (range.x >= first && range.y <= first + WG_SIZE) { /* the whole body is in this group */
        sums[3 * b] = v0;
        sums[3 * b + 1] = v1;
        sums[3 * b + 2] = v2;
    } else { /* head: the body of the group's first entry; tail: of its last */
        uint o = range.x <= first ? 6 * g : 6 * g + 3;
        partial[o] = v0;
        partial[o + 1] = v1;
        partial[o + 2] = v2;
    }
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
        if (w < 1e-9f)
            break;
        float4 step = (float4)(sin(0.5f * w) * omega.xyz / w, cos(0.5f * w));
        q = normalize(sm_quat_mul(step, q));
    }
    return q;
}

/* shape_match_finish: per body, the sums over its entries (sums[b], or the partial sums of
 * the groups first / WG_SIZE .. (end - 1) / WG_SIZE it spans: the first group's tail, or its
 * head if the body starts it, and the heads of the others), the new centre c = c_last +
 * sum f d, A = sum f d r^T and its rotation, warm-started from the body's last rotation.
 * body_rot: per body the quaternion (x, y, z, w), then the rows of R. */
__kernel void shape_match_finish(uint bodies, __global const uint2 *body_range,
                                 __global const float4 *partial, __global const float4 *sums,
                                 __global float4 *body_com, __global float4 *body_rot)
{
    uint b = get_global_id(0);
    if (b >= bodies)
        return;
    uint2 range = body_range[b];
    uint g0 = range.x / WG_SIZE, g1 = (range.y - 1) / WG_SIZE;
    float4 a0, a1, a2;
    if (g0 == g1) {
        a0 = sums[3 * b];
        a1 = sums[3 * b + 1];
        a2 = sums[3 * b + 2];
    } else {
        uint first = range.x == g0 * WG_SIZE ? 6 * g0 : 6 * g0 + 3;
        a0 = partial[first];
        a1 = partial[first + 1];
        a2 = partial[first + 2];
        for (uint g = g0 + 1; g <= g1; g++) {
            a0 += partial[6 * g];
            a1 += partial[6 * g + 1];
            a2 += partial[6 * g + 2];
        }
    }
    float4 c = body_com[b];
    c.xyz += (float3)(a0.w, a1.w, a2.w);
    body_com[b] = c;
    float4 q = sm_polar_rotation(a0, a1, a2, body_rot[4 * b]);
    float4 r0, r1, r2;
    sm_quat_matrix(q, &r0, &r1, &r2);
    body_rot[4 * b] = q;
    body_rot[4 * b + 1] = (float4)(r0.x, r1.x, r2.x, 0.0f);
    body_rot[4 * b + 2] = (float4)(r0.y, r1.y, r2.y, 0.0f);
    body_rot[4 * b + 3] = (float4)(r0.z, r1.z, r2.z, 0.0f);
}

/* shape_match_goal: per entry k of body b, x*_k += stiffness_b (c_b + R_b r_k - x*_k)
 * (stiffness 1: a rigid body, below 1: soft). Each entry has its own particle, so the
 * writes never meet. body_stiffness: per body, the fraction of the way to the goal. */
__kernel void shape_match_goal(uint entries, __global const uint *entry_id,
                               __global const uint *entry_body, __global const float4 *rest,
                               __global const uint *slot, __global const float4 *body_com,
                               __global const float4 *body_rot,
                               __global const float *body_stiffness, __global float4 *pred)
{
    uint k = get_global_id(0);
    if (k >= entries)
        return;
    uint b = entry_body[k], i = slot[entry_id[k]];
    float4 r = (float4)(rest[k].xyz, 0.0f);
    float4 goal = body_com[b] + (float4)(dot(body_rot[4 * b + 1], r), dot(body_rot[4 * b + 2], r),
                                         dot(body_rot[4 * b + 3], r), 0.0f);
    float4 x = pred[i];
    pred[i] = (float4)(x.xyz + body_stiffness[b] * (goal.xyz - x.xyz), x.w);
}
