/* Shape matching (see shape_match.h): builds cl/bodies/shape_match.cl with a work-group size from
 * device queries, keeps the bodies' entries, rest shapes and poses on the device, and runs
 * the segmented reduction, the polar decomposition and the goal projection for all bodies
 * in one launch each. */
#include "bodies/shape_match.h"

#include "pbfcl_shared.h"
#include "runtime/programs.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SM_MAX_WG 256u
/* Local memory per work-item of the reductions: a float4 sum per row and a body id. */
#define SM_ROWS PBFCL_SHAPE_MATCH_ROWS
#define SM_LOCAL_PER_ITEM (SM_ROWS * 16 + 4)

#define SM_ARG(kernel, idx, v) PBFCL_CL_CHECK(clSetKernelArg((kernel), (idx), sizeof(v), &(v)))

void pbfcl_shape_match_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    size_t wg = 1;
    while (wg * 2 <= dev->max_wg && wg * 2 <= SM_MAX_WG &&
           wg * 2 * SM_LOCAL_PER_ITEM <= dev->local_mem)
        wg *= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
}

static const char *const sm_kernel_names[] = {
    "shape_match_reduce", "shape_match_finish",  "shape_match_goal",     "shape_match_momentum",
    "shape_match_spin",   "shape_match_predict", "shape_match_velocity", "shape_match_totals"};
#define SM_KERNEL_COUNT ((int)(sizeof sm_kernel_names / sizeof sm_kernel_names[0]))

static cl_kernel *sm_kernel(pbfcl_shape_match *sm, int k)
{
    cl_kernel *slots[] = {&sm->reduce, &sm->finish,  &sm->goal,     &sm->momentum,
                          &sm->spin,   &sm->predict, &sm->velocity, &sm->totals};
    return slots[k];
}

/* Whether kernel k uses local memory: the segmented reductions and the per-body sums of
 * finish, spin and totals. */
static int sm_kernel_uses_local(int k)
{
    return k == 0 || k == 1 || k == 3 || k == 4 || k == 7; /* reduce, finish, momentum, spin */
}

static pbfcl_status sm_build(pbfcl_shape_match *sm)
{
    pbfcl_build_config cfg;
    pbfcl_shape_match_build_config(&sm->cl->dev, &cfg);
    sm->wg = cfg.wg_size;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_SHAPE_MATCH);
    PBFCL_TRY(pbfcl_cl_build(sm->cl, desc->files, desc->nfiles, options, &sm->program));
    for (int k = 0; k < SM_KERNEL_COUNT; k++) {
        cl_kernel *slot = sm_kernel(sm, k);
        PBFCL_TRY(pbfcl_cl_kernel(sm->program, sm_kernel_names[k], slot));
        size_t local = sm_kernel_uses_local(k) ? sm->wg * SM_LOCAL_PER_ITEM : 0;
        PBFCL_TRY(pbfcl_cl_check_launch(sm->cl, *slot, sm_kernel_names[k], sm->wg, local));
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_match_create(pbfcl_shape_match *sm, pbfcl_cl *cl, size_t capacity,
                                      cl_mem slot_buf)
{
    memset(sm, 0, sizeof *sm);
    sm->cl = cl;
    sm->capacity = capacity;
    sm->slot_buf = slot_buf;
    sm->owned = PBFCL_EMPTY; /* every particle here and owned (pbfcl_shape_match_split) */
    pbfcl_shape_match_set_walls(sm, (const float[3]){-FLT_MAX, -FLT_MAX, -FLT_MAX},
                                (const float[3]){FLT_MAX, FLT_MAX, FLT_MAX});
    PBFCL_TRY(sm_build(sm));
    return pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, capacity * 32, "bodies' contacts",
                           &sm->static_buf);
}

void pbfcl_shape_match_set_walls(pbfcl_shape_match *sm, const float lo[3], const float hi[3])
{
    sm->wall_lo = (cl_float4){{lo[0], lo[1], lo[2], 0.0f}};
    sm->wall_hi = (cl_float4){{hi[0], hi[1], hi[2], 0.0f}};
}

/* The bodies' device buffers, declared once: uploaded by set_bodies, saved and restored by
 * checkpoints; bytes per body and per entry. The slot table is rebuilt from the ids before
 * every use and the partial sums (sm_body_buffers' last two) are scratch, so they are not
 * here. */
