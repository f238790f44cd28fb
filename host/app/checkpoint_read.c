/* Reading checkpoints (format in checkpoint.h): the magic, the format and the particle count
 * are read first and the count is held against the file's size before the rest is read or
 * anything is allocated for it; then the checksum, the sections' sizes and names. The content
 * is checked where it is used: pbfcl_solver_load_state checks the solver's sections,
 * pbfcl_scene_setup_load_state the scene's, pbfcl_checkpoint_restore_ids the frames' ids.
 * No device is needed, so tests/fuzz/fuzz_checkpoint.c fuzzes all of it. */
#include "checkpoint.h"
#include "runtime/pbfcl_error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CKP_MAX_SECTIONS 64
/* The header up to the particle count: magic, format, version. */
#define CKP_PREFIX_BYTES (8 + 4 + 16 + 8)

struct pbfcl_checkpoint {
    unsigned char *data;
    size_t size;
    char path[1024];
    size_t count;
    struct {
        char name[64];
        const unsigned char *data;
        uint64_t bytes;
    } sections[CKP_MAX_SECTIONS];
};

void pbfcl_checkpoint_hash(uint64_t *h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) {
        *h ^= p[i];
        *h *= 1099511628211ull;
    }
}

typedef struct ckp_reader {
    const unsigned char *p, *end;
} ckp_reader;

static bool take(ckp_reader *r, void *out, size_t bytes)
{
    if ((size_t)(r->end - r->p) < bytes)
        return false;
    if (out)
        memcpy(out, r->p, bytes);
    r->p += bytes;
    return true;
}

static bool take_u64(ckp_reader *r, uint64_t *v)
{
    unsigned char b[8];
    if (!take(r, b, 8))
        return false;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = *v << 8 | b[i];
    return true;
}

