/* The row file (row_file.h): whole appends with one write(2) each, cut back with ftruncate
 * when one cannot be written whole. */
#include "row_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes all of buf at the end of the file or cuts the file back to f->size. */
static pbfcl_status write_whole(pbfcl_row_file *f, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(f->fd, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int saved = w < 0 ? errno : ENOSPC;
            if (ftruncate(f->fd, f->size) != 0 || lseek(f->fd, f->size, SEEK_SET) < 0)
                pbfcl_warnf("could not cut '%s' back to its whole %s: %s", f->path, f->kind->units,
                            strerror(errno));
            pbfcl_errorf("cannot write %s '%s': %s (it keeps its %lld whole %s)", f->kind->what,
                         f->path, strerror(saved), f->count, f->kind->units);
            return PBFCL_ERR_IO;
        }
        done += (size_t)w;
    }
    f->size += (off_t)len;
    return PBFCL_OK;
}

pbfcl_status pbfcl_row_file_open(pbfcl_row_file *f, const pbfcl_row_file_kind *kind,
                                 const char *path, bool replace)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->fd = -1;
    if (snprintf(f->path, sizeof f->path, "%s", path) >= (int)sizeof f->path) {
        pbfcl_errorf("%s name too long: '%s'", kind->what, path);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    f->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (replace ? O_TRUNC : O_EXCL), 0666);
    if (f->fd < 0) {
        if (errno == EEXIST)
            pbfcl_errorf("%s '%s' already exists%s", kind->what, path, kind->exists_fix);
        else
            pbfcl_errorf("cannot create %s '%s': %s", kind->what, path, strerror(errno));
        return PBFCL_ERR_IO;
    }
    f->open = true;
    pbfcl_status st = write_whole(f, kind->header, strlen(kind->header));
    if (st != PBFCL_OK)
        pbfcl_row_file_close(f, true); /* a file without its header is of no use */
    return st;
}

void pbfcl_row_file_adopt(pbfcl_row_file *f, const pbfcl_row_file_kind *kind, const char *path,
                          int fd, off_t keep)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->fd = fd;
    f->open = true;
    f->size = keep;
}

pbfcl_status pbfcl_row_file_append(pbfcl_row_file *f, const char *buf, size_t len)
{
    PBFCL_TRY(write_whole(f, buf, len));
    f->count++;
    return PBFCL_OK;
}

pbfcl_status pbfcl_row_file_close(pbfcl_row_file *f, bool remove_file)
{
    pbfcl_status st = PBFCL_OK;
    if (!f->open)
        return st;
    if (close(f->fd) != 0) {
        pbfcl_errorf("cannot write %s '%s': %s", f->kind->what, f->path, strerror(errno));
        st = PBFCL_ERR_IO;
    }
    if (remove_file)
        remove(f->path);
    f->open = false;
    f->fd = -1;
    return st;
}

/* The bytes of text (size bytes, the header line first) to keep when resuming after step: the
 * header and the whole rows of steps up to step (rows come in step order, the step first). */
static size_t rows_up_to(const char *text, size_t size, const char *header, long long step)
{
    size_t keep = strlen(header);
    while (keep < size) {
        const char *end = memchr(text + keep, '\n', size - keep);
        if (!end || strtoll(text + keep, NULL, 10) > step)
            break;
        keep = (size_t)(end - text) + 1;
    }
    return keep;
}

/* Reads the whole file fd into *text (NUL-terminated); false if it cannot. */
static bool read_all(int fd, char **text, size_t *size)
{
    off_t end = lseek(fd, 0, SEEK_END);
    *text = end >= 0 && lseek(fd, 0, SEEK_SET) == 0 ? malloc((size_t)end + 1) : NULL;
    size_t done = 0;
    while (*text && done < (size_t)end) {
        ssize_t r = read(fd, *text + done, (size_t)end - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        done += (size_t)r;
    }
    if (*text)
        (*text)[done] = '\0';
    *size = done;
    return *text && done == (size_t)end;
}

pbfcl_status pbfcl_row_file_resume(pbfcl_row_file *f, const pbfcl_row_file_kind *kind,
                                   const char *path, long long step)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) /* the interrupted run wrote no frames: start one */
        return pbfcl_row_file_open(f, kind, path, false);
    memset(f, 0, sizeof *f);
    f->fd = -1;
    char *text = NULL;
    size_t size = 0, head = strlen(kind->header);
    if (fd < 0 || !read_all(fd, &text, &size)) {
        pbfcl_errorf("cannot continue %s '%s': %s", kind->what, path, strerror(errno));
        free(text);
        if (fd >= 0)
            close(fd);
        return PBFCL_ERR_IO;
    }
    if (size < head || memcmp(text, kind->header, head) != 0) {
        pbfcl_errorf("'%s' is not a %s (its first line is not '%.*s'); remove it or export to "
                     "another directory",
                     path, kind->what, (int)head - 1, kind->header);
        free(text);
        close(fd);
        return PBFCL_ERR_IO;
    }
    off_t keep = (off_t)rows_up_to(text, size, kind->header, step);
    free(text);
    if (ftruncate(fd, keep) != 0 || lseek(fd, keep, SEEK_SET) < 0) {
        pbfcl_errorf("cannot continue %s '%s': %s", kind->what, path, strerror(errno));
        close(fd);
        return PBFCL_ERR_IO;
    }
    pbfcl_row_file_adopt(f, kind, path, fd, keep);
    return PBFCL_OK;
}
