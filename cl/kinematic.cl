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
 * position at time t. path: 3 float4 per path: (c, stop), (v, 0), (w, 0). */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
kinematic_path(uint n, float t, __global const uint *phase, __global const uint *id, uint m,
               __global const uint *entry_id, __global const float4 *entry_offset,
               __global const float4 *path, __global float4 *pred)
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
    float3 d = o.xyz, axis = w.xyz;
    float speed = length(axis);
    if (speed > 0.0f) {
        axis /= speed;
        float a = speed * te, s = sin(a), co = cos(a);
        d = d * co + cross(axis, d) * s + axis * (dot(axis, d) * (1.0f - co));
    }
    pred[i] = (float4)(c.xyz + v.xyz * te + d, 0.0f);
}
