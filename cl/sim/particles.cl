/* Solver-neutral passes over the particle state, for any method behind host/core/
 * solver_method.h (host/core/sim/particles.c): the step statistics, the bounds the adaptive
 * substeps read, and the render copy into the caller's particle order. Positions and
 * velocities are float4 (x, y, z, w; w unused here). Needs pbfcl_shared.h (PBFCL_STATS_*). */

#ifndef WG_SIZE
#error "WG_SIZE (work-group size, a power of two) must be defined with -D"
#endif

/* stats: per work-group partial sums and maxima of the step statistics (PBFCL_STATS_*), one
 * row of PBFCL_STATS_FIELDS floats per group. A particle is outside when beyond the walls
 * wall_lo..wall_hi the solver holds particles to; inv_rest_density scales the density error.
 * With bodies (phase and inv_mass, read only then): a particle's mass is mass / inv_mass (a
 * body's particles weigh by its density), static and moving obstacles (inv_mass 0) carry no
 * energy or momentum, and the density error is the fluid's (the fluid flag; a body's
 * particle has no density constraint). Without, every particle is fluid of the given mass. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
particles_stats(uint n, float4 wall_lo, float4 wall_hi, float mass, float inv_rest_density,
                __global const float4 *pos, __global const float4 *vel,
                __global const float *density, __global const uint *neighbor_count, uint bodies,
                __global const uint *phase, __global const float *inv_mass, __global float *partial)
{
    __local float acc[PBFCL_STATS_FIELDS][WG_SIZE];
    uint i = get_global_id(0), l = get_local_id(0);
    float v[PBFCL_STATS_FIELDS];
    for (int f = 0; f < PBFCL_STATS_FIELDS; f++)
        v[f] = 0.0f;
    if (i < n) {
        float4 x = pos[i], u = vel[i];
        bool finite = all(isfinite(x.xyz)) && all(isfinite(u.xyz));
        v[PBFCL_STATS_NAN] = finite ? 0.0f : 1.0f;
        bool out = any(isless(x.xyz, wall_lo.xyz)) || any(isgreater(x.xyz, wall_hi.xyz));
        v[PBFCL_STATS_OUTSIDE] = (finite && out) ? 1.0f : 0.0f;
        if (finite) {
            bool fluid = !bodies || (phase[i] & PBFCL_PHASE_FLUID_BIT) != 0u;
            float w = bodies ? inv_mass[i] : 1.0f;
            float m = w > 0.0f ? mass / w : 0.0f;
            float derr = fluid ? fmax(density[i] * inv_rest_density - 1.0f, 0.0f) : 0.0f;
            float nb = (float)neighbor_count[i];
            v[PBFCL_STATS_KINETIC] = 0.5f * m * dot(u.xyz, u.xyz);
            v[PBFCL_STATS_DENSITY_SUM] = derr;
            v[PBFCL_STATS_DENSITY_MAX] = derr;
            v[PBFCL_STATS_SPEED_MAX] = length(u.xyz);
            v[PBFCL_STATS_NEIGHBOR_SUM] = nb;
            v[PBFCL_STATS_NEIGHBOR_MAX] = nb;
            v[PBFCL_STATS_MOMENTUM + 0] = m * u.x;
            v[PBFCL_STATS_MOMENTUM + 1] = m * u.y;
            v[PBFCL_STATS_MOMENTUM + 2] = m * u.z;
            v[PBFCL_STATS_FINITE] = 1.0f;
            v[PBFCL_STATS_FLUID] = fluid ? 1.0f : 0.0f;
        }
    }
    for (int f = 0; f < PBFCL_STATS_FIELDS; f++)
        acc[f][l] = v[f];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (l < s) {
            for (int f = 0; f < PBFCL_STATS_FIELDS; f++) {
                bool is_max = f == PBFCL_STATS_DENSITY_MAX || f == PBFCL_STATS_SPEED_MAX ||
                              f == PBFCL_STATS_NEIGHBOR_MAX;
                float a = acc[f][l], b = acc[f][l + s];
                acc[f][l] = is_max ? fmax(a, b) : a + b;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l < PBFCL_STATS_FIELDS)
        partial[get_group_id(0) * PBFCL_STATS_FIELDS + l] = acc[l][0];
}

/* bounds: the fastest particle and the extent of the fluid along gravity, for the adaptive
 * substeps of the next frame (host/core/sim/sim.c, choose_substeps). With d = (x - box centre) .
 * down and D the diagonal of the box box_lo..box_hi, out[0] = max |v|, a solid body's (a
 * shape-matched body's, group 1 .. matched, or a static particle's; phase NULL: none) counted
 * solid_scale times, out[1] = max (D + d), out[2] = max (D - d), as the bits of non-negative
 * floats (whose order is that of the uints) merged with atomic_max; out must hold zeros before
 * the launch. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
particles_bounds(uint n, float4 box_lo, float4 box_hi, float4 down, __global const float4 *pos,
                 __global const float4 *vel, __global uint *out, __global const uint *phase,
                 uint matched, float solid_scale)
{
    __local float acc[3][WG_SIZE];
    uint i = get_global_id(0), l = get_local_id(0);
    float4 centre = 0.5f * (box_lo + box_hi);
    float reach = length(box_hi.xyz - box_lo.xyz);
    float v[3] = {0.0f, 0.0f, 0.0f};
    if (i < n) {
        float d = clamp(dot(pos[i].xyz - centre.xyz, down.xyz), -reach, reach);
        float s = length(vel[i].xyz);
        uint group = phase ? phase[i] & PBFCL_PHASE_GROUP_BITS : 0u;
        bool solid = phase && (phase[i] & PBFCL_PHASE_FLUID_BIT) == 0u;
        if (solid && (group == PBFCL_PHASE_GROUP_BITS || group - 1u < matched))
            s *= solid_scale;
        v[0] = isfinite(s) ? s : MAXFLOAT; /* the blow-up guard reports non-finite values */
        v[1] = reach + d;
        v[2] = reach - d;
    }
    for (int f = 0; f < 3; f++)
        acc[f][l] = isfinite(v[f]) ? v[f] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (l < s)
            for (int f = 0; f < 3; f++)
                acc[f][l] = fmax(acc[f][l], acc[f][l + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l < 3)
        atomic_max(&out[l], as_uint(acc[l][0]));
}

