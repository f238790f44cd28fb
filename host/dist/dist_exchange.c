/* The exchanges of a split simulation, called by the core's hooks (sim.h): before the
 * neighbour search the particles that left the slab go to their new owner and the ghosts are
 * made anew from the owners' records; after the sort the slots of the exchanged particles are
 * looked up; after each stage whose values the neighbours read, the owners send them to their
 * ghosts. The values travel through the host (docs/DISTRIBUTED.md, "What is left"). */
#include "dist_internal.h"

#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "sim/solver_method.h"

#include <stdlib.h>
#include <string.h>

static const char *const part_names[] = {
#define PART_NAME(id, name, what) name,
    PBFCL_DIST_PARTS(PART_NAME)
#undef PART_NAME
};
static const char *const part_whats[] = {
#define PART_WHAT(id, name, what) what,
    PBFCL_DIST_PARTS(PART_WHAT)
#undef PART_WHAT
};

const char *pbfcl_dist_part_name(int part)
{
    return part >= 0 && part < PBFCL_DIST_PART_COUNT ? part_names[part] : NULL;
}

const char *pbfcl_dist_part_what(int part)
{
    return part >= 0 && part < PBFCL_DIST_PART_COUNT ? part_whats[part] : NULL;
}

int dist_part(pbfcl_dist *d, int part)
{
    double now = pbfcl_wall_seconds();
    int was = d->part;
    d->traffic.part_seconds[was] += now - d->part_since;
    d->part_since = now;
    d->part = part;
    return was;
}

void dist_list_free(dist_list *l)
{
    free(l->ids);
    free(l->slots);
    l->ids = l->slots = NULL;
    l->count = 0;
}

/* Reads the ids and x* of the n particles now (either may be NULL). */
static pbfcl_status read_state(pbfcl_dist *d, unsigned *ids, cl_float4 *pred)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    if (v.n == 0)
        return PBFCL_OK;
    if (ids)
        PBFCL_CL_CHECK(
            clEnqueueReadBuffer(v.cl->queue, v.id_buf, CL_TRUE, 0, v.n * 4, ids, 0, NULL, NULL));
    if (pred)
        PBFCL_CL_CHECK(
            clEnqueueReadBuffer(v.cl->queue, *v.pred, CL_TRUE, 0, v.n * 16, pred, 0, NULL, NULL));
    return PBFCL_OK;
}

/* Sends counts[r] items of unit bytes from send (grouped by rank, displs from counts) to each
 * rank r; receives into *recv (malloc'd) *rcount items, grouped by source, with the per-rank
 * counts in d->rcounts and offsets in d->rdispls. */
