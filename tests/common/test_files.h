/* Test helpers that need nothing of pbfcl (the public-API test uses them too): files in a
 * temporary directory, capturing what the code under test prints on stderr, and checking
 * that a message says something. */
#ifndef PBFCL_TEST_FILES_H
#define PBFCL_TEST_FILES_H

#include <check.h>
#include <string.h>

/* Fails the test unless text contains part. */
#define ck_assert_contains(text, part)                                                             \
    ck_assert_msg(strstr((text), (part)) != NULL, "expected '%s' in: %s", (part), (text))

/* Writes text to the file name in the test's temporary directory (made at the first call)
 * and returns its path, which stays valid through the next TEST_TEMP_PATHS - 1 calls. */
#define TEST_TEMP_PATHS 4
const char *test_temp_write(const char *name, const char *text);
/* Removes the temporary directory of test_temp_write and every file in it; does nothing if
 * there is none. */
void test_temp_remove(void);

/* Starts sending stderr to a temporary file. */
void test_capture_begin(void);
/* Restores stderr and returns what was written to it since test_capture_begin (also echoed
 * to stderr, for the test log); valid until the next capture. */
const char *test_capture_end(void);

#endif
