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
