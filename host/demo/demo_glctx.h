/* The OpenCL context properties that tie a context to the current OpenGL context, per
 * window system: GLX on X11, WGL on Windows, CGL share groups on macOS. */
#ifndef PBFCL_DEMO_GLCTX_H
#define PBFCL_DEMO_GLCTX_H

#include <CL/cl.h>
#include <stddef.h>

/* Writes the GL-sharing properties (pairs, zero-terminated) for the current GL context into
 * props (room for max entries). Returns the number of entries before the terminating zero,
 * or 0 with why (a short reason) filled in when there is no current context to share. */
int pbfcl_demo_gl_context_props(cl_context_properties *props, int max, char *why, size_t why_size);

#endif
