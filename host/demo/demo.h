/* The interactive SDL2/OpenGL demo: its options and its entry point. Built only when SDL2
 * and GLEW are found (PBFCL_HAVE_DEMO). */
#ifndef PBFCL_DEMO_H
#define PBFCL_DEMO_H

#include "../app/scene_options.h"

#include <stdbool.h>

/* What the particles' colour shows. */
typedef enum pbfcl_demo_color { PBFCL_DEMO_COLOR_SPEED, PBFCL_DEMO_COLOR_DENSITY } pbfcl_demo_color;

/* How the particles are drawn: a smoothed fluid surface (the default) or lit spheres. */
typedef enum pbfcl_demo_render {
    PBFCL_DEMO_RENDER_FLUID,
    PBFCL_DEMO_RENDER_SPHERES
} pbfcl_demo_render;

/* Everything `pbfcl demo` takes on the command line. */
typedef struct pbfcl_demo_options {
    pbfcl_scene_options scene; /* --scene, --particles, --device and solver overrides */
    bool no_gl_sharing;        /* --no-gl-sharing: copy positions through the host */
    bool no_vsync;             /* --no-vsync */
    bool no_shadows;           /* --no-shadows: no shadow map (the floor and fluid unshadowed) */
    bool no_diffuse;           /* --no-diffuse: no spray, foam and bubbles (D turns them on) */
    bool paused;               /* --paused: start paused (space resumes) */
    int frames;                /* --frames: run this many frames and exit; 0 = interactive */
    const char *screenshot;    /* --screenshot: PNG of the last frame (needs frames > 0) */
    const char *record;        /* --record DIR: a PNG per simulated frame into DIR, or NULL */
    bool force;                /* --force: replace the frames already in the --record folder */
    pbfcl_demo_color color;    /* --color speed|density */
    pbfcl_demo_render render;  /* --render fluid|spheres */
    bool curvature_flow;       /* --smooth curvature (else bilateral) */
    int width, height;         /* --size WxH: the window's size in screen points */
} pbfcl_demo_options;

/* Runs the demo until the window is closed (or for o->frames frames); returns the exit
 * code. */
int pbfcl_demo_run(const pbfcl_demo_options *o);

/* True if this build can write PNG screenshots (libpng was found). */
bool pbfcl_demo_screenshot_supported(void);

#endif
