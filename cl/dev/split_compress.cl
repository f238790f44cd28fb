/* split_compress: Goswami et al. 2010 split-and-compress (seed 002). Cells of the sorted
 * Morton grid holding more than K particles are split into blocks of at most K, the blocks
 * of all non-empty cells are compacted into one list with the prefix scan (seed 002's
 * "parallel reduction": count, scan, write), and one work-group per block computes the SPH
 * density of its particles with the 27 neighbouring cells staged in local memory. Also
 * list_density, the same density over the neighbour lists (the benchmark's reference path). */

#ifndef WG_SIZE
#error "WG_SIZE (work-group size of split_density) must be defined with -DWG_SIZE=..."
#endif
#ifndef GRID_BITS
#error "GRID_BITS (log2 of the grid's cells per axis) must be defined with -DGRID_BITS=..."
#endif

#define SPLIT_CELLS_PER_AXIS (1u << GRID_BITS)
#define SPLIT_NUM_CELLS (1u << (3 * GRID_BITS))

/* split_count: one work-item per sorted particle; the first particle of each cell's run
 * writes the cell's number of blocks, ceil(count / K), every other particle 0. Cell ids
 * outside the table (never made by the hash) get no block. */
__kernel void split_count(__global const uint *restrict cell_id,  /* in: sorted cell ids */
                          __global const uint *restrict cell_end, /* in: one past last per cell */
                          __global uint *restrict blocks, /* out: per particle, blocks it opens */
                          const uint n, const uint block_size) /* K */
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint c = cell_id[i];
    uint b = 0;
    if (c < SPLIT_NUM_CELLS && (i == 0 || cell_id[i - 1] != c))
        b = (cell_end[c] - i + block_size - 1) / block_size;
    blocks[i] = b;
}

/* split_write: one work-item per sorted particle; a cell's first particle writes its blocks
 * (cell id, first sorted index, particles <= K) from its scanned offset on: the compact list.
 * The last work-item writes the number of blocks. */
__kernel void
split_write(__global const uint *restrict cell_id,  /* in: sorted cell ids */
            __global const uint *restrict cell_end, /* in: one past last per cell */
            __global const uint *restrict blocks,   /* in: from split_count */
            __global const uint *restrict offset,   /* in: exclusive scan of it */
            __global uint *restrict block_list,     /* out: 4 per block: cell, first, count, 0 */
            __global uint *restrict block_total,    /* out: number of blocks */
            const uint n, const uint block_size)    /* K */
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint nb = blocks[i], first = offset[i];
    if (i == n - 1)
        *block_total = first + nb;
    if (nb == 0)
        return;
    const uint c = cell_id[i], end = cell_end[c];
    for (uint b = 0; b < nb; b++) {
        const uint start = i + b * block_size;
        __global uint *out = block_list + 4 * (first + b); /* scalar stores: Oclgrind reports
                                                                the uint4 store as uninitialised */
        out[0] = c;
        out[1] = start;
        out[2] = min(block_size, end - start);
        out[3] = 0u;
    }
}

/* The 27 cells around cell (cx, cy, cz) as ranges of sorted indices: range r = 9 (dz + 1) +
 * 3 (dy + 1) + dx + 1 starts at range_start[r] and holds range_off[r + 1] particles (summed
 * into offsets by the caller); cells outside the grid and empty cells hold none. Range r is
 * read by work-item r % WG_SIZE. */
static void split_read_ranges(int cx, int cy, int cz, __global const uint *cell_start,
                              __global const uint *cell_end, __local uint *range_start,
                              __local uint *range_off, uint lid)
{
    const int top = (int)SPLIT_CELLS_PER_AXIS - 1;
    uint r = 0;
    for (int z = cz - 1; z <= cz + 1; z++) {
        for (int y = cy - 1; y <= cy + 1; y++) {
            for (int x = cx - 1; x <= cx + 1; x++, r++) {
                if (r % WG_SIZE != lid)
                    continue;
                uint s = 0, e = 0;
                if (x >= 0 && x <= top && y >= 0 && y <= top && z >= 0 && z <= top) {
                    const uint code = pbfcl_morton_code((uint)x, (uint)y, (uint)z);
                    s = cell_start[code];
                    e = cell_end[code];
                    if (s == PBFCL_EMPTY)
                        s = e = 0;
                }
                range_start[r] = s;
                range_off[r + 1] = e - s;
            }
        }
    }
}

/* Copies candidates base .. base + len - 1 of the 27 ranges into stage[0 .. len), one per
 * work-item in turn; candidate g is in the last range r with range_off[r] <= g. */
static void split_stage_chunk(__global const float4 *pos, __local const uint *range_start,
                              __local const uint *range_off, __local float4 *stage, uint base,
                              uint len, uint lid)
{
    for (uint t = lid; t < len; t += WG_SIZE) {
        const uint g = base + t;
        uint lo = 0, hi = 26;
        while (lo < hi) {
            const uint mid = (lo + hi + 1) / 2;
            if (range_off[mid] <= g)
                lo = mid;
            else
                hi = mid - 1;
        }
        stage[t] = pos[range_start[lo] + g - range_off[lo]];
    }
}

