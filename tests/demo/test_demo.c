/* The demo's command line and window: bad options and a missing display give clear errors
 * and non-zero exits; under Xvfb (`test_demo --screenshot`) a dam break is rendered to PNGs
 * whose pixels show fluid low in the frame, background above it, and motion between frames,
 * and whose fluid surface covers the spheres' pixels with far fewer strong edges. */
#include "test_util.h"
#ifdef PBFCL_HAVE_PNG
#include "demo_hud_layout.h"
#include "demo_params.h"
#include "demo_pick.h"
#include "demo_ramp.h"
#include "demo_record.h"
#include "demo_screenshot.h"
#endif

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef PBFCL_HAVE_PNG
#include "test_png.h"
#endif
#include "surface_metrics.h"

#define DEMO_W 1280
#define DEMO_H 720
#define DEMO_HUD_BOTTOM 220 /* the HUD's panel ends above this row */

static const char *program(void)
{
    const char *p = getenv("PBFCL_PROGRAM");
    return p && *p ? p : "./pbfcl";
}

/* Runs a shell command; its stdout and stderr go to out. Returns the exit status. */
static int run_capture(const char *cmd, char *out, size_t size)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    ck_assert_msg(p != NULL, "cannot run %s", cmd);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Runs `pbfcl demo ARGS` (args without single quotes) after a prefix such as `env ...` or
 * `xvfb-run ...` and returns pbfcl's own exit status: xvfb-run sometimes fails to clean up its
 * temporary folder after a quick exit and then returns 5 whatever pbfcl returned. */
static int run_demo(const char *prefix, const char *args, char *cmd, size_t cmd_size, char *out,
                    size_t out_size)
{
    snprintf(cmd, cmd_size, "%s sh -c '\"$0\" demo %s; echo \"pbfcl-exit=$?\"' '%s'", prefix, args,
             program());
    int rc = run_capture(cmd, out, out_size);
    char *tag = strstr(out, "pbfcl-exit=");
    if (tag) {
        rc = atoi(tag + strlen("pbfcl-exit="));
        *tag = '\0';
    }
    return rc;
}

/* Runs `pbfcl demo ARGS` and checks the exit status and that the output holds `expect`. */
static void expect_failure(const char *env, const char *args, int code, const char *expect)
{
    char cmd[2048], out[16384];
    int rc = run_demo(env, args, cmd, sizeof cmd, out, sizeof out);
    ck_assert_msg(rc == code, "`%s` exited %d, expected %d; output:\n%s", cmd, rc, code, out);
    ck_assert_msg(strstr(out, expect) != NULL, "`%s` did not say '%s'; output:\n%s", cmd, expect,
                  out);
}

#ifdef PBFCL_HAVE_DEMO
START_TEST(test_demo_bad_options)
{
    expect_failure("", "--color purple", 2, "--color takes speed or density");
    expect_failure("", "--render water", 2, "--render takes fluid or spheres");
    expect_failure("", "--render", 2, "--render needs a value");
    expect_failure("", "--smooth=gauss", 2, "--smooth takes bilateral or curvature");
    expect_failure("", "--frames 0", 2, "--frames needs a whole number");
    expect_failure("", "--frames", 2, "--frames needs a whole number");
    expect_failure("", "--size 12", 2, "--size needs WIDTHxHEIGHT");
    expect_failure("", "--screenshot a.png", 2, "--screenshot needs --frames");
    expect_failure("", "--bogus", 2, "unknown option '--bogus'");
    expect_failure("", "--color=purple", 2, "--color takes speed or density");
    expect_failure("", "--no-vsync=1", 2, "--no-vsync takes no value");
    expect_failure("", "--no-shadows=no", 2, "--no-shadows takes no value");
    expect_failure("", "--no-diffuse=1", 2, "--no-diffuse takes no value");
    expect_failure("", "--screenshot=", 2, "--screenshot needs a value");
    expect_failure("", "--particles -5", 2, "--particles");
    /* caught before a window opens, so these need no display */
    expect_failure("", "--scene no-such-scene", 1, "no-such-scene");
    if (test_device_count() > 0)
        expect_failure("", "--device no-such-device", 1, "no-such-device");
    expect_failure("", "--frames 2 --screenshot /no-such-folder/a.png", 1, "not writable");
    expect_failure("", "--force", 2, "--force applies to --record DIR only");
    expect_failure("", "--record", 2, "--record needs a value");
    expect_failure("", "--record /no-such-folder/rec", 1, "cannot create folder");
    expect_failure("", "--record /dev/null", 1, "'/dev/null' is not a folder");
    char dir[] = "/tmp/pbfcl_rec_XXXXXX", args[128], cmd[256], out[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "echo old > %s/frame_000007.png", dir);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    snprintf(args, sizeof args, "--record %s", dir);
    expect_failure("", args, 1, "already holds 1 frame file (frame_000007.png)");
    snprintf(cmd, sizeof cmd, "grep -qx old %s/frame_000007.png && rm -rf %s", dir, dir);
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0, "the old frame in %s was touched", dir);
    /* a screenshot that a recorded frame or the scene file would be (issue 24): refused
     * before anything is written */
    char rec[] = "/tmp/pbfcl_rec_XXXXXX", args2[256];
    ck_assert_ptr_nonnull(mkdtemp(rec));
    snprintf(args2, sizeof args2,
             "--frames 2 --screenshot %s/new/./frame_000001.png --record %s/new", rec, rec);
    expect_failure("", args2, 1, "is a file that --record");
    snprintf(cmd, sizeof cmd, "echo '{}' > %s/s.json", rec);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    snprintf(args2, sizeof args2, "--frames 2 --screenshot %s/s.json --scene %s/s.json", rec, rec);
    expect_failure("", args2, 1, "is the scene file");
    snprintf(cmd, sizeof cmd, "grep -qx '{}' %s/s.json && test ! -e %s/new && rm -rf %s", rec, rec,
             rec);
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0, "a refused demo wrote into %s", rec);
}
END_TEST
#endif

START_TEST(test_demo_no_display)
{
#ifdef PBFCL_HAVE_DEMO
    /* the device is checked before a window is opened */
    expect_failure("env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER", "--frames 1", 1,
                   test_device_count() > 0 ? "pbfcl run" : "OpenCL");
#else
    expect_failure("", "--frames 1", 1, "no interactive demo");
#endif
}
END_TEST

#if defined(PBFCL_HAVE_DEMO) && defined(PBFCL_HAVE_PNG)
/* The clear colour (0.17, 0.17, 0.18) within a small tolerance. */
static bool is_background(const unsigned char *p)
{
    return abs(p[0] - 43) <= 6 && abs(p[1] - 43) <= 6 && abs(p[2] - 46) <= 6;
}

/* Fraction of pixels in rows y0..y1 and columns x0..x1 for which pred holds. */
static double fraction(const image *im, int x0, int x1, int y0, int y1,
                       bool (*pred)(const unsigned char *))
{
    long hits = 0, total = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++, total++)
            hits += pred(im->rgb + ((size_t)y * (size_t)im->w + (size_t)x) * 3);
    return total ? (double)hits / (double)total : 0.0;
}

static bool have_xvfb(void)
{
    return system("command -v xvfb-run >/dev/null 2>&1") == 0;
}

/* Renders `frames` frames of a 5000-particle built-in scene under Xvfb into path, drawn as
 * `render` (fluid or spheres), with `env` (variables, or "") set for the demo; its output
 * goes to out. */
static void render_scene_with(const char *env, const char *scene, int frames, const char *render,
                              const char *path, char *out, size_t out_size)
{
    char prefix[640], args[512], cmd[2048];
    snprintf(prefix, sizeof prefix, "xvfb-run -a -s '-screen 0 %dx%dx24' env %s", DEMO_W, DEMO_H,
             env);
    snprintf(args, sizeof args,
             "--scene %s --particles 5000 --render %s --frames %d --screenshot %s", scene, render,
             frames, path);
    int rc = run_demo(prefix, args, cmd, sizeof cmd, out, out_size);
    printf("%s", out);
    ck_assert_msg(rc == 0, "`%s` exited %d; output:\n%s", cmd, rc, out);
}

/* Renders `frames` frames of a 5000-particle built-in scene (see render_scene_with). */
static void render_scene(const char *scene, int frames, const char *render, const char *path)
{
    char out[16384];
    render_scene_with("", scene, frames, render, path, out, sizeof out);
}

/* Renders `frames` frames of a 5000-particle dam break (see render_scene). */
static void render_dam_break(int frames, const char *render, const char *path)
{
    render_scene("dam-break", frames, render, path);
}

/* A device name longer than any line of the HUD, after an Intel Xeon's PoCL device
 * ("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", whose HUD line once reached into the
 * top-right band). */
#define LONG_DEVICE_NAME                                                                           \
    "pthread-sapphirerapids-Intel(R) Xeon(R) Platinum 8480+ Processor with a name far longer "     \
    "than the HUD is wide"

/* Renders frame `frames` of the 5000-particle dam break as a fluid into path, with every
 * OpenCL device renamed LONG_DEVICE_NAME (tests/devname/), and checks that the demo saw that
 * name. */
static void render_with_long_device_name(int frames, const char *path)
{
    const char *layer = getenv("PBFCL_DEVICE_NAME_LAYER");
    ck_assert_msg(layer && *layer,
                  "PBFCL_DEVICE_NAME_LAYER (tests/devname's library, built beside the tests) is "
                  "not set; run this test through ctest");
    char env[512], out[16384];
    snprintf(env, sizeof env, "LD_PRELOAD='%s' PBFCL_TEST_DEVICE_NAME='%s'", layer,
             LONG_DEVICE_NAME);
    render_scene_with(env, "dam-break", frames, "fluid", path, out, sizeof out);
    ck_assert_msg(strstr(out, LONG_DEVICE_NAME) != NULL,
                  "the demo did not run on the renamed device (%s):\n%s", layer, out);
}

