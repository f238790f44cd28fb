/* Whole-or-nothing output files (see atomic_file.h) and little-endian array writes. */
#include "atomic_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pbfcl_status pbfcl_atomic_open(pbfcl_atomic_file *a, const char *path, const char *what)
{
    memset(a, 0, sizeof *a);
    a->what = what;
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    static unsigned counter; /* tries names until one is new (O_EXCL) */
    int fd = -1;
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path) {
        pbfcl_errorf("%s path too long: '%s'", what, path);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        if (snprintf(a->tmp, sizeof a->tmp, "%.*s.%s.tmp%ld.%u", dir_len, path, base,
                     (long)getpid(), counter++) >= (int)sizeof a->tmp) {
            pbfcl_errorf("%s path too long: '%s'", what, path);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        /* 0666 less the umask, as fopen would create the file (mkstemp's 0600 would not) */
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        pbfcl_errorf("cannot write %s '%s' (creating a temporary file beside it): %s", what, path,
                     strerror(errno));
        return PBFCL_ERR_IO;
    }
    a->file = fdopen(fd, "wb");
    if (!a->file) {
        int saved = errno;
        close(fd);
        remove(a->tmp);
        pbfcl_errorf("cannot write %s '%s': %s", what, path, strerror(saved));
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_atomic_commit(pbfcl_atomic_file *a)
{
    if (!a->file)
        return PBFCL_ERR_IO;
    int saved = 0;
    if (ferror(a->file) || fflush(a->file) != 0 || fsync(fileno(a->file)) != 0)
        saved = errno ? errno : EIO;
    if (fclose(a->file) != 0 && !saved)
        saved = errno;
    a->file = NULL;
    if (!saved && rename(a->tmp, a->path) != 0)
        saved = errno;
    if (saved) {
        remove(a->tmp);
        pbfcl_errorf("cannot write %s '%s': %s (the file was left as it was)", a->what, a->path,
                     strerror(saved));
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

void pbfcl_atomic_abort(pbfcl_atomic_file *a)
{
    if (!a->file)
        return;
    fclose(a->file);
    a->file = NULL;
    remove(a->tmp);
}

/* The process id in a temporary file's name ".NAME.tmpPID.N", with NAME copied to target;
 * 0 if name is not one. */
static long stale_writer(const char *name, char *target, size_t size)
{
    const char *tmp = NULL;
    for (const char *p = strstr(name, ".tmp"); p; p = strstr(p + 1, ".tmp"))
        tmp = p;
    if (name[0] != '.' || !tmp || tmp == name || (size_t)(tmp - name - 1) >= size)
        return 0;
    long pid = 0;
    unsigned n;
    int used = 0;
    if (sscanf(tmp, ".tmp%ld.%u%n", &pid, &n, &used) != 2 || tmp[used] != '\0' || pid <= 0 ||
        !isdigit((unsigned char)tmp[4]))
        return 0;
    memcpy(target, name + 1, (size_t)(tmp - name - 1));
    target[tmp - name - 1] = '\0';
    return pid;
}

int pbfcl_atomic_remove_stale(const char *dir, bool (*is_target)(const char *name, const void *ctx),
                              const void *ctx)
{
    DIR *d = opendir(dir);
    int removed = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        char target[256], path[4352];
        long pid = stale_writer(e->d_name, target, sizeof target);
        if (pid <= 0 || pid == (long)getpid() || !is_target(target, ctx))
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* still running (or not ours to ask): its file may be in use */
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        removed += remove(path) == 0;
    }
    closedir(d);
    return removed;
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

bool pbfcl_write_le32(FILE *f, const void *values, size_t count)
{
    if (host_is_little_endian())
        return fwrite(values, 4, count, f) == count;
    unsigned char chunk[4096];
    const unsigned char *src = values;
    for (size_t first = 0; first < count; first += sizeof chunk / 4) {
        size_t m = count - first < sizeof chunk / 4 ? count - first : sizeof chunk / 4;
        for (size_t i = 0; i < m; i++)
            for (int b = 0; b < 4; b++)
                chunk[4 * i + b] = src[4 * (first + i) + 3 - b];
        if (fwrite(chunk, 4, m, f) != m)
            return false;
    }
    return true;
}
