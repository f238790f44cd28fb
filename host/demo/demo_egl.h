/* A headless OpenGL 3.3 core context through EGL, with no window system: on an EGL device
 * (EGL_EXT_platform_device: a GPU, or Mesa's software device) or else Mesa's surfaceless
 * platform, drawing into a pbuffer of the frame's size, which is the default framebuffer the
 * demo's passes draw into and read back. */
#ifndef PBFCL_DEMO_EGL_H
#define PBFCL_DEMO_EGL_H

#include "runtime/pbfcl_error.h"

#include <EGL/egl.h>

/* The EGL display, context and the pbuffer of the current size. */
typedef struct pbfcl_demo_egl {
    EGLDisplay display;
    EGLConfig config;
    EGLContext context;
    EGLSurface surface; /* the pbuffer, or EGL_NO_SURFACE before the first size */
    int width, height;  /* the pbuffer's size, pixels */
    char source[64];    /* which display: "EGL device 0", "Mesa surfaceless" */
} pbfcl_demo_egl;

/* Opens the first display that makes a 3.3 core context, makes it current with a 1x1 pbuffer
 * and loads OpenGL (GLEW). Without one, says what was tried and what to install. */
pbfcl_status pbfcl_demo_egl_create(pbfcl_demo_egl *e);

/* Makes the context current with a width x height pbuffer (a new one when the size changes);
 * a size the driver refuses gets a message with its limits. */
pbfcl_status pbfcl_demo_egl_use(pbfcl_demo_egl *e, int width, int height);

/* Makes no context current on this thread, so that the next use may come from another. */
void pbfcl_demo_egl_release(pbfcl_demo_egl *e);

/* Releases the context, pbuffer and display; accepts a zeroed or half-built struct. */
void pbfcl_demo_egl_destroy(pbfcl_demo_egl *e);

#endif