/* The dam break at frames 30 and 60: fluid low in the frame, none in the top fifth, the top
 * right band empty (the HUD's panel, whatever the device's name, ends left of it: see
 * test_demo_hud_layout), and motion between the frames. The device is given a very long name
 * so that the band is checked against the widest panel the HUD can draw. */
START_TEST(test_demo_screenshot)
{
    char early[64], late[64];
    snprintf(early, sizeof early, "/tmp/pbfcl_demo_%d_a.png", (int)getpid());
    snprintf(late, sizeof late, "/tmp/pbfcl_demo_%d_b.png", (int)getpid());
    render_with_long_device_name(30, early);
    render_with_long_device_name(60, late);
    image a = read_png(early), b = read_png(late);
    ck_assert_msg(a.w == DEMO_W && a.h == DEMO_H, "screenshot is %dx%d, window %dx%d", a.w, a.h,
                  DEMO_W, DEMO_H);
    ck_assert_int_eq(b.w, a.w);
    ck_assert_int_eq(b.h, a.h);

    double low = fraction(&a, 0, a.w, a.h / 2, a.h, is_fluid);
    double high = fraction(&a, 0, a.w, 0, a.h / 5, is_fluid);
    /* the band's left edge: the middle, or the right bound of the HUD's panel if wider (the
     * window has one pixel per screen point under Xvfb) */
    int band = (int)ceilf(pbfcl_demo_hud_right_bound(1.0f));
    band = band > a.w / 2 ? band : a.w / 2;
    double sky = fraction(&a, band, a.w, 0, a.h / 8, is_background);
    printf("fluid pixels: %.1f%% of the lower half, %.2f%% of the top fifth; background %.1f%% "
           "of the top-right band\n",
           100 * low, 100 * high, 100 * sky);
    ck_assert_msg(low > 0.03, "too little fluid in the lower half: %.2f%%", 100 * low);
    ck_assert_msg(high < 0.002, "fluid in the top fifth: %.2f%%", 100 * high);
    ck_assert_msg(sky > 0.97, "the top-right band is not background: %.1f%%", 100 * sky);

    long changed = 0;
    for (size_t i = 0; i < (size_t)a.w * (size_t)a.h * 3; i += 3)
        changed += abs(a.rgb[i] - b.rgb[i]) + abs(a.rgb[i + 1] - b.rgb[i + 1]) +
                       abs(a.rgb[i + 2] - b.rgb[i + 2]) >
                   30;
    printf("pixels changed between frame 30 and 60: %ld\n", changed);
    ck_assert_msg(changed > (long)a.w * a.h / 200,
                  "frames 30 and 60 look the same (%ld pixels "
                  "differ)",
                  changed);
    free(a.rgb);
    free(b.rgb);
    unlink(early);
    unlink(late);
}
END_TEST

/* A body's colour, lit (shaders/particle.vert: orange, red, yellow, violet):
 * far more red than blue. Water, the speed and density scales' blue end, the floor, the box
 * and the background are none of them. */
static bool is_body_colour(const unsigned char *p)
{
    return p[0] >= 120 && p[0] - p[2] >= 80;
}

/* Pixels of a body's colour below the HUD (whose title is orange). */
static long body_pixels(const image *im)
{
    return lround(fraction(im, 0, im->w, DEMO_HUD_BOTTOM, im->h, is_body_colour) * im->w *
                  (im->h - DEMO_HUD_BOTTOM));
}

/* Of the pixels of a body's colour in `spheres`, the fraction that `fluid` shows in the same
 * colour (each channel within 8). */
static double same_body_pixels(const image *spheres, const image *fluid)
{
    long body = 0, same = 0;
    for (int y = DEMO_HUD_BOTTOM; y < spheres->h; y++)
        for (int x = 0; x < spheres->w; x++) {
            size_t i = ((size_t)y * (size_t)spheres->w + (size_t)x) * 3;
            const unsigned char *p = spheres->rgb + i, *q = fluid->rgb + i;
            if (!is_body_colour(p))
                continue;
            body++;
            same += abs(p[0] - q[0]) <= 8 && abs(p[1] - q[1]) <= 8 && abs(p[2] - q[2]) <= 8;
        }
    return body ? (double)same / (double)body : 0.0;
}

/* The bodies of dam-break-bodies are drawn as spheres in their own colours in both render
 * modes, and the fluid surface leaves them out: at frame 2 the heavy body stands alone on the
 * floor, and had its particles been part of the fluid's depth and thickness the (blue,
 * translucent) surface would be drawn over it, so its pixels must look the same in fluid mode
 * as in spheres mode (the same simulation, the same sphere shading). The fluid-only dam break
 * has no body-coloured pixels in either mode. */
START_TEST(test_demo_bodies)
{
    const char *modes[2] = {"fluid", "spheres"};
    image bodies[2];
    long fluid_only[2];
    for (int m = 0; m < 2; m++) {
        char path[96];
        snprintf(path, sizeof path, "/tmp/pbfcl_demo_%d_bodies_%s.png", (int)getpid(), modes[m]);
        render_scene("dam-break-bodies", 2, modes[m], path);
        bodies[m] = read_png(path);
        render_scene("dam-break", 2, modes[m], path);
        image b = read_png(path);
        fluid_only[m] = body_pixels(&b);
        free(b.rgb);
        unlink(path);
        printf("%s: %ld body-coloured pixels with bodies, %ld without\n", modes[m],
               body_pixels(&bodies[m]), fluid_only[m]);
    }
    long shown = body_pixels(&bodies[1]);
    double same = same_body_pixels(&bodies[1], &bodies[0]);
    printf("%.1f%% of the body pixels of spheres mode are the same in fluid mode\n", 100 * same);
    /* the lone body, 3 particles of 2 cm a side, is some 40 x 40 pixels in the default view */
    ck_assert_msg(shown > 500, "spheres mode shows only %ld body-coloured pixels", shown);
    ck_assert_msg(same > 0.95,
                  "only %.1f%% of the body pixels look the same in fluid mode: the fluid surface "
                  "covers the bodies",
                  100 * same);
    ck_assert_msg(fluid_only[0] == 0 && fluid_only[1] == 0,
                  "the fluid-only scene has body-coloured pixels (%ld fluid, %ld spheres)",
                  fluid_only[0], fluid_only[1]);
    free(bodies[0].rgb);
    free(bodies[1].rgb);
}
END_TEST

/* The obstacles' green, lit (shaders/particle.vert): green well above red and blue. Water, the
 * speed and density scales, the bodies' warm colours, the floor, the box and the background
 * are none of them. */
static bool is_obstacle_colour(const unsigned char *p)
{
    return p[1] >= 90 && p[1] - p[0] >= 45 && p[1] - p[2] >= 45;
}

static long obstacle_pixels(const image *im)
{
    return lround(fraction(im, 0, im->w, DEMO_HUD_BOTTOM, im->h, is_obstacle_colour) * im->w *
                  (im->h - DEMO_HUD_BOTTOM));
}

/* The static particles of obstacles (docs/scenes/obstacles.json: a sphere and a capsule in
 * the wave's path, a box at the far wall) are drawn as green spheres in both render modes and
 * the fluid surface leaves them out: at frame 2 the wave has not reached them, so their
 * pixels look the same in fluid mode as in spheres mode (had they been part of the surface,
 * the translucent blue surface would be drawn over them). The fluid-only dam break has no
 * obstacle-coloured pixels. */
START_TEST(test_demo_obstacles)
{
    char scene[96];
    snprintf(scene, sizeof scene, "/tmp/pbfcl_demo_%d_obstacles.json", (int)getpid());
    FILE *f = fopen(scene, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"name\": \"obstacles\", \"domain\": {\"min\": [0, 0, 0], \"max\": [1.2, 0.8, 0.4]}, "
          "\"particle_radius\": 0.01, \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.35, 0.6, "
          "0.4]}], \"obstacles\": [{\"sphere\": {\"center\": [0.7, 0.12, 0.2], \"radius\": "
          "0.1}}, {\"capsule\": {\"a\": [0.95, 0.3, 0.05], \"b\": [0.95, 0.3, 0.35], "
          "\"radius\": 0.04}}, {\"box\": {\"min\": [1.1, 0, 0], \"max\": [1.2, 0.15, 0.4]}}]}",
          f);
    fclose(f);
    const char *modes[2] = {"fluid", "spheres"};
    image shots[2];
    long fluid_only[2];
    for (int m = 0; m < 2; m++) {
        char path[96];
        snprintf(path, sizeof path, "/tmp/pbfcl_demo_%d_obstacles_%s.png", (int)getpid(), modes[m]);
        render_scene(scene, 2, modes[m], path);
        shots[m] = read_png(path);
        render_scene("dam-break", 2, modes[m], path);
        image b = read_png(path);
        fluid_only[m] = obstacle_pixels(&b);
        free(b.rgb);
        unlink(path);
        printf("%s: %ld obstacle-coloured pixels with obstacles, %ld without\n", modes[m],
               obstacle_pixels(&shots[m]), fluid_only[m]);
    }
    unlink(scene);
    long shown = obstacle_pixels(&shots[1]), same = 0, total = 0;
    for (int y = DEMO_HUD_BOTTOM; y < shots[1].h; y++)
        for (int x = 0; x < shots[1].w; x++) {
            size_t i = ((size_t)y * (size_t)shots[1].w + (size_t)x) * 3;
            const unsigned char *p = shots[1].rgb + i, *q = shots[0].rgb + i;
            if (!is_obstacle_colour(p))
                continue;
            total++;
            same += abs(p[0] - q[0]) <= 8 && abs(p[1] - q[1]) <= 8 && abs(p[2] - q[2]) <= 8;
        }
    double frac = total ? (double)same / (double)total : 0.0;
    printf("%.1f%% of the obstacle pixels of spheres mode are the same in fluid mode\n",
           100 * frac);
    ck_assert_msg(shown > 2000, "spheres mode shows only %ld obstacle-coloured pixels", shown);
    ck_assert_msg(frac > 0.95,
                  "only %.1f%% of the obstacle pixels look the same in fluid mode: the fluid "
                  "surface covers the obstacles",
                  100 * frac);
    ck_assert_msg(fluid_only[0] == 0 && fluid_only[1] == 0,
                  "the fluid-only scene has obstacle-coloured pixels (%ld fluid, %ld spheres)",
                  fluid_only[0], fluid_only[1]);
    free(shots[0].rgb);
    free(shots[1].rgb);
}
END_TEST

