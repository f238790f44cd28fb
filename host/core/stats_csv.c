/* The `pbfcl run --stats` CSV: one header line, one row per step with the columns of
 * PBFCL_STATS_CSV_HEADER. Rows go out with a single write(2) each and a failed or short
 * write is cut back with ftruncate, so the file only ever holds whole rows. */
#include "stats_csv.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

pbfcl_status pbfcl_stats_csv_check(const char *path, bool replace)
{
    struct stat st;
    if (path[0] == '\0') {
        pbfcl_errorf("the statistics file name is empty");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            pbfcl_errorf("statistics file '%s' exists and is not a regular file; give a new "
                         "file name",
                         path);
            return PBFCL_ERR_IO;
        }
        if (!replace) {
            pbfcl_errorf("statistics file '%s' already exists; give a new name, remove it, or "
                         "pass --force to replace it",
                         path);
            return PBFCL_ERR_IO;
        }
        if (access(path, W_OK) != 0) {
            pbfcl_errorf("cannot replace statistics file '%s': %s", path, strerror(errno));
            return PBFCL_ERR_IO;
        }
        return PBFCL_OK;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    const char *d = dirname(dir);
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode) || access(d, W_OK | X_OK) != 0) {
        pbfcl_errorf("cannot create statistics file '%s': directory '%s': %s", path, d,
                     errno ? strerror(errno) : "not a directory");
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

/* Writes all of buf at the end of the file or cuts the file back to c->size. */
static pbfcl_status write_whole(pbfcl_stats_csv *c, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(c->fd, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int saved = w < 0 ? errno : ENOSPC;
            if (ftruncate(c->fd, c->size) != 0 || lseek(c->fd, c->size, SEEK_SET) < 0)
                pbfcl_warnf("could not cut '%s' back to its whole rows: %s", c->path,
                            strerror(errno));
            pbfcl_errorf("cannot write statistics file '%s': %s (it keeps its %lld whole rows)",
                         c->path, strerror(saved), c->rows);
            return PBFCL_ERR_IO;
        }
        done += (size_t)w;
    }
    c->size += (off_t)len;
    return PBFCL_OK;
}

pbfcl_status pbfcl_stats_csv_open(pbfcl_stats_csv *c, const char *path, bool replace)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    if (snprintf(c->path, sizeof c->path, "%s", path) >= (int)sizeof c->path) {
        pbfcl_errorf("statistics file name too long: '%s'", path);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (replace ? O_TRUNC : O_EXCL);
    c->fd = open(path, flags, 0666);
    if (c->fd < 0) {
        if (errno == EEXIST)
            pbfcl_errorf("statistics file '%s' already exists; give a new name, remove it, or "
                         "pass --force to replace it",
                         path);
        else
            pbfcl_errorf("cannot create statistics file '%s': %s", path, strerror(errno));
        return PBFCL_ERR_IO;
    }
    c->open = true;
    pbfcl_status st =
        write_whole(c, PBFCL_STATS_CSV_HEADER "\n", strlen(PBFCL_STATS_CSV_HEADER) + 1);
    if (st != PBFCL_OK)
        pbfcl_stats_csv_close(c, 1); /* a file without its header is of no use */
    return st;
}

pbfcl_status pbfcl_stats_csv_row(pbfcl_stats_csv *c, long long step, double time,
                                 const pbfcl_stats *s)
{
    char line[512];
    int len = snprintf(line, sizeof line, "%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%u,%u,%u\n", step,
                       time, s->kinetic_energy, s->density_error_avg, s->density_error_max,
                       s->max_speed, s->neighbors_avg, s->neighbors_max, s->outside, s->nan);
    if (len < 0 || (size_t)len >= sizeof line)
        return PBFCL_ERR_IO;
    PBFCL_TRY(write_whole(c, line, (size_t)len));
    c->rows++;
    return PBFCL_OK;
}

pbfcl_status pbfcl_stats_csv_close(pbfcl_stats_csv *c, int remove_file)
{
    pbfcl_status st = PBFCL_OK;
    if (!c->open)
        return st;
    if (close(c->fd) != 0) {
        pbfcl_errorf("cannot write statistics file '%s': %s", c->path, strerror(errno));
        st = PBFCL_ERR_IO;
    }
    if (remove_file)
        remove(c->path);
    c->open = false;
    c->fd = -1;
    return st;
}
