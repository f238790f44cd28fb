/* The one place kernel build options are made: every compile-time constant a kernel
 * needs goes in as a -D value from this struct; kernels #error when one is missing. */
#ifndef PBFCL_BUILD_OPTIONS_H
#define PBFCL_BUILD_OPTIONS_H

#include <stddef.h>

typedef struct pbfcl_build_config {
    unsigned wg_size;       /* WG_SIZE: work-group size of the kernels, from device queries */
    unsigned radix_bits;    /* RADIX_BITS: bits sorted per radix sort pass */
    unsigned sort_items;    /* SORT_ITEMS: keys per work-item in the radix sort tiles */
    unsigned grid_bits;     /* GRID_BITS: log2(cells per axis) of the Morton grid */
    unsigned max_neighbors; /* MAX_NEIGHBORS: neighbour list capacity per particle */
    unsigned log_num_banks; /* LOG_NUM_BANKS: local-memory bank padding of the scan */
    unsigned nb_wg_size;    /* NB_WG_SIZE: work-group size of the neighbour search */
} pbfcl_build_config;

/* Fills buf with "-cl-std=CL1.2 -DWG_SIZE=... ..." from cfg. Returns the length written
 * or -1 if buf is too small. */
int pbfcl_build_options(const pbfcl_build_config *cfg, char *buf, size_t size);

#endif