/* The demo runs a scene's emitters (and drains) after each step: the built-in fountain's four
 * nozzles emit 500 particles/s each in layers of 5 (a disc of radius 2 cm at spacing 2 cm:
 * its centre and 4 neighbours), so after 31 frames of 1/60 s (t = 0.5167 s, between layers,
 * which come every 0.01 s) each has emitted floor(500 t / 5) * 5 = 255: 1020 more particles
 * than at the start. */
START_TEST(test_demo_fountain)
{
    char path[96], prefix[128], args[512], cmd[2048], out[16384];
    snprintf(path, sizeof path, "/tmp/pbfcl_demo_%d_fountain.png", (int)getpid());
    snprintf(prefix, sizeof prefix, "xvfb-run -a -s '-screen 0 %dx%dx24'", DEMO_W, DEMO_H);
    snprintf(args, sizeof args, "--scene fountain --render spheres --frames 31 --screenshot %s",
             path);
    int rc = run_demo(prefix, args, cmd, sizeof cmd, out, sizeof out);
    printf("%s", out);
    ck_assert_msg(rc == 0, "`%s` exited %d; output:\n%s", cmd, rc, out);
    const char *line = strstr(out, "particles after ");
    ck_assert_msg(line != NULL, "the demo did not report its emitters:\n%s", out);
    line--; /* the space before "particles", then the count's digits */
    while (line > out && line[-1] >= '0' && line[-1] <= '9')
        line--;
    size_t end = 0, start = 0;
    double t = 0.0;
    ck_assert_int_eq(
        sscanf(line, "%zu particles after %lf s of emitters and drains (%zu", &end, &t, &start), 3);
    size_t per_nozzle = (size_t)floor(500.0 * (31.0 / 60.0) / 5.0) * 5;
    ck_assert_msg(fabs(t - 31.0 / 60.0) < 1e-3, "the demo reached t = %g s", t);
    ck_assert_msg(end == start + 4 * per_nozzle,
                  "%zu particles at the end, %zu at the start: %zu "
                  "emitted, expected 4 x %zu",
                  end, start, end - start, per_nozzle);
    image im = read_png(path); /* the frame was drawn and written */
    unlink(path);
    ck_assert_int_eq(im.w, DEMO_W);
    free(im.rgb);
}
END_TEST

static bool pixel_is_fluid(const image *im, int x, int y)
{
    return is_fluid(im->rgb + ((size_t)y * (size_t)im->w + (size_t)x) * 3);
}

/* Sobel gradient magnitude of the luminance (0..255) at an interior pixel. */
static double sobel(const image *im, int x, int y)
{
    int l[3][3];
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++) {
            const unsigned char *p =
                im->rgb + ((size_t)(y + j) * (size_t)im->w + (size_t)(x + i)) * 3;
            l[j + 1][i + 1] = (77 * p[0] + 150 * p[1] + 29 * p[2]) >> 8;
        }
    double gx = (l[0][2] + 2 * l[1][2] + l[2][2]) - (l[0][0] + 2 * l[1][0] + l[2][0]);
    double gy = (l[2][0] + 2 * l[2][1] + l[2][2]) - (l[0][0] + 2 * l[0][1] + l[0][2]);
    return sqrt(gx * gx + gy * gy);
}

/* True where the pixel and its 8 neighbours are fluid-coloured. */
static bool inside_fluid(const image *im, int x, int y)
{
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            if (!pixel_is_fluid(im, x + i, y + j))
                return false;
    return true;
}

#define STRONG_EDGE 100.0 /* Sobel magnitude of luminance (0..255) counted as a strong edge */

/* The fluid surface at frame 30 against the spheres at frame 30: a different image, fluid
 * where the spheres are, and far fewer strong edges inside the fluid than the spheres have
 * there (the sphere outlines are smoothed away). */
START_TEST(test_demo_fluid_surface)
{
    char fluid_path[64], spheres_path[64];
    snprintf(fluid_path, sizeof fluid_path, "/tmp/pbfcl_demo_%d_f.png", (int)getpid());
    snprintf(spheres_path, sizeof spheres_path, "/tmp/pbfcl_demo_%d_s.png", (int)getpid());
    render_dam_break(30, "fluid", fluid_path);
    render_dam_break(30, "spheres", spheres_path);
    image f = read_png(fluid_path), s = read_png(spheres_path);
    ck_assert(f.w == s.w && f.h == s.h);
    long differ = 0, in_f = 0, in_s = 0, in_both = 0, region = 0, edges_f = 0, edges_s = 0;
    for (int y = 1; y < f.h - 1; y++) {
        for (int x = 1; x < f.w - 1; x++) {
            size_t o = ((size_t)y * (size_t)f.w + (size_t)x) * 3;
            differ += abs(f.rgb[o] - s.rgb[o]) + abs(f.rgb[o + 1] - s.rgb[o + 1]) +
                          abs(f.rgb[o + 2] - s.rgb[o + 2]) >
                      30;
            bool a = is_fluid(f.rgb + o), b = is_fluid(s.rgb + o);
            in_f += a, in_s += b, in_both += a && b;
            if (!inside_fluid(&f, x, y))
                continue;
            region++;
            edges_f += sobel(&f, x, y) > STRONG_EDGE;
            edges_s += sobel(&s, x, y) > STRONG_EDGE;
        }
    }
    double of_spheres = in_s ? (double)in_both / (double)in_s : 0.0;
    double of_fluid = in_f ? (double)in_both / (double)in_f : 0.0;
    double ef = region ? (double)edges_f / (double)region : 1.0;
    double es = region ? (double)edges_s / (double)region : 0.0;
    printf("fluid vs spheres at frame 30: %ld pixels differ; fluid mask %ld, spheres mask %ld, "
           "both %ld (%.1f%% of the spheres', %.1f%% of the fluid's); strong edges inside the "
           "fluid (%ld pixels): %.2f%% fluid, %.2f%% spheres\n",
           differ, in_f, in_s, in_both, 100 * of_spheres, 100 * of_fluid, region, 100 * ef,
           100 * es);
    ck_assert_msg(differ > (long)f.w * f.h / 100, "fluid and spheres look the same (%ld differ)",
                  differ);
    ck_assert_msg(of_spheres > 0.6 && of_fluid > 0.7,
                  "fluid and sphere pixels do not overlap: %.1f%% of the spheres', %.1f%% of "
                  "the fluid's",
                  100 * of_spheres, 100 * of_fluid);
    ck_assert_msg(region > (long)f.w * f.h / 50, "too little fluid surface: %ld pixels", region);
    ck_assert_msg(ef < es / 3.0,
                  "the fluid surface is not smooth: %.2f%% strong edges vs %.2f%% for spheres",
                  100 * ef, 100 * es);
    free(f.rgb);
    free(s.rgb);
    unlink(fluid_path);
    unlink(spheres_path);
}
END_TEST

/* Renders `scene` with `particles` particles for `frames` frames as fluid and measures its
 * surface artefacts (rows from the HUD's bottom down). */
static surface_stats render_and_measure(int particles, int frames, const char *tag)
{
    char path[64], prefix[128], args[512], cmd[2048], out[16384];
    snprintf(path, sizeof path, "/tmp/pbfcl_demo_%d_%s.png", (int)getpid(), tag);
    snprintf(prefix, sizeof prefix, "xvfb-run -a -s '-screen 0 %dx%dx24'", DEMO_W, DEMO_H);
    snprintf(args, sizeof args,
             "--scene dam-break --particles %d --render fluid --frames %d --screenshot %s",
             particles, frames, path);
    int rc = run_demo(prefix, args, cmd, sizeof cmd, out, sizeof out);
    ck_assert_msg(rc == 0, "`%s` exited %d; output:\n%s", cmd, rc, out);
    image im = read_png(path);
    surface_stats s = surface_measure(im.rgb, im.w, im.h, 215, is_fluid);
    printf("%s (%d particles, frame %d): mask %ld px, dark %ld (%.1f per 10k), highlight %ld px, "
           "energy per pixel: rows %.1f, columns %.1f\n",
           tag, particles, frames, s.mask, s.dark, surface_dark_per_10k(&s), s.highlight,
           surface_row_energy(&s), surface_col_energy(&s));
    free(im.rgb);
    if (!getenv("PBFCL_KEEP_SCREENSHOTS"))
        unlink(path);
    return s;
}

/* The surface's artefacts on fixed scenes, 1280x720: frame 40 of a 20 000-particle dam break
 * (a settling surface seen from above, where the gaps between the top layer's spheres showed
 * as rows of pinholes) and frame 30 of a 5 000-particle one (a splash: silhouettes, isolated
 * particles, a long highlight). Measured on Mesa llvmpipe before the fixes (separable
 * filter, no gap filling, dark ground in the reflection, hard silhouette):
 *   settled: 36.9 dark pixels per 10k, highlight energy rows 466.6, columns 389.5
 *   splash:  57.0 dark pixels per 10k, highlight energy rows 449.6, columns 545.7
 * and after them 0.8 and 10.1 per 10k; rows 138.4, columns 122.5 and rows 222.4, columns
 * 253.0 (with the shadows added later, and the solver's collision change of the same day:
 * 1.1 and 15.5; 157.9 / 106.3 and 237.7 / 270.4; with the particle mass calibrated on the
 * rest lattice, whose splash differs: 1.9 and 22.5; 169.9 / 94.8 and 264.4 / 263.4). The
 * bounds lie well below the first; the splash's dark pixels follow its spray. */
