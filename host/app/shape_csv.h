/* The per-frame CSV of the collision shapes' motions that `pbfcl run --export` writes beside
 * the frames of a scene with colliders (shapes.csv): one row per shape per exported frame, each
 * frame's rows written with one write (row_file.h); the shapes' surfaces are written once, as
 * shape_NN.obj in each shape's own frame, which a row's pose places in the world. */
#ifndef PBFCL_SHAPE_CSV_H
#define PBFCL_SHAPE_CSV_H

#include "row_file.h"
#include "runtime/pbfcl_error.h"

#include <stdbool.h>

/* The CSV header line, without the newline. */
#define PBFCL_SHAPE_CSV_HEADER "step,time,shape,type,x,y,z,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz"

/* The file's name in the export directory. */
#define PBFCL_SHAPE_CSV_NAME "shapes.csv"

/* The format of a shape's surface file name in the export directory (its index). */
#define PBFCL_SHAPE_OBJ_FORMAT "shape_%02d.obj"

/* One shape at a frame: its kind (pbfcl_shape_type), position (m), rotation from its own frame
 * (quaternion x, y, z, w), velocity (m/s) and angular velocity (rad/s). */
typedef struct pbfcl_shape_motion {
    int type;
    float pos[3], quat[4], vel[3], omega[3];
} pbfcl_shape_motion;

typedef struct pbfcl_shape_csv {
    pbfcl_row_file file;
} pbfcl_shape_csv;

/* Creates path (replacing an existing file only if replace) with its header. */
pbfcl_status pbfcl_shape_csv_open(pbfcl_shape_csv *c, const char *path, bool replace);

/* Continues path after step (rows of later steps cut off), as pbfcl_row_file_resume. */
pbfcl_status pbfcl_shape_csv_resume(pbfcl_shape_csv *c, const char *path, long long step);

/* Appends one frame's rows (count shapes, by index); z_up as the body CSV's. */
pbfcl_status pbfcl_shape_csv_frame(pbfcl_shape_csv *c, long long step, double time,
                                   const pbfcl_shape_motion *m, int count, bool z_up);

/* Closes the file; accepts a zeroed or closed struct. */
pbfcl_status pbfcl_shape_csv_close(pbfcl_shape_csv *c);

/* The name of a shape kind in the CSV, as a scene file's colliders[].type names it ("sphere",
 * "capsule", "box", "convex", "mesh", "sdf"); "unknown" for none. */
const char *pbfcl_shape_type_name(int type);

/* True for shape_NN.obj. */
bool pbfcl_is_shape_obj_name(const char *name);

#endif
