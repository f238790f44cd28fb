/* The device side of a simulation split over slabs along one axis (cl/sim/exchange.cl), for the
 * layer above that splits it (host/dist/, docs/DISTRIBUTED.md): each slot's fate from its x*
 * (stays, migrates to a rank, is a ghost for other ranks), compacted by a scan into short
 * lists that alone are read to the host, the keep list left on the device for
 * pbfcl_sim_compact_device; after the sort, the new slots of listed particles and the ghosts'
 * flags in the new order; and pinned host staging for the transfers that remain. The host's
 * work and the bus traffic are those of the boundary, not of every particle. */
#ifndef PBFCL_EXCHANGE_H
#define PBFCL_EXCHANGE_H

#include "grid/scan.h"
#include "runtime/build_options.h"
#include "runtime/clrt.h"

/* What pbfcl_exchange_classify lists (cl/sim/exchange.cl's EXCHANGE_*). */
typedef enum pbfcl_exchange_mode {
    PBFCL_EXCHANGE_MIGRATE, /* sent: owned particles of another rank's slab, with that rank;
                             * kept: the other owned ones (the ghosts are neither) */
    PBFCL_EXCHANGE_GHOSTS,  /* sent: particles within the halo of another rank's slab, with
                             * PBFCL_EXCHANGE_FIRST/LAST of the ranks whose halo holds them */
    PBFCL_EXCHANGE_DROP     /* kept: the particles that are not ghosts */
} pbfcl_exchange_mode;

/* A ghost list entry's range of ranks (the own rank may be in it: it is no destination). */
#define PBFCL_EXCHANGE_FIRST(fate) ((fate) >> 16)
#define PBFCL_EXCHANGE_LAST(fate) ((fate)&0xffffu)
/* The most ranks the fates can name. */
#define PBFCL_EXCHANGE_MAX_RANKS 65535

/* Host memory the device reads and writes fast (CL_MEM_ALLOC_HOST_PTR, mapped once; pageable
 * memory costs NVIDIA's OpenCL a copy through its own staging), grown as needed, never shrunk. */
typedef struct pbfcl_pinned {
    cl_mem buf;
    void *ptr;
    size_t cap;
} pbfcl_pinned;

/* Makes p hold at least bytes (its contents are lost when it grows); p->ptr is valid until the
 * next call or the release. */
pbfcl_status pbfcl_pinned_reserve(pbfcl_cl *cl, pbfcl_pinned *p, size_t bytes);

/* Unmaps and releases; accepts a zeroed struct. */
void pbfcl_pinned_release(pbfcl_cl *cl, pbfcl_pinned *p);

typedef struct pbfcl_exchange {
    pbfcl_cl *cl;
    cl_program program;
    cl_kernel classify, lists, sorted, slots, pick, extent, histogram;
    size_t wg;       /* work-group size of every kernel */
    size_t capacity; /* particles */
    int axis, rank, ranks;
    pbfcl_scan scan;
    cl_mem bounds_buf; /* 3 * ranks floats: own_lo, ghost_lo, ghost_hi (cl/sim/exchange.cl) */
    cl_mem fate_buf;   /* uint per slot: its fate; after the sort, where each old slot went */
    cl_mem flags_buf;  /* 2 * capacity + 1 uints: the fates' flags, then their exclusive scan */
    cl_mem keep_buf;   /* uint per kept particle: the keep list (slots, ascending) */
    cl_mem ghost_buf;  /* uchar per slot: it holds a ghost (valid while ghosts_valid) */
    int ghosts_valid;  /* ghost_buf holds the current order's flags (pbfcl_exchange_sorted) */
    cl_mem list_buf;   /* the short lists: (slot, fate) per entry */
    cl_mem old_buf;    /* old slots uploaded for pbfcl_exchange_slots */
    size_t list_cap, old_cap;      /* bytes */
    pbfcl_pinned host;             /* the lists read and the slots written and read */
    cl_mem extent_buf;             /* 2 floats per work-group of exchange_extent */
    cl_mem counts_buf;             /* the histogram's bins */
    size_t extent_cap, counts_cap; /* bytes */
    size_t groups;                 /* work-groups striding over the particles (histogram) */
    size_t tile; /* bins a work-group counts in local memory (from the device; a test may set
                  * fewer before a call) */
} pbfcl_exchange;