static bool take_u32(ckp_reader *r, uint32_t *v)
{
    unsigned char b[4];
    if (!take(r, b, 4))
        return false;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

static pbfcl_status bad_file(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static pbfcl_status bad_file(const char *path, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pbfcl_errorf("checkpoint '%s' %s; it cannot be resumed (write a new one with --checkpoint)",
                 path, what);
    return PBFCL_ERR_BAD_ARGUMENT;
}

static pbfcl_status bad_format(const char *path, uint32_t format, ckp_reader *r)
{
    char writer[17] = "another version"; /* formats 1 to 6 all put it here */
    if (format >= 1 && format <= PBFCL_CHECKPOINT_FORMAT && take(r, writer, 16))
        writer[16] = '\0';
    pbfcl_errorf("checkpoint '%s' has format version %u (written by pbfcl %s); this pbfcl (%s) "
                 "reads version %u: resume it with the pbfcl that wrote it, or run the scene "
                 "again with --checkpoint",
                 path, format, writer, pbfcl_version_string(), PBFCL_CHECKPOINT_FORMAT);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* The most bytes a checkpoint of n particles takes: per particle the solver's buffers (128),
 * phases and frame ids (8), a body entry (24) and its share of a body (2 particles at least:
 * 94), a path entry (20) and its share of a path with its 33 keys (1120); 2 KB is above it.
 * The fixed part (header, parameters, the scene with its meshes) is far below 16 MB; the
 * collision shapes' geometry is at most 1 GiB (PBFCL_SHAPES_MAX_SAVED_BYTES, the core's
 * colliders/colliders_state.h) and their entries and sums below 1 MB. */
static uint64_t ckp_max_bytes(uint64_t n)
{
    return 2048 * n + (17u << 20) + (1ull << 30);
}

/* Checks the header's start (prefix, len bytes of a file of size bytes) before the rest is
 * read: the magic, the format, and a particle count that the file's size can hold. */
static pbfcl_status check_prefix(const char *path, const unsigned char *prefix, size_t len,
                                 uint64_t size)
{
    ckp_reader r = {prefix, prefix + len};
    char magic[8];
    uint32_t format;
    uint64_t n;
    if (!take(&r, magic, 8) || memcmp(magic, PBFCL_CHECKPOINT_MAGIC, 8) != 0)
        return bad_file(path, "is not a pbfcl checkpoint (no PBFCLCKP header)");
    if (!take_u32(&r, &format))
        return bad_file(path, "is cut short");
    if (format != PBFCL_CHECKPOINT_FORMAT)
        return bad_format(path, format, &r);
    if (!take(&r, NULL, 16) || !take_u64(&r, &n))
        return bad_file(path, "is cut short");
    if (n == 0 || n > UINT32_MAX || size < 16 * n || size > ckp_max_bytes(n))
        return bad_file(path,
                        "says it holds %llu particles, which a file of %llu bytes cannot "
                        "(damaged or not a checkpoint)",
                        (unsigned long long)n, (unsigned long long)size);
    return PBFCL_OK;
}

/* The parameters as the header holds them. */
typedef struct ckp_params {
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
} ckp_params;

/* Reads the header after its prefix (checked by check_prefix). */
static pbfcl_status parse_header(pbfcl_checkpoint *c, ckp_reader *r, pbfcl_checkpoint_info *info)
{
    uint32_t format, param_bytes;
    ckp_params params;
    uint64_t n, step, tbits;
    take(r, NULL, 8);
    take_u32(r, &format);
    info->format = format;
    if (!take(r, info->version, sizeof info->version) || !take_u64(r, &n) || !take_u64(r, &step) ||
        !take_u64(r, &tbits) || !take(r, info->name, sizeof info->name) ||
        !take_u32(r, &param_bytes))
        return bad_file(c->path, "is cut short");
    info->version[sizeof info->version - 1] = '\0';
    info->name[sizeof info->name - 1] = '\0';
    if (param_bytes != sizeof params || !take(r, &params, sizeof params))
        return bad_file(c->path, "holds parameters of another layout (written by another build)");
    info->scene = params.scene;
    info->solver = params.solver;
    info->n = (size_t)n;
    info->step = (long long)step;
    memcpy(&info->time, &tbits, 8);
    if (info->step < 0 || !(info->time >= 0.0 && info->time <= 1e300))
        return bad_file(c->path,
                        "has step %lld at time %g s in its header; both must be 0 or "
                        "more and finite",
                        info->step, info->time);
    return PBFCL_OK;
}

static pbfcl_status parse_sections(pbfcl_checkpoint *c, ckp_reader *r)
{
    for (;;) {
        uint32_t len;
        uint64_t bytes;
        if (c->count == CKP_MAX_SECTIONS)
            return bad_file(c->path, "has too many sections");
        char *name = c->sections[c->count].name;
        if (!take_u32(r, &len) || len >= sizeof c->sections[0].name || !take(r, name, len) ||
            !take_u64(r, &bytes) || bytes > (uint64_t)(r->end - r->p))
            return bad_file(c->path, "is cut short or damaged");
        name[len] = '\0';
        if (strlen(name) != len)
            return bad_file(c->path, "has a section name with a NUL byte inside (damaged)");
        for (size_t k = 0; k < c->count; k++)
            if (!strcmp(c->sections[k].name, name))
                return bad_file(c->path, "has two sections named '%s' (damaged)", name);
        c->sections[c->count].data = r->p;
        c->sections[c->count].bytes = bytes;
        r->p += bytes;
        c->count++;
        if (!strcmp(name, "end"))
            return r->p == r->end ? PBFCL_OK : bad_file(c->path, "has data after its end");
    }
}

/* The header's particle count and parameters are the solver state's ("count", "params"). */
static pbfcl_status check_header_agrees(pbfcl_checkpoint *c, const pbfcl_checkpoint_info *info)
{
    uint64_t count;
    ckp_params params, header;
    PBFCL_TRY(pbfcl_checkpoint_section(c, "count", &count, sizeof count));
    if (count != info->n)
        return bad_file(c->path,
                        "is damaged: its header says %zu particles and section 'count' %llu",
                        info->n, (unsigned long long)count);
    PBFCL_TRY(pbfcl_checkpoint_section(c, "params", &params, sizeof params));
    memset(&header, 0, sizeof header);
    header.scene = info->scene;
    header.solver = info->solver;
    if (memcmp(&params.scene, &header.scene, sizeof header.scene) != 0 ||
        memcmp(&params.solver, &header.solver, sizeof header.solver) != 0)
        return bad_file(c->path,
                        "is damaged: its header's parameters differ from section 'params'");
    return PBFCL_OK;
}

/* Verifies c->data (c->size bytes, the prefix already checked) and fills info. */
static pbfcl_status parse_loaded(pbfcl_checkpoint *c, pbfcl_checkpoint_info *info)
{
    if (c->size < CKP_PREFIX_BYTES + 8)
        return bad_file(c->path, "is too short to be a checkpoint");
    uint64_t want = PBFCL_CHECKPOINT_HASH_START, got;
    pbfcl_checkpoint_hash(&want, c->data, c->size - 8);
    ckp_reader tail = {c->data + c->size - 8, c->data + c->size};
    take_u64(&tail, &got);
    ckp_reader r = {c->data, c->data + c->size - 8};
    PBFCL_TRY(parse_header(c, &r, info));
    if (got != want)
        return bad_file(c->path, "fails its checksum (damaged or cut short)");
    PBFCL_TRY(parse_sections(c, &r));
    return check_header_agrees(c, info);
}

/* Reads the regular file path into c->data: its header's prefix first (check_prefix), the
 * rest only if that holds. */
static pbfcl_status load_bytes(const char *path, pbfcl_checkpoint *c)
{
    struct stat st;
    FILE *f = NULL; /* opened only once it is known to be a regular file: a FIFO would block */
    errno = 0;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")) ||
        fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        pbfcl_errorf("cannot read checkpoint '%s': %s", path,
                     errno ? strerror(errno) : "not a regular file");
        if (f)
            fclose(f);
        return PBFCL_ERR_IO;
    }
    unsigned char prefix[CKP_PREFIX_BYTES];
    size_t len = fread(prefix, 1, sizeof prefix, f);
    pbfcl_status s = check_prefix(path, prefix, len, (uint64_t)st.st_size);
    if (s == PBFCL_OK) {
        c->size = (size_t)st.st_size;
        c->data = malloc(c->size);
        bool ok = c->data && fseek(f, 0, SEEK_SET) == 0 && fread(c->data, 1, c->size, f) == c->size;
        if (!ok)
            pbfcl_errorf("cannot read checkpoint '%s': %s", path,
                         c->data ? "read error" : "out of memory");
        s = ok ? PBFCL_OK : c->data ? PBFCL_ERR_IO : PBFCL_ERR_OUT_OF_MEMORY;
    }
    fclose(f);
    return s;
}

/* A new checkpoint named path, or NULL. */
static pbfcl_checkpoint *ckp_new(const char *path)
{
    pbfcl_checkpoint *c = calloc(1, sizeof *c);
    if (c)
        snprintf(c->path, sizeof c->path, "%s", path);
    return c;
}

pbfcl_status pbfcl_checkpoint_read(const char *path, pbfcl_checkpoint **out,
                                   pbfcl_checkpoint_info *info)
{
    *out = NULL;
    memset(info, 0, sizeof *info);
    pbfcl_checkpoint *c = ckp_new(path);
    if (!c)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = load_bytes(path, c);
    if (st == PBFCL_OK)
        st = parse_loaded(c, info);
    if (st != PBFCL_OK) {
        pbfcl_checkpoint_free(c);
        return st;
    }
    *out = c;
    return PBFCL_OK;
}

pbfcl_status pbfcl_checkpoint_parse(const char *name, const void *data, size_t size,
                                    pbfcl_checkpoint **out, pbfcl_checkpoint_info *info)
{
    *out = NULL;
    memset(info, 0, sizeof *info);
    size_t len = size < CKP_PREFIX_BYTES ? size : CKP_PREFIX_BYTES;
    PBFCL_TRY(check_prefix(name, data, len, size));
    pbfcl_checkpoint *c = ckp_new(name);
    if (!c || !(c->data = malloc(size))) {
        pbfcl_checkpoint_free(c);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    memcpy(c->data, data, size);
    c->size = size;
    pbfcl_status st = parse_loaded(c, info);
    if (st != PBFCL_OK) {
        pbfcl_checkpoint_free(c);
        return st;
    }
    *out = c;
    return PBFCL_OK;
}

const char *pbfcl_checkpoint_path(const pbfcl_checkpoint *c)
{
    return c->path;
}

size_t pbfcl_checkpoint_size(const pbfcl_checkpoint *c)
{
    return c->size;
}

pbfcl_status pbfcl_checkpoint_section(void *ctx, const char *name, void *data, size_t bytes)
{
    pbfcl_checkpoint *c = ctx;
    for (size_t k = 0; k < c->count; k++) {
        if (strcmp(c->sections[k].name, name) != 0)
            continue;
        if (c->sections[k].bytes != bytes) {
            pbfcl_errorf("checkpoint '%s': section '%s' holds %llu bytes, this build expects %zu",
                         c->path, name, (unsigned long long)c->sections[k].bytes, bytes);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        memcpy(data, c->sections[k].data, bytes);
        return PBFCL_OK;
    }
    pbfcl_errorf("checkpoint '%s' has no section '%s' (written by another version of pbfcl?)",
                 c->path, name);
    return PBFCL_ERR_BAD_ARGUMENT;
}

static int compare_ids(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* The frames' ids: none twice. */
static pbfcl_status check_unique(pbfcl_checkpoint *c, const unsigned *ids, size_t n)
{
    unsigned *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return PBFCL_ERR_OUT_OF_MEMORY;
    memcpy(sorted, ids, n * sizeof *ids);
    qsort(sorted, n, sizeof *sorted, compare_ids);
    size_t twice = n;
    for (size_t i = 1; i < n && twice == n; i++)
        if (sorted[i] == sorted[i - 1])
            twice = i;
    pbfcl_status st = PBFCL_OK;
    if (twice < n)
        st = bad_file(c->path, "is damaged: section 'frame_ids' gives id %u to two particles",
                      sorted[twice]);
    free(sorted);
    return st;
}

pbfcl_status pbfcl_checkpoint_restore_ids(pbfcl_checkpoint *c, unsigned *ids, size_t n, size_t most,
                                          unsigned *next_id)
{
    PBFCL_TRY(pbfcl_checkpoint_section(c, "frame_ids", ids, n * sizeof *ids));
    PBFCL_TRY(pbfcl_checkpoint_section(c, "next_frame_id", next_id, sizeof *next_id));
    if (*next_id < n || *next_id > most)
        return bad_file(c->path,
                        "is damaged: section 'next_frame_id' is %u; with %zu particles and room "
                        "for %zu in the scene it is %zu to %zu",
                        *next_id, n, most, n, most);
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= *next_id)
            return bad_file(c->path,
                            "is damaged: section 'frame_ids', id[%zu] is %u, not below the next "
                            "id %u",
                            i, ids[i], *next_id);
    return check_unique(c, ids, n);
}

void pbfcl_checkpoint_free(pbfcl_checkpoint *c)
{
    if (!c)
        return;
    free(c->data);
    free(c);
}
