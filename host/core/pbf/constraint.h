/* The constraint projections of PBF's solver iteration: each kind a small table of functions,
 * in its own file, registered by one line in pbf_constraints[] (constraints.c). An iteration
 * runs every kind of the correction pass in the registry's order (they write the corrected
 * positions q = x* + dx, Jacobi), adopts q (apply_delta), then every kind of the positions
 * pass (they move x* directly, Gauss-Seidel after the Jacobi sweep); a substep without
 * iterations runs the positions pass once. Kinds of the forces pass run once a substep, before
 * predict (their iteration is 0): they change velocities, as gravity does. A kind owns its
 * per-particle buffers: rows of pbfcl_particle_buffer (solver_method.h) with their handles in its
 * state. A kind whose kernels read values of the neighbours that the kind itself wrote calls
 * pbfcl_sim_sync (sim.h) after writing them, as density and contacts do, so that a simulation split
 * over devices gives its ghosts their owners' values. */
#ifndef PBFCL_PBF_CONSTRAINT_H
#define PBFCL_PBF_CONSTRAINT_H

#include "pbf/pbf_internal.h"

typedef enum pbf_pass {
    PBF_PASS_CORRECTION, /* before apply_delta: on x*, into q (the density, contacts) */
    PBF_PASS_POSITIONS,  /* after apply_delta: x* itself (shape matching) */
    PBF_PASS_FORCES      /* once a substep, before predict: forces into v (the wind on cloth) */
} pbf_pass;

typedef struct pbf_constraint_kind {
    const char *name;
    pbf_pass pass;
    /* Its kernels (of PBF's program, built by pbf's create) and state in *state; NULL: none.
     * On failure destroy is called with what was made. */
    pbfcl_status (*create)(const pbfcl_sim_view *v, cl_program program, void **state);
    /* Releases what create made; accepts NULL and a half-made state. */
    void (*destroy)(void *state);
    /* Its projection in solver iteration it of a substep (events into prof if not NULL). */
    pbfcl_status (*project)(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof);
    /* Its per-particle buffers (NULL, 0: none): each row's
     * offset and reorder target are offsetof the cl_mem in its state, which create must make.
     * The core makes them (zeros, then the rows' initial values), counts them in the byte
     * estimate, gives new particles their initial values, reorders, saves and loads them as
     * the rows say and releases them before destroy. */
    const pbfcl_particle_buffer *buffers;
    int buffer_count;
} pbf_constraint_kind;

/* The kinds, in the order an iteration projects them. */
extern const pbf_constraint_kind pbf_density_constraint;    /* density.c */
extern const pbf_constraint_kind pbf_contact_constraint;    /* contacts.c */
extern const pbf_constraint_kind pbf_collider_constraint;   /* colliders.c */
extern const pbf_constraint_kind pbf_multilevel_constraint; /* multilevel.c */
extern const pbf_constraint_kind pbf_attach_constraint;     /* attach.c */
extern const pbf_constraint_kind pbf_shape_constraint;      /* shape_matching.c */
extern const pbf_constraint_kind pbf_distance_constraint;   /* distance.c */
extern const pbf_constraint_kind pbf_wind_force;            /* wind.c (the forces pass) */
extern const pbf_constraint_kind pbf_inflatable_constraint; /* inflatable.c */
extern const pbf_constraint_kind *const pbf_constraints[];
extern const int pbf_constraint_count;

/* Makes / releases every kind's state (pbf_state.constraint[k] for pbf_constraints[k]). */
pbfcl_status pbf_constraints_create(const pbfcl_sim_view *v, pbf_state *ps);
void pbf_constraints_destroy(pbf_state *ps);

/* The state of kind (NULL if it has none). */
void *pbf_constraint_state(const pbf_state *ps, const pbf_constraint_kind *kind);

/* Runs the projections of pass in solver iteration it. */
pbfcl_status pbf_project(pbfcl_sim *sim, pbf_pass pass, int it, pbfcl_profile *prof);

/* The density kind's lambdas, float4 (x*, lambda) per particle (for the solver's readers). */
cl_mem pbf_density_lambdas(const pbf_state *ps);

/* The distance kind's id-to-slot map (uint per id), written in the first iteration of every
 * substep once the kind has constraints; NULL while it has none. Kinds after it in the registry
 * (the inflatables) read it instead of mapping the same ids again. */
cl_mem pbf_distance_slots(const pbf_state *ps);

/* Makes kernel name of program and checks that it launches at the kernels' work-group size. */
pbfcl_status pbf_kernel(const pbfcl_sim_view *v, cl_program program, const char *name,
                        cl_kernel *out);

#endif
