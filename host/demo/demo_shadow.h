/* Shadows of the particles from a directional light (the sky's sun): a shadow map of the
 * particles' sphere depth seen from the light through an orthographic projection that covers
 * the domain box, read by the floor and by the fluid's shading as a depth cue. */
#ifndef PBFCL_DEMO_SHADOW_H
#define PBFCL_DEMO_SHADOW_H

#include "demo_gl.h"
#include "runtime/pbfcl_error.h"

#include <stdbool.h>

struct pbfcl_demo_renderer;
struct pbfcl_demo_view;

#define PBFCL_SHADOW_SIZE 1024 /* shadow map side, texels */

/* The direction towards the light (world space, unit length): the sun of the fluid's sky. */
extern const float pbfcl_demo_sun_dir[3];

/* The shadow map, its program and the light's matrices of the last draw. */
typedef struct pbfcl_demo_shadow {
    GLuint program, fbo, depth_tex;
    GLint u_view, u_proj, u_radius, u_point_scale;
    bool enabled;    /* drawn and used (false after a failed setup or with --no-shadows) */
    float light[16]; /* world to shadow-map coordinates (0..1 in x, y and depth) */
} pbfcl_demo_shadow;

/* Builds the program and the map. Where the GL cannot render into a depth texture, warns
 * once naming what is missing and leaves shadows off (the scene draws without them). */
pbfcl_status pbfcl_demo_shadow_create(pbfcl_demo_shadow *s, const char *shader_dir);

/* Releases every GL object; accepts a zeroed or half-built struct. */
void pbfcl_demo_shadow_destroy(pbfcl_demo_shadow *s);

/* The light's view and orthographic projection for the box lo..hi: the light looks along
 * -pbfcl_demo_sun_dir at the box's centre and its view covers the box's bounding sphere.
 * light = bias * proj * view maps world positions to 0..1 shadow-map coordinates. */
void pbfcl_demo_shadow_matrices(const float lo[3], const float hi[3], float view[16],
                                float proj[16], float light[16]);

/* Draws r's particles, and v's draw_extra, into the shadow map from the light (nothing when
 * not enabled). */
void pbfcl_demo_shadow_draw(pbfcl_demo_shadow *s, struct pbfcl_demo_renderer *r,
                            const struct pbfcl_demo_view *v);

#endif
