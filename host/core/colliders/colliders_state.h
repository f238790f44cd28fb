/* The collision shapes in a saved state (pbfcl_solver_save_state, checkpoints): the sections'
 * layouts, which the state's checks (sim/state_check_shapes.c) read too, and the save and load
 * of a set of shapes. Sections: "shapes" (the header), then when there are shapes
 * "shape_entries" (one per shape: its id, name, geometry's scalars and device row, pose and
 * velocities included), "shape_planes" (every hull's planes and SDF's nodes, in order),
 * "shape_triangles" (every mesh's triangles, in order) and "shape_forces" (the force
 * reduction's partial sums). A mesh's triangle grid is made again from its triangles. */
#ifndef PBFCL_COLLIDERS_STATE_H
#define PBFCL_COLLIDERS_STATE_H

#include "colliders/colliders.h"

#include "pbfcl_shared.h"
#include "../../../cl/colliders/colliders.h"

/* The "shapes" section. */
typedef struct pbfcl_shapes_saved {
    cl_uint count;       /* shapes, 0 to PBFCL_COLLIDER_MAX_SHAPES */
    cl_uint next_id;     /* the id the next shape gets */
    cl_uint accumulated; /* "shape_forces" holds a substep's sums */
    float dt;            /* the last substep's, s */
} pbfcl_shapes_saved;

/* One entry of "shape_entries". */
typedef struct pbfcl_shape_saved {
    cl_int id;
    char name[64];
    cl_uint plane_count, tri_count; /* float4 in "shape_planes", 3 float4 in "shape_triangles" */
    cl_uint dims[3];                /* sdf: nodes per axis (a mesh's grid is made again) */
    float grid_origin[3], cell;     /* sdf: the first node, the cell edge */
    float lo[3], hi[3];             /* local bounds */
    pbfcl_collider_shape row;       /* type, flags, size, pose, velocities, material */
    float moving;                   /* s its velocities still move it (INFINITY: for ever) */
    float pad[3];
} pbfcl_shape_saved;

/* The floats of "shape_forces". */
#define PBFCL_SHAPE_FORCE_FLOATS (PBFCL_COLLIDER_MAX_SHAPES * PBFCL_COLLIDER_FORCE_GROUPS * 2 * 4)

/* The most nodes of an SDF along one axis: PBFCL_MAX_SDF_RESOLUTION cells, 3 more each side
 * and one for rounding, and its last node. */
#define PBFCL_SHAPE_SDF_MAX_NODES (PBFCL_MAX_SDF_RESOLUTION + 9)

/* The most planes of a hull (the room its build allocates) and triangles of a mesh. */
#define PBFCL_SHAPE_HULL_MAX_PLANES (2 * 128 * 128)
#define PBFCL_SHAPE_MESH_MAX_TRIANGLES (1u << 24)

/* The most bytes of planes, nodes and triangles a saved state holds for all its shapes: 1 GiB
 * (25 SDFs at the finest resolution, or 22 million triangles); a checkpoint reader allows it
 * beside the particles (host/app/checkpoint_read.c). */
#define PBFCL_SHAPES_MAX_SAVED_BYTES (1ull << 30)

/* Saves set c (NULL: none) through put; refused when its geometry is over
 * PBFCL_SHAPES_MAX_SAVED_BYTES. */
pbfcl_status pbfcl_colliders_save(pbfcl_colliders *c, pbfcl_cl *cl, pbfcl_state_write_fn put,
                                  void *ctx);

/* Replaces c's shapes with the saved ones (checked by pbfcl_state_check first). */
pbfcl_status pbfcl_colliders_load(pbfcl_colliders *c, pbfcl_cl *cl, pbfcl_state_read_fn get,
                                  void *ctx);

#endif
