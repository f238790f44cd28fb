/* How particle positions reach OpenGL: through a GL vertex buffer shared with OpenCL
 * (cl_khr_gl_sharing), or, where sharing is not offered or fails, copied through pinned
 * host memory each frame. Both fill the same vertex buffer, so drawing is the same. The
 * positions come from the solver's render hook, pbfcl_solver_copy_positions (include/pbfcl.h). */
#ifndef PBFCL_DEMO_INTEROP_H
#define PBFCL_DEMO_INTEROP_H

#include "demo_gl.h"
#include "pbfcl.h"

#include <stdbool.h>

/* The transfer of positions from one solver into one vertex buffer. */
typedef struct pbfcl_demo_interop {
    cl_context context; /* the pbfcl context's (not owned) */
    cl_command_queue queue;
    bool shared;   /* positions written straight into the GL buffer */
    bool gl_event; /* cl_khr_gl_event: acquire/release synchronise without glFinish/clFinish */
    GLuint vbo;
    size_t n;
    cl_mem gl_buf;      /* shared path: the vertex buffer as an OpenCL buffer */
    cl_mem staging_buf; /* copy path: positions on the device */
    cl_mem pinned_buf;  /* copy path: pinned host memory ... */
    void *pinned;       /* ... mapped here */
} pbfcl_demo_interop;

/* Opens a pbfcl context on the device device_spec names (NULL: $PBFCL_DEVICE, else the
 * library's choice); with want_sharing and a device offering cl_khr_gl_sharing, the context
 * is tied to the current GL context (*sharing set true). A failed sharing set-up warns and
 * falls back to a plain context. why (may be NULL) gets the reason when *sharing is false. */
pbfcl_status pbfcl_demo_interop_open_cl(pbfcl_context **ctx, const char *device_spec,
                                        bool want_sharing, bool *sharing, char *why,
                                        size_t why_size);

/* Prepares the transfer of up to n positions (the solver's active particles) into vbo (which
 * holds n float4); uses sharing when ctx shares with GL, else (or if wrapping vbo fails, with
 * a warning) the copy. */
pbfcl_status pbfcl_demo_interop_create(pbfcl_demo_interop *ip, pbfcl_context *ctx, bool sharing,
                                       GLuint vbo, size_t n);

/* Releases the OpenCL objects; accepts a zeroed or half-built struct. */
void pbfcl_demo_interop_destroy(pbfcl_demo_interop *ip);

/* Writes the solver's current positions (float4 x, y, z, speed, in the caller's particle
 * order) into the vertex buffer; on return GL may draw from it. */
pbfcl_status pbfcl_demo_interop_update(pbfcl_demo_interop *ip, pbfcl_solver *solver);

/* A short name for the path in use, for the console and the HUD. */
const char *pbfcl_demo_interop_path(const pbfcl_demo_interop *ip);

#endif
