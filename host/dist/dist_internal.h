/* The state of a rank's part of a split simulation, shared by the files of host/dist/. */
#ifndef PBFCL_DIST_INTERNAL_H
#define PBFCL_DIST_INTERNAL_H

#include "dist.h"
#include "sim/exchange.h"
#include "sim/particles.h"
#include "sim/regions.h"
#include "sim/solver_method.h"

#include <stdbool.h>

/* A list of particles exchanged with every other rank: their slots grouped by rank (counts,
 * displs), in the order before the search's sort (the send list's, on the host; after the
 * sort they are on the device, pbfcl_dist's send_slots_buf and ghost_slots_buf). */
typedef struct dist_list {
    unsigned *slots;
    size_t count, cap;    /* entries; room for them */
    int *counts, *displs; /* per rank */
} dist_list;

/* The device side of the exchanges (dist_rows.c): the rows' slots and the packed rows, copied
 * by the simulation's gather_rows and scatter_rows (sim/particles.h). */
typedef struct dist_rows {
    pbfcl_cl *cl;
    pbfcl_particles *particles; /* the simulation's: its copy kernels */
    cl_mem slots, packed;       /* the rows' slots; the packed rows */
    size_t slots_cap, packed_cap;
} dist_rows;

pbfcl_status dist_rows_create(dist_rows *r, pbfcl_sim *sim);
void dist_rows_release(dist_rows *r);

/* Reads the records (record bytes: the rows of every saved buffer, pbfcl_sim_record_row) of
 * sim's particles at slots[0..count-1] into out, packed: one gather per saved buffer into its
 * column of one device block, one read. */
pbfcl_status dist_rows_records(dist_rows *r, pbfcl_sim *sim, const unsigned *slots, size_t count,
                               size_t record, void *out);

/* Writes the packed rows in to the rows of buf at slots[0..count-1]. */
pbfcl_status dist_rows_scatter(dist_rows *r, cl_mem buf, size_t elem, const unsigned *slots,
                               size_t count, const void *in);

/* The most buffers one exchange of values carries (PBFCL_SYNC_COLLIDE's q and x). */
#define DIST_VALUES_MAX_BUFS 4

/* An exchange of values between dist_values_begin and dist_values_end: the receives posted and
 * the sends started (d->requests[0..requests)), the buffers whose ghosts' rows arrive. */
typedef struct dist_values {
    int requests;
    MPI_Datatype type; /* one packed row */
    cl_mem bufs[DIST_VALUES_MAX_BUFS];
    size_t elem[DIST_VALUES_MAX_BUFS];
    int count;
    size_t words;     /* of a packed row */
    cl_event written; /* the last received rows' write (overlap), before the staging's reuse */
} dist_values;

/* The overlap (dist_overlap.c): the interior's stage computed while the ghosts' values travel. */
typedef struct dist_overlap {
    bool off;                  /* pbfcl_dist_set_overlap(d, false) */
    bool made;                 /* regions is made */
    pbfcl_regions regions;     /* the lists by region, made after each sort */
    size_t boundary, interior; /* their counts after the last sort */
} dist_overlap;

struct pbfcl_dist {
    MPI_Comm comm;
    int rank, size;
    pbfcl_sim *sim;
    pbfcl_dist_layout layout;
    float halo;          /* ghosts: particles within this of a slab (h and a rounding margin) */
    size_t n_global;     /* particles of the whole simulation (ids 0..n_global - 1) */
    size_t record;       /* bytes of a particle's record (pbfcl_sim_record_bytes) */
    dist_list send;      /* owned particles that are other ranks' ghosts, by destination */
    dist_list ghost;     /* this rank's ghosts, by owner */
    dist_list migrants;  /* the owned particles leaving the slab, by destination */
    size_t owned;        /* the particles before the ghosts were appended (the search's) */
    pbfcl_exchange xchg; /* the classification and the slots on the device */
    cl_mem send_slots_buf, ghost_slots_buf; /* the lists' slots after the sort, on the device */
    cl_mem packed_buf;                      /* the values sent or received, packed */
    size_t send_slots_cap, ghost_slots_cap, packed_cap; /* bytes */
    pbfcl_pinned records, received;                     /* sent and received */
    int *counts, *displs, *rcounts, *rdispls;           /* scratch of the messages, per rank */
    MPI_Request *requests; /* a receive and a send per rank in flight (2 x size) */
    MPI_Message *probed;   /* the records' messages matched by MPI_Mprobe, per rank */
    pbfcl_dist_traffic traffic;
    int part;          /* the part of traffic.part_seconds the time now goes to */
    double part_since; /* since when */
    dist_rows rows;
    cl_mem none_buf;            /* rows of "no shape" for the ghosts' contacts (dist_shapes.c) */
    size_t none_cap;            /* bytes */
    pbfcl_dist_balance balance; /* rebalancing (dist_balance.c) */
    int balance_wait;           /* frames before a refused rebalancing is tried again */
    dist_values values;         /* the exchange of values in progress */
    dist_overlap overlap;
    cl_mem here_buf;      /* bodies: uint per id, its slot here (dist_bodies.c) */
    float *body_sums;     /* bodies: every rank's share of their sums */
    size_t body_sums_cap; /* floats */
};

/* A rank's part with no simulation yet, of n particles in all (NULL: out of memory). */
pbfcl_dist *dist_alloc(MPI_Comm comm, size_t n);

/* The layout (copied) and the arrays sized by it and by the particle count. */
pbfcl_status dist_setup_layout(pbfcl_dist *d, const pbfcl_dist_layout *layout);