static pbfcl_status alltoallv(pbfcl_dist *d, const void *send, const int *counts, size_t unit,
                              void **recv, size_t *rcount, bool known)
{
    double start = pbfcl_wall_seconds();
    int was = dist_part(d, PBFCL_DIST_PART_MPI);
    if (!known)
        MPI_Alltoall(counts, 1, MPI_INT, d->rcounts, 1, MPI_INT, d->comm);
    int sd = 0, rd = 0;
    for (int r = 0; r < d->size; r++) {
        d->displs[r] = sd;
        d->rdispls[r] = rd;
        sd += counts[r];
        rd += d->rcounts[r];
    }
    *rcount = (size_t)rd;
    *recv = malloc((size_t)rd * unit + 16);
    if (!*recv)
        return PBFCL_ERR_OUT_OF_MEMORY;
    MPI_Datatype t;
    MPI_Type_contiguous((int)unit, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    int err = MPI_Alltoallv(send, counts, d->displs, t, *recv, d->rcounts, d->rdispls, t, d->comm);
    for (int r = 0; r < d->size; r++)
        d->traffic.bytes += r == d->rank ? 0 : (unsigned long long)counts[r] * unit;
    MPI_Type_free(&t);
    dist_part(d, was);
    d->traffic.mpi_seconds += pbfcl_wall_seconds() - start;
    return err == MPI_SUCCESS ? PBFCL_OK : PBFCL_ERR_UNSUPPORTED;
}

/* Appends k received records (ghosts or arrivals); a rank without room says what to change. */
static pbfcl_status append_records(pbfcl_dist *d, const void *rec, size_t k)
{
    size_t n = pbfcl_sim_count(d->sim), room = pbfcl_sim_capacity(d->sim);
    if (k > room - n) {
        pbfcl_errorf("rank %d holds %zu particles and receives %zu more (ghosts or arrivals), "
                     "beyond its room for %zu; give a larger --rank-capacity (ghosts are the "
                     "particles within h of its slab), or leave it out for room for all %zu",
                     d->rank, n, k, room, d->n_global);
        return PBFCL_ERR_CAPACITY;
    }
    return pbfcl_sim_records_append(d->sim, rec, k);
}

/* Sends the records of the particles at slots (grouped by destination, counts per rank) and
 * appends those received; their ids (grouped by source) into *got if not NULL. */
static pbfcl_status send_records(pbfcl_dist *d, const unsigned *slots, const unsigned *ids,
                                 const int *counts, size_t k, unsigned **got)
{
    char *rec = malloc(k * d->record + 16), *in = NULL;
    unsigned *in_ids = NULL;
    size_t m = 0, m_ids = 0;
    dist_part(d, PBFCL_DIST_PART_RECORDS);
    pbfcl_status st = rec ? dist_records_read(d, slots, k, rec) : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = alltoallv(d, rec, counts, d->record, (void **)&in, &m, false);
    if (st == PBFCL_OK && got)
        st = alltoallv(d, ids, counts, sizeof(unsigned), (void **)&in_ids, &m_ids, true);
    dist_part(d, PBFCL_DIST_PART_APPEND);
    if (st == PBFCL_OK)
        st = append_records(d, in, m);
    free(rec);
    free(in);
    if (got && st == PBFCL_OK)
        *got = in_ids;
    else
        free(in_ids);
    return st;
}

/* Groups items by rank: order[] holds the indices i of item_rank[i] >= 0 by rank (stable),
 * counts per rank into counts; returns how many. */
static size_t group_by_rank(const pbfcl_dist *d, const int *item_rank, size_t n, int *counts,
                            unsigned *order)
{
    size_t k = 0;
    for (int r = 0; r < d->size; r++) {
        counts[r] = 0;
        for (size_t i = 0; i < n; i++)
            if (item_rank[i] == r) {
                order[k++] = (unsigned)i;
                counts[r]++;
            }
    }
    return k;
}

/* Migration: drops the ghosts, and sends each owned particle whose x* left the slab to the
 * rank whose slab it is in now (any rank: a fast particle may cross several slabs). */
static pbfcl_status migrate(pbfcl_dist *d, size_t n, const unsigned *ids, const cl_float4 *pred)
{
    size_t room = n ? n : 1, m = 0;
    int *dest = malloc(room * sizeof *dest);
    unsigned *keep = malloc(room * 4), *keep_ids = malloc(room * 4), *slots = malloc(room * 4);
    char *rec = NULL, *in = NULL;
    pbfcl_status st = dest && keep && keep_ids && slots ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        int r = d->is_ghost[ids[i]] ? -1 : dist_owner(d, pred[i].s[d->layout.axis]);
        d->is_ghost[ids[i]] = 0;
        dest[i] = r == d->rank ? -1 : r;
        if (r == d->rank) {
            keep[m] = (unsigned)i;
            keep_ids[m++] = ids[i];
        }
    }
    size_t k = st == PBFCL_OK ? group_by_rank(d, dest, n, d->counts, slots) : 0, got = 0;
    if (st == PBFCL_OK && !(rec = malloc(k * d->record + 16)))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    dist_part(d, PBFCL_DIST_PART_RECORDS);
    if (st == PBFCL_OK) /* the records first: compact renumbers the slots */
        st = dist_records_read(d, slots, k, rec);
    dist_part(d, PBFCL_DIST_PART_COMPACT);
    if (st == PBFCL_OK && m < n)
        st = pbfcl_sim_compact(d->sim, keep, m, keep_ids);
    if (st == PBFCL_OK)
        st = alltoallv(d, rec, d->counts, d->record, (void **)&in, &got, false);
    dist_part(d, PBFCL_DIST_PART_APPEND);
    if (st == PBFCL_OK)
        st = append_records(d, in, got);
    free(in);
    free(rec);
    free(dest);
    free(keep);
    free(keep_ids);
    free(slots);
    return st;
}

/* Whether coordinate c is within the halo of rank r's slab. */
static bool near_slab(const pbfcl_dist *d, int r, float c)
{
    return c >= d->layout.cuts[r] - d->halo && c < d->layout.cuts[r + 1] + d->halo;
}

/* The ghosts: every owned particle within the halo of another rank's slab goes there as a
 * ghost (its record); the lists of who sends what to whom are kept for the exchanges. */
