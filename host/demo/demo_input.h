/* The demo's input: SDL events turned into camera moves (done here) and actions for the main
 * loop (pause, step, reset, scenes, particle count, tilt, shake, push, shape drag, help,
 * colour, render mode, fluid smoothing, quit). */
#ifndef PBFCL_DEMO_INPUT_H
#define PBFCL_DEMO_INPUT_H

#include "demo_camera.h"
#include "demo_params.h"
#include "demo_window.h"

#include <stdbool.h>

/* The actions requested since the last frame and the mouse state. */
typedef struct pbfcl_demo_input {
    bool quit, pause, step, reset, help, color, tilt, shake;
    bool shot;                /* write a screenshot of this frame */
    bool render;              /* switch between fluid surface and spheres */
    bool diffuse;             /* turn spray, foam and bubbles on / off */
    bool smooth_method;       /* switch the fluid smoothing: bilateral / curvature flow */
    int smooth_change;        /* +1 more fluid smoothing iterations, -1 fewer, 0 no change */
    int scene;                /* k > 0: switch to the k-th built-in scene (1 to 10); 0: no change */
    int scene_cycle;          /* +1 / -1: switch to the next / previous built-in scene; 0: none */
    int count_change;         /* +1 more particles, -1 fewer, 0 no change */
    pbfcl_demo_tune tune;     /* the solver parameter to change when tune_notch != 0 */
    int tune_notch;           /* +1 one notch up, -1 down, 0 no change */
    float turn_pitch;         /* degrees to turn gravity about x (arrow keys up / down) */
    float turn_roll;          /* degrees to turn gravity about z (arrow keys left / right) */
    bool left, middle, right; /* buttons held */
    int mouse_x, mouse_y;     /* cursor, screen points from the window's top-left */
    float push_dx, push_dy;   /* right-drag motion since the last frame, screen points */
    bool grab;                /* ctrl + left held: dragging a collision shape, not orbiting */
    float grab_dx, grab_dy;   /* its motion since the last frame, screen points */
} pbfcl_demo_input;

/* Clears the per-frame actions (not the buttons held). */
void pbfcl_demo_input_begin_frame(pbfcl_demo_input *in);

/* Handles every pending event: moves the camera, updates the window's size on resize and
 * minimise, and records actions in `in`. */
void pbfcl_demo_input_poll(pbfcl_demo_input *in, pbfcl_demo_camera *cam, pbfcl_demo_window *w);

/* The help overlay's lines (NULL-terminated). */
extern const char *const pbfcl_demo_help_lines[];

#endif