/* After the simulation is made: the copies' buffers, the halo, the record, the sync hook. */
pbfcl_status dist_finish_local(pbfcl_dist *d);

/* Every rank's verdict on its creation st: all go on (*out = d), or d is destroyed on every
 * rank and the status returned (PBFCL_ERR_SIMULATION where another rank failed). */
pbfcl_status dist_agree(pbfcl_dist **out, pbfcl_dist *d, pbfcl_status st);

/* From now on the time goes to part (pbfcl_dist_part); returns the part it went to. */
int dist_part(pbfcl_dist *d, int part);

/* Reads the records (pbfcl_sim_record_bytes each) of the particles at slots into out. */
pbfcl_status dist_records_read(pbfcl_dist *d, const unsigned *slots, size_t k, void *out);

/* The device exchange's bounds of the layout and halo (3 * ranks floats: own_lo, ghost_lo,
 * ghost_hi; pbfcl_exchange_create), made exact in float for the host's tests in double. */
void dist_device_bounds(const pbfcl_dist *d, float *b);

/* Before a frame: plans the cuts anew if the ranks' counts drifted past the threshold
 * (dist_balance.c); the frame's first migration moves the particles to their new owners. */
pbfcl_status dist_rebalance_due(pbfcl_dist *d);

/* The rank whose slab holds coordinate c. */
int dist_owner(const pbfcl_dist *d, float c);

/* The sync callback the core calls (sim.h): migration and ghosts at PBFCL_SYNC_SEARCH, slots
 * at PBFCL_SYNC_SORTED, the ghosts' values at the others (dist_exchange.c). */
pbfcl_status dist_sync(void *ctx, pbfcl_sim *sim, pbfcl_sim_sync_point point, const cl_mem *bufs,
                       const size_t *elem, int count);

/* The ghosts' values (dist_exchange.c): begin posts the receives, gathers and reads the rows
 * sent and starts the sends of bufs[0..count-1] (elem[b] bytes a particle each); end waits for
 * the messages and writes and scatters the rows received to the ghosts' slots, then with
 * finish waits for the device, else leaves the write in flight (d->values.written). */
pbfcl_status dist_values_begin(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem, int count);
pbfcl_status dist_values_end(pbfcl_dist *d, bool finish);

/* Marks every region of the grid moved (collide then reads the whole lists: the moved flags
 * know nothing of how far the ghosts' owners moved them). */
pbfcl_status dist_mark_all_moved(pbfcl_dist *d);

/* The overlap (dist_overlap.c): whether point's exchange is split in two (the values points
 * and PBFCL_SYNC_WAIT, with the overlap on); after the sort, the lists by region; at a values
 * point, the exchange begun and left in flight while the next stage runs over the interior,
 * and at PBFCL_SYNC_WAIT its end. */
bool dist_overlap_point(const pbfcl_dist *d, pbfcl_sim_sync_point point);
pbfcl_status dist_overlap_sorted(pbfcl_dist *d);
pbfcl_status dist_overlap_sync(pbfcl_dist *d, pbfcl_sim_sync_point point, const cl_mem *bufs,
                               const size_t *elem, int count);
void dist_overlap_release(pbfcl_dist *d);

/* Removes the ghosts, leaving the owned particles (between frames). */
pbfcl_status dist_drop_ghosts(pbfcl_dist *d);

/* Bodies (dist_bodies.c): the scene's bodies on this rank's simulation (every entry, the
 * particles it holds given their phases and velocities) and, split over ranks, their sums
 * combined over the ranks; none without bodies. positions: the scene's fill, by id. */
pbfcl_status dist_bodies_create(pbfcl_dist *d, const pbfcl_scene *scene, const float *positions);

/* Which particles this rank holds and which of them it owns (slots below owned, in the order
 * before the search's sort), for the bodies' stages: after the ghosts are made and after
 * they are dropped. */
pbfcl_status dist_bodies_mark(pbfcl_dist *d, size_t owned);
void dist_bodies_release(pbfcl_dist *d);

/* Releases a list's slots (its counts and displs are the creator's). */
void dist_list_free(dist_list *l);

/* The device exchange's bounds of the layout and halo (pbfcl_exchange_create), and the device
 * part itself (after the simulation). */
pbfcl_status dist_exchange_create(pbfcl_dist *d);
void dist_exchange_release(pbfcl_dist *d);

/* The collision shapes (dist_shapes.c): the scene's added to this rank's simulation; at
 * PBFCL_SYNC_SHAPES the ghosts' contacts and inside flags set to none, so that each rank's force
 * on a shape counts its own particles alone; the buffer of those rows released. */
pbfcl_status dist_shapes_add(pbfcl_dist *d, const pbfcl_scene *scene);
pbfcl_status dist_shapes_clear_ghosts(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem,
                                      int count);
void dist_shapes_release(pbfcl_dist *d);

/* The multilevel coarse correction (dist_multilevel.c): at PBFCL_SYNC_ML_GHOSTS the ghosts'
 * flags (1 a ghost, 0 owned: uchar a particle) into bufs[0], so that the gather counts each
 * particle on its owner alone; at PBFCL_SYNC_ML_SUMS the finest grid's sums, counts and (with
 * shapes) touch words (elem: each buffer's bytes) added over the ranks. */
pbfcl_status dist_ml_ghosts(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem, int count);
pbfcl_status dist_ml_sums(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem, int count);

/* The SPH method (dist_sph.c): its largest acceleration of the last frame, which chooses the
 * next frame's steps, made the largest of every rank's, so that every rank takes the same
 * steps; nothing for PBF. */
pbfcl_status dist_sph_bounds(pbfcl_dist *d);

#endif
