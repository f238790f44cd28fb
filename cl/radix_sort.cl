/* One pass of the stable LSD radix sort of (key, value) pairs, three kernels: radix_histogram
 * counts the digits of each tile of TILE keys into a digit-major table (digit * tiles + tile),
 * radix_scan_rows scans each digit's row and records its total, and radix_scatter ranks each
 * tile locally (packed per-thread counters and a work-group scan, no atomics) and writes every
 * pair to its digit's base plus its row offset. */
#ifndef RADIX_BITS
#error "RADIX_BITS (bits sorted per pass) must be defined with -D"
#endif
#ifndef SORT_ITEMS
#error "SORT_ITEMS (keys per work-item) must be defined with -D"
#endif
#if RADIX_BITS < 1 || RADIX_BITS > 8
#error "RADIX_BITS must be 1..8"
#endif
#if WG_SIZE < 16 || (WG_SIZE & (WG_SIZE - 1)) != 0
#error "WG_SIZE must be a power of two >= 16"
#endif
#if SORT_ITEMS % 4 != 0
#error "SORT_ITEMS must be a multiple of 4 (vector loads)"
#endif

#define RADIX (1u << RADIX_BITS)
#define TILE (WG_SIZE * SORT_ITEMS)
/* Local ranking works on 4-bit sub-digits: 16 counters per work-item, packed two 16-bit
 * halves per uint in 8 lanes (digit = half * 8 + lane). */
#define RANK_BITS 4
#define RANK_LANES 8
/* The counters' slot of logical counter i: an XOR swizzle within aligned groups of 8 that
 * keeps both access patterns free of bank conflicts (a work-item's own column, lane * WG_SIZE +
 * lid, and a work-item's run of 8 consecutive counters in the scan). */
#define CNT(i) ((i) ^ (((i) >> LOG_NUM_BANKS) & (RANK_LANES - 1u)))

/* The work-group scan of the table rows and digit bases works on chunks of SCAN_CHUNK
 * elements: SCAN_GROUPS work-items scan a chunk each in registers, one work-item scans the
 * chunk totals. Three barriers instead of the 2 log2(WG_SIZE) of the Blelloch scan (used in
 * the tile ranking, where this scan made the whole sort 40% slower on an H200). */
#define SCAN_CHUNK 16u
#define SCAN_GROUPS (WG_SIZE / SCAN_CHUNK)
/* Local words a scan_group array needs: the padded elements and the chunk totals. */
#define SCAN_GROUP_SIZE (PADDED_SIZE(WG_SIZE) + SCAN_GROUPS + 1)

/* Exclusive scan of the WG_SIZE elements at t[PAD(0..WG_SIZE-1)] by the whole work-group;
 * returns the total to every work-item. t holds SCAN_GROUP_SIZE words. All work-items must
 * call it; it starts and ends with a barrier. */
