/* One pass of the stable LSD radix sort of (key, value) pairs, three kernels: radix_histogram
 * counts the digits of each work-group's run of `per` tiles of TILE keys into a digit-major
 * table (digit * groups + group), radix_scan_rows scans each digit's row and records its total,
 * and radix_scatter ranks each tile locally on (digit, index) entries (packed per-thread
 * counters and a work-group scan, no atomics) and writes every pair to its digit's base plus its
 * row offset. */
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

/* Counts the digits of the per tiles of group get_group_id(0) into table[digit * groups + group].
 * keys: n keys (input); table: (1 << bits) * groups counts (output). */
kernel void radix_histogram(global const uint *keys, global uint *table, uint n, uint groups,
                            uint shift, uint bits, uint per)
{
    local uint counts[RADIX];
    uint lid = get_local_id(0), group = get_group_id(0);
    for (uint d = lid; d < RADIX; d += WG_SIZE)
        counts[d] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint t = 0, base = group * per * TILE; t < per && base < n; t++, base += TILE) {
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
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = lid; d < (1u << bits); d += WG_SIZE)
        table[d * groups + group] = counts[d];
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

/* Exclusive scan of the WG_SIZE elements at t[PAD(0..WG_SIZE-1)] seen as rows of SCAN_CHUNK:
 * each work-item sums the earlier elements of its row, then the totals of the earlier rows
 * (independent local loads, no serial chain). Stores the work-item's own prefix in *mine and
 * returns the total; t is left as it is. Two barriers, none at the end: t and the row totals
 * (t's SCAN_GROUP_SIZE words) must not be written again before the caller's next barrier. On
 * an H200 this made the sort 5% faster than the Blelloch scan (~19 barriers) it replaced. */
inline uint radix_scan_prefix(local uint *t, uint lid, uint *mine)
{
    local uint *rows = t + PADDED_SIZE(WG_SIZE);
    uint row = lid / SCAN_CHUNK, col = lid % SCAN_CHUNK, pre = 0, base = 0, total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < SCAN_CHUNK; j++) {
        uint x = t[PAD(row * SCAN_CHUNK + j)];
        pre += j < col ? x : 0u;
        total += x;
    }
    if (col == 0)
        rows[row] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
    total = 0;
    for (uint g = 0; g < SCAN_GROUPS; g++) {
        uint x = rows[g];
        base += g < row ? x : 0u;
        total += x;
    }
    *mine = base + pre;
    return total;
}

/* Exclusive scan of the packed counters cnt[CNT(lane * WG_SIZE + item)] in that order:
 * each work-item sums RANK_LANES consecutive counters, the sums are scanned with
 * radix_scan_prefix, and the prefixes are written back. Returns the packed total. */
