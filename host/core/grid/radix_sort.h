/* Stable LSD radix sort of (uint key, uint value) pairs, three kernels a pass: per-tile digit
 * histograms, a scan of each digit's row of the histogram table, and a scatter that ranks keys
 * locally. Only the key bits in use are sorted, split evenly over the passes. */
#ifndef PBFCL_RADIX_SORT_H
#define PBFCL_RADIX_SORT_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"

typedef struct pbfcl_radix_sort {
    pbfcl_cl *cl;
    cl_program program;
    cl_kernel histogram;                   /* digit counts per tile */
    cl_kernel scan_rows;                   /* scan of each digit's row, row totals */
    cl_kernel scatter;                     /* stable local rank + write to the scanned offsets */
    size_t wg;                             /* work-items per group */
    size_t tile;                           /* keys per work-group tile */
    unsigned tiles_per_group;              /* tiles per histogram/scatter work-group */
    size_t capacity;                       /* largest n accepted */
    unsigned radix_bits;                   /* bits sorted per pass */
    cl_mem keys_tmp_buf, values_tmp_buf;   /* ping-pong partners of the caller's buffers */
    cl_mem keys_tmp2_buf, values_tmp2_buf; /* a third pair: odd pass counts end in place */
    cl_mem histogram_buf;                  /* RADIX digits x tiles counts, scanned in place */
    cl_mem totals_buf;                     /* RADIX row totals of the table */
} pbfcl_radix_sort;

/* The tuning of the sort kernels: bits per pass, keys per work-item, work-group size. */
typedef struct pbfcl_radix_sort_config {
    unsigned radix_bits;      /* RADIX_BITS: 1..8 bits per pass */
    size_t items;             /* SORT_ITEMS: keys per work-item, a multiple of 4 */
    size_t wg;                /* work-items per group, a power of two >= 16 */
    unsigned tiles_per_group; /* tiles each histogram/scatter work-group takes, 1..64 (0: 1) */
} pbfcl_radix_sort_config;

/* The default configuration for a device (fits its work-group and local memory limits). */
pbfcl_radix_sort_config pbfcl_radix_sort_default_config(const pbfcl_device_info *dev);

/* The build options of configuration c (`pbfcl kernel-builds` lists them). */
void pbfcl_radix_sort_build_config(const pbfcl_radix_sort_config *c, pbfcl_build_config *cfg);

/* Like pbfcl_radix_sort_create with an explicit configuration (checked against the device). */
pbfcl_status pbfcl_radix_sort_create_with(pbfcl_radix_sort *s, pbfcl_cl *cl, size_t capacity,
                                          const pbfcl_radix_sort_config *config);

/* Builds the kernels and allocates temporaries for up to capacity pairs. */
pbfcl_status pbfcl_radix_sort_create(pbfcl_radix_sort *s, pbfcl_cl *cl, size_t capacity);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_radix_sort_destroy(pbfcl_radix_sort *s);

/* Sorts n pairs in place by the low key_bits bits of the keys (1..32), stably. Keys must be
 * below 2^key_bits. n == 0 returns at once. Events go to prof under stage if not NULL. */
pbfcl_status pbfcl_radix_sort_pairs(pbfcl_radix_sort *s, cl_mem keys_buf, cl_mem values_buf,
                                    size_t n, unsigned key_bits, pbfcl_profile *prof,
                                    pbfcl_stage stage);

#endif