typedef struct sm_state_buffer {
    const char *name;
    size_t field; /* offsetof the cl_mem in pbfcl_shape_match */
    size_t per_body, per_entry;
} sm_state_buffer;

#define SM_STATE_BUF(name, field, per_body, per_entry)                                             \
    {                                                                                              \
        name, offsetof(pbfcl_shape_match, field), per_body, per_entry                              \
    }
static const sm_state_buffer sm_state_buffers[] = {
    SM_STATE_BUF("body_entry_ids", entry_id_buf, 0, 4),
    SM_STATE_BUF("body_entry_bodies", entry_body_buf, 0, 4),
    SM_STATE_BUF("body_rest_offsets", rest_buf, 0, 16),
    SM_STATE_BUF("body_ranges", body_range_buf, 8, 0),
    SM_STATE_BUF("body_centres", body_com_buf, 16, 0),
    SM_STATE_BUF("body_rotations", body_rot_buf, 64, 0),
    SM_STATE_BUF("body_stiffness", body_stiffness_buf, 4, 0),
    SM_STATE_BUF("body_inertia", body_inertia_buf, 32, 0),
    SM_STATE_BUF("body_motion", body_motion_buf, 64, 0),
};

#define SM_UPLOADED ((int)(sizeof sm_state_buffers / sizeof sm_state_buffers[0]))

static size_t sm_state_bytes(const sm_state_buffer *b, size_t bodies, size_t entries)
{
    return b->per_body * bodies + b->per_entry * entries;
}

/* The buffers that depend on the bodies: those of sm_state_buffers, then the partial sums. */
static cl_mem *sm_body_buffers(pbfcl_shape_match *sm, int k)
{
    if (k < SM_UPLOADED)
        return (cl_mem *)((char *)sm + sm_state_buffers[k].field);
    cl_mem *scratch[] = {&sm->partial_buf, &sm->sums_buf};
    return k < SM_UPLOADED + 2 ? scratch[k - SM_UPLOADED] : NULL;
}

static void sm_release_bodies(pbfcl_shape_match *sm)
{
    for (int k = 0; sm_body_buffers(sm, k); k++)
        pbfcl_cl_release_buffer(sm_body_buffers(sm, k));
    pbfcl_cl_release_buffer(&sm->totals_buf);
    free(sm->totals_host);
    sm->totals_host = NULL;
    free(sm->entry_id);
    sm->entry_id = NULL;
    sm->bodies = sm->entries = 0;
}

void pbfcl_shape_match_destroy(pbfcl_shape_match *sm)
{
    if (!sm)
        return;
    sm_release_bodies(sm);
    pbfcl_cl_release_buffer(&sm->static_buf); /* not slot_buf: the particles' */
    for (int k = 0; k < SM_KERNEL_COUNT; k++) {
        if (*sm_kernel(sm, k))
            clReleaseKernel(*sm_kernel(sm, k));
        *sm_kernel(sm, k) = NULL;
    }
    if (sm->program)
        clReleaseProgram(sm->program);
    sm->program = NULL;
}

