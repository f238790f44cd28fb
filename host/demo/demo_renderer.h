/* The scene renderer: particles as lit sphere impostors from a vertex buffer of float4
 * (x, y, z, speed) plus an optional per-particle density buffer and, in scenes with bodies, a
 * per-particle phase buffer (bodies are drawn in their own colours), the box as lines, and a
 * checkered floor. */
#ifndef PBFCL_DEMO_RENDERER_H
#define PBFCL_DEMO_RENDERER_H

#include "demo.h"
#include "demo_gl.h"
#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* The GL programs, buffers and uniform locations of the 3-D scene. */
typedef struct pbfcl_demo_renderer {
    GLuint particle_program, line_program, floor_program;
    GLuint particle_vao, position_vbo, density_vbo, phase_vbo;
    size_t capacity; /* particles the buffers hold */
    bool bodies;     /* the phase buffer holds the phases of a scene with bodies or obstacles */
    GLuint box_vao, box_vbo, floor_vao, floor_vbo;
    GLint u_p_view, u_p_proj, u_p_radius, u_p_point_scale, u_p_mode, u_p_range, u_p_ramp,
        u_p_only_bodies;
    GLint u_l_mvp, u_l_color, u_f_mvp, u_f_cell, u_f_center, u_f_extent, u_f_light, u_f_shadow,
        u_f_shadowed, u_f_shadow_soft;
    float floor_center[3], floor_extent, floor_cell;
} pbfcl_demo_renderer;

/* What one frame shows. */
typedef struct pbfcl_demo_view pbfcl_demo_view;
struct pbfcl_demo_view {
    float view[16], proj[16];
    int width, height;            /* viewport, pixels */
    float particle_radius;        /* m */
    size_t count;                 /* particles to draw */
    pbfcl_demo_color color;       /* what the colour shows */
    float range[2];               /* the values mapped to the ends of the colour scale */
    float box_min[3], box_max[3]; /* the domain, m: no particle is outside it */
    GLuint shadow_tex;            /* the particles' shadow map (demo_shadow.h), 0 for none */
    float light[16];              /* world to shadow-map coordinates */
    float shadow_soft;            /* softening radius of the shadow, shadow-map uv */
    /* what else the scene shows (the demo's cloth, ropes and shapes, demo_mesh.h), drawn with
     * the bodies: after the backdrop, before the fluid; NULL for nothing */
    void (*draw_extra)(void *user, const struct pbfcl_demo_view *v);
    void *extra;
};

/* Builds the programs (from shader_dir) and the static geometry. */
pbfcl_status pbfcl_demo_renderer_create(pbfcl_demo_renderer *r, const char *shader_dir);

/* Releases every GL object; accepts a zeroed or half-built struct. */
void pbfcl_demo_renderer_destroy(pbfcl_demo_renderer *r);

/* (Re)allocates the particle buffers for n particles; their contents are undefined until
 * written. */
pbfcl_status pbfcl_demo_renderer_reserve(pbfcl_demo_renderer *r, size_t n);

/* Sets the box (lines) and floor to the domain lo..hi. */
void pbfcl_demo_renderer_set_box(pbfcl_demo_renderer *r, const float lo[3], const float hi[3]);

/* Uploads n densities (kg/m^3) for density colouring. */
void pbfcl_demo_renderer_upload_density(pbfcl_demo_renderer *r, const float *density, size_t n);

/* Uploads the phases of n particles (PBFCL_PHASE_FLUID, PBFCL_PHASE_BODY(b) or
 * PBFCL_PHASE_STATIC, as pbfcl_solver_get_phases gives them), or with phases NULL marks every
 * particle fluid without a buffer (the fluid-only scenes: nothing per particle is read). The
 * fluid surface leaves body and obstacle particles out; they are drawn as spheres in their
 * body's colour or the obstacles' green. */
pbfcl_status pbfcl_demo_renderer_set_phases(pbfcl_demo_renderer *r, const int *phases, size_t n);

/* Draws the body and obstacle particles (none without phases) as lit spheres in their
 * colours, and the view's draw_extra. */
void pbfcl_demo_renderer_draw_bodies(pbfcl_demo_renderer *r, const pbfcl_demo_view *v);

/* Clears and draws the floor and the box (what the fluid is seen against). */
void pbfcl_demo_renderer_draw_backdrop(pbfcl_demo_renderer *r, const pbfcl_demo_view *v);

/* The particles a draw of v shows: v->count, at most the buffers' capacity. */
size_t pbfcl_demo_renderer_particle_count(const pbfcl_demo_renderer *r, const pbfcl_demo_view *v);

/* Clears and draws the floor, the box, the particles as lit spheres and the view's
 * draw_extra. */
void pbfcl_demo_renderer_draw(pbfcl_demo_renderer *r, const pbfcl_demo_view *v);

#endif
