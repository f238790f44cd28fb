/* The simulation: the common particle core (particle buffers on the device, the neighbour
 * search, the particles by id, bodies and paths) and the frame loop of the method
 * solver.method chooses (solver_method.h: PBF, pbf/pbf.h, seed 001's outline, or weakly
 * compressible SPH, sph/sph.h). */
#ifndef PBFCL_SIM_H
#define PBFCL_SIM_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "grid/grid.h"
#include "bodies/kinematic.h"
#include "scene/scene.h"
#include "sim/solver_method.h"

#include <stdint.h>

/* Per-step measurements (the columns of `pbfcl run --stats`): the public struct. */
typedef pbfcl_stats pbfcl_sim_stats;

typedef struct pbfcl_sim pbfcl_sim; /* opaque; defined in sim.c */

/* The neighbour list capacity the solver gives its grid (MAX_NEIGHBORS): 26 neighbours at
 * rest for h = 4r at spacing 2r, up to about 40 in a compressed flow; PBFCL_MAX_H_RATIO
 * (scene.h) keeps the rest lattice within two thirds of it. */
#define PBFCL_SIM_MAX_NEIGHBORS 64u

/* Creates a simulation of scene, moved by method (the one of scene->solver.method, which the
 * layer above chooses: pbfcl_sim_create in host/lib/solver_methods.h), with room for capacity
 * particles, n (<= capacity) of them active at first, at positions (x, y, z triples) with zero
 * velocity on cl's device; checks device memory first. */
pbfcl_status pbfcl_sim_create_with(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                                   const pbfcl_solver_method *method, size_t capacity,
                                   const float *positions, size_t n);

/* Releases everything; accepts NULL. */
void pbfcl_sim_destroy(pbfcl_sim *sim);

/* The particles the buffers hold. */
size_t pbfcl_sim_capacity(const pbfcl_sim *sim);

/* Appends k particles at pos3 with velocities vel3 (NULL: zero), ids n..n+k-1. */
pbfcl_status pbfcl_sim_append(pbfcl_sim *sim, const float *pos3, const float *vel3, size_t k);

/* Keeps m particles: slot i of the result is slot keep_slots[i] of the current order, with id
 * new_ids[i]; every per-particle state buffer is gathered. */
pbfcl_status pbfcl_sim_compact(pbfcl_sim *sim, const unsigned *keep_slots, size_t m,
                               const unsigned *new_ids);

/* pbfcl_sim_compact with the slots kept on the device and no host round trip: slot i of the
 * result is slot keep[i] of the current order (keep_buf: at least m uints), every particle
 * keeping its id. Enqueued; keep_buf may be reused once the queue has run it. */
pbfcl_status pbfcl_sim_compact_device(pbfcl_sim *sim, cl_mem keep_buf, size_t m);

/* Overwrites the positions and/or velocities (xyz triples in the current order; NULL leaves
 * one as it is) of the n particles. */
pbfcl_status pbfcl_sim_write(pbfcl_sim *sim, const float *pos3, const float *vel3);

/* Replaces the scene (every setting; a new box or kernel radius rebuilds the grid); a scene
 * the solver cannot run leaves the old one in place. */
pbfcl_status pbfcl_sim_set_scene(pbfcl_sim *sim, const pbfcl_scene *scene);

/* Advances one frame (scene dt) in at least the scene's substeps, more where a CFL condition
 * asks for them (sim.c, choose_substeps): the fastest particle moves at most h / 2 per
 * substep. Stage events go to prof if not NULL. */
pbfcl_status pbfcl_sim_step(pbfcl_sim *sim, pbfcl_profile *prof);

/* Substeps of the last frame (the scene's before the first). */
int pbfcl_sim_substeps(const pbfcl_sim *sim);

/* Number of particles. */
size_t pbfcl_sim_count(const pbfcl_sim *sim);

/* The scene the simulation runs (gravity may be changed with pbfcl_sim_set_gravity). */
const pbfcl_scene *pbfcl_sim_scene(const pbfcl_sim *sim);

