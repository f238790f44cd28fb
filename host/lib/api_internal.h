/* What the API implementation shares with the pbfcl program (not part of the public header):
 * the conversion between the public parameter structs and the core's scene. */
#ifndef PBFCL_API_INTERNAL_H
#define PBFCL_API_INTERNAL_H

#include "bodies/kinematic.h"
#include "pbfcl.h"
#include "runtime/profile.h"
#include "scene/scene.h"

#include <stdbool.h>

/* The kinds of handle the API gives out; each live one is listed until destroyed. */
typedef enum pbfcl_handle_kind { HANDLE_CONTEXT, HANDLE_SOLVER, HANDLE_SCENE } pbfcl_handle_kind;

/* Lists a new handle (false: out of memory). */
bool pbfcl_api_live_add(const void *ptr, pbfcl_handle_kind kind);

/* True if ptr is a live handle of that kind (never dereferenced); remove unlists it. */
bool pbfcl_api_live_find(const void *ptr, pbfcl_handle_kind kind, bool remove);

/* The core scene a setup holds (fluid shapes included); NULL for a handle that is not live. */
const pbfcl_scene *pbfcl_api_setup_scene(const pbfcl_scene_setup *s);

/* Logs why a handle (what: "context", "solver", ...) is refused; PBFCL_ERR_INVALID_HANDLE. */
pbfcl_status pbfcl_api_bad_handle(const char *func, const char *what, const void *ptr);

/* The public parameters as one section ("params") of a saved state. */
typedef struct pbfcl_api_state_params {
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
} pbfcl_api_state_params;

/* The context's device (NULL for a handle that is not a live context): for the layers above
 * the core that make their own simulations on it (host/dist/dist_api.c). */
struct pbfcl_cl *pbfcl_api_context_cl(pbfcl_context *ctx);

/* The public parameters of a core scene. */
void pbfcl_api_params_from_scene(const pbfcl_scene *in, pbfcl_scene_params *scene,
                                 pbfcl_solver_params *solver);

/* A core scene (no fluid shapes, named "api") from the public parameters. */
void pbfcl_api_scene_from_params(const pbfcl_scene_params *scene, const pbfcl_solver_params *solver,
                                 pbfcl_scene *out);

/* Makes the static particles with ids entry_id follow paths (kinematic.h); the solver must be
 * live. Setting phases clears them. */
pbfcl_status pbfcl_api_set_paths(pbfcl_solver *s, size_t paths, const pbfcl_kinematic_path *path,
                                 size_t entries, const unsigned *entry_id,
                                 const unsigned *entry_path, const float *offset3);

/* A solver's diffuse particles (spray, foam, bubbles; api_diffuse.c): NULL set while off. */
typedef struct pbfcl_api_diffuse {
    struct pbfcl_diffuse *set;
    unsigned frame; /* updates run: seeds their random numbers */
} pbfcl_api_diffuse;

struct pbfcl_sim;
struct pbfcl_profile;

/* The diffuse stage after a step of sim (nothing while off), events into prof if not NULL. */
pbfcl_status pbfcl_api_diffuse_step(pbfcl_api_diffuse *a, struct pbfcl_sim *sim,
                                    const pbfcl_scene *scene, struct pbfcl_profile *prof);

/* The diffuse state, simulation and scene of a live solver handle (checked; NULL, logged as
 * func's bad handle, for one that is not). */
pbfcl_api_diffuse *pbfcl_api_solver_diffuse(const char *func, const pbfcl_solver *s,
                                            struct pbfcl_sim **sim, const pbfcl_scene **scene);

/* Whether phase is a solid group's (PBFCL_PHASE_SOLID_GROUP, the core's PBFCL_SIM_PHASE_GROUP). */
bool pbfcl_api_phase_is_group(int phase);

/* A solver's triangles (api_cloth.c: for rendering and export, three particle indices each). */
typedef struct pbfcl_api_cloth {
    size_t triangles;
    unsigned *tri;
    size_t tear_groups; /* pbfcl_solver_set_tearing's limits by group (api_tear.c) */
    float *tear;
    int hold_steps; /* steps with distance constraints, up to the hold check (api_hold.c) */
} pbfcl_api_cloth;

/* The triangles, simulation, active count and phases (by index, pbfcl_make_phase's) of a live
 * solver handle (checked; NULL, logged as func's bad handle, for one that is not). */
pbfcl_api_cloth *pbfcl_api_solver_cloth(const char *func, const pbfcl_solver *s,
                                        struct pbfcl_sim **sim, size_t *count, int **phases,
                                        double *fluid_w);

/* The distance constraints of a simulation: PBF's (sph has none, 0). */
size_t pbfcl_api_distance_count(struct pbfcl_sim *sim);

/* Adds a scene's collision shapes, at the start, to a simulation of method pbf (the layer that
 * splits a run over ranks: each rank holds every shape); a shape refused names colliders[i]. */
pbfcl_status pbfcl_api_scene_add_colliders(const pbfcl_scene *sc, struct pbfcl_sim *sim);

/* Makes the pinned particles of a scene's cloths and ropes static in phases (the fill's n,
 * pbfcl_scene_phases'); then, once the phases are set, puts the others into their groups and
 * sets the constraints and triangles (api_scene_cloth.c). */
pbfcl_status pbfcl_api_scene_pin_cloths(const pbfcl_scene *sc, int *phases, size_t n);
pbfcl_status pbfcl_api_scene_apply_cloths(const pbfcl_scene *sc, pbfcl_solver *solver, size_t n);

