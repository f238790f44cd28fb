/* Inflatables: closed triangle meshes over particles that hold a volume of gas (FleX's
 * inflatables; Mueller et al. 2007, "Position based dynamics", section 4.4), projected in PBF's
 * solver iteration after the distance constraints (host/core/pbf/inflatable.c). Part of PBF's
 * program (after pbf.cl: pbf_params, pbf_box_min/max). Triangles and vertices name particles by
 * persistent id, through the id-to-slot map that distance_slots writes. Each inflatable's
 * triangles, and its vertices, start at a multiple of the work-group size (the slots between
 * are padding, inflatable PBFCL_NO_INFLATABLE), so that every work-group belongs to one
 * inflatable: a group's partial sums are its inflatable's, and inflatable_lambda adds its
 * groups' partials. No atomics. Per iteration, with C = V - V1 (V1 = pressure * rest volume):
 * inflatable_volume (per triangle: its signed volume and gradient, the group's volume),
 * inflatable_normals (per vertex: grad_i C, the group's sum of w |grad C|^2),
 * inflatable_lambda (per inflatable: the XPBD step of its multiplier), inflatable_move (per
 * vertex: x*_i += w_i grad_i C dlambda). */

#define PBFCL_NO_INFLATABLE 0xffffffffu

/* The sum of the work-group's x (any work-group size; a barrier before return). */
static float inflatable_group_sum(float x, __local float *scratch)
{
    uint lid = get_local_id(0), size = get_local_size(0);
    scratch[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < size; s <<= 1) {
        if ((lid & (2u * s - 1u)) == 0u && lid + s < size)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float sum = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}

/* inflatable_volume: for padded triangle t = (a, b, c, k) of inflatable k, with x relative to
 * the inflatable's reference particle o (its first triangle's first vertex, for rounding), its
 * signed volume (x_a . (x_b x x_c)) / 6 and the gradient of the volume it adds to each of its
 * vertices, (x_b - x_a) x (x_c - x_a) / 6 (a third of its area-weighted normal; over a closed
 * mesh, sum_t x_b x x_c / 6 around a vertex equals it). Writes grad[t] and the group's volume
 * into partial[group]. */
__kernel void inflatable_volume(uint slots, __global const uint4 *tri,
                                __global const uint *ref, __global const uint *slot,
                                __global const float4 *pred, __global float4 *grad,
                                __global float *partial, __local float *scratch)
{
    uint t = get_global_id(0);
    float vol = 0.0f;
    if (t < slots) {
        uint4 q = tri[t];
        float4 g = (float4)(0.0f);
        if (q.w != PBFCL_NO_INFLATABLE) {
            float3 o = pred[slot[ref[q.w]]].xyz;
            float3 a = pred[slot[q.x]].xyz - o, b = pred[slot[q.y]].xyz - o;
            float3 c = pred[slot[q.z]].xyz - o;
            vol = dot(a, cross(b, c)) / 6.0f;
            g = (float4)(cross(b - a, c - a) / 6.0f, 0.0f);
        }
        grad[t] = g;
    }
    float sum = inflatable_group_sum(vol, scratch);
    if (get_local_id(0) == 0u)
        partial[get_group_id(0)] = sum;
}

/* inflatable_normals: for padded vertex slot v = (id, k), grad_v C = the sum of grad[t] over
 * its triangles (vtri[voffset[v] .. voffset[v + 1]]), written with w = its inverse mass (1/kg)
 * to vgrad[v]; the group's sum of w |grad C|^2 into partial[group]. */
__kernel void inflatable_normals(pbf_params p, uint slots, __global const uint2 *vert,
                                 __global const uint *voffset, __global const uint *vtri,
                                 __global const float4 *grad, __global const uint *slot,
                                 __global const float *inv_mass, __global float4 *vgrad,
                                 __global float *partial, __local float *scratch)
{
    uint v = get_global_id(0);
    float den = 0.0f;
    if (v < slots) {
        uint2 e = vert[v];
        float4 g = (float4)(0.0f);
        if (e.y != PBFCL_NO_INFLATABLE) {
            for (uint k = voffset[v]; k < voffset[v + 1u]; k++)
                g += grad[vtri[k]];
            g.w = inv_mass[slot[e.x]] / p->mass; /* inv_mass holds m_fluid / m */
            den = g.w * dot(g.xyz, g.xyz);
        }
        vgrad[v] = g;
    }
    float sum = inflatable_group_sum(den, scratch);
    if (get_local_id(0) == 0u)
        partial[get_group_id(0)] = sum;
}

/* inflatable_lambda: for inflatable k with groups range = (first triangle group, count, first
 * vertex group, count) and param = (V1, compliance alpha at V1, 0, 0): V and D = sum w |grad
 * C|^2 from the partials, C = V - V1 and the XPBD step of its multiplier, dlambda = (-C -
 * alpha~ lambda) / (D + alpha~), alpha~ = alpha (V / V1) / dt^2: the compliance of an ideal
 * gas at constant temperature, V / P, so that the gas' pressure follows Boyle's law (docs/
 * ALGORITHM.md, "Inflatables"). lambda restarts at 0 with first. Writes lambda[k] and state[k]
 * = (V, dlambda, lambda, D). */
__kernel void inflatable_lambda(pbf_params p, uint count, uint first, __global const uint4 *range,
                                __global const float4 *param, __global const float *vol_partial,
                                __global const float *den_partial, __global float *lambda,
                                __global float4 *state)
{
    uint k = get_global_id(0);
    if (k >= count)
        return;
    uint4 r = range[k];
    float vol = 0.0f, den = 0.0f;
    for (uint g = 0; g < r.y; g++)
        vol += vol_partial[r.x + g];
    for (uint g = 0; g < r.w; g++)
        den += den_partial[r.z + g];
    float4 q = param[k];
    float l = first ? 0.0f : lambda[k];
    float at = q.y * (vol / q.x) * p->inv_dt * p->inv_dt;
    float dl = den + at > 0.0f ? (-(vol - q.x) - at * l) / (den + at) : 0.0f;
    lambda[k] = l + dl;
    state[k] = (float4)(vol, dl, l + dl, den);
}

/* inflatable_move: x*_v += w_v grad_v C dlambda of its inflatable, kept inside the walls; the
 * phase tag in x*.w is kept. A particle is a vertex of one inflatable at most. */
__kernel void inflatable_move(pbf_params p, uint slots, __global const uint2 *vert,
                              __global const float4 *vgrad, __global const float4 *state,
                              __global const uint *slot, __global float4 *pred)
{
    uint v = get_global_id(0);
    if (v >= slots)
        return;
    uint2 e = vert[v];
    if (e.y == PBFCL_NO_INFLATABLE)
        return;
    float4 g = vgrad[v];
    uint i = slot[e.x];
    float4 x = pred[i];
    float4 q = x + (float4)(g.w * state[e.y].y * g.xyz, 0.0f);
    q = clamp(q, pbf_box_min(p), pbf_box_max(p));
    pred[i] = (float4)(q.xyz, x.w);
}
