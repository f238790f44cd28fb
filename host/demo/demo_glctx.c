/* The window-system half of CL/GL sharing: reads the current GL context and its display or
 * device context, and names them in OpenCL context properties (cl_khr_gl_sharing, or the
 * Apple share group). Kept apart so that no other file includes the native GL headers.
 * On Linux the context is GLX's (X11) or, when SDL made it through EGL (its offscreen driver
 * on a headless GPU, or Wayland), EGL's: EGL is looked up in the libEGL that SDL has already
 * loaded, so the demo does not link it. */
#include "demo_glctx.h"

#include <stdbool.h>
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
#include <dlfcn.h>
#endif

#if !defined(_WIN32) && !defined(__APPLE__)
/* The current EGL context and display, if SDL loaded libEGL and made one current. */
static bool current_egl(void **ctx, void **display)
{
    typedef void *(*egl_get_fn)(void);
    *ctx = *display = NULL;
    void *egl = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!egl)
        return false;
    egl_get_fn get_context = (egl_get_fn)dlsym(egl, "eglGetCurrentContext");
    egl_get_fn get_display = (egl_get_fn)dlsym(egl, "eglGetCurrentDisplay");
    if (get_context && get_display) {
        *ctx = get_context();
        *display = get_display();
    }
    dlclose(egl); /* drops the reference NOLOAD took; SDL keeps the library loaded */
    return *ctx && *display;
}
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
    void *egl_ctx, *egl_display;
    if (ctx && display) {
        props[n++] = CL_GL_CONTEXT_KHR;
        props[n++] = (cl_context_properties)ctx;
        props[n++] = CL_GLX_DISPLAY_KHR;
        props[n++] = (cl_context_properties)display;
    } else if (current_egl(&egl_ctx, &egl_display)) {
        props[n++] = CL_GL_CONTEXT_KHR;
        props[n++] = (cl_context_properties)egl_ctx;
        props[n++] = CL_EGL_DISPLAY_KHR;
        props[n++] = (cl_context_properties)egl_display;
    } else {
        snprintf(why, why_size, "no current GLX or EGL context");
        return 0;
    }
#endif
    props[n] = 0;
    return n;
}