START_TEST(test_demo_surface_artefacts)
{
    surface_stats settled = render_and_measure(20000, 40, "settled");
    surface_stats splash = render_and_measure(5000, 30, "splash");
    ck_assert_msg(settled.mask > DEMO_W * DEMO_H / 50 && splash.mask > DEMO_W * DEMO_H / 50,
                  "too little fluid to measure: %ld and %ld pixels", settled.mask, splash.mask);
    ck_assert_msg(settled.highlight > 1000 && splash.highlight > 1000,
                  "no highlight to measure: %ld and %ld pixels", settled.highlight,
                  splash.highlight);
    ck_assert_msg(surface_dark_per_10k(&settled) < 6.0,
                  "settled: %.1f dark pixels per 10k inside the fluid (pinholes)",
                  surface_dark_per_10k(&settled));
    ck_assert_msg(surface_dark_per_10k(&splash) < 30.0,
                  "splash: %.1f dark pixels per 10k inside the fluid",
                  surface_dark_per_10k(&splash));
    const surface_stats *scenes[2] = {&settled, &splash};
    const double most[2] = {250.0, 320.0};
    for (int i = 0; i < 2; i++)
        ck_assert_msg(surface_row_energy(scenes[i]) < most[i] &&
                          surface_col_energy(scenes[i]) < most[i],
                      "%s: fine structure in the highlight %.1f along rows, %.1f along columns "
                      "(at most %.0f)",
                      i ? "splash" : "settled", surface_row_energy(scenes[i]),
                      surface_col_energy(scenes[i]), most[i]);
}
END_TEST

/* The measures on images made for them: isolated dark pixels inside a fluid-coloured field
 * are counted one by one, a lone bright row in the highlight is row-aligned energy only, and a
 * dark pixel outside the fluid is not counted. */
START_TEST(test_surface_metrics)
{
    enum { W = 64, H = 48 };
    static unsigned char rgb[W * H * 3];
    for (int i = 0; i < W * H; i++)
        rgb[3 * i] = 120, rgb[3 * i + 1] = 200, rgb[3 * i + 2] = 250; /* light fluid blue */
    int dark = 0;
    for (int y = 6; y < H - 6; y += 7)
        for (int x = 6; x < W - 6; x += 9, dark++)
            memset(rgb + 3 * (y * W + x), 20, 3);
    memset(rgb + 3 * (1 * W + 30), 20, 3); /* within 2 pixels of the edge: not measured */
    surface_stats s = surface_measure(rgb, W, H, 0, is_fluid);
    ck_assert_int_eq(s.mask, (W - 4) * (H - 4));
    ck_assert_int_eq(s.dark, dark);
    ck_assert(s.row_energy > 0.0 && s.col_energy > 0.0); /* the dots are isotropic */

    for (int i = 0; i < W * H; i++)
        rgb[3 * i] = 120, rgb[3 * i + 1] = 200, rgb[3 * i + 2] = 250;
    for (int x = 0; x < W; x++)
        rgb[3 * (20 * W + x)] = 200; /* a brighter row: a streak along it */
    s = surface_measure(rgb, W, H, 0, is_fluid);
    ck_assert_int_eq(s.dark, 0);
    ck_assert_msg(s.row_energy > 0.0 && s.col_energy == 0.0, "rows %g, columns %g", s.row_energy,
                  s.col_energy);
    /* rows above y0 are left out: the streak is not seen */
    s = surface_measure(rgb, W, H, 30, is_fluid);
    ck_assert(s.row_energy == 0.0 && s.mask == (W - 4) * (H - 32));
}
END_TEST

/* The recording folder: created when missing, frame files (frame_ + digits + .png) counted
 * and refused without force, removed with it, other files left alone; the screenshot key's
 * names skip those taken. */
START_TEST(test_record_folder)
{
    char dir[] = "/tmp/pbfcl_rec_XXXXXX", sub[64], cmd[512], out[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/new", dir);
    ck_assert_int_eq(pbfcl_demo_record_prepare(sub, false), PBFCL_OK);
    snprintf(cmd, sizeof cmd,
             "cd %s && test -d new && touch new/frame_000000.png new/frame_12.png new/frame_x.png "
             "new/frame_.png new/notes.txt",
             dir);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_int_eq(pbfcl_demo_record_prepare(sub, false), PBFCL_ERR_IO);
    ck_assert_int_eq(pbfcl_demo_record_prepare(sub, true), PBFCL_OK);
    snprintf(cmd, sizeof cmd, "cd %s/new && LC_ALL=C ls | tr '\\n' ' '", dir);
    run_capture(cmd, out, sizeof out);
    ck_assert_str_eq(out, "frame_.png frame_x.png notes.txt ");
    ck_assert_int_eq(pbfcl_demo_record_prepare(sub, false), PBFCL_OK);

    char path[128], expect[128];
    ck_assert(pbfcl_demo_record_path(path, sizeof path, "d", 42));
    ck_assert_str_eq(path, "d/frame_000042.png");
    ck_assert(!pbfcl_demo_record_path(path, 10, "d", 42));
    ck_assert(pbfcl_demo_shot_path(path, sizeof path, sub));
    snprintf(expect, sizeof expect, "%s/pbfcl-shot-0001.png", sub);
    ck_assert_str_eq(path, expect);
    snprintf(cmd, sizeof cmd, "touch %s/pbfcl-shot-0001.png %s/pbfcl-shot-0003.png", sub, sub);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert(pbfcl_demo_shot_path(path, sizeof path, sub));
    snprintf(expect, sizeof expect, "%s/pbfcl-shot-0002.png", sub);
    ck_assert_str_eq(path, expect);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
}
END_TEST

/* Runs the demo under Xvfb at 640x480 with 2000 particles and `args`; returns its status. */
static int run_small_demo(const char *args, char *out, size_t size)
{
    char cmd[2048], all[1024];
    snprintf(all, sizeof all, "--size 640x480 --particles 2000 --render spheres %s", args);
    return run_demo("xvfb-run -a -s '-screen 0 640x480x24'", all, cmd, sizeof cmd, out, size);
}

/* --record: one whole PNG per simulated frame, numbered from 0, nothing else in the folder;
 * the frames show the flow moving; a second run refuses the folder before a window opens and
 * leaves it as it was, and with --force replaces every frame of the first run. */
START_TEST(test_demo_record)
{
    char dir[] = "/tmp/pbfcl_rec_XXXXXX", args[256], cmd[512], out[16384];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args, "--frames 6 --record %s", dir);
    int rc = run_small_demo(args, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "recorded 6 frames") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "LC_ALL=C ls %s | tr '\\n' ' '", dir);
    run_capture(cmd, out, sizeof out);
    ck_assert_str_eq(out, "frame_000000.png frame_000001.png frame_000002.png frame_000003.png "
                          "frame_000004.png frame_000005.png ");
    char first[128], last[128];
    snprintf(first, sizeof first, "%s/frame_000000.png", dir);
    snprintf(last, sizeof last, "%s/frame_000005.png", dir);
    image a = read_png(first), b = read_png(last);
    ck_assert(a.w == 640 && a.h == 480 && b.w == 640 && b.h == 480);
    double rmse = image_rmse(&a, &b, 160);
    printf("record: rmse between frames 0 and 5 below the HUD: %.2f\n", rmse);
    ck_assert_msg(rmse > 0.5, "frames 0 and 5 look the same (rmse %.2f)", rmse);
    free(a.rgb);
    free(b.rgb);

    rc = run_small_demo(args, out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "already holds 6 frame files"), "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "OpenGL") == NULL, "a window was opened:\n%s", out);
    snprintf(args, sizeof args, "--frames 2 --record %s --force", dir);
    rc = run_small_demo(args, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    snprintf(cmd, sizeof cmd, "LC_ALL=C ls %s | tr '\\n' ' '", dir);
    run_capture(cmd, out, sizeof out);
    ck_assert_str_eq(out, "frame_000000.png frame_000001.png ");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run_capture(cmd, out, sizeof out);
}
END_TEST

/* --paused: the simulation does not step, so frame 2 and frame 12 show the same particles
 * (below the HUD, whose frame rate changes), where an unpaused run moves them. */
START_TEST(test_demo_paused)
{
    char out[16384], args[256], path[2][128];
    image im[2];
    const int frames[2] = {2, 12};
    for (int paused = 1; paused >= 0; paused--) {
        for (int k = 0; k < 2; k++) {
            snprintf(path[k], sizeof path[k], "/tmp/pbfcl_paused_%d_%d.png", (int)getpid(), k);
            snprintf(args, sizeof args, "%s --frames %d --screenshot %s", paused ? "--paused" : "",
                     frames[k], path[k]);
            int rc = run_small_demo(args, out, sizeof out);
            ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
            im[k] = read_png(path[k]);
            unlink(path[k]);
        }
        double rmse = image_rmse(&im[0], &im[1], 160);
        printf("%s: rmse between frames 2 and 12 below the HUD: %.3f\n",
               paused ? "paused" : "running", rmse);
        if (paused)
            ck_assert_msg(rmse == 0.0, "paused frames 2 and 12 differ (rmse %.3f)", rmse);
        else
            ck_assert_msg(rmse > 0.5, "running frames 2 and 12 look the same (rmse %.3f)", rmse);
        free(im[0].rgb);
        free(im[1].rgb);
    }
}
END_TEST

