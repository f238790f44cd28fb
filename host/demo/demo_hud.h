/* The heads-up display: frame rate, step and render times, particle count, device, how
 * positions reach OpenGL, render mode and the fluid passes' times, state lines, and the help
 * overlay. */
#ifndef PBFCL_DEMO_HUD_H
#define PBFCL_DEMO_HUD_H

#include "demo.h"
#include "demo_text.h"

#include <stdbool.h>
#include <stddef.h>

/* What the HUD shows this frame. */
typedef struct pbfcl_demo_hud {
    const char *scene;
    double fps, sim_ms, render_ms; /* sim_ms: device time per step; render_ms: GPU time */
    size_t particles;
    int substeps;       /* of the last step (they adapt to the flow) */
    const char *method; /* the solver's method, "pbf" or "sph" (pbfcl_method_name) */
    const char *device;
    const char *path;      /* "CL/GL sharing" or "host copy" */
    const char *color;     /* "speed" or "density" */
    const char *render;    /* "fluid" or "spheres" */
    const char *smoothing; /* the fluid's smoothing, e.g. "bilateral x2" */
    const char *passes;    /* the fluid passes' GPU times, first line, or NULL */
    const char *passes2;   /* ... and second line, or NULL */
    const char *settings;  /* the live solver settings, one line */
    const char *gravity;   /* gravity as the keys turned it, one line */
    const char *diffuse;   /* spray, foam and bubbles: count and ms per step, or off */
    bool paused, tilted, help;
    bool legend;                 /* draw the colour scale's legend (spheres mode) */
    pbfcl_demo_color color_mode; /* its scale */
    float range[2];              /* the values at its ends */
    long recording;              /* frames recorded so far while --record is on, else -1 */
    const char *message;         /* a warning or error to show, or NULL */
} pbfcl_demo_hud;

/* Queues and draws the HUD over a w x h pixel viewport; scale is pixels per screen point. */
void pbfcl_demo_hud_draw(pbfcl_demo_text *t, const pbfcl_demo_hud *h, int w, int height,
                         float scale);

#endif
