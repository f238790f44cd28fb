/* The interface of a particle method: what the simulation core (sim.c: the particle buffers,
 * the neighbour grid, the frame loop with its adaptive substeps, the API's ids) asks of the
 * method that moves the particles, and what the core gives a method to work on. Position
 * Based Fluids (pbfcl_solver_pbf) and weakly compressible SPH (pbfcl_solver_sph) implement
 * it; solver.method chooses one. */
#ifndef PBFCL_SOLVER_METHOD_H
#define PBFCL_SOLVER_METHOD_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "grid/grid.h"
#include "runtime/profile.h"
#include "scene/scene.h"

typedef struct pbfcl_sim pbfcl_sim;

/* A per-particle buffer a method owns (one row of its table): capacity elements of elem
 * bytes, zeros at first, whose handle lives at offset in the method's state. The core counts
 * them in the byte estimate; pbfcl_sim_method_buffers_make (from create) makes them and
 * pbfcl_sim_method_buffers_release (from destroy) releases them. Not reordered and not saved:
 * the method writes them in a substep before it reads them. */
typedef struct pbfcl_method_buffer {
    const char *name;
    size_t elem;
    size_t offset; /* offsetof(the method's state, the cl_mem) */
} pbfcl_method_buffer;

typedef struct pbfcl_solver_method {
    const char *name; /* e.g. "pbf" */
    /* The build options of the method's kernels on a device (`pbfcl kernel-builds`). */
    void (*build_config)(const pbfcl_device_info *dev, pbfcl_build_config *cfg);
    /* Builds the method's kernels once the common state exists; the core destroys on failure. */
    pbfcl_status (*create)(pbfcl_sim *sim);
    /* Releases what create made; must accept a half-made state. */
    void (*destroy)(pbfcl_sim *sim);
    /* One substep of the method (the outline's stages), events into prof if not NULL. */
    pbfcl_status (*substep)(pbfcl_sim *sim, pbfcl_profile *prof);
    /* The substeps of the next frame (from the last frame's bounds). */
    pbfcl_status (*choose_substeps)(pbfcl_sim *sim, int *out);
    /* The density of the current positions into the densities (sorts, as a step does). */
    pbfcl_status (*compute_density)(pbfcl_sim *sim);
    /* The method's own conditions on a scene and its changes to the constants derived from it
     * (NULL: none); fails naming the setting and a value that works. */
    pbfcl_status (*derive)(const pbfcl_scene *scene, pbfcl_pbf_params *p);
    /* The stages its substep records, in order (the timers and bench rows it fills). */
    const pbfcl_stage *stages;
    int stage_count;
    /* Its own per-particle buffers (NULL, 0: none). */
    const pbfcl_method_buffer *buffers;
    int buffer_count;
} pbfcl_solver_method;

/* Position Based Fluids (Macklin & Mueller 2013), host/core/sim/sim.c and cl/pbf.cl. */
const pbfcl_solver_method *pbfcl_solver_pbf(void);

/* The common state a method works on, as the core holds it now: buffer handles change with
 * every reorder and swap, so a method reads the view again after pbfcl_sim_neighbours_x. */
typedef struct pbfcl_sim_view {
    pbfcl_cl *cl;
    pbfcl_grid *grid;
    const pbfcl_scene *scene;
    const pbfcl_pbf_params *params; /* box, dt of a substep, h, mass, Poly6, Spiky, radius */
    size_t n, capacity, wg;         /* active particles, room for; work-group size of the kernels */
    int substeps;                   /* substeps of this frame */
    cl_float4 gravity, push_origin, push_dir, push; /* push.w: radius (0: off) */
    float wall_scale;                               /* pbfcl_pbf_wall_scale */
    cl_mem params_buf;                              /* pbfcl_pbf_params, __constant */
    cl_mem bounds_buf;    /* 3 uints: max |v|, reach down and up along gravity (particles_bounds) */
    cl_mem accel_max_buf; /* 1 uint: max |a| of the frame's steps, float bits (sph) */
    cl_mem pos_buf, vel_buf, density_buf; /* float4, float4, float */
    void **method_state;                  /* the method's own state */
} pbfcl_sim_view;

/* Makes the buffers of the method's table in state (capacity particles each, zeros). */
pbfcl_status pbfcl_sim_method_buffers_make(pbfcl_sim *sim, void *state);

/* Releases them (any not made yet is NULL); accepts a half-made state. */
void pbfcl_sim_method_buffers_release(pbfcl_sim *sim, void *state);

/* Fills v from sim. */
void pbfcl_sim_view_get(pbfcl_sim *sim, pbfcl_sim_view *v);

/* hash, sort, reorder, cells and neighbour lists of the positions x (pbfcl_sim_neighbours
 * works on x*, the prediction a method without one does not have). */
pbfcl_status pbfcl_sim_neighbours_x(pbfcl_sim *sim, pbfcl_profile *prof);

#endif
