/* The window-system half of CL/GL sharing: reads the current GL context and its display or
 * device context, and names them in OpenCL context properties (cl_khr_gl_sharing, or the
 * Apple share group). Kept apart so that no other file includes the native GL headers. */
#include "demo_glctx.h"

#include <stdio.h>

#if defined(_WIN32)
#include <windows.h>
#include <CL/cl_gl.h>
#elif defined(__APPLE__)
#include <OpenGL/OpenGL.h>
#ifndef CL_CONTEXT_PROPERTY_USE_CGL_SHAREGROUP_APPLE /* Apple's cl_gl_ext.h; not in Khronos' */
#define CL_CONTEXT_PROPERTY_USE_CGL_SHAREGROUP_APPLE 0x10000000
#endif
#else
#include <CL/cl_gl.h>
#include <GL/glx.h>
#endif

int pbfcl_demo_gl_context_props(cl_context_properties *props, int max, char *why, size_t why_size)
{
    int n = 0;
    if (max < 5) {
        snprintf(why, why_size, "no room for the context properties");
        return 0;
    }
#if defined(_WIN32)
    HGLRC ctx = wglGetCurrentContext();
    HDC dc = wglGetCurrentDC();
    if (!ctx || !dc) {
        snprintf(why, why_size, "no current WGL context");
        return 0;
    }
    props[n++] = CL_GL_CONTEXT_KHR;
    props[n++] = (cl_context_properties)ctx;
    props[n++] = CL_WGL_HDC_KHR;
    props[n++] = (cl_context_properties)dc;
#elif defined(__APPLE__)
    CGLContextObj ctx = CGLGetCurrentContext();
    CGLShareGroupObj group = ctx ? CGLGetShareGroup(ctx) : NULL;
    if (!group) {
        snprintf(why, why_size, "no current CGL context");
        return 0;
    }
    props[n++] = CL_CONTEXT_PROPERTY_USE_CGL_SHAREGROUP_APPLE;
    props[n++] = (cl_context_properties)group;
#else
    GLXContext ctx = glXGetCurrentContext();
    Display *display = glXGetCurrentDisplay();
    if (!ctx || !display) {
        snprintf(why, why_size,
                 "no current GLX context (is SDL using Wayland/EGL? set "
                 "SDL_VIDEODRIVER=x11 to share through GLX)");
        return 0;
    }
    props[n++] = CL_GL_CONTEXT_KHR;
    props[n++] = (cl_context_properties)ctx;
    props[n++] = CL_GLX_DISPLAY_KHR;
    props[n++] = (cl_context_properties)display;
#endif
    props[n] = 0;
    return n;
}
