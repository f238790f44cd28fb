/* Weakly compressible SPH (Becker & Teschner 2007) with velocity Verlet, the second particle
 * method behind the solver interface (solver_method.h): its constants and its stages, exposed
 * for the tests and the benchmark (pbfcl_sim_step is the normal way to advance). */
#ifndef PBFCL_SPH_H
#define PBFCL_SPH_H

#include "sim/sim.h"
#include "sim/solver_method.h"

/* Weakly compressible SPH (Becker & Teschner 2007) with velocity Verlet, cl/sph.cl. */
const pbfcl_solver_method *pbfcl_solver_sph(void);

/* The Tait exponent (Becker & Teschner's gamma). */
#define PBFCL_SPH_GAMMA 7.0

/* The force condition of the time step: dt <= PBFCL_SPH_FORCE_FACTOR sqrt((h / 2) / max |a|)
 * (Becker & Teschner's 0.25 with their h, the smoothing length h / 2). */
#define PBFCL_SPH_FORCE_FACTOR 0.25

/* The speed of sound derived when solver.speed_of_sound is 0: 10 times the free-fall speed
 * sqrt(2 |g| H) over the box's extent H along gravity (the fastest flow gravity can make in
 * it), so that the density error of the Tait equation, about (v / c)^2, stays below 1 %;
 * without gravity |g| = 9.81 m/s^2 and H the box diagonal. *min_out (if not NULL) is the least
 * speed of sound the scene accepts, 10 sqrt(2 |g| H) with its own gravity (0 without). */
double pbfcl_sph_sound_speed(const pbfcl_scene *scene, double *min_out);

/* Fills s with the SPH constants of scene, given the common constants p (as derived for sph:
 * mass and self density of the rest lattice at rho0). */
void pbfcl_sph_params_from_scene(const pbfcl_scene *scene, const pbfcl_pbf_params *p,
                                 pbfcl_sph_params *s);

/* The SPH constants a simulation runs with. */
const pbfcl_sph_params *pbfcl_sph_params_of(pbfcl_sim *sim);

/* density: summation density of x (Poly6 and the walls) and the Tait pressure term p/rho^2. */
pbfcl_status pbfcl_sph_density(pbfcl_sim *sim, pbfcl_profile *prof);

/* force: the acceleration of x and v (pressure, artificial viscosity, walls, gravity, push). */
pbfcl_status pbfcl_sph_force(pbfcl_sim *sim, pbfcl_profile *prof);

/* integrate (first half of velocity Verlet): v_half = v + a dt / 2, x += v_half dt, v = v +
 * a dt (the velocity the second force evaluation sees). */
pbfcl_status pbfcl_sph_verlet_x(pbfcl_sim *sim, pbfcl_profile *prof);

/* integrate (second half): v = v_half + a dt / 2 with the new a; merges max |a| into the
 * bounds for the next frame's time step. */
pbfcl_status pbfcl_sph_verlet_v(pbfcl_sim *sim, pbfcl_profile *prof);

/* Reads the pressure terms p / rho^2 (m^5 / (kg s^2)) and the accelerations (xyz triples) of
 * the last density and force stages, in the current order; either pointer may be NULL. */
pbfcl_status pbfcl_sph_read(pbfcl_sim *sim, float *pressure_term, float *accel3);

#endif
