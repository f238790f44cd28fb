/* Checkpoint files (format in checkpoint.h): written through an atomic file with a running
 * FNV-1a checksum; read whole, verified (magic, format, checksum, section sizes) before any
 * of it is used; the state in them goes through the public API's save and load. */
#include "checkpoint.h"
#include "atomic_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CKP_MAX_SECTIONS 64

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

/* ---- writing --------------------------------------------------------------------------- */

typedef struct ckp_writer {
    FILE *f;
    uint64_t hash;
    bool ok;
} ckp_writer;

static void fnv1a(uint64_t *h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) {
        *h ^= p[i];
        *h *= 1099511628211ull;
    }
}

static void put_bytes(ckp_writer *w, const void *data, size_t bytes)
{
    if (w->ok && fwrite(data, 1, bytes, w->f) != bytes)
        w->ok = false;
    fnv1a(&w->hash, data, bytes);
}

static void put_u64(ckp_writer *w, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put_bytes(w, b, 8);
}

static void put_u32(ckp_writer *w, uint32_t v)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put_bytes(w, b, 4);
}

static pbfcl_status put_section(void *ctx, const char *name, const void *data, size_t bytes)
{
    ckp_writer *w = ctx;
    put_u32(w, (uint32_t)strlen(name));
    put_bytes(w, name, strlen(name));
    put_u64(w, bytes);
    put_bytes(w, data, bytes);
    return w->ok ? PBFCL_OK : PBFCL_ERR_IO;
}

/* The parameters as the header holds them. */
typedef struct ckp_params {
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
} ckp_params;

/* The run's sections: the scene setup's, then the frames' ids. */
static pbfcl_status put_run(ckp_writer *w, const pbfcl_checkpoint_run *run, size_t n)
{
    PBFCL_TRY(pbfcl_scene_setup_save_state(run->setup, put_section, w));
    PBFCL_TRY(put_section(w, "frame_ids", run->ids, n * sizeof *run->ids));
    return put_section(w, "next_frame_id", &run->next_id, sizeof run->next_id);
}

pbfcl_status pbfcl_checkpoint_write(const char *path, pbfcl_solver *solver,
                                    const pbfcl_checkpoint_run *run, const char *name,
                                    long long step, double time)
{
    size_t n = 0;
    ckp_params params;
    char scene_name[64] = {0};
    memset(&params, 0, sizeof params);
    PBFCL_TRY(pbfcl_solver_count(solver, &n));
    PBFCL_TRY(pbfcl_solver_get_params(solver, &params.scene, &params.solver));
    snprintf(scene_name, sizeof scene_name, "%s", name);
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, "checkpoint"));
    ckp_writer w = {a.file, 14695981039346656037ull, true};
    char version[16] = {0};
    snprintf(version, sizeof version, "%s", pbfcl_version_string());
    put_bytes(&w, PBFCL_CHECKPOINT_MAGIC, 8);
    put_u32(&w, PBFCL_CHECKPOINT_FORMAT);
    put_bytes(&w, version, sizeof version);
    put_u64(&w, n);
    put_u64(&w, (uint64_t)step);
    uint64_t tbits;
    memcpy(&tbits, &time, 8);
    put_u64(&w, tbits);
    put_bytes(&w, scene_name, sizeof scene_name);
    put_u32(&w, (uint32_t)sizeof params);
    put_bytes(&w, &params, sizeof params);
    pbfcl_status st = pbfcl_solver_save_state(solver, put_section, &w);
    if (st == PBFCL_OK)
        st = put_run(&w, run, n);
    if (st == PBFCL_OK)
        st = put_section(&w, "end", "", 0);
    uint64_t hash = w.hash;
    put_u64(&w, hash);
    if (st != PBFCL_OK || !w.ok) {
        int saved = errno;
        pbfcl_atomic_abort(&a);
        if (st == PBFCL_OK || st == PBFCL_ERR_IO)
            pbfcl_errorf("cannot write checkpoint '%s': %s (an earlier checkpoint there is kept)",
                         path, strerror(saved ? saved : EIO));
        return st == PBFCL_OK ? PBFCL_ERR_IO : st;
    }
    return pbfcl_atomic_commit(&a);
}

/* ---- reading --------------------------------------------------------------------------- */

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

static pbfcl_status bad_file(const char *path, const char *what)
{
    pbfcl_errorf("checkpoint '%s' %s; it cannot be resumed (write a new one with --checkpoint)",
                 path, what);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* Reads the whole regular file into c->data. */
static pbfcl_status load_bytes(const char *path, pbfcl_checkpoint *c)
{
    struct stat st;
    FILE *f = NULL;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb"))) {
        pbfcl_errorf("cannot read checkpoint '%s': %s", path,
                     errno && !(errno == 0) ? strerror(errno) : "not a regular file");
        return PBFCL_ERR_IO;
    }
    c->size = (size_t)st.st_size;
    c->data = malloc(c->size ? c->size : 1);
    bool ok = c->data && fread(c->data, 1, c->size, f) == c->size;
    fclose(f);
    if (!ok) {
        pbfcl_errorf("cannot read checkpoint '%s': %s", path,
                     c->data ? "read error" : "out of memory");
        return c->data ? PBFCL_ERR_IO : PBFCL_ERR_OUT_OF_MEMORY;
    }
    return PBFCL_OK;
}

