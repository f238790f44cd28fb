/* Kinematic obstacles (see kinematic.h): builds cl/kinematic.cl with a work-group size from
 * device queries, keeps the paths and their particles' rest offsets on the device (entries
 * sorted by particle id, which the kernel looks up by bisection), and the paths' clock. */
#include "kinematic.h"

#include "programs.h"

#include <float.h>
#include <math.h>
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

static void kin_release_paths(pbfcl_kinematic *k)
{
    pbfcl_cl_release_buffer(&k->entry_id_buf);
    pbfcl_cl_release_buffer(&k->entry_offset_buf);
    pbfcl_cl_release_buffer(&k->path_buf);
    free(k->entry_id);
    k->entry_id = NULL;
    k->paths = k->entries = 0;
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

/* Checks the paths (finite, stop > 0) and entries (their paths exist). */
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
    k->entry_id = malloc(entries * sizeof *k->entry_id);
    cl_float4 *offset = malloc(entries * sizeof *offset), *p = malloc(paths * 3 * sizeof *p);
    pbfcl_status st = k->entry_id && offset && p ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = kin_sort(entries, entry_id, entry_path, offset3, k->entry_id, offset);
    for (size_t q = 0; st == PBFCL_OK && q < paths; q++) {
        const pbfcl_kinematic_path *a = &path[q];
        float stop = isfinite(a->stop) ? a->stop : FLT_MAX;
        p[3 * q] = (cl_float4){{a->center[0], a->center[1], a->center[2], stop}};
        p[3 * q + 1] = (cl_float4){{a->velocity[0], a->velocity[1], a->velocity[2], 0.0f}};
        p[3 * q + 2] = (cl_float4){
            {a->angular_velocity[0], a->angular_velocity[1], a->angular_velocity[2], 0.0f}};
    }
    cl_mem *bufs[] = {&k->entry_id_buf, &k->entry_offset_buf, &k->path_buf};
    const void *data[] = {k->entry_id, offset, p};
    size_t bytes[] = {entries * 4, entries * 16, paths * 48};
    for (int b = 0; b < 3 && st == PBFCL_OK; b++) {
        st = pbfcl_cl_buffer(k->cl, CL_MEM_READ_ONLY, bytes[b], "kinematic paths", bufs[b]);
        if (st == PBFCL_OK && clEnqueueWriteBuffer(k->cl->queue, *bufs[b], CL_TRUE, 0, bytes[b],
                                                   data[b], 0, NULL, NULL) != CL_SUCCESS) {
            pbfcl_errorf("cannot upload the kinematic paths (%zu bytes)", bytes[b]);
            st = PBFCL_ERR_OPENCL;
        }
    }
    k->paths = paths;
    k->entries = entries;
    free(offset);
    free(p);
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
    KIN_ARG(k->path, 8, pred_buf);
    return pbfcl_cl_launch(k->cl, k->path, n, k->wg, prof, stage);
}
