/* A simulation split over several devices and machines through MPI (docs/DISTRIBUTED.md): one
 * rank per device, each owning the particles of its slab of the box along one axis, with
 * copies (ghosts) of the other ranks' particles within the kernel radius h of its slab. A
 * layer above the single-device simulation: the core's hooks (sim.h, "a simulation split over
 * several devices") call it where a substep reads its neighbours' values; the core includes
 * nothing of it. Every function is collective over the communicator unless it says otherwise. */
#ifndef PBFCL_DIST_H
#define PBFCL_DIST_H

#include "runtime/clrt.h"
#include "scene/scene.h"
#include "sim/sim.h"

#include <mpi.h>

typedef struct pbfcl_dist pbfcl_dist;

/* The decomposition: slab r of ranks holds the particles with cuts[r] <= x[axis] < cuts[r+1]
 * (cuts[0] = -inf and cuts[ranks] = +inf in effect: the outer slabs reach the walls). */
typedef struct pbfcl_dist_layout {
    int axis;
    int ranks;
    double *cuts; /* ranks + 1 */
} pbfcl_dist_layout;

/* Plans slabs along the box's longest axis with equal shares of the n particles at positions
 * (xyz triples, the same on every rank; not collective). Refuses (PBFCL_ERR_BAD_ARGUMENT,
 * saying what to change) a split whose inner slab is thinner than the kernel radius h, since
 * its ghosts would then come from beyond its neighbours. layout->cuts is malloc'd. */
pbfcl_status pbfcl_dist_plan(const pbfcl_scene *scene, float h, const float *positions, size_t n,
                             int ranks, pbfcl_dist_layout *layout);

/* Checks a layout (cuts ascending, inner slabs at least h wide; not collective). */
pbfcl_status pbfcl_dist_check_layout(const pbfcl_dist_layout *layout, float h);

/* Refuses (PBFCL_ERR_BAD_ARGUMENT, saying what to do) a scene a split simulation cannot run
 * yet: obstacles, colliders, the SPH method (not collective). */
pbfcl_status pbfcl_dist_check_scene(const pbfcl_scene *scene);

/* Creates this rank's part of a simulation of scene (fluid and bodies, PBF) of the n particles at
 * positions (the same on every rank; particle k has id k) on cl's device, with room for
 * capacity particles on this rank (owned and ghosts; 0: n; refused, saying what to give, below
 * its slab's particles). */
pbfcl_status pbfcl_dist_create(pbfcl_dist **out, MPI_Comm comm, pbfcl_cl *cl,
                               const pbfcl_scene *scene, const pbfcl_dist_layout *layout,
                               const float *positions, size_t n, size_t capacity);

/* After a frame at time (s): the particles scene's emitters owe since emitted[e] (each
 * emitter's count so far, updated), the same on every rank, with the next global ids, kept by
 * the rank whose slab holds them; *added their number (dist_flow.c). Collective: the ranks'
 * counts are checked to sum to the whole. */
pbfcl_status pbfcl_dist_emit(pbfcl_dist *d, const pbfcl_scene *scene, long long *emitted,
                             double time, size_t *added);

/* After a frame: removes the fluid particles in scene's drains, on the ranks that own them, and
 * renumbers the ids left as one device's solver does (each id less the removed ids below it),
 * the same on every rank; their ids before, ascending, into removed_ids (room for every
 * particle; NULL: not wanted) and their number into *removed (dist_flow.c). Collective. */
pbfcl_status pbfcl_dist_drain(pbfcl_dist *d, const pbfcl_scene *scene, size_t *removed_ids,
                              size_t *removed);

/* Releases this rank's part (not collective); accepts NULL. */
void pbfcl_dist_destroy(pbfcl_dist *d);

/* Advances one frame on every rank (the substep count from the fastest particle of all),
 * recording this rank's kernels in prof if not NULL (its events, as pbfcl_sim_step's). A
 * failure on this rank ends every rank (pbfcl_dist_abort): the others wait in an exchange. */
pbfcl_status pbfcl_dist_step(pbfcl_dist *d, pbfcl_profile *prof);

/* The density of the current positions (frame 0's), as pbfcl_sim_compute_density; a failure
 * ends every rank, as in pbfcl_dist_step. */
pbfcl_status pbfcl_dist_compute_density(pbfcl_dist *d);