inline uint radix_scan_counters(local uint *cnt, local uint *sums, uint lid)
{
    uint run = 0;
    for (uint k = 0; k < RANK_LANES; k++)
        run += cnt[CNT(lid * RANK_LANES + k)];
    sums[PAD(lid)] = run;
    uint total = radix_scan_prefix(sums, lid, &run);
    for (uint k = 0; k < RANK_LANES; k++) {
        uint x = cnt[CNT(lid * RANK_LANES + k)];
        cnt[CNT(lid * RANK_LANES + k)] = run;
        run += x;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Counts this work-item's entries (blocked: consecutive in the tile's current order; digit in
 * the high 16 bits) per 4-bit sub-digit at sub_shift in its column of packed counters, then
 * scans the counters; returns the packed total. */
inline uint radix_count(const uint *e, local uint *cnt, local uint *sums, uint lid, uint sub_shift)
{
    for (uint l = 0; l < RANK_LANES; l++)
        cnt[CNT(l * WG_SIZE + lid)] = 0;
    for (uint j = 0; j < SORT_ITEMS; j++) {
        uint s = (e[j] >> (16u + sub_shift)) & 15u;
        uint slot = CNT((s & 7u) * WG_SIZE + lid), hs = 16u * (s >> 3);
        cnt[slot] += 1u << hs;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return radix_scan_counters(cnt, sums, lid);
}

/* Ranks the tile stably by the pass digit, 4 bits per round, moving only entries (digit << 16
 * | index of the key in the tile): the first round reads this work-item's SORT_ITEMS keys from
 * global memory (blocked; slots past n get the largest digit so that they rank last), each
 * round counts, scans the counters and moves every entry to its rank (its counter, counted up
 * as this work-item's equal sub-digits pass). Leaves the ranked entries in r. */
inline void radix_rank_tile(global const uint *keys, local uint *r, local uint *cnt,
                            local uint *sums, uint base, uint n, uint lid, uint shift, uint bits)
{
    uint e[SORT_ITEMS], first = lid * SORT_ITEMS;
    if (base + TILE <= n) {
        global const uint4 *k4 = (global const uint4 *)(keys + base + first);
        for (uint k = 0; k < SORT_ITEMS / 4; k++) {
            uint4 v = k4[k];
            e[4 * k] = radix_digit(v.x, shift, bits) << 16 | (first + 4 * k);
            e[4 * k + 1] = radix_digit(v.y, shift, bits) << 16 | (first + 4 * k + 1);
            e[4 * k + 2] = radix_digit(v.z, shift, bits) << 16 | (first + 4 * k + 2);
            e[4 * k + 3] = radix_digit(v.w, shift, bits) << 16 | (first + 4 * k + 3);
        }
    } else {
        for (uint j = 0; j < SORT_ITEMS; j++) {
            uint i = base + first + j;
            e[j] = (i < n ? radix_digit(keys[i], shift, bits) : (1u << bits) - 1u) << 16 |
                   (first + j);
        }
    }
    for (uint sub = 0; sub < bits; sub += RANK_BITS) {
        if (sub > 0) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint j = 0; j < SORT_ITEMS; j++)
                e[j] = r[PAD(first + j)];
        }
        uint total = radix_count(e, cnt, sums, lid, sub) << 16;
        for (uint j = 0; j < SORT_ITEMS; j++) {
            uint s = (e[j] >> (16u + sub)) & 15u;
            uint slot = CNT((s & 7u) * WG_SIZE + lid), hs = 16u * (s >> 3);
            uint c = cnt[slot];
            cnt[slot] = c + (1u << hs);
            r[PAD(((c + total) >> hs) & 0xffffu)] = e[j];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Loads the tile's count words of src into r in tile order, coalesced. */
inline void radix_load_words(global const uint *src, local uint *r, uint base, uint count,
                             uint lid)
{
    if (count == TILE) {
        global const uint4 *s4 = (global const uint4 *)(src + base);
        for (uint k = 0; k < SORT_ITEMS / 4; k++) {
            uint4 v = s4[k * WG_SIZE + lid];
            uint i = 4 * (k * WG_SIZE + lid);
            r[PAD(i)] = v.x, r[PAD(i + 1)] = v.y, r[PAD(i + 2)] = v.z, r[PAD(i + 3)] = v.w;
        }
    } else {
        for (uint i = lid; i < count; i += WG_SIZE)
            r[PAD(i)] = src[base + i];
    }
}

/* Writes the ranked tile at base through r, first the keys, then the values: the pair of
 * ranked entry e[k] (position k * WG_SIZE + lid) goes to offset[its digit] + its position. */
inline void radix_write_tile(global const uint *keys_in, global const uint *values_in,
                             global uint *keys_out, global uint *values_out, local uint *r,
                             local const uint *offset, const uint *e, uint base, uint count,
                             uint lid)
{
    radix_load_words(keys_in, r, base, count, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < SORT_ITEMS; k++) {
        uint p = k * WG_SIZE + lid;
        if (p < count)
            keys_out[offset[e[k] >> 16] + p] = r[PAD(e[k] & 0xffffu)];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    radix_load_words(values_in, r, base, count, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < SORT_ITEMS; k++) {
        uint p = k * WG_SIZE + lid;
        if (p < count)
            values_out[offset[e[k] >> 16] + p] = r[PAD(e[k] & 0xffffu)];
    }
}

/* Moves each pair of the per tiles of group get_group_id(0) to its place for this pass, tile
 * after tile: cursor[digit] (the digit's base, the exclusive scan of the row totals, plus the
 * row-scanned table) is where the group's next pair of that digit goes. Each tile is ranked on
 * (digit, index) entries; keys, then values, pass through the same local array to their
 * ranked order.
 * keys_in, values_in: n pairs (input); keys_out, values_out: n pairs (output);
 * table: radix_scan_rows' scanned table; totals: its (1 << bits) row totals (inputs). */
kernel void radix_scatter(global const uint *keys_in, global const uint *values_in,
                          global uint *keys_out, global uint *values_out,
                          global const uint *table, global const uint *totals, uint n,
                          uint groups, uint shift, uint bits, uint per)
{
    local uint r[PADDED_SIZE(TILE)], cnt[RANK_LANES * WG_SIZE], sums[SCAN_GROUP_SIZE];
    local uint cursor[RADIX], offset[RADIX]; /* offset[d] + p: where tile position p goes */
    uint lid = get_local_id(0), group = get_group_id(0), unused, e[SORT_ITEMS];
    RADIX_SCAN_RUNS(totals, cursor, 1u << bits, sums, lid, unused);
    (void)unused;
    barrier(CLK_LOCAL_MEM_FENCE); /* cursor[d] may have come from another work-item */
    for (uint d = lid; d < (1u << bits); d += WG_SIZE)
        cursor[d] += table[d * groups + group];
    for (uint t = 0, base = group * per * TILE; t < per && base < n; t++, base += TILE) {
        uint count = min((uint)TILE, n - base);
        radix_rank_tile(keys_in, r, cnt, sums, base, n, lid, shift, bits);
        for (uint k = 0; k < SORT_ITEMS; k++) { /* runs' starts: offsets from the cursors */
            uint p = k * WG_SIZE + lid;
            e[k] = r[PAD(p)];
            uint d = e[k] >> 16;
            if (p < count && (p == 0 || d != r[PAD(p - 1)] >> 16))
                offset[d] = cursor[d] - p;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < SORT_ITEMS; k++) { /* runs' ends: the cursors move on */
            uint p = k * WG_SIZE + lid, d = e[k] >> 16;
            if (p < count && (p + 1 == count || d != r[PAD(p + 1)] >> 16))
                cursor[d] = offset[d] + p + 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* r read before it takes the keys */
        radix_write_tile(keys_in, values_in, keys_out, values_out, r, offset, e, base, count,
                         lid);
    }
}
