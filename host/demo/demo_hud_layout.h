/* What the HUD shows and how its status panel is laid out, with no GL: the panel's lines,
 * each elided to a fixed number of columns, so that the panel's width is bounded whatever the
 * device's or the scene's name, and the panel's scale and extent in pixels. */
#ifndef PBFCL_DEMO_HUD_LAYOUT_H
#define PBFCL_DEMO_HUD_LAYOUT_H

#include "demo.h"

#include <stdbool.h>
#include <stddef.h>

#define PBFCL_DEMO_HUD_COLUMNS 50 /* the most characters on a line of the status panel */
#define PBFCL_DEMO_HUD_LINES 11   /* the most lines of the status panel */

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

/* The status panel's lines, none longer than PBFCL_DEMO_HUD_COLUMNS characters. */
typedef struct pbfcl_demo_hud_text {
    char line[PBFCL_DEMO_HUD_LINES][PBFCL_DEMO_HUD_COLUMNS + 1];
    bool accent[PBFCL_DEMO_HUD_LINES]; /* drawn in the accent colour: the title, the message */
    int count;                         /* lines in use */
    int status_count;                  /* of them, the lines before the message */
} pbfcl_demo_hud_text;

/* Copies text into out (of size bytes); text longer than columns characters keeps its start
 * and its end with "..." between them (the font has no ellipsis glyph), so that
 * "DEVICE PTHREAD-SKYLAKE-AVX512-INTEL(R) XEON(R) PLATINUM 8480+" stays recognisable. */
void pbfcl_demo_hud_elide(char *out, size_t size, const char *text, size_t columns);

/* The status panel's lines for h. */
void pbfcl_demo_hud_layout(const pbfcl_demo_hud *h, pbfcl_demo_hud_text *t);

/* The font scale of the panels over a window w pixels wide with scale pixels per screen
 * point: font pixels twice the size of screen points, unless the window is too narrow. */
float pbfcl_demo_hud_font_scale(const pbfcl_demo_hud_text *t, int w, float scale);

/* The panel's top-left corner (x and y alike) and its inner padding, in pixels. */
float pbfcl_demo_hud_margin(float scale);
float pbfcl_demo_hud_padding(float font_scale);

/* The rightmost pixel column the status panel can reach over a window with scale pixels per
 * screen point, whatever its lines say: they are at most PBFCL_DEMO_HUD_COLUMNS long, drawn at
 * most at twice the scale. */
float pbfcl_demo_hud_right_bound(float scale);

#endif
