/* `pbfcl demo` (and `pbfcl` with no arguments): the interactive SDL2/OpenGL demo. Parses its
 * options here; the demo itself lives in host/demo/ and is built only with SDL2 and GLEW. */
#include "cli_args.h"
#include "commands.h"
#include "runtime/pbfcl_error.h"
#include "scene_options.h"

#include <stdio.h>
#include <string.h>

#ifdef PBFCL_HAVE_DEMO
#include "../demo/demo.h"

static void demo_help(FILE *f)
{
    fprintf(f, "usage: pbfcl demo [options]\n\n"
               "Opens a window and runs a scene interactively (press H in the window for the "
               "controls).\n\n"
               "demo options:\n"
               "  --no-gl-sharing       copy positions through the host even where the device "
               "offers cl_khr_gl_sharing\n"
               "  --no-vsync            draw as fast as possible\n"
               "  --no-shadows          no shadows of the particles on the floor and fluid\n"
               "  --no-diffuse          no spray, foam and bubbles (D turns them on and off)\n"
               "  --paused              start paused (space resumes); with --frames N it times\n"
               "                        the renderer alone\n"
               "  --render fluid|spheres draw a smoothed fluid surface (default) or the "
               "particles as spheres (key F)\n"
               "  --smooth bilateral|curvature  how the fluid's depth is smoothed: bilateral "
               "filter (default) or curvature flow (key G)\n"
               "  --color speed|density what the spheres' colour shows (default speed; key C)\n"
               "  --size WxH            window size in screen points (default 1280x720)\n"
               "  --frames N            run N frames (vsync off), then exit\n"
               "  --screenshot FILE     with --frames: write the last frame to FILE (PNG)\n"
               "  --record DIR          write every simulated frame to DIR/frame_NNNNNN.png (one "
               "per step of dt; created if missing)\n"
               "  --force               with --record: replace the frames a folder already "
               "holds\n\n");
    pbfcl_scene_options_help(f);
}

static bool parse_int(const char *opt, const char *text, long long lo, long long hi, int *out)
{
    long long v;
    if (!text || !pbfcl_parse_llong(text, &v) || v < lo || v > hi) {
        pbfcl_errorf("%s needs a whole number from %lld to %lld (got '%s')", opt, lo, hi,
                     text ? text : "nothing");
        return false;
    }
    *out = (int)v;
    return true;
}

static bool parse_size(const char *text, pbfcl_demo_options *o)
{
    char w[32], h[32];
    const char *x = text ? strchr(text, 'x') : NULL;
    if (!x || x == text || (size_t)(x - text) >= sizeof w || strlen(x + 1) >= sizeof h) {
        pbfcl_errorf("--size needs WIDTHxHEIGHT, e.g. 1280x720 (got '%s')",
                     text ? text : "nothing");
        return false;
    }
    memcpy(w, text, (size_t)(x - text));
    w[x - text] = '\0';
    strcpy(h, x + 1);
    return parse_int("--size width", w, 64, 16384, &o->width) &&
           parse_int("--size height", h, 64, 16384, &o->height);
}

/* Stores the value of a demo option that takes one. */
static bool store_demo_value(pbfcl_demo_options *o, const char *name, const char *value)
{
    if (!strcmp(name, "--frames"))
        return parse_int("--frames", value, 1, 100000000, &o->frames);
    if (!strcmp(name, "--size"))
        return parse_size(value, o);
    if (!value || !*value) {
        pbfcl_errorf("%s needs a value (see `pbfcl demo --help`)", name);
        return false;
    }
    if (!strcmp(name, "--screenshot") || !strcmp(name, "--record")) {
        *(name[2] == 's' ? &o->screenshot : &o->record) = value;
        return true;
    }
    if (!strcmp(name, "--render")) {
        if (!strcmp(value, "fluid") || !strcmp(value, "spheres")) {
            o->render = value[0] == 'f' ? PBFCL_DEMO_RENDER_FLUID : PBFCL_DEMO_RENDER_SPHERES;
            return true;
        }
        pbfcl_errorf("--render takes fluid or spheres (got '%s')", value);
        return false;
    }
    if (!strcmp(name, "--smooth")) {
        if (!strcmp(value, "bilateral") || !strcmp(value, "curvature")) {
            o->curvature_flow = value[0] == 'c';
            return true;
        }
        pbfcl_errorf("--smooth takes bilateral or curvature (got '%s')", value);
        return false;
    }
    if (!strcmp(value, "speed") || !strcmp(value, "density")) {
        o->color = value[0] == 's' ? PBFCL_DEMO_COLOR_SPEED : PBFCL_DEMO_COLOR_DENSITY;
        return true;
    }
    pbfcl_errorf("--color takes speed or density (got '%s')", value);
    return false;
}

