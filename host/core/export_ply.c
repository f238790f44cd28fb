/* PLY frames: the standard header, little-endian float records written in chunks (byte
 * swapped on big-endian hosts), a temporary file renamed into place, and the export
 * directory check done before a run. */
#include "export_ply.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PLY_PROPS 7
#define PLY_CHUNK 4096 /* vertices per fwrite */

static const char ply_header_fmt[] = "ply\n"
                                     "format binary_little_endian 1.0\n"
                                     "comment written by pbfcl\n"
                                     "element vertex %zu\n"
                                     "property float x\n"
                                     "property float y\n"
                                     "property float z\n"
                                     "property float vx\n"
                                     "property float vy\n"
                                     "property float vz\n"
                                     "property float density\n"
                                     "end_header\n";

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static void swap_bytes4(float *v, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        unsigned char *b = (unsigned char *)&v[i], t;
        t = b[0], b[0] = b[3], b[3] = t;
        t = b[1], b[1] = b[2], b[2] = t;
    }
}

/* Writes the header and the vertex records to an open file; false on a write error. */
static bool ply_write_stream(FILE *f, size_t n, const float *pos3, const float *vel3,
                             const float *density)
{
    if (fprintf(f, ply_header_fmt, n) < 0)
        return false;
    float *chunk = malloc(sizeof(float) * PLY_CHUNK * PLY_PROPS);
    if (!chunk)
        return false;
    bool swap = !host_is_little_endian(), ok = true;
    for (size_t first = 0; first < n && ok; first += PLY_CHUNK) {
        size_t count = n - first < PLY_CHUNK ? n - first : PLY_CHUNK;
        for (size_t i = 0; i < count; i++) {
            float *rec = &chunk[i * PLY_PROPS];
            size_t p = first + i;
            for (int k = 0; k < 3; k++) {
                rec[k] = pos3[3 * p + k];
                rec[3 + k] = vel3 ? vel3[3 * p + k] : 0.0f;
            }
            rec[6] = density ? density[p] : 0.0f;
        }
        if (swap)
            swap_bytes4(chunk, count * PLY_PROPS);
        if (fwrite(chunk, sizeof(float) * PLY_PROPS, count, f) != count) {
            ok = false;
            break;
        }
    }
    free(chunk);
    return ok;
}

pbfcl_status pbfcl_ply_write(const char *path, size_t n, const float *pos3, const float *vel3,
                             const float *density)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        pbfcl_errorf("PLY path too long: '%s'", path);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        pbfcl_errorf("cannot write PLY file '%s' (creating '%s'): %s", path, tmp, strerror(errno));
        return PBFCL_ERR_IO;
    }
    bool ok = ply_write_stream(f, n, pos3, vel3, density);
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        remove(tmp);
        pbfcl_errorf("cannot write PLY file '%s': %s", path, strerror(saved));
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_ply_frame_path(char *buf, size_t size, const char *dir, long long step)
{
    int len = snprintf(buf, size, "%s/frame_%05lld.ply", dir, step);
    if (len < 0 || (size_t)len >= size) {
        pbfcl_errorf("export path too long: '%s/frame_%05lld.ply'", dir, step);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* mkdir -p: creates every missing directory along path. */
static int make_dirs(const char *path)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        buf[i] = c;
    }
    return 0;
}

pbfcl_status pbfcl_export_dir_prepare(const char *dir)
{
    struct stat st;
    if (dir[0] == '\0') {
        pbfcl_errorf("the export directory name is empty");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (make_dirs(dir) != 0 || stat(dir, &st) != 0) {
        pbfcl_errorf("cannot create export directory '%s': %s", dir, strerror(errno));
        return PBFCL_ERR_IO;
    }
    if (!S_ISDIR(st.st_mode)) {
        pbfcl_errorf("export path '%s' exists and is not a directory", dir);
        return PBFCL_ERR_IO;
    }
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/.pbfcl_write_test%ld", dir, (long)getpid());
    FILE *f = fopen(probe, "wb");
    if (!f) {
        pbfcl_errorf("cannot write into export directory '%s': %s", dir, strerror(errno));
        return PBFCL_ERR_IO;
    }
    fclose(f);
    remove(probe);
    return PBFCL_OK;
}