/* Reads positions and velocities (xyz triples) and densities (kg/m^3) to host arrays of n
 * entries; any pointer may be NULL. Order is the simulation's current (sorted) order. */
pbfcl_status pbfcl_sim_read(pbfcl_sim *sim, float *pos3, float *vel3, float *density);

/* Reads every particle's persistent id (its index in the positions given to
 * pbfcl_sim_create; appended particles take the next ids, pbfcl_sim_compact renumbers) to ids
 * (n entries), in the same current order as pbfcl_sim_read: particle i of a read is particle
 * ids[i] of the initial state. */
pbfcl_status pbfcl_sim_read_ids(pbfcl_sim *sim, unsigned *ids);

/* Writes the ids of the particles at slots first..first+count-1 (a split simulation's appended
 * particles take their global ids: host/dist/dist_flow.c). */
pbfcl_status pbfcl_sim_write_ids(pbfcl_sim *sim, size_t first, size_t count, const unsigned *ids);

/* Phases (cl/common/pbfcl_shared.h, FleX's encoding: a group and flags): the fluid's, group 0 with
 * the fluid and self-collide flags; a particle of body b has group b + 1 (PBFCL_PHASE_BODY), flags
 * as the API set them; a static particle (an obstacle's, inverse mass 0)
 * PBFCL_SIM_PHASE_STATIC: the kernels treat it as a body's particle that never moves, and
 * static particles (one group, no self-collide) do not collide with each other. */
#define PBFCL_SIM_PHASE_FLUID PBFCL_PHASE_FLUID_WORD
#define PBFCL_SIM_PHASE_STATIC PBFCL_PHASE_STATIC_WORD

/* The body whose group a phase names (group - 1), PBFCL_SIM_NO_BODY for the fluid's group 0
 * and at least the body count for the static group. */
#define PBFCL_SIM_PHASE_BODY_OF(phase) (((phase)&PBFCL_PHASE_GROUP_BITS) - 1u)
#define PBFCL_SIM_NO_BODY 0xffffffffu

/* A phase in an older checkpoint (0 fluid, b + 1 body b, 0xffffffff static) in today's
 * encoding; today's phases are returned as they are (neither 0 nor 0xffffffff is one). */
static inline unsigned pbfcl_sim_phase_upgrade(unsigned phase)
{
    return phase == 0u            ? PBFCL_SIM_PHASE_FLUID
           : phase == 0xffffffffu ? PBFCL_SIM_PHASE_STATIC
                                  : phase;
}

/* Reads the phases and relative inverse masses w = m_fluid / m (1 for fluid, rho0 / rho for a
 * body of density rho) in the current order (n entries each); either pointer may be NULL.
 * New particles are fluid, w = 1. Relative, so that a new radius or rest density leaves them
 * valid. */
pbfcl_status pbfcl_sim_read_phases(pbfcl_sim *sim, unsigned *phases, float *inv_mass);

/* Overwrites the phases and/or inverse masses (current order; NULL leaves one as it is). */
pbfcl_status pbfcl_sim_write_phases(pbfcl_sim *sim, const unsigned *phases, const float *inv_mass);

/* Bodies (shape matching, shape_match.h): replaces them all. entries (sorted by body) name
 * particles by id, with rest positions rest3 (xyz triples; the body's shape and its pose now);
 * per body its stiffness in (0, 1] (1: rigid) and relative inverse mass w = rho0 / rho. The
 * phases and inverse masses of every particle are rewritten. bodies = 0: fluid only. */
pbfcl_status pbfcl_sim_set_bodies(pbfcl_sim *sim, size_t bodies, size_t entries,
                                  const unsigned *entry_id, const unsigned *entry_body,
                                  const float *rest3, const float *stiffness,
                                  const float *inv_mass);

/* The number of bodies. */
/* pbfcl_sim_set_bodies on one device of a split simulation: every body's entries, with ids
 * below the capacity (the whole simulation's), of which only the particles here get their
 * phases; pbfcl_shape_match_split (shape_match.h) then says which are here and owned. */