inline uint radix_scan_group(local uint *t, uint lid)
{
    local uint *chunk = t + PADDED_SIZE(WG_SIZE);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < SCAN_GROUPS) {
        uint v[SCAN_CHUNK], run = 0;
        for (uint j = 0; j < SCAN_CHUNK; j++)
            v[j] = t[PAD(lid * SCAN_CHUNK + j)];
        for (uint j = 0; j < SCAN_CHUNK; j++) {
            t[PAD(lid * SCAN_CHUNK + j)] = run;
            run += v[j];
        }
        chunk[lid] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint run = 0;
        for (uint g = 0; g < SCAN_GROUPS; g++) {
            uint x = chunk[g];
            chunk[g] = run;
            run += x;
        }
        chunk[SCAN_GROUPS] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint total = chunk[SCAN_GROUPS];
    t[PAD(lid)] += chunk[lid / SCAN_CHUNK];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Exclusive scan of the n values at x[0..n-1] in runs of ceil(n / WG_SIZE) per work-item,
 * written to out (may equal x); returns the total. sums: SCAN_GROUP_SIZE words. The runs are
 * read four at a time so that the loads overlap. */
#define RADIX_SCAN_RUNS(x, out, n, sums, lid, total)                                              \
    do {                                                                                           \
        uint per_ = ((n) + WG_SIZE - 1) / WG_SIZE;                                                 \
        uint lo_ = min((lid)*per_, (n)), hi_ = min(lo_ + per_, (n)), run_ = 0, i_ = lo_;           \
        for (; i_ + 4 <= hi_; i_ += 4)                                                             \
            run_ += (x)[i_] + (x)[i_ + 1] + (x)[i_ + 2] + (x)[i_ + 3];                             \
        for (; i_ < hi_; i_++)                                                                     \
            run_ += (x)[i_];                                                                       \
        (sums)[PAD(lid)] = run_;                                                                   \
        (total) = radix_scan_group((sums), (lid));                                                 \
        run_ = (sums)[PAD(lid)];                                                                   \
        for (i_ = lo_; i_ + 4 <= hi_; i_ += 4) {                                                   \
            uint a_ = (x)[i_], b_ = (x)[i_ + 1], c_ = (x)[i_ + 2], d_ = (x)[i_ + 3];               \
            (out)[i_] = run_;                                                                      \
            (out)[i_ + 1] = run_ + a_;                                                             \
            (out)[i_ + 2] = run_ + a_ + b_;                                                        \
            (out)[i_ + 3] = run_ + a_ + b_ + c_;                                                   \
            run_ += a_ + b_ + c_ + d_;                                                             \
        }                                                                                          \
        for (; i_ < hi_; i_++) {                                                                   \
            uint v_ = (x)[i_];                                                                     \
            (out)[i_] = run_;                                                                      \
            run_ += v_;                                                                            \
        }                                                                                          \
    } while (0)

/* The digit of key for this pass. */
inline uint radix_digit(uint key, uint shift, uint bits)
{
    return (key >> shift) & ((1u << bits) - 1u);
}

/* Counts the digits of tile get_group_id(0) into table[digit * tiles + tile].
 * keys: n keys (input); table: (1 << bits) * tiles counts (output). */
kernel void radix_histogram(global const uint *keys, global uint *table, uint n, uint tiles,
                            uint shift, uint bits)
{
    local uint counts[RADIX];
    uint lid = get_local_id(0), tile = get_group_id(0);
    for (uint d = lid; d < RADIX; d += WG_SIZE)
        counts[d] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint base = tile * TILE;
    if (base + TILE <= n) {
        global const uint4 *k4 = (global const uint4 *)(keys + base);
        for (uint k = 0; k < SORT_ITEMS / 4; k++) {
            uint4 v = k4[k * WG_SIZE + lid];
            atomic_inc(&counts[radix_digit(v.x, shift, bits)]);
            atomic_inc(&counts[radix_digit(v.y, shift, bits)]);
            atomic_inc(&counts[radix_digit(v.z, shift, bits)]);
            atomic_inc(&counts[radix_digit(v.w, shift, bits)]);
        }
    } else {
        for (uint i = base + lid; i < n; i += WG_SIZE)
            atomic_inc(&counts[radix_digit(keys[i], shift, bits)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = lid; d < (1u << bits); d += WG_SIZE)
        table[d * tiles + tile] = counts[d];
}

/* Exclusive scan in place of each of the rows (digits) get_group_id(0) * rows ... of the
 * digit-major table, and each row's total to totals[digit]. Short rows (few tiles) are
 * scanned several to a work-group: one scan of them all, less each row's first prefix.
 * table: digits * tiles counts (input and output); rows: at most WG_SIZE. */
kernel void radix_scan_rows(global uint *table, global uint *totals, uint tiles, uint rows,
                            uint digits)
{
    local uint sums[SCAN_GROUP_SIZE], start[WG_SIZE + 1];
    uint lid = get_local_id(0), first = get_group_id(0) * rows, total;
    rows = min(rows, digits - first);
    global uint *x = table + (size_t)first * tiles;
    uint n = rows * tiles;
    RADIX_SCAN_RUNS(x, x, n, sums, lid, total);
    if (rows == 1) { /* the same for the whole work-group */
        if (lid == 0)
            totals[first] = total;
        return;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (uint r = lid; r < rows; r += WG_SIZE)
        start[r] = x[r * tiles];
    if (lid == 0)
        start[rows] = total;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); /* start read before x changes */
    for (uint r = lid; r < rows; r += WG_SIZE)
        totals[first + r] = start[r + 1] - start[r];
    uint per = (n + WG_SIZE - 1) / WG_SIZE, lo = min(lid * per, n), hi = min(lo + per, n);
    for (uint i = lo; i < hi; i++)
        x[i] -= start[i / tiles];
}

/* Loads the tile's keys and values into padded local memory, coalesced; slots past n get key
 * 0xffffffff so that they rank after every real key of the tile. */
inline void radix_load_tile(global const uint *keys, global const uint *values, local uint *lk,
                            local uint *lv, uint base, uint n, uint lid)
{
    if (base + TILE <= n) {
        global const uint4 *k4 = (global const uint4 *)(keys + base);
        global const uint4 *v4 = (global const uint4 *)(values + base);
        for (uint k = 0; k < SORT_ITEMS / 4; k++) {
            uint4 kv = k4[k * WG_SIZE + lid], vv = v4[k * WG_SIZE + lid];
            uint i = 4 * (k * WG_SIZE + lid);
            lk[PAD(i)] = kv.x, lk[PAD(i + 1)] = kv.y, lk[PAD(i + 2)] = kv.z;
            lk[PAD(i + 3)] = kv.w;
            lv[PAD(i)] = vv.x, lv[PAD(i + 1)] = vv.y, lv[PAD(i + 2)] = vv.z;
            lv[PAD(i + 3)] = vv.w;
        }
    } else {
        for (uint i = lid; i < TILE; i += WG_SIZE) {
            lk[PAD(i)] = base + i < n ? keys[base + i] : 0xffffffffu;
            lv[PAD(i)] = base + i < n ? values[base + i] : 0u;
        }
    }
}

/* Exclusive scan of the packed counters cnt[CNT(lane * WG_SIZE + item)] in that order:
 * each work-item sums RANK_LANES consecutive counters, the sums are scanned with the
 * Blelloch scan, and the prefixes are written back. Returns the packed total. */
inline uint radix_scan_counters(local uint *cnt, local uint *sums, uint lid)
{
    uint run = 0;
    for (uint k = 0; k < RANK_LANES; k++)
        run += cnt[CNT(lid * RANK_LANES + k)];
    sums[PAD(lid)] = run;
    uint total = scan_local_exclusive(sums, WG_SIZE, lid);
    run = sums[PAD(lid)];
    for (uint k = 0; k < RANK_LANES; k++) {
        uint x = cnt[CNT(lid * RANK_LANES + k)];
        cnt[CNT(lid * RANK_LANES + k)] = run;
        run += x;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Counts this work-item's keys (blocked: consecutive in the tile's current order) per 4-bit
 * sub-digit at sub_shift of their pass digit in its column of packed counters, then scans the
 * counters; returns the packed total. */
inline uint radix_count(const uint *key, local uint *cnt, local uint *sums, uint lid, uint shift,
                        uint bits, uint sub_shift)
{
    for (uint l = 0; l < RANK_LANES; l++)
        cnt[CNT(l * WG_SIZE + lid)] = 0;
    for (uint j = 0; j < SORT_ITEMS; j++) {
        uint s = (radix_digit(key[j], shift, bits) >> sub_shift) & 15u;
        uint slot = CNT((s & 7u) * WG_SIZE + lid), hs = 16u * (s >> 3);
        cnt[slot] += 1u << hs;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return radix_scan_counters(cnt, sums, lid);
}

/* Sorts the tile in local memory by the pass digit, 4 bits per round, stably: each round
 * counts the blocked keys per sub-digit, scans the counters, and moves every key and value to
 * its rank (its counter, counted up as this work-item's equal sub-digits pass). */
inline void radix_sort_tile(local uint *lk, local uint *lv, local uint *cnt, local uint *sums,
                            uint lid, uint shift, uint bits)
{
    uint key[SORT_ITEMS], val[SORT_ITEMS];
    for (uint sub = 0; sub < bits; sub += RANK_BITS) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j = 0; j < SORT_ITEMS; j++) {
            key[j] = lk[PAD(lid * SORT_ITEMS + j)];
            val[j] = lv[PAD(lid * SORT_ITEMS + j)];
        }
        uint total = radix_count(key, cnt, sums, lid, shift, bits, sub) << 16;
        for (uint j = 0; j < SORT_ITEMS; j++) {
            uint s = (radix_digit(key[j], shift, bits) >> sub) & 15u;
            uint slot = CNT((s & 7u) * WG_SIZE + lid), hs = 16u * (s >> 3);
            uint c = cnt[slot];
            cnt[slot] = c + (1u << hs);
            uint rank = ((c + total) >> hs) & 0xffffu;
            lk[PAD(rank)] = key[j];
            lv[PAD(rank)] = val[j];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Moves each pair of tile get_group_id(0) to its place for this pass: the digit's base (the
 * exclusive scan of the row totals) plus the row-scanned table give where the tile's run of
 * each digit starts in the output.
 * keys_in, values_in: n pairs (input); keys_out, values_out: n pairs (output);
 * table: radix_scan_rows' scanned table; totals: its (1 << bits) row totals (inputs). */
kernel void radix_scatter(global const uint *keys_in, global const uint *values_in,
                          global uint *keys_out, global uint *values_out,
                          global const uint *table, global const uint *totals, uint n,
                          uint tiles, uint shift, uint bits)
{
    local uint lk[PADDED_SIZE(TILE)], lv[PADDED_SIZE(TILE)];
    local uint cnt[RANK_LANES * WG_SIZE], sums[SCAN_GROUP_SIZE];
    local uint offset[RADIX]; /* the digits' bases, then where the tile's runs go */
    uint lid = get_local_id(0), tile = get_group_id(0), base = tile * TILE, unused;
    RADIX_SCAN_RUNS(totals, offset, 1u << bits, sums, lid, unused);
    (void)unused;
    radix_load_tile(keys_in, values_in, lk, lv, base, n, lid);
    radix_sort_tile(lk, lv, cnt, sums, lid, shift, bits);
    /* Where each digit's run starts in the tile, turned into output offsets. */
    for (uint p = lid; p < TILE; p += WG_SIZE) {
        uint d = radix_digit(lk[PAD(p)], shift, bits);
        if (p == 0 || d != radix_digit(lk[PAD(p - 1)], shift, bits))
            offset[d] += table[d * tiles + tile] - p;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint count = min((uint)TILE, n - base);
    for (uint p = lid; p < count; p += WG_SIZE) {
        uint k = lk[PAD(p)];
        uint dst = offset[radix_digit(k, shift, bits)] + p;
        keys_out[dst] = k;
        values_out[dst] = lv[PAD(p)];
    }
}
