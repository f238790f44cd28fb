/* Multi-level exclusive prefix sum of uint arrays (seed 002): scan_groups scans blocks of
 * 2 * WG_SIZE elements in padded local memory and writes each block's sum; the host scans
 * those sums the same way and add_group_sums adds them back. */

#define SCAN_BLOCK (2 * WG_SIZE)

/* out[i] = exclusive prefix of in within its block of SCAN_BLOCK; sums[block] = block total.
 * in: n uints; out: n uints (may alias in); sums: one uint per block. */
kernel void scan_groups(global const uint *in, global uint *out, global uint *sums, uint n)
{
    local uint t[PADDED_SIZE(SCAN_BLOCK)];
    uint lid = get_local_id(0);
    uint base = get_group_id(0) * SCAN_BLOCK;
    uint ai = lid, bi = lid + WG_SIZE;
    t[PAD(ai)] = base + ai < n ? in[base + ai] : 0u;
    t[PAD(bi)] = base + bi < n ? in[base + bi] : 0u;
    uint total = scan_local_exclusive(t, SCAN_BLOCK, lid);
    if (base + ai < n)
        out[base + ai] = t[PAD(ai)];
    if (base + bi < n)
        out[base + bi] = t[PAD(bi)];
    if (lid == 0)
        sums[get_group_id(0)] = total;
}

/* out[i] += sums[i / SCAN_BLOCK] for i < n (blocks after the first).
 * out: n uints, in/out; sums: the scanned block sums. */
kernel void add_group_sums(global uint *out, global const uint *sums, uint n)
{
    uint i = get_global_id(0) + SCAN_BLOCK;
    if (i >= n)
        return;
    out[i] += sums[i / SCAN_BLOCK];
}
