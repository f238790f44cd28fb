/* Screen-space fluid rendering (van der Laan, Green & Sainz, I3D 2009): the particles' nearest
 * sphere depth, smoothed by a bilateral filter, shaded as a refracting, reflecting, absorbing
 * surface over the floor and box. One function per pass, each timed by GL timestamp queries. */
#ifndef PBFCL_DEMO_FLUID_H
#define PBFCL_DEMO_FLUID_H

#include "demo_gl.h"
#include "demo_renderer.h"
#include "demo_shadow.h"
#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* The passes of one fluid frame, in order. */
typedef enum pbfcl_demo_fluid_pass {
    PBFCL_FLUID_PASS_SHADOW,    /* "sun": the particles' shadow map from the sun */
    PBFCL_FLUID_PASS_SCENE,     /* floor and box, copied to a texture for refraction */
    PBFCL_FLUID_PASS_DEPTH,     /* nearest sphere depth */
    PBFCL_FLUID_PASS_THICKNESS, /* additive thickness at half resolution */
    PBFCL_FLUID_PASS_SMOOTH,    /* smoothing of the depth (bilateral filter or curvature flow) */
    PBFCL_FLUID_PASS_SHADE,     /* shading and composite */
    PBFCL_FLUID_PASS_COUNT
} pbfcl_demo_fluid_pass;

/* Short names of the passes, for the HUD and console ("depth", ...). */
extern const char *const pbfcl_demo_fluid_pass_names[PBFCL_FLUID_PASS_COUNT];

#define PBFCL_FLUID_QUERY_FRAMES 3 /* frames of timestamp queries in flight */

/* The fluid renderer's programs, render targets and timer queries. */
typedef struct pbfcl_demo_fluid {
    GLuint depth_program, smooth_program, flow_program, thickness_program, shade_program;
    GLuint fullscreen_vao;
    GLuint scene_fbo, scene_tex;           /* floor and box colour, full size */
    GLuint depth_fbo, depth_tex, depth_rb; /* nearest sphere distance (R32F) + z-buffer */
    GLuint smooth_fbo, smooth_tex;         /* ping-pong partner of depth_tex */
    GLuint thickness_fbo, thickness_tex;   /* summed thickness (R16F), half size */
    int width, height;                     /* size the targets were made for, pixels */
    int smooth_iterations;                 /* horizontal + vertical filter pairs */
    bool curvature_flow;                   /* smooth by curvature flow, not the filter */
    int flow_iterations;                   /* curvature flow steps */
    GLuint queries[PBFCL_FLUID_QUERY_FRAMES][PBFCL_FLUID_PASS_COUNT + 1];
    long frame;                             /* frames drawn, for the query ring */
    double pass_ms[PBFCL_FLUID_PASS_COUNT]; /* smoothed GPU time per pass */
    GLint u_d_view, u_d_proj, u_d_radius, u_d_point_scale;
    GLint u_t_view, u_t_proj, u_t_radius, u_t_point_scale;
    GLint u_s_depth, u_s_rotation, u_s_world_radius, u_s_pixel_scale, u_s_depth_sigma, u_s_fill_gap,
        u_s_thickness;
    GLint u_f_depth, u_f_c, u_f_dt_scale, u_f_max_step;
    GLint u_c_depth, u_c_thickness, u_c_scene, u_c_proj, u_c_view, u_c_absorb, u_c_refract,
        u_c_fold, u_c_edge, u_c_light, u_c_shadow, u_c_shadowed, u_c_shadow_bias, u_c_sun,
        u_c_shadow_soft;
} pbfcl_demo_fluid;

/* Builds the programs from shader_dir; render targets are made on the first draw. */
pbfcl_status pbfcl_demo_fluid_create(pbfcl_demo_fluid *f, const char *shader_dir);

/* Releases every GL object; accepts a zeroed or half-built struct. */
void pbfcl_demo_fluid_destroy(pbfcl_demo_fluid *f);

/* (Re)makes the render targets for a w x h pixel viewport (no-op if the size is unchanged). */
pbfcl_status pbfcl_demo_fluid_resize(pbfcl_demo_fluid *f, int w, int h);

/* Draws the shadow map (where shadow is enabled), then clears and draws the floor, box and
 * fluid surface of r's particles into the bound default framebuffer. */
pbfcl_status pbfcl_demo_fluid_draw(pbfcl_demo_fluid *f, pbfcl_demo_renderer *r,
                                   pbfcl_demo_shadow *shadow, const pbfcl_demo_view *v);

/* Changes the iterations of the smoothing in use by `steps` notches (1 filter pair or 10 flow
 * steps each), within 0..16 pairs or 0..200 steps. */
void pbfcl_demo_fluid_change_smoothing(pbfcl_demo_fluid *f, int steps);

/* "bilateral xN" or "curvature flow xN", for the HUD and console. */
void pbfcl_demo_fluid_describe(const pbfcl_demo_fluid *f, char *text, size_t size);

/* The sum of the passes' smoothed GPU times, ms (0 until the first queries are read). */
double pbfcl_demo_fluid_total_ms(const pbfcl_demo_fluid *f);

#endif
