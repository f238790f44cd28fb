/* Position Based Fluids (Macklin & Mueller 2013), seed 001's outline: the method
 * (pbfcl_solver_pbf, solver_method.h) and its stages, one host function per kernel of
 * cl/pbf/pbf.cl, exposed for the tests and the benchmark (pbfcl_sim_step is the normal way to
 * advance). Its state (kernels, buffers, flags) lives in pbf_state (pbf_internal.h), its
 * per-particle buffers in its table (pbf.c); the solver iteration's constraint projections
 * are its constraints (constraint.h). */
#ifndef PBFCL_PBF_H
#define PBFCL_PBF_H

#include "sim/sim.h"
#include "sim/solver_method.h"

/* The method. */
const pbfcl_solver_method *pbfcl_solver_pbf(void);

/* predict: apply forces (gravity, vorticity force, push), predict x*, confine to the box. */
pbfcl_status pbfcl_pbf_predict(pbfcl_sim *sim, pbfcl_profile *prof);

/* hash, sort, reorder (every particle buffer), cells and neighbour lists of x*, the near part
 * (contact distance plus skin) first. */
pbfcl_status pbfcl_pbf_neighbours(pbfcl_sim *sim, pbfcl_profile *prof);

/* lambda: SPH density and the density constraint's lambda of every particle. */
pbfcl_status pbfcl_pbf_lambda(pbfcl_sim *sim, pbfcl_profile *prof);

/* delta: the position correction dx from the lambdas, with the tensile term s_corr, written
 * as the corrected positions q = x* + dx (kept inside the walls); with a Chebyshev weight w
 * != 1 the step is w dx + (w - 1) times the last delta's step. */
pbfcl_status pbfcl_pbf_delta(pbfcl_sim *sim, pbfcl_profile *prof);

/* collide: one stabilisation iteration of the particle-particle and wall constraints; moves
 * x* and, by the part that undoes an overlap x already had, x. The first pass after a
 * neighbour search runs body_contacts first (with shape-matched bodies): their contacts with
 * other solids, for the bodies' friction in the next shape matching. */
pbfcl_status pbfcl_pbf_collide(pbfcl_sim *sim, pbfcl_profile *prof);

/* apply_delta: x* += delta: adopts the corrected positions q = x* + dx that delta and collide
 * wrote (a buffer swap, no kernel). */
pbfcl_status pbfcl_pbf_apply_delta(pbfcl_sim *sim, pbfcl_profile *prof);

/* shape_match (after each iteration's apply_delta: x* of the bodies' particles towards their
 * goal positions; nothing without bodies). */
pbfcl_status pbfcl_pbf_shape_match(pbfcl_sim *sim, pbfcl_profile *prof);

/* update: v = (x* - x) / dt, x = x* (x.w: the particle's volume m / rho for the next stage). */
pbfcl_status pbfcl_pbf_update(pbfcl_sim *sim, pbfcl_profile *prof);

/* omega and XSPH viscosity (one pass over the neighbours, of the velocities after update),
 * then the vorticity force; skipped when both vorticity and viscosity are 0. */
pbfcl_status pbfcl_pbf_vorticity_viscosity(pbfcl_sim *sim, pbfcl_profile *prof);

/* Chebyshev acceleration starts after this many plain Jacobi iterations (Wang 2015's delay
 * S): the first iterations of a substep remove the prediction's large local errors, which
 * over-relaxation would amplify. */
#define PBFCL_PBF_CHEBYSHEV_DELAY 2

/* The weight of Chebyshev iteration `iteration` of a substep (Wang 2015) for the spectral
 * radius estimate rho, given the weight of the iteration before: 1 for the first
 * PBFCL_PBF_CHEBYSHEV_DELAY iterations and whenever rho is 0, then 2 / (2 - rho^2), then
 * 4 / (4 - rho^2 last). */
double pbfcl_pbf_chebyshev_weight(int iteration, double rho, double last);

