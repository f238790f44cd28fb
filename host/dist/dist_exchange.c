/* The exchanges of a split simulation, called by the core's hooks (sim.h): before the
 * neighbour search the particles that left the slab go to their new owner and the ghosts are
 * made anew from the owners' records; after the sort the slots of the exchanged particles are
 * looked up; after each stage whose values the neighbours read, the owners send them to their
 * ghosts. Which particles go where is found on the device (sim/exchange.h): only the lists of
 * the boundary's particles and their rows cross the bus, through pinned host memory, and the
 * host's work is theirs, not every particle's. The rows travel through the host and MPI, one
 * message per rank and direction at each point: the records with their size (MPI_Mprobe), the
 * values of all the point's buffers packed in one row per particle, the receives posted first
 * (docs/DISTRIBUTED.md, "Fewer and larger messages"). */
#include "dist_internal.h"

#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "sim/solver_method.h"

#include <math.h>
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
    free(l->slots);
    l->slots = NULL;
    l->count = l->cap = 0;
}

/* Makes *p hold at least bytes (grown by half again, never shrunk; contents kept). */
static pbfcl_status grow_host(void *p, size_t *cap, size_t bytes)
{
    if (*(void **)p && bytes <= *cap)
        return PBFCL_OK;
    size_t want = bytes + bytes / 2 + 64;
    void *q = realloc(*(void **)p, want);
    if (!q)
        return PBFCL_ERR_OUT_OF_MEMORY;
    *(void **)p = q;
    *cap = want;
    return PBFCL_OK;
}

/* The simulation's OpenCL context and queue (the pinned staging's; dist_records_read runs on
 * one rank too, where the device exchange is not made). */
static pbfcl_cl *sim_cl(pbfcl_dist *d)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    return v.cl;
}

/* Room for count slots in l. */
static pbfcl_status list_room(dist_list *l, size_t count)
{
    size_t bytes = l->cap * 4;
    PBFCL_TRY(grow_host(&l->slots, &bytes, count * 4));
    l->cap = bytes / 4;
    return PBFCL_OK;
}

pbfcl_status dist_exchange_create(pbfcl_dist *d)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    pbfcl_cl *cl = v.cl;
    int k = d->size;
    float *b = malloc(3 * (size_t)k * sizeof *b);
    if (!b)
        return PBFCL_ERR_OUT_OF_MEMORY;
    dist_device_bounds(d, b);
    pbfcl_status st = pbfcl_exchange_create(&d->xchg, cl, pbfcl_sim_capacity(d->sim),
                                            d->layout.axis, d->rank, k, b);
    free(b);
    return st;
}

void dist_exchange_release(pbfcl_dist *d)
{
    pbfcl_cl *cl = d->sim ? sim_cl(d) : NULL; /* the pinned staging is empty without one */
    if (cl) {
        pbfcl_pinned *p[] = {&d->records, &d->received};
        for (int i = 0; i < 2; i++)
            pbfcl_pinned_release(cl, p[i]);
    }
    dist_overlap_release(d);
    pbfcl_exchange_destroy(&d->xchg);
    dist_list_free(&d->send);
    dist_list_free(&d->ghost);
    dist_list_free(&d->migrants);
    cl_mem *bufs[] = {&d->send_slots_buf, &d->ghost_slots_buf, &d->packed_buf};
    for (int b = 0; b < 3; b++)
        pbfcl_cl_release_buffer(bufs[b]);
}

/* A device buffer of at least bytes (grown by half again as needed, contents lost). */
static pbfcl_status grow_device(pbfcl_dist *d, cl_mem *buf, size_t *cap, size_t bytes,
                                const char *what)
{
    if (*buf && bytes <= *cap)
        return PBFCL_OK;
    pbfcl_cl_release_buffer(buf);
    *cap = bytes + bytes / 2 + 256;
    return pbfcl_cl_buffer(sim_cl(d), CL_MEM_READ_WRITE, *cap, what, buf);
}

/* The tags of the two kinds of message (a rank's messages to another arrive in the order sent;
 * the tags keep a mismatch from passing unseen). */
enum { TAG_RECORDS = 301, TAG_VALUES = 302 };