static pbfcl_status make_ghosts(pbfcl_dist *d)
{
    dist_part(d, PBFCL_DIST_PART_CLASSIFY);
    size_t n = pbfcl_sim_count(d->sim), room = n ? n : 1, k = 0;
    unsigned *ids = malloc(room * 4);
    cl_float4 *pred = malloc(room * sizeof *pred);
    dist_list_free(&d->send);
    dist_list_free(&d->ghost);
    d->send.ids = malloc(room * (size_t)d->size * 4); /* at most every particle to each rank */
    d->send.slots = malloc(room * (size_t)d->size * 4);
    pbfcl_status st = ids && pred && d->send.ids && d->send.slots ? read_state(d, ids, pred)
                                                                  : PBFCL_ERR_OUT_OF_MEMORY;
    for (int r = 0; st == PBFCL_OK && r < d->size; r++) {
        d->send.displs[r] = (int)k;
        for (size_t i = 0; r != d->rank && i < n; i++)
            if (near_slab(d, r, pred[i].s[d->layout.axis])) {
                d->send.slots[k] = (unsigned)i;
                d->send.ids[k++] = ids[i];
            }
        d->send.counts[r] = (int)k - d->send.displs[r];
    }
    d->send.count = k;
    free(ids);
    free(pred);
    if (st == PBFCL_OK)
        st = send_records(d, d->send.slots, d->send.ids, d->send.counts, k, &d->ghost.ids);
    if (st != PBFCL_OK)
        return st;
    dist_part(d, PBFCL_DIST_PART_CLASSIFY);
    d->ghost.count = 0;
    for (int r = 0; r < d->size; r++) {
        d->ghost.counts[r] = d->rcounts[r];
        d->ghost.displs[r] = d->rdispls[r];
        d->ghost.count += (size_t)d->rcounts[r];
    }
    for (size_t g = 0; g < d->ghost.count; g++)
        d->is_ghost[d->ghost.ids[g]] = 1;
    d->ghost.slots = malloc((d->ghost.count ? d->ghost.count : 1) * 4);
    return d->ghost.slots ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
}

/* PBFCL_SYNC_SEARCH: migration, then the ghosts. */
static pbfcl_status before_search(pbfcl_dist *d)
{
    dist_part(d, PBFCL_DIST_PART_CLASSIFY);
    size_t n = pbfcl_sim_count(d->sim), room = n ? n : 1;
    unsigned *ids = malloc(room * 4);
    cl_float4 *pred = malloc(room * sizeof *pred);
    pbfcl_status st = ids && pred ? read_state(d, ids, pred) : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = migrate(d, n, ids, pred);
    free(ids);
    free(pred);
    return st == PBFCL_OK ? make_ghosts(d) : st;
}

/* PBFCL_SYNC_SORTED: the slots of the particles sent and of the ghosts in the new order. */
static pbfcl_status after_sort(pbfcl_dist *d)
{
    dist_part(d, PBFCL_DIST_PART_SLOTS);
    size_t n = pbfcl_sim_count(d->sim);
    unsigned *ids = malloc((n ? n : 1) * 4);
    pbfcl_status st = ids ? read_state(d, ids, NULL) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        d->slot_of[ids[i]] = (unsigned)i;
    for (size_t k = 0; st == PBFCL_OK && k < d->send.count; k++)
        d->send.slots[k] = d->slot_of[d->send.ids[k]];
    for (size_t g = 0; st == PBFCL_OK && g < d->ghost.count; g++)
        d->ghost.slots[g] = d->slot_of[d->ghost.ids[g]];
    free(ids);
    return st;
}

pbfcl_status dist_records_read(pbfcl_dist *d, const unsigned *slots, size_t k, void *out)
{
    size_t at = 0, elem;
    cl_mem buf;
    char *rows = malloc(16 * k + 16);
    pbfcl_status st = rows ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t r = 0;
         st == PBFCL_OK && k > 0 && pbfcl_sim_record_row(d->sim, r, &buf, &elem, NULL); r++) {
        st = dist_rows_gather(&d->rows, buf, elem, slots, k, rows);
        for (size_t i = 0; st == PBFCL_OK && i < k; i++)
            memcpy((char *)out + i * d->record + at, rows + i * elem, elem);
        at += elem;
    }
    free(rows);
    return st;
}

/* The owners' values of buf (elem bytes a particle) to their ghosts: the sent rows gathered
 * and the received ones scattered on the device, only they through the host. */
static pbfcl_status send_values(pbfcl_dist *d, cl_mem buf, size_t elem)
{
    size_t got = 0;
    dist_part(d, PBFCL_DIST_PART_VALUES);
    char *out = malloc(d->send.count * elem + 16), *in = NULL;
    pbfcl_status st = out ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = dist_rows_gather(&d->rows, buf, elem, d->send.slots, d->send.count, out);
    for (int r = 0; r < d->size; r++)
        d->rcounts[r] = d->ghost.counts[r];
    if (st == PBFCL_OK)
        st = alltoallv(d, out, d->send.counts, elem, (void **)&in, &got, true);
    dist_part(d, PBFCL_DIST_PART_VALUES);
    if (st == PBFCL_OK)
        st = dist_rows_scatter(&d->rows, buf, elem, d->ghost.slots, got, in);
    free(out);
    free(in);
    return st;
}

