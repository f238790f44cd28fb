/* reorder: gathers a float4 particle attribute into sorted order, dst[i] = src[index[i]],
 * so that particles of one cell lie next to each other in memory. */

/* One work-item per particle: coalesced writes, gathered reads. */
__kernel void reorder(__global const uint *index, /* in: original index of sorted particle i */
                      __global const float4 *src, /* in: attribute in original order */
                      __global float4 *dst,       /* out: attribute in sorted order */
                      const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    dst[i] = src[index[i]];
}

/* reorder_uint: the same gather for a uint attribute (the particles' persistent ids). */
__kernel void reorder_uint(__global const uint *index, /* in: original index of sorted particle i */
                           __global const uint *src,   /* in: attribute in original order */
                           __global uint *dst,         /* out: attribute in sorted order */
                           const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    dst[i] = src[index[i]];
}

/* reorder_solids: with solids (bodies or static particles), the reorder of the three words every
 * particle carries then, its persistent id, its phase and its inverse mass (as uint bits), in one
 * gather of the sort index instead of three, and with write_slots (shape-matched bodies) the
 * bodies' slot table slot[id] = i, where each persistent id sits now (the bodies' entries name
 * their particles by id). At 1.128M particles on an H200 the three gathers and
 * particles_slots, then shape_match_slots, took 44 us a substep. */
__kernel void reorder_solids(__global const uint *index,        /* in: original index of sorted i */
                             __global const uint *id_src,       /* in: ids in original order */
                             __global uint *id_dst,             /* out: ids in sorted order */
                             __global const uint *phase_src,    /* in: phases */
                             __global uint *phase_dst,          /* out */
                             __global const uint *inv_mass_src, /* in: inverse masses' bits */
                             __global uint *inv_mass_dst,       /* out */
                             __global uint *slot, /* out with write_slots: slot[id] = i */
                             const uint write_slots, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint from = index[i], id = id_src[from];
    id_dst[i] = id;
    phase_dst[i] = phase_src[from];
    inv_mass_dst[i] = inv_mass_src[from];
    if (write_slots)
        slot[id] = i;
}