/* The statistics of the whole simulation (every rank gets them). A rank that cannot compute
 * its own ends every rank, as in pbfcl_dist_step; so does one that cannot read its particles
 * in pbfcl_dist_gather. */
pbfcl_status pbfcl_dist_stats(pbfcl_dist *d, pbfcl_stats *out);

/* Collective: collision shape id's contacts in the last substep summed over every rank (each
 * counts its own particles): the force on it (N), the particles its contacts moved and those
 * found inside it (as pbfcl_shape_contacts on one device); any pointer may be NULL. */
pbfcl_status pbfcl_dist_shape_contacts(pbfcl_dist *d, int id, float force[3], unsigned *contacts,
                                       unsigned *inside);

/* Gathers every particle on rank 0 by id: pos3, vel3 (xyz triples), density (n entries each;
 * any may be NULL; read only on rank 0). Fails, naming the id, if an id is held by no rank or
 * by two: no particle is ever lost or duplicated. */
pbfcl_status pbfcl_dist_gather(pbfcl_dist *d, float *pos3, float *vel3, float *density);

/* This rank's simulation (its owned particles between frames; not collective). */
pbfcl_sim *pbfcl_dist_sim(pbfcl_dist *d);

/* The particles this rank owns, and all of them (not collective). */
size_t pbfcl_dist_owned(const pbfcl_dist *d);
size_t pbfcl_dist_total(const pbfcl_dist *d);

/* The parts of an exchange's wall time (pbfcl_dist_traffic.part_seconds): the host's work,
 * the transfers and the device work it waits for, then MPI. Name, and what it holds. */
#define PBFCL_DIST_PARTS(X)                                                                        \
    X(CLASSIFY, "classify", "which particles migrate and which are ghosts: reads and lists")       \
    X(COMPACT, "compact", "the migrants and the ghosts removed (compaction)")                      \
    X(RECORDS, "records", "the records of those sent gathered and read")                           \
    X(APPEND, "append", "the records received appended")                                           \
    X(SLOTS, "slots", "the slots of the exchanged particles after the sort, the lists by region")  \
    X(VALUES, "values", "the values sent to the ghosts gathered, read, written, scattered")        \
    X(MPI, "mpi", "MPI calls: messages and waiting for the other ranks")                           \
    X(OTHER, "other", "the rest (bookkeeping)")

typedef enum pbfcl_dist_part {
#define PBFCL_DIST_PART_ENUM(id, name, what) PBFCL_DIST_PART_##id,
    PBFCL_DIST_PARTS(PBFCL_DIST_PART_ENUM)
#undef PBFCL_DIST_PART_ENUM
        PBFCL_DIST_PART_COUNT
} pbfcl_dist_part;

/* A part's short name ("classify", ...) and what it holds; NULL past the last. */
const char *pbfcl_dist_part_name(int part);
const char *pbfcl_dist_part_what(int part);

/* What this rank's exchanges cost since its creation (not collective). */
typedef struct pbfcl_dist_traffic {
    double seconds;     /* wall time in the core's sync hooks and in the removal of the
                         * ghosts after each frame: copies, messages, waiting */
    double mpi_seconds; /* of it in MPI calls: messages and waiting for the other ranks */
    double part_seconds[PBFCL_DIST_PART_COUNT]; /* seconds by part (they sum to seconds) */
    unsigned long long bytes;                   /* sent to other ranks */
    unsigned long long bus_bytes; /* moved between this rank's device and host, both ways */
    unsigned long long syncs;     /* hook calls */
    unsigned long long messages;  /* MPI messages sent to other ranks (each collective's
                                   * counted as one to each other rank) */
    unsigned long long ghosts;    /* ghosts received, summed over the substeps */
    unsigned long long substeps;
    unsigned long long overlapped;         /* exchanges left in flight while the interior ran */
    unsigned long long interior, boundary; /* the lists by region, summed over the substeps */
} pbfcl_dist_traffic;

const pbfcl_dist_traffic *pbfcl_dist_traffic_of(const pbfcl_dist *d);

