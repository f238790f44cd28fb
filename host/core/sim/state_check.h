/* Checks of a saved state before any of it is used: every field of every section of
 * pbfcl_solver_save_state (counts bounded by the particle count, ids unique, phases and bodies
 * that agree, floats finite and inside the domain, paths in order) and the bytes of a saved
 * scene that a C struct cannot hold any value of (booleans, enums, counts). Host code only,
 * no device, so the checkpoint fuzzer (tests/fuzz/fuzz_checkpoint.c) runs it alone. A bad
 * field is refused naming its section, the field and the index. */
#ifndef PBFCL_STATE_CHECK_H
#define PBFCL_STATE_CHECK_H

#include "runtime/pbfcl_error.h"
#include "pbfcl_shared.h"

#include <stddef.h>

/* What a state is checked against: its particle count (the "count" section, already within
 * the solver's capacity), its method (which sections it has), the domain of its parameters
 * (already validated) and the solver constants they derive, which the "host" section must
 * hold but for the substep's dt, 1 / dt and viscosity (NULL: not compared). most_bytes bounds
 * any one section (0: no bound), so that a damaged count (a billion distance constraints) is
 * refused before memory for it is taken; most_bytes_of names the bound in the message ("the whole
 * checkpoint"). */
typedef struct pbfcl_state_limits {
    size_t count;
    int method; /* pbfcl_method */
    float box_min[3], box_max[3];
    const pbfcl_pbf_params *constants;
    size_t most_bytes;
    const char *most_bytes_of;
} pbfcl_state_limits;

/* The margin around the box that saved positions may lie in, m: one box size along each
 * axis. The solver clamps every particle into the box each substep, so a running state
 * stays inside it up to rounding; the margin keeps a state that is merely odd (a particle
 * pushed out between the clamp and the save) loadable, while a position far away (1e30)
 * that would overflow the grid's cell index is damage. */
float pbfcl_state_margin(const pbfcl_state_limits *lim, int axis);

/* Reads every section of a saved solver state but "count" and "params" through get and
 * checks every field against lim; logs what is wrong and returns PBFCL_ERR_BAD_ARGUMENT. */
pbfcl_status pbfcl_state_check(pbfcl_state_read_fn get, void *ctx, const pbfcl_state_limits *lim);

/* Checks the bytes of a saved "scene" section (size bytes, a pbfcl_scene's layout) before
 * they are used as one: booleans 0 or 1, shape kinds and the method in range, counts within
 * their arrays, mesh ranges and triangles naming what exists, a NUL-terminated name. */
pbfcl_status pbfcl_state_check_scene(const void *bytes, size_t size);

#endif
