/* The demo's spray, foam and bubbles (pbfcl_solver_set_diffuse): read from the solver after
 * each step and drawn over the fluid surface as soft point sprites: bubbles faint and seen
 * through the surface, foam on it, spray in the air. */
#ifndef PBFCL_DEMO_DIFFUSE_H
#define PBFCL_DEMO_DIFFUSE_H

#include "demo_gl.h"
#include "demo_renderer.h"
#include "pbfcl.h"
#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* The sprites' program, buffer and host copy. */
typedef struct pbfcl_demo_diffuse {
    GLuint program, vao, vbo;
    GLint u_view, u_proj, u_radius, u_point_scale, u_types, u_lift;
    float *host;       /* float4 per diffuse particle */
    size_t host_cap;   /* entries host and vbo hold */
    size_t count;      /* particles in the buffer */
    size_t by_type[3]; /* spray, foam, bubbles among them */
} pbfcl_demo_diffuse;

/* Builds the program from shader_dir. */
pbfcl_status pbfcl_demo_diffuse_create(pbfcl_demo_diffuse *df, const char *shader_dir);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_demo_diffuse_destroy(pbfcl_demo_diffuse *df);

/* Reads the solver's diffuse particles into the vertex buffer (none while they are off). */
pbfcl_status pbfcl_demo_diffuse_update(pbfcl_demo_diffuse *df, pbfcl_solver *solver);

/* Draws them over what is in the bound framebuffer (its depth: the fluid surface's). */
void pbfcl_demo_diffuse_draw(const pbfcl_demo_diffuse *df, const pbfcl_demo_view *v);

#endif