pbfcl_status pbfcl_sim_set_bodies_split(pbfcl_sim *sim, size_t bodies, size_t entries,
                                        const unsigned *entry_id, const unsigned *entry_body,
                                        const float *rest3, const float *stiffness,
                                        const float *inv_mass);

size_t pbfcl_sim_body_count(const pbfcl_sim *sim);

/* Changes body b's stiffness and relative inverse mass. */
pbfcl_status pbfcl_sim_set_body(pbfcl_sim *sim, size_t b, float stiffness, float inv_mass);

/* Makes the particles with the given ids static (phase PBFCL_SIM_PHASE_STATIC, inverse mass
 * 0: predict leaves them where they are, the fluid's constraints and contacts never move them,
 * and they count in the fluid's density as boundary particles) and every other static
 * particle fluid again. A body's particle is refused. pbfcl_sim_set_bodies clears them: set
 * the bodies first. */
pbfcl_status pbfcl_sim_set_static(pbfcl_sim *sim, size_t count, const unsigned *ids);

/* The number of static particles. */
size_t pbfcl_sim_static_count(const pbfcl_sim *sim);

/* The phase of solid group g (a cloth, a rope: particles that distance constraints hold, not
 * shape matching): its particles collide with every other phase but not with each other, and
 * have no density constraint of their own (they count in the fluid's, as bodies' particles do).
 * The phase encoding lives here only. */
#define PBFCL_SIM_MAX_GROUPS 65536u
#define PBFCL_SIM_PHASE_GROUP(g) (PBFCL_SIM_PHASE_STATIC - 1u - (unsigned)(g))
/* Whether phase p is a solid group's, with the self-collide flag or without. */
#define PBFCL_SIM_PHASE_IS_GROUP(p)                                                                \
    (((p) & ~PBFCL_PHASE_SELF_COLLIDE_BIT) < PBFCL_SIM_PHASE_STATIC &&                             \
     ((p) & ~PBFCL_PHASE_SELF_COLLIDE_BIT) >= PBFCL_SIM_PHASE_GROUP(PBFCL_SIM_MAX_GROUPS - 1))

/* Gives solid group g (< groups) the self-collide flag where on[g] (groups 0: none has it): its
 * particles then collide with each other as with other phases (a cloth folded onto itself),
 * pairs closer than the contact distance 2r pushed apart, so a cloth for it is sampled at
 * spacings of 2r or more. Applies to the groups' particles now and to those set later. */
pbfcl_status pbfcl_sim_set_group_self_collide(pbfcl_sim *sim, size_t groups,
                                              const unsigned char *on);

/* Puts the particles with ids[k] into solid group group[k] (< PBFCL_SIM_MAX_GROUPS) with
 * relative inverse mass inv_mass[k] (> 0: m_fluid / m) and every other particle of a group
 * back into the fluid. Pinned particles are static (pbfcl_sim_set_static, first); a body's
 * particle is refused. pbfcl_sim_set_bodies clears the groups: set the bodies first. */
pbfcl_status pbfcl_sim_set_groups(pbfcl_sim *sim, size_t count, const unsigned *ids,
                                  const unsigned *group, const float *inv_mass);

/* After pbfcl_sim_compact: the bodies' particle with id k becomes new_id[k]. */
pbfcl_status pbfcl_sim_remap_body_ids(pbfcl_sim *sim, const unsigned *new_id);

/* Kinematic obstacles (kinematic.h): replaces the paths; entry e makes the particle with id
 * entry_id[e] follow path entry_path[e] from its rest offset offset3[e] (xyz) from the path's
 * centre, while it is static. The paths' clock restarts at 0. paths = 0: none. */
pbfcl_status pbfcl_sim_set_paths(pbfcl_sim *sim, size_t paths, const pbfcl_kinematic_path *path,
                                 size_t entries, const unsigned *entry_id,
                                 const unsigned *entry_path, const float *offset3);

/* The stage kinematic_path of a substep (after predict): x* of the static particles on paths
 * where their paths are at the end of the substep; nothing without paths. */
pbfcl_status pbfcl_sim_kinematic(pbfcl_sim *sim, pbfcl_profile *prof);

