/* A Check suite run once per OpenCL device present, and a context on the device under test,
 * through the public API alone (pbfcl.h and Check: test_api, linked against the shared
 * library, uses it too). Header-only. */
#ifndef PBFCL_EACH_DEVICE_H
#define PBFCL_EACH_DEVICE_H

#include "pbfcl.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit code of a test program that found no OpenCL device (ctest reports it skipped). */
#define PBFCL_EACH_DEVICE_SKIP 77

/* Runs a suite called name whose one test case (time limit timeout_s seconds) gets its tests
 * from add_tests, once per OpenCL device present (only those $PBFCL_DEVICE names: an index,
 * or part of a device or platform name), in-process, with device (32 bytes) holding the
 * device's index as pbfcl_context_desc wants it; prints each device's name. Returns the exit
 * code: PBFCL_EACH_DEVICE_SKIP with a message when no device is present, 1 with a message
 * when $PBFCL_DEVICE names none, 1 when a test failed, else 0. */
static inline int test_run_on_each_device(const char *name, int timeout_s,
                                          void (*add_tests)(TCase *tc), char *device)
{
    int n = pbfcl_device_count();
    if (n == 0) {
        printf("SKIP: no OpenCL device present; install one (e.g. apt-get install "
               "pocl-opencl-icd) to run this suite\n");
        return PBFCL_EACH_DEVICE_SKIP;
    }
    const char *only = getenv("PBFCL_DEVICE");
    int failed = 0, ran = 0;
    for (int i = 0; i < n; i++) {
        char device_name[512], index[16];
        if (pbfcl_device_name(i, device_name, sizeof device_name) != PBFCL_OK)
            continue;
        snprintf(index, sizeof index, "%d", i);
        if (only && *only && strcmp(only, index) != 0 && !strstr(device_name, only))
            continue;
        snprintf(device, 32, "%d", i);
        printf("on [%d] %s\n", i, device_name);
        ran++;
        Suite *suite = suite_create(name);
        TCase *tc = tcase_create(name);
        tcase_set_timeout(tc, timeout_s);
        add_tests(tc);
        suite_add_tcase(suite, tc);
        SRunner *sr = srunner_create(suite);
        srunner_set_fork_status(sr, CK_NOFORK); /* the parent opened OpenCL already */
        srunner_run_all(sr, CK_NORMAL);
        failed += srunner_ntests_failed(sr);
        srunner_free(sr);
    }
    if (ran == 0) {
        printf("FAIL: PBFCL_DEVICE='%s' matches no OpenCL device; give an index or part of a "
               "device or platform name (pbfcl devices), or unset it to test every device\n",
               only);
        return 1;
    }
    return failed ? 1 : 0;
}

/* A context on the device under test (device, as test_run_on_each_device set it). */
static inline pbfcl_context *test_open_context(const char *device)
{
    pbfcl_context_desc d;
    pbfcl_context_desc_defaults(&d);
    d.device = device;
    pbfcl_context *ctx = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_OK);
    return ctx;
}

#endif
