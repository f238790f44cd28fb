/* neighbours: for each particle in sorted order, every other particle closer than the
 * radius, found in the 27 cells around its own (seed 000), read as 14 runs of consecutive
 * Morton codes. Lists are stored at [k * n + i] so that reads and writes of one k coalesce. */

#ifndef MAX_NEIGHBORS
#error "MAX_NEIGHBORS (neighbour list capacity per particle) must be defined with -DMAX_NEIGHBORS=..."
#endif
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -DWG_SIZE=..."
#endif

/* Runs of consecutive Morton codes the 27 cells split into (see pbfcl_nb_ranges). */
#define NB_RANGES 14

/* The sorted index range [s, e) of the cells with Morton codes a .. a + len - 1 (a multiple
 * of len): consecutive codes hold consecutive sorted particles, so the range runs from the
 * smallest start (EMPTY is the largest uint) to the largest end; e = max(end + 1) - 1 maps
 * an EMPTY end to 0 in the max. All cells empty gives (EMPTY, EMPTY), an empty range. */
static inline uint2 pbfcl_nb_run1(__global const uint *cs, __global const uint *ce, uint a)
{
    return (uint2)(cs[a], ce[a]);
}

static inline uint2 pbfcl_nb_run2(__global const uint *cs, __global const uint *ce, uint a)
{
    const uint2 s = ((__global const uint2 *)cs)[a >> 1];
    const uint2 e = ((__global const uint2 *)ce)[a >> 1] + (uint2)(1u);
    return (uint2)(min(s.x, s.y), max(e.x, e.y) - 1u);
}

static inline uint2 pbfcl_nb_run4(__global const uint *cs, __global const uint *ce, uint a)
{
    const uint4 s = ((__global const uint4 *)cs)[a >> 2];
    const uint4 e = ((__global const uint4 *)ce)[a >> 2] + (uint4)(1u);
    const uint2 s2 = min(s.lo, s.hi), e2 = max(e.lo, e.hi);
    return (uint2)(min(s2.x, s2.y), max(e2.x, e2.y) - 1u);
}

static inline uint2 pbfcl_nb_run8(__global const uint *cs, __global const uint *ce, uint a)
{
    const uint8 s = ((__global const uint8 *)cs)[a >> 3];
    const uint8 e = ((__global const uint8 *)ce)[a >> 3] + (uint8)(1u);
    const uint4 s4 = min(s.lo, s.hi), e4 = max(e.lo, e.hi);
    const uint2 s2 = min(s4.lo, s4.hi), e2 = max(e4.lo, e4.hi);
    return (uint2)(min(s2.x, s2.y), max(e2.x, e2.y) - 1u);
}

/* The 14 index ranges covering the 27 cells around cell c (clamped into the grid). On each
 * axis, c - 1, c, c + 1 split into an aligned pair {2m, 2m + 1} (always inside the grid,
 * whose size is even) and a single cell (outside the grid at the borders). The 8 products
 * of pair/single per axis are blocks whose codes are runs: x is bit 0, y bit 1, z bit 2 of a
 * code, so a block varying in x, y, z is one run of 8; in x, y one run of 4; in x, z two runs
 * of 2; in y, z four single codes; and so on. A block with a single outside the grid gets
 * empty ranges. r must have NB_RANGES entries. */
