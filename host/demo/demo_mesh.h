/* Cloth, ropes and collision shapes as shaded surfaces: the solver's triangles (cloth,
 * inflatables) as a two-sided mesh with smooth normals recomputed from the particles each
 * frame, drawn twice, a particle radius to either side, as a sheet of the particles' thickness
 * (the particles it rests on do not show through it), its ropes as tubes along their particles, and
 * its shapes as their surfaces (pbfcl_shape_get_surface) placed by their poses. The particles of a
 * mesh or a tube are left out of the sphere and fluid passes (their phase in the renderer's buffer
 * is PBFCL_DEMO_PHASE_MESH). */
#ifndef PBFCL_DEMO_MESH_H
#define PBFCL_DEMO_MESH_H

#include "demo_gl.h"
#include "demo_renderer.h"
#include "pbfcl.h"
#include "solver_mesh.h"

#include <stdbool.h>
#include <stddef.h>

/* The phase a particle drawn as part of a mesh has in the renderer's phase buffer: the sphere
 * and fluid passes skip it (shaders/particle.vert, fluid_depth.vert). */
#define PBFCL_DEMO_PHASE_MESH (-2)

/* Sides of a rope's tube. */
#define PBFCL_DEMO_TUBE_SIDES 12

/* One collision shape's surface: vertices with normals in its own frame, drawn as triangles. */
typedef struct pbfcl_demo_shape_draw {
    int id;
    GLuint vao, vbo;
    GLsizei vertices;
    float bound;     /* m: the radius of a sphere about its origin holding it (for picking) */
    float model[16]; /* its pose this frame */
} pbfcl_demo_shape_draw;

typedef struct pbfcl_demo_mesh {
    GLuint program, vao, vbo, ebo;
    GLint u_model, u_view, u_proj, u_color, u_back_color, u_shine, u_offset;
    pbfcl_solver_mesh topo; /* triangles and ropes over the particles */
    size_t cloth_indices;   /* indices of the triangles in ebo (first) */
    size_t tube_indices;    /* indices of the tubes after them */
    size_t tube_vertices;   /* ring vertices after the mesh's vertices */
    float tube_radius;      /* m: the particles' radius, a tube's and half a cloth's thickness */
    float *pos;             /* the particles' positions, 3 each */
    float *vdata;           /* per vertex: position, normal */
    int shape_count;
    pbfcl_demo_shape_draw shapes[PBFCL_MAX_SHAPES];
} pbfcl_demo_mesh;

/* Builds the program from shader_dir. */
pbfcl_status pbfcl_demo_mesh_create(pbfcl_demo_mesh *m, const char *shader_dir);

/* Releases every GL object and buffer; accepts a zeroed or half-built struct. */
void pbfcl_demo_mesh_destroy(pbfcl_demo_mesh *m);

/* Reads the solver's triangles, ropes and shapes (once per scene, and again when particles
 * come or go) for n particles of radius r, and sets phases[p] to PBFCL_DEMO_PHASE_MESH for
 * each particle drawn in a mesh or tube; *marked says whether any was. */
pbfcl_status pbfcl_demo_mesh_set_solver(pbfcl_demo_mesh *m, pbfcl_solver *s, size_t n, float r,
                                        int *phases, bool *marked);

/* Reads the positions (when there are meshes or tubes) and the shapes' poses, recomputes the
 * normals and uploads them. */
pbfcl_status pbfcl_demo_mesh_update(pbfcl_demo_mesh *m, pbfcl_solver *s);

/* The id of the shape whose bounding sphere the ray origin + t dir (dir of unit length) meets
 * first, where it is now, or -1 for none; *t the distance along the ray. */
int pbfcl_demo_mesh_pick(const pbfcl_demo_mesh *m, const float origin[3], const float dir[3],
                         float *t);

/* Draws the meshes, tubes and shapes with the view's camera (a pbfcl_demo_view draw_extra). */
void pbfcl_demo_mesh_draw(void *mesh, const pbfcl_demo_view *v);

#endif
