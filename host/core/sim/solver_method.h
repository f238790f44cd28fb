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
#include "bodies/shape_match.h"
#include "sim/particles.h"

#include <stdbool.h>

typedef struct pbfcl_sim pbfcl_sim;

/* The constants every method's kernels read (`__constant`, cl/common/pbfcl_shared.h): box, dt of a
 * substep, h, mass, Poly6, Spiky, radius, rest density (pbfcl_sim_constants), and the fields a
 * method derives for its own kernels (its derive: PBF's relaxation, s_corr, vorticity,
 * viscosity, contact slop and friction; SPH's lattice mass). */
typedef pbfcl_pbf_params pbfcl_constants;

/* What a per-particle buffer holds when a particle is created or appended. */
typedef enum pbfcl_buffer_init {
    PBFCL_INIT_UNSET = 0,    /* nothing new (the zeros of creation): written in a substep first */
    PBFCL_INIT_ZERO,         /* zeros */
    PBFCL_INIT_POSITION,     /* the given position, w = 0 */
    PBFCL_INIT_VELOCITY,     /* the given velocity (zero if none), w = 0 */
    PBFCL_INIT_REST_DENSITY, /* the rest density (one float) */
    PBFCL_INIT_ID,           /* the particle's id (one uint) */
    PBFCL_INIT_ONE,          /* 1.0f (one float): the fluid's relative inverse mass */
    PBFCL_INIT_FLUID_PHASE   /* PBFCL_SIM_PHASE_FLUID (one uint) */
} pbfcl_buffer_init;

/* Whether a reordered buffer is carried through the sort of every substep (a compaction
 * carries them all). */
typedef enum pbfcl_buffer_sort {
    PBFCL_SORT_CARRY = 0, /* yes */
    PBFCL_SORT_SKIP,      /* no: read before the sort and written whole after it each substep */
    PBFCL_SORT_SOLIDS     /* only with bodies or static particles (else all alike: 0 or 1) */
} pbfcl_buffer_sort;

/* Whether checkpoints carry a buffer (pbfcl_sim_state_save / load, a section of its name). */
typedef enum pbfcl_buffer_saved {
    PBFCL_SCRATCH = 0, /* no: each substep writes it before reading it */
    PBFCL_SAVED        /* yes: what a substep reads first, and what a frame overwrites before
                        * reading, so that a restored simulation is the saved one whatever the
                        * stages read first */
} pbfcl_buffer_saved;

#define PBFCL_NOT_REORDERED ((size_t)-1)

/* One per-particle buffer, a row of a table (the core's sim_buffers[], sim_buffers.c, or one
 * of a method's buffer tables: its own, or a part's such as a constraint kind's): its name (the
 * only spelling: allocation messages and its section in a checkpoint), bytes per particle (16:
 * float4, 4: float or uint), where its handle lives (offsetof the cl_mem in the table's owner:
 * struct pbfcl_sim, the method's state or a part's), where its reorder target lives if the reorder
 * carries it (state that outlives a substep), its initial value, whether each substep's sort
 * carries it and whether checkpoints do. From the tables follow allocation, the byte estimate,
 * creation and appending, the reorder, the checkpoint's sections and destroy. */
typedef struct pbfcl_particle_buffer {
    const char *name;
    size_t elem;
    size_t offset;
    size_t reorder_tmp; /* or PBFCL_NOT_REORDERED */
    pbfcl_buffer_init init;
    pbfcl_buffer_sort sort;
    pbfcl_buffer_saved saved;
    bool predicted; /* the core's rows only: made only for a method that predicts x* */
} pbfcl_particle_buffer;

typedef pbfcl_particle_buffer pbfcl_method_buffer;

/* A table of per-particle buffers: its rows and the owner of their handles (the rows' offsets
 * are into it: a method's state, or one of its parts', e.g. a constraint kind's; NULL where
 * the owner is not made, as for the byte estimate before a simulation exists). */
typedef struct pbfcl_buffer_table {
    const pbfcl_particle_buffer *rows;
    int count;
    void *owner;
} pbfcl_buffer_table;

