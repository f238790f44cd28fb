/* hash: each particle's cell in the uniform grid (clamped into it) and that cell's Morton
 * code; also resets the particle index that the sort carries along. pbfcl_grid_cell is
 * shared with neighbours.cl (same program). */

#ifndef GRID_BITS
#error "GRID_BITS (log2 of grid cells per axis) must be defined with -DGRID_BITS=..."
#elif GRID_BITS < 1 || GRID_BITS > PBFCL_MORTON_AXIS_BITS
#error "GRID_BITS must be 1..10"
#endif

/* Cells per axis and in the whole grid. */
#define GRID_CELLS_PER_AXIS (1u << GRID_BITS)
#define GRID_NUM_CELLS (1u << (3 * GRID_BITS))

/* Integer cell coordinates of position p, clamped into [0, cells per axis - 1] on each axis
 * (a NaN coordinate lands in the last cell; nothing is ever out of range). */
static inline uint4 pbfcl_grid_cell(float4 p, __constant pbfcl_grid_params *gp)
{
    const float top = (float)(GRID_CELLS_PER_AXIS - 1u);
    const float4 origin = (float4)(gp->origin[0], gp->origin[1], gp->origin[2], 0.0f);
    float4 f = floor(((float4)(p.x, p.y, p.z, 0.0f) - origin) * gp->inv_cell_size);
    f = fmax(fmin(f, (float4)(top)), (float4)(0.0f));
    return convert_uint4(f);
}

/* One work-item per particle. */
__kernel void hash(__constant pbfcl_grid_params *gp, /* in: grid */
                   __global const float4 *pos,       /* in: positions (x, y, z, unused) */
                   __global uint *cell_id,           /* out: Morton code of the cell */
                   __global uint *index,             /* out: index[i] = i */
                   const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint4 c = pbfcl_grid_cell(pos[i], gp);
    cell_id[i] = pbfcl_morton_code(c.x, c.y, c.z);
    index[i] = i;
}
