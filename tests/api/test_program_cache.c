/* The programs a context keeps (host/core/runtime/program_cache.c): the same kernel files and
 * options give the program built before, the least recently used goes when the cache is full
 * and every reference it held is released; a second solver on a context compiles nothing and
 * still runs after the first is destroyed, frame for frame equal to a solver on a fresh
 * context; an override directory's kernels are built each time. */
#include "runtime/build_options.h"
#include "runtime/program_cache.h"
#include "runtime/programs.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_uint program_refs(cl_program p)
{
    cl_uint n = 0;
    ck_assert_int_eq(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof n, &n, NULL),
                     CL_SUCCESS);
    return n;
}

/* A program made from source and not built: enough for the cache, which only keeps it. */
static cl_program unbuilt(pbfcl_cl *cl)
{
    const char *src = "kernel void k(global int *a) { a[0] = 1; }";
    cl_int err;
    cl_program p = clCreateProgramWithSource(cl->context, 1, &src, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return p;
}

/* find gives the program put under its key, retained; a full cache releases the least recently
 * used; destroy releases the rest, leaving each program with the caller's reference only. */
static void check_cache(pbfcl_cl *cl)
{
    enum { N = PBFCL_PROGRAM_CACHE_SIZE + 1 };
    pbfcl_program_cache c;
    pbfcl_program_cache_init(&c);
    cl_program p[N];
    char key[N][16];
    for (int i = 0; i < N; i++) {
        p[i] = unbuilt(cl);
        snprintf(key[i], sizeof key[i], "k%d", i);
    }
    ck_assert_ptr_null(pbfcl_program_cache_find(&c, key[0]));
    for (int i = 0; i < N - 1; i++) {
        pbfcl_program_cache_put(&c, key[i], p[i]);
        ck_assert_uint_eq(program_refs(p[i]), 2);
    }
    ck_assert_int_eq(pbfcl_program_cache_count(&c), PBFCL_PROGRAM_CACHE_SIZE);
    cl_program found = pbfcl_program_cache_find(&c, key[0]); /* k0 used: k1 is now the oldest */
    ck_assert_ptr_eq(found, p[0]);
    ck_assert_uint_eq(program_refs(p[0]), 3);
    clReleaseProgram(found);
    pbfcl_program_cache_put(&c, key[N - 1], p[N - 1]);
    ck_assert_int_eq(pbfcl_program_cache_count(&c), PBFCL_PROGRAM_CACHE_SIZE);
    ck_assert_uint_eq(program_refs(p[1]), 1);
    ck_assert_ptr_null(pbfcl_program_cache_find(&c, key[1]));
    ck_assert_uint_eq(program_refs(p[0]), 2);
    ck_assert_uint_eq(program_refs(p[N - 1]), 2);
    pbfcl_program_cache_destroy(&c);
    pbfcl_program_cache_destroy(&c); /* a second call does nothing */
    for (int i = 0; i < N; i++) {
        ck_assert_uint_eq(program_refs(p[i]), 1);
        clReleaseProgram(p[i]);
    }
    pbfcl_program_cache zeroed;
    memset(&zeroed, 0, sizeof zeroed); /* never initialised: keeps nothing, finds nothing */
    pbfcl_program_cache_put(&zeroed, "k", p[0]);
    ck_assert_ptr_null(pbfcl_program_cache_find(&zeroed, "k"));
    pbfcl_program_cache_destroy(&zeroed);
}

START_TEST(test_cache_keeps_and_releases)
{
    test_each_device(check_cache);
}
END_TEST

/* pbfcl_cl_build of the same files and options twice gives one program; other options another.
 * With an override directory (PBFCL_KERNEL_DIR), each build is a new program. */
static void check_build(pbfcl_cl *cl)
{
    const pbfcl_program_desc *d = pbfcl_program(PBFCL_PROGRAM_PARTICLES);
    pbfcl_build_config cfg = {.wg_size = 64,
                              .radix_bits = 4,
                              .sort_items = 4,
                              .grid_bits = 4,
                              .max_neighbors = 32,
                              .log_num_banks = 5,
                              .nb_wg_size = 64};
    char options[512], other[512];
    ck_assert_int_ge(pbfcl_build_options(&cfg, options, sizeof options), 0);
    cfg.wg_size = 32;
    ck_assert_int_ge(pbfcl_build_options(&cfg, other, sizeof other), 0);
    cl_program a, b, c;
    ck_assert_int_eq(pbfcl_cl_build(cl, d->files, d->nfiles, options, &a), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_build(cl, d->files, d->nfiles, options, &b), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_build(cl, d->files, d->nfiles, other, &c), PBFCL_OK);
    ck_assert(a != c);
    if (cl->kernel_dir[0])
        ck_assert(a != b);
    else
        ck_assert_ptr_eq(a, b);
    clReleaseProgram(a);
    cl_kernel k; /* the cache's and b's references keep the program whole */
    ck_assert_int_eq(pbfcl_cl_kernel(b, "particles_slots", &k), PBFCL_OK);
    clReleaseKernel(k);
    clReleaseProgram(b);
    clReleaseProgram(c);
}

START_TEST(test_build_reuses)
{
    test_each_device(check_build);
}
END_TEST

/* ---- solvers through the public API, counting the traced builds and reuses --------------- */

static int builds, reuses;

static void count_builds(pbfcl_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    builds += !strncmp(message, "# build\t", 8);
    reuses += !strncmp(message, "# reuse\t", 8);
    if (level <= PBFCL_LOG_WARNING)
        fprintf(stderr, "%s\n", message);
}

static pbfcl_context *open_context(int device, const char *kernel_dir)
{
    char spec[16];
    snprintf(spec, sizeof spec, "%d", device);
    pbfcl_context_desc d;
    pbfcl_context_desc_defaults(&d);
    d.device = spec;
    d.kernel_dir = kernel_dir;
    d.trace_builds = 1;
    pbfcl_context *ctx = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_OK);
    return ctx;
}

