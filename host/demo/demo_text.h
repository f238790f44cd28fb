/* Screen-space text and panels for the HUD: the embedded font in a small texture, strings
 * and rectangles batched as textured quads and drawn in one call. */
#ifndef PBFCL_DEMO_TEXT_H
#define PBFCL_DEMO_TEXT_H

#include "demo_gl.h"
#include "runtime/pbfcl_error.h"

#include <stddef.h>

/* The text renderer's GL objects and the quads of the frame being built. */
typedef struct pbfcl_demo_text {
    GLuint program, vao, vbo, texture;
    GLint u_viewport, u_atlas;
    float *verts;           /* x, y, u, v, r, g, b, a per vertex */
    size_t count, capacity; /* vertices */
    size_t vbo_capacity;    /* vertices the VBO holds */
} pbfcl_demo_text;

/* Builds the font texture and the shader program from shader_dir. */
pbfcl_status pbfcl_demo_text_create(pbfcl_demo_text *t, const char *shader_dir);

/* Releases the GL objects; accepts a zeroed or half-built struct. */
void pbfcl_demo_text_destroy(pbfcl_demo_text *t);

/* Width and height in pixels of one character cell at the given scale. */
float pbfcl_demo_text_advance(float scale);
float pbfcl_demo_text_line_height(float scale);

/* Queues a filled rectangle (pixels from the top-left). */
void pbfcl_demo_text_rect(pbfcl_demo_text *t, float x, float y, float w, float h,
                          const float rgba[4]);

/* Queues a string with its top-left at (x, y) pixels; returns its width in pixels. */
float pbfcl_demo_text_string(pbfcl_demo_text *t, float x, float y, float scale, const char *s,
                             const float rgba[4]);

/* Draws everything queued over a viewport of w x h pixels and empties the queue. */
void pbfcl_demo_text_flush(pbfcl_demo_text *t, int w, int h);

#endif