/* An MPI type of unit bytes, committed (the caller frees it). */
static MPI_Datatype unit_type(size_t unit)
{
    MPI_Datatype t;
    MPI_Type_contiguous((int)unit, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Starts the sends of counts[r] items (type t, unit bytes) from send, grouped by rank in rank
 * order, to every other rank r, each its own message; empty ones too when all (a receiver that
 * does not know who sends waits for one from every rank). Their requests follow those already
 * in d->requests[0..*k). */
static void post_sends(pbfcl_dist *d, const void *send, const int *counts, size_t unit,
                       MPI_Datatype t, int tag, bool all, int *k)
{
    for (int r = 0, at = 0; r < d->size; at += counts[r++]) {
        d->displs[r] = at;
        if (r == d->rank || (!all && counts[r] == 0))
            continue;
        MPI_Isend((const char *)send + (size_t)at * unit, counts[r], t, r, tag, d->comm,
                  &d->requests[(*k)++]);
        d->traffic.messages++;
        d->traffic.bytes += (unsigned long long)counts[r] * unit;
    }
}

/* Records: sends counts[r] records (unit bytes) from send, grouped by rank, to every other
 * rank, one message each, and receives one from every other rank into recv, grouped by source
 * in rank order (d->rcounts and d->rdispls say how many from whom): the count travels with
 * the message (MPI_Mprobe), so no round of counts comes first. No rank sends itself any. */
static pbfcl_status exchange_records(pbfcl_dist *d, const void *send, const int *counts,
                                     size_t unit, pbfcl_pinned *recv, size_t *rcount)
{
    double start = pbfcl_wall_seconds();
    int was = dist_part(d, PBFCL_DIST_PART_MPI), k = 0, rd = 0, err = MPI_SUCCESS;
    MPI_Datatype t = unit_type(unit);
    post_sends(d, send, counts, unit, t, TAG_RECORDS, true, &k);
    for (int r = 0; r < d->size; rd += d->rcounts[r++]) {
        d->rdispls[r] = rd;
        d->rcounts[r] = 0;
        if (r == d->rank)
            continue;
        MPI_Status status;
        err |= MPI_Mprobe(r, TAG_RECORDS, d->comm, &d->probed[r], &status);
        err |= MPI_Get_count(&status, t, &d->rcounts[r]);
    }
    *rcount = (size_t)rd;
    pbfcl_status st = pbfcl_pinned_reserve(sim_cl(d), recv, (size_t)rd * unit + 16);
    for (int r = 0; r < d->size && st == PBFCL_OK; r++) /* none: every rank ends (dist_abort) */
        if (r != d->rank)
            err |= MPI_Mrecv((char *)recv->ptr + (size_t)d->rdispls[r] * unit, d->rcounts[r], t,
                             &d->probed[r], MPI_STATUS_IGNORE);
    err |= MPI_Waitall(k, d->requests, MPI_STATUSES_IGNORE);
    MPI_Type_free(&t);
    dist_part(d, was);
    d->traffic.mpi_seconds += pbfcl_wall_seconds() - start;
    return st != PBFCL_OK ? st : err != MPI_SUCCESS ? PBFCL_ERR_UNSUPPORTED : PBFCL_OK;
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

/* Sends the records of the k particles at slots (grouped by destination, counts per rank) and
 * appends those received (grouped by source: d->rcounts). */
static pbfcl_status send_records(pbfcl_dist *d, const unsigned *slots, const int *counts, size_t k)
{
    size_t m = 0;
    dist_part(d, PBFCL_DIST_PART_RECORDS);
    PBFCL_TRY(pbfcl_pinned_reserve(sim_cl(d), &d->records, k * d->record + 16));
    PBFCL_TRY(dist_records_read(d, slots, k, d->records.ptr));
    PBFCL_TRY(exchange_records(d, d->records.ptr, counts, d->record, &d->received, &m));
    dist_part(d, PBFCL_DIST_PART_APPEND);
    d->traffic.bus_bytes += m * d->record;
    return append_records(d, d->received.ptr, m);
}

/* Migration: drops the ghosts, and sends each owned particle whose x* left the slab to the
 * rank whose slab it is in now (any rank: a fast particle may cross several slabs). The
 * device lists the leaving ones with their ranks and keeps the others' slots. */
static pbfcl_status migrate(pbfcl_dist *d)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    size_t n = v.n, sent, kept;
    const cl_uint *list; /* (slot, rank) pairs in slot order */
    dist_part(d, PBFCL_DIST_PART_CLASSIFY);
    PBFCL_TRY(pbfcl_exchange_classify(&d->xchg, v.pred ? *v.pred : v.pos_buf, n,
                                      PBFCL_EXCHANGE_MIGRATE, &sent, &kept, &list));
    d->traffic.bus_bytes += 8 + sent * 8;
    dist_list *l = &d->migrants;
    PBFCL_TRY(list_room(l, sent));
    for (int r = 0; r < d->size; r++)
        d->counts[r] = 0;
    for (size_t e = 0; e < sent; e++)
        d->counts[list[2 * e + 1]]++;
    for (int r = 0, at = 0; r < d->size; at += d->counts[r++])
        d->displs[r] = at;
    for (size_t e = 0; e < sent; e++) /* by rank, in slot order within each */
        l->slots[d->displs[list[2 * e + 1]]++] = list[2 * e];
    l->count = sent;
    dist_part(d, PBFCL_DIST_PART_RECORDS); /* the records first: compact renumbers the slots */
    PBFCL_TRY(pbfcl_pinned_reserve(sim_cl(d), &d->records, sent * d->record + 16));
    PBFCL_TRY(dist_records_read(d, l->slots, sent, d->records.ptr));
    dist_part(d, PBFCL_DIST_PART_COMPACT);
    if (kept < n)
        PBFCL_TRY(pbfcl_sim_compact_device(d->sim, d->xchg.keep_buf, kept));
    d->xchg.ghosts_valid = 0; /* there are none now */
    size_t got = 0;
    PBFCL_TRY(exchange_records(d, d->records.ptr, d->counts, d->record, &d->received, &got));
    dist_part(d, PBFCL_DIST_PART_APPEND);
    d->traffic.bus_bytes += got * d->record;
    return append_records(d, d->received.ptr, got);
}

/* The ghosts: every owned particle within the halo of another rank's slab goes there as a
 * ghost (its record); the lists of who sends what to whom are kept for the exchanges. The
 * device lists the particles near another slab with the range of ranks whose halo holds them. */
static pbfcl_status make_ghosts(pbfcl_dist *d)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    size_t n = v.n, sent, kept, k = 0;
    const cl_uint *list; /* (slot, first << 16 | last) in slot order */
    dist_part(d, PBFCL_DIST_PART_CLASSIFY);
    PBFCL_TRY(pbfcl_exchange_classify(&d->xchg, v.pred ? *v.pred : v.pos_buf, n,
                                      PBFCL_EXCHANGE_GHOSTS, &sent, &kept, &list));
    d->traffic.bus_bytes += 4 + sent * 8;
    dist_list *s = &d->send;
    for (int r = 0; r < d->size; r++)
        s->counts[r] = 0;
    for (size_t e = 0; e < sent; e++) {
        cl_uint first = PBFCL_EXCHANGE_FIRST(list[2 * e + 1]);
        cl_uint last = PBFCL_EXCHANGE_LAST(list[2 * e + 1]);
        for (cl_uint r = first; r <= last; r++)
            s->counts[r] += (int)r != d->rank;
    }
    for (int r = 0; r < d->size; k += (size_t)s->counts[r++])
        s->displs[r] = (int)k;
    PBFCL_TRY(list_room(s, k));
    for (int r = 0; r < d->size; r++)
        d->counts[r] = s->displs[r];    /* the next entry of each rank */
    for (size_t e = 0; e < sent; e++) { /* by rank, in slot order within each */
        cl_uint first = PBFCL_EXCHANGE_FIRST(list[2 * e + 1]);
        cl_uint last = PBFCL_EXCHANGE_LAST(list[2 * e + 1]);
        for (cl_uint r = first; r <= last; r++)
            if ((int)r != d->rank)
                s->slots[d->counts[r]++] = list[2 * e];
    }
    s->count = k;
    d->owned = n;
    PBFCL_TRY(send_records(d, s->slots, s->counts, k));
    dist_part(d, PBFCL_DIST_PART_OTHER);
    d->ghost.count = 0;
    for (int r = 0; r < d->size; r++) {
        d->ghost.counts[r] = d->rcounts[r];
        d->ghost.displs[r] = d->rdispls[r];
        d->ghost.count += (size_t)d->rcounts[r];
    }
    return PBFCL_OK;
}

/* PBFCL_SYNC_SEARCH: migration, then the ghosts. */
static pbfcl_status before_search(pbfcl_dist *d)
{
    if (d->ghost.count > 0 && !d->xchg.ghosts_valid) {
        pbfcl_errorf("the split's ghosts are not flagged in the current order (internal error)");
        return PBFCL_ERR_SIMULATION;
    }
    PBFCL_TRY(migrate(d));
    return make_ghosts(d);
}

/* PBFCL_SYNC_SORTED: the slots of the particles sent and of the ghosts in the new order, from
 * the sort's gather map on the device, where they stay for the values' gathers and scatters;
 * the ghosts' flags follow them. */
static pbfcl_status after_sort(pbfcl_dist *d)
{
    dist_part(d, PBFCL_DIST_PART_SLOTS);
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    PBFCL_TRY(pbfcl_exchange_sorted(&d->xchg, v.grid->index_buf, v.n, d->owned));
    size_t s = d->send.count, g = d->ghost.count; /* the ghosts: the old slots from owned on */
    PBFCL_TRY(grow_device(d, &d->send_slots_buf, &d->send_slots_cap, (s + g) * 4, "sent slots"));
    PBFCL_TRY(grow_device(d, &d->ghost_slots_buf, &d->ghost_slots_cap, g * 4, "ghost slots"));
    PBFCL_TRY(
        pbfcl_exchange_slots(&d->xchg, d->send.slots, s, s + g, d->owned, d->send_slots_buf, NULL));
    d->traffic.bus_bytes += s * 4;
    if (g > 0)
        PBFCL_CL_CHECK(clEnqueueCopyBuffer(v.cl->queue, d->send_slots_buf, d->ghost_slots_buf,
                                           s * 4, 0, g * 4, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status dist_records_read(pbfcl_dist *d, const unsigned *slots, size_t k, void *out)
{
    PBFCL_TRY(dist_rows_records(&d->rows, d->sim, slots, k, d->record, out));
    d->traffic.bus_bytes += k * (4 + d->record); /* the slots up, the records down */
    return PBFCL_OK;
}

/* Posts the receives of the ghosts' rows (unit bytes each, type t) into recv, one message from
 * each owner of ghosts here, before this rank's own rows are gathered: the owners' messages
 * land as they come. Their requests are d->requests[0..*k). */
static pbfcl_status post_receives(pbfcl_dist *d, pbfcl_pinned *recv, size_t unit, MPI_Datatype t,
                                  int *k)
{
    double start = pbfcl_wall_seconds();
    int was = dist_part(d, PBFCL_DIST_PART_MPI);
    for (int r = 0; r < d->size; r++)
        if (r != d->rank && d->ghost.counts[r] > 0)
            MPI_Irecv((char *)recv->ptr + (size_t)d->ghost.displs[r] * unit, d->ghost.counts[r], t,
                      r, TAG_VALUES, d->comm, &d->requests[(*k)++]);
    dist_part(d, was);
    d->traffic.mpi_seconds += pbfcl_wall_seconds() - start;
    return PBFCL_OK;
}

/* The values of bufs[0..count-1] at the send list's slots, each buffer's rows (elem[b] bytes)
 * into its column of the packed rows of `words` words, read at once into d->records. */
static pbfcl_status gather_values(pbfcl_dist *d, const pbfcl_sim_view *v, const cl_mem *bufs,
                                  const size_t *elem, int count, size_t words)
{
    size_t s = d->send.count;
    for (size_t b = 0, at = 0; b < (size_t)count; at += elem[b++] / 4)
        PBFCL_TRY(pbfcl_particles_gather_column(v->particles, bufs[b], elem[b] / 4,
                                                d->send_slots_buf, s, words, at, d->packed_buf));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(v->cl->queue, d->packed_buf, CL_TRUE, 0, s * words * 4,
                                       d->records.ptr, 0, NULL, NULL));
    return PBFCL_OK;
}

/* The owners' values of bufs[0..count-1] (elem[b] bytes a particle each) to their ghosts, in
 * one message per rank and direction: each buffer's rows gathered on the device into its
 * column of one packed row per particle sent (at the slots after_sort left there), read at
 * once, sent; the rows received written at once and each column scattered to the ghosts'
 * slots. The receives are posted before the gather, the sends as soon as the rows are read.
 * dist_values_begin returns with the messages in flight, dist_values_end completes them. */
pbfcl_status dist_values_begin(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem, int count)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    dist_values *f = &d->values;
    size_t s = d->send.count, g = d->ghost.count, words = 0;
    if (count > DIST_VALUES_MAX_BUFS) {
        pbfcl_errorf("an exchange of %d buffers, at most %d (internal error)", count,
                     DIST_VALUES_MAX_BUFS);
        return PBFCL_ERR_SIMULATION;
    }
    for (int b = 0; b < count; b++) {
        words += elem[b] / 4;
        f->bufs[b] = bufs[b];
        f->elem[b] = elem[b];
    }
    f->count = count;
    f->words = words;
    size_t row = words * 4;
    dist_part(d, PBFCL_DIST_PART_VALUES);
    if (f->written) { /* the rows received last are written before their staging is reused */
        cl_int err = clWaitForEvents(1, &f->written);
        clReleaseEvent(f->written);
        f->written = NULL;
        PBFCL_CL_CHECK(err);
    }
    PBFCL_TRY(grow_device(d, &d->packed_buf, &d->packed_cap, (s > g ? s : g) * row + 16,
                          "exchanged values"));
    PBFCL_TRY(pbfcl_pinned_reserve(v.cl, &d->records, s * row + 16));
    PBFCL_TRY(pbfcl_pinned_reserve(v.cl, &d->received, g * row + 16));
    f->type = unit_type(row);
    f->requests = 0;
    pbfcl_status st = post_receives(d, &d->received, row, f->type, &f->requests);
    if (st == PBFCL_OK && s > 0)
        st = gather_values(d, &v, bufs, elem, count, words);
    if (st != PBFCL_OK) { /* a failing rank ends every rank (pbfcl_dist_abort) */
        MPI_Type_free(&f->type);
        return st;
    }
    d->traffic.bus_bytes += (s + g) * row;
    double start = pbfcl_wall_seconds();
    dist_part(d, PBFCL_DIST_PART_MPI);
    post_sends(d, d->records.ptr, d->send.counts, row, f->type, TAG_VALUES, false, &f->requests);
    d->traffic.mpi_seconds += pbfcl_wall_seconds() - start;
    dist_part(d, PBFCL_DIST_PART_VALUES);
    return PBFCL_OK;
}

pbfcl_status dist_values_end(pbfcl_dist *d, bool finish)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    dist_values *f = &d->values;
    size_t g = d->ghost.count, words = f->words;
    double start = pbfcl_wall_seconds();
    dist_part(d, PBFCL_DIST_PART_MPI);
    int err = MPI_Waitall(f->requests, d->requests, MPI_STATUSES_IGNORE);
    MPI_Type_free(&f->type);
    d->traffic.mpi_seconds += pbfcl_wall_seconds() - start;
    dist_part(d, PBFCL_DIST_PART_VALUES);
    if (err != MPI_SUCCESS)
        return PBFCL_ERR_UNSUPPORTED;
    if (g == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(v.cl->queue, d->packed_buf, CL_FALSE, 0, g * words * 4,
                                        d->received.ptr, 0, NULL, finish ? NULL : &f->written));
    for (size_t b = 0, at = 0; b < (size_t)f->count; at += f->elem[b++] / 4)
        PBFCL_TRY(pbfcl_particles_scatter_column(v.particles, d->packed_buf, words, at,
                                                 f->elem[b] / 4, d->ghost_slots_buf, g,
                                                 f->bufs[b]));
    if (finish) /* the received rows are read until then */
        PBFCL_CL_CHECK(clFinish(v.cl->queue));
    return PBFCL_OK;
}

/* After delta the moved flags (collide's near lists) know nothing of how far the ghosts'
 * owners moved them: every region is marked moved, so collide reads the whole lists. */
pbfcl_status dist_mark_all_moved(pbfcl_dist *d)
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
    bool overlap = dist_overlap_point(d, point);
    if (!overlap) { /* the kernels before: not the exchange's time */
        pbfcl_sim_view v;
        pbfcl_sim_view_get(sim, &v);
        PBFCL_CL_CHECK(clFinish(v.cl->queue));
    }
    double start = pbfcl_wall_seconds();
    d->part = PBFCL_DIST_PART_OTHER;
    d->part_since = start;
    pbfcl_status st = PBFCL_OK;
    if (point == PBFCL_SYNC_SEARCH) {
        st = before_search(d);
        if (st == PBFCL_OK) /* the bodies' stages: the particles here, those owned */
            st = dist_bodies_mark(d, d->owned);
        d->traffic.substeps++;
        d->traffic.ghosts += d->ghost.count;
    } else if (point == PBFCL_SYNC_SORTED) {
        st = after_sort(d);
        if (st == PBFCL_OK)
            st = dist_overlap_sorted(d);
    } else if (overlap) { /* the exchange split in two (dist_overlap.c) */
        st = dist_overlap_sync(d, point, bufs, elem, count);
    } else if (point == PBFCL_SYNC_SHAPES) {
        st = dist_shapes_clear_ghosts(d, bufs, elem, count);
    } else if (point == PBFCL_SYNC_ML_GHOSTS) {
        st = dist_ml_ghosts(d, bufs, elem, count);
    } else if (point == PBFCL_SYNC_ML_SUMS) {
        st = dist_ml_sums(d, bufs, elem, count);
    } else {
        if (count > 0)
            st = dist_values_begin(d, bufs, elem, count);
        if (st == PBFCL_OK && count > 0)
            st = dist_values_end(d, true);
        if (st == PBFCL_OK && point == PBFCL_SYNC_DELTA)
            st = dist_mark_all_moved(d);
    }
    d->traffic.syncs += point != PBFCL_SYNC_WAIT; /* the second half of an exchange */
    dist_part(d, PBFCL_DIST_PART_OTHER);
    d->traffic.seconds += d->part_since - start;
    return st;
}

