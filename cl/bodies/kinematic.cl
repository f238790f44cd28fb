/* Kinematic obstacles: static particles (inverse mass 0) whose positions follow a prescribed
 * path about the path's centre c: at time t a particle of rest offset d from c is at
 * c + p(t) + R(r(t)) d, R(r) the rotation by |r| about r / |r| (through its quaternion,
 * pbfcl_quat_rotate of pbfcl_shared.h, as attach.cl's poses). With rates, a
 * velocity v and an angular velocity w until a stop time: p = v t', r = w t', t' = min(t, stop).
 * With keys (times, displacements p and rotation vectors r, from the start key (0, 0, 0)):
 * p and r interpolated linearly between the keys around t, held after the last key, or with
 * repeat taken at t modulo the last key's time. Stage: kinematic_path (host/core/bodies/kinematic.c),
 * run after predict so that x* is where the path is at the end of the substep; update then
 * gives the particle the path's velocity (x* - x) / dt. */
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -D"
#endif


/* The entry of particle id among the m sorted entry ids, or m if none. */
static uint kinematic_find(uint id, uint m, __global const uint *entry_id)
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

/* kinematic_path: for each of the n particles that is static and has an entry (ids sorted in
 * entry_id, offsets in entry_offset: xyz the rest offset d, w the path index), x* = its path's
 * position at time t. path: 4 float4 per path: (c, stop), (v, 0), (w, 0), (first key, keys,
 * repeat, period); key: 2 float4 per key: (time, p), (r, 0), a path's keys in time order from
 * its start key (a path with rates has only that one); pred: x*, 4 floats (a float4) per
 * slot. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
kinematic_path(uint n, float t, __global const uint *phase, __global const uint *id, uint m,
               __global const uint *entry_id, __global const float4 *entry_offset,
               __global const float4 *path, __global const float4 *key, __global float *pred)
{
    uint i = get_global_id(0);
    if (i >= n || phase[i] != PBFCL_PHASE_STATIC_WORD)
        return;
    uint e = kinematic_find(id[i], m, entry_id);
    if (e == m)
        return;
    float4 o = entry_offset[e];
    uint k = (uint)o.w;
    float4 c = path[4u * k], v = path[4u * k + 1u], w = path[4u * k + 2u], f = path[4u * k + 3u];
    uint first = (uint)f.x, keys = (uint)f.y;
    /* the displacement p and rotation vector r at t; in scalars, stored one by one: Oclgrind
     * 21.10's uninitialised-value check reports a vector built from values that depend on a
     * kernel argument (here t) as uninitialised, and crashed on float3 swizzles */
    float px, py, pz, rx, ry, rz;
    if (keys <= 1u) { /* rates */
        float te = fmin(t, c.w);
        px = v.x * te;
        py = v.y * te;
        pz = v.z * te;
        rx = w.x * te;
        ry = w.y * te;
        rz = w.z * te;
    } else { /* keys: the segment [a, a + 1] around tk, or the last key */
        float tk = f.z != 0.0f ? t - f.w * floor(t / f.w) : t;
        uint a = first, last = first + keys - 1u;
        while (a + 1u < last && key[2u * (a + 1u)].x <= tk)
            a++;
        float4 ka = key[2u * a], kb = key[2u * a + 2u];
        float4 ra = key[2u * a + 1u], rb = key[2u * a + 3u];
        float s = clamp((tk - ka.x) / (kb.x - ka.x), 0.0f, 1.0f);
        px = ka.y + s * (kb.y - ka.y);
        py = ka.z + s * (kb.z - ka.z);
        pz = ka.w + s * (kb.w - ka.w);
        rx = ra.x + s * (rb.x - ra.x);
        ry = ra.y + s * (rb.y - ra.y);
        rz = ra.z + s * (rb.z - ra.z);
    }
    float dx = o.x, dy = o.y, dz = o.z;
    float angle = sqrt(rx * rx + ry * ry + rz * rz);
    if (angle > 0.0f) { /* the quaternion of r: (sin(|r| / 2) r / |r|, cos(|r| / 2)) */
        float s = sin(0.5f * angle) / angle;
        pbfcl_quat_rotate(rx * s, ry * s, rz * s, cos(0.5f * angle), &dx, &dy, &dz);
    }
    pred[4u * i] = c.x + px + dx;
    pred[4u * i + 1u] = c.y + py + dy;
    pred[4u * i + 2u] = c.z + pz + dz;
    pred[4u * i + 3u] = (float)PBFCL_PHASE_STATIC_WORD; /* its tag, as predict wrote it */
}
