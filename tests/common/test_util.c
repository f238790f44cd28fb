/* Test helpers: device iteration, sizes, randomness, tolerances and buffer transfers. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

pbfcl_cl *test_cl;

bool test_small(void)
{
    const char *s = getenv("PBFCL_TEST_SMALL");
    return (s && *s && *s != '0') || getenv("OCLGRIND_DATA_RACES") || getenv("LD_PRELOAD");
}

int test_device_count(void)
{
    pbfcl_device_info *list = NULL;
    int n = 0;
    if (pbfcl_cl_enumerate(&list, &n) != PBFCL_OK)
        return 0;
    free(list);
    return (test_selected_device() != -1 && n > 0) ? 1 : n;
}

int test_selected_device(void)
{
    const char *spec = getenv("PBFCL_DEVICE");
    if (!spec || !*spec)
        return -1;
    pbfcl_device_info dev;
    if (pbfcl_cl_select(spec, &dev) != PBFCL_OK)
        return -2;
    return dev.index;
}

void test_each_device(void (*fn)(pbfcl_cl *cl))
{
    pbfcl_device_info *list = NULL;
    int n = 0;
    ck_assert_int_eq(pbfcl_cl_enumerate(&list, &n), PBFCL_OK);
    ck_assert_msg(n > 0, "no OpenCL device");
    int only = test_selected_device();
    ck_assert_msg(only != -2,
                  "PBFCL_DEVICE='%s' matches no OpenCL device (the list is above); give an index "
                  "or part of a device or platform name, or unset it to test every device",
                  getenv("PBFCL_DEVICE"));
    for (int i = 0; i < n; i++) {
        pbfcl_device_info dev = list[i];
        if (only >= 0 && i != only)
            continue;
        pbfcl_cl cl;
        ck_assert_msg(pbfcl_cl_create(&cl, &dev, NULL) == PBFCL_OK, "cannot open device %s",
                      dev.device_name);
        const char *trace = getenv("PBFCL_TRACE_BUILDS"); /* tests/portability/oclgrind_run.sh */
        cl.trace_builds = trace && *trace && *trace != '0';
        if (cl.trace_builds)
            pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
        ck_assert_msg(pbfcl_cl_use_kernel_dir(&cl, getenv("PBFCL_KERNEL_DIR")) == PBFCL_OK,
                      "PBFCL_KERNEL_DIR='%s' is not a usable kernel directory",
                      getenv("PBFCL_KERNEL_DIR"));
        fprintf(stderr, "  on [%d] %s / %s\n", i, dev.platform_name, dev.device_name);
        test_cl = &cl;
        fn(&cl);
        test_cl = NULL;
        pbfcl_cl_destroy(&cl);
    }
    free(list);
}

int test_run_suite(Suite *suite, bool needs_device)
{
    if (needs_device && test_device_count() == 0) {
        printf("SKIP: no OpenCL device present; install one (e.g. apt-get install "
               "pocl-opencl-icd) to run this suite\n");
        srunner_free(srunner_create(suite)); /* Check 0.15 has no suite_free */
        return PBFCL_TEST_SKIP;
    }
    SRunner *sr = srunner_create(suite);
    /* OpenCL runtimes start threads (the device count above already did): a forked child
     * of such a process can deadlock, so tests run in-process. */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

uint32_t test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (uint32_t)(x >> 32);
}

void test_shuffle(uint32_t *a, size_t n, uint64_t *state)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = test_rand(state) % i;
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

float test_randf(uint64_t *state, float lo, float hi)
{
    return lo + (hi - lo) * (float)(test_rand(state) >> 8) * (1.0f / 16777216.0f);
}

bool test_close(double a, double b, double abs_tol, double rel_tol)
{
    if (isnan(a) || isnan(b))
        return false;
    double d = fabs(a - b);
    if (d <= abs_tol)
        return true;
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return d <= rel_tol * m;
}

void test_write_buffer(cl_mem buf, const void *data, size_t bytes)
{
    if (bytes)
        ck_assert_int_eq(
            clEnqueueWriteBuffer(test_cl->queue, buf, CL_TRUE, 0, bytes, data, 0, NULL, NULL),
            CL_SUCCESS);
}

void test_read_buffer(cl_mem buf, void *data, size_t bytes)
{
    if (bytes)
        ck_assert_int_eq(
            clEnqueueReadBuffer(test_cl->queue, buf, CL_TRUE, 0, bytes, data, 0, NULL, NULL),
            CL_SUCCESS);
}

void test_host_init(cl_mem buf, size_t bytes, uint32_t v)
{
    uint32_t *data = malloc(bytes + 4);
    ck_assert_ptr_nonnull(data);
    for (size_t k = 0; k < bytes / 4; k++)
        data[k] = v;
    test_write_buffer(buf, data, bytes);
    free(data);
}
