/* The demo's window: SDL2 video start-up with clear messages when there is no display or
 * no OpenGL 3.3 core profile, GLEW initialisation, vsync and drawable sizes. */
#include "demo_window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void no_display_message(const char *what)
{
    const char *display = getenv("DISPLAY");
    const char *wayland = getenv("WAYLAND_DISPLAY");
    pbfcl_errorf("cannot open a window: %s (SDL: %s)", what, SDL_GetError());
    if ((!display || !*display) && (!wayland || !*wayland))
        fprintf(stderr, "No display found (DISPLAY and WAYLAND_DISPLAY are unset). The demo "
                        "needs a desktop session or a virtual display (xvfb-run); for headless "
                        "simulation use `pbfcl run` instead.\n");
    else
        fprintf(stderr, "Check that the display is reachable, or use `pbfcl run` for headless "
                        "simulation.\n");
}

/* After a failed 3.3 core context: makes a default context to say what the display offers. */
static void report_gl_found(SDL_Window *window)
{
    SDL_GL_ResetAttributes();
    SDL_GLContext probe = SDL_GL_CreateContext(window);
    const char *version = NULL, *renderer = NULL;
    if (probe) {
        typedef const GLubyte *(GLAPIENTRY * get_string_fn)(GLenum);
        get_string_fn get = (get_string_fn)SDL_GL_GetProcAddress("glGetString");
        if (get) {
            version = (const char *)get(GL_VERSION);
            renderer = (const char *)get(GL_RENDERER);
        }
    }
    pbfcl_errorf("the demo needs OpenGL 3.3 (core profile), but the display offers %s%s%s%s",
                 version ? "OpenGL " : "no OpenGL context at all", version ? version : "",
                 renderer ? " on " : "", renderer ? renderer : "");
    fprintf(stderr, "Update the graphics driver (or Mesa), or use `pbfcl run` for headless "
                    "simulation.\n");
    if (probe)
        SDL_GL_DeleteContext(probe);
}

/* True where a window system is plausibly reachable. On X11/Wayland systems with neither
 * variable set, SDL would try consoles (KMSDRM) or EGL off-screen paths that GLEW's GLX build
 * cannot load; SDL_VIDEODRIVER set by the user is always honoured. */
static bool display_present(void)
{
#if defined(_WIN32) || defined(__APPLE__)
    return true;
#else
    const char *vars[] = {"DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return true;
    }
    return false;
#endif
}

static pbfcl_status open_window(pbfcl_demo_window *w, const char *title, int width, int height)
{
    if (!display_present()) {
        SDL_SetError("no display");
        no_display_message("there is no display to open it on");
        return PBFCL_ERR_UNSUPPORTED;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        no_display_message("SDL video start-up failed");
        return PBFCL_ERR_UNSUPPORTED;
    }
    w->sdl_started = true;
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
#ifdef __APPLE__
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, SDL_GL_CONTEXT_FORWARD_COMPATIBLE_FLAG);
#endif
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
    w->window =
        SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width, height,
                         SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!w->window) {
        no_display_message("SDL_CreateWindow failed");
        return PBFCL_ERR_UNSUPPORTED;
    }
    w->gl = SDL_GL_CreateContext(w->window);
    if (!w->gl) {
        report_gl_found(w->window);
        return PBFCL_ERR_UNSUPPORTED;
    }
    return PBFCL_OK;
}

static pbfcl_status start_glew(void)
{
    glewExperimental = GL_TRUE; /* core profiles need it for GLEW to load every entry point */
    GLenum err = glewInit();
    glGetError(); /* glewInit may leave GL_INVALID_ENUM behind on core profiles */
    /* A GLEW built for GLX loads the OpenGL entry points first and then fails on the GLX
     * extensions when the context is EGL's (SDL's offscreen driver on a headless GPU, or
     * Wayland): OpenGL itself is loaded, and the demo uses no GLX extension. */
    if (err == 4 /* GLEW_ERROR_NO_GLX_DISPLAY */ && GLEW_VERSION_3_3)
        err = GLEW_OK;
    if (err != GLEW_OK) {
        const char *driver = SDL_GetCurrentVideoDriver();
        pbfcl_errorf("GLEW could not load OpenGL through SDL's '%s' video driver: %s (GLEW "
                     "error %u)",
                     driver ? driver : "?", (const char *)glewGetErrorString(err), (unsigned)err);
        if (err == 4 /* GLEW_ERROR_NO_GLX_DISPLAY: this GLEW needs GLX */)
            fprintf(stderr, "This GLEW loads OpenGL through GLX: run under X11 (or XWayland with "
                            "SDL_VIDEODRIVER=x11), or use `pbfcl run` for headless "
                            "simulation.\n");
        return PBFCL_ERR_UNSUPPORTED;
    }
    if (!GLEW_VERSION_3_3) {
        pbfcl_errorf("the demo needs OpenGL 3.3, but the context is OpenGL %s on %s",
                     (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_RENDERER));
        return PBFCL_ERR_UNSUPPORTED;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_window_create(pbfcl_demo_window *w, const char *title, int width,
                                      int height, bool vsync)
{
    memset(w, 0, sizeof *w);
    pbfcl_status s = open_window(w, title, width, height);
    if (s == PBFCL_OK)
        s = start_glew();
    if (s != PBFCL_OK) {
        pbfcl_demo_window_destroy(w);
        return s;
    }
    w->vsync = vsync && SDL_GL_SetSwapInterval(1) == 0;
    if (!vsync)
        SDL_GL_SetSwapInterval(0);
    pbfcl_demo_window_update_size(w);
    return PBFCL_OK;
}

void pbfcl_demo_window_destroy(pbfcl_demo_window *w)
{
    if (!w)
        return;
    if (w->gl)
        SDL_GL_DeleteContext(w->gl);
    if (w->window)
        SDL_DestroyWindow(w->window);
    if (w->sdl_started)
        SDL_Quit();
    memset(w, 0, sizeof *w);
}

void pbfcl_demo_window_update_size(pbfcl_demo_window *w)
{
    SDL_GetWindowSize(w->window, &w->width, &w->height);
    SDL_GL_GetDrawableSize(w->window, &w->draw_width, &w->draw_height);
    w->minimized = (SDL_GetWindowFlags(w->window) & SDL_WINDOW_MINIMIZED) || w->draw_width <= 0 ||
                   w->draw_height <= 0;
}

float pbfcl_demo_window_pixel_scale(const pbfcl_demo_window *w)
{
    if (w->width <= 0 || w->draw_width <= 0)
        return 1.0f;
    return (float)w->draw_width / (float)w->width;
}

const char *pbfcl_demo_gl_renderer(void)
{
    const char *r = (const char *)glGetString(GL_RENDERER);
    return r ? r : "?";
}
