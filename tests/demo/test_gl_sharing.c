/* The CL/GL sharing path, executed: under Xvfb (Mesa llvmpipe) the test ICD of tests/demo/glshare/
 * offers cl_khr_gl_sharing on top of PoCL. The demo then takes the sharing path and renders
 * the image the host copy renders; each driver failure the layer fakes (PBFCL_GLSHARE_FAIL)
 * falls back to the copy with one warning; and each misuse of the sharing API that the layer
 * checks is reported, run by this program itself (`test_gl_sharing --misuse NAME`) on a small
 * GL buffer. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef PBFCL_HAVE_DEMO
#include <CL/cl_gl.h>
#include <GL/glew.h>
#include <GL/glx.h>
#include <SDL.h>
#endif
#ifdef PBFCL_HAVE_PNG
#include "test_png.h"
#endif

#define XVFB "xvfb-run -a -s '-screen 0 1280x720x24'"
#define DEMO_ARGS "demo --scene dam-break --particles 5000 --frames 30"
#define RMSE_MAX 1.0 /* pixel RMSE (0..255) allowed between the sharing and the copy path */
#define HUD_ROWS                                                                                   \
    215 /* the HUD (timings differ between runs; 10 lines) ends above this row at 1280x720 */

#ifdef PBFCL_HAVE_DEMO
/* ---- the misuses, run under the layer in this process ------------------------------- */

#define MISUSE_N 1024u /* floats in the GL buffer */

typedef struct share {
    SDL_Window *win;
    SDL_GLContext glc;
    GLuint vbo;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel fill;
    cl_mem mem;
} share;

static const char *fill_source = "kernel void fill(global float *p, uint n, float v)\n"
                                 "{\n"
                                 "    uint i = get_global_id(0);\n"
                                 "    if (i < n)\n"
                                 "        p[i] = v + (float)i;\n"
                                 "}\n";

/* A hidden window with a GL 3.3 context, a GL buffer of MISUSE_N floats, a CL context
 * sharing with GL, and the buffer wrapped by clCreateFromGLBuffer; 0 or prints why. */
