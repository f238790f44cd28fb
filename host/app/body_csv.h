/* The per-frame CSV of body motions that `pbfcl run --export` writes beside the frames of a
 * scene with bodies: one row per body per exported frame, each frame's rows written with one
 * write and cut back if they cannot be written whole. */
#ifndef PBFCL_BODY_CSV_H
#define PBFCL_BODY_CSV_H

#include "runtime/pbfcl_error.h"
#include "row_file.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The CSV header line, without the newline. */
#define PBFCL_BODY_CSV_HEADER "step,time,body,x,y,z,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz"

/* The file's name in the export directory. */
#define PBFCL_BODY_CSV_NAME "bodies.csv"

/* One body's motion at a frame: centre of mass (m), rotation from its rest pose (quaternion
 * x, y, z, w), linear velocity of its centre (m/s) and angular velocity (rad/s). */
typedef struct pbfcl_body_motion {
    float pos[3], quat[4], vel[3], omega[3];
} pbfcl_body_motion;

/* An open body CSV: one append per frame. */
typedef struct pbfcl_body_csv {
    pbfcl_row_file file;
} pbfcl_body_csv;

/* Creates path (replacing an existing file only if replace) and writes the header; says why
 * if it cannot. */
pbfcl_status pbfcl_body_csv_open(pbfcl_body_csv *c, const char *path, bool replace);

/* Opens path to continue a run resumed after step: keeps the header and the rows of steps up
 * to step and cuts off the rest (the interrupted run's later frames); creates the file if it
 * is missing; refuses a file that is not a body motion file. */
pbfcl_status pbfcl_body_csv_resume(pbfcl_body_csv *c, const char *path, long long step);

/* Appends the rows of one frame (count bodies); z_up writes vectors as (x, -z, y) and rotates
 * the quaternion to match, like the frames of --up z. */
pbfcl_status pbfcl_body_csv_frame(pbfcl_body_csv *c, long long step, double time,
                                  const pbfcl_body_motion *b, int count, bool z_up);

/* Closes the file (checking the final write); accepts a zeroed or closed struct. */
pbfcl_status pbfcl_body_csv_close(pbfcl_body_csv *c);

/* Computes each body's linear and angular velocity from its particles: v the mean of their
 * velocities, omega = I^-1 L about their centre (equal masses; for a body whose particles lie
 * on a line the spin about that line is undefined and taken as 0). pos, vel: xyz triples of
 * n particles, phases their phases (0 fluid, b + 1 body b); out[b].vel and .omega are set. */
void pbfcl_body_velocities(const float *pos, const float *vel, const int *phases, size_t n,
                           int count, pbfcl_body_motion *out);

#endif
