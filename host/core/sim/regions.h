/* The lists by region of a simulation split over devices, for its overlap (cl/sim/regions.cl,
 * docs/DISTRIBUTED.md, "Overlap"): after the neighbour search, the owned particles that list a
 * ghost among their neighbours (the boundary: their stages wait for the ghosts' values) and
 * those that list none (the interior: their stages may run while the values travel), both on
 * the device in one buffer of slots. */
#ifndef PBFCL_REGIONS_H
#define PBFCL_REGIONS_H

#include "grid/scan.h"
#include "runtime/clrt.h"

typedef struct pbfcl_regions {
    pbfcl_cl *cl;
    cl_program program; /* the exchange's (cl/sim/exchange.cl and regions.cl) */
    cl_kernel flags, lists;
    size_t wg, capacity;
    pbfcl_scan scan;   /* of 2 * capacity + 1 entries */
    cl_mem slots_buf;  /* capacity uints: the boundary's slots, then the interior's */
    cl_uint counts[2]; /* the scan at n and 2n, read */
} pbfcl_regions;

/* Builds the kernels (with the exchange's program) and the slot list for up to capacity
 * particles. */
pbfcl_status pbfcl_regions_create(pbfcl_regions *r, pbfcl_cl *cl, size_t capacity);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_regions_destroy(pbfcl_regions *r);

/* The lists of n particles (ghost_buf: a uchar per slot, non-zero for a ghost; the search's
 * neighbour lists, entry k of particle i at k * n + i, of which the kernels read the first
 * max_neighbors) into r->slots_buf: *boundary slots from 0, then *interior slots; scratch_buf
 * holds at least 2n + 1 uints. Blocks until the two counts are read. */
pbfcl_status pbfcl_regions_make(pbfcl_regions *r, cl_mem ghost_buf, cl_mem neighbor_count_buf,
                                cl_mem neighbor_buf, size_t n, size_t max_neighbors,
                                cl_mem scratch_buf, size_t *boundary, size_t *interior);

#endif
