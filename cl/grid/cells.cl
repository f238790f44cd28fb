/* cells: the start and end (one past the last) sorted index of every non-empty cell, found
 * by comparing each particle's sorted cell id with its neighbours' (seed 002's
 * updateUniformGrid); cells_clear resets only the entries a previous pass wrote. */

/* Particle i writes only if it is the first (start) or last (end) of its run of equal ids,
 * so every table entry has exactly one writer. Ids outside the table are skipped. */
__kernel void cells(__global const uint *cell_id, /* in: sorted cell ids */
                    __global uint *cell_start,    /* out: per cell, first sorted index */
                    __global uint *cell_end,      /* out: per cell, one past the last */
                    const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint c = cell_id[i];
    if (c >= GRID_NUM_CELLS)
        return;
    if (i == 0 || cell_id[i - 1] != c)
        cell_start[c] = i;
    if (i == n - 1 || cell_id[i + 1] != c)
        cell_end[c] = i + 1;
}

/* Sets the entries of the cells listed in the previous sorted cell ids back to EMPTY; only
 * the first particle of each run writes, so every entry has exactly one writer. */
__kernel void cells_clear(__global const uint *cell_id, /* in: the previous sorted cell ids */
                          __global uint *cell_start,    /* out: EMPTY where written before */
                          __global uint *cell_end,      /* out: EMPTY where written before */
                          const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint c = cell_id[i];
    if (c >= GRID_NUM_CELLS)
        return;
    if (i == 0 || cell_id[i - 1] != c) {
        cell_start[c] = PBFCL_EMPTY;
        cell_end[c] = PBFCL_EMPTY;
    }
}

/* Fills both cell tables with EMPTY; run once when the grid is created (a kernel rather
 * than clEnqueueFillBuffer so that tools tracking initialised memory see the writes). */
__kernel void cells_init(__global uint *cell_start, /* out: EMPTY */
                         __global uint *cell_end,   /* out: EMPTY */
                         const uint num_cells)
{
    const uint c = get_global_id(0);
    if (c >= num_cells)
        return;
    cell_start[c] = PBFCL_EMPTY;
    cell_end[c] = PBFCL_EMPTY;
}
