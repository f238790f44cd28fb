/* Reading a small text file whole: opened without blocking (a FIFO with no writer would
 * otherwise wait forever), checked to be a regular file, read up to a size limit, and refused
 * if it holds a NUL byte (the text would end there). */
#include "scene/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO (named pipe)"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

/* Opens path for reading if it is a regular file. */
static FILE *open_regular(const char *path, const char *what, const char *hint)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        pbfcl_errorf("cannot open %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        pbfcl_errorf("%s '%s' is %s; %s", what, path, file_kind(st.st_mode), hint);
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        pbfcl_errorf("cannot open %s '%s': %s", what, path, strerror(errno));
        close(fd);
    }
    return f;
}

/* Refuses a NUL byte in the text: the parsers read up to the first one, so the rest of the
 * file (or of a string) would be dropped without a word. */
static bool check_no_nul(const char *buf, size_t len, const char *what, const char *path)
{
    const char *nul = memchr(buf, '\0', len);
    if (!nul)
        return true;
    size_t line = 1, col = 1;
    for (const char *p = buf; p < nul; p++, col++)
        if (*p == '\n') {
            line++;
            col = 0;
        }
    pbfcl_errorf("%s '%s': line %zu, column %zu (byte %zu) is a NUL byte; %ss are text and "
                 "hold none (is it the right file, or was it damaged?)",
                 what, path, line, col, (size_t)(nul - buf), what);
    return false;
}

pbfcl_status pbfcl_read_input_file(const char *path, const char *what, const char *hint,
                                   size_t max_bytes, char **out)
{
    *out = NULL;
    FILE *f = open_regular(path, what, hint);
    if (!f)
        return PBFCL_ERR_IO;
    char *buf = malloc(max_bytes + 1);
    size_t len = buf ? fread(buf, 1, max_bytes + 1, f) : 0;
    bool failed = !buf || ferror(f);
    fclose(f);
    if (failed || len > max_bytes) {
        free(buf);
        if (failed)
            pbfcl_errorf("cannot read %s '%s': %s", what, path,
                         !buf ? "out of memory" : strerror(errno));
        else
            pbfcl_errorf("cannot read %s '%s': larger than %zu MiB; %ss are small", what, path,
                         max_bytes >> 20, what);
        return PBFCL_ERR_IO;
    }
    if (!check_no_nul(buf, len, what, path)) {
        free(buf);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    buf[len] = '\0';
    *out = buf;
    return PBFCL_OK;
}