/* After delta the moved flags (collide's near lists) know nothing of how far the ghosts'
 * owners moved them: every region is marked moved, so collide reads the whole lists. */
static pbfcl_status mark_all_moved(pbfcl_dist *d)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    static const cl_uint all = 0xffffffffu;
    PBFCL_CL_CHECK(clEnqueueFillBuffer(v.cl->queue, v.grid->moved_buf, &all, sizeof all, 0,
                                       v.grid->moved_regions * sizeof all, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status dist_sync(void *ctx, pbfcl_sim *sim, pbfcl_sim_sync_point point, const cl_mem *bufs,
                       const size_t *elem, int count)
{
    pbfcl_dist *d = ctx;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    PBFCL_CL_CHECK(clFinish(v.cl->queue)); /* the kernels before: not the exchange's time */
    double start = pbfcl_wall_seconds();
    d->part = PBFCL_DIST_PART_OTHER;
    d->part_since = start;
    pbfcl_status st = PBFCL_OK;
    if (point == PBFCL_SYNC_SEARCH) {
        st = before_search(d);
        d->traffic.substeps++;
        d->traffic.ghosts += d->ghost.count;
    } else if (point == PBFCL_SYNC_SORTED) {
        st = after_sort(d);
    } else {
        for (int b = 0; b < count && st == PBFCL_OK; b++)
            st = send_values(d, bufs[b], elem[b]);
        if (st == PBFCL_OK && point == PBFCL_SYNC_DELTA)
            st = mark_all_moved(d);
    }
    d->traffic.syncs++;
    dist_part(d, PBFCL_DIST_PART_OTHER);
    d->traffic.seconds += d->part_since - start;
    return st;
}

/* pbfcl_sim_compact, with the last substep's densities and neighbour counts (what the
 * statistics read) of the kept particles kept in their places too: the core's compaction
 * leaves these, which each substep writes anew, in the old slots. */
static pbfcl_status compact_keeping_results(pbfcl_dist *d, const unsigned *keep, size_t m,
                                            const unsigned *ids)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    cl_mem bufs[] = {v.density_buf, v.grid->neighbor_count_buf}; /* 4 bytes a particle each */
    cl_uint *rows[2] = {malloc(v.n * 4 + 4), malloc(v.n * 4 + 4)};
    pbfcl_status st = rows[0] && rows[1] ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (int b = 0; b < 2 && st == PBFCL_OK; b++) {
        PBFCL_CL_TRY(
            st,
            clEnqueueReadBuffer(v.cl->queue, bufs[b], CL_TRUE, 0, v.n * 4, rows[b], 0, NULL, NULL),
            done);
        for (size_t i = 0; i < m; i++)
            rows[b][i] = rows[b][keep[i]]; /* keep[i] >= i: in place */
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_compact(d->sim, keep, m, ids);
    for (int b = 0; b < 2 && st == PBFCL_OK && m > 0; b++)
        PBFCL_CL_TRY(
            st,
            clEnqueueWriteBuffer(v.cl->queue, bufs[b], CL_TRUE, 0, m * 4, rows[b], 0, NULL, NULL),
            done);
done:
    free(rows[0]);
    free(rows[1]);
    return st;
}

pbfcl_status dist_drop_ghosts(pbfcl_dist *d)
{
    double start = pbfcl_wall_seconds();
    d->part = PBFCL_DIST_PART_CLASSIFY;
    d->part_since = start;
    size_t n = pbfcl_sim_count(d->sim), m = 0;
    unsigned *ids = malloc((n ? n : 1) * 4), *keep = malloc((n ? n : 1) * 4);
    pbfcl_status st = ids && keep ? read_state(d, ids, NULL) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        if (!d->is_ghost[ids[i]]) {
            keep[m] = (unsigned)i;
            ids[m++] = ids[i]; /* m <= i: in place */
        }
    }
    for (size_t g = 0; g < d->ghost.count; g++)
        d->is_ghost[d->ghost.ids[g]] = 0;
    dist_list_free(&d->ghost);
    dist_list_free(&d->send);
    dist_part(d, PBFCL_DIST_PART_COMPACT);
    if (st == PBFCL_OK && m < n)
        st = compact_keeping_results(d, keep, m, ids);
    free(ids);
    free(keep);
    dist_part(d, PBFCL_DIST_PART_OTHER);
    d->traffic.seconds += d->part_since - start;
    return st;
}
