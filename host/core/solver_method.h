/* The interface of a particle method: what the simulation core (sim.c: the particle buffers,
 * the neighbour grid, the frame loop with its adaptive substeps, the API's ids) asks of the
 * method that moves the particles. Position Based Fluids is the one implementation
 * (pbfcl_solver_pbf); a second method plugs in here without touching the grid, the sort or
 * the programs on top. */
#ifndef PBFCL_SOLVER_METHOD_H
#define PBFCL_SOLVER_METHOD_H

#include "build_options.h"
#include "clrt.h"
#include "profile.h"

typedef struct pbfcl_sim pbfcl_sim;

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
    /* The stages its substep records, in order (the timers and bench rows it fills). */
    const pbfcl_stage *stages;
    int stage_count;
} pbfcl_solver_method;

/* Position Based Fluids (Macklin & Mueller 2013), host/core/sim.c and cl/pbf.cl. */
const pbfcl_solver_method *pbfcl_solver_pbf(void);

#endif
