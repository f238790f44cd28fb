/* Colliders as shapes: the set of a simulation's collision shapes (their geometry on the host,
 * their flat table and geometry on the device, cl/colliders/colliders.h) and the stages that
 * collide the particles with them (cl/colliders/colliders.cl): narrow (once per substep, after the
 * neighbour search: advances each shape by its velocities, uploads the table, finds each particle's
 * contact planes), project (every solver iteration, on the corrected positions q) and force (after
 * the last iteration: each shape's push, per work-group, for pbfcl_colliders_read). Nothing is
 * built or launched while there are no shapes. */
#ifndef PBFCL_COLLIDERS_H
#define PBFCL_COLLIDERS_H

#include "colliders/collider_geometry.h"
#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "runtime/profile.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pbfcl_colliders pbfcl_colliders; /* opaque; colliders.c */

/* What the device stages work on: the context, the solver's constants (pbfcl_pbf_params: r,
 * dt, mass), the active particles and the room for them, the kernels' work-group size (a power
 * of two) and the substep. */
typedef struct pbfcl_colliders_run {
    pbfcl_cl *cl;
    const pbfcl_build_config *build; /* the kernels' options (PBF's); NULL: WG_SIZE = wg only */
    cl_mem params_buf;
    size_t n, capacity, wg;
    float dt; /* the substep, s */
} pbfcl_colliders_run;

/* Makes an empty set / releases one (accepts NULL). */
pbfcl_status pbfcl_colliders_create(pbfcl_colliders **out);
void pbfcl_colliders_destroy(pbfcl_colliders *c);

/* Adds the shape desc (checked; errors name it and the fix); *id names it from then on. */
pbfcl_status pbfcl_colliders_add(pbfcl_colliders *c, const pbfcl_shape_desc *desc, int *id);

/* Removes shape id. */
pbfcl_status pbfcl_colliders_remove(pbfcl_colliders *c, int id);

/* The number of shapes. */
int pbfcl_colliders_count(const pbfcl_colliders *c);

/* A new pose and velocities of shape id (NULL: kept; checked finite, the rotation not zero). */
pbfcl_status pbfcl_colliders_set_motion(pbfcl_colliders *c, int id, const float position[3],
                                        const float rotation[4], const float velocity[3],
                                        const float angular_velocity[3]);

/* Shape id's pose (either pointer may be NULL). */
pbfcl_status pbfcl_colliders_get_pose(const pbfcl_colliders *c, int id, float position[3],
                                      float rotation[4]);

/* What the API reads of one shape (host/lib/api_shape_read.c): its id, name, geometry in its
 * own frame and velocities. */
typedef struct pbfcl_collider_view {
    int id;
    const char *name;
    const pbfcl_collider_geometry *geo;
    float velocity[3], angular_velocity[3];
} pbfcl_collider_view;

/* The shape at index i (0 .. count - 1, in the order they were made); PBFCL_ERR_BAD_ARGUMENT
 * out of range. */
pbfcl_status pbfcl_colliders_view_at(const pbfcl_colliders *c, int i, pbfcl_collider_view *out);

/* The stage colliders_narrow of a substep on x (pos_buf) and x* (pred_buf). */
pbfcl_status pbfcl_colliders_narrow(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                    cl_mem pos_buf, cl_mem pred_buf, pbfcl_profile *prof);

/* The stage colliders_project of a solver iteration on q (in place), from x. */
pbfcl_status pbfcl_colliders_project(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                     cl_mem pos_buf, cl_mem q_buf, cl_mem inv_mass_buf,
                                     pbfcl_profile *prof);

/* colliders_project on x* (pred_buf, in place) after the narrow phase, before the density counts
 * the planes, as predict clamps x* to the box's walls (docs/PERFORMANCE.md, "Shapes hold x* as
 * the walls do"), a mesh's planes too: left, they let pour's water through the fast solver's
 * corrections into a broken frame at 1M (5,158 lists cut short), and a floor layer in a mesh tank
 * stood 2 % above one on box shapes ("The fluid's touch closes a cell"). */
pbfcl_status pbfcl_colliders_hold(pbfcl_colliders *c, const pbfcl_colliders_run *r, cl_mem pos_buf,
                                  cl_mem pred_buf, cl_mem inv_mass_buf, pbfcl_profile *prof);

/* The stage colliders_force after a substep's last iteration. */
pbfcl_status pbfcl_colliders_force(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                   cl_mem inv_mass_buf, pbfcl_profile *prof);

/* Shape id's force (N) and particles its contacts moved in the last substep, and the particles
 * found inside it since the shapes last changed; any pointer may be NULL. */
pbfcl_status pbfcl_colliders_read(pbfcl_colliders *c, pbfcl_cl *cl, int id, float force[3],
                                  unsigned *contacts, unsigned *inside);

/* The table the last narrow phase uploaded (a pbfcl_collider_shape per shape, in the order of
 * pbfcl_colliders_index; cl/colliders/colliders.h: its position the row's float4 0, its rotation
 * float4 1), or NULL before the first; *row_float4s: a row's size in float4. */
cl_mem pbfcl_colliders_table(const pbfcl_colliders *c, size_t *row_float4s);

/* The last narrow phase's contact planes, their shapes and the pushes, per particle, which the
 * density constraint reads (cl/pbf/pbf.cl, pbf_shape_factor: the shapes count as walls in the
 * fluid's density, and their part of its correction adds to the pushes); false, with all three
 * NULL, while there are no shapes or no narrow phase has run with them. */
bool pbfcl_colliders_planes(const pbfcl_colliders *c, cl_mem *planes, cl_mem *shapes, cl_mem *push);

/* The shapes as the multilevel correction's grid reads them (host/core/pbf/multilevel.c): the
 * uploaded table, the hulls' planes and SDFs' nodes, the shapes, and the pressure sums
 * (groups float4 a shape, in the contacts' m dx) that the correction adds to and
 * colliders_force adds to each shape's force and zeroes. false (all zero) while there are no
 * shapes or nothing is built. */
typedef struct pbfcl_colliders_solid_view {
    cl_mem shapes, planes, pressure;
    unsigned count;
    unsigned groups; /* the pressure sums' work-groups a shape */
} pbfcl_colliders_solid_view;
bool pbfcl_colliders_solids(const pbfcl_colliders *c, pbfcl_colliders_solid_view *out);

/* The buffers the force sums the particles' part from: bufs[0] the last narrow phase's contact
 * shapes (PBFCL_COLLIDER_CONTACTS ints a particle, -1: none), bufs[1] the inside flags (a uint
 * a particle, 0: none), elem their bytes a particle; false, both NULL, as
 * pbfcl_colliders_planes. */
bool pbfcl_colliders_counted(const pbfcl_colliders *c, cl_mem bufs[2], size_t elem[2]);

/* For the tests: the last narrow phase's planes (n * PBFCL_COLLIDER_CONTACTS float4) and
 * shapes (int, -1: none), either may be NULL, and the table's index of shape id. */
pbfcl_status pbfcl_colliders_read_contacts(pbfcl_colliders *c, pbfcl_cl *cl, size_t n,
                                           float *planes4, int *shapes);
int pbfcl_colliders_index(const pbfcl_colliders *c, int id);

/* For the kernel tests of the density (cl/pbf/pbf.cl): sets the planes and shapes of n particles
 * (as read_contacts reads them; the rest of the capacity none) and zeroes the pushes, in place of
 * a narrow phase (building the program and the buffers if need be). */
pbfcl_status pbfcl_colliders_write_contacts(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                            size_t n, const float *planes4, const int *shapes);

#endif
