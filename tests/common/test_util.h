/* Helpers shared by the tests: running a check on every OpenCL device present, small
 * sizes under Oclgrind, a seeded random generator, float comparison, and buffer transfers
 * (and, from test_files.h, temporary files and stderr capture). */
#ifndef PBFCL_TEST_UTIL_H
#define PBFCL_TEST_UTIL_H

#include "runtime/clrt.h"
#include "test_files.h"

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

/* Like ck_assert_msg, but Check records nothing unless it fails: for per-element checks that
 * run millions of times (Check records every passed assertion, a write each, which made
 * test_neighbours take minutes on 2 cores). */
#define expect(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

/* Exit code of a test program that found no OpenCL device (ctest reports it skipped). */
#define PBFCL_TEST_SKIP 77

/* The device being tested (set by test_each_device for the duration of fn). */
extern pbfcl_cl *test_cl;

/* Runs fn once per OpenCL device present (only the one $PBFCL_DEVICE names, if set; the test
 * fails if it names none), with test_cl opened on it and the kernels of $PBFCL_KERNEL_DIR if
 * set, else the built-in ones; prints each device's name. Fails the test if a device cannot
 * be opened. */
void test_each_device(void (*fn)(pbfcl_cl *cl));

/* The index of the device $PBFCL_DEVICE names; -1 if it is unset, -2 if it matches none (the
 * device tests then fail with a message instead of running on every device). */
int test_selected_device(void);

/* Number of OpenCL devices present (or 1 if $PBFCL_DEVICE is set). */
int test_device_count(void);

/* Runs the suite and returns the process exit code: PBFCL_TEST_SKIP with a message when no
 * OpenCL device is present and the suite needs one, else 0 or 1. */
int test_run_suite(Suite *suite, bool needs_device);

/* True when running under Oclgrind or with PBFCL_TEST_SMALL set: use small sizes. */
bool test_small(void);

/* A seeded xorshift generator: the same seed gives the same sequence everywhere. */
uint32_t test_rand(uint64_t *state);

/* Shuffles a[0..n) (Fisher-Yates, with test_rand(state)): the same seed gives the same order. */
void test_shuffle(uint32_t *a, size_t n, uint64_t *state);
/* A float uniform in [lo, hi). */
float test_randf(uint64_t *state, float lo, float hi);

/* True if a and b agree: |a - b| <= abs_tol near zero, else relative rel_tol; NaN never
 * agrees with anything. */
bool test_close(double a, double b, double abs_tol, double rel_tol);

/* Writes bytes bytes of data into buf on test_cl's queue (blocking); nothing when bytes is 0. */
void test_write_buffer(cl_mem buf, const void *data, size_t bytes);
/* Reads bytes bytes of buf into data on test_cl's queue (blocking); nothing when bytes is 0. */
void test_read_buffer(cl_mem buf, void *data, size_t bytes);
/* Writes every byte of buf from the host (value v in each uint). Oclgrind keys its record of
 * initialised global memory by buffer number and does not drop it when a buffer is released:
 * a new buffer that gets a released buffer's number inherits that record, sized for the old
 * buffer, and kernel writes past its end are not recorded, so later reads there are reported
 * as uninitialised (docs/ALGORITHM.md, "Oclgrind and reused buffers"). A whole-buffer host
 * write replaces the record with one of the right size: the kernel tests use this on every
 * buffer a kernel fills for a later kernel. */
void test_host_init(cl_mem buf, size_t bytes, uint32_t v);

#endif