/* The sweeps of the distance constraints (cloth, ropes, tethers) per substep at least: each
 * solver iteration runs one or more, so that fewer density iterations (the multilevel
 * correction's 2) leave the cloth as stiff as the 4 it was tuned at: its constraints are
 * Jacobi-averaged, and a hanging cloth's stretch grows as their sweeps per substep fall (21 x 21
 * particles from two corners: 0.45 % at 4 sweeps, 1.04 % at 2, tests/physics/test_cloth.c). */
#define PBFCL_PBF_DISTANCE_SWEEPS 4

/* The largest cfl (solver.cfl) whose substeps the contacts and neighbour lists keep: on an H200's
 * 1M dam break at 2 iterations with the coarse correction, cfl 1 holds 0.31 % density error and
 * no overflow, cfl 1.5 cut neighbour lists short 5,808 times in 20 frames and cfl 2 more; with
 * the default solver cfl 2 reached 19 % (docs/PERFORMANCE.md). A larger one that sets the
 * substeps is warned of once. */
#define PBFCL_PBF_CFL_SAFE 1.0

/* The most of h a solid body's particle (a shape-matched body's, a moving obstacle's static
 * ones) may move in a substep, whatever solver.cfl allows the fluid: the neighbour lists are
 * searched at x* just after predict, before any constraint has pushed the fluid aside, so a
 * body's face moving d into still fluid puts up to (1 + d / h) times the rest neighbours around
 * the fluid particles it meets, and a body landing at cfl 1 filled their lists (64, about twice
 * the rest count): soft-ball at 1M on an H200 cut 13 lists short in 2 frames at cfl 1, at 300k
 * on PoCL none at 0.75 or 0.5. A shell one particle thick (a cloth, a rope, an inflatable) brings
 * one layer and keeps the fluid's cfl: held to 0.5 h, cloth-drape, flag and rope-bridge took 71
 * to 84 % longer a frame at cfl 1 with no list cut short either way (docs/PERFORMANCE.md, "A
 * solid body moves at most h / 2 a substep"). */
#define PBFCL_PBF_SOLID_CFL 0.5

/* The distance constraints' sweeps in solver iteration `iteration` of `iterations` (0: the one
 * positions pass of a substep without iterations): max(PBFCL_PBF_DISTANCE_SWEEPS, iterations)
 * sweeps per substep spread evenly, each iteration at least one. */
int pbfcl_pbf_distance_sweeps(int iteration, int iterations);

/* Sets the Chebyshev weight the next pbfcl_pbf_delta applies (pbfcl_sim_step sets it per
 * iteration and leaves 1, plain Jacobi; exposed for the tests). */
void pbfcl_pbf_set_chebyshev_weight(pbfcl_sim *sim, float omega);

/* Reads the predicted positions x* (xyz triples), lambdas, the corrections dx = q - x* of the
 * last delta or collide (xyz triples) and the neighbour lists (count[n], list[k * n + i] for
 * k < max_neighbors); any pointer may be NULL. */
pbfcl_status pbfcl_pbf_read_solver(pbfcl_sim *sim, float *pred3, float *lambda, float *delta3,
                                   unsigned *neighbor_count, unsigned *neighbors);

/* Reads the contacts of the bodies' particles with other solids that body_contacts measured
 * before the first collide pass after the last neighbour search (8 floats per slot: the sum of
 * the body's shares of their slides, their number, of how far they closed, and 3 zeros), or
 * PBFCL_ERR_UNSUPPORTED without bodies. Slots of other particles hold nothing meaningful. */
pbfcl_status pbfcl_pbf_read_body_contacts(pbfcl_sim *sim, float *contacts8);

/* Reads the vorticity omega and the vorticity confinement force (acceleration, m/s^2) of the
 * last vorticity_viscosity stage (xyz triples), and the V |omega| per particle that the next
 * one takes eta from (carried in the velocity's w); any pointer may be NULL. */
pbfcl_status pbfcl_pbf_read_vorticity(pbfcl_sim *sim, float *omega3, float *force3,
                                      float *strength);

#endif
