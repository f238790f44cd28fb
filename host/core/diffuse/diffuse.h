/* Diffuse particles: spray, foam and bubbles generated from the fluid's state after each step
 * (Ihmsen et al., CGI 2012; cl/diffuse/diffuse.cl). One-way: the fluid never feels them. The stage
 * "diffuse" runs its four kernels once per frame: normals, potentials, advect, compact (an
 * exclusive scan of the survivors and emission counts places everything in a fixed
 * capacity; what does not fit is dropped and counted). */
#ifndef PBFCL_DIFFUSE_MODULE_H
#define PBFCL_DIFFUSE_MODULE_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "grid/grid.h"
#include "grid/scan.h"
#include "scene/scene.h"

#include <math.h> /* diffuse.h's Phi uses fmin */
#include <stdbool.h>

#include "../../../cl/diffuse/diffuse.h"

/* The fluid state a diffuse update reads: the step's sorted particles, their neighbour lists
 * (within h) and the grid's cell ranges. */
typedef struct pbfcl_diffuse_fluid {
    size_t n;
    cl_mem pos_buf, vel_buf;                 /* float4, sorted order */
    cl_mem neighbor_count_buf, neighbor_buf; /* lists [k * n + i] */
    cl_mem grid_params_buf;                  /* pbfcl_grid_params */
    cl_mem cell_start_buf, cell_end_buf;     /* per Morton cell */
} pbfcl_diffuse_fluid;

/* The diffuse particles of one solver, their kernels and scratch. */
typedef struct pbfcl_diffuse {
    pbfcl_cl *cl;
    cl_program program;
    cl_kernel normals, potentials, advect, compact;
    pbfcl_scan scan;
    size_t wg;
    size_t capacity;              /* diffuse particles */
    size_t fluid_capacity;        /* fluid particles the scratch holds */
    size_t count;                 /* diffuse particles now */
    unsigned long long dropped;   /* emissions that did not fit, since creation */
    pbfcl_diffuse_params params;  /* of the next kernel (set by the caller) */
    pbfcl_diffuse_params written; /* what params_buf holds or is being written from */
    cl_event written_event;       /* that write, until it is known to be done; or NULL */
    bool written_valid;           /* params_buf holds `written` */
    cl_mem params_buf;
    cl_mem pos_buf[2], vel_buf[2]; /* [cur]: the particles; the other: compact's target */
    int cur;
    cl_mem normal_buf, potential_buf; /* per fluid particle, float4 */
    cl_mem flags_buf, offset_buf;     /* capacity + fluid_capacity uints */
    cl_mem total_buf;                 /* 1 uint */
} pbfcl_diffuse;

/* The build options of the diffuse kernels on a device (`pbfcl-dev kernel-builds`). */
void pbfcl_diffuse_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg);

/* Device bytes of a diffuse set of capacity particles beside fluid_capacity fluid ones. */
unsigned long long pbfcl_diffuse_bytes_needed(size_t capacity, size_t fluid_capacity);

/* Builds the kernels and buffers; no diffuse particles at first. capacity >= 1. */
pbfcl_status pbfcl_diffuse_create(pbfcl_diffuse *d, pbfcl_cl *cl, size_t capacity,
                                  size_t fluid_capacity);

/* Releases everything; accepts NULL and a zeroed or half-built struct. */
void pbfcl_diffuse_destroy(pbfcl_diffuse *d);

/* The constants of an update of frame time dt under gravity g from the scene's solver
 * parameters (box, h, r, thresholds, rates); frame seeds the random numbers. */
void pbfcl_diffuse_params_from_scene(const pbfcl_scene *scene, float dt, const float g[3],
                                     unsigned frame, size_t capacity, pbfcl_diffuse_params *out);

/* The four kernels of the stage, each its own call (the tests run them one by one); each
 * writes d->params to the device first. normals and potentials: over the fluid particles;
 * potentials writes the emission counts after the current count's keep flags. advect: over
 * the diffuse particles. compact: the scan, the compaction and emission, the total read back;
 * then count, dropped and the buffers are updated. */
pbfcl_status pbfcl_diffuse_normals(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                   pbfcl_profile *prof);
pbfcl_status pbfcl_diffuse_potentials(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                      pbfcl_profile *prof);
pbfcl_status pbfcl_diffuse_advect(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                  pbfcl_profile *prof);
pbfcl_status pbfcl_diffuse_compact(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                   pbfcl_profile *prof);

/* The stage: the four in order, with d->params as set. */
pbfcl_status pbfcl_diffuse_update(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                  pbfcl_profile *prof);

/* Replaces the diffuse particles with count of them (float4 x, y, z, type + life share and
 * float4 v, life): for tests and restarts. */
pbfcl_status pbfcl_diffuse_write(pbfcl_diffuse *d, const float *pos4, const float *vel4,
                                 size_t count);

/* Reads the d->count diffuse particles (either pointer may be NULL). */
pbfcl_status pbfcl_diffuse_read(pbfcl_diffuse *d, float *pos4, float *vel4);

/* Reads the normals and potentials (v_diff, kappa, E, n_d) of the last update's n fluid
 * particles, and the flags of count + n entries (either pointer may be NULL). */
pbfcl_status pbfcl_diffuse_read_fluid(pbfcl_diffuse *d, size_t n, float *normal4,
                                      float *potential4);
pbfcl_status pbfcl_diffuse_read_flags(pbfcl_diffuse *d, size_t entries, unsigned *flags);

#endif
