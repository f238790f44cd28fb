/* The headless EGL context (demo_egl.h): the devices of EGL_EXT_device_enumeration in order,
 * then Mesa's surfaceless platform; the first that initialises and makes an OpenGL 3.3 core
 * context with a pbuffer configuration is used. */
#include "demo_egl.h"
#include "demo_gl.h"

#include <EGL/eglext.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEVICES 16

/* What the failed attempts were, for the message when none works. */
typedef struct tried {
    char text[1024];
} tried;

static void note(tried *t, const char *source, const char *what)
{
    size_t used = strlen(t->text);
    snprintf(t->text + used, sizeof t->text - used, "%s%s: %s", used ? "; " : "", source, what);
}

static const EGLint config_attribs[] = {EGL_SURFACE_TYPE,
                                        EGL_PBUFFER_BIT,
                                        EGL_RED_SIZE,
                                        8,
                                        EGL_GREEN_SIZE,
                                        8,
                                        EGL_BLUE_SIZE,
                                        8,
                                        EGL_DEPTH_SIZE,
                                        24,
                                        EGL_RENDERABLE_TYPE,
                                        EGL_OPENGL_BIT,
                                        EGL_NONE};
static const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                         3,
                                         EGL_CONTEXT_MINOR_VERSION,
                                         3,
                                         EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                         EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                         EGL_NONE};

/* Initialises display and makes the context on it; false (with the reason noted, the display
 * terminated) if it cannot. */
static bool try_display(pbfcl_demo_egl *e, EGLDisplay display, const char *source, tried *t)
{
    EGLint major = 0, minor = 0, configs = 0;
    if (display == EGL_NO_DISPLAY) {
        note(t, source, "no display");
        return false;
    }
    if (!eglInitialize(display, &major, &minor)) {
        note(t, source, "eglInitialize failed");
        return false;
    }
    const char *why = NULL;
    if (!eglChooseConfig(display, config_attribs, &e->config, 1, &configs) || configs < 1)
        why = "no pbuffer configuration with RGB8 and a 24-bit depth buffer for OpenGL";
    else if (!eglBindAPI(EGL_OPENGL_API))
        why = "desktop OpenGL is not offered (eglBindAPI)";
    else if ((e->context = eglCreateContext(display, e->config, EGL_NO_CONTEXT, context_attribs)) ==
             EGL_NO_CONTEXT)
        why = "no OpenGL 3.3 core context";
    if (why) {
        note(t, source, why);
        eglTerminate(display);
        return false;
    }
    e->display = display;
    snprintf(e->source, sizeof e->source, "%s", source);
    return true;
}

/* The EGL devices (a GPU each, or Mesa's software device), in EGL's order. */
static bool open_device(pbfcl_demo_egl *e, tried *t)
{
    PFNEGLQUERYDEVICESEXTPROC query_devices =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDeviceEXT devices[MAX_DEVICES];
    EGLint count = 0;
    if (!query_devices || !platform_display) {
        note(t, "EGL devices", "EGL_EXT_device_enumeration is not offered");
        return false;
    }
    if (!query_devices(MAX_DEVICES, devices, &count) || count == 0) {
        note(t, "EGL devices", "none found");
        return false;
    }
    for (EGLint i = 0; i < count; i++) {
        char source[32];
        snprintf(source, sizeof source, "EGL device %d", (int)i);
        if (try_display(e, platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL), source, t))
            return true;
    }
    return false;
}

static bool open_surfaceless(pbfcl_demo_egl *e, tried *t)
{
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    const char *ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!platform_display || !ext || !strstr(ext, "EGL_MESA_platform_surfaceless")) {
        note(t, "Mesa surfaceless", "EGL_MESA_platform_surfaceless is not offered");
        return false;
    }
    EGLDisplay d = platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    return try_display(e, d, "Mesa surfaceless", t);
}

/* GLEW with the context current: a GLEW built for GLX loads OpenGL and then fails on the GLX
 * extensions (demo_window.c says more); OpenGL 3.3 loaded is what counts. */
