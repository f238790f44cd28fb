/* Test helpers that need nothing of pbfcl (test_files.h): temporary files and stderr capture. */
#include "test_files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char temp_dir[64];
static char temp_paths[TEST_TEMP_PATHS][160];
static unsigned temp_next;

const char *test_temp_write(const char *name, const char *text)
{
    if (!temp_dir[0]) {
        strcpy(temp_dir, "/tmp/pbfcl_test_XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(temp_dir));
    }
    char *path = temp_paths[temp_next++ % TEST_TEMP_PATHS];
    ck_assert_int_lt(snprintf(path, sizeof temp_paths[0], "%s/%s", temp_dir, name),
                     (int)sizeof temp_paths[0]);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

void test_temp_remove(void)
{
    if (!temp_dir[0])
        return;
    DIR *d = opendir(temp_dir);
    ck_assert_ptr_nonnull(d);
    char path[sizeof temp_paths[0] + 256];
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", temp_dir, e->d_name);
            ck_assert_msg(remove(path) == 0, "cannot remove %s", path);
        }
    closedir(d);
    ck_assert_msg(rmdir(temp_dir) == 0, "cannot remove %s", temp_dir);
    temp_dir[0] = '\0';
}

static FILE *capture_file;
static int capture_saved_fd = -1;
static char capture_text[16384];

void test_capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    ck_assert_ptr_nonnull(capture_file);
    capture_saved_fd = dup(fileno(stderr));
    dup2(fileno(capture_file), fileno(stderr));
}

const char *test_capture_end(void)
{
    fflush(stderr);
    dup2(capture_saved_fd, fileno(stderr));
    close(capture_saved_fd);
    rewind(capture_file);
    size_t len = fread(capture_text, 1, sizeof capture_text - 1, capture_file);
    capture_text[len] = '\0';
    fclose(capture_file);
    fprintf(stderr, "  (message) %s", capture_text);
    return capture_text;
}
