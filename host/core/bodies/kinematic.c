/* Kinematic obstacles (see kinematic.h): builds cl/bodies/kinematic.cl with a work-group size from
 * device queries, keeps the paths, their keys and their particles' rest offsets on the device
 * (entries sorted by particle id, which the kernel looks up by bisection), and the paths'
 * clock. */
#include "bodies/kinematic.h"

#include "runtime/programs.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KIN_MAX_WG 256u

#define KIN_ARG(kernel, idx, v) PBFCL_CL_CHECK(clSetKernelArg((kernel), (idx), sizeof(v), &(v)))

void pbfcl_kinematic_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    size_t wg = 1;
    while (wg * 2 <= dev->max_wg && wg * 2 <= KIN_MAX_WG)
        wg *= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
}

pbfcl_status pbfcl_kinematic_create(pbfcl_kinematic *k, pbfcl_cl *cl)
{
    memset(k, 0, sizeof *k);
    k->cl = cl;
    pbfcl_build_config cfg;
    pbfcl_kinematic_build_config(&cl->dev, &cfg);
    k->wg = cfg.wg_size;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_KINEMATIC);
    PBFCL_TRY(pbfcl_cl_build(cl, desc->files, desc->nfiles, options, &k->program));
    PBFCL_TRY(pbfcl_cl_kernel(k->program, "kinematic_path", &k->path));
    return pbfcl_cl_check_launch(cl, k->path, "kinematic_path", k->wg, 0);
}

/* The paths' device buffers, declared once: uploaded by pbfcl_kinematic_set, saved and
 * restored by checkpoints; bytes per path, per entry and per key (kin_buffer gives each one's
 * handle). */
typedef struct kin_state_buffer {
    const char *name;
    size_t per_path, per_entry, per_key;
} kin_state_buffer;

static const kin_state_buffer kin_state_buffers[] = {
    {"path_entry_ids", 0, 4, 0},
    {"path_offsets", 0, 16, 0},
    {"path_motions", 64, 0, 0},
    {"path_keys", 0, 0, 32},
};
#define KIN_STATE_COUNT ((int)(sizeof kin_state_buffers / sizeof kin_state_buffers[0]))

static size_t kin_state_bytes(const kin_state_buffer *s, size_t paths, size_t entries, size_t keys)
{
    return s->per_path * paths + s->per_entry * entries + s->per_key * keys;
}

static cl_mem *kin_buffer(pbfcl_kinematic *k, int b)
{
    cl_mem *bufs[] = {&k->entry_id_buf, &k->entry_offset_buf, &k->path_buf, &k->key_buf};
    _Static_assert(sizeof bufs / sizeof bufs[0] == KIN_STATE_COUNT, "a handle per buffer");
    return bufs[b];
}

/* Creates buffer b of kin_state_buffers and fills it with bytes of data. */
static pbfcl_status kin_upload(pbfcl_kinematic *k, int b, const void *data, size_t bytes)
{
    PBFCL_TRY(pbfcl_cl_buffer(k->cl, CL_MEM_READ_ONLY, bytes, "kinematic paths", kin_buffer(k, b)));
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(k->cl->queue, *kin_buffer(k, b), CL_TRUE, 0, bytes, data, 0,
                                        NULL, NULL));
    return PBFCL_OK;
}

static void kin_release_paths(pbfcl_kinematic *k)
{
    for (int b = 0; b < KIN_STATE_COUNT; b++)
        pbfcl_cl_release_buffer(kin_buffer(k, b));
    free(k->entry_id);
    k->entry_id = NULL;
    k->paths = k->entries = k->keys = 0;
}

void pbfcl_kinematic_destroy(pbfcl_kinematic *k)
{
    if (!k)
        return;
    kin_release_paths(k);
    if (k->path)
        clReleaseKernel(k->path);
    k->path = NULL;
    if (k->program)
        clReleaseProgram(k->program);
    k->program = NULL;
}