/* Rebalancing (docs/DISTRIBUTED.md, "Rebalancing"): before a frame, when the most particles a
 * rank owns exceeds threshold times the mean (n / ranks), the cuts are planned anew at the
 * quantiles of a histogram of every rank's coordinates along the split axis (reduced with
 * MPI_Allreduce) and the frame's first migration sends every particle whose owner changed to
 * its new rank, ids and all. A plan that would give a rank more particles and ghosts than its
 * room (--rank-capacity) is refused with a warning and the slabs kept (tried again 10 frames
 * later). */
#define PBFCL_DIST_REBALANCE_MIN 1.05 /* thresholds: 0 (off) or in [MIN, MAX] */
#define PBFCL_DIST_REBALANCE_MAX 16.0

typedef struct pbfcl_dist_balance {
    double threshold;               /* 0: off */
    unsigned long long checks;      /* frames whose counts were compared with it */
    unsigned long long rebalances;  /* plans made */
    unsigned long long refusals;    /* plans refused for want of room */
    unsigned long long before_max;  /* the last plan's: most owned by a rank before it */
    unsigned long long planned_max; /* the most a rank owns under its cuts (the histogram's) */
    unsigned long long frame;       /* frames stepped (the last plan's is last_frame) */
    unsigned long long last_frame;
} pbfcl_dist_balance;

/* The overlap (docs/DISTRIBUTED.md, "Overlap"; on by default): lambda, delta and collide run
 * over the owned particles without a ghost among their neighbours while the exchange before
 * them travels, then over the rest; the same frames to the byte. Off: each exchange completes
 * before the stage after it runs (the same on every rank; not collective). */
void pbfcl_dist_set_overlap(pbfcl_dist *d, bool on);
bool pbfcl_dist_overlap(const pbfcl_dist *d);

/* --overlap's value (run and bench): "on" or "off" into *off; false (message printed) else. */
bool pbfcl_dist_parse_overlap(const char *val, bool *off);

/* Sets the threshold (the same on every rank; not collective): 0 turns rebalancing off (the
 * default); outside [PBFCL_DIST_REBALANCE_MIN, MAX] is refused (PBFCL_ERR_BAD_ARGUMENT). */
pbfcl_status pbfcl_dist_set_rebalance(pbfcl_dist *d, double threshold);

/* What rebalancing did (not collective). */
const pbfcl_dist_balance *pbfcl_dist_balance_of(const pbfcl_dist *d);

/* The slabs (not collective). */
const pbfcl_dist_layout *pbfcl_dist_layout_of(const pbfcl_dist *d);

/* The whole simulation's saved state, gathered on rank 0 (its fields empty elsewhere): every
 * particle's record (pbfcl_sim_record_bytes each) in id order, and the bounds the next frame's
 * substep count is chosen from, their maxima over the ranks. */
typedef struct pbfcl_dist_state {
    size_t n;
    unsigned char *records;
    float bounds[3];
} pbfcl_dist_state;

/* Gathers the state on rank 0 (collective, between frames). Fails on every rank, naming the id,
 * if an id is held by no rank or by two; a rank that cannot read its particles ends every rank
 * (pbfcl_dist_abort). */
pbfcl_status pbfcl_dist_state_gather(pbfcl_dist *d, pbfcl_dist_state *s);

/* On rank 0: writes through put the sections pbfcl_sim_state_save writes for one simulation
 * holding every particle of s in id order: a state one device loads (not collective). */
pbfcl_status pbfcl_dist_state_save(pbfcl_dist *d, const pbfcl_dist_state *s, pbfcl_state_put put,
                                   void *ctx);

/* Releases a gathered state; accepts an empty one. */
void pbfcl_dist_state_free(pbfcl_dist_state *s);

/* Creates this rank's part of a simulation of scene from a saved state of n particles (the
 * sections of pbfcl_sim_state_save through get, the same on every rank, whatever rank count
 * saved it): each rank loads the whole state, plans slabs over the communicator's ranks from
 * its positions (pbfcl_dist_plan) and keeps its slab's particles. */
pbfcl_status pbfcl_dist_create_loaded(pbfcl_dist **out, MPI_Comm comm, pbfcl_cl *cl,
                                      const pbfcl_scene *scene, size_t n, pbfcl_state_get get,
                                      void *ctx);

/* Ends every rank after a failure on this one: prints "pbfcl: rank R of K failed: what" on
 * stderr and aborts the communicator with exit status code (MPI_Abort; never returns). */
_Noreturn void pbfcl_dist_abort(MPI_Comm comm, int code, const char *what);

#endif