/* A write that fails during a recording stops the recording with a message and exit status
 * 1; the frames written before are whole PNGs, with no temporary file beside them. The
 * failure: once frame 1 is there (however long the demo takes to start), folders take the
 * names of the frames after it, so renaming the next finished frame into place fails (as a
 * write fails on a full disk). */
START_TEST(test_demo_record_stops)
{
    char dir[] = "/tmp/pbfcl_rec_XXXXXX", args[640], out[16384];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args,
             "--frames 400 --record %s & pid=$!; while [ ! -e %s/frame_000001.png ] && "
             "kill -0 $pid 2>/dev/null; do sleep 0.05; done; for k in $(seq 2 60); do "
             "mkdir %s/$(printf frame_%%06d.png $k) 2>/dev/null; done; wait $pid; "
             "echo \"demo-exit=$?\"; :",
             dir, dir, dir);
    int rc = run_small_demo(args, out, sizeof out);
    (void)rc;
    char *tag = strstr(out, "demo-exit=");
    ck_assert_msg(tag && atoi(tag + strlen("demo-exit=")) == 1, "%s", out);
    ck_assert_msg(strstr(out, "recording stopped after"), "no message:\n%s", out);
    char cmd[512], list[8192];
    snprintf(cmd, sizeof cmd, "cd %s && for f in $(ls -A); do [ -d $f ] || echo $f; done", dir);
    run_capture(cmd, list, sizeof list);
    int frames = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n"), frames++) {
        ck_assert_msg(strncmp(line, "frame_", 6) == 0 && strstr(line, ".tmp") == NULL,
                      "unexpected file %s in the recording", line);
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, line);
        image im = read_png(path); /* fails the test unless the PNG is whole */
        ck_assert(im.w == 640 && im.h == 480);
        free(im.rgb);
    }
    ck_assert_msg(frames >= 2, "%d frames before the failure", frames);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run_capture(cmd, list, sizeof list);
}
END_TEST

/* The live parameter keys: iterations step by one within 0..1000, viscosity and vorticity
 * double and halve down to a sixteenth of their defaults (0.05 and 0.01 m/s) and then to 0 and
 * back, never past the viscosity's upper bound of 1; a refused change leaves the value. */
START_TEST(test_demo_tune)
{
    pbfcl_solver_params p;
    pbfcl_solver_params_defaults(&p);
    char msg[160];
    p.iterations = 4;
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_ITERATIONS, 1, msg, sizeof msg));
    ck_assert_int_eq(p.iterations, 5);
    ck_assert_str_eq(msg, "iterations 5");
    p.iterations = 0;
    ck_assert(!pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_ITERATIONS, -1, msg, sizeof msg));
    ck_assert_int_eq(p.iterations, 0);
    ck_assert_msg(strstr(msg, "must be") != NULL, "%s", msg);
    p.iterations = 1000;
    ck_assert(!pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_ITERATIONS, 1, msg, sizeof msg));
    ck_assert_int_eq(p.iterations, 1000);

    p.viscosity = 0.05f;
    const float down[5] = {0.025f, 0.0125f, 0.00625f, 0.003125f, 0.0f};
    for (int i = 0; i < 5; i++) {
        ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_VISCOSITY, -1, msg, sizeof msg));
        ck_assert_msg(fabsf(p.viscosity - down[i]) < 1e-7f, "step %d: %g", i, p.viscosity);
    }
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_VISCOSITY, 1, msg, sizeof msg));
    ck_assert(fabsf(p.viscosity - 0.05f / 16.0f) < 1e-7f);
    p.viscosity = 0.8f;
    ck_assert(!pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_VISCOSITY, 1, msg, sizeof msg));
    ck_assert(p.viscosity == 0.8f);
    p.vorticity = 0.01f;
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_VORTICITY, 1, msg, sizeof msg));
    ck_assert(fabsf(p.vorticity - 0.02f) < 1e-7f);
    ck_assert_str_eq(msg, "vorticity 0.02 m/s");
    ck_assert(!pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_COUNT, 1, msg, sizeof msg));
}
END_TEST

/* The wind keys: W from none blows 1 m/s along +x and doubles it; E turns it 45 degrees
 * counterclockwise seen from above (+x towards -z), shift+E back; shift+W halves it to 1 m/s
 * and then to none; nothing to weaken or turn at none, and no component past the parameter
 * list's 1000 m/s. The HUD line gives the speed and heading. */
START_TEST(test_demo_tune_wind)
{
    pbfcl_solver_params p;
    pbfcl_solver_params_defaults(&p);
    char msg[160], hud[160];
    p.wind_x = p.wind_y = p.wind_z = 0.0f;
    ck_assert(!pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND, -1, msg, sizeof msg));
    ck_assert(!pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND_TURN, 1, msg, sizeof msg));
    pbfcl_demo_tune_describe(&p, hud, sizeof hud);
    ck_assert_msg(strstr(hud, "WIND") == NULL, "%s", hud);
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND, 1, msg, sizeof msg));
    ck_assert(p.wind_x == 1.0f && p.wind_y == 0.0f && p.wind_z == 0.0f);
    ck_assert_str_eq(msg, "wind 1 m/s at 0 degrees (1 0 0 m/s)");
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND, 1, msg, sizeof msg));
    ck_assert(p.wind_x == 2.0f);
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND_TURN, 1, msg, sizeof msg));
    const float c = 2.0f * sqrtf(0.5f);
    ck_assert_msg(fabsf(p.wind_x - c) < 1e-6f && p.wind_y == 0.0f && fabsf(p.wind_z + c) < 1e-6f,
                  "%g %g %g", p.wind_x, p.wind_y, p.wind_z);
    pbfcl_demo_tune_describe(&p, hud, sizeof hud);
    ck_assert_msg(strstr(hud, "  WIND 2 M/S AT 45 DEG") != NULL, "%s", hud);
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND_TURN, -1, msg, sizeof msg));
    ck_assert_msg(fabsf(p.wind_x - 2.0f) < 1e-6f && fabsf(p.wind_z) < 1e-6f, "%g %g", p.wind_x,
                  p.wind_z);
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND, -1, msg, sizeof msg));
    ck_assert(fabsf(p.wind_x - 1.0f) < 1e-6f);
    ck_assert(pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND, -1, msg, sizeof msg));
    ck_assert(p.wind_x == 0.0f && p.wind_z == 0.0f);
    ck_assert_str_eq(msg, "wind off");
    p.wind_x = 600.0f;
    ck_assert(!pbfcl_demo_tune_step(&p, PBFCL_DEMO_TUNE_WIND, 1, msg, sizeof msg));
    ck_assert(p.wind_x == 600.0f);
    ck_assert_msg(strstr(msg, "wind_x") && strstr(msg, "must be"), "%s", msg);
}
END_TEST

/* Gravity turned by the arrow keys: a quarter turn about z sends -y gravity to +x, about x to
 * -z; any turn keeps the magnitude; no turn changes nothing. */
START_TEST(test_demo_gravity_turn)
{
    const float g0[3] = {0.0f, -9.81f, 0.0f};
    float g[3];
    pbfcl_demo_gravity_turn(g0, 0.0f, 90.0f, g);
    ck_assert(fabsf(g[0] - 9.81f) < 1e-5f && fabsf(g[1]) < 1e-5f && fabsf(g[2]) < 1e-5f);
    pbfcl_demo_gravity_turn(g0, 90.0f, 0.0f, g);
    ck_assert(fabsf(g[0]) < 1e-5f && fabsf(g[1]) < 1e-5f && fabsf(g[2] + 9.81f) < 1e-5f);
    pbfcl_demo_gravity_turn(g0, 0.0f, 0.0f, g);
    ck_assert(g[0] == 0.0f && g[1] == -9.81f && g[2] == 0.0f);
    const float tilted[3] = {1.0f, -9.0f, 2.0f};
    float angles[4][2] = {{30, 40}, {-70, 10}, {90, -90}, {13, 77}};
    for (int i = 0; i < 4; i++) {
        pbfcl_demo_gravity_turn(tilted, angles[i][0], angles[i][1], g);
        double m = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        ck_assert_msg(fabs(m - sqrt(86.0)) < 1e-5, "turn %d: |g| = %g", i, m);
    }
}
END_TEST

/* The colour scales the legend draws: the ends and middle are the stops, a quarter is halfway
 * between the first two, values outside 0..1 clamp; the labels give the unit and the values
 * at the ends and the middle. */
START_TEST(test_demo_ramp)
{
    for (int c = 0; c < 2; c++) {
        pbfcl_demo_color mode = c ? PBFCL_DEMO_COLOR_DENSITY : PBFCL_DEMO_COLOR_SPEED;
        const float(*s)[3] = pbfcl_demo_ramp_stops(mode);
        float lo[3], mid[3], hi[3], q[3], below[3], above[3];
        pbfcl_demo_ramp(mode, 0.0f, lo);
        pbfcl_demo_ramp(mode, 0.5f, mid);
        pbfcl_demo_ramp(mode, 1.0f, hi);
        pbfcl_demo_ramp(mode, 0.25f, q);
        pbfcl_demo_ramp(mode, -3.0f, below);
        pbfcl_demo_ramp(mode, 7.0f, above);
        for (int i = 0; i < 3; i++) {
            ck_assert(fabsf(lo[i] - s[0][i]) < 1e-6f && fabsf(mid[i] - s[1][i]) < 1e-6f);
            ck_assert(fabsf(hi[i] - s[2][i]) < 1e-6f);
            ck_assert(fabsf(q[i] - 0.5f * (s[0][i] + s[1][i])) < 1e-6f);
            ck_assert(below[i] == lo[i] && above[i] == hi[i]);
        }
    }
    char caption[32], ticks[3][16];
    const float speed[2] = {0.0f, 4.4f}, density[2] = {900.0f, 1100.0f};
    pbfcl_demo_ramp_labels(PBFCL_DEMO_COLOR_SPEED, speed, caption, sizeof caption, ticks);
    ck_assert_str_eq(caption, "SPEED, M/S");
    ck_assert(!strcmp(ticks[0], "0.0") && !strcmp(ticks[1], "2.2") && !strcmp(ticks[2], "4.4"));
    pbfcl_demo_ramp_labels(PBFCL_DEMO_COLOR_DENSITY, density, caption, sizeof caption, ticks);
    ck_assert_str_eq(caption, "DENSITY, KG/M3");
    ck_assert(!strcmp(ticks[0], "900") && !strcmp(ticks[1], "1000") && !strcmp(ticks[2], "1100"));
}
END_TEST