#define NB_EMPTY2 ((uint2)(PBFCL_EMPTY))
#define NB_RANGES_BODY(R)                                                                      \
    const uint4 pair = c & (uint4)(~1u);                                                       \
    const uint4 one = select(c - (uint4)(1u), c + (uint4)(1u), (c & (uint4)(1u)) != (uint4)(0u)); \
    const int4 in = one <= (uint4)(GRID_CELLS_PER_AXIS - 1u);                                  \
    const uint xp = pbfcl_morton_spread(pair.x), xs = pbfcl_morton_spread(one.x);               \
    const uint yp = pbfcl_morton_spread(pair.y) << 1, ys = pbfcl_morton_spread(one.y) << 1;     \
    const uint zp = pbfcl_morton_spread(pair.z) << 2, zs = pbfcl_morton_spread(one.z) << 2;     \
    R(0, pbfcl_nb_run8(cs, ce, xp | yp | zp));                                                 \
    R(1, in.z ? pbfcl_nb_run4(cs, ce, xp | yp | zs) : NB_EMPTY2);                              \
    R(2, in.y ? pbfcl_nb_run2(cs, ce, xp | ys | zp) : NB_EMPTY2);                              \
    R(3, in.y ? pbfcl_nb_run2(cs, ce, (xp | ys | zp) + 4u) : NB_EMPTY2);                       \
    R(4, in.x ? pbfcl_nb_run1(cs, ce, xs | yp | zp) : NB_EMPTY2);                              \
    R(5, in.x ? pbfcl_nb_run1(cs, ce, (xs | yp | zp) + 2u) : NB_EMPTY2);                       \
    R(6, in.x ? pbfcl_nb_run1(cs, ce, (xs | yp | zp) + 4u) : NB_EMPTY2);                       \
    R(7, in.x ? pbfcl_nb_run1(cs, ce, (xs | yp | zp) + 6u) : NB_EMPTY2);                       \
    R(8, in.y && in.z ? pbfcl_nb_run2(cs, ce, xp | ys | zs) : NB_EMPTY2);                      \
    R(9, in.x && in.z ? pbfcl_nb_run1(cs, ce, xs | yp | zs) : NB_EMPTY2);                      \
    R(10, in.x && in.z ? pbfcl_nb_run1(cs, ce, (xs | yp | zs) + 2u) : NB_EMPTY2);              \
    R(11, in.x && in.y ? pbfcl_nb_run1(cs, ce, xs | ys | zp) : NB_EMPTY2);                     \
    R(12, in.x && in.y ? pbfcl_nb_run1(cs, ce, (xs | ys | zp) + 4u) : NB_EMPTY2);              \
    R(13, in.x && in.y && in.z ? pbfcl_nb_run1(cs, ce, xs | ys | zs) : NB_EMPTY2);

/* Tests candidate j against particle i at p; lists it if within the radius. */
#define NB_VISIT(j)                                                                            \
    do {                                                                                       \
        const float4 q_ = pos[j];                                                              \
        const float ex_ = q_.x - p.x, ey_ = q_.y - p.y, ez_ = q_.z - p.z;                      \
        const float d2_ = ex_ * ex_ + ey_ * ey_ + ez_ * ez_;                                   \
        if ((j) != i && d2_ < radius2) {                                                       \
            if (count < MAX_NEIGHBORS)                                                         \
                neighbor[count * n + i] = (j);                                                 \
            count++;                                                                           \
        }                                                                                      \
    } while (0)

/* Previous kernel: 27 cells one by one (kept for comparison). */
__kernel void neighbours_cells27(__constant pbfcl_grid_params *gp, __global const float4 *pos,
                                 __global const uint *cell_start, __global const uint *cell_end,
                                 __global uint *neighbor_count, __global uint *neighbor,
                                 __global uint *overflow, const uint n, const float radius2)
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
                for (uint j = start; j < end; j++)
                    NB_VISIT(j);
            }
        }
    }
    neighbor_count[i] = min(count, (uint)MAX_NEIGHBORS);
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}

/* 14 runs, one loop each. */
__kernel void neighbours_runs(__constant pbfcl_grid_params *gp,
                              __global const float4 *restrict pos,
                              __global const uint *restrict cs, __global const uint *restrict ce,
                              __global uint *restrict neighbor_count,
                              __global uint *restrict neighbor, __global uint *overflow,
                              const uint n, const float radius2)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float4 p = pos[i];
    const uint4 c = pbfcl_grid_cell(p, gp);
    uint count = 0;
#define NB_LOOP(k, expr)                                                                       \
    {                                                                                          \
        const uint2 r_ = expr;                                                                 \
        for (uint j = r_.x; j < r_.y; j++)                                                     \
            NB_VISIT(j);                                                                       \
    }
    NB_RANGES_BODY(NB_LOOP)
#undef NB_LOOP
    neighbor_count[i] = min(count, (uint)MAX_NEIGHBORS);
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}

/* 14 runs kept in local memory (one column per work-item, no sharing) and walked as one
 * flat loop, so that work-items of a group stay together whatever their run lengths. */
__kernel void neighbours_flat(__constant pbfcl_grid_params *gp,
                              __global const float4 *restrict pos,
                              __global const uint *restrict cs, __global const uint *restrict ce,
                              __global uint *restrict neighbor_count,
                              __global uint *restrict neighbor, __global uint *overflow,
                              const uint n, const float radius2)
{
    __local uint2 runs[NB_RANGES * WG_SIZE];
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint lid = get_local_id(0);
    const float4 p = pos[i];
    const uint4 c = pbfcl_grid_cell(p, gp);
#define NB_STORE(k, expr) runs[(k)*WG_SIZE + lid] = expr;
    NB_RANGES_BODY(NB_STORE)
#undef NB_STORE
    uint count = 0, r = 0;
    uint2 se = runs[lid];
    uint j = se.x;
    for (;;) {
        if (j >= se.y) {
            if (++r == NB_RANGES)
                break;
            se = runs[r * WG_SIZE + lid];
            j = se.x;
            continue;
        }
        NB_VISIT(j);
        j++;
    }
    neighbor_count[i] = min(count, (uint)MAX_NEIGHBORS);
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}