/* Checks path p's keys: finite, at increasing times above 0, on a path without rates, and a
 * repeating path's last key at the start pose (no displacement, a whole number of turns). */
static bool kin_check_keys(size_t p, const pbfcl_kinematic_path *a)
{
    int e = 0;
    switch (pbfcl_path_keys_fault_of(a->keys, a->key_count, a->repeat, &e)) {
    case PBFCL_PATH_KEYS_OK:
        break;
    case PBFCL_PATH_KEYS_COUNT:
        pbfcl_errorf("path %zu has %d keys; give 0 to %d", p, a->key_count, PBFCL_MAX_PATH_KEYS);
        return false;
    case PBFCL_PATH_KEYS_NO_KEYS:
        pbfcl_errorf("path %zu repeats but has no keys", p);
        return false;
    case PBFCL_PATH_KEYS_TIME:
    case PBFCL_PATH_KEYS_VALUE:
        pbfcl_errorf("path %zu, key %d: a value that is not finite, or a time (%g s) not above "
                     "the key before's (the start: 0 s)",
                     p, e, a->keys[e].time);
        return false;
    case PBFCL_PATH_KEYS_NOT_AT_START:
        pbfcl_errorf("path %zu repeats but its last key is not the starting pose (displacement 0, "
                     "a whole number of turns)",
                     p);
        return false;
    }
    for (int q = 0; q < 3 && a->key_count > 0; q++)
        if (a->velocity[q] != 0.0f || a->angular_velocity[q] != 0.0f) {
            pbfcl_errorf("path %zu has keys and rates; give one or the other", p);
            return false;
        }
    return true;
}