/* The build options of cl/sim/exchange.cl on a device with these limits (`kernel-builds`). */
void pbfcl_exchange_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg);

/* Builds the kernels and allocates the per-slot buffers for up to capacity particles of a
 * split along axis (0, 1, 2) over ranks (at most PBFCL_EXCHANGE_MAX_RANKS), this one rank;
 * bounds: 3 * ranks floats, own_lo[r] (rank r's slab holds c from own_lo[r] on), ghost_lo[r]
 * and ghost_hi[r] (it holds ghosts of c in [ghost_lo[r], ghost_hi[r])), each non-decreasing
 * in r. */
pbfcl_status pbfcl_exchange_create(pbfcl_exchange *x, pbfcl_cl *cl, size_t capacity, int axis,
                                   int rank, int ranks, const float *bounds);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_exchange_destroy(pbfcl_exchange *x);

/* Classifies the n particles at x* pred_buf (float4) by mode; the ghosts are the slots
 * ghost_buf flags if ghosts_valid, else none. *sent entries (slot, fate) in slot order at
 * *list (pinned host memory, valid until the next call); *kept slots in order in keep_buf
 * (not in mode ghosts). Blocks until the list is read. */
pbfcl_status pbfcl_exchange_classify(pbfcl_exchange *x, cl_mem pred_buf, size_t n,
                                     pbfcl_exchange_mode mode, size_t *sent, size_t *kept,
                                     const cl_uint **list);

/* After a sort of n particles whose gather map is index_buf (the grid's index_buf: new slot j
 * held old slot index[j]), of which the old slots from owned on were ghosts: enqueues where
 * every old slot went and the ghosts' flags in the new order (ghosts_valid from then). */
pbfcl_status pbfcl_exchange_sorted(pbfcl_exchange *x, cl_mem index_buf, size_t n, size_t owned);

/* The new slots (after the last pbfcl_exchange_sorted) of old[0..listed) and of the old slots
 * base .. base + count - listed - 1, in that order, into out_buf[0..count) (at least count
 * uints), and into out[0..count) if not NULL (then blocking; else enqueued, and old is copied
 * before the call returns). */
pbfcl_status pbfcl_exchange_slots(pbfcl_exchange *x, const cl_uint *old, size_t listed,
                                  size_t count, size_t base, cl_mem out_buf, cl_uint *out);

/* Enqueues out[k] = src[keep[k]] for k < m, 4-byte rows, keep the last keep list. */
pbfcl_status pbfcl_exchange_pick(pbfcl_exchange *x, cl_mem src_buf, size_t m, cl_mem out_buf);

/* The rebalancing's histogram on the device (exchange_histogram.c): the smallest and largest
 * coordinate along the split axis of the n particles at pos_buf (float4; NaN passed over; n 0:
 * +inf and -inf). Blocks until read. */
pbfcl_status pbfcl_exchange_extent(pbfcl_exchange *x, cl_mem pos_buf, size_t n, float *lo,
                                   float *hi);

/* counts[b] (bins entries, 1 to 2^24) = how many of the n particles have bin b = floor((c -
 * lo) * scale) of their coordinate c along the split axis, in float, clamped to [0, bins - 1]
 * (NaN: 0). Only the bins are read to the host; blocks until read. */
pbfcl_status pbfcl_exchange_histogram(pbfcl_exchange *x, cl_mem pos_buf, size_t n, float lo,
                                      float scale, size_t bins, cl_uint *counts);

#endif