/* A HUD as the demo fills it, with the given device name and scene name. */
static pbfcl_demo_hud hud_with_names(const char *device, const char *scene)
{
    pbfcl_demo_hud h = {.scene = scene,
                        .fps = 59.9,
                        .sim_ms = 123.45,
                        .render_ms = 12.34,
                        .particles = 5130,
                        .substeps = 3,
                        .method = "PBF",
                        .device = device,
                        .path = "HOST COPY",
                        .color = "SPEED",
                        .render = "FLUID",
                        .smoothing = "BILATERAL X2",
                        .passes = "PASSES SUN 0.1 SCE 0.2 DEP 0.3",
                        .passes2 = "       THI 0.0 SMO 0.0 SHA 0.0",
                        .settings = "ITER 4  VISC 0.05  VORT 0.01 M/S",
                        .gravity = "GRAVITY 0.0 -9.8 0.0 M/S2",
                        .diffuse = "DIFFUSE 0 1.68 MS",
                        .recording = -1};
    return h;
}

/* The HUD's status panel is as wide whatever the device's name: a short name is shown whole;
 * one longer than the panel (an Intel Xeon's PoCL device, or longer) keeps its start and its
 * end with "..." between them, as do a long scene name (the states after it kept) and a long
 * message; no line is longer than PBFCL_DEMO_HUD_COLUMNS, and at 1280 pixels wide the panel
 * ends in the window's left half, so the tank and the top-right band stay clear. */
START_TEST(test_demo_hud_layout)
{
    pbfcl_demo_hud_text t;
    pbfcl_demo_hud h = hud_with_names("pthread-skylake-avx512-AMD EPYC", "dam-break");
    pbfcl_demo_hud_layout(&h, &t);
    ck_assert_int_eq(t.count, 10);
    ck_assert_str_eq(t.line[0], "PBFCL  dam-break");
    ck_assert_str_eq(t.line[7], "DEVICE pthread-skylake-avx512-AMD EPYC");
    float short_scale = pbfcl_demo_hud_font_scale(&t, 1280, 1.0f);

    char device[400], scene[300], message[200];
    snprintf(device, sizeof device, "%s and %0200d", LONG_DEVICE_NAME, 7);
    snprintf(scene, sizeof scene, "a-scene-named-at-length-%0250d-end", 0);
    memset(message, 'm', sizeof message - 1);
    message[sizeof message - 1] = '\0';
    h = hud_with_names(device, scene);
    h.paused = true, h.recording = 12, h.message = message;
    pbfcl_demo_hud_layout(&h, &t);
    ck_assert_int_eq(t.count, 11);
    ck_assert_int_eq(t.status_count, 10);
    for (int i = 0; i < t.count; i++)
        ck_assert_msg(strlen(t.line[i]) <= PBFCL_DEMO_HUD_COLUMNS, "line %d is %zu long: %s", i,
                      strlen(t.line[i]), t.line[i]);
    ck_assert_str_eq(t.line[7], "DEVICE pthread-sapphirer...00000000000000000000007");
    ck_assert_str_eq(t.line[0], "PBFCL  a-scene-named-at-...end  [PAUSED]  [REC 12]");
    ck_assert(t.accent[0] && t.accent[10] && !t.accent[7]);
    ck_assert_float_eq(pbfcl_demo_hud_font_scale(&t, 1280, 1.0f), short_scale);
    float right = pbfcl_demo_hud_right_bound(1.0f);
    ck_assert_msg(right <= 640.0f, "the HUD's panel may reach x = %.0f of 1280", right);

    char out[8];
    pbfcl_demo_hud_elide(out, sizeof out, "ABCDEFGHIJ", 7);
    ck_assert_str_eq(out, "AB...IJ");
    pbfcl_demo_hud_elide(out, sizeof out, "ABCDEFG", 7);
    ck_assert_str_eq(out, "ABCDEFG");
    pbfcl_demo_hud_elide(out, 4, "ABCDEFGHIJ", 7); /* the buffer bounds it too */
    ck_assert_str_eq(out, "ABC");
}
END_TEST

/* Shadows: the same frame of a dam break drawn as spheres with and without --no-shadows
 * differs only by pixels that the shadows darken (the floor beside and under the fluid, the
 * fluid itself), and there are many of those. Rows of the HUD and the legend are left out. */
START_TEST(test_demo_shadows)
{
    char args[256], out[16384], with_path[64], without_path[64];
    snprintf(with_path, sizeof with_path, "/tmp/pbfcl_demo_%d_shadow.png", (int)getpid());
    snprintf(without_path, sizeof without_path, "/tmp/pbfcl_demo_%d_noshadow.png", (int)getpid());
    snprintf(args, sizeof args, "--frames 20 --screenshot %s", with_path);
    int rc = run_small_demo(args, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "no shadows") == NULL, "shadows are off:\n%s", out);
    snprintf(args, sizeof args, "--frames 20 --no-shadows --screenshot %s", without_path);
    rc = run_small_demo(args, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    image a = read_png(with_path), b = read_png(without_path);
    long darker = 0, brighter = 0;
    for (int y = 160; y < a.h - 80; y++)
        for (int x = 0; x < a.w; x++) {
            size_t o = ((size_t)y * (size_t)a.w + (size_t)x) * 3;
            int d = surface_luma(a.rgb + o) - surface_luma(b.rgb + o);
            darker += d < -12;
            brighter += d > 12;
        }
    printf("shadows: %ld pixels darker, %ld brighter than without\n", darker, brighter);
    ck_assert_msg(darker > 600, "only %ld pixels darkened by the shadows", darker);
    ck_assert_msg(brighter < darker / 50, "%ld pixels brighter with shadows", brighter);
    free(a.rgb);
    free(b.rgb);
    unlink(with_path);
    unlink(without_path);
}
END_TEST

/* Spray, foam and bubbles: the same dam-break frame drawn as a fluid surface with them (the
 * default) and with --no-diffuse. They never act on the fluid, so the two frames differ only
 * where sprites are drawn, and sprites are white over the blue water: many pixels are
 * brighter with them, hardly any darker, and the run says how many there are; with
 * --no-diffuse it says they are off. The rows of the HUD's panel are left out: it prints their
 * count, and its longest line, so its width, differs (at 640x480 it ends above y = 210). */
START_TEST(test_demo_diffuse)
{
    char args[256], cmd[2048], out[16384], on_path[64], off_path[64];
    snprintf(on_path, sizeof on_path, "/tmp/pbfcl_demo_%d_diffuse.png", (int)getpid());
    snprintf(off_path, sizeof off_path, "/tmp/pbfcl_demo_%d_nodiffuse.png", (int)getpid());
    const char *x = "xvfb-run -a -s '-screen 0 640x480x24'";
    snprintf(args, sizeof args, "--size 640x480 --particles 2000 --frames 40 --screenshot %s",
             on_path);
    int rc = run_demo(x, args, cmd, sizeof cmd, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    const char *line = strstr(out, "diffuse particles ");
    ck_assert_msg(line && atoi(line + strlen("diffuse particles ")) > 20,
                  "too few diffuse particles:\n%s", out);
    const char *ms = strstr(line, "), "); /* the diffuse stage's time, as the HUD shows it */
    ck_assert_msg(ms && atof(ms + 3) > 0.0, "no device time for the diffuse stage:\n%s", out);
    snprintf(args, sizeof args,
             "--size 640x480 --particles 2000 --frames 40 --no-diffuse --screenshot %s", off_path);
    rc = run_demo(x, args, cmd, sizeof cmd, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "diffuse particles off") != NULL, "%s", out);
    image a = read_png(on_path), b = read_png(off_path);
    long darker = 0, brighter = 0;
    for (int y = 210; y < a.h; y++)
        for (int x = 0; x < a.w; x++) {
            size_t o = ((size_t)y * (size_t)a.w + (size_t)x) * 3;
            int d = surface_luma(a.rgb + o) - surface_luma(b.rgb + o);
            darker += d < -12;
            brighter += d > 12;
        }
    printf("diffuse: %ld pixels brighter, %ld darker than without\n", brighter, darker);
    ck_assert_msg(brighter > 100, "only %ld pixels brightened by the sprites", brighter);
    ck_assert_msg(darker < brighter / 20, "%ld pixels darker with the sprites", darker);
    free(a.rgb);
    free(b.rgb);
    unlink(on_path);
    unlink(off_path);
}
END_TEST

/* A broken shader names the file, the stage and the compiler's log; too old an OpenGL names
 * the version found. */
