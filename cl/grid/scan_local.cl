/* The work-group Blelloch scan shared by scan.cl and radix_sort.cl: an up-sweep/down-sweep
 * exclusive scan in local memory, with the bank-conflict padding of seed 002
 * (CONFLICT_FREE_OFFSET(n) = n >> LOG_NUM_BANKS). */
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -D"
#endif
#ifndef LOG_NUM_BANKS
#error "LOG_NUM_BANKS (log2 of the local memory banks) must be defined with -D"
#endif

#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)
/* The padded local-memory slot of logical element i. */
#define PAD(i) ((i) + CONFLICT_FREE_OFFSET(i))
/* Local-memory slots needed for n padded elements. */
#define PADDED_SIZE(n) ((n) + CONFLICT_FREE_OFFSET(n) + 1)

/* Exclusive scan of the n elements stored at t[PAD(0..n-1)] (n a power of two, at most
 * 2 * WG_SIZE) by the whole work-group; returns the total to every work-item. All work-items
 * must call it; the caller's writes to t must be complete up to a barrier inside. */
uint scan_local_exclusive(local uint *t, uint n, uint lid)
{
    uint offset = 1;
    for (uint d = n >> 1; d > 0; d >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            uint ai = offset * (2 * lid + 1) - 1;
            uint bi = offset * (2 * lid + 2) - 1;
            t[PAD(bi)] += t[PAD(ai)];
        }
        offset <<= 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint total = t[PAD(n - 1)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        t[PAD(n - 1)] = 0;
    for (uint d = 1; d < n; d <<= 1) {
        offset >>= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            uint ai = offset * (2 * lid + 1) - 1;
            uint bi = offset * (2 * lid + 2) - 1;
            uint x = t[PAD(ai)];
            t[PAD(ai)] = t[PAD(bi)];
            t[PAD(bi)] += x;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}
