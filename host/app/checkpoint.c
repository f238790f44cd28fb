/* Checkpoint files (format in checkpoint.h): written through an atomic file with a running
 * FNV-1a checksum (read and verified by checkpoint_read.c); the state in them goes through
 * the public API's save and load, which check every field before any of it is used. */
#include "checkpoint.h"
#include "atomic_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- writing --------------------------------------------------------------------------- */

typedef struct ckp_writer {
    FILE *f;
    uint64_t hash;
    bool ok;
} ckp_writer;

static void put_bytes(ckp_writer *w, const void *data, size_t bytes)
{
    if (w->ok && fwrite(data, 1, bytes, w->f) != bytes)
        w->ok = false;
    pbfcl_checkpoint_hash(&w->hash, data, bytes);
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

pbfcl_status pbfcl_checkpoint_write_with(const char *path, size_t n,
                                         const pbfcl_scene_params *scene,
                                         const pbfcl_solver_params *solver,
                                         pbfcl_checkpoint_save_fn save, void *save_ctx,
                                         const pbfcl_checkpoint_run *run, const char *name,
                                         long long step, double time)
{
    ckp_params params;
    char scene_name[64] = {0};
    memset(&params, 0, sizeof params);
    params.scene = *scene;
    params.solver = *solver;
    snprintf(scene_name, sizeof scene_name, "%s", name);
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, "checkpoint"));
    ckp_writer w = {a.file, PBFCL_CHECKPOINT_HASH_START, true};
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
    pbfcl_status st = save(save_ctx, put_section, &w);
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

/* pbfcl_checkpoint_save_fn of a solver (ctx). */
static pbfcl_status save_solver(void *ctx, pbfcl_state_write_fn write, void *user)
{
    return pbfcl_solver_save_state(ctx, write, user);
}

pbfcl_status pbfcl_checkpoint_write(const char *path, pbfcl_solver *solver,
                                    const pbfcl_checkpoint_run *run, const char *name,
                                    long long step, double time)
{
    size_t n = 0;
    pbfcl_scene_params scene;
    pbfcl_solver_params params;
    PBFCL_TRY(pbfcl_solver_count(solver, &n));
    PBFCL_TRY(pbfcl_solver_get_params(solver, &scene, &params));
    return pbfcl_checkpoint_write_with(path, n, &scene, &params, save_solver, solver, run, name,
                                       step, time);
}

pbfcl_status pbfcl_checkpoint_restore(pbfcl_checkpoint *c, pbfcl_solver *solver)
{
    return pbfcl_solver_load_state(solver, pbfcl_checkpoint_section, c);
}

pbfcl_status pbfcl_checkpoint_restore_setup(pbfcl_checkpoint *c, const pbfcl_checkpoint_info *info,
                                            pbfcl_scene_setup **setup)
{
    char name[64];
    PBFCL_TRY(pbfcl_scene_setup_load_state(pbfcl_checkpoint_section, c, setup));
    PBFCL_TRY(pbfcl_scene_setup_name(*setup, name, sizeof name));
    if (strcmp(name, info->name) != 0) {
        pbfcl_errorf("checkpoint '%s' is of scene '%s' but holds the description of scene '%s' "
                     "(pieced together from two checkpoints?); resume a checkpoint written whole",
                     pbfcl_checkpoint_path(c), info->name, name);
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
                     pbfcl_checkpoint_path(c), name, scene_bodies, scene_bodies == 1 ? "y" : "ies",
                     solver_bodies);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}