/* Checks the paths (finite, stop > 0, keys as above) and entries (their paths exist). */
static pbfcl_status kin_check(size_t paths, const pbfcl_kinematic_path *path, size_t entries,
                              const unsigned *entry_path, const float *offset3)
{
    for (size_t p = 0; p < paths; p++) {
        bool ok = path[p].stop > 0.0f && !isnan(path[p].stop);
        for (int a = 0; a < 3; a++)
            ok = ok && isfinite(path[p].center[a]) && isfinite(path[p].velocity[a]) &&
                 isfinite(path[p].angular_velocity[a]);
        if (!ok) {
            pbfcl_errorf("path %zu has a value that is not finite, or a stop time not above 0", p);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        if (!kin_check_keys(p, &path[p]))
            return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t e = 0; e < entries; e++)
        if (entry_path[e] >= paths || !isfinite(offset3[3 * e]) || !isfinite(offset3[3 * e + 1]) ||
            !isfinite(offset3[3 * e + 2])) {
            pbfcl_errorf("path particle %zu: path %u of %zu, or an offset that is not finite", e,
                         entry_path[e], paths);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    return PBFCL_OK;
}

/* An entry's id and its index, sorted by id. */
typedef struct kin_order {
    unsigned id;
    size_t e;
} kin_order;

static int by_id(const void *a, const void *b)
{
    unsigned x = ((const kin_order *)a)->id, y = ((const kin_order *)b)->id;
    return (x > y) - (x < y);
}

/* Sorts the entries by id into id and offset (float4, w the path), refusing a repeated id. */
static pbfcl_status kin_sort(size_t entries, const unsigned *entry_id, const unsigned *entry_path,
                             const float *offset3, unsigned *id, cl_float4 *offset)
{
    kin_order *o = malloc(entries * sizeof *o);
    if (!o)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t e = 0; e < entries; e++)
        o[e] = (kin_order){entry_id[e], e};
    qsort(o, entries, sizeof *o, by_id);
    pbfcl_status st = PBFCL_OK;
    for (size_t s = 0; s < entries && st == PBFCL_OK; s++) {
        size_t e = o[s].e;
        id[s] = o[s].id;
        offset[s] = (cl_float4){
            {offset3[3 * e], offset3[3 * e + 1], offset3[3 * e + 2], (float)entry_path[e]}};
        if (s > 0 && id[s] == id[s - 1]) {
            pbfcl_errorf("particle id %u is on two paths (or twice on one)", id[s]);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    free(o);
    return st;
}

pbfcl_status pbfcl_kinematic_set(pbfcl_kinematic *k, size_t paths, const pbfcl_kinematic_path *path,
                                 size_t entries, const unsigned *entry_id,
                                 const unsigned *entry_path, const float *offset3)
{
    PBFCL_TRY(kin_check(paths, path, entries, entry_path, offset3));
    PBFCL_CL_CHECK(clFinish(k->cl->queue));
    kin_release_paths(k);
    k->time = 0.0;
    if (paths == 0 || entries == 0)
        return PBFCL_OK;
    size_t keys = 0; /* each path's start key, then its own */
    for (size_t q = 0; q < paths; q++)
        keys += 1 + (size_t)path[q].key_count;
    k->entry_id = malloc(entries * sizeof *k->entry_id);
    cl_float4 *offset = malloc(entries * sizeof *offset), *p = malloc(paths * 4 * sizeof *p);
    cl_float4 *key = malloc(keys * 2 * sizeof *key);
    pbfcl_status st = k->entry_id && offset && p && key ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = kin_sort(entries, entry_id, entry_path, offset3, k->entry_id, offset);
    for (size_t q = 0, first = 0; st == PBFCL_OK && q < paths; q++) {
        const pbfcl_kinematic_path *a = &path[q];
        float stop = isfinite(a->stop) ? a->stop : FLT_MAX;
        int count = a->key_count;
        float period = count > 0 ? a->keys[count - 1].time : 0.0f;
        p[4 * q] = (cl_float4){{a->center[0], a->center[1], a->center[2], stop}};
        p[4 * q + 1] = (cl_float4){{a->velocity[0], a->velocity[1], a->velocity[2], 0.0f}};
        p[4 * q + 2] = (cl_float4){
            {a->angular_velocity[0], a->angular_velocity[1], a->angular_velocity[2], 0.0f}};
        p[4 * q + 3] =
            (cl_float4){{(float)first, (float)(count + 1), a->repeat ? 1.0f : 0.0f, period}};
        key[2 * first] = (cl_float4){{0.0f, 0.0f, 0.0f, 0.0f}}; /* the start */
        key[2 * first + 1] = (cl_float4){{0.0f, 0.0f, 0.0f, 0.0f}};
        for (int e = 0; e < count; e++) {
            const pbfcl_path_key *f = &a->keys[e];
            size_t at = 2 * (first + 1 + (size_t)e);
            key[at] = (cl_float4){{f->time, f->position[0], f->position[1], f->position[2]}};
            key[at + 1] = (cl_float4){{f->rotation[0], f->rotation[1], f->rotation[2], 0.0f}};
        }
        first += 1 + (size_t)count;
    }
    const void *data[] = {k->entry_id, offset, p, key}; /* as kin_state_buffers */
    for (int b = 0; b < KIN_STATE_COUNT && st == PBFCL_OK; b++)
        st =
            kin_upload(k, b, data[b], kin_state_bytes(&kin_state_buffers[b], paths, entries, keys));
    k->paths = paths;
    k->entries = entries;
    k->keys = keys;
    free(offset);
    free(p);
    free(key);
    if (st != PBFCL_OK)
        kin_release_paths(k);
    return st;
}

pbfcl_status pbfcl_kinematic_remap_ids(pbfcl_kinematic *k, const unsigned *new_id)
{
    if (k->entries == 0)
        return PBFCL_OK;
    for (size_t e = 0; e < k->entries; e++) /* new_id keeps the order: still sorted */
        k->entry_id[e] = new_id[k->entry_id[e]];
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(k->cl->queue, k->entry_id_buf, CL_TRUE, 0, k->entries * 4,
                                        k->entry_id, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_kinematic_move(pbfcl_kinematic *k, size_t n, float dt, cl_mem phase_buf,
                                  cl_mem id_buf, cl_mem pred_buf, pbfcl_profile *prof,
                                  pbfcl_stage stage)
{
    k->time += dt;
    if (k->entries == 0)
        return PBFCL_OK;
    cl_uint un = (cl_uint)n, m = (cl_uint)k->entries;
    cl_float t = (cl_float)k->time;
    KIN_ARG(k->path, 0, un);
    KIN_ARG(k->path, 1, t);
    KIN_ARG(k->path, 2, phase_buf);
    KIN_ARG(k->path, 3, id_buf);
    KIN_ARG(k->path, 4, m);
    KIN_ARG(k->path, 5, k->entry_id_buf);
    KIN_ARG(k->path, 6, k->entry_offset_buf);
    KIN_ARG(k->path, 7, k->path_buf);
    KIN_ARG(k->path, 8, k->key_buf);
    KIN_ARG(k->path, 9, pred_buf);
    return pbfcl_cl_launch(k->cl, k->path, n, k->wg, prof, stage);
}

/* ---- checkpoints: the paths and their clock as named sections ---------------------------- */

/* The "paths" section: the counts of the other sections and the clock. */
typedef struct kin_state_head {
    uint64_t paths, entries, keys;
    double time;
} kin_state_head;

pbfcl_status pbfcl_kinematic_state_save(pbfcl_kinematic *k, pbfcl_state_write_fn put, void *ctx)
{
    kin_state_head h = {k ? k->paths : 0, k ? k->entries : 0, k ? k->keys : 0, k ? k->time : 0.0};
    PBFCL_TRY(put(ctx, "paths", &h, sizeof h));
    if (h.entries == 0)
        return PBFCL_OK;
    void *tmp = malloc(16 * k->entries + 64 * k->paths + 32 * k->keys);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (int b = 0; b < KIN_STATE_COUNT && st == PBFCL_OK; b++) {
        const kin_state_buffer *s = &kin_state_buffers[b];
        size_t bytes = kin_state_bytes(s, k->paths, k->entries, k->keys);
        cl_int err = clEnqueueReadBuffer(k->cl->queue, *kin_buffer(k, b), CL_TRUE, 0, bytes, tmp, 0,
                                         NULL, NULL);
        if (err != CL_SUCCESS) {
            pbfcl_report_cl(err, "clEnqueueReadBuffer", __FILE__, __LINE__);
            st = PBFCL_ERR_OPENCL;
        } else {
            st = put(ctx, s->name, tmp, bytes);
        }
    }
    free(tmp);
    return st;
}

/* Reads the sections of h into data[b] (allocated here) and uploads them. */
static pbfcl_status kin_state_read(pbfcl_kinematic *k, kin_state_head h, pbfcl_state_read_fn get,
                                   void *ctx, void **data)
{
    size_t bytes[KIN_STATE_COUNT];
    for (int b = 0; b < KIN_STATE_COUNT; b++) {
        const kin_state_buffer *s = &kin_state_buffers[b];
        bytes[b] = kin_state_bytes(s, (size_t)h.paths, (size_t)h.entries, (size_t)h.keys);
        if (!(data[b] = malloc(bytes[b])))
            return PBFCL_ERR_OUT_OF_MEMORY;
        PBFCL_TRY(get(ctx, s->name, data[b], bytes[b]));
    }
    const unsigned *id = data[0];
    const cl_float4 *offset = data[1];
    for (size_t e = 0; e < h.entries; e++)
        if ((e > 0 && id[e] <= id[e - 1]) || offset[e].s[3] < 0.0f ||
            offset[e].s[3] >= (float)h.paths) {
            pbfcl_errorf("the saved paths are damaged: particle %zu (id %u) is out of order or on "
                         "path %g of %llu",
                         e, id[e], offset[e].s[3], (unsigned long long)h.paths);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    const cl_float4 *motion = data[2];
    for (size_t p = 0; p < h.paths; p++) {
        const float *r = motion[4 * p + 3].s; /* first key, keys: within the saved keys */
        if (!(r[0] >= 0.0f && r[1] >= 1.0f && (double)r[0] + r[1] <= (double)h.keys)) {
            pbfcl_errorf("the saved paths are damaged: path %zu has keys %g to %g of %llu", p, r[0],
                         r[0] + r[1], (unsigned long long)h.keys);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    for (int b = 0; b < KIN_STATE_COUNT; b++)
        PBFCL_TRY(kin_upload(k, b, data[b], bytes[b]));
    return PBFCL_OK;
}

pbfcl_status pbfcl_kinematic_state_count(pbfcl_state_read_fn get, void *ctx, size_t *entries)
{
    kin_state_head h;
    PBFCL_TRY(get(ctx, "paths", &h, sizeof h));
    *entries = (size_t)h.entries;
    return PBFCL_OK;
}

pbfcl_status pbfcl_kinematic_state_load(pbfcl_kinematic *k, pbfcl_state_read_fn get, void *ctx)
{
    kin_state_head h;
    PBFCL_TRY(get(ctx, "paths", &h, sizeof h));
    if ((h.paths == 0) != (h.entries == 0) || h.entries > UINT32_MAX || h.paths > UINT32_MAX ||
        h.keys < h.paths || h.keys > h.paths * (PBFCL_MAX_PATH_KEYS + 1)) {
        pbfcl_errorf("the saved paths are damaged: %llu paths of %llu particles and %llu keys",
                     (unsigned long long)h.paths, (unsigned long long)h.entries,
                     (unsigned long long)h.keys);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_CL_CHECK(clFinish(k->cl->queue));
    kin_release_paths(k);
    k->time = h.time;
    if (h.entries == 0)
        return PBFCL_OK;
    void *data[KIN_STATE_COUNT] = {0};
    pbfcl_status st = kin_state_read(k, h, get, ctx, data);
    if (st == PBFCL_OK) {
        k->entry_id = data[0];
        data[0] = NULL;
        k->paths = (size_t)h.paths;
        k->entries = (size_t)h.entries;
        k->keys = (size_t)h.keys;
    } else {
        kin_release_paths(k);
    }
    for (int b = 0; b < KIN_STATE_COUNT; b++)
        free(data[b]);
    return st;
}

/* ---- the paths as an attachment of the simulation (attachment.h) ------------------------- */

static pbfcl_status kin_attach_create(const pbfcl_attach_env *env, void **state)
{
    /* the entries name ids; the kernel checks them against the particles */
    pbfcl_kinematic *k = calloc(1, sizeof *k);
    if (!(*state = k))
        return PBFCL_ERR_OUT_OF_MEMORY;
    return pbfcl_kinematic_create(k, env->cl);
}

static void kin_attach_destroy(void *state)
{
    pbfcl_kinematic_destroy(state);
    free(state);
}

static pbfcl_status kin_attach_save(void *state, pbfcl_state_write_fn put, void *ctx)
{
    return pbfcl_kinematic_state_save(state, put, ctx); /* paths and their clock */
}

static pbfcl_status kin_attach_saved(pbfcl_state_read_fn get, void *ctx, bool *any)
{
    size_t entries = 0;
    PBFCL_TRY(pbfcl_kinematic_state_count(get, ctx, &entries));
    *any = entries > 0;
    return PBFCL_OK;
}

static pbfcl_status kin_attach_load(void *state, pbfcl_state_read_fn get, void *ctx)
{
    return pbfcl_kinematic_state_load(state, get, ctx);
}

static pbfcl_status kin_attach_remap_ids(void *state, const unsigned *new_id)
{
    return pbfcl_kinematic_remap_ids(state, new_id);
}

const pbfcl_attachment pbfcl_kinematic_attachment = {
    .name = "paths",
    .create = kin_attach_create,
    .destroy = kin_attach_destroy,
    .save = kin_attach_save,
    .saved = kin_attach_saved,
    .load = kin_attach_load,
    .remap_ids = kin_attach_remap_ids,
};
