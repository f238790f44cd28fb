/* PLY export of simulation frames: binary little-endian PLY with one vertex per particle
 * (x y z vx vy vz density as floats), written whole through a temporary file and a rename,
 * and the check that an export directory can be written before a run starts. */
#ifndef PBFCL_EXPORT_PLY_H
#define PBFCL_EXPORT_PLY_H

#include "pbfcl_error.h"

#include <stddef.h>

/* Writes n particles to path as binary little-endian PLY (vertex properties x y z vx vy vz
 * density); pos3 and vel3 are xyz triples, density n floats; vel3 or density may be NULL
 * (written as zeros). The file appears whole or not at all. */
pbfcl_status pbfcl_ply_write(const char *path, size_t n, const float *pos3, const float *vel3,
                             const float *density);

/* Formats DIR/frame_NNNNN.ply (step zero-padded to 5 digits) into buf; fails if it does not
 * fit. */
pbfcl_status pbfcl_ply_frame_path(char *buf, size_t size, const char *dir, long long step);

/* Creates dir (and its parents) if missing and checks that files can be created in it; on
 * failure says why (not a directory, no permission, ...). */
pbfcl_status pbfcl_export_dir_prepare(const char *dir);

#endif