static int share_open(share *s)
{
    memset(s, 0, sizeof *s);
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return printf("SDL_Init: %s\n", SDL_GetError()), 1;
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    s->win = SDL_CreateWindow("glshare", 0, 0, 64, 64, SDL_WINDOW_OPENGL | SDL_WINDOW_HIDDEN);
    s->glc = s->win ? SDL_GL_CreateContext(s->win) : NULL;
    glewExperimental = GL_TRUE;
    if (!s->glc || glewInit() != GLEW_OK)
        return printf("no GL 3.3 context: %s\n", SDL_GetError()), 1;
    float zeros[MISUSE_N] = {0};
    glGenBuffers(1, &s->vbo);
    glBindBuffer(GL_ARRAY_BUFFER, s->vbo);
    glBufferData(GL_ARRAY_BUFFER, sizeof zeros, zeros, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    cl_platform_id p;
    cl_device_id d;
    cl_int err = clGetPlatformIDs(1, &p, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     (cl_context_properties)p,
                                     CL_GL_CONTEXT_KHR,
                                     (cl_context_properties)glXGetCurrentContext(),
                                     CL_GLX_DISPLAY_KHR,
                                     (cl_context_properties)glXGetCurrentDisplay(),
                                     0};
    if (err == CL_SUCCESS)
        s->ctx = clCreateContext(props, 1, &d, NULL, NULL, &err);
    if (err == CL_SUCCESS)
        s->q = clCreateCommandQueue(s->ctx, d, 0, &err);
    if (err == CL_SUCCESS)
        s->prog = clCreateProgramWithSource(s->ctx, 1, &fill_source, NULL, &err);
    if (err == CL_SUCCESS)
        err = clBuildProgram(s->prog, 1, &d, "", NULL, NULL);
    if (err == CL_SUCCESS)
        s->fill = clCreateKernel(s->prog, "fill", &err);
    glFinish();
    if (err == CL_SUCCESS)
        s->mem = clCreateFromGLBuffer(s->ctx, CL_MEM_WRITE_ONLY, s->vbo, &err);
    if (err != CL_SUCCESS)
        return printf("OpenCL set-up failed: %s\n", pbfcl_cl_error_name(err)), 1;
    return 0;
}

/* Writes v + i to the first n floats of the GL buffer's CL buffer. */
static cl_int share_fill(share *s, cl_uint n, float v)
{
    size_t global = (n + 63) / 64 * 64;
    clSetKernelArg(s->fill, 0, sizeof s->mem, &s->mem);
    clSetKernelArg(s->fill, 1, sizeof n, &n);
    clSetKernelArg(s->fill, 2, sizeof v, &v);
    return clEnqueueNDRangeKernel(s->q, s->fill, 1, NULL, &global, NULL, 0, NULL, NULL);
}

static void share_read_gl(share *s, float *out)
{
    glBindBuffer(GL_ARRAY_BUFFER, s->vbo);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, MISUSE_N * sizeof(float), out);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

static cl_int acquire(share *s)
{
    return clEnqueueAcquireGLObjects(s->q, 1, &s->mem, 0, NULL, NULL);
}

static cl_int release(share *s)
{
    return clEnqueueReleaseGLObjects(s->q, 1, &s->mem, 0, NULL, NULL);
}

/* Runs the misuse `name` (or "none", the rules kept) and checks what the calls returned;
 * the layer reports its violations on stderr. Returns 0 if the calls returned what a driver
 * enforcing the rules returns. */
static int run_misuse(const char *name)
{
    share s;
    if (share_open(&s) != 0)
        return 2;
    static float gl_data[MISUSE_N];
    cl_int got = CL_SUCCESS, want = CL_SUCCESS;
    bool ok = true;
    if (!strcmp(name, "none")) { /* the rules kept: GL sees what the kernel wrote */
        glFinish();
        got = acquire(&s);
        got = got ? got : share_fill(&s, MISUSE_N, 100.0f);
        got = got ? got : release(&s);
        got = got ? got : clFinish(s.q);
        share_read_gl(&s, gl_data);
        for (unsigned i = 0; i < MISUSE_N; i++)
            ok = ok && gl_data[i] == 100.0f + (float)i;
        printf("GL buffer after the kernel: %g %g ... %g (%s)\n", gl_data[0], gl_data[1],
               gl_data[MISUSE_N - 1], ok ? "as written" : "WRONG");
    } else if (!strcmp(name, "no-acquire")) { /* a kernel on the buffer GL owns */
        glFinish();
        got = share_fill(&s, MISUSE_N, 1.0f), want = CL_INVALID_OPERATION;
    } else if (!strcmp(name, "no-glfinish")) { /* GL may still be drawing from it */
        got = acquire(&s), want = CL_INVALID_OPERATION;
    } else if (!strcmp(name, "no-clfinish")) { /* GL uses it before the release completed */
        glFinish();
        acquire(&s);
        share_fill(&s, MISUSE_N, 1.0f);
        release(&s);
        share_read_gl(&s, gl_data);
        ok = gl_data[0] != gl_data[0]; /* NaN: the contents are undefined for GL meanwhile */
        printf("GL buffer before clFinish: %g (%s)\n", gl_data[0], ok ? "undefined" : "defined");
        glFinish();
        got = acquire(&s), want = CL_INVALID_OPERATION;
    } else if (!strcmp(name, "overflow")) { /* a kernel writing past the buffer's end */
        glFinish();
        acquire(&s);
        share_fill(&s, MISUSE_N + 8, 1.0f);
        release(&s);
        got = clFinish(s.q), want = CL_INVALID_OPERATION;
    } else if (!strcmp(name, "resized")) { /* the GL buffer re-specified after wrapping */
        glBindBuffer(GL_ARRAY_BUFFER, s.vbo);
        glBufferData(GL_ARRAY_BUFFER, 2 * MISUSE_N * sizeof(float), NULL, GL_DYNAMIC_DRAW);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        glFinish();
        got = acquire(&s), want = CL_INVALID_GL_OBJECT;
    } else if (!strcmp(name, "unreleased")) { /* freed while OpenCL still holds it */
        glFinish();
        acquire(&s);
        share_fill(&s, MISUSE_N, 1.0f);
        clFinish(s.q);
    } else {
        printf("unknown misuse '%s'\n", name);
        return 2;
    }
    printf("misuse %s: returned %s, expected %s\n", name, pbfcl_cl_error_name(got),
           pbfcl_cl_error_name(want));
    clFinish(s.q); /* completes a pending release: only the misuse itself is reported */
    clReleaseMemObject(s.mem);
    clReleaseKernel(s.fill);
    clReleaseProgram(s.prog);
    clReleaseCommandQueue(s.q);
    clReleaseContext(s.ctx);
    SDL_GL_DeleteContext(s.glc);
    SDL_DestroyWindow(s.win);
    SDL_Quit();
    return ok && got == want ? 0 : 1;
}
#endif

/* ---- the tests: child processes under Xvfb and the layer ------------------------------- */

/* Runs cmd (stdout and stderr into out); returns its exit status. */
static int run_capture(const char *cmd, char *out, size_t size)
{
    char full[4200];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) {
        snprintf(out, size, "cannot run %s", cmd);
        return 127;
    }
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Runs `program args` under Xvfb with the layer registered and preloaded, env (e.g.
 * PBFCL_GLSHARE_FAIL=x) set for it alone (not for Xvfb); returns the program's own exit
 * status (xvfb-run's may differ after a quick exit). */
static int run_layered(const char *env, const char *program, const char *args, char *out,
                       size_t size)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             XVFB " sh -c 'env %s OCL_ICD_VENDORS=\"$0\" LD_PRELOAD=\"$1\" \"$2\" %s; "
                  "echo \"exit=$?\"' '%s' '%s' '%s'",
             env, args, getenv("PBFCL_GLSHARE_VENDORS"), getenv("PBFCL_GLSHARE_LAYER"), program);
    int rc = run_capture(cmd, out, size);
    char *tag = strstr(out, "exit=");
    if (tag) {
        rc = atoi(tag + strlen("exit="));
        *tag = '\0';
    }
    return rc;
}

