/* Wind on cloth: drag and lift per dynamic triangle (as FleX's drag and lift), a force stage
 * before predict (host/core/pbf/wind.c). Part of PBF's program (after pbf.cl and distance.cl:
 * pbf_params, pbf_slot_of_id). Triangles name particles by persistent id: wind_slots maps
 * the ids to the slots of the sort. No atomics: wind_triangles computes each triangle's force, wind_gather adds to
 * each particle a third of the forces of its own triangles, found through a per-particle list
 * (offset[id] .. offset[id + 1] of entry: triangle indices). */

/* wind_slots: slot[id[i]] = i, where each persistent id sits after the sort (the wind's own
 * stage: the distance constraints map theirs in distance_slots). */
__kernel void wind_slots(uint n, __global const uint *id, __global uint *slot)
{
    pbf_slot_of_id(n, id, slot);
}

/* wind_triangles: triangle t with vertices (a, b, c) = tri[t].xyz, velocity v the mean of its
 * vertices' velocities relative to the wind, n its unit normal, A its area, cos = n . v / |v|:
 *   F = -A |v|^2 (drag |cos| v^ + lift (cos n - cos^2 v^)),
 * the drag along -v scaled by the area A |cos| the triangle shows the flow, the lift across v
 * in the plane of v and n, of size lift A |cos| sin |v|^2 (cos n - cos^2 v^ = |cos| sin l^,
 * l^ the unit vector across v towards the normal's side the flow meets). Edge-on (cos 0) a
 * triangle feels nothing, face-on (sin 0) no lift. force[t] = F (w = 0). */
__kernel void wind_triangles(uint count, float4 wind, float drag, float lift,
                             __global const uint4 *tri, __global const uint *slot,
                             __global const float4 *pos, __global const float4 *vel,
                             __global float4 *force)
{
    uint t = get_global_id(0);
    if (t >= count)
        return;
    uint4 abc = tri[t];
    uint i = slot[abc.x], j = slot[abc.y], k = slot[abc.z];
    float4 xi = pos[i], xj = pos[j], xk = pos[k];
    float4 v = (vel[i] + vel[j] + vel[k]) * (1.0f / 3.0f) - wind;
    float4 cr = cross(xj - xi, xk - xi); /* w = 0 */
    v.w = 0.0f;                          /* vel.w holds the vorticity's V |omega| */
    float twice_area = length(cr), speed = length(v);
    float4 f = (float4)(0.0f);
    if (twice_area > 0.0f && speed > 0.0f) {
        float4 nrm = cr / twice_area, vh = v / speed;
        float c = dot(nrm, vh);
        f = -(0.5f * twice_area) * speed * speed *
            (drag * fabs(c) * vh + lift * (c * nrm - c * c * vh));
    }
    force[t] = f;
}

/* wind_gather: v_i += dt w_i / 3 (sum of its triangles' forces), w_i = inv_mass[i] / mass the
 * particle's inverse mass in 1/kg (0 for a pinned one); v.w is kept. */
__kernel void wind_gather(pbf_params p, uint n, __global const uint *id,
                          __global const uint *offset, __global const uint *entry,
                          __global const float4 *force, __global const float *inv_mass,
                          __global float4 *vel)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint k0 = offset[id[i]], k1 = offset[id[i] + 1u];
    if (k0 == k1)
        return;
    float4 f = (float4)(0.0f);
    for (uint k = k0; k < k1; k++)
        f += force[entry[k]];
    float s = p->dt * inv_mass[i] / (3.0f * p->mass);
    float4 v = vel[i];
    vel[i] = (float4)(v.xyz + s * f.xyz, v.w);
}