/* Reads each body's centre of mass (xyz) and rotation from its rest pose (quaternion x, y, z,
 * w) as of the last shape matching; either pointer may be NULL. */
pbfcl_status pbfcl_sim_read_bodies(pbfcl_sim *sim, float *com3, float *quat4);

/* The body stages of a substep (shape_match.h), nothing without bodies: body_predict (after
 * predict: x* of each body's rigid motion, from the momentum of its particles), body_slots
 * (after the reorder: where each body particle is) and body_velocity (after update: v of each
 * body's motion over the substep); the shape-matching projection is PBF's
 * (pbfcl_pbf_shape_match). */
pbfcl_status pbfcl_sim_body_predict(pbfcl_sim *sim, pbfcl_profile *prof);
pbfcl_status pbfcl_sim_body_slots(pbfcl_sim *sim, pbfcl_profile *prof);
pbfcl_status pbfcl_sim_body_velocity(pbfcl_sim *sim, pbfcl_profile *prof);

/* Computes the SPH density of the current positions x (read with pbfcl_sim_read) by the
 * method's own summation (pbf: neighbour lists of x* = x before a step and one lambda pass;
 * sph: its density stage). Before the first step the densities are otherwise the rest
 * density, a placeholder. Sorts the particles, as a step does. */
pbfcl_status pbfcl_sim_compute_density(pbfcl_sim *sim);

/* Computes the step statistics on the device (reduced on the host). */
pbfcl_status pbfcl_sim_stats_compute(pbfcl_sim *sim, pbfcl_sim_stats *out);

/* The walls every stage clamps the particles to (predict, delta, collide, the bodies' goals;
 * the statistics count a particle beyond them as outside): the box less the radius. */
void pbfcl_sim_walls(const pbfcl_sim *sim, float lo[3], float hi[3]);

/* Enqueues a copy of the positions as float4 (x, y, z, speed) into dst_buf (n float4), e.g.
 * a buffer shared with OpenGL. */
pbfcl_status pbfcl_sim_copy_positions(pbfcl_sim *sim, cl_mem dst_buf);

/* Runs the bounds stage on the current state and reads it: out[0] = max |v| (a shape-matched
 * body's or a static particle's speed counted the method's solid_speed_scale times), out[1] and
 * out[2] = the fluid's reach down and up along gravity from the box centre, plus the box
 * diagonal D (what choose_substeps reads). */
pbfcl_status pbfcl_sim_bounds(pbfcl_sim *sim, float out[3]);

/* Changes gravity (e.g. to tilt or shake the box). */
void pbfcl_sim_set_gravity(pbfcl_sim *sim, const float g[3]);

/* Sets an external push: particles within radius of the ray origin + t * dir get an
 * acceleration of strength along push (m/s^2); strength 0 turns it off. */
void pbfcl_sim_set_push(pbfcl_sim *sim, const float origin[3], const float dir[3],
                        const float push[3], float radius, float strength);

/* The solver constants derived from the scene. */
const pbfcl_constants *pbfcl_sim_params(const pbfcl_sim *sim);

/* Fills p with the solver constants of scene (SI units), with method m's changes (its derive);
 * fails naming a setting the solver cannot run with. */
pbfcl_status pbfcl_sim_constants(const pbfcl_scene *scene, const pbfcl_solver_method *m,
                                 pbfcl_constants *p);

/* A particle's volume V = m / rho0, m3: the one that gives the rest lattice (spacing 2r) the
 * rest density, so that a fluid filled on it starts at rest: (2r)^3 / L, L the Poly6 sum over
 * that lattice at m = rho0 (2r)^3 (1.0098 at h = 4r). A fluid particle's mass is rho0 V, a
 * body's particle's its density V (a body of the fluid's density floats in it). */
double pbfcl_particle_volume(const pbfcl_scene *scene);

/* The Poly6 density of the rest lattice (spacing 2r) at a particle inside it, in units of
 * rho0: 1 with the mass pbfcl_sim_constants derives. */
double pbfcl_pbf_lattice_density(const pbfcl_constants *p);