static pbfcl_status load_gl(const pbfcl_demo_egl *e)
{
    glewExperimental = GL_TRUE;
    GLenum err = glewInit();
    glGetError();
    if (err == 4 /* GLEW_ERROR_NO_GLX_DISPLAY */ && GLEW_VERSION_3_3)
        err = GLEW_OK;
    if (err != GLEW_OK) {
        pbfcl_errorf("GLEW could not load OpenGL in the EGL context on %s: %s (GLEW error %u)",
                     e->source, (const char *)glewGetErrorString(err), (unsigned)err);
        return PBFCL_ERR_UNSUPPORTED;
    }
    if (!GLEW_VERSION_3_3) {
        pbfcl_errorf("rendering needs OpenGL 3.3, but the EGL context on %s is OpenGL %s on %s",
                     e->source, (const char *)glGetString(GL_VERSION),
                     (const char *)glGetString(GL_RENDERER));
        return PBFCL_ERR_UNSUPPORTED;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_egl_create(pbfcl_demo_egl *e)
{
    memset(e, 0, sizeof *e);
    e->display = EGL_NO_DISPLAY;
    e->context = EGL_NO_CONTEXT;
    e->surface = EGL_NO_SURFACE;
    tried t = {{0}};
    if (!open_device(e, &t) && !open_surfaceless(e, &t)) {
        pbfcl_errorf("no EGL display for headless OpenGL rendering (%s). Install an EGL driver: "
                     "Mesa's (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri; llvmpipe needs no "
                     "GPU) or the GPU vendor's (NVIDIA: libnvidia-egl)",
                     t.text);
        return PBFCL_ERR_UNSUPPORTED;
    }
    pbfcl_status s = pbfcl_demo_egl_use(e, 1, 1);
    if (s == PBFCL_OK)
        s = load_gl(e);
    if (s != PBFCL_OK)
        pbfcl_demo_egl_destroy(e);
    return s;
}

pbfcl_status pbfcl_demo_egl_use(pbfcl_demo_egl *e, int width, int height)
{
    if (e->surface != EGL_NO_SURFACE && width == e->width && height == e->height) {
        if (eglMakeCurrent(e->display, e->surface, e->surface, e->context))
            return PBFCL_OK;
        pbfcl_errorf("eglMakeCurrent on %s failed (EGL error 0x%x)", e->source,
                     (unsigned)eglGetError());
        return PBFCL_ERR_UNSUPPORTED;
    }
    const EGLint attribs[] = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE};
    EGLSurface surface = eglCreatePbufferSurface(e->display, e->config, attribs);
    if (surface == EGL_NO_SURFACE || !eglMakeCurrent(e->display, surface, surface, e->context)) {
        EGLint w = 0, h = 0, err = eglGetError();
        eglGetConfigAttrib(e->display, e->config, EGL_MAX_PBUFFER_WIDTH, &w);
        eglGetConfigAttrib(e->display, e->config, EGL_MAX_PBUFFER_HEIGHT, &h);
        pbfcl_errorf("EGL on %s cannot make a %dx%d pbuffer (EGL error 0x%x; its largest is "
                     "%dx%d)",
                     e->source, width, height, (unsigned)err, (int)w, (int)h);
        if (surface != EGL_NO_SURFACE)
            eglDestroySurface(e->display, surface);
        return PBFCL_ERR_UNSUPPORTED;
    }
    if (e->surface != EGL_NO_SURFACE)
        eglDestroySurface(e->display, e->surface);
    e->surface = surface;
    e->width = width;
    e->height = height;
    return PBFCL_OK;
}

void pbfcl_demo_egl_release(pbfcl_demo_egl *e)
{
    eglMakeCurrent(e->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}

void pbfcl_demo_egl_destroy(pbfcl_demo_egl *e)
{
    if (!e || !e->display || e->display == EGL_NO_DISPLAY) {
        if (e)
            memset(e, 0, sizeof *e);
        return;
    }
    eglMakeCurrent(e->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (e->surface != EGL_NO_SURFACE)
        eglDestroySurface(e->display, e->surface);
    if (e->context != EGL_NO_CONTEXT)
        eglDestroyContext(e->display, e->context);
    eglTerminate(e->display);
    memset(e, 0, sizeof *e);
}