START_TEST(test_demo_gl_errors)
{
    char dir[64], cmd[1024], out[256];
    snprintf(dir, sizeof dir, "/tmp/pbfcl_shaders_%d", (int)getpid());
    const char *shaders = getenv("PBFCL_SHADER_SOURCE");
    ck_assert_msg(shaders != NULL, "PBFCL_SHADER_SOURCE (the shaders/ folder) is not set");
    snprintf(cmd, sizeof cmd,
             "rm -rf %s && cp -r '%s' %s && echo 'this is not GLSL;' >> %s/particle.frag", dir,
             shaders, dir, dir);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);

    char env[256];
    snprintf(env, sizeof env, "PBFCL_SHADER_DIR=%s xvfb-run -a -s '-screen 0 640x480x24'", dir);
    expect_failure(env, "--frames 1", 1, "particle.frag (fragment stage)");
    expect_failure(env, "--frames 1", 1, "info log:");
    expect_failure("MESA_GL_VERSION_OVERRIDE=3.0 xvfb-run -a -s '-screen 0 640x480x24'",
                   "--frames 1", 1, "needs OpenGL 3.3 (core profile), but the display offers");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
}
END_TEST
#endif

#ifdef PBFCL_HAVE_PNG
/* Writes a 512 x 512 noise image (a PNG of about 800 KB) to dir/shot.png in a child whose
 * files may grow to 20 KB only (a full disk); exits 0 if the write failed with an error. */
static int write_noise_png(const char *dir)
{
    size_t bytes = 512 * 512 * 3;
    unsigned char *rgb = malloc(bytes);
    uint32_t x = 12345;
    for (size_t i = 0; i < bytes; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        rgb[i] = (unsigned char)x;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/shot.png", dir);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {20000, 20000};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    return pbfcl_demo_write_png(path, rgb, 512, 512) == PBFCL_ERR_IO ? 0 : 1;
}

/* Defect 2: a screenshot that does not fit on the disk fails and leaves the earlier file of
 * that name as it was, with no temporary file beside it. It was written in place: a cut PNG
 * without IEND, or an empty one. */
START_TEST(test_screenshot_full_disk)
{
    char dir[] = "/tmp/pbfcl_shot_XXXXXX", path[128], text[64] = "";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/shot.png", dir);
    FILE *f = fopen(path, "w");
    fputs("old screenshot\n", f);
    fclose(f);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(write_noise_png(dir));
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(text, sizeof text, f));
    fclose(f);
    ck_assert_str_eq(text, "old screenshot\n");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1 && rm -rf %s", dir, dir);
    ck_assert_msg(system(cmd) == 0, "a temporary file was left in %s", dir);
}
END_TEST
#endif

#if defined(PBFCL_HAVE_DEMO) && defined(PBFCL_HAVE_PNG)
/* Renders `frames` frames of `scene` (its own particle count) under Xvfb as `render` into
 * path. */
static void render_own_scene(const char *scene, int frames, const char *render, const char *path)
{
    char prefix[256], args[512], cmd[2048], out[16384];
    snprintf(prefix, sizeof prefix, "xvfb-run -a -s '-screen 0 %dx%dx24'", DEMO_W, DEMO_H);
    snprintf(args, sizeof args, "--scene %s --render %s --frames %d --screenshot %s", scene, render,
             frames, path);
    int rc = run_demo(prefix, args, cmd, sizeof cmd, out, sizeof out);
    printf("%s", out);
    ck_assert_msg(rc == 0, "`%s` exited %d; output:\n%s", cmd, rc, out);
}

/* A cloth's colours, lit (host/demo/demo_mesh.c): the raspberry front (red well above green,
 * some blue) or the cream back (red, then green, then blue, none of them small). Water, the
 * bodies' and obstacles' colours, the floor, the box and the background are none of them. */
static bool is_cloth_colour(const unsigned char *p)
{
    int r = p[0], g = p[1], b = p[2];
    bool front = r >= 60 && r > g + 30 && 20 * b > 7 * r && 10 * g < 6 * r && r > b + 15;
    bool back = r >= 60 && 4 * g > 3 * r && g > b + 8 && r > b + 20 && 20 * b > 9 * r;
    return front || back;
}

/* A rope's hemp colour, lit: red, then green, then blue, each well apart. */
static bool is_rope_colour(const unsigned char *p)
{
    int r = p[0], g = p[1], b = p[2];
    return r >= 50 && r > g + 10 && g > b + 10 && 5 * b > r && 5 * b < 3 * r && 20 * g < 17 * r;
}

/* A shape's pale grey, lit on its bright side: red and green equal, blue a little above. The
 * floor, the box's lines and the background are neutral grey; water is far bluer. */
static bool is_shape_colour(const unsigned char *p)
{
    return p[0] >= 100 && abs(p[0] - p[1]) <= 6 && p[2] >= p[0] + 2 && p[2] <= p[0] + 30;
}

/* The pixels below the HUD for which pred holds, as a mask (1 byte each). */
static unsigned char *mask_of(const image *im, bool (*pred)(const unsigned char *), long *count)
{
    unsigned char *m = calloc((size_t)im->w * (size_t)im->h, 1);
    ck_assert_ptr_nonnull(m);
    *count = 0;
    for (int y = DEMO_HUD_BOTTOM; y < im->h; y++)
        for (int x = 0; x < im->w; x++) {
            size_t i = (size_t)y * (size_t)im->w + (size_t)x;
            m[i] = pred(im->rgb + 3 * i);
            *count += m[i];
        }
    return m;
}

/* Of the pixels between the first and the last of the mask in each row (columns: by column),
 * the fraction in the mask: 1 for a region with no gap across it. */
static double span_fill(const unsigned char *m, int w, int h, bool columns)
{
    long inside = 0, span = 0;
    int lines = columns ? w : h, along = columns ? h : w;
    for (int l = 0; l < lines; l++) {
        int first = -1, last = -1;
        long on = 0;
        for (int k = 0; k < along; k++) {
            size_t i =
                columns ? (size_t)k * (size_t)w + (size_t)l : (size_t)l * (size_t)w + (size_t)k;
            if (m[i]) {
                first = first < 0 ? k : first;
                last = k;
                on++;
            }
        }
        if (first >= 0) {
            span += last - first + 1;
            inside += on;
        }
    }
    return span ? (double)inside / (double)span : 0.0;
}

/* The size of the largest 8-connected region of the mask, and its columns' extent. */
static long largest_region(const unsigned char *m, int w, int h, int *x_extent)
{
    unsigned char *seen = calloc((size_t)w * (size_t)h, 1);
    int *stack = malloc((size_t)w * (size_t)h * sizeof *stack);
    ck_assert(seen && stack);
    long best = 0;
    *x_extent = 0;
    for (int start = 0; start < w * h; start++) {
        if (!m[start] || seen[start])
            continue;
        long size = 0;
        int top = 0, lo = w, hi = -1;
        stack[top++] = start;
        seen[start] = 1;
        while (top > 0) {
            int i = stack[--top], x = i % w, y = i / w;
            size++;
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int nx = x + dx, ny = y + dy;
                    if (nx < 0 || ny < 0 || nx >= w || ny >= h)
                        continue;
                    int j = ny * w + nx;
                    if (m[j] && !seen[j]) {
                        seen[j] = 1;
                        stack[top++] = j;
                    }
                }
        }
        if (size > best) {
            best = size;
            *x_extent = hi - lo + 1;
        }
    }
    free(seen);
    free(stack);
    return best;
}

/* cloth-drape at frame 14 (the cloth fallen onto the sphere, its corners still spread out) in
 * both render modes: the cloth is a surface of its colours with no gap across it, row by row
 * and column by column, where the spheres of its particles left the background and the
 * obstacle's green between them (51 % of each row's span filled, measured with the spheres at
 * --particles 5000); its particles are drawn as no sphere (nothing of the bodies' red). */
START_TEST(test_demo_cloth_surface)
{
    const char *modes[2] = {"spheres", "fluid"};
    for (int k = 0; k < 2; k++) {
        char path[96];
        snprintf(path, sizeof path, "/tmp/pbfcl_demo_%d_cloth_%s.png", (int)getpid(), modes[k]);
        render_own_scene("cloth-drape", 14, modes[k], path);
        image im = read_png(path);
        unlink(path);
        long count;
        unsigned char *m = mask_of(&im, is_cloth_colour, &count);
        double rows = span_fill(m, im.w, im.h, false), cols = span_fill(m, im.w, im.h, true);
        printf("cloth-drape frame 14, %s: %ld cloth pixels, rows %.4f and columns %.4f filled\n",
               modes[k], count, rows, cols);
        ck_assert_msg(count > 10000, "%s: only %ld cloth-coloured pixels", modes[k], count);
        ck_assert_msg(rows > 0.97 && cols > 0.97,
                      "%s: the cloth has gaps: %.3f of its rows' and %.3f of its columns' spans "
                      "filled",
                      modes[k], rows, cols);
        free(m);
        free(im.rgb);
    }
}
END_TEST

/* rope-bridge at frame 2 (the cube still above it): the rope is one tube of its colour from
 * pinned end to pinned end, more than 300 pixels across. */
START_TEST(test_demo_rope_tube)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/pbfcl_demo_%d_rope.png", (int)getpid());
    render_own_scene("rope-bridge", 2, "spheres", path);
    image im = read_png(path);
    unlink(path);
    long count;
    unsigned char *m = mask_of(&im, is_rope_colour, &count);
    int extent;
    long region = largest_region(m, im.w, im.h, &extent);
    printf("rope-bridge frame 2: %ld rope pixels, the largest region %ld across %d columns\n",
           count, region, extent);
    ck_assert_msg(count > 1500, "only %ld rope-coloured pixels", count);
    ck_assert_msg(region >= 0.95 * (double)count && extent > 300,
                  "the rope is not one tube: its largest region holds %ld of %ld pixels and "
                  "spans %d columns",
                  region, count, extent);
    free(m);
    free(im.rgb);
}
END_TEST

/* A scene with a sphere, a capsule, a box and a convex hull as colliders shows more than 3000
 * pixels of the shapes' colour at frame 2, the same scene without them none; and the shapes
 * cast shadows: turning shadows off (--no-shadows) brightens more than 2000 more pixels with
 * them than without them. */
