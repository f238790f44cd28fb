/* neighbours: for each particle in sorted order, every other particle closer than the
 * radius, found by visiting the 27 cells around its own through their Morton codes (seed
 * 000). Lists are stored at [k * n + i] so that reads and writes of one k coalesce. The
 * neighbours closer than a second, near radius come first in each list, and their number is
 * written beside the count: a pass that only needs close pairs (the contact constraint,
 * pbf_collide) reads that front part of the list instead of all of it. neighbours_solids then
 * drops from a solid's list (a body's or an obstacle's particle) the particles of its own
 * phase: no pass has anything to do between them (a solid has no density constraint of its
 * own, contacts and viscosity skip such pairs, shape matching holds a body together), and at
 * 1M fluid particles with 64 bodies of 2000 those entries were most of the bodies' lists.
 * The fluid's lists keep every solid neighbour. */

#ifndef MAX_NEIGHBORS
#error "MAX_NEIGHBORS (neighbour list capacity per particle) must be defined with -DMAX_NEIGHBORS=..."
#endif
#ifndef NB_WG_SIZE
#error "NB_WG_SIZE (work-group size of the neighbours kernel) must be defined with -DNB_WG_SIZE=..."
#endif

/* Lists are gathered in local memory and written out at the end when they fit in 16 KiB per
 * work-group (MAX_NEIGHBORS 64 at NB_WG_SIZE 64); larger capacities write directly. */
#define NB_STAGED (MAX_NEIGHBORS * NB_WG_SIZE <= 4096)

/* One work-item per sorted particle. A neighbour cell coordinate outside the grid is skipped
 * (not clamped, which would visit a cell twice); clamping of the particle's own cell keeps
 * the cell distance of any two particles at most their unclamped distance, so every
 * particle within radius <= cell size is still found, and the distance test rejects the
 * far-apart particles that clamping put into one border cell. Found neighbours go to
 * column lid of a local stage (stage[k * NB_WG_SIZE + lid]: no bank conflicts, nothing
 * shared, so no barrier) and are copied out at the end, where the work-items of a group
 * write the same k together: coalesced stores instead of one scattered store per found
 * neighbour (18 % less device time at 1M and 4M particles on an H200, docs/ALGORITHM.md).
 * The near neighbours are moved to the front after the search, by a partition of the
 * particle's own list that measures each listed neighbour's distance again: sorting them
 * there costs 23 % more than the plain search on an H200 at 1M particles, where any extra
 * work in the search loop itself (even counting the near ones) cost 50 %. */
__kernel void neighbours(__constant pbfcl_grid_params *gp,         /* in: grid */
                         __global const float4 *restrict pos,      /* in: sorted positions */
                         __global const uint *restrict cell_start, /* in: first index per cell */
                         __global const uint *restrict cell_end,   /* in: one past last per cell */
                         __global uint *restrict neighbor_count, /* out: entries listed (<= max) */
                         __global uint *restrict neighbor, /* out: [k * n + i] sorted indices */
                         __global uint *restrict neighbor_near, /* out: near entries first */
                         __global uint *overflow,               /* in/out: particles over max */
                         const uint n, const float radius2,     /* radius squared */
                         const float near_radius2)              /* near radius squared */
{
#if NB_STAGED
    __local uint stage[MAX_NEIGHBORS * NB_WG_SIZE];
    const uint lid = get_local_id(0);
#endif
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
            const uint yz =
                (pbfcl_morton_spread((uint)y) << 1) | (pbfcl_morton_spread((uint)z) << 2);
            for (int dx = -1; dx <= 1; dx++) {
                const int x = c.x + dx;
                if (x < 0 || x > top)
                    continue;
                /* an empty cell has start == end == EMPTY: no pass of the loop */
                const uint code = yz | pbfcl_morton_spread((uint)x);
                const uint end = cell_end[code];
                for (uint j = cell_start[code]; j < end; j++) {
                    const float4 q = pos[j];
                    const float ex = q.x - p.x, ey = q.y - p.y, ez = q.z - p.z;
                    const float d2 = ex * ex + ey * ey + ez * ez;
                    if (j != i && d2 < radius2) {
                        if (count < MAX_NEIGHBORS)
#if NB_STAGED
                            stage[count * NB_WG_SIZE + lid] = j;
#else
                            neighbor[count * n + i] = j;
#endif
                        count++;
                    }
                }
            }
        }
    }
    const uint listed = min(count, (uint)MAX_NEIGHBORS);