/* The calibration of the walls' density (cl/pbf/pbf.cl, pbf_wall_phi): the continuum half-space
 * of fluid beyond a wall is scaled so that a particle of the rest lattice (spacing 2r) at
 * distance r from the wall has the density of one inside the lattice (0.89 for h = 4r). */
double pbfcl_pbf_wall_scale(const pbfcl_constants *p);

/* The neighbour list capacity per particle (MAX_NEIGHBORS). */
unsigned pbfcl_sim_max_neighbors(const pbfcl_sim *sim);

/* Checkpoints: the state that carries from one frame to the next, as named sections (device
 * buffers in the simulation's current order, and the host's state: solver constants of the
 * last frame's substeps, gravity, push, substeps). put is called once per section; get must
 * fill exactly bytes bytes of the named section or fail. A simulation created with the same
 * scene and particle count and loaded with a saved state continues bit for bit as the saved
 * one would have (on the same device). */
typedef pbfcl_state_write_fn pbfcl_state_put; /* the public API's section callbacks */
typedef pbfcl_state_read_fn pbfcl_state_get;

/* Saves every section of the state through put. */
pbfcl_status pbfcl_sim_state_save(pbfcl_sim *sim, pbfcl_state_put put, void *ctx);

/* Restores every section of the state through get. */
pbfcl_status pbfcl_sim_state_load(pbfcl_sim *sim, pbfcl_state_get get, void *ctx);

/* The most particles a simulation takes (2^32 neighbour-list entries of 64 per particle). */
#define PBFCL_SIM_MAX_PARTICLES (UINT32_MAX / PBFCL_SIM_MAX_NEIGHBORS)

/* Checks, without a device, that the solver can run scene with n particles (its constants,
 * its grid, the particle count), so that a scene it cannot run is refused before a device is
 * opened; says what to change. */
pbfcl_status pbfcl_sim_check_scene_with(const pbfcl_scene *scene, const pbfcl_solver_method *m,
                                        size_t n);

/* Bytes of device memory a simulation of n particles of scene needs (solver and grid). */
unsigned long long pbfcl_sim_bytes_needed_with(const pbfcl_scene *scene,
                                               const pbfcl_solver_method *m, size_t n);

/* ---- a simulation split over several devices (the layer above: host/dist/) ---------------- */

/* The points of a substep where the layer that splits a simulation over devices keeps each
 * device's copies of its neighbours' particles (ghosts) current: the values a kernel reads of
 * its neighbours must be their owners' values (docs/DISTRIBUTED.md). */
typedef enum pbfcl_sim_sync_point {
    PBFCL_SYNC_SEARCH,    /* before the neighbour search of x*: particles change devices and
                           * the ghosts are made anew */
    PBFCL_SYNC_SORTED,    /* after the search's reorder: every particle's slot changed */
    PBFCL_SYNC_LAMBDA,    /* bufs: the lambdas, which delta reads of the neighbours */
    PBFCL_SYNC_DELTA,     /* bufs: q = x* + dx of delta (the moved flags miss the ghosts') */
    PBFCL_SYNC_COLLIDE,   /* bufs: q and x after a collision pass */
    PBFCL_SYNC_UPDATE,    /* bufs: x and v, which vorticity and viscosity read */
    PBFCL_SYNC_WAIT,      /* the exchange a values point left in flight completes (the ghosts'
                           * rows arrive): pbfcl_sim_sync_wait */
    PBFCL_SYNC_DENSITY,   /* sph, bufs: the densities and pressure terms, which the force reads
                           * of the neighbours */
    PBFCL_SYNC_FORCE,     /* sph, bufs: the accelerations of a step's second force, whose largest
                           * (of every particle held, the ghosts' their owners') sets the next
                           * frame's steps */
    PBFCL_SYNC_SHAPES,    /* bufs: the collision shapes' contacts (4 ints a particle, -1 none)
                           * and inside flags (a uint, 0 none), before the force on each shape is
                           * summed: the layer sets the ghosts' rows to none (their owners count
                           * them; nothing reads a ghost's after it) */
    PBFCL_SYNC_ML_GHOSTS, /* the multilevel correction's gather (host/core/pbf/multilevel.c),
                           * bufs: a uchar a particle, which the layer sets to 1 in its ghosts'
                           * rows and 0 in the owned: the gather counts each particle once */
    PBFCL_SYNC_ML_SUMS    /* bufs: the correction's finest grid, its cells' compression sums
                           * (ints), particle counts (uints) and, with collision shapes, touch
                           * words (uints of 5-bit fields), elem: each buffer's whole size in
                           * bytes (not a particle's): the layer adds them over the devices,
                           * so that each solves the whole fluid's grid to the same phi, and
                           * moves its ghosts as their owners move them */
} pbfcl_sim_sync_point;