/* The rows and count of a static table, for a pbfcl_buffer_table or a constraint kind. */
#define PBFCL_BUFFER_ROWS(table) (table), (int)(sizeof(table) / sizeof((table)[0]))

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
    /* How many times its speed a solid body's particle (a shape-matched body's or a static one)
     * counts in the bounds' fastest speed, for a scene (NULL: once, as the fluid's). */
    float (*solid_speed_scale)(const pbfcl_scene *scene);
    /* The density of the current positions into the densities (sorts, as a step does). */
    pbfcl_status (*compute_density)(pbfcl_sim *sim);
    /* The method's own conditions on a scene and its changes to the constants derived from it
     * (NULL: none); fails naming the setting and a value that works. */
    pbfcl_status (*derive)(const pbfcl_scene *scene, pbfcl_constants *c);
    /* After a checkpoint was loaded into its buffers (NULL: nothing to do). */
    void (*loaded)(pbfcl_sim *sim);
    /* Its own state that is not per particle (e.g. constraints) as named sections, saved after
     * the core's and loaded in the same order (NULL: none). */
    pbfcl_status (*state_save)(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx);
    pbfcl_status (*state_load)(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx);
    /* The stages its substep records, in order (the timers and bench rows it fills). */
    const pbfcl_stage *stages;
    int stage_count;
    /* Whether it predicts positions x* (the core then keeps predicted_positions, which the
     * neighbour search of pbfcl_sim_neighbours_pred, the bodies and the paths work on). */
    bool predicts;
    /* Its own per-particle buffers, as tables (its state's, then its parts'): fills table t
     * (0, 1, ...) with its owner in sim's method state (sim NULL: owner NULL, the rows only, for
     * the byte estimate) and returns true; false past the last (NULL: no buffers). */
    bool (*buffer_table)(pbfcl_sim *sim, int t, pbfcl_buffer_table *out);
} pbfcl_solver_method;

/* The common state a method works on, as the core holds it now: buffer handles change with
 * every reorder and swap, so a method reads the view again after pbfcl_sim_neighbours_x. */
typedef struct pbfcl_sim_view {
    pbfcl_cl *cl;
    pbfcl_grid *grid;
    const pbfcl_scene *scene;
    const pbfcl_constants *params; /* box, dt of a substep, h, mass, Poly6, Spiky, radius */
    size_t n, capacity, wg;        /* active particles, room for; work-group size of the kernels */
    int substeps;                  /* substeps of this frame */
    int substep;                   /* the substep running now (0 .. substeps - 1) */
    cl_float4 gravity, push_origin, push_dir, push; /* push.w: radius (0: off) */
    float wall_scale;                               /* pbfcl_pbf_wall_scale */
    cl_mem params_buf;                              /* pbfcl_constants, __constant */
    cl_mem bounds_buf;    /* 3 uints: max |v| (solid bodies' scaled: solid_speed_scale), reach
                           * down and up along gravity (particles_bounds) */
    cl_mem accel_max_buf; /* 1 uint: max |a| of the frame's steps, float bits (sph) */
    cl_mem pos_buf, vel_buf, density_buf; /* float4, float4, float */
    void **method_state;                  /* the method's own state */
    /* Where the common buffers' handles live: a method may swap one with its reorder target,
     * which is free between reorders (x* with predict's targets; pred, pred_tmp NULL without
     * prediction). */
    cl_mem *pos, *pos_tmp, *pred, *pred_tmp, *vel, *vel_tmp;
    cl_mem id_buf, phase_buf, inv_mass_buf; /* uint, uint, float */
    cl_uint solids;                         /* bodies or static particles: phases matter */
    pbfcl_shape_match *bodies;              /* shape-matched bodies, or NULL (none) */
    pbfcl_particles *particles;             /* stats, bounds (particles.h) */
} pbfcl_sim_view;

/* Makes the buffers of the method's tables in their owners (capacity particles each, zeros;
 * reorder targets too); fails naming a table with rows and no owner. */
pbfcl_status pbfcl_sim_method_buffers_make(pbfcl_sim *sim);

/* Releases them (any not made yet is NULL, an owner not made is skipped); accepts a half-made
 * state. */
void pbfcl_sim_method_buffers_release(pbfcl_sim *sim);

/* Fills v from sim. */
void pbfcl_sim_view_get(pbfcl_sim *sim, pbfcl_sim_view *v);

/* hash, sort, reorder, cells and neighbour lists of the positions x. */
pbfcl_status pbfcl_sim_neighbours_x(pbfcl_sim *sim, pbfcl_profile *prof);

/* The same of the predicted positions x*, those within near first (the contact part); a solid
 * lists no particle of its own phase (x* carries the phases' tags). */
pbfcl_status pbfcl_sim_neighbours_pred(pbfcl_sim *sim, float near, pbfcl_profile *prof);

/* The Poly6 kernel of constants p at distance r. */
float pbfcl_poly6_at(const pbfcl_constants *p, float r);

/* The build options of the particle kernels every method's program shares: the largest
 * power-of-two work-group size up to 256 and the neighbour list capacity. */
void pbfcl_sim_kernel_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg);

#endif
