/* Per-stage timing of a simulation step from OpenCL profiling events. The stage names are
 * the step's stages in seed 001's outline (PBF) and seed 002's (SPH: density, force,
 * integrate); kernels, host wrappers, tests and benchmarks all
 * use them. */
#ifndef PBFCL_PROFILE_H
#define PBFCL_PROFILE_H

#include "runtime/clock.h"

#include <CL/cl.h>

#define PBFCL_STAGES(X)                                                                            \
    X(PBFCL_STAGE_PREDICT, "predict")                                                              \
    X(PBFCL_STAGE_HASH, "hash")                                                                    \
    X(PBFCL_STAGE_SORT, "sort")                                                                    \
    X(PBFCL_STAGE_REORDER, "reorder")                                                              \
    X(PBFCL_STAGE_CELLS, "cells")                                                                  \
    X(PBFCL_STAGE_NEIGHBOURS, "neighbours")                                                        \
    X(PBFCL_STAGE_SOLVE, "solve")                                                                  \
    X(PBFCL_STAGE_VORTICITY_VISCOSITY, "vorticity_viscosity")                                      \
    X(PBFCL_STAGE_DENSITY, "density")                                                              \
    X(PBFCL_STAGE_FORCE, "force")                                                                  \
    X(PBFCL_STAGE_INTEGRATE, "integrate")                                                          \
    X(PBFCL_STAGE_DIFFUSE, "diffuse")                                                              \
    X(PBFCL_STAGE_OTHER, "other")

typedef enum pbfcl_stage {
#define PBFCL_STAGE_ENUM_(id, name) id,
    PBFCL_STAGES(PBFCL_STAGE_ENUM_)
#undef PBFCL_STAGE_ENUM_
        PBFCL_STAGE_COUNT
} pbfcl_stage;

#define PBFCL_PROFILE_MAX_EVENTS 8192 /* a frame of 64 substeps launches ~2000 kernels */
#define PBFCL_PROFILE_MAX_KERNELS 48  /* distinct kernels timed one by one */

/* The device time of one kernel (or "copy" for buffer copies), summed over the collects. */
typedef struct pbfcl_kernel_time {
    cl_kernel kernel; /* NULL: buffer copies */
    char name[48];
    double ms;
    long long launches;
} pbfcl_kernel_time;

/* Events recorded since the last pbfcl_profile_collect, each tagged with its stage and the
 * kernel that made it (NULL for a copy); the per-kernel totals of all collects so far. A
 * frame of more events than the array holds (an SPH frame of hundreds of steps) has its
 * oldest half read into flushed_ms as the array fills, so that every launch is timed. */
typedef struct pbfcl_profile {
    cl_event events[PBFCL_PROFILE_MAX_EVENTS];
    cl_kernel kernel[PBFCL_PROFILE_MAX_EVENTS];
    unsigned char stage[PBFCL_PROFILE_MAX_EVENTS];
    int count;
    int flushed;                          /* events read early since the last collect */
    double flushed_ms[PBFCL_STAGE_COUNT]; /* their device time per stage */
    cl_int flush_error;                   /* the first error of reading them */
    pbfcl_kernel_time kernels[PBFCL_PROFILE_MAX_KERNELS];
    int kernel_count;
} pbfcl_profile;

/* The short name of a stage, e.g. "sort". */
const char *pbfcl_stage_name(pbfcl_stage stage);

/* Records an event of kernel (NULL: a copy) under a stage; the profile takes ownership of the
 * event. */
void pbfcl_profile_add(pbfcl_profile *p, pbfcl_stage stage, cl_event ev, cl_kernel kernel);

/* Waits for the recorded events, adds each one's device time (ms) into ms[stage] (an array
 * of PBFCL_STAGE_COUNT) and into its kernel's total, releases them and empties the profile
 * (the events read early as the array filled included). Returns CL_SUCCESS or the first
 * error. */
cl_int pbfcl_profile_collect(pbfcl_profile *p, double *ms);

/* Releases any recorded events without reading them. */
void pbfcl_profile_discard(pbfcl_profile *p);

#endif
