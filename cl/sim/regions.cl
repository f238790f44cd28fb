/* The lists by region of a split simulation's overlap (host/core/sim/regions.c,
 * docs/DISTRIBUTED.md, "Overlap"): after the neighbour search, the owned particles with a
 * ghost among the neighbours their kernels read (the boundary) and those without (the
 * interior), each list in slot order, through an exclusive scan of their flags. Built with
 * cl/sim/exchange.cl (one program). */

/* flags[i] = particle i is owned and lists a ghost, flags[n + i] = it is owned and lists none,
 * flags[2n] = 0 for the scan. ghost: n flags (the slot holds a ghost, pbfcl_exchange_sorted);
 * neighbors: the search's lists, entry k of particle i at k * n + i, neighbor_count[i] of them
 * of which the kernels read the first max_neighbors. Items: n + 1. */
__kernel void regions_flags(__global const uchar *ghost, __global const uint *neighbor_count,
                            __global const uint *neighbors, uint n, uint max_neighbors,
                            __global uint *flags)
{
    uint i = get_global_id(0);
    if (i > n)
        return;
    if (i == n) {
        flags[2u * n] = 0u;
        return;
    }
    bool owned = ghost[i] == 0, boundary = false;
    if (owned) {
        uint count = min(neighbor_count[i], max_neighbors);
        for (uint k = 0; k < count && !boundary; k++)
            boundary = ghost[neighbors[k * n + i]] != 0;
    }
    flags[i] = owned && boundary;
    flags[n + i] = owned && !boundary;
}

/* The lists from the flags' exclusive scan pos (2n + 1 entries): the boundary's slots at
 * slots[0 .. pos[n]), the interior's right after them, at slots[pos[n] .. pos[2n]). Items: n. */
__kernel void regions_lists(__global const uint *pos, uint n, __global uint *slots)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    if (pos[i + 1u] != pos[i])
        slots[pos[i]] = i;
    if (pos[n + i + 1u] != pos[n + i])
        slots[pos[n + i]] = i;
}
