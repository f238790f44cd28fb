/* Work-efficient exclusive prefix sum of uint arrays of any length (seed 002):
 * per-work-group up-sweep/down-sweep scans in padded local memory, a scan of the group
 * sums, and an add-back. */
#ifndef PBFCL_SCAN_H
#define PBFCL_SCAN_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"

typedef struct pbfcl_scan {
    pbfcl_cl *cl;
    cl_program program;
    cl_kernel scan_groups;    /* per-group exclusive scans, writes group sums */
    cl_kernel add_group_sums; /* adds the scanned group sums back */
    size_t wg;                /* work-items per group (each scans 2 * wg elements) */
    size_t capacity;          /* largest n accepted */
    int levels;               /* number of group-sum levels allocated */
    cl_mem sums_buf[8];       /* group sums per level */
} pbfcl_scan;

/* The build options pbfcl_scan_create starts from on a device with these limits (max_wg,
 * local_mem); `pbfcl kernel-builds` lists them. */
void pbfcl_scan_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg);

/* Builds the scan kernels and allocates group-sum buffers for arrays of up to capacity. */
pbfcl_status pbfcl_scan_create(pbfcl_scan *s, pbfcl_cl *cl, size_t capacity);

/* Like pbfcl_scan_create with the work-group size at most wg_limit (tests use small ones to
 * reach several levels at small sizes). */
pbfcl_status pbfcl_scan_create_wg(pbfcl_scan *s, pbfcl_cl *cl, size_t capacity, size_t wg_limit);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_scan_destroy(pbfcl_scan *s);

/* out[i] = in[0] + ... + in[i-1] for i < n (out may equal in). n == 0 does nothing. */
pbfcl_status pbfcl_scan_exclusive(pbfcl_scan *s, cl_mem in_buf, cl_mem out_buf, size_t n,
                                  pbfcl_profile *prof, pbfcl_stage stage);

#endif