/* slots: slot[id[i]] = i, the current slot of every persistent id: the id-to-slot map every
 * module that names particles by id reads (the reorder moves particles every substep; shape
 * matching's entries name them by id). */
__kernel void particles_slots(uint n, __global const uint *id, __global uint *slot)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    slot[id[i]] = i;
}

/* copy_positions: dst[id[i]] = (x, y, z, |v|) of slot i, for rendering: the caller's
 * particle order (particle k at dst[k]), whatever order the solver keeps. */
__kernel void particles_copy_positions(uint n, __global const float4 *pos,
                                       __global const float4 *vel, __global const uint *id,
                                       __global float4 *dst)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint k = id[i]; /* 0..n-1, each once; a corrupt id writes nothing rather than past dst */
    if (k < n)
        dst[k] = (float4)(pos[i].xyz, length(vel[i].xyz));
}

/* gather_rows: out holds count rows of `words` 32-bit words, packed; row r is the row at slot
 * slots[r] of src (a per-particle buffer of rows of that size). One item per word: item g
 * copies word g % words of row g / words, so that neighbouring items read neighbouring words.
 * A simulation split over devices gathers the rows it sends with it (host/dist/). */
__kernel void particles_gather_rows(uint count, uint words, __global const uint *src,
                                    __global const uint *slots, __global uint *out)
{
    size_t g = get_global_id(0);
    if (g >= (size_t)count * words)
        return;
    size_t row = g / words;
    out[g] = src[(size_t)slots[row] * words + (g - row * words)];
}

/* scatter_rows: the inverse of gather_rows: the packed rows of in go to the rows at slots[r]
 * of dst (the slots distinct: each row is written once). */
__kernel void particles_scatter_rows(uint count, uint words, __global const uint *in,
                                     __global const uint *slots, __global uint *dst)
{
    size_t g = get_global_id(0);
    if (g >= (size_t)count * words)
        return;
    size_t row = g / words;
    dst[(size_t)slots[row] * words + (g - row * words)] = in[g];
}

/* fill_rows: the rows first..first+count-1 of dst (rows of `words` 32-bit words) take their
 * initial values made on the device: every word of row first + r is value + step * (first +
 * r): a constant (step 0: zero, one, the rest density, the fluid phase, as bits) or the row's
 * id (value 0, step 1). What appended particles start from, with no upload. */
__kernel void particles_fill_rows(uint first, uint count, uint words, uint value, uint step,
                                  __global uint *dst)
{
    size_t g = get_global_id(0);
    if (g >= (size_t)count * words)
        return;
    uint row = first + (uint)(g / words);
    dst[(size_t)first * words + g] = value + step * row;
}

/* gather_column: the rows at slots slots[r] of src (rows of `words` words) into column `at`
 * of the packed records out, count records of `stride` words each: out[r * stride + at + w] =
 * src[slots[r] * words + w]. One launch per saved buffer fills every record's rows, which are
 * then read at once (a simulation split over devices, host/dist/). */
__kernel void particles_gather_column(uint count, uint words, uint stride, uint at,
                                      __global const uint *src, __global const uint *slots,
                                      __global uint *out)
{
    size_t g = get_global_id(0);
    if (g >= (size_t)count * words)
        return;
    size_t row = g / words, w = g - row * words;
    out[row * stride + at + w] = src[(size_t)slots[row] * words + w];
}

/* append_column: the inverse for appended particles: column `at` of the packed records in
 * (count records of `stride` words) into the rows first..first+count-1 of dst. */
__kernel void particles_append_column(uint count, uint words, uint stride, uint at, uint first,
                                      __global const uint *in, __global uint *dst)
{
    size_t g = get_global_id(0);
    if (g >= (size_t)count * words)
        return;
    size_t row = g / words, w = g - row * words;
    dst[(size_t)first * words + g] = in[row * stride + at + w];
}

/* scatter_column: the inverse of gather_column: column `at` of the packed records in (count
 * records of `stride` words) into the rows at slots slots[r] of dst (the slots distinct). The
 * values of several buffers travel as one packed block of rows and are scattered column by
 * column (a simulation split over devices, host/dist/). */
__kernel void particles_scatter_column(uint count, uint words, uint stride, uint at,
                                       __global const uint *in, __global const uint *slots,
                                       __global uint *dst)
{
    size_t g = get_global_id(0);
    if (g >= (size_t)count * words)
        return;
    size_t row = g / words, w = g - row * words;
    dst[(size_t)slots[row] * words + w] = in[row * stride + at + w];
}