/* Parses one demo option at argv[*i] (also as --name=value) and advances *i past it and its
 * value; returns 1 if consumed, 0 if unknown, -1 if bad. */
static int parse_demo_option(pbfcl_demo_options *o, int argc, char **argv, int *i)
{
    static const char *const valued[] = {"--frames", "--size",   "--screenshot", "--record",
                                         "--color",  "--render", "--smooth"};
    char name[32];
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (len >= sizeof name)
        return 0;
    memcpy(name, arg, len);
    name[len] = '\0';
    if (!strcmp(name, "--no-gl-sharing") || !strcmp(name, "--no-vsync") ||
        !strcmp(name, "--no-shadows") || !strcmp(name, "--no-diffuse") ||
        !strcmp(name, "--force") || !strcmp(name, "--paused")) {
        if (eq) {
            pbfcl_errorf("%s takes no value (got '%s')", name, arg);
            return -1;
        }
        bool *flag = name[2] == 'f'   ? &o->force
                     : name[2] == 'p' ? &o->paused
                     : name[5] == 'g' ? &o->no_gl_sharing
                     : name[5] == 's' ? &o->no_shadows
                     : name[5] == 'd' ? &o->no_diffuse
                                      : &o->no_vsync;
        *flag = true;
        ++*i;
        return 1;
    }
    bool known = false;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
        known = known || !strcmp(name, valued[k]);
    if (!known)
        return 0;
    const char *value = eq ? eq + 1 : *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!eq && value && !pbfcl_cli_separate_value(name, (int)strlen(name), value))
        return -1;
    *i += eq ? 1 : 2;
    return store_demo_value(o, name, value) ? 1 : -1;
}

int cmd_demo(int argc, char **argv)
{
    pbfcl_demo_options o;
    memset(&o, 0, sizeof o);
    pbfcl_scene_options_init(&o.scene);
    o.width = 1280;
    o.height = 720;
    for (int i = 1; i < argc;) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            demo_help(stdout);
            return 0;
        }
        int r = pbfcl_scene_options_parse(&o.scene, argc, argv, &i);
        if (r == 0)
            r = parse_demo_option(&o, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0) {
            pbfcl_errorf("demo: unknown option '%s' (see `pbfcl demo --help`)", argv[i]);
            return 2;
        }
    }
    if (o.screenshot && o.frames == 0) {
        pbfcl_errorf("--screenshot needs --frames N (the frame to capture)");
        return 2;
    }
    if (o.force && !o.record) {
        pbfcl_errorf("--force applies to --record DIR only");
        return 2;
    }
    return pbfcl_demo_run(&o);
}

#else

int cmd_demo(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    pbfcl_errorf("this build of pbfcl has no interactive demo (it was configured without "
                 "SDL2 and GLEW, or with -DPBFCL_WITH_DEMO=OFF)");
    fprintf(stderr, "To build it, install the development packages (Debian/Ubuntu: apt-get "
                    "install libsdl2-dev libglew-dev libpng-dev) and rebuild.\n"
                    "To simulate without a window, use `pbfcl run` (see `pbfcl --help`).\n");
    return 1;
}

#endif
