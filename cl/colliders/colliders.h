/* Colliders as shapes (cl/colliders/colliders.cl, host/core/colliders/): the flat table of shapes
 * the kernels read, shared by the host (C11) and the kernels (OpenCL C 1.2), after FleX's
 * NvFlexCollisionGeometry / NvFlexSetShapes. 4-byte scalars only, sizes checked on the host. */
#ifndef PBFCL_CL_COLLIDERS_H
#define PBFCL_CL_COLLIDERS_H

/* The contact planes a particle keeps per substep (the deepest when more are near). */
#define PBFCL_COLLIDER_CONTACTS 4

/* Two contact planes of one shape whose normals' dot product is within this of 1 and whose
 * offsets (m) are within it of each other are one: a particle keeps it once. */
#define PBFCL_COLLIDER_SAME 1e-5f

/* A mesh's edge or corner contact whose point lies within this (m) of the plane of a face of
 * the same mesh that the particle holds is that face's border: it is not kept. */
#define PBFCL_COLLIDER_ON_FACE 1e-5f

/* The shapes a simulation holds at most (the force reduction's second dimension). */
#define PBFCL_COLLIDER_MAX_SHAPES 64

/* The partial sums of the force reduction: work-groups per shape. */
#define PBFCL_COLLIDER_FORCE_GROUPS 16
/* The most work-groups of colliders_force per partial sum, folded by colliders_force_fold (one
 * per 4 work-items' particles: 16 groups a shape alone filled an H200 so little that the sum
 * took 230 us a substep at 1M particles). */
#define PBFCL_COLLIDER_FORCE_SPLIT 32

/* The kinds of shape (the public pbfcl_shape_type has the same values). */
#define PBFCL_COLLIDER_SPHERE 0u  /* size.x: radius */
#define PBFCL_COLLIDER_CAPSULE 1u /* size.x: radius, size.y: half length along local x */
#define PBFCL_COLLIDER_BOX 2u     /* size.xyz: half extents */
#define PBFCL_COLLIDER_CONVEX 3u  /* first, count: planes (n, d) of the hull, local frame */
#define PBFCL_COLLIDER_MESH 4u    /* first, count: triangles; grid_*: the triangles' grid */
#define PBFCL_COLLIDER_SDF                                                                         \
    5u /* first, count: nodes (gradient, distance) among the planes;                               \
          grid_origin: the first node, w the cell; grid_dims: nodes */

/* flags */
#define PBFCL_COLLIDER_TWO_SIDED 1u /* a mesh that collides on both sides of its triangles */

/* One shape. Its pose at the end of the substep (position, rotation: a unit quaternion x, y,
 * z, w from the shape's frame to the world) and at its start (prev_*): a particle is followed
 * from x in the start frame to x* in the end frame. */
typedef struct pbfcl_collider_shape {
    float position[4];         /* m; w unused */
    float rotation[4];         /* quaternion x, y, z, w */
    float prev_position[4];    /* at the start of the substep */
    float prev_rotation[4];    /* at the start of the substep */
    float velocity[4];         /* m/s; w unused */
    float angular_velocity[4]; /* rad/s about position; w unused */
    float size[4];             /* see the kinds */
    float bounds_min[4];       /* world box swept over the substep, margin included */
    float bounds_max[4];
    float grid_origin[4];  /* mesh, sdf: lower corner of its grid (local); w: cell edge */
    float friction_static; /* Coulomb coefficients of its contacts */
    float friction_dynamic;
    float margin;            /* m: particles keep r + margin from its surface */
    pbfcl_uint type;         /* PBFCL_COLLIDER_* */
    pbfcl_uint first, count; /* convex: planes; mesh: triangles (3 float4 each); sdf: nodes */
    pbfcl_uint flags;        /* PBFCL_COLLIDER_TWO_SIDED */
    pbfcl_uint grid_first;   /* mesh: its first cell in the cell starts */
    pbfcl_uint grid_dims[4]; /* mesh: cells per axis; sdf: nodes per axis; w unused */
} pbfcl_collider_shape;

#ifndef __OPENCL_VERSION__
_Static_assert(sizeof(pbfcl_collider_shape) == 208, "pbfcl_collider_shape layout");
#endif

#endif
