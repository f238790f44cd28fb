/* The recording folder's checks and the file names of recorded frames and screenshots. */
#include "demo_record.h"
#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool pbfcl_demo_record_is_frame_name(const char *name)
{
    size_t len = strlen(name); /* at least one digit: 6 + 1 + 4 characters */
    if (len < 11 || strncmp(name, "frame_", 6) != 0 || strcmp(name + len - 4, ".png") != 0)
        return false;
    for (size_t i = 6; i < len - 4; i++)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

/* Counts (and with remove, deletes) dir's frame files; the first one's name goes to first. */
static long frames_in(const char *dir, bool remove_them, char *first, size_t size)
{
    DIR *d = opendir(dir);
    long count = 0;
    if (!d)
        return 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (!pbfcl_demo_record_is_frame_name(e->d_name))
            continue;
        if (count++ == 0)
            snprintf(first, size, "%s", e->d_name);
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (remove_them)
            remove(path);
    }
    closedir(d);
    return count;
}

static pbfcl_status check_folder(const char *dir)
{
    struct stat st;
    if (!dir[0]) {
        pbfcl_errorf("--record needs a folder name");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0) {
        pbfcl_errorf("--record: cannot create folder '%s': %s; give a folder that exists or "
                     "whose parent exists and is writable",
                     dir, strerror(errno));
        return PBFCL_ERR_IO;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        pbfcl_errorf("--record: '%s' is not a folder; give a folder (it is created if missing)",
                     dir);
        return PBFCL_ERR_IO;
    }
    char probe_path[4200];
    if (!pbfcl_demo_record_path(probe_path, sizeof probe_path, dir, 0)) {
        pbfcl_errorf("--record: folder name too long: '%s'", dir);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_atomic_file probe; /* can a frame be created there? */
    if (pbfcl_atomic_open(&probe, probe_path, "recorded frame") != PBFCL_OK) {
        pbfcl_errorf("--record: folder '%s' is not writable; give a writable folder", dir);
        return PBFCL_ERR_IO;
    }
    pbfcl_atomic_abort(&probe);
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_record_prepare(const char *dir, bool force)
{
    PBFCL_TRY(check_folder(dir));
    char first[256] = "";
    long count = frames_in(dir, false, first, sizeof first);
    if (count > 0 && !force) {
        pbfcl_errorf("--record: folder '%s' already holds %ld frame file%s (%s); give an empty "
                     "or new folder, or --force to replace them",
                     dir, count, count == 1 ? "" : "s", first);
        return PBFCL_ERR_IO;
    }
    if (count > 0 && frames_in(dir, true, first, sizeof first) > 0 &&
        frames_in(dir, false, first, sizeof first) > 0) {
        pbfcl_errorf("--record --force: cannot remove the frame files in '%s' (%s)", dir, first);
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

bool pbfcl_demo_record_path(char *path, size_t size, const char *dir, long index)
{
    int n = snprintf(path, size, "%s/" PBFCL_DEMO_RECORD_PATTERN, dir, index);
    return n > 0 && (size_t)n < size;
}

bool pbfcl_demo_shot_path(char *path, size_t size, const char *dir)
{
    for (int i = 1; i <= 9999; i++) {
        int n = snprintf(path, size, "%s/pbfcl-shot-%04d.png", dir, i);
        if (n <= 0 || (size_t)n >= size)
            return false;
        if (access(path, F_OK) != 0)
            return true;
    }
    return false;
}