static pbfcl_status parse_header(pbfcl_checkpoint *c, ckp_reader *r, pbfcl_checkpoint_info *info)
{
    char magic[8];
    uint32_t format, param_bytes;
    ckp_params params;
    uint64_t n, step, tbits;
    if (!take(r, magic, 8) || memcmp(magic, PBFCL_CHECKPOINT_MAGIC, 8) != 0)
        return bad_file(c->path, "is not a pbfcl checkpoint (no PBFCLCKP header)");
    if (!take_u32(r, &format))
        return bad_file(c->path, "is cut short");
    if (format != PBFCL_CHECKPOINT_FORMAT) {
        char writer[17] = "another version"; /* formats 1 to 4 all put it here */
        if (format >= 1 && format <= PBFCL_CHECKPOINT_FORMAT && take(r, writer, 16))
            writer[16] = '\0';
        pbfcl_errorf("checkpoint '%s' has format version %u (written by pbfcl %s); this pbfcl "
                     "(%s) reads version %u: resume it with the pbfcl that wrote it, or run the "
                     "scene again with --checkpoint",
                     c->path, format, writer, pbfcl_version_string(), PBFCL_CHECKPOINT_FORMAT);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
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
    if (n == 0 || n > UINT32_MAX || info->step < 0)
        return bad_file(c->path, "has an impossible particle count or step");
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
        for (size_t k = 0; k < c->count; k++)
            if (!strcmp(c->sections[k].name, name))
                return bad_file(c->path, "has two sections of one name (damaged)");
        c->sections[c->count].data = r->p;
        c->sections[c->count].bytes = bytes;
        r->p += bytes;
        c->count++;
        if (!strcmp(name, "end"))
            return r->p == r->end ? PBFCL_OK : bad_file(c->path, "has data after its end");
    }
}

pbfcl_status pbfcl_checkpoint_read(const char *path, pbfcl_checkpoint **out,
                                   pbfcl_checkpoint_info *info)
{
    *out = NULL;
    memset(info, 0, sizeof *info);
    pbfcl_checkpoint *c = calloc(1, sizeof *c);
    if (!c)
        return PBFCL_ERR_OUT_OF_MEMORY;
    snprintf(c->path, sizeof c->path, "%s", path);
    pbfcl_status st = load_bytes(path, c);
    if (st == PBFCL_OK && c->size < 8 + 8)
        st = bad_file(path, "is too short to be a checkpoint");
    if (st == PBFCL_OK) {
        uint64_t want = 14695981039346656037ull, got;
        fnv1a(&want, c->data, c->size - 8);
        ckp_reader tail = {c->data + c->size - 8, c->data + c->size};
        take_u64(&tail, &got);
        ckp_reader r = {c->data, c->data + c->size - 8};
        st = parse_header(c, &r, info);
        if (st == PBFCL_OK && got != want)
            st = bad_file(path, "fails its checksum (damaged or cut short)");
        if (st == PBFCL_OK)
            st = parse_sections(c, &r);
    }
    if (st != PBFCL_OK) {
        pbfcl_checkpoint_free(c);
        return st;
    }
    *out = c;
    return PBFCL_OK;
}

static pbfcl_status get_section(void *ctx, const char *name, void *data, size_t bytes)
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

pbfcl_status pbfcl_checkpoint_restore(pbfcl_checkpoint *c, pbfcl_solver *solver)
{
    return pbfcl_solver_load_state(solver, get_section, c);
}

pbfcl_status pbfcl_checkpoint_restore_setup(pbfcl_checkpoint *c, const pbfcl_checkpoint_info *info,
                                            pbfcl_scene_setup **setup)
{
    char name[64];
    PBFCL_TRY(pbfcl_scene_setup_load_state(get_section, c, setup));
    PBFCL_TRY(pbfcl_scene_setup_name(*setup, name, sizeof name));
    if (strcmp(name, info->name) != 0) {
        pbfcl_errorf("checkpoint '%s' is of scene '%s' but holds the description of scene '%s' "
                     "(pieced together from two checkpoints?); resume a checkpoint written whole",
                     c->path, info->name, name);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_checkpoint_check_bodies(const pbfcl_checkpoint *c,
                                           const pbfcl_scene_setup *setup,
                                           const pbfcl_solver *solver)
{
    int scene_bodies = 0, solver_bodies = 0;
    char name[64];
    PBFCL_TRY(pbfcl_scene_setup_body_count(setup, &scene_bodies));
    PBFCL_TRY(pbfcl_solver_body_count(solver, &solver_bodies));
    PBFCL_TRY(pbfcl_scene_setup_name(setup, name, sizeof name));
    if (scene_bodies != solver_bodies) {
        pbfcl_errorf("checkpoint '%s': its scene '%s' has %d bod%s but its solver state holds %d "
                     "(pieced together from two checkpoints?); resume a checkpoint written whole",
                     c->path, name, scene_bodies, scene_bodies == 1 ? "y" : "ies", solver_bodies);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_checkpoint_restore_ids(pbfcl_checkpoint *c, unsigned *ids, size_t n,
                                          unsigned *next_id)
{
    PBFCL_TRY(get_section(c, "frame_ids", ids, n * sizeof *ids));
    PBFCL_TRY(get_section(c, "next_frame_id", next_id, sizeof *next_id));
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= *next_id) {
            pbfcl_errorf("checkpoint '%s': particle %zu has frame id %u, not below the next id %u; "
                         "the file is damaged (write a new one with --checkpoint)",
                         c->path, i, ids[i], *next_id);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    return PBFCL_OK;
}

void pbfcl_checkpoint_free(pbfcl_checkpoint *c)
{
    if (!c)
        return;
    free(c->data);
    free(c);
}
