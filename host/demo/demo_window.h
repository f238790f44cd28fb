/* The demo's window and its OpenGL 3.3 core context: SDL2 set-up, GLEW, vsync, and the
 * drawable size in pixels (which differs from the window size on HiDPI screens). */
#ifndef PBFCL_DEMO_WINDOW_H
#define PBFCL_DEMO_WINDOW_H

#include "demo_gl.h"
#include "runtime/pbfcl_error.h"

#include <stdbool.h>

/* An SDL window with a current OpenGL 3.3 core context. */
typedef struct pbfcl_demo_window {
    SDL_Window *window;
    SDL_GLContext gl;
    bool sdl_started;
    int width, height;           /* window size, screen points */
    int draw_width, draw_height; /* drawable size, pixels */
    bool minimized;
    bool vsync; /* swap interval 1 was accepted */
} pbfcl_demo_window;

/* Opens the window and makes a 3.3 core context current; a missing display or an older
 * OpenGL gets a message saying what was found and what to do. Cleans up on failure. */
pbfcl_status pbfcl_demo_window_create(pbfcl_demo_window *w, const char *title, int width,
                                      int height, bool vsync);

/* Closes the window and shuts SDL down; accepts a zeroed or half-built struct. */
void pbfcl_demo_window_destroy(pbfcl_demo_window *w);

/* Re-reads the window and drawable sizes (after a resize or a move between screens). */
void pbfcl_demo_window_update_size(pbfcl_demo_window *w);

/* Pixels per screen point (1 on ordinary screens, 2 on most HiDPI ones). */
float pbfcl_demo_window_pixel_scale(const pbfcl_demo_window *w);

/* The OpenGL renderer and version strings of the current context, for messages. */
const char *pbfcl_demo_gl_renderer(void);

#endif