#if MAX_NEIGHBORS * WG_SIZE <= 8192
/* 14 runs, lists gathered in local memory (one column per work-item) and written out at
 * the end, so that the stores of one k by a group's work-items coalesce. */
__kernel void neighbours_staged(__constant pbfcl_grid_params *gp,
                                __global const float4 *restrict pos,
                                __global const uint *restrict cs, __global const uint *restrict ce,
                                __global uint *restrict neighbor_count,
                                __global uint *restrict out, __global uint *overflow,
                                const uint n, const float radius2)
{
    __local uint stage[MAX_NEIGHBORS * WG_SIZE];
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint lid = get_local_id(0);
    const float4 p = pos[i];
    const uint4 c = pbfcl_grid_cell(p, gp);
    uint count = 0;
#define NB_LOOP(k, expr)                                                                       \
    {                                                                                          \
        const uint2 r_ = expr;                                                                 \
        for (uint j = r_.x; j < r_.y; j++) {                                                   \
            const float4 q_ = pos[j];                                                          \
            const float ex_ = q_.x - p.x, ey_ = q_.y - p.y, ez_ = q_.z - p.z;                  \
            const float d2_ = ex_ * ex_ + ey_ * ey_ + ez_ * ez_;                               \
            if (j != i && d2_ < radius2) {                                                     \
                if (count < MAX_NEIGHBORS)                                                     \
                    stage[count * WG_SIZE + lid] = j;                                          \
                count++;                                                                       \
            }                                                                                  \
        }                                                                                      \
    }
    NB_RANGES_BODY(NB_LOOP)
#undef NB_LOOP
    const uint listed = min(count, (uint)MAX_NEIGHBORS);
    for (uint k = 0; k < listed; k++)
        out[k * n + i] = stage[k * WG_SIZE + lid];
    neighbor_count[i] = listed;
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}
#endif

#if MAX_NEIGHBORS * WG_SIZE <= 8192
/* Tests candidate j; lists it in the local stage if within the radius. */
#define NB_VISIT_STAGED(j)                                                                     \
    do {                                                                                       \
        const float4 q_ = pos[j];                                                              \
        const float ex_ = q_.x - p.x, ey_ = q_.y - p.y, ez_ = q_.z - p.z;                      \
        const float d2_ = ex_ * ex_ + ey_ * ey_ + ez_ * ez_;                                   \
        if ((j) != i && d2_ < radius2) {                                                       \
            if (count < MAX_NEIGHBORS)                                                         \
                stage[count * WG_SIZE + lid] = (j);                                            \
            count++;                                                                           \
        }                                                                                      \
    } while (0)

/* 27 cells one by one, lists staged in local memory. */
__kernel void neighbours_staged27(__constant pbfcl_grid_params *gp,
                                  __global const float4 *restrict pos,
                                  __global const uint *restrict cs,
                                  __global const uint *restrict ce,
                                  __global uint *restrict neighbor_count,
                                  __global uint *restrict out, __global uint *overflow,
                                  const uint n, const float radius2)
{
    __local uint stage[MAX_NEIGHBORS * WG_SIZE];
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint lid = get_local_id(0);
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
            const uint yz = (pbfcl_morton_spread((uint)y) << 1) | (pbfcl_morton_spread((uint)z) << 2);
            for (int dx = -1; dx <= 1; dx++) {
                const int x = c.x + dx;
                if (x < 0 || x > top)
                    continue;
                const uint code = yz | pbfcl_morton_spread((uint)x);
                const uint e = ce[code];
                for (uint j = cs[code]; j < e; j++)
                    NB_VISIT_STAGED(j);
            }
        }
    }
    const uint listed = min(count, (uint)MAX_NEIGHBORS);
    for (uint k = 0; k < listed; k++)
        out[k * n + i] = stage[k * WG_SIZE + lid];
    neighbor_count[i] = listed;
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}

