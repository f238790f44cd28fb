/* Frames of a solver drawn by the demo's renderer with no display (an EGL context,
 * demo_egl.h) and read back as arrays: RGB colour and linear depth, as the Python package's
 * render() returns them. Only the public API (include/pbfcl.h) is needed to use it. */
#ifndef PBFCL_DEMO_OFFSCREEN_H
#define PBFCL_DEMO_OFFSCREEN_H

#include "pbfcl.h"

#include <stdbool.h>

#define PBFCL_OFFSCREEN_MAX_SIZE 16384 /* the largest width or height, pixels */

/* The headless renderer: its GL context and the demo's renderer objects. */
typedef struct pbfcl_offscreen pbfcl_offscreen;

/* Where a frame is seen from and how it is drawn. */
typedef struct pbfcl_offscreen_camera {
    float eye[3], target[3]; /* m */
    float up[3];             /* any length, not along target - eye */
    float fov;               /* vertical field of view, degrees, in (0, 180) */
    int width, height;       /* pixels, 1..PBFCL_OFFSCREEN_MAX_SIZE */
    bool spheres;            /* lit spheres coloured by speed instead of the fluid surface */
} pbfcl_offscreen_camera;

/* Opens the EGL context and builds the renderer from the shaders in shader_dir (NULL: where
 * the demo finds them). Without an EGL display, PBFCL_ERR_UNSUPPORTED with what to install. */
pbfcl_status pbfcl_offscreen_create(pbfcl_offscreen **out, const char *shader_dir);

/* Releases everything; accepts NULL. */
void pbfcl_offscreen_destroy(pbfcl_offscreen *o);

/* Checks a camera: PBFCL_ERR_BAD_ARGUMENT naming the field that is wrong (not finite, a size
 * out of range, eye on target, up along the view). Needs no GL. */
pbfcl_status pbfcl_offscreen_check_camera(const pbfcl_offscreen_camera *c);

/* The demo's opening view of the solver's domain (a raised three-quarter view framing the box,
 * 45 degrees vertically): its eye and target. Needs no GL. */
pbfcl_status pbfcl_offscreen_fit(const pbfcl_solver *solver, float eye[3], float target[3]);

/* Draws the solver's particles (fluid, bodies and obstacles, spray, foam and bubbles), floor
 * and box from camera c and reads the frame back, top row first: rgb (height x width x 3 bytes)
 * and, unless NULL, depth (height x width floats: the distance in m from the eye's plane along
 * the view direction, +inf where nothing was drawn). */
pbfcl_status pbfcl_offscreen_render(pbfcl_offscreen *o, pbfcl_solver *solver,
                                    const pbfcl_offscreen_camera *c, unsigned char *rgb,
                                    float *depth);

#endif