START_TEST(test_demo_shapes)
{
    char scene[2][96], obj[96];
    snprintf(obj, sizeof obj, "/tmp/pbfcl_demo_%d_wedge.obj", (int)getpid());
    FILE *f = fopen(obj, "w");
    ck_assert_ptr_nonnull(f);
    fputs("v 0 0 0\nv 0.3 0 0\nv 0.3 0.2 0\nv 0 0 0.3\nv 0.3 0 0.3\nv 0.3 0.2 0.3\nf 1 3 2\nf "
          "4 5 6\nf 1 2 5 4\nf 2 3 6 5\nf 3 1 4 6\n",
          f);
    fclose(f);
    const char *head = "{\"name\": \"shapes\", \"domain\": {\"min\": [0, 0, 0], \"max\": [1.2, "
                       "0.8, 0.4]}, \"particle_radius\": 0.02, \"fluid\": [{\"min\": [0, 0, 0], "
                       "\"max\": [0.25, 0.3, 0.4]}]";
    long shown[2], shadowed[2];
    for (int k = 0; k < 2; k++) {
        snprintf(scene[k], sizeof scene[k], "/tmp/pbfcl_demo_%d_shapes%d.json", (int)getpid(), k);
        f = fopen(scene[k], "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%s%s}\n", head,
                k ? ""
                  : ", \"colliders\": [{\"type\": \"sphere\", \"radius\": 0.08, "
                    "\"position\": [0.5, 0.1, 0.2]}, {\"type\": \"capsule\", \"radius\": "
                    "0.04, \"half_length\": 0.12, \"position\": [0.75, 0.3, 0.2]}, "
                    "{\"type\": \"box\", \"half_extents\": [0.05, 0.08, 0.15], "
                    "\"position\": [1.1, 0.08, 0.2]}, {\"type\": \"convex\", \"file\": "
                    "\"pbfcl_demo_WEDGE\", \"position\": [0.8, 0, 0.05]}]");
        fclose(f);
        char sed[512];
        snprintf(sed, sizeof sed, "sed -i 's|pbfcl_demo_WEDGE|%s|' %s", obj, scene[k]);
        ck_assert_int_eq(system(sed), 0);
        char path[2][96];
        image im[2];
        for (int lit = 0; lit < 2; lit++) { /* with shadows, then without */
            snprintf(path[lit], sizeof path[lit], "/tmp/pbfcl_demo_%d_shapes%d_%d.png",
                     (int)getpid(), k, lit);
            render_own_scene(scene[k], 2, lit ? "spheres --no-shadows" : "spheres", path[lit]);
            im[lit] = read_png(path[lit]);
            unlink(path[lit]);
        }
        unlink(scene[k]);
        unsigned char *m = mask_of(&im[0], is_shape_colour, &shown[k]);
        free(m);
        shadowed[k] = 0;
        for (int y = DEMO_HUD_BOTTOM; y < im[0].h; y++)
            for (int x = 0; x < im[0].w; x++) {
                const unsigned char *p = im[0].rgb + 3 * ((size_t)y * (size_t)im[0].w + (size_t)x);
                const unsigned char *q = im[1].rgb + 3 * ((size_t)y * (size_t)im[0].w + (size_t)x);
                shadowed[k] += (q[0] + q[1] + q[2]) - (p[0] + p[1] + p[2]) > 24;
            }
        free(im[0].rgb);
        free(im[1].rgb);
    }
    unlink(obj);
    printf("shape-coloured pixels: %ld with the colliders, %ld without; pixels darkened by the "
           "shadows: %ld with, %ld without\n",
           shown[0], shown[1], shadowed[0], shadowed[1]);
    ck_assert_msg(shown[0] > 3000, "the colliders show as only %ld pixels", shown[0]);
    ck_assert_msg(shown[1] < 50, "the scene without colliders has %ld shape-coloured pixels",
                  shown[1]);
    ck_assert_msg(shadowed[0] > shadowed[1] + 2000,
                  "the colliders cast no shadow: %ld pixels darkened with them, %ld without",
                  shadowed[0], shadowed[1]);
}
END_TEST
#endif

#if defined(PBFCL_HAVE_DEMO) && defined(PBFCL_HAVE_PNG)
/* Picking a shape by its bounding sphere: of two spheres on the ray the nearer, from inside a
 * sphere that one at distance 0, none behind the camera or beside the ray; a drag's offset
 * scales with the depth and the field of view, right for +x and up for -y (screen points). */
START_TEST(test_demo_pick)
{
    float centres[9] = {0, 0, -5, 0, 0, -2, 3, 0, -1}, radii[3] = {1, 0.5f, 0.5f};
    float origin[3] = {0, 0, 0}, dir[3] = {0, 0, -1}, t = -1;
    ck_assert_int_eq(pbfcl_demo_pick_sphere(centres, radii, 3, origin, dir, &t), 1);
    ck_assert_float_eq_tol(t, 1.5f, 1e-6f);
    float inside[3] = {0, 0, -5};
    ck_assert_int_eq(pbfcl_demo_pick_sphere(centres, radii, 1, inside, dir, &t), 0);
    ck_assert_float_eq(t, 0.0f);
    float back[3] = {0, 0, 1};
    ck_assert_int_eq(pbfcl_demo_pick_sphere(centres, radii, 2, origin, back, &t), -1);
    float aside[3] = {0.6f, 0.8f, 0.0f};
    ck_assert_int_eq(pbfcl_demo_pick_sphere(centres, radii, 3, origin, aside, &t), -1);
    float right[3] = {1, 0, 0}, up[3] = {0, 1, 0}, move[3];
    pbfcl_demo_drag_offset(right, up, 1.0f, 100, 2.0f, 10.0f, 5.0f, move); /* 0.04 m a point */
    ck_assert_float_eq_tol(move[0], 0.4f, 1e-6f);
    ck_assert_float_eq_tol(move[1], -0.2f, 1e-6f);
    ck_assert_float_eq(move[2], 0.0f);
}
END_TEST
#endif

static int run_cloth_suite(void)
{
#if defined(PBFCL_HAVE_DEMO) && defined(PBFCL_HAVE_PNG)
    if (!have_xvfb()) {
        printf("SKIP: xvfb-run is not installed (apt-get install xvfb); the demo's cloth test "
               "needs a virtual display\n");
        return PBFCL_TEST_SKIP;
    }
    Suite *s = suite_create("demo_cloth");
    TCase *tc = tcase_create("meshes");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_demo_cloth_surface);
    tcase_add_test(tc, test_demo_rope_tube);
    tcase_add_test(tc, test_demo_shapes);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
#else
    printf("SKIP: this build has no demo or no PNG support (needs SDL2, GLEW and libpng)\n");
    return PBFCL_TEST_SKIP;
#endif
}

static int run_screenshot_suite(void)
{
#if defined(PBFCL_HAVE_DEMO) && defined(PBFCL_HAVE_PNG)
    if (!have_xvfb()) {
        printf("SKIP: xvfb-run is not installed (apt-get install xvfb); the demo screenshot "
               "test needs a virtual display\n");
        return PBFCL_TEST_SKIP;
    }
    Suite *s = suite_create("demo_screenshot");
    TCase *tc = tcase_create("xvfb");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_demo_screenshot);
    tcase_add_test(tc, test_demo_fluid_surface);
    tcase_add_test(tc, test_demo_gl_errors);
    suite_add_tcase(s, tc);
    TCase *bodies = tcase_create("bodies");
    tcase_set_timeout(bodies, 600);
    tcase_add_test(bodies, test_demo_bodies);
    tcase_add_test(bodies, test_demo_obstacles);
    tcase_add_test(bodies, test_demo_fountain);
    suite_add_tcase(s, bodies);
    TCase *artefacts = tcase_create("artefacts");
    tcase_set_timeout(artefacts, 600);
    tcase_add_test(artefacts, test_demo_surface_artefacts);
    suite_add_tcase(s, artefacts);
    TCase *record = tcase_create("record");
    tcase_set_timeout(record, 600);
    tcase_add_test(record, test_demo_record);
    tcase_add_test(record, test_demo_record_stops);
    tcase_add_test(record, test_demo_shadows);
    tcase_add_test(record, test_demo_diffuse);
    tcase_add_test(record, test_demo_paused);
    suite_add_tcase(s, record);
    return test_run_suite(s, true);
#else
    printf("SKIP: this build has no demo or no PNG support (needs SDL2, GLEW and libpng)\n");
    return PBFCL_TEST_SKIP;
#endif
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--screenshot"))
        return run_screenshot_suite();
    if (argc > 1 && !strcmp(argv[1], "--cloth"))
        return run_cloth_suite();
    Suite *s = suite_create("demo");
    TCase *tc = tcase_create("command_line");
    tcase_set_timeout(tc, 120);
#ifdef PBFCL_HAVE_DEMO
    tcase_add_test(tc, test_demo_bad_options);
#endif
    tcase_add_test(tc, test_demo_no_display);
#ifdef PBFCL_HAVE_PNG
    tcase_add_test(tc, test_screenshot_full_disk);
#endif
#if defined(PBFCL_HAVE_DEMO) && defined(PBFCL_HAVE_PNG)
    tcase_add_test(tc, test_surface_metrics);
    tcase_add_test(tc, test_record_folder);
    tcase_add_test(tc, test_demo_tune);
    tcase_add_test(tc, test_demo_tune_wind);
    tcase_add_test(tc, test_demo_gravity_turn);
    tcase_add_test(tc, test_demo_ramp);
    tcase_add_test(tc, test_demo_hud_layout);
    tcase_add_test(tc, test_demo_pick);
#endif
    suite_add_tcase(s, tc);
    return test_run_suite(s, false);
}