#define CUBE 6 /* particles along each side of the block */

/* A solver holding a block of CUBE^3 particles; *built and *reused: what its creation traced. */
static pbfcl_solver *block_solver(pbfcl_context *ctx, int *built, int *reused)
{
    builds = reuses = 0;
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = CUBE * CUBE * CUBE;
    d.scene.particle_radius = 0.02f;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    float p[3 * CUBE * CUBE * CUBE];
    for (int i = 0; i < CUBE * CUBE * CUBE; i++) {
        p[3 * i] = 0.3f + 0.04f * (i % CUBE);
        p[3 * i + 1] = 0.1f + 0.04f * (i / CUBE % CUBE);
        p[3 * i + 2] = 0.3f + 0.04f * (i / (CUBE * CUBE));
    }
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, CUBE * CUBE * CUBE), PBFCL_OK);
    *built = builds;
    *reused = reuses;
    return s;
}

/* The positions after frames steps. */
static void run(pbfcl_solver *s, int frames, float *out)
{
    for (int f = 0; f < frames; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, out, CUBE * CUBE * CUBE), PBFCL_OK);
}

static int device_under_test(void)
{
    int only = test_selected_device();
    ck_assert_int_ne(only, -2);
    return only >= 0 ? only : 0;
}

/* Solver B on A's context builds nothing and reuses what A built; with A destroyed, B runs as a
 * solver on a context of its own does, bit for bit. */
START_TEST(test_solvers_share_programs)
{
    pbfcl_set_log(count_builds, NULL, PBFCL_LOG_INFO);
    int dev = device_under_test();
    pbfcl_context *ctx = open_context(dev, NULL), *fresh = open_context(dev, NULL);
    int a_built, a_reused, b_built, b_reused, c_built, c_reused;
    pbfcl_solver *a = block_solver(ctx, &a_built, &a_reused);
    ck_assert_int_gt(a_built, 0);
    ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
    pbfcl_solver *b = block_solver(ctx, &b_built, &b_reused);
    ck_assert_int_eq(b_built, 0);
    ck_assert_int_eq(b_reused, a_built + a_reused);
    ck_assert_int_eq(pbfcl_solver_destroy(a), PBFCL_OK);
    pbfcl_solver *c = block_solver(fresh, &c_built, &c_reused);
    ck_assert_int_eq(c_built, a_built);
    enum { FRAMES = 5 };
    static float pb[3 * CUBE * CUBE * CUBE], pc[3 * CUBE * CUBE * CUBE];
    run(b, FRAMES, pb);
    run(c, FRAMES, pc);
    for (int i = 0; i < 3 * CUBE * CUBE * CUBE; i++)
        ck_assert_msg(pb[i] == pc[i],
                      "position %d: %.9g on the shared programs, %.9g on a fresh "
                      "context",
                      i, pb[i], pc[i]);
    ck_assert_int_eq(pbfcl_solver_destroy(b), PBFCL_OK);
    int d_built, d_reused; /* the programs outlive every solver on the context */
    pbfcl_solver *d = block_solver(ctx, &d_built, &d_reused);
    ck_assert_int_eq(d_built, 0);
    ck_assert_int_eq(pbfcl_solver_destroy(d), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(c), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(fresh), PBFCL_OK);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_WARNING);
}
END_TEST

/* With a kernel directory every solver builds its programs from the files there. */
START_TEST(test_kernel_dir_builds_each_time)
{
    pbfcl_set_log(count_builds, NULL, PBFCL_LOG_INFO);
    pbfcl_context *ctx = open_context(device_under_test(), PBFCL_TEST_CL_DIR);
    int a_built, a_reused, b_built, b_reused;
    pbfcl_solver *a = block_solver(ctx, &a_built, &a_reused);
    pbfcl_solver *b = block_solver(ctx, &b_built, &b_reused);
    ck_assert_int_gt(a_built, 0);
    ck_assert_int_eq(a_reused + b_reused, 0);
    ck_assert_int_eq(b_built, a_built);
    pbfcl_solver_destroy(a);
    pbfcl_solver_destroy(b);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_WARNING);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("program_cache");
    TCase *tc = tcase_create("cache");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_cache_keeps_and_releases);
    tcase_add_test(tc, test_build_reuses);
    tcase_add_test(tc, test_solvers_share_programs);
    tcase_add_test(tc, test_kernel_dir_builds_each_time);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