#if NB_STAGED
#define NB_ENTRY(k) stage[(k)*NB_WG_SIZE + lid]
#else
#define NB_ENTRY(k) neighbor[(k)*n + i]
#endif
    uint near = 0, rest = listed; /* [0, near): near; [rest, listed): not; between: unseen */
    while (near < rest) {
        const uint j = NB_ENTRY(near);
        const float4 q = pos[j];
        const float ex = q.x - p.x, ey = q.y - p.y, ez = q.z - p.z;
        if (ex * ex + ey * ey + ez * ez < near_radius2) {
            near++;
        } else {
            rest--;
            NB_ENTRY(near) = NB_ENTRY(rest);
            NB_ENTRY(rest) = j;
        }
    }
#undef NB_ENTRY
#if NB_STAGED
    for (uint k = 0; k < listed; k++)
        neighbor[k * n + i] = stage[k * NB_WG_SIZE + lid];
#endif
    neighbor_count[i] = listed;
    neighbor_near[i] = near;
    if (count > MAX_NEIGHBORS)
        atomic_inc(overflow);
}

/* neighbours_solids: after neighbours, on positions whose w hold each particle's phase as a float
 * tag (cl/common/pbfcl_shared.h, the fluid's PBFCL_PHASE_FLUID_WORD, body b's group b + 1, the
 * static group; cl/pbf/pbf.cl, pbf_phase_tag), drops from the list of every solid (a tag not the
 * fluid's) the particles of its own tag unless its phase has the self-collide flag (a group's
 * particles share one phase: host/lib/api_phases.c), keeping the near ones first (their number is
 * updated). A pass of its own over the lists: the same test in the search loop made neighbours 39 %
 * slower at 1M particles on an H200, even for the fluid alone, and in the near partition after the
 * search (a kernel of its own, for the fluid's to stay as it is) 12 % slower with the bodies of
 * docs/PERFORMANCE.md. Entries past the new count are left as they were; nothing reads them. Each
 * fluid particle a solid keeps in its list gets near_solid[j] = stamp (a number new with each
 * search, so that nothing has to clear the marks of the last): with symmetric lists, the fluid
 * particles that list a solid. collide and vorticity_viscosity take the bodies' path for those and
 * the solids only (cl/pbf/pbf.cl). The entries are read four at a time, their positions' tags after
 * them (48 against 39 us at 1.128M particles with 64 bodies on an H200: one at a time, each tag's
 * load waited for its entry's). */
__kernel void
neighbours_solids(__global const float4 *restrict pos,    /* in: sorted, tags in w */
                  __global uint *restrict neighbor_count, /* in/out */
                  __global uint *restrict neighbor,       /* in/out: [k * n + i] */
                  __global uint *restrict neighbor_near,  /* in/out */
                  const uint n,
                  __global uint *restrict near_solid, /* out: stamp, fluid by a solid */
                  const uint stamp)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float fluid = (float)PBFCL_PHASE_FLUID_WORD, tag = pos[i].w;
    if (tag == fluid)
        return; /* the fluid's list keeps every neighbour */
    /* the tag whose particles it drops: its own, or none (-1, no phase's) with self-collide */
    const float own = ((uint)tag & PBFCL_PHASE_SELF_COLLIDE_BIT) ? -1.0f : tag;
    const uint listed = min(neighbor_count[i], (uint)MAX_NEIGHBORS), near = neighbor_near[i];
    uint kept = 0, kept_near = 0, k = 0;
    /* four entries at a time: their loads first, then the kept ones written (to slots below
     * k + 4, all of them read by then) */
    for (; k + 4u <= listed; k += 4u) {
        uint j[4];
        float tag_j[4];
        for (uint u = 0; u < 4u; u++)
            j[u] = neighbor[(k + u) * n + i];
        for (uint u = 0; u < 4u; u++)
            tag_j[u] = pos[j[u]].w;
        for (uint u = 0; u < 4u; u++) {
            if (tag_j[u] != own) {
                neighbor[kept * n + i] = j[u];
                kept++;
                if (tag_j[u] == fluid)
                    near_solid[j[u]] = stamp; /* the same value from every solid that lists it */
            }
            if (k + u + 1u == near)
                kept_near = kept;
        }
    }
    for (; k < listed; k++) {
        const uint j = neighbor[k * n + i];
        const float tag_j = pos[j].w;
        if (tag_j != own) {
            neighbor[kept * n + i] = j;
            kept++;
            if (tag_j == fluid)
                near_solid[j] = stamp;
        }
        if (k + 1u == near)
            kept_near = kept;
    }
    neighbor_count[i] = kept;
    neighbor_near[i] = kept_near;
}
