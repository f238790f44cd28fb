/* The set of shapes as colliders.c (the host table) and colliders_device.c (the device
 * stages) share it; no file outside colliders/ includes it. */
#ifndef PBFCL_COLLIDERS_INTERNAL_H
#define PBFCL_COLLIDERS_INTERNAL_H

#include "colliders/collider_geometry.h"
#include "colliders/colliders.h"

#include "pbfcl_shared.h"
#include "../../../cl/colliders/colliders.h"

#include <stdbool.h>

/* One shape: its id, name, geometry and device row (pose, velocities, material, kind). */
typedef struct collider_entry {
    int id;
    char name[64];
    pbfcl_collider_geometry geo;
    pbfcl_collider_shape row;
    float moving; /* s its velocities still move it (INFINITY: for ever) */
} collider_entry;

struct pbfcl_colliders {
    collider_entry shape[PBFCL_COLLIDER_MAX_SHAPES];
    /* the table as uploaded, in two turns: a substep fills one while the other's write (event
     * written[k], non-blocking) may still read it */
    pbfcl_collider_shape turns[2][PBFCL_COLLIDER_MAX_SHAPES];
    cl_event written[2];
    int turn;
    pbfcl_collider_shape *rows; /* the last uploaded turn */
    int count, next_id;
    bool geometry_dirty; /* a shape was added or removed: the geometry goes up again */
    cl_program program;  /* colliders.cl, built at the first narrow phase with shapes */
    cl_kernel narrow, project, force, force_fold;
    cl_mem shape_buf, plane_buf, tri_buf, cell_start_buf, cell_tris_buf;
    size_t capacity; /* particles the per-particle buffers hold */
    cl_mem contact_plane_buf, contact_shape_buf, push_buf, inside_buf;
    cl_mem sums_buf;     /* MAX_SHAPES * FORCE_GROUPS * FORCE_SPLIT * 2 float4: colliders_force's */
    cl_mem partial_buf;  /* PBFCL_COLLIDER_MAX_SHAPES * FORCE_GROUPS * 2 float4 */
    cl_mem pressure_buf; /* PBFCL_COLLIDER_MAX_SHAPES * FORCE_GROUPS float4: the multilevel
                          * correction's push, which colliders_force adds and zeroes */
    int accumulated;     /* partial_buf holds a substep's sums (0: none since the table changed) */
    float *pending_forces; /* loaded sums for partial_buf when it is made (NULL: none) */
    float dt;              /* the last substep's */
};

/* Writes the force reduction's partial sums (PBFCL_SHAPE_FORCE_FLOATS floats) to partial_buf. */
pbfcl_status pbfcl_colliders_write_forces(pbfcl_colliders *c, pbfcl_cl *cl, const float *sums);

#endif
