/* Distance constraints with XPBD compliance (Macklin, Mueller & Chentanez 2016) for cloth and
 * ropes, projected in PBF's solver iteration (host/core/pbf/distance.c). Part of PBF's program
 * (after pbf.cl: pbf_params, pbf_box_min/max). Constraints name particles by persistent id;
 * distance_slots maps ids to the slots of the sort. No atomics: distance_project computes each
 * constraint's step, distance_gather adds the steps of a particle's own constraints, found
 * through a per-particle list (offset[id] .. offset[id + 1] of entry: constraint * 2 + side). */

/* slot[id[i]] = i for work-item i < n: where each persistent id sits after the sort (the
 * id-to-slot map of each stage that names particles by id: distance_slots, wind_slots). */
static void pbf_slot_of_id(uint n, __global const uint *id, __global uint *slot)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    slot[id[i]] = i;
}

/* distance_slots: slot[id[i]] = i, where each persistent id sits after the sort. */
__kernel void distance_slots(uint n, __global const uint *id, __global uint *slot)
{
    pbf_slot_of_id(n, id, slot);
}

/* distance_project: for constraint c between ids pair[c] = (a, b) with rest (L, compliance
 * alpha, tether flag, 0), C = |x*_a - x*_b| - L and the XPBD step of its multiplier,
 * dlambda = (-C - alpha~ lambda) / (n_a w_a + n_b w_b + alpha~), alpha~ = alpha / dt^2, w the
 * inverse masses (1/kg) and n the constraints of each particle of the constraint's sort (count
 * = (others, tethers) per id): constraint averaging (Macklin et al. 2014, section 4.2) put into
 * the multiplier, so that a particle takes at most 1/n of each of its constraints' full steps
 * and lambda accumulates exactly what was applied (its force lambda / dt^2 then obeys Hooke's
 * law with compliance alpha at any iteration count). A tether acts only when stretched
 * (lambda <= 0) and is averaged only with the particle's other tethers: averaged with its
 * edges and bends too (a tenth of its step), a cloth hung from two corners stretched by 2.6 %
 * at 4 iterations, with tethers apart by less than 1 %. lambda restarts at 0 with first (the first
 * iteration of a substep). corr[c] = dlambda grad_a C, the step of a per unit inverse mass. */
__kernel void distance_project(pbf_params p, uint count, uint first, __global const uint2 *pair,
                               __global const float4 *rest, __global const uint2 *n_of,
                               __global const uint *slot, __global const float4 *pred,
                               __global const float *inv_mass, __global float *lambda,
                               __global float4 *corr)
{
    uint c = get_global_id(0);
    if (c >= count)
        return;
    uint2 ab = pair[c];
    uint i = slot[ab.x], j = slot[ab.y];
    float4 r = rest[c];
    float4 d = pred[i] - pred[j];
    d.w = 0.0f;
    float len = length(d);
    float l = first ? 0.0f : lambda[c];
    float inv_m = 1.0f / p->mass; /* inv_mass holds m_fluid / m */
    uint2 na = n_of[ab.x], nb = n_of[ab.y];
    float ni = (float)(r.z != 0.0f ? na.y : na.x), nj = (float)(r.z != 0.0f ? nb.y : nb.x);
    float at = r.y * p->inv_dt * p->inv_dt;
    float denom = (ni * inv_mass[i] + nj * inv_mass[j]) * inv_m + at;
    float dl = 0.0f;
    if (len > 0.0f && denom > 0.0f) {
        dl = (-(len - r.x) - at * l) / denom;
        if (r.z != 0.0f) /* a tether pulls, never pushes */
            dl = fmin(l + dl, 0.0f) - l;
    }
    lambda[c] = l + dl;
    corr[c] = len > 0.0f ? (dl / len) * d : (float4)(0.0f);
}

/* distance_gather: x*_i += w_i (sum of +corr over the constraints where i is a, -corr where
 * it is b), kept inside the walls; the phase tag in x*.w is kept. */
__kernel void distance_gather(pbf_params p, uint n, __global const uint *id,
                              __global const uint *offset, __global const uint *entry,
                              __global const float4 *corr, __global const float *inv_mass,
                              __global float4 *pred)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint k0 = offset[id[i]], k1 = offset[id[i] + 1u];
    if (k0 == k1)
        return;
    float4 dx = (float4)(0.0f);
    for (uint k = k0; k < k1; k++) {
        uint e = entry[k];
        float4 s = corr[e >> 1];
        dx += (e & 1u) ? -s : s;
    }
    float4 x = pred[i];
    float4 q = clamp(x + (inv_mass[i] / p->mass) * dx, pbf_box_min(p), pbf_box_max(p));
    pred[i] = (float4)(q.xyz, x.w);
}
