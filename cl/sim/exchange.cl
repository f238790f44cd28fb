/* The device side of a simulation split over slabs (host/core/sim/exchange.c, host/dist/):
 * each slot's fate from its x* along the split axis (stays, migrates to a rank, or is a ghost
 * for a range of ranks), compacted through an exclusive scan of the fates' flags into short
 * lists that alone go to the host, and a keep list that stays on the device; after the sort,
 * the old-to-new slot map and the ghosts' flags in the new order, and the slots of listed
 * particles looked up in it. Slabs: rank r holds c with own_lo[r] <= c (the last such r),
 * ranks r with ghost_lo[r] <= c < ghost_hi[r] hold a ghost of it; all three non-decreasing
 * in r. */

#ifndef WG_SIZE
#error "WG_SIZE must be defined (pbfcl_exchange_build_config)"
#endif

/* The modes of exchange_classify (pbfcl_exchange_mode, exchange.h). */
#define EXCHANGE_MIGRATE 0u /* send: owned particles whose slab is another rank's; keep: the rest
                             * of the owned ones; the ghosts go */
#define EXCHANGE_GHOSTS 1u  /* send: particles within the halo of another rank's slab */
#define EXCHANGE_DROP 2u    /* keep: the particles that are not ghosts */

/* The last r in [0, ranks) with own_lo[r] <= c, 0 if none: the rank whose slab holds c. */
static uint exchange_owner(__global const float *own_lo, uint ranks, float c)
{
    uint lo = 0u, hi = ranks - 1u;
    while (lo < hi) {
        uint mid = (lo + hi + 1u) / 2u;
        if (own_lo[mid] <= c)
            lo = mid;
        else
            hi = mid - 1u;
    }
    return lo;
}

/* The ranks whose halo holds c: first = the first r with c < ghost_hi[r] (ranks if none),
 * *count_lo = how many r have ghost_lo[r] <= c; the range is [first, count_lo - 1]. */
static uint exchange_halo_first(__global const float *ghost_hi, uint ranks, float c)
{
    uint lo = 0u, hi = ranks;
    while (lo < hi) {
        uint mid = (lo + hi) / 2u;
        if (c < ghost_hi[mid])
            hi = mid;
        else
            lo = mid + 1u;
    }
    return lo;
}