/* The layer's callback: bufs[0..count-1] hold elem[k] bytes per particle in the current order. */
typedef pbfcl_status (*pbfcl_sim_sync_fn)(void *ctx, pbfcl_sim *sim, pbfcl_sim_sync_point point,
                                          const cl_mem *bufs, const size_t *elem, int count);

/* Sets the callback (NULL: none, the default). With one, a step runs its substeps even with no
 * particles, since particles may arrive from another device at PBFCL_SYNC_SEARCH. */
void pbfcl_sim_set_sync(pbfcl_sim *sim, pbfcl_sim_sync_fn fn, void *ctx);

/* Whether a layer splits the simulation over devices (a callback is set). */
bool pbfcl_sim_split(const pbfcl_sim *sim);

/* Calls the callback if there is one (the stages call it; no cost without one). */
pbfcl_status pbfcl_sim_sync(pbfcl_sim *sim, pbfcl_sim_sync_point point, const cl_mem *bufs,
                            const size_t *elem, int count);

/* The slot lists of a stage split in two (the overlap, docs/DISTRIBUTED.md): the owned
 * particles with no ghost among their neighbours (interior), which the stage may compute while
 * the ghosts' rows travel, and those with one (boundary), after; count slots of slots_buf from
 * first each, in slot order. */
typedef struct pbfcl_sim_lists {
    cl_mem slots_buf;
    size_t interior_first, interior_count, boundary_first, boundary_count;
} pbfcl_sim_lists;

/* The layer's callback at a values point says that it returned with the ghosts' rows still in
 * flight: until pbfcl_sim_sync_wait, a stage that reads the neighbours runs over lists->interior
 * alone (pbfcl_sim_sync_lists); any other kernel launch, and the next sync point, first calls
 * the callback with PBFCL_SYNC_WAIT (pbfcl_cl_pay_owed). */
void pbfcl_sim_sync_started(pbfcl_sim *sim, const pbfcl_sim_lists *lists);

/* true, with the lists, while an exchange is in flight (else a stage runs over every particle). */
bool pbfcl_sim_sync_lists(const pbfcl_sim *sim, pbfcl_sim_lists *out);

/* Completes the exchange in flight (the callback at PBFCL_SYNC_WAIT); nothing without one. */
pbfcl_status pbfcl_sim_sync_wait(pbfcl_sim *sim);

/* A particle's record: its rows of every per-particle buffer a checkpoint saves (the core's,
 * then the method's), concatenated; what moves a particle to another device. Its bytes: */
size_t pbfcl_sim_record_bytes(const pbfcl_sim *sim);

/* Row r of a record (r from 0): the buffer, its bytes per particle and its name (the name of
 * its section in pbfcl_sim_state_save; name may be NULL); false past the last. A record is
 * these rows in this order, the order of the state's per-particle sections. */
bool pbfcl_sim_record_row(pbfcl_sim *sim, size_t r, cl_mem *buf, size_t *elem, const char **name);

/* Appends k particles with the records rec (ids, positions and all; uploaded at once and
 * unpacked on the device), every other buffer taking its initial values made on the device;
 * blocks until rec is read. */
pbfcl_status pbfcl_sim_records_append(pbfcl_sim *sim, const void *rec, size_t k);

/* Replaces the bounds the next step's substep count is chosen from (pbfcl_sim_bounds' three
 * values), e.g. by their maxima over every device. */
pbfcl_status pbfcl_sim_write_bounds(pbfcl_sim *sim, const float b[3]);

#endif
