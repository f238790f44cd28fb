/* The surfaces of `pbfcl run --export`: each exported frame's cloth, inflatables and ropes as
 * one mesh file beside the particles' frame (mesh_NNNNN.ply: vertices and triangles, the ropes
 * as PLY edges; mesh_NNNNN.vtp: VTK polydata, triangles as polys and ropes as polylines, in the
 * .pvd collection as the frame's part 1), the collision shapes' surfaces once as OBJ files, and
 * the files' names. Written whole through a temporary file and a rename. */
#ifndef PBFCL_EXPORT_MESH_H
#define PBFCL_EXPORT_MESH_H

#include "export_ply.h"
#include "solver_mesh.h"

/* One frame's surfaces: the particles of mesh's vertices taken from the frame's arrays. */
typedef struct pbfcl_mesh_frame {
    const pbfcl_solver_mesh *mesh; /* triangles and ropes over the particles */
    const float *pos3;             /* every particle's position (caller's order), m */
    const float *vel3;             /* velocities, m/s; NULL: zeros */
    const unsigned *ids;           /* persistent ids; NULL: the particles' indices */
    long long step;
    double time; /* s */
    bool z_up;   /* write (x, -z, y), as the particles' frames */
} pbfcl_mesh_frame;

/* Writes mesh_NNNNN.ply: vertex x y z (float) id (uint), face vertex_indices (uchar count, int
 * indices into the vertices), and, when there are ropes, edge vertex1 vertex2 (int). */
pbfcl_status pbfcl_mesh_ply_write(const char *path, const pbfcl_mesh_frame *f);

/* Writes mesh_NNNNN.vtp: VTK XML PolyData with the point arrays velocity and id, the
 * triangles as Polys and each rope as a polyline of Lines. */
pbfcl_status pbfcl_mesh_vtp_write(const char *path, const pbfcl_mesh_frame *f);

/* Formats DIR/mesh_NNNNN.EXT (.ply or .vtp) into buf; fails if it does not fit. */
pbfcl_status pbfcl_mesh_path(char *buf, size_t size, const char *dir, long long step,
                             pbfcl_export_format format);

/* Writes a surface (nv xyz vertices, nt triangles) as a Wavefront OBJ with the comment lines
 * comment (each line prefixed "# "); z_up turns the vertices as the frames are. */
pbfcl_status pbfcl_obj_write(const char *path, const float *v, size_t nv, const unsigned *t,
                             size_t nt, const char *comment, bool z_up);

#endif
