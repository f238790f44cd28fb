/* neighbours: for each particle in sorted order, every other particle closer than the
 * radius, found by visiting the 27 cells around its own through their Morton codes (seed
 * 000). Lists are stored at [k * n + i] so that reads and writes of one k coalesce. */

#ifndef MAX_NEIGHBORS
#error "MAX_NEIGHBORS (neighbour list capacity per particle) must be defined with -DMAX_NEIGHBORS=..."
#endif

/* One work-item per sorted particle. A neighbour cell coordinate outside the grid is skipped
 * (not clamped, which would visit a cell twice); clamping of the particle's own cell keeps
 * the cell distance of any two particles at most their unclamped distance, so every
 * particle within radius <= cell size is still found, and the distance test rejects the
 * far-apart particles that clamping put into one border cell. */
__kernel void neighbours(__constant pbfcl_grid_params *gp,  /* in: grid */
                         __global const float4 *pos,        /* in: sorted positions */
                         __global const uint *cell_start,   /* in: per cell, first index */
                         __global const uint *cell_end,     /* in: per cell, one past last */
                         __global uint *neighbor_count,     /* out: entries listed (<= max) */
                         __global uint *neighbor,           /* out: [k * n + i] sorted indices */
                         __global uint *overflow,           /* in/out: particles over max */
                         const uint n, const float radius2) /* radius squared */
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float4 p = pos[i];
    const int4 c = convert_int4(pbfcl_grid_cell(p, gp));
    const int top = (int)GRID_CELLS_PER_AXIS - 1;
    uint count = 0;
    for (int dz = -1; dz <= 1; dz++) {
        const int z = c.z + dz;
        if (z < 0 || z > top)
            continue;
        for (int dy = -1; dy <= 1; dy++) {
            const int y = c.y + dy;
            if (y < 0 || y > top)
                continue;
            for (int dx = -1; dx <= 1; dx++) {
                const int x = c.x + dx;
                if (x < 0 || x > top)
                    continue;
                const uint code = pbfcl_morton_code((uint)x, (uint)y, (uint)z);
                const uint start = cell_start[code];
                if (start == PBFCL_EMPTY)
                    continue;
                const uint end = cell_end[code];
                for (uint j = start; j < end; j++) {
                    const float4 q = pos[j];
                    const float ex = q.x - p.x, ey = q.y - p.y, ez = q.z - p.z;
                    const float d2 = ex * ex + ey * ey + ez * ez;
                    if (j != i && d2 < radius2) {
                        if (count < MAX_NEIGHBORS)
                            neighbor[count * n + i] = j;
                        count++;
                    }
                }
            }
        }
    }
    neighbor_count[i] = min(count, (uint)MAX_NEIGHBORS);
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}
