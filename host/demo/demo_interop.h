/* How particle positions reach OpenGL: through a GL vertex buffer shared with OpenCL
 * (cl_khr_gl_sharing), or, where sharing is not offered or fails, copied through pinned
 * host memory each frame. Both fill the same vertex buffer, so drawing is the same. */
#ifndef PBFCL_DEMO_INTEROP_H
#define PBFCL_DEMO_INTEROP_H

#include "clrt.h"
#include "demo_gl.h"
#include "sim.h"

#include <stdbool.h>

/* The transfer of positions from one simulation into one vertex buffer. */
typedef struct pbfcl_demo_interop {
    pbfcl_cl *cl;
    bool shared;   /* positions written straight into the GL buffer */
    bool gl_event; /* cl_khr_gl_event: acquire/release synchronise without glFinish/clFinish */
    GLuint vbo;
    size_t n;
    cl_mem gl_buf;      /* shared path: the vertex buffer as an OpenCL buffer */
    cl_mem staging_buf; /* copy path: positions on the device */
    cl_mem pinned_buf;  /* copy path: pinned host memory ... */
    void *pinned;       /* ... mapped here */
} pbfcl_demo_interop;

/* Selects the device and creates cl's context; with want_sharing and a device offering
 * cl_khr_gl_sharing, the context is tied to the current GL context (*sharing set true).
 * A failed sharing set-up warns and falls back to a plain context. why (may be NULL) gets
 * the reason when *sharing is false. */
pbfcl_status pbfcl_demo_interop_open_cl(pbfcl_cl *cl, const char *device_spec, bool want_sharing,
                                        bool *sharing, char *why, size_t why_size);

/* Prepares the transfer of n positions into vbo (which holds n float4); uses sharing when
 * cl's context shares with GL, else (or if wrapping vbo fails, with a warning) the copy. */
pbfcl_status pbfcl_demo_interop_create(pbfcl_demo_interop *ip, pbfcl_cl *cl, bool sharing,
                                       GLuint vbo, size_t n);

/* Releases the OpenCL objects; accepts a zeroed or half-built struct. */
void pbfcl_demo_interop_destroy(pbfcl_demo_interop *ip);

/* Writes the simulation's current positions (float4 x, y, z, speed) into the vertex buffer;
 * on return GL may draw from it. */
pbfcl_status pbfcl_demo_interop_update(pbfcl_demo_interop *ip, pbfcl_sim *sim);

/* A short name for the path in use, for the console and the HUD. */
const char *pbfcl_demo_interop_path(const pbfcl_demo_interop *ip);

#endif
