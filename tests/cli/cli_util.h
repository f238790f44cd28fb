/* Running the pbfcl program from a test ($PBFCL_PROGRAM, set by tests/CMakeLists.txt) and
 * checking what it printed; header-only, shared by the CLI tests. */
#ifndef PBFCL_CLI_UTIL_H
#define PBFCL_CLI_UTIL_H

#include "runtime/profile.h"
#include "test_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What one run of the program did. */
typedef struct cli_result {
    int code; /* exit status; -1 if it did not exit normally (crash) */
    double seconds;
    char out[16384];
    char err[16384];
} cli_result;

static inline void cli_read_text(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t len = fread(buf, 1, size - 1, f);
    buf[len] = '\0';
    fclose(f);
}

/* The program that runs args: $PBFCL_DEV_PROGRAM (pbfcl-dev) for the developer commands
 * (bench-sort, bench-split, kernel-builds), else $PBFCL_PROGRAM (pbfcl). */
static inline const char *cli_program(const char *args)
{
    static const char *const dev[] = {"bench-sort", "bench-split", "kernel-builds"};
    const char *var = "PBFCL_PROGRAM";
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        if (!strncmp(args, dev[k], strlen(dev[k])) && !isalnum((unsigned char)args[strlen(dev[k])]))
            var = "PBFCL_DEV_PROGRAM";
    const char *program = getenv(var);
    ck_assert_msg(program != NULL, "%s is not set: run this test through ctest", var);
    return program;
}

/* Runs the shell text `prefix '$PBFCL_PROGRAM' args` with stdout and stderr captured (unless
 * args redirects stdout itself) and stdin from /dev/null; prefix may be "" or e.g.
 * "ulimit -f 8;". */
static inline void cli_run_sh(cli_result *r, const char *prefix, const char *args)
{
    char dir[] = "/tmp/pbfcl_cli_io_XXXXXX", cmd[8192], out[64], err[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    bool own_stdout = strchr(args, '>') != NULL; /* args redirects stdout itself */
    snprintf(cmd, sizeof cmd, "%s '%s' %s %s%s%s 2>'%s' </dev/null", prefix, cli_program(args),
             args, own_stdout ? "" : ">'", own_stdout ? "" : out, own_stdout ? "" : "'", err);
    double t0 = pbfcl_wall_seconds();
    int status = system(cmd);
    r->seconds = pbfcl_wall_seconds() - t0;
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    cli_read_text(out, r->out, sizeof r->out);
    cli_read_text(err, r->err, sizeof r->err);
    remove(out);
    remove(err);
    rmdir(dir);
    printf("$ %s pbfcl %s\n-> exit %d (%.2f s)\n%s%s", prefix, args, r->code, r->seconds, r->out,
           r->err);
}

static inline void cli_run(cli_result *r, const char *args)
{
    cli_run_sh(r, "", args);
}

/* Number of times part occurs in text. */
static inline int cli_count(const char *text, const char *part)
{
    int n = 0;
    for (const char *p = strstr(text, part); p; p = strstr(p + 1, part))
        n++;
    return n;
}

/* A fresh temporary directory (caller frees nothing; remove with cli_remove_tree). */
static inline void cli_tmp_dir(char *buf, size_t size)
{
    snprintf(buf, size, "/tmp/pbfcl_rel_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(buf));
}

static inline void cli_remove_tree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static inline void cli_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static inline bool cli_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* The running test's temporary directory: made by cli_setup and removed by cli_teardown, the
 * checked fixture of the CLI tests (tcase_add_checked_fixture(t, cli_setup, cli_teardown)). */
static char cli_dir[64];

static inline void cli_setup(void)
{
    cli_tmp_dir(cli_dir, sizeof cli_dir);
}

static inline void cli_teardown(void)
{
    cli_remove_tree(cli_dir);
}

/* True if an OpenCL device is present; else says the run is skipped. */
static inline bool cli_have_device(void)
{
    if (test_device_count() > 0)
        return true;
    printf("SKIP: no OpenCL device, this run is not tested\n");
    return false;
}

/* The whole of file path (NUL-terminated; free it), its size in *len; fails the test if the
 * file is missing. */
static inline char *cli_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "missing %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)size + 1);
    ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    buf[size] = '\0';
    fclose(f);
    *len = (size_t)size;
    return buf;
}

/* Writes len bytes of data to path. */
static inline void cli_spit(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* True if files a and b hold the same bytes. */
static inline bool cli_same_bytes(const char *a, const char *b)
{
    size_t la, lb;
    char *x = cli_slurp(a, &la), *y = cli_slurp(b, &lb);
    bool same = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* The number of lines (newlines) in file path. */
static inline int cli_count_lines(const char *path)
{
    size_t len;
    char *text = cli_slurp(path, &len);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    free(text);
    return lines;
}

#endif
