/* The demo's command line and window: bad options and a missing display give clear errors
 * and non-zero exits; under Xvfb (`test_demo --screenshot`) a dam break is rendered to PNGs
 * whose pixels show fluid low in the frame, background above it, and motion between frames,
 * and whose fluid surface covers the spheres' pixels with far fewer strong edges. */
#include "test_util.h"
#ifdef PBFCL_HAVE_PNG
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
    expect_failure("", "--screenshot=", 2, "--screenshot needs a value");
    expect_failure("", "--particles -5", 2, "--particles");
    /* caught before a window opens, so these need no display */
    expect_failure("", "--scene no-such-scene", 1, "no-such-scene");
    if (test_device_count() > 0)
        expect_failure("", "--device no-such-device", 1, "no-such-device");
    expect_failure("", "--frames 2 --screenshot /no-such-folder/a.png", 1, "not writable");
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

/* Renders `frames` frames of a 5000-particle dam break under Xvfb into path, drawn as
 * `render` (fluid or spheres). */
static void render_dam_break(int frames, const char *render, const char *path)
{
    char prefix[128], args[512], cmd[2048], out[16384];
    snprintf(prefix, sizeof prefix, "xvfb-run -a -s '-screen 0 %dx%dx24'", DEMO_W, DEMO_H);
    snprintf(args, sizeof args,
             "--scene dam-break --particles 5000 --render %s --frames %d --screenshot %s", render,
             frames, path);
    int rc = run_demo(prefix, args, cmd, sizeof cmd, out, sizeof out);
    printf("%s", out);
    ck_assert_msg(rc == 0, "`%s` exited %d; output:\n%s", cmd, rc, out);
}

START_TEST(test_demo_screenshot)
{
    char early[64], late[64];
    snprintf(early, sizeof early, "/tmp/pbfcl_demo_%d_a.png", (int)getpid());
    snprintf(late, sizeof late, "/tmp/pbfcl_demo_%d_b.png", (int)getpid());
    render_dam_break(30, "fluid", early);
    render_dam_break(60, "fluid", late);
    image a = read_png(early), b = read_png(late);
    ck_assert_msg(a.w == DEMO_W && a.h == DEMO_H, "screenshot is %dx%d, window %dx%d", a.w, a.h,
                  DEMO_W, DEMO_H);
    ck_assert_int_eq(b.w, a.w);
    ck_assert_int_eq(b.h, a.h);

    double low = fraction(&a, 0, a.w, a.h / 2, a.h, is_fluid);
    double high = fraction(&a, 0, a.w, 0, a.h / 5, is_fluid);
    double sky = fraction(&a, a.w / 2, a.w, 0, a.h / 8, is_background);
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
    surface_stats s = surface_measure(im.rgb, im.w, im.h, 160, is_fluid);
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
 * 253.0. The bounds lie well below the first and leave room for the runs' differences. */
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
    ck_assert_msg(surface_dark_per_10k(&splash) < 20.0,
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
    TCase *artefacts = tcase_create("artefacts");
    tcase_set_timeout(artefacts, 600);
    tcase_add_test(artefacts, test_demo_surface_artefacts);
    suite_add_tcase(s, artefacts);
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
#endif
    suite_add_tcase(s, tc);
    return test_run_suite(s, false);
}
