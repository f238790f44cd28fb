/* Wavefront OBJ triangle meshes: a small reader of the "v" and "f" statements (faces as i,
 * i/t, i//n or i/t/n, negative indices counted back from the last vertex, polygons split into
 * fans), and the checks a mesh needs before it is sampled (closed, with a volume). */
#ifndef PBFCL_OBJ_MESH_H
#define PBFCL_OBJ_MESH_H

#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* The largest OBJ file read, bytes. */
#define PBFCL_OBJ_MAX_BYTES (16u << 20)

/* A triangle mesh as read: vertices (xyz triples, in file order), triangles (three 0-based
 * vertex indices each) and the line of the face each triangle came from. */
typedef struct pbfcl_obj {
    float *vertices;
    int *triangles;
    int *lines;
    int vertex_count, triangle_count;
} pbfcl_obj;

/* Reads the OBJ file at path into out (free it with pbfcl_obj_free); a file that cannot be
 * read or parsed is an error naming the file and the line. */
pbfcl_status pbfcl_obj_load(const char *path, pbfcl_obj *out);

/* Parses the NUL-terminated text of an OBJ file (path names it in messages). */
pbfcl_status pbfcl_obj_parse(const char *path, const char *text, pbfcl_obj *out);

/* Frees what pbfcl_obj_load or pbfcl_obj_parse allocated (accepts a zeroed mesh). */
void pbfcl_obj_free(pbfcl_obj *m);

/* Why a mesh is not closed: the edge between 0-based vertices a and b is used by `faces`
 * triangles (or by two that run it the same way, `faces` 2 and same_way true); line is the
 * line of one of them. */
typedef struct pbfcl_obj_edge_fault {
    int a, b, faces, line;
    bool same_way;
} pbfcl_obj_edge_fault;

/* Whether every edge is shared by exactly two triangles that run it in opposite directions
 * (a closed, consistently oriented surface); vertices at the same position count as one.
 * On false, *fault (if not NULL) names the first bad edge. Returns false also when out of
 * memory (fault->faces is then -1). */
bool pbfcl_obj_closed(const pbfcl_obj *m, pbfcl_obj_edge_fault *fault);

/* The signed volume the triangles enclose (positive when they face outwards), m^3. */
double pbfcl_obj_volume(const pbfcl_obj *m);

#endif
