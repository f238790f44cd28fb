/* The particle methods by solver.method: the one place that names every method (PBF, SPH),
 * above the core, which takes the method it is handed (pbfcl_sim_create_with). The entry
 * points here take a scene and hand the core the method its solver.method names. */
#ifndef PBFCL_SOLVER_METHODS_H
#define PBFCL_SOLVER_METHODS_H

#include "sim/sim.h"

/* The method of solver.method (a pbfcl_method). */
const pbfcl_solver_method *pbfcl_solver_method_of(int method);

/* Creates a simulation of n particles of scene at positions (x, y, z triples) with zero
 * velocity, moved by the method of scene->solver.method; checks device memory first. */
pbfcl_status pbfcl_sim_create(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                              const float *positions, size_t n);

/* The same with room for capacity particles, n (<= capacity) of them active at first. */
pbfcl_status pbfcl_sim_create_capacity(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                                       size_t capacity, const float *positions, size_t n);

/* Fills p with the solver constants of scene (SI units) for its method; fails naming a
 * setting the solver cannot run with. */
pbfcl_status pbfcl_pbf_params_from_scene(const pbfcl_scene *scene, pbfcl_pbf_params *p);

/* Checks, without a device, that the solver can run scene with n particles (its constants,
 * its grid, the particle count), so that a scene it cannot run is refused before a device is
 * opened; says what to change. */
pbfcl_status pbfcl_sim_check_scene(const pbfcl_scene *scene, size_t n);

/* Bytes of device memory a simulation of n particles of scene needs (solver and grid). */
unsigned long long pbfcl_sim_bytes_needed(const pbfcl_scene *scene, size_t n);

#endif
