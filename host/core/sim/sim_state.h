/* The host's share of a simulation's saved state (the "host" section of a checkpoint): what
 * pbfcl_sim_state_save writes and state_check.c checks before pbfcl_sim_state_load uses it. */
#ifndef PBFCL_SIM_STATE_H
#define PBFCL_SIM_STATE_H

#include "sim/solver_method.h"

#include <CL/cl.h>

/* The host-side state that carries across frames (the "host" section). */
typedef struct sim_host_state {
    pbfcl_constants params; /* dt and viscosity follow the last frame's substeps */
    cl_float4 gravity, push_origin, push_dir, push;
    cl_int substeps;      /* substeps of the last frame */
    cl_uint solid_groups; /* particles of solid groups without shape matching (cloth, ropes) */
    cl_ulong statics;     /* particles of inverse mass 0 */
} sim_host_state;

#endif