static const char *pbfcl_program(void)
{
    const char *p = getenv("PBFCL_PROGRAM");
    return p && *p ? p : "./pbfcl";
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static const char *self_path;

/* The misuses and what the layer says of each. */
static const struct {
    const char *name, *says;
} misuses[] = {
    {"no-acquire", "which is not acquired"},
    {"no-glfinish", "acquired without a glFinish"},
    {"no-clfinish", "acquired again before clFinish completed its release"},
    {"overflow", "wrote past the end of GL buffer"},
    {"resized", "it was 4096 at clCreateFromGLBuffer"},
    {"unreleased", "released while acquired"},
};

START_TEST(test_layer_misuse)
{
    static char out[65536];
    int rc = run_layered("", self_path, "--misuse none", out, sizeof out);
    printf("--- rules kept:\n%s", out);
    ck_assert_msg(rc == 0, "the rules kept, the layer still failed (exit %d):\n%s", rc, out);
    ck_assert_msg(strstr(out, "1 acquires, 1 releases") && strstr(out, " 0 violations"),
                  "the layer did not report one clean acquire/release:\n%s", out);
    for (size_t i = 0; i < sizeof misuses / sizeof misuses[0]; i++) {
        char args[64];
        snprintf(args, sizeof args, "--misuse %s", misuses[i].name);
        rc = run_layered("", self_path, args, out, sizeof out);
        printf("--- misuse %s:\n%s", misuses[i].name, out);
        ck_assert_msg(rc == 0, "misuse %s: the calls did not fail as a driver's would:\n%s",
                      misuses[i].name, out);
        ck_assert_msg(strstr(out, misuses[i].says) && strstr(out, " 1 violations"),
                      "misuse %s: the layer did not report one violation saying '%s':\n%s",
                      misuses[i].name, misuses[i].says, out);
    }
}
END_TEST

#ifdef PBFCL_HAVE_PNG
/* Runs the demo under the layer with extra args and env; checks it exits 0 and returns its
 * output in out. */
static void run_demo(const char *env, const char *extra, const char *png, char *out, size_t size)
{
    char args[1024];
    snprintf(args, sizeof args, DEMO_ARGS " %s --screenshot %s", extra, png);
    int rc = run_layered(env, pbfcl_program(), args, out, size);
    printf("--- demo %s %s:\n%s", env, extra, out);
    ck_assert_msg(rc == 0, "the demo (%s %s) exited %d:\n%s", env, extra, rc, out);
}

static void temp_png(char *path, size_t size, const char *what)
{
    snprintf(path, size, "/tmp/pbfcl_glshare_%d_%s.png", (int)getpid(), what);
}

/* The copy path's image, made once for the tests that compare with it. */
static image copy_image(void)
{
    static image copy;
    if (!copy.rgb) {
        static char out[65536];
        char png[128];
        temp_png(png, sizeof png, "copy");
        run_demo("", "--no-gl-sharing", png, out, sizeof out);
        ck_assert_msg(strstr(out, "positions reach OpenGL by host copy (--no-gl-sharing)"),
                      "the copy run did not say it copies:\n%s", out);
        copy = read_png(png);
        unlink(png);
        long fluid = 0;
        for (size_t i = 0; i < (size_t)copy.w * (size_t)copy.h; i++)
            fluid += is_fluid(copy.rgb + 3 * i);
        ck_assert_msg(fluid > (long)copy.w * copy.h / 50,
                      "the copy path shows little fluid (%ld "
                      "pixels): nothing to compare with",
                      fluid);
    }
    return copy;
}

/* The demo takes the sharing path with no violation, and its frame 30 is the copy path's. */
START_TEST(test_demo_sharing_path)
{
    static char out[65536];
    char png[128];
    temp_png(png, sizeof png, "shared");
    run_demo("", "", png, out, sizeof out);
    ck_assert_msg(strstr(out, "positions reach OpenGL by CL/GL sharing\n"),
                  "the demo did not take the sharing path:\n%s", out);
    ck_assert_msg(!strstr(out, "pbfcl: warning"), "the demo warned:\n%s", out);
    ck_assert_msg(strstr(out, " 30 acquires, 30 releases") && strstr(out, " 0 violations"),
                  "the layer did not see 30 clean acquire/release pairs:\n%s", out);
    image shared = read_png(png), copy = copy_image();
    unlink(png);
    double rmse = image_rmse(&shared, &copy, HUD_ROWS);
    printf("pixel RMSE below the HUD, sharing vs copy at frame 30: %.4f (bound %.1f)\n", rmse,
           RMSE_MAX);
    ck_assert_msg(rmse < RMSE_MAX, "the sharing path renders another image: RMSE %.3f", rmse);
    free(shared.rgb);
}
END_TEST

/* The same through an EGL context (SDL's offscreen driver, as on a headless GPU): the demo
 * names the EGL context and display to OpenCL, the layer checks that they are the current
 * ones, and the frame is the copy path's (which ran through GLX). */
START_TEST(test_demo_sharing_path_egl)
{
    static char out[65536];
    char png[128];
    temp_png(png, sizeof png, "shared_egl");
    run_demo("SDL_VIDEODRIVER=offscreen", "", png, out, sizeof out);
    ck_assert_msg(strstr(out, "positions reach OpenGL by CL/GL sharing\n"),
                  "the demo did not take the sharing path through EGL:\n%s", out);
    ck_assert_msg(!strstr(out, "pbfcl: warning"), "the demo warned:\n%s", out);
    ck_assert_msg(strstr(out, " 30 acquires, 30 releases") && strstr(out, " 0 violations"),
                  "the layer did not see 30 clean acquire/release pairs:\n%s", out);
    image shared = read_png(png), copy = copy_image();
    unlink(png);
    double rmse = image_rmse(&shared, &copy, HUD_ROWS);
    printf("pixel RMSE below the HUD, EGL sharing vs GLX copy at frame 30: %.4f (bound %.1f)\n",
           rmse, RMSE_MAX);
    ck_assert_msg(rmse < RMSE_MAX, "the EGL sharing path renders another image: RMSE %.3f", rmse);
    free(shared.rgb);
}
END_TEST

/* Each driver failure: one warning naming it, the copy path, the copy path's image. */
static const struct {
    const char *fail, *warning;
} failures[] = {
    {"context", "CL/GL sharing unavailable (clCreateContext with the OpenGL context failed: "
                "CL_INVALID_OPERATION)"},
    {"device", "CL/GL sharing unavailable (the OpenGL context runs on another device than"},
    {"buffer", "clCreateFromGLBuffer failed (CL_OUT_OF_RESOURCES)"},
    {"acquire", "clEnqueueAcquireGLObjects failed (CL_OUT_OF_RESOURCES)"},
    {"release", "clEnqueueReleaseGLObjects failed (CL_OUT_OF_RESOURCES)"},
};

START_TEST(test_demo_fallbacks)
{
    static char out[65536];
    const char *fail = failures[_i].fail;
    char env[64], png[128];
    snprintf(env, sizeof env, "PBFCL_GLSHARE_FAIL=%s", fail);
    temp_png(png, sizeof png, fail);
    run_demo(env, "", png, out, sizeof out);
    ck_assert_msg(strstr(out, "pbfcl-glshare: injected failure: "),
                  "the layer did not fake the failure '%s':\n%s", fail, out);
    ck_assert_msg(count(out, "pbfcl: warning: ") == 1 && !strstr(out, "pbfcl: error"),
                  "failure '%s': not exactly one warning (and no error):\n%s", fail, out);
    ck_assert_msg(strstr(out, failures[_i].warning),
                  "failure '%s': the warning does not say "
                  "'%s':\n%s",
                  fail, failures[_i].warning, out);
    ck_assert_msg(strstr(out, " 0 violations"), "failure '%s': the fallback broke a rule:\n%s",
                  fail, out);
    image got = read_png(png), copy = copy_image();
    unlink(png);
    double rmse = image_rmse(&got, &copy, HUD_ROWS);
    printf("failure %s: pixel RMSE against the copy path %.4f\n", fail, rmse);
    ck_assert_msg(rmse < RMSE_MAX,
                  "failure '%s': another image than the copy path's (RMSE "
                  "%.3f)",
                  fail, rmse);
    free(got.rgb);
}
END_TEST
#endif

/* Why the tests cannot run here, or NULL. */
static const char *missing(void)
{
    static char why[512];
    char out[8192], cmd[2048];
#ifndef PBFCL_HAVE_DEMO
    return "this build has no demo (needs SDL2 and GLEW), so no test ICD either";
#endif
    if (!getenv("PBFCL_GLSHARE_LAYER") || !getenv("PBFCL_GLSHARE_VENDORS"))
        return "PBFCL_GLSHARE_LAYER/VENDORS are not set (run it through ctest)";
    if (system("command -v xvfb-run >/dev/null 2>&1") != 0)
        return "xvfb-run is not installed (apt-get install xvfb)";
    snprintf(cmd, sizeof cmd, "OCL_ICD_VENDORS='%s' LD_PRELOAD='%s' '%s' devices",
             getenv("PBFCL_GLSHARE_VENDORS"), getenv("PBFCL_GLSHARE_LAYER"), pbfcl_program());
    run_capture(cmd, out, sizeof out);
    if (!strstr(out, "cl_khr_gl_sharing      yes")) {
        snprintf(why, sizeof why,
                 "the test ICD found no PoCL (apt-get install pocl-opencl-icd): "
                 "%.300s",
                 out);
        return why;
    }
    return NULL;
}

int main(int argc, char **argv)
{
#ifdef PBFCL_HAVE_DEMO
    if (argc == 3 && !strcmp(argv[1], "--misuse"))
        return run_misuse(argv[2]);
#endif
    (void)argc;
    self_path = argv[0];
    const char *why = missing();
    if (why) {
        printf("SKIP: %s\n", why);
        return PBFCL_TEST_SKIP;
    }
    Suite *s = suite_create("gl_sharing");
    TCase *tc = tcase_create("xvfb");
    tcase_set_timeout(tc, 800);
    tcase_add_test(tc, test_layer_misuse);
#ifdef PBFCL_HAVE_PNG
    tcase_add_test(tc, test_demo_sharing_path);
    tcase_add_test(tc, test_demo_sharing_path_egl);
    tcase_add_loop_test(tc, test_demo_fallbacks, 0, (int)(sizeof failures / sizeof failures[0]));
#endif
    suite_add_tcase(s, tc);
    return test_run_suite(s, false);
}
