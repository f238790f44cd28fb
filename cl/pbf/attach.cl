/* Attachments of particles to collision shapes (host/core/pbf/attach.c): a static particle
 * attached to a shape at a point of the shape's frame sits at that point of the shape's pose at
 * the end of the substep, so that update gives it the shape's velocity (x* - x) / dt and the
 * cloth or rope it holds is dragged as the shape moves. Part of PBF's program. Attachments to
 * bodies are distance constraints (distance.cl). */

/* The entry of particle id among the m sorted entry ids, or m if none. */
static uint attach_find(uint id, uint m, __global const uint *entry_id)
{
    uint lo = 0u, hi = m; /* the entry, if any, is in [lo, hi) */
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2u;
        uint e = entry_id[mid];
        if (e == id)
            return mid;
        if (e < id)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return m;
}

/* attach_shapes: for each of the n particles (phase and persistent id per slot) that is static
 * and has an entry (m entries, ids sorted in entry_id; entry_point: xyz the point in its shape's
 * frame, w the index of its shape in shape_index, which gives the shape's row in the colliders'
 * table, 0xffffffff: none), x* = c + R(q) point, with c the row's position (float4 0 of the row)
 * and q its rotation (float4 1, a unit quaternion x, y, z, w), stride float4 per row; the phase
 * tag in x*.w is kept. */
__kernel void attach_shapes(uint n, __global const uint *phase, __global const uint *id, uint m,
                            __global const uint *entry_id, __global const float4 *entry_point,
                            __global const uint *shape_index, uint stride,
                            __global const float4 *shapes, __global float4 *pred)
{
    uint i = get_global_id(0);
    if (i >= n || phase[i] != PBFCL_PHASE_STATIC_WORD)
        return;
    uint e = attach_find(id[i], m, entry_id);
    if (e == m)
        return;
    float4 o = entry_point[e];
    uint k = shape_index[(uint)o.w];
    if (k == 0xffffffffu)
        return;
    float4 c = shapes[k * stride], q = shapes[k * stride + 1u];
    float rx = o.x, ry = o.y, rz = o.z;
    pbfcl_quat_rotate(q.x, q.y, q.z, q.w, &rx, &ry, &rz);
    float w = pred[i].w;
    pred[i] = (float4)(c.x + rx, c.y + ry, c.z + rz, w);
}