/* 14 runs, two candidates per loop pass, lists staged in local memory. */
__kernel void neighbours_staged2(__constant pbfcl_grid_params *gp,
                                 __global const float4 *restrict pos,
                                 __global const uint *restrict cs,
                                 __global const uint *restrict ce,
                                 __global uint *restrict neighbor_count,
                                 __global uint *restrict out, __global uint *overflow,
                                 const uint n, const float radius2)
{
    __local uint stage[MAX_NEIGHBORS * WG_SIZE];
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const uint lid = get_local_id(0);
    const float4 p = pos[i];
    const uint4 c = pbfcl_grid_cell(p, gp);
    uint count = 0;
#define NB_LOOP(k, expr)                                                                       \
    {                                                                                          \
        const uint2 r_ = expr;                                                                 \
        uint j = r_.x;                                                                         \
        for (; j + 1u < r_.y && j + 1u != 0u; j += 2u) {                                       \
            NB_VISIT_STAGED(j);                                                                \
            NB_VISIT_STAGED(j + 1u);                                                           \
        }                                                                                      \
        if (j < r_.y)                                                                          \
            NB_VISIT_STAGED(j);                                                                \
    }
    NB_RANGES_BODY(NB_LOOP)
#undef NB_LOOP
    const uint listed = min(count, (uint)MAX_NEIGHBORS);
    for (uint k = 0; k < listed; k++)
        out[k * n + i] = stage[k * WG_SIZE + lid];
    neighbor_count[i] = listed;
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}
#endif

/* For cells of at least twice the radius: the own cell and, per axis, the one on the
 * nearer side: 8 cells. */
__kernel void neighbours_cells8(__constant pbfcl_grid_params *gp,
                                __global const float4 *restrict pos,
                                __global const uint *restrict cs, __global const uint *restrict ce,
                                __global uint *restrict neighbor_count,
                                __global uint *restrict neighbor, __global uint *overflow,
                                const uint n, const float radius2)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float4 p = pos[i];
    const uint4 c = pbfcl_grid_cell(p, gp);
    const float4 origin = (float4)(gp->origin[0], gp->origin[1], gp->origin[2], 0.0f);
    const float4 t = ((float4)(p.x, p.y, p.z, 0.0f) - origin) * gp->inv_cell_size;
    const float4 fr = t - floor(t);
    const uint4 o = select(c - (uint4)(1u), c + (uint4)(1u), fr >= (float4)(0.5f));
    const int4 in = o <= (uint4)(GRID_CELLS_PER_AXIS - 1u);
    uint count = 0;
    for (uint b = 0; b < 8; b++) {
        const uint x = (b & 1u) ? o.x : c.x, y = (b & 2u) ? o.y : c.y, z = (b & 4u) ? o.z : c.z;
        if (((b & 1u) && !in.x) || ((b & 2u) && !in.y) || ((b & 4u) && !in.z))
            continue;
        const uint code = pbfcl_morton_code(x, y, z);
        const uint e = ce[code];
        for (uint j = cs[code]; j < e; j++)
            NB_VISIT(j);
    }
    neighbor_count[i] = min(count, (uint)MAX_NEIGHBORS);
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}

/* One work-item per sorted particle. Clamping of the particle's own cell keeps the cell
 * distance of any two particles at most their unclamped distance, so every particle within
 * radius <= cell size is found, and the distance test rejects the far-apart particles that
 * clamping put into one border cell; neighbour cells outside the grid are skipped. */
__kernel void neighbours(__constant pbfcl_grid_params *gp,        /* in: grid */
                         __global const float4 *restrict pos,     /* in: sorted positions */
                         __global const uint *restrict cs,        /* in: per cell, first index */
                         __global const uint *restrict ce,        /* in: per cell, one past last */
                         __global uint *restrict neighbor_count,  /* out: entries (<= max) */
                         __global uint *restrict neighbor,        /* out: [k * n + i] indices */
                         __global uint *overflow,                 /* in/out: particles over max */
                         const uint n, const float radius2)       /* radius squared */
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float4 p = pos[i];
    const uint4 c = pbfcl_grid_cell(p, gp);
    uint count = 0;
#define NB_LOOP(k, expr)                                                                       \
    {                                                                                          \
        const uint2 r_ = expr;                                                                 \
        for (uint j = r_.x; j < r_.y; j++)                                                     \
            NB_VISIT(j);                                                                       \
    }
    NB_RANGES_BODY(NB_LOOP)
#undef NB_LOOP
    neighbor_count[i] = min(count, (uint)MAX_NEIGHBORS);
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}