/* split_density: one work-group per block of <= K particles of one cell (K <= WG_SIZE).
 * The 27 cells around the block's cell are one sequence of candidates (range r holds
 * offsets range_off[r] .. range_off[r + 1]); the group stages it stage_size float4 at a
 * time in local memory. Each particle of the block is served by WG_SIZE / count work-items
 * (stripes), each testing every stripes-th staged candidate, so a block of 8 particles keeps
 * all work-items busy; the stripes' partial sums are added in a fixed order at the end.
 * Output per particle: rho = coef * sum_j (h^2 - r^2)^3 over every j within h, itself
 * included (coef = m * 315 / (64 pi h^9): the SPH density with Poly6, as pbf_lambda without
 * the walls), and the neighbours within h, itself excluded. Cells outside the grid are
 * skipped, as in the neighbours kernel. */
__kernel void split_density(__global const uint4 *restrict block_list, /* in: split_write's */
                            __global const float4 *restrict pos,       /* in: sorted positions */
                            __global const uint *restrict cell_start,  /* in: per cell */
                            __global const uint *restrict cell_end,    /* in: per cell */
                            __global float *restrict density,          /* out: per particle */
                            __global uint *restrict neighbor_count,    /* out: per particle */
                            __local float4 *stage, /* stage_size float4, sized by the host */
                            const uint stage_size, const float h2, const float coef)
{
    __local uint range_start[27], range_off[28];
    __local float part_rho[WG_SIZE];
    __local uint part_count[WG_SIZE];
    const uint lid = get_local_id(0);
    const uint4 blk = block_list[get_group_id(0)]; /* cell, first, count */
    const uint count = blk.z;
    split_read_ranges((int)pbfcl_morton_compact(blk.x), (int)pbfcl_morton_compact(blk.x >> 1),
                      (int)pbfcl_morton_compact(blk.x >> 2), cell_start, cell_end, range_start,
                      range_off, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) { /* the sum in a register: no load waits for the previous store */
        uint acc = 0;
        for (uint k = 1; k <= 27; k++) {
            acc += range_off[k];
            range_off[k] = acc;
        }
        range_off[0] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint total = range_off[27], stripes = WG_SIZE / count;
    const uint stripe = lid / count, p = lid - stripe * count;
    const bool active = stripe < stripes;
    const float4 xi = active ? pos[blk.y + p] : (float4)(0.0f);
    float rho = 0.0f;
    uint found = 0;
    for (uint base = 0; base < total; base += stage_size) {
        const uint len = min(stage_size, total - base);
        split_stage_chunk(pos, range_start, range_off, stage, base, len, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint u = stripe; active && u < len; u += stripes) {
            const float4 q = stage[u];
            const float ex = q.x - xi.x, ey = q.y - xi.y, ez = q.z - xi.z;
            const float r2 = ex * ex + ey * ey + ez * ez;
            if (r2 < h2) {
                const float d = h2 - r2;
                rho += d * d * d;
                found++;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    part_rho[lid] = rho;
    part_count[lid] = found;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < count) { /* stripe 0: xi is particle lid's */
        float sum = 0.0f;
        uint neighbours = 0;
        for (uint s = 0; s < stripes; s++) {
            sum += part_rho[s * count + lid];
            neighbours += part_count[s * count + lid];
        }
        /* the particle met itself (r = 0) unless its position is not a number */
        const float ex = xi.x - xi.x, ey = xi.y - xi.y, ez = xi.z - xi.z;
        const uint self = ex * ex + ey * ey + ez * ez < h2;
        density[blk.y + lid] = coef * sum;
        neighbor_count[blk.y + lid] = neighbours - self;
    }
}

/* list_density: the same density and neighbour count over the neighbour lists of the
 * neighbours kernel ([k * n + i], count <= max_neighbors), one work-item per particle: the
 * reference path split_density is measured against (the solver's pbf_lambda density without
 * the walls). Here the own term is h^6 added up front, as pbf_lambda's self_density. */
__kernel void list_density(__global const float4 *restrict pos,          /* in: sorted positions */
                           __global const uint *restrict neighbor_count, /* in: entries listed */
                           __global const uint *restrict neighbor,       /* in: [k * n + i] */
                           __global float *restrict density,             /* out: per particle */
                           __global uint *restrict found_count,          /* out: per particle */
                           const uint n, const uint max_neighbors, const float h2, const float coef)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float4 xi = pos[i];
    const uint listed = min(neighbor_count[i], max_neighbors);
    float w = h2 * h2 * h2;
    uint found = 0;
    for (uint k = 0; k < listed; k++) {
        const float4 q = pos[neighbor[k * n + i]];
        const float ex = q.x - xi.x, ey = q.y - xi.y, ez = q.z - xi.z;
        const float r2 = ex * ex + ey * ey + ez * ez;
        if (r2 < h2) {
            const float d = h2 - r2;
            w += d * d * d;
            found++;
        }
    }
    density[i] = coef * w;
    found_count[i] = found;
}
