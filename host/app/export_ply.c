/* PLY frames: the standard header with pbfcl's comments, little-endian records written in
 * chunks, a temporary file renamed into place (atomic_file.c), frame names, and the export
 * directory check done before a run. */
#include "export_ply.h"
#include "atomic_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PLY_PROPS 10   /* x y z vx vy vz density id phase body, 4 bytes each */
#define PLY_CHUNK 4096 /* vertices per write */

static const char ply_header_fmt[] = "ply\n"
                                     "format binary_little_endian 1.0\n"
                                     "comment written by pbfcl %s\n"
                                     "comment step %lld time %.9g s, %s up\n"
                                     "element vertex %zu\n"
                                     "property float x\n"
                                     "property float y\n"
                                     "property float z\n"
                                     "property float vx\n"
                                     "property float vy\n"
                                     "property float vz\n"
                                     "property float density\n"
                                     "property uint id\n"
                                     "property uint phase\n"
                                     "property int body\n"
                                     "end_header\n";

int pbfcl_frame_body(const pbfcl_frame *f, size_t p)
{
    return f->phases && f->phases[p] > 0 ? f->phases[p] - 1 : -1; /* fluid or static: -1 */
}

void pbfcl_frame_to_z_up(float v[3])
{
    float y = v[1], z = v[2];
    v[1] = -z;
    v[2] = y;
}

/* Fills rec (PLY_PROPS 32-bit values) with particle p of the frame. */
static void ply_record(const pbfcl_frame *f, size_t p, uint32_t *rec)
{
    float v[8];
    for (int k = 0; k < 3; k++) {
        v[k] = f->pos3[3 * p + k];
        v[3 + k] = f->vel3 ? f->vel3[3 * p + k] : 0.0f;
    }
    if (f->z_up) {
        pbfcl_frame_to_z_up(v);
        pbfcl_frame_to_z_up(v + 3);
    }
    v[6] = f->density ? f->density[p] : 0.0f;
    memcpy(rec, v, 7 * sizeof(float));
    rec[7] = f->ids ? f->ids[p] : (uint32_t)p;
    rec[8] = f->phases ? (uint32_t)f->phases[p] : 0u;
    int32_t body = pbfcl_frame_body(f, p);
    memcpy(&rec[9], &body, sizeof body);
}

/* Writes the header and the vertex records to an open file; false on a write error. */
static bool ply_write_stream(FILE *file, const pbfcl_frame *f)
{
    if (fprintf(file, ply_header_fmt, pbfcl_version_string(), f->step, f->time, f->z_up ? "z" : "y",
                f->n) < 0)
        return false;
    uint32_t *chunk = malloc(sizeof(uint32_t) * PLY_CHUNK * PLY_PROPS);
    if (!chunk)
        return false;
    bool ok = true;
    for (size_t first = 0; first < f->n && ok; first += PLY_CHUNK) {
        size_t count = f->n - first < PLY_CHUNK ? f->n - first : PLY_CHUNK;
        for (size_t i = 0; i < count; i++)
            ply_record(f, first + i, &chunk[i * PLY_PROPS]);
        ok = pbfcl_write_le32(file, chunk, count * PLY_PROPS);
    }
    free(chunk);
    return ok;
}

pbfcl_status pbfcl_ply_write(const char *path, const pbfcl_frame *f)
{
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, "PLY frame"));
    if (!ply_write_stream(a.file, f)) {
        int saved = errno;
        pbfcl_atomic_abort(&a);
        pbfcl_errorf("cannot write PLY frame '%s': %s", path, strerror(saved ? saved : EIO));
        return PBFCL_ERR_IO;
    }
    return pbfcl_atomic_commit(&a);
}

pbfcl_status pbfcl_frame_path(char *buf, size_t size, const char *dir, long long step,
                              pbfcl_export_format format)
{
    const char *ext = format == PBFCL_FORMAT_VTK ? "vtu" : "ply";
    int len = snprintf(buf, size, "%s/frame_%05lld.%s", dir, step, ext);
    if (len < 0 || (size_t)len >= size) {
        pbfcl_errorf("export path too long: '%s/frame_%05lld.%s'", dir, step, ext);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_ply_frame_path(char *buf, size_t size, const char *dir, long long step)
{
    return pbfcl_frame_path(buf, size, dir, step, PBFCL_FORMAT_PLY);
}

/* The directories the last pbfcl_export_dir_prepare created, outermost first. */
#define CREATED_MAX 64
static char created[CREATED_MAX][4096];
static int created_count;

/* mkdir -p: creates every missing directory along path, remembering those it made. */
static int make_dirs(const char *path)
{
    char buf[4096];
    size_t len = strlen(path);
    created_count = 0;
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
        if (mkdir(buf, 0777) == 0) {
            if (created_count < CREATED_MAX)
                memcpy(created[created_count++], buf, i + 1);
        } else if (errno != EEXIST) {
            return -1;
        }
        buf[i] = c;
    }
    return 0;
}

void pbfcl_export_dir_undo(void)
{
    while (created_count > 0)
        rmdir(created[--created_count]); /* fails, harmlessly, if something is in it */
}

pbfcl_status pbfcl_export_dir_prepare(const char *dir)
{
    struct stat st;
    if (dir[0] == '\0') {
        pbfcl_errorf("the export directory name is empty");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (make_dirs(dir) != 0 || stat(dir, &st) != 0) {
        int saved = errno;
        pbfcl_export_dir_undo();
        pbfcl_errorf("cannot create export directory '%s': %s", dir, strerror(saved));
        return PBFCL_ERR_IO;
    }
    if (!S_ISDIR(st.st_mode)) {
        pbfcl_errorf("export path '%s' exists and is not a directory; give a directory (it is "
                     "created if missing)",
                     dir);
        return PBFCL_ERR_IO;
    }
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.pbfcl_write_test%ld", dir, (long)getpid());
    FILE *f = fopen(probe, "wb");
    if (!f) {
        int saved = errno;
        pbfcl_export_dir_undo();
        pbfcl_errorf("cannot write into export directory '%s': %s", dir, strerror(saved));
        return PBFCL_ERR_IO;
    }
    fclose(f);
    remove(probe);
    return PBFCL_OK;
}
