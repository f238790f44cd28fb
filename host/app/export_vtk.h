/* VTK XML export for ParaView and VTK: one frame as an unstructured grid (.vtu) with one
 * vertex cell per particle (so ParaView draws them by default) and the point arrays velocity
 * (3 components), density, id, phase and body; and a .pvd collection naming each frame with its
 * simulated time. Both written whole through a temporary file and a rename. */
#ifndef PBFCL_EXPORT_VTK_H
#define PBFCL_EXPORT_VTK_H

#include "export_ply.h"

/* Writes the frame as VTK XML UnstructuredGrid with raw appended little-endian data
 * (header_type UInt64). */
pbfcl_status pbfcl_vtu_write(const char *path, const pbfcl_frame *f);

/* One entry of a .pvd collection: a frame file (relative to the .pvd) and its time, s; a
 * mesh_NNNNN.vtp (export_mesh.h) is its time's part 1, the particles' frame part 0. */
typedef struct pbfcl_pvd_entry {
    char file[64];
    double time;
} pbfcl_pvd_entry;

/* Writes the collection of count frames to path (replacing it whole). */
pbfcl_status pbfcl_pvd_write(const char *path, const pbfcl_pvd_entry *entries, size_t count);

#endif