/* The pinned particles of the cloths and ropes attached to obstacle o (the fill's n particles):
 * their number, and with id not NULL their indices and offsets from the obstacle's centre
 * (xyz triples), which join its path. */
size_t pbfcl_api_scene_cloth_path(const pbfcl_scene *sc, int o, size_t n, const float center[3],
                                  unsigned *id, float *offset3);

/* After a step: tears the groups with a limit (pbfcl_solver_set_tearing; api_tear.c). */
pbfcl_status pbfcl_api_cloth_tear(pbfcl_solver *s);

/* The tear limits in a saved state: "tear_limits" (their count, u64), then
 * "tear_limit_values" (a float per group) when there are any (checked by pbfcl_state_check). */
pbfcl_status pbfcl_api_tear_save(const pbfcl_api_cloth *c, pbfcl_state_write_fn put, void *ctx);
pbfcl_status pbfcl_api_tear_load(pbfcl_api_cloth *c, pbfcl_state_read_fn get, void *ctx);

/* The step at which pbfcl_api_cloth_hold measures the rigid constraints' stretch, and the mean
 * stretch of a group's beyond which it warns. */
#define PBFCL_HOLD_CHECK_STEP 30
#define PBFCL_HOLD_MAX_STRETCH 0.05

/* After a step: at the PBFCL_HOLD_CHECK_STEP-th step with distance constraints, warns once if
 * a group's rigid constraints (compliance 0, not tethers) are stretched on average beyond
 * PBFCL_HOLD_MAX_STRETCH: the solver cannot hold them at its iterations (api_hold.c). */
pbfcl_status pbfcl_api_cloth_hold(pbfcl_solver *s);

/* After a removal that gave each old index its new one (rank, UINT32_MAX: removed): the
 * distance constraints renumbered, those with a removed particle dropped; the inflatables
 * renumbered, one with a removed vertex dropped (its mesh is no longer closed); the attachments
 * renumbered, those of a removed particle dropped. PBF only; nothing for another method. */
pbfcl_status pbfcl_api_remap_constraints(struct pbfcl_sim *sim, const unsigned *rank);

/* Removes every attachment (api_attach.c; PBF only, nothing for another method): setting
 * phases replaces the bodies and static particles they name. */
pbfcl_status pbfcl_api_clear_attachments(struct pbfcl_sim *sim);

/* Releases the triangles; none afterwards. */
void pbfcl_api_cloth_free(pbfcl_api_cloth *c);

/* Frees c's triangles and removes the core's (the wind's), after a removal renumbered ids. */
pbfcl_status pbfcl_api_cloth_drop(struct pbfcl_sim *sim, pbfcl_api_cloth *c);

/* Takes c's triangles from the core's after a state was loaded (none without method pbf). */
pbfcl_status pbfcl_api_cloth_loaded(struct pbfcl_sim *sim, pbfcl_api_cloth *c);

/* Releases the diffuse particles; off afterwards. */
void pbfcl_api_diffuse_free(pbfcl_api_diffuse *a);

/* The stages the last timed step of a solver ran, in PBFCL_STAGES' order, and their device
 * time (api_timers.c). */
typedef struct pbfcl_api_timers {
    int count;
    int stage[PBFCL_STAGE_COUNT]; /* a pbfcl_stage */
    double ms[PBFCL_STAGE_COUNT];
} pbfcl_api_timers;

/* Collects prof's events into t (the stages that recorded one) and out->total; the error of
 * reading them, with t left empty. */
cl_int pbfcl_api_timers_collect(pbfcl_api_timers *t, struct pbfcl_profile *prof, pbfcl_timers *out);

/* The timers of a live solver handle (checked; NULL, logged as func's bad handle, for one that
 * is not). */
const pbfcl_api_timers *pbfcl_api_solver_timers(const char *func, const pbfcl_solver *s);

/* A phase of pbfcl_solver_set_phases' short numbers (0 fluid, b + 1, -1 static) in
 * pbfcl_make_phase's encoding, and back (a body's flags dropped); other values pass through. */
int pbfcl_api_phase_from_short(int phase);
int pbfcl_api_phase_to_short(int phase);

/* Checks count phases (pbfcl_make_phase's encoding; errors name func, the particle and the
 * value) and counts the bodies: groups 1 .. B without gaps, at least
 * PBFCL_SHAPE_MATCH_MIN_PARTICLES particles and one phase each; sizes[b] (zeroed, count
 * entries) gets body b's count, body_phase[b] its phase. */
pbfcl_status pbfcl_api_check_phases(const char *func, const int *phases, size_t count,
                                    size_t *bodies, size_t *sizes, int *body_phase);

/* Checks count inverse masses w (1/kg) against the particles' phases (fluid_w: the fluid's
 * 1 / m; volume: a particle's, m / rest_density); body_w[b] (zeroed, one per body) gets body b's.
 */
pbfcl_status pbfcl_api_check_inverse_masses(const char *func, const float *w, const int *phases,
                                            size_t count, double fluid_w, double volume,
                                            float *body_w);

/* In a public function func: unless cond, logs "func: <message>" and returns
 * PBFCL_ERR_BAD_ARGUMENT (func and the message format are string literals). */
#define CHECK_ARG(func, cond, ...)                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            pbfcl_errorf(func ": " __VA_ARGS__);                                                   \
            return PBFCL_ERR_BAD_ARGUMENT;                                                         \
        }                                                                                          \
    } while (0)

#endif
