/* Kinematic obstacles: static particles (inverse mass 0) whose positions follow a prescribed
 * path, a constant velocity v and angular velocity w about the path's centre c until a stop
 * time: at time t (t' = min(t, stop)) a particle of rest offset d from c is at
 * c + v t' + R(w t') d, R(w t') the rotation by |w| t' about w / |w| (Rodrigues). Stage:
 * kinematic_path (host/core/kinematic.c), run after predict so that x* is where the path is
 * at the end of the substep; update then gives the particle the path's velocity
 * (x* - x) / dt. */
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -D"
#endif

/* The particle's phase when static (PBFCL_SIM_PHASE_STATIC, host/core/sim.h). */
#define KINEMATIC_PHASE_STATIC 0xffffffffu

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
 * position at time t. path: 3 float4 per path: (c, stop), (v, 0), (w, 0); pred: x*, 4 floats
 * (a float4) per slot. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
kinematic_path(uint n, float t, __global const uint *phase, __global const uint *id, uint m,
               __global const uint *entry_id, __global const float4 *entry_offset,
               __global const float4 *path, __global float *pred)
{
    uint i = get_global_id(0);
    if (i >= n || phase[i] != KINEMATIC_PHASE_STATIC)
        return;
    uint e = kinematic_find(id[i], m, entry_id);
    if (e == m)
        return;
    float4 o = entry_offset[e];
    uint k = (uint)o.w;
    float4 c = path[3u * k], v = path[3u * k + 1u], w = path[3u * k + 2u];
    float te = fmin(t, c.w);
    /* in scalars, stored one by one: Oclgrind 21.10's uninitialised-value check reports a
     * vector built from values that depend on a kernel argument (here t) as uninitialised,
     * and crashed on float3 swizzles */
    float dx = o.x, dy = o.y, dz = o.z;
    float speed = sqrt(w.x * w.x + w.y * w.y + w.z * w.z);
    if (speed > 0.0f) {
        float ax = w.x / speed, ay = w.y / speed, az = w.z / speed;
        float a = speed * te, s = sin(a), co = cos(a);
        float along = (ax * dx + ay * dy + az * dz) * (1.0f - co);
        float cx = ay * dz - az * dy, cy = az * dx - ax * dz, cz = ax * dy - ay * dx;
        dx = dx * co + cx * s + ax * along;
        dy = dy * co + cy * s + ay * along;
        dz = dz * co + cz * s + az * along;
    }
    pred[4u * i] = c.x + v.x * te + dx;
    pred[4u * i + 1u] = c.y + v.y * te + dy;
    pred[4u * i + 2u] = c.z + v.z * te + dz;
    pred[4u * i + 3u] = 0.0f;
}
