/* Frame export: one frame of particles (positions, velocities, densities, persistent ids,
 * phases and body ids at a step and simulated time) as binary little-endian PLY or VTK XML
 * (export_vtk.h), each file written whole through a temporary file and a rename; frame names; and
 * the export directory check done before a run. */
#ifndef PBFCL_EXPORT_PLY_H
#define PBFCL_EXPORT_PLY_H

#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* The version written into output files is the library's, pbfcl_version_string() (pbfcl.h). */

/* The file formats of `pbfcl run --export`. */
typedef enum pbfcl_export_format { PBFCL_FORMAT_PLY, PBFCL_FORMAT_VTK } pbfcl_export_format;

/* One frame to write: n particles in the simulation's (y-up) frame of reference. */
typedef struct pbfcl_frame {
    size_t n;
    const float *pos3;    /* xyz triples, m */
    const float *vel3;    /* xyz triples, m/s; NULL: zeros */
    const float *density; /* kg/m^3; NULL: zeros */
    const unsigned *ids;  /* persistent ids; NULL: 0..n-1 */
    const int *phases;    /* PBFCL_PHASE_FLUID (0) or PBFCL_PHASE_BODY(b) (b + 1); NULL: fluid */
    long long step;       /* the frame's step (0: the initial state) */
    double time;          /* simulated time, s */
    bool z_up;            /* write z up (x, -z, y) for z-up tools instead of y up */
} pbfcl_frame;

/* Writes the frame as binary little-endian PLY: vertex properties x y z vx vy vz density
 * (float), id and phase (uint) and body (int: b for body b, -1 for fluid), and header comments
 * giving the step, time and pbfcl's version. The file appears whole or not at all. */
pbfcl_status pbfcl_ply_write(const char *path, const pbfcl_frame *f);

/* Formats DIR/frame_NNNNN.EXT (step zero-padded to 5 digits; .ply or .vtu) into buf; fails if
 * it does not fit. */
pbfcl_status pbfcl_frame_path(char *buf, size_t size, const char *dir, long long step,
                              pbfcl_export_format format);

/* Formats DIR/frame_NNNNN.ply (the PLY case of pbfcl_frame_path). */
pbfcl_status pbfcl_ply_frame_path(char *buf, size_t size, const char *dir, long long step);

/* Creates dir (and its parents) if missing and checks that files can be created in it; on
 * failure says why (not a directory, no permission, ...). The directories it created are
 * remembered for pbfcl_export_dir_undo. */
pbfcl_status pbfcl_export_dir_prepare(const char *dir);

/* Removes the directories the last pbfcl_export_dir_prepare created, if they are still empty
 * (a run that failed leaves no empty tree behind). */
void pbfcl_export_dir_undo(void);

/* The rotation of pbfcl_frame.z_up applied to one xyz triple (in place). */
void pbfcl_frame_to_z_up(float v[3]);

/* The body id of a phase: b for PBFCL_PHASE_BODY(b), -1 for fluid. */
int pbfcl_frame_body(const pbfcl_frame *f, size_t p);

#endif
