/* Tests of the stage attach_shapes (cl/pbf/attach.cl, host/core/pbf/attach.c) against a plain C
 * reference in double precision at awkward sizes (0, 1, the work-group size - 1, wg, wg + 1, a
 * prime): particles in a shuffled order, some static with an entry (each moved to its shape's
 * point), some static without one, some not static with one (neither moves); entries on several
 * shapes of a table with rows of the colliders' size, one shape gone (index 0xffffffff: its
 * particles stay); random poses with unit quaternions; the phase tag in x*.w kept. */
#include "pbfcl_shared.h"
#include "runtime/build_options.h"
#include "runtime/programs.h"
#include "sim/solver_method.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 5    /* shapes in the table */
#define STRIDE 13 /* float4 per row, as pbfcl_collider_shape's 208 bytes */
#define NAMED 4   /* shapes the entries name: rows 4, 0, 2 and one gone */

static const cl_uint shape_index[NAMED] = {4, 0, 2, 0xffffffffu};

/* c + R(q) p in double. */
static void place(const float *c, const float *q, const float *p, double *out)
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    for (int a = 0; a < 3; a++)
        out[a] = c[a] + m[a][0] * p[0] + m[a][1] * p[1] + m[a][2] * p[2];
}

/* One case of n particles on device cl with kernel k of work-group size wg. */
static void run_case(pbfcl_cl *cl, cl_kernel k, size_t wg, size_t n, uint64_t *rng)
{
    cl_uint *id = malloc((n + 1) * 4), *phase = malloc((n + 1) * 4), *entry_id = malloc(n * 4 + 4);
    cl_float4 *pred = malloc((n + 1) * 16), *out = malloc((n + 1) * 16);
    cl_float4 *point = malloc((n + 1) * 16), table[ROWS * STRIDE];
    memset(table, 0xff, sizeof table); /* the rows' other fields: NaN, never read */
    for (int r = 0; r < ROWS; r++) {
        float q[4], len = 0.0f;
        for (int a = 0; a < 4; a++) {
            q[a] = test_randf(rng, -1.0f, 1.0f);
            len += q[a] * q[a];
        }
        for (int a = 0; a < 4; a++) {
            table[r * STRIDE].s[a] = a < 3 ? test_randf(rng, -1.0f, 1.0f) : 0.0f;
            table[r * STRIDE + 1].s[a] = q[a] / sqrtf(len);
        }
    }
    for (size_t i = 0; i < n; i++)
        id[i] = (cl_uint)i;
    test_shuffle(id, n, rng);
    size_t m = 0;
    for (size_t j = 0; j < n; j++) { /* entries of about half the ids, ascending */
        if (test_rand(rng) % 2)
            continue;
        entry_id[m] = (cl_uint)j;
        for (int a = 0; a < 3; a++)
            point[m].s[a] = test_randf(rng, -0.2f, 0.2f);
        point[m++].s[3] = (float)(test_rand(rng) % NAMED);
    }
    for (size_t i = 0; i < n; i++) {
        cl_uint r = test_rand(rng) % 4;
        phase[i] = r == 0 ? PBFCL_PHASE_FLUID_WORD : (r == 1 ? 3u : PBFCL_PHASE_STATIC_WORD);
        for (int a = 0; a < 4; a++)
            pred[i].s[a] = test_randf(rng, 0.0f, 1.0f);
    }
    cl_mem bufs[7];
    const void *data[7] = {phase, id, entry_id, point, shape_index, table, pred};
    size_t bytes[7] = {n * 4, n * 4, m * 4, m * 16, sizeof shape_index, sizeof table, n * 16};
    for (int b = 0; b < 7; b++) {
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, bytes[b], "test", &bufs[b]),
                         PBFCL_OK);
        if (bytes[b])
            test_write_buffer(bufs[b], data[b], bytes[b]);
    }
    cl_uint nn = (cl_uint)n, mm = (cl_uint)m, stride = STRIDE;
    const size_t sizes[10] = {4, 8, 8, 4, 8, 8, 8, 4, 8, 8};
    const void *args[10] = {&nn,      &bufs[0], &bufs[1], &mm,      &bufs[2],
                            &bufs[3], &bufs[4], &stride,  &bufs[5], &bufs[6]};
    for (cl_uint a = 0; a < 10; a++)
        ck_assert_int_eq(clSetKernelArg(k, a, sizes[a], args[a]), CL_SUCCESS);
    ck_assert_int_eq(pbfcl_cl_launch(cl, k, n, wg, NULL, PBFCL_STAGE_SOLVE), PBFCL_OK);
    if (n)
        test_read_buffer(bufs[6], out, n * 16);
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        size_t e = 0;
        while (e < m && entry_id[e] != id[i])
            e++;
        cl_uint row = e < m ? shape_index[(int)point[e].s[3]] : 0xffffffffu;
        if (phase[i] != PBFCL_PHASE_STATIC_WORD || row == 0xffffffffu) {
            ck_assert_msg(!memcmp(&out[i], &pred[i], 16), "n %zu: slot %zu (id %u) moved", n, i,
                          id[i]);
            continue;
        }
        double want[3];
        place(table[row * STRIDE].s, table[row * STRIDE + 1].s, point[e].s, want);
        for (int a = 0; a < 3; a++)
            ck_assert_msg(test_close(out[i].s[a], want[a], 1e-6, 1e-6),
                          "n %zu: slot %zu (id %u) axis %d at %.9g, its shape's point %.9g", n, i,
                          id[i], a, out[i].s[a], want[a]);
        ck_assert_msg(out[i].s[3] == pred[i].s[3], "n %zu: slot %zu lost its tag", n, i);
        moved++;
    }
    ck_assert(n < 64 || moved > 0);
    for (int b = 0; b < 7; b++)
        pbfcl_cl_release_buffer(&bufs[b]);
    free(id);
    free(phase);
    free(entry_id);
    free(pred);
    free(out);
    free(point);
}

static void run_reference(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_sim_kernel_config(&cl->dev, &cfg);
    char options[512];
    ck_assert_int_ge(pbfcl_build_options(&cfg, options, sizeof options), 0);
    const pbfcl_program_desc *d = pbfcl_program(PBFCL_PROGRAM_PBF);
    cl_program program;
    cl_kernel k;
    ck_assert_int_eq(pbfcl_cl_build(cl, d->files, d->nfiles, options, &program), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_kernel(program, "attach_shapes", &k), PBFCL_OK);
    size_t wg = cfg.wg_size;
    const size_t sizes[] = {0, 1, wg - 1, wg, wg + 1, 1009};
    uint64_t rng = 12345;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        run_case(cl, k, wg, sizes[s], &rng);
    printf("  attach_shapes matches the reference at n = 0, 1, %zu, %zu, %zu, 1009\n", wg - 1, wg,
           wg + 1);
    clReleaseKernel(k);
    clReleaseProgram(program);
}

START_TEST(test_attach_shapes_reference)
{
    test_each_device(run_reference);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("attach");
    TCase *tc = tcase_create("attach");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_attach_shapes_reference);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