/* Checks the entries: ids below capacity, bodies sorted, each with enough particles. */
static pbfcl_status sm_check(const pbfcl_shape_match *sm, size_t bodies, size_t entries,
                             const unsigned *entry_id, const unsigned *entry_body,
                             const float *stiffness)
{
    size_t start = 0;
    for (size_t e = 0; e <= entries; e++) {
        if (e < entries && entry_id[e] >= sm->capacity) {
            pbfcl_errorf("body particle %zu has id %u; ids must be below %zu", e, entry_id[e],
                         sm->capacity);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        if (e < entries && entry_body[e] >= bodies) {
            pbfcl_errorf("body particle %zu belongs to body %u of %zu", e, entry_body[e], bodies);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        if (e > 0 && (e == entries || entry_body[e] != entry_body[e - 1])) {
            unsigned b = entry_body[e - 1], want = e == entries ? (unsigned)bodies : entry_body[e];
            if (e - start < PBFCL_SHAPE_MATCH_MIN_PARTICLES || (e < entries && want != b + 1) ||
                (e == entries && b + 1 != bodies)) {
                pbfcl_errorf("body %u has %zu particles and the next body is %u: bodies must be "
                             "numbered 0 to %zu without gaps, each with at least %d particles",
                             b, e - start, want, bodies - 1, PBFCL_SHAPE_MATCH_MIN_PARTICLES);
                return PBFCL_ERR_BAD_ARGUMENT;
            }
            start = e;
        }
    }
    if (entries > 0 && entry_body[0] != 0) {
        pbfcl_errorf("the first body particle belongs to body %u; bodies are numbered from 0",
                     entry_body[0]);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t b = 0; b < bodies; b++)
        if (!(stiffness[b] > 0.0f && stiffness[b] <= 1.0f)) {
            pbfcl_errorf("body %zu has stiffness %g; give a stiffness above 0 and at most 1 "
                         "(1: rigid)",
                         b, stiffness[b]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    return PBFCL_OK;
}

/* Fills the host arrays of the bodies: ranges, rest centres and offsets with mass fractions,
 * identity rotations. */
static void sm_rest_shapes(size_t bodies, size_t entries, const unsigned *entry_body,
                           const float *rest3, cl_uint *range, cl_float4 *com, cl_float4 *rot,
                           cl_float4 *rest, cl_float4 *inertia)
{
    for (size_t b = 0; b < bodies; b++)
        range[2 * b] = range[2 * b + 1] = 0;
    for (size_t e = entries; e-- > 0;)
        range[2 * entry_body[e]] = (cl_uint)e;
    for (size_t e = 0; e < entries; e++)
        range[2 * entry_body[e] + 1] = (cl_uint)e + 1;
    for (size_t b = 0; b < bodies; b++) {
        double c[3] = {0, 0, 0};
        size_t first = range[2 * b], end = range[2 * b + 1], count = end - first;
        for (size_t e = first; e < end; e++)
            for (int a = 0; a < 3; a++)
                c[a] += rest3[3 * e + a];
        for (int a = 0; a < 3; a++)
            c[a] /= (double)count;
        com[b] = (cl_float4){{(float)c[0], (float)c[1], (float)c[2], 0.0f}};
        rot[4 * b] = (cl_float4){{0, 0, 0, 1}};
        rot[4 * b + 1] = (cl_float4){{1, 0, 0, 0}};
        rot[4 * b + 2] = (cl_float4){{0, 1, 0, 0}};
        rot[4 * b + 3] = (cl_float4){{0, 0, 1, 0}};
        double j[6] = {0, 0, 0, 0, 0, 0}; /* sum f (|r|^2 - r r^T): xx yy zz xy xz yz */
        for (size_t e = first; e < end; e++) {
            double r[3] = {rest3[3 * e] - c[0], rest3[3 * e + 1] - c[1], rest3[3 * e + 2] - c[2]};
            double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], f = 1.0 / (double)count;
            rest[e] = (cl_float4){{(float)r[0], (float)r[1], (float)r[2], (float)f}};
            j[0] += f * (r2 - r[0] * r[0]);
            j[1] += f * (r2 - r[1] * r[1]);
            j[2] += f * (r2 - r[2] * r[2]);
            j[3] -= f * r[0] * r[1];
            j[4] -= f * r[0] * r[2];
            j[5] -= f * r[1] * r[2];
        }
        inertia[2 * b] = (cl_float4){{(float)j[0], (float)j[1], (float)j[2], 0.0f}};
        inertia[2 * b + 1] = (cl_float4){{(float)j[3], (float)j[4], (float)j[5], 0.0f}};
    }
}

/* Creates the body buffers (at least one element each) and uploads the host arrays. */
static pbfcl_status sm_upload(pbfcl_shape_match *sm, const void *const *data, const size_t *bytes)
{
    size_t groups = (sm->entries + sm->wg - 1) / sm->wg;
    size_t sizes[SM_UPLOADED + 2];
    memcpy(sizes, bytes, SM_UPLOADED * sizeof *sizes);
    sizes[SM_UPLOADED] = (groups ? groups : 1) * 2 * SM_ROWS * 16;
    sizes[SM_UPLOADED + 1] = (sm->bodies ? sm->bodies : 1) * SM_ROWS * 16;
    for (int k = 0; sm_body_buffers(sm, k); k++) {
        PBFCL_TRY(pbfcl_cl_buffer(sm->cl, CL_MEM_READ_WRITE, sizes[k] ? sizes[k] : 4, "body data",
                                  sm_body_buffers(sm, k)));
        if (k < SM_UPLOADED && bytes[k])
            PBFCL_CL_CHECK(clEnqueueWriteBuffer(sm->cl->queue, *sm_body_buffers(sm, k), CL_TRUE, 0,
                                                bytes[k], data[k], 0, NULL, NULL));
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_match_set_bodies(pbfcl_shape_match *sm, size_t bodies, size_t entries,
                                          const unsigned *entry_id, const unsigned *entry_body,
                                          const float *rest3, const float *stiffness)
{
    if (bodies > entries || entries > sm->capacity) {
        pbfcl_errorf("%zu bodies of %zu particles do not fit %zu particles", bodies, entries,
                     sm->capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(sm_check(sm, bodies, entries, entry_id, entry_body, stiffness));
    PBFCL_CL_CHECK(clFinish(sm->cl->queue));
    sm_release_bodies(sm);
    if (bodies == 0)
        return PBFCL_OK;
    cl_uint *range = malloc(bodies * 2 * sizeof *range);
    cl_float4 *com = malloc(bodies * sizeof *com), *rot = malloc(bodies * 4 * sizeof *rot);
    cl_float4 *rest = malloc(entries * sizeof *rest), *inertia = malloc(bodies * 2 * 16);
    cl_float4 *motion = calloc(bodies * 4, 16);
    sm->entry_id = malloc(entries * sizeof *sm->entry_id);
    pbfcl_status st = PBFCL_ERR_OUT_OF_MEMORY;
    if (range && com && rot && rest && inertia && motion && sm->entry_id) {
        memcpy(sm->entry_id, entry_id, entries * sizeof *entry_id);
        sm_rest_shapes(bodies, entries, entry_body, rest3, range, com, rot, rest, inertia);
        sm->bodies = bodies;
        sm->entries = entries;
        const void *data[] = {entry_id, entry_body, rest,    range, com,
                              rot,      stiffness,  inertia, motion}; /* as sm_state_buffers */
        size_t bytes[sizeof data / sizeof data[0]];
        _Static_assert(sizeof data / sizeof data[0] ==
                           sizeof sm_state_buffers / sizeof sm_state_buffers[0],
                       "one array per entry of sm_state_buffers");
        for (int k = 0; k < SM_UPLOADED; k++)
            bytes[k] = sm_state_bytes(&sm_state_buffers[k], bodies, entries);
        st = sm_upload(sm, data, bytes);
    }
    free(inertia);
    free(motion);
    free(range);
    free(com);
    free(rot);
    free(rest);
    if (st != PBFCL_OK)
        sm_release_bodies(sm);
    return st;
}

pbfcl_status pbfcl_shape_match_set_stiffness(pbfcl_shape_match *sm, size_t b, float stiffness)
{
    if (b >= sm->bodies || !(stiffness > 0.0f && stiffness <= 1.0f)) {
        pbfcl_errorf("body %zu of %zu, stiffness %g: give an existing body and a stiffness "
                     "above 0 and at most 1",
                     b, sm->bodies, stiffness);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sm->cl->queue, sm->body_stiffness_buf, CL_TRUE, b * 4, 4,
                                        &stiffness, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_match_remap_ids(pbfcl_shape_match *sm, const unsigned *new_id)
{
    if (sm->entries == 0)
        return PBFCL_OK;
    for (size_t e = 0; e < sm->entries; e++)
        sm->entry_id[e] = new_id[sm->entry_id[e]];
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sm->cl->queue, sm->entry_id_buf, CL_TRUE, 0,
                                        sm->entries * 4, sm->entry_id, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_match_split(pbfcl_shape_match *sm, cl_mem here_buf,
                                     pbfcl_shape_match_combine_fn combine, void *ctx)
{
    if (!here_buf || !combine) {
        pbfcl_errorf("pbfcl_shape_match_split: %s is NULL", here_buf ? "combine" : "here_buf");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    sm->here_buf = here_buf;
    sm->combine = combine;
    sm->combine_ctx = ctx;
    return PBFCL_OK;
}

/* The presence map the kernels read: the split's, else the slots (every particle here). */
static cl_mem sm_here(const pbfcl_shape_match *sm)
{
    return sm->here_buf ? sm->here_buf : sm->slot_buf;
}

/* Split: the last reduction's rows (of each body, over this device's particles) whole into
 * totals_buf (shape_match_totals), read, combined over the devices and written back, for
 * finish or spin to read (summed); returns whether it did (none when not split). */
static pbfcl_status sm_combine(pbfcl_shape_match *sm, cl_uint rows, pbfcl_profile *prof,
                               pbfcl_stage stage, cl_uint *summed)
{
    *summed = sm->combine != NULL;
    if (!sm->combine)
        return PBFCL_OK;
    size_t bytes = sm->bodies * SM_ROWS * 16;
    if (!sm->totals_buf) {
        PBFCL_TRY(
            pbfcl_cl_buffer(sm->cl, CL_MEM_READ_WRITE, bytes, "bodies' sums", &sm->totals_buf));
        if (!(sm->totals_host = malloc(bytes)))
            return PBFCL_ERR_OUT_OF_MEMORY;
    }
    cl_uint bodies = (cl_uint)sm->bodies;
    cl_kernel k = sm->totals;
    SM_ARG(k, 0, bodies);
    SM_ARG(k, 1, rows);
    SM_ARG(k, 2, sm->body_range_buf);
    SM_ARG(k, 3, sm->partial_buf);
    SM_ARG(k, 4, sm->sums_buf);
    SM_ARG(k, 5, sm->totals_buf);
    PBFCL_TRY(pbfcl_cl_launch(sm->cl, k, sm->bodies * sm->wg, sm->wg, prof, stage));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(sm->cl->queue, sm->totals_buf, CL_TRUE, 0, bytes,
                                       sm->totals_host, 0, NULL, NULL));
    PBFCL_TRY(sm->combine(sm->combine_ctx, sm->totals_host, sm->bodies));
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sm->cl->queue, sm->totals_buf, CL_TRUE, 0, bytes,
                                        sm->totals_host, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_match_project(pbfcl_shape_match *sm, cl_mem pred_buf, cl_mem static_buf,
                                       float mu_s, float mu_k, pbfcl_profile *prof,
                                       pbfcl_stage stage)
{
    if (sm->entries == 0)
        return PBFCL_OK;
    cl_uint entries = (cl_uint)sm->entries, bodies = (cl_uint)sm->bodies;
    cl_kernel k = sm->reduce;
    SM_ARG(k, 0, entries);
    SM_ARG(k, 1, sm->entry_id_buf);
    SM_ARG(k, 2, sm->entry_body_buf);
    SM_ARG(k, 3, sm->rest_buf);
    SM_ARG(k, 4, sm->slot_buf);
    SM_ARG(k, 5, pred_buf);
    SM_ARG(k, 6, sm->body_com_buf);
    SM_ARG(k, 7, sm->body_range_buf);
    SM_ARG(k, 8, sm->partial_buf);
    SM_ARG(k, 9, sm->sums_buf);
    cl_uint use_static = static_buf != NULL;
    cl_mem static_in = static_buf ? static_buf : pred_buf; /* read only with use_static */
    SM_ARG(k, 10, use_static);
    SM_ARG(k, 11, static_in);
    cl_mem here = sm_here(sm);
    SM_ARG(k, 12, here);
    SM_ARG(k, 13, sm->owned);
    PBFCL_TRY(pbfcl_cl_launch(sm->cl, k, sm->entries, sm->wg, prof, stage));
    cl_uint summed;
    PBFCL_TRY(sm_combine(sm, use_static ? SM_ROWS : 3u, prof, stage, &summed));
    k = sm->finish;
    SM_ARG(k, 0, bodies);
    SM_ARG(k, 1, sm->body_range_buf);
    SM_ARG(k, 2, sm->partial_buf);
    cl_mem sums = summed ? sm->totals_buf : sm->sums_buf;
    SM_ARG(k, 3, sums);
    SM_ARG(k, 4, sm->body_com_buf);
    SM_ARG(k, 5, sm->body_rot_buf);
    SM_ARG(k, 6, mu_s);
    SM_ARG(k, 7, mu_k);
    SM_ARG(k, 8, use_static);
    SM_ARG(k, 9, sm->rest_buf);
    SM_ARG(k, 10, sm->wall_lo);
    SM_ARG(k, 11, sm->wall_hi);
    SM_ARG(k, 12, summed);
    PBFCL_TRY(
        pbfcl_cl_launch(sm->cl, k, sm->bodies * sm->wg, sm->wg, prof, stage)); /* a group a body */
    k = sm->goal;
    SM_ARG(k, 0, entries);
    SM_ARG(k, 1, sm->entry_id_buf);
    SM_ARG(k, 2, sm->entry_body_buf);
    SM_ARG(k, 3, sm->rest_buf);
    SM_ARG(k, 4, sm->slot_buf);
    SM_ARG(k, 5, sm->body_com_buf);
    SM_ARG(k, 6, sm->body_rot_buf);
    SM_ARG(k, 7, sm->body_stiffness_buf);
    SM_ARG(k, 8, sm->wall_lo);
    SM_ARG(k, 9, sm->wall_hi);
    SM_ARG(k, 10, pred_buf);
    SM_ARG(k, 11, here);
    return pbfcl_cl_launch(sm->cl, k, sm->entries, sm->wg, prof, stage);
}

/* Sets the arguments of a per-entry kernel that starts (entries, dt, entry ids, entry bodies,
 * slots, body motion, body stiffness). */
static pbfcl_status sm_entry_args(pbfcl_shape_match *sm, cl_kernel k, float dt)
{
    cl_uint entries = (cl_uint)sm->entries;
    SM_ARG(k, 0, entries);
    SM_ARG(k, 1, dt);
    SM_ARG(k, 2, sm->entry_id_buf);
    SM_ARG(k, 3, sm->entry_body_buf);
    SM_ARG(k, 4, sm->slot_buf);
    SM_ARG(k, 5, sm->body_motion_buf);
    SM_ARG(k, 6, sm->body_stiffness_buf);
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_match_predict(pbfcl_shape_match *sm, float dt, cl_mem pos_buf,
                                       cl_mem vel_buf, cl_mem pred_buf, pbfcl_profile *prof,
                                       pbfcl_stage stage)
{
    if (sm->entries == 0)
        return PBFCL_OK;
    cl_uint entries = (cl_uint)sm->entries, bodies = (cl_uint)sm->bodies;
    cl_kernel k = sm->momentum;
    cl_mem args[] = {
        sm->entry_id_buf, sm->entry_body_buf, sm->rest_buf,       sm->slot_buf,    pos_buf,
        vel_buf,          sm->body_com_buf,   sm->body_range_buf, sm->partial_buf, sm->sums_buf};
    SM_ARG(k, 0, entries);
    for (cl_uint a = 0; a < sizeof args / sizeof args[0]; a++)
        SM_ARG(k, a + 1, args[a]);
    cl_mem here = sm_here(sm);
    SM_ARG(k, 11, here);
    SM_ARG(k, 12, sm->owned);
    PBFCL_TRY(pbfcl_cl_launch(sm->cl, k, sm->entries, sm->wg, prof, stage));
    cl_uint summed;
    PBFCL_TRY(sm_combine(sm, 3u, prof, stage, &summed));
    k = sm->spin;
    cl_mem sums = summed ? sm->totals_buf : sm->sums_buf;
    cl_mem spin_args[] = {sm->body_range_buf,   sm->partial_buf,  sums,
                          sm->body_inertia_buf, sm->body_com_buf, sm->body_rot_buf,
                          sm->body_motion_buf};
    SM_ARG(k, 0, bodies);
    SM_ARG(k, 1, dt);
    for (cl_uint a = 0; a < sizeof spin_args / sizeof spin_args[0]; a++)
        SM_ARG(k, a + 2, spin_args[a]);
    SM_ARG(k, 9, summed);
    PBFCL_TRY(
        pbfcl_cl_launch(sm->cl, k, sm->bodies * sm->wg, sm->wg, prof, stage)); /* a group a body */
    k = sm->predict;
    PBFCL_TRY(sm_entry_args(sm, k, dt));
    SM_ARG(k, 7, pos_buf);
    SM_ARG(k, 8, pred_buf);
    SM_ARG(k, 9, here);
    return pbfcl_cl_launch(sm->cl, k, sm->entries, sm->wg, prof, stage);
}

pbfcl_status pbfcl_shape_match_velocity(pbfcl_shape_match *sm, float dt, cl_mem pos_buf,
                                        cl_mem vel_buf, pbfcl_profile *prof, pbfcl_stage stage)
{
    if (sm->entries == 0)
        return PBFCL_OK;
    cl_kernel k = sm->velocity;
    PBFCL_TRY(sm_entry_args(sm, k, dt));
    SM_ARG(k, 7, sm->body_com_buf);
    SM_ARG(k, 8, sm->body_rot_buf);
    SM_ARG(k, 9, pos_buf);
    SM_ARG(k, 10, vel_buf);
    cl_mem here = sm_here(sm);
    SM_ARG(k, 11, here);
    return pbfcl_cl_launch(sm->cl, k, sm->entries, sm->wg, prof, stage);
}

pbfcl_status pbfcl_shape_match_read(pbfcl_shape_match *sm, float *com3, float *quat4)
{
    size_t nb = sm->bodies;
    if (nb == 0)
        return PBFCL_OK;
    cl_float4 *tmp = malloc(nb * 4 * sizeof *tmp);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = CL_SUCCESS;
    if (com3) {
        err = clEnqueueReadBuffer(sm->cl->queue, sm->body_com_buf, CL_TRUE, 0, nb * 16, tmp, 0,
                                  NULL, NULL);
        for (size_t b = 0; err == CL_SUCCESS && b < nb; b++)
            memcpy(com3 + 3 * b, tmp[b].s, 3 * sizeof(float));
    }
    if (quat4 && err == CL_SUCCESS) {
        err = clEnqueueReadBuffer(sm->cl->queue, sm->body_rot_buf, CL_TRUE, 0, nb * 64, tmp, 0,
                                  NULL, NULL);
        for (size_t b = 0; err == CL_SUCCESS && b < nb; b++)
            memcpy(quat4 + 4 * b, tmp[4 * b].s, 4 * sizeof(float));
    }
    free(tmp);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clEnqueueReadBuffer", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

/* ---- checkpoints: the bodies as named sections ------------------------------------------ */

/* The "bodies" section: how many bodies and entries the other sections hold. */
typedef struct sm_state_counts {
    uint64_t bodies, entries;
} sm_state_counts;

pbfcl_status pbfcl_shape_match_state_save(pbfcl_shape_match *sm, pbfcl_state_write_fn put,
                                          void *ctx)
{
    sm_state_counts c = {sm ? sm->bodies : 0, sm ? sm->entries : 0};
    PBFCL_TRY(put(ctx, "bodies", &c, sizeof c));
    if (c.bodies == 0)
        return PBFCL_OK;
    void *tmp = malloc(64 * sm->bodies + 16 * sm->entries);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (int k = 0; k < SM_UPLOADED && st == PBFCL_OK; k++) {
        const sm_state_buffer *b = &sm_state_buffers[k];
        size_t bytes = sm_state_bytes(b, sm->bodies, sm->entries);
        cl_mem buf = *(cl_mem *)((char *)sm + b->field);
        cl_int err = clEnqueueReadBuffer(sm->cl->queue, buf, CL_TRUE, 0, bytes, tmp, 0, NULL, NULL);
        if (err != CL_SUCCESS) {
            pbfcl_report_cl(err, "clEnqueueReadBuffer", __FILE__, __LINE__);
            st = PBFCL_ERR_OPENCL;
        } else {
            st = put(ctx, b->name, tmp, bytes);
        }
    }
    free(tmp);
    return st;
}

/* Reads the sections of counts c into data[k] (allocated here) and checks the entries. */
static pbfcl_status sm_state_read(pbfcl_shape_match *sm, sm_state_counts c, pbfcl_state_read_fn get,
                                  void *ctx, void **data, size_t *bytes)
{
    if (c.bodies > c.entries || c.entries > sm->capacity) {
        pbfcl_errorf("the saved state has %llu bodies of %llu particles, more than the %zu "
                     "particles this solver holds",
                     (unsigned long long)c.bodies, (unsigned long long)c.entries, sm->capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int k = 0; k < SM_UPLOADED; k++) {
        bytes[k] = sm_state_bytes(&sm_state_buffers[k], (size_t)c.bodies, (size_t)c.entries);
        if (!(data[k] = malloc(bytes[k])))
            return PBFCL_ERR_OUT_OF_MEMORY;
        PBFCL_TRY(get(ctx, sm_state_buffers[k].name, data[k], bytes[k]));
    }
    return sm_check(sm, (size_t)c.bodies, (size_t)c.entries, data[0], data[1], data[6]);
}

pbfcl_status pbfcl_shape_match_state_count(pbfcl_state_read_fn get, void *ctx, size_t *bodies)
{
    sm_state_counts c;
    PBFCL_TRY(get(ctx, "bodies", &c, sizeof c));
    *bodies = (size_t)c.bodies;
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_match_state_load(pbfcl_shape_match *sm, pbfcl_state_read_fn get, void *ctx)
{
    sm_state_counts c;
    PBFCL_TRY(get(ctx, "bodies", &c, sizeof c));
    void *data[SM_UPLOADED] = {0};
    size_t bytes[SM_UPLOADED] = {0};
    pbfcl_status st = sm_state_read(sm, c, get, ctx, data, bytes);
    if (st == PBFCL_OK && clFinish(sm->cl->queue) != CL_SUCCESS)
        st = PBFCL_ERR_OPENCL;
    if (st == PBFCL_OK) {
        sm_release_bodies(sm);
        sm->entry_id = malloc((size_t)c.entries * sizeof *sm->entry_id + 1);
        st = sm->entry_id ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    }
    if (st == PBFCL_OK && c.bodies > 0) {
        memcpy(sm->entry_id, data[0], bytes[0]);
        sm->bodies = (size_t)c.bodies;
        sm->entries = (size_t)c.entries;
        st = sm_upload(sm, (const void *const *)data, bytes);
    }
    if (st != PBFCL_OK || c.bodies == 0)
        sm_release_bodies(sm);
    for (int k = 0; k < SM_UPLOADED; k++)
        free(data[k]);
    return st;
}

/* ---- the bodies as an attachment of the simulation (attachment.h) ------------------------ */

static pbfcl_status sm_attach_create(const pbfcl_attach_env *env, void **state)
{
    pbfcl_shape_match *sm = calloc(1, sizeof *sm);
    if (!(*state = sm))
        return PBFCL_ERR_OUT_OF_MEMORY;
    return pbfcl_shape_match_create(sm, env->cl, env->capacity, env->slot_buf);
}

static void sm_attach_destroy(void *state)
{
    pbfcl_shape_match_destroy(state);
    free(state);
}

static pbfcl_status sm_attach_save(void *state, pbfcl_state_write_fn put, void *ctx)
{
    return pbfcl_shape_match_state_save(state, put, ctx); /* rest shapes, poses */
}

static pbfcl_status sm_attach_saved(pbfcl_state_read_fn get, void *ctx, bool *any)
{
    size_t bodies = 0;
    PBFCL_TRY(pbfcl_shape_match_state_count(get, ctx, &bodies));
    *any = bodies > 0;
    return PBFCL_OK;
}

static pbfcl_status sm_attach_load(void *state, pbfcl_state_read_fn get, void *ctx)
{
    return pbfcl_shape_match_state_load(state, get, ctx);
}

static pbfcl_status sm_attach_remap_ids(void *state, const unsigned *new_id)
{
    return pbfcl_shape_match_remap_ids(state, new_id);
}

const pbfcl_attachment pbfcl_shape_match_attachment = {
    .name = "bodies",
    .uses_slots = true, /* the entries' slots */
    .create = sm_attach_create,
    .destroy = sm_attach_destroy,
    .save = sm_attach_save,
    .saved = sm_attach_saved,
    .load = sm_attach_load,
    .remap_ids = sm_attach_remap_ids,
};

pbfcl_status pbfcl_shape_match_read_rest(pbfcl_shape_match *sm, unsigned *id, unsigned *body,
                                         float *rest3)
{
    size_t m = sm->entries;
    if (m == 0)
        return PBFCL_OK;
    if (id)
        memcpy(id, sm->entry_id, m * sizeof *id);
    if (body)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(sm->cl->queue, sm->entry_body_buf, CL_TRUE, 0, m * 4,
                                           body, 0, NULL, NULL));
    if (!rest3)
        return PBFCL_OK;
    cl_float4 *r = malloc(m * sizeof *r);
    if (!r)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err =
        clEnqueueReadBuffer(sm->cl->queue, sm->rest_buf, CL_TRUE, 0, m * 16, r, 0, NULL, NULL);
    for (size_t e = 0; err == CL_SUCCESS && e < m; e++)
        for (int a = 0; a < 3; a++)
            rest3[3 * e + a] = r[e].s[a];
    free(r);
    PBFCL_CL_CHECK(err);
    return PBFCL_OK;
}