/* The ghosts removed (pbfcl_sim_compact_device with the device's keep list), with the last
 * substep's densities and neighbour counts (what the statistics read) of the kept particles
 * kept in their places too: the compaction leaves these, which each substep writes anew, in
 * the old slots. */
static pbfcl_status compact_keeping_results(pbfcl_dist *d, size_t m)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    cl_mem bufs[] = {v.density_buf, v.grid->neighbor_count_buf}; /* 4 bytes a particle each */
    cl_mem kept[] = {d->xchg.fate_buf, d->xchg.flags_buf};       /* scratch of the device part */
    for (int b = 0; b < 2; b++)
        PBFCL_TRY(pbfcl_exchange_pick(&d->xchg, bufs[b], m, kept[b]));
    PBFCL_TRY(pbfcl_sim_compact_device(d->sim, d->xchg.keep_buf, m));
    for (int b = 0; b < 2 && m > 0; b++)
        PBFCL_CL_CHECK(
            clEnqueueCopyBuffer(v.cl->queue, kept[b], bufs[b], 0, 0, m * 4, 0, NULL, NULL));
    PBFCL_CL_CHECK(clFinish(v.cl->queue));
    return PBFCL_OK;
}

pbfcl_status dist_drop_ghosts(pbfcl_dist *d)
{
    double start = pbfcl_wall_seconds();
    d->part = PBFCL_DIST_PART_CLASSIFY;
    d->part_since = start;
    pbfcl_status st = PBFCL_OK;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    size_t n = v.n, sent = 0, kept = n;
    const cl_uint *list;
    if (d->ghost.count > 0 && !d->xchg.ghosts_valid) {
        pbfcl_errorf("the split's ghosts are not flagged in the current order (internal error)");
        st = PBFCL_ERR_SIMULATION;
    } else if (d->ghost.count > 0) {
        st = pbfcl_exchange_classify(&d->xchg, v.pred ? *v.pred : v.pos_buf, n, PBFCL_EXCHANGE_DROP,
                                     &sent, &kept, &list);
        d->traffic.bus_bytes += 8;
    }
    dist_part(d, PBFCL_DIST_PART_COMPACT);
    if (st == PBFCL_OK && kept < n)
        st = compact_keeping_results(d, kept);
    d->ghost.count = d->send.count = 0;
    d->xchg.ghosts_valid = 0;
    dist_part(d, PBFCL_DIST_PART_OTHER);
    d->traffic.seconds += d->part_since - start;
    return st;
}