static uint exchange_halo_count(__global const float *ghost_lo, uint ranks, float c)
{
    uint lo = 0u, hi = ranks;
    while (lo < hi) {
        uint mid = (lo + hi) / 2u;
        if (ghost_lo[mid] <= c)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

/* Each slot's fate and flags. In:  pred (x*, n float4), ghost (n flags: the slot holds a
 * ghost; read only if use_ghost), bounds (3 * ranks floats: own_lo, ghost_lo, ghost_hi).
 * Out: fate[i] (migrate: the slot's rank; ghosts: first << 16 | last of its halo's ranks),
 * flags[i] = sent, flags[n + i] = kept (not in mode ghosts), and the flag after the last
 * (flags[n] in mode ghosts, flags[2n] otherwise) = 0, for the scan. Items: n + 1. */
__kernel void exchange_classify(__global const float4 *pred, __global const uchar *ghost,
                                uint use_ghost, uint n, uint axis, uint rank, uint ranks,
                                __global const float *bounds, uint mode, __global uint *fate,
                                __global uint *flags)
{
    uint i = get_global_id(0);
    if (i > n)
        return;
    if (i == n) {
        flags[mode == EXCHANGE_GHOSTS ? n : 2u * n] = 0u;
        return;
    }
    float4 p = pred[i];
    float c = axis == 0u ? p.x : axis == 1u ? p.y : p.z;
    bool is_ghost = use_ghost != 0u && ghost[i] != 0;
    uint sent = 0u, kept = 0u;
    if (mode == EXCHANGE_MIGRATE) {
        uint r = exchange_owner(bounds, ranks, c);
        fate[i] = r;
        sent = !is_ghost && r != rank;
        kept = !is_ghost && r == rank;
    } else if (mode == EXCHANGE_GHOSTS) {
        uint first = exchange_halo_first(bounds + 2u * ranks, ranks, c);
        uint count = exchange_halo_count(bounds + ranks, ranks, c);
        fate[i] = first << 16 | ((count - 1u) & 0xffffu);
        sent = first < count && !(first == rank && count == rank + 1u);
    } else {
        kept = !is_ghost;
    }
    flags[i] = sent;
    if (mode != EXCHANGE_GHOSTS)
        flags[n + i] = kept;
}

/* The lists, from the flags' exclusive scan pos (2n + 1 entries, n + 1 in mode ghosts): the
 * sent slots in order with their fates, list[2k, 2k + 1] = (slot, fate), and (not in mode ghosts) the
 * kept slots in order, keep[k]. Items: n. */
__kernel void exchange_lists(__global const uint *pos, __global const uint *fate, uint n,
                             uint mode, __global uint *list, __global uint *keep)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    if (pos[i + 1u] != pos[i]) {
        list[2u * pos[i]] = i;
        list[2u * pos[i] + 1u] = fate[i];
    }
    if (mode != EXCHANGE_GHOSTS && pos[n + i + 1u] != pos[n + i])
        keep[pos[n + i] - pos[n]] = i;
}

/* After a sort whose gather map is index (new slot j holds old slot index[j]): where each old
 * slot went, new_of[index[j]] = j, and the ghosts' flags in the new order (the ghosts were the
 * old slots from owned on). Items: n. */
__kernel void exchange_sorted(__global const uint *index, uint n, uint owned,
                              __global uint *new_of, __global uchar *ghost)
{
    uint j = get_global_id(0);
    if (j >= n)
        return;
    uint o = index[j];
    new_of[o] = j;
    ghost[j] = o >= owned;
}

/* The new slots of count old slots: old[0..listed), then base, base + 1, ... for the rest.
 * Items: count. */
__kernel void exchange_slots(__global const uint *new_of, __global const uint *old, uint listed,
                             uint count, uint base, __global uint *out)
{
    uint k = get_global_id(0);
    if (k >= count)
        return;
    out[k] = new_of[k < listed ? old[k] : base + (k - listed)];
}

/* out[k] = src[keep[k]] for 4-byte rows. Items: m. */
__kernel void exchange_pick(__global const uint *src, __global const uint *keep, uint m,
                            __global uint *out)
{
    uint k = get_global_id(0);
    if (k >= m)
        return;
    out[k] = src[keep[k]];
}

/* The rebalancing's histogram (host/dist/dist_balance.c), on the device so that only the bins
 * reach the host. Both kernels run `groups` work-groups of WG_SIZE (a power of two, from
 * pbfcl_exchange_build_config) striding over the n particles; c is a particle's coordinate
 * along axis. */

static float exchange_coordinate(float4 p, uint axis)
{
    return axis == 0u ? p.x : axis == 1u ? p.y : p.z;
}

/* The extent of c: out[2g] = the smallest c and out[2g + 1] = the largest of group g's
 * particles (+inf and -inf if none; NaN is passed over). Items: groups * WG_SIZE. */
__kernel void exchange_extent(__global const float4 *pos, uint n, uint axis, uint groups,
                              __global float *out)
{
    __local float lo[WG_SIZE], hi[WG_SIZE];
    uint lid = get_local_id(0), g = get_group_id(0);
    float a = INFINITY, b = -INFINITY;
    for (uint i = g * WG_SIZE + lid; i < n; i += groups * WG_SIZE) {
        float c = exchange_coordinate(pos[i], axis);
        a = fmin(a, c);
        b = fmax(b, c);
    }
    lo[lid] = a;
    hi[lid] = b;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG_SIZE / 2u; s > 0u; s >>= 1) {
        if (lid < s) {
            lo[lid] = fmin(lo[lid], lo[lid + s]);
            hi[lid] = fmax(hi[lid], hi[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0u) {
        out[2u * g] = lo[0];
        out[2u * g + 1u] = hi[0];
    }
}

/* floor((c - lo) * scale) clamped to [0, bins - 1] (NaN: 0), as a float: bin b is the whole
 * number b (bins - 1 < 2^24 is a float exactly). */
static float exchange_bin(float c, float lo, float scale, uint bins)
{
    return floor(fmin(fmax((c - lo) * scale, 0.0f), (float)(bins - 1u)));
}

/* Adds the particles' bins first .. first + width - 1 to counts (zero before the first launch),
 * one launch per tile of bins that local memory holds (the device's local memory decides width):
 * each work-group counts the particles it strides over in local memory, then adds its counts to
 * counts; integer atomics only. (One launch per tile, not the tile and the stripe divided out
 * of the group's index: LLVM pairs that division and remainder through a freeze, which
 * Oclgrind's uninitialised-value checker cannot run.) Items: groups * WG_SIZE. */
__kernel void exchange_histogram(__global const float4 *pos, uint n, uint axis, float lo,
                                 float scale, uint bins, uint first, uint width, uint groups,
                                 __local uint *local_counts, __global uint *counts)
{
    uint lid = get_local_id(0);
    for (uint j = lid; j < width; j += WG_SIZE)
        local_counts[j] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_group_id(0) * WG_SIZE + lid; i < n; i += groups * WG_SIZE) {
        float b = exchange_bin(exchange_coordinate(pos[i], axis), lo, scale, bins);
        if (b >= (float)first && b < (float)(first + width))
            atomic_inc(&local_counts[(uint)b - first]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = lid; j < width; j += WG_SIZE)
        if (local_counts[j] != 0u)
            atomic_add(&counts[first + j], local_counts[j]);
}
