/* Placing an OBJ mesh in a scene as a shape (host/core/scene/scene_mesh.c). */
#ifndef PBFCL_SCENE_MESH_H
#define PBFCL_SCENE_MESH_H

#include "scene/obj_mesh.h"
#include "scene/scene.h"

/* How a mesh is placed: each vertex v becomes R (scale * v) + translate, R the rotation by
 * rotate[0] degrees about x, then rotate[1] about y, then rotate[2] about z (fixed axes). */
typedef struct pbfcl_mesh_placement {
    float scale[3], rotate[3], translate[3];
} pbfcl_mesh_placement;

/* Adds mesh m (read from obj_path), placed by pl, to s's meshes and makes *f the shape that
 * uses it. Fails, naming file (the scene file) and where (the key, "obstacles[0].mesh"), if
 * m is not closed and consistently oriented, reaches outside s's domain once placed (s's
 * domain is read first), encloses no volume, or does not fit in the scene's meshes
 * (PBFCL_MAX_MESH_VERTICES, PBFCL_MAX_MESH_TRIANGLES). */
pbfcl_status pbfcl_scene_add_mesh(pbfcl_scene *s, const char *file, const char *where,
                                  const char *obj_path, const pbfcl_obj *m,
                                  const pbfcl_mesh_placement *pl, pbfcl_fluid_shape *f);

#endif
