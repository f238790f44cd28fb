/* The wind on cloth (wind.h): its kernels, the triangles on the host and the device, the
 * per-particle lists that let each particle gather its triangles' forces, and the force stage
 * before predict: wind_slots (the ids' slots), wind_triangles over the triangles,
 * wind_gather over the particles. */
#include "pbf/wind.h"

#include "pbf/constraint.h"

#include <stdlib.h>
#include <string.h>

typedef struct wind_state {
    cl_kernel slots, triangles, gather;
    size_t count;      /* triangles */
    unsigned *tri;     /* host copy: 3 ids per triangle */
    cl_mem tri_buf;    /* uint4 per triangle: its ids, w = 0 */
    cl_mem offset_buf; /* uint per id (ids + 1): the first entry of the id's list */
    cl_mem entry_buf;  /* uint per (triangle, corner): the triangle, grouped by id */
    cl_mem slot_buf;   /* uint per id: its slot now */
    cl_mem force_buf;  /* float4 per triangle: its force of the last stage with wind, N */
    int forced;        /* force_buf holds a stage's forces */
} wind_state;

static void release_triangles(wind_state *w)
{
    free(w->tri);
    w->tri = NULL;
    w->count = 0;
    w->forced = 0;
    cl_mem *bufs[] = {&w->tri_buf, &w->offset_buf, &w->entry_buf, &w->slot_buf, &w->force_buf};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        pbfcl_cl_release_buffer(bufs[k]);
}

static pbfcl_status wind_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    wind_state *w = calloc(1, sizeof *w);
    if (!(*state = w))
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(pbf_kernel(v, program, "wind_slots", &w->slots));
    PBFCL_TRY(pbf_kernel(v, program, "wind_triangles", &w->triangles));
    return pbf_kernel(v, program, "wind_gather", &w->gather);
}

static void wind_destroy(void *state)
{
    wind_state *w = state;
    cl_kernel k[] = {w->slots, w->triangles, w->gather};
    for (int i = 0; i < 3; i++)
        if (k[i])
            clReleaseKernel(k[i]);
    release_triangles(w);
    free(w);
}

static wind_state *wind_of(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    return pbf_constraint_state(pbf_view(sim, v), &pbf_wind_force);
}

/* The per-particle lists of count triangles over ids below ids: offset (ids + 1 entries) and
 * entry (3 count: the triangle, grouped by id, in triangle order within an id). */
static void build_lists(size_t count, const unsigned *tri, size_t ids, unsigned *offset,
                        unsigned *entry)
{
    memset(offset, 0, (ids + 1) * sizeof *offset);
    for (size_t k = 0; k < 3 * count; k++)
        offset[tri[k] + 1]++;
    for (size_t i = 0; i < ids; i++)
        offset[i + 1] += offset[i];
    for (size_t k = 0; k < 3 * count; k++) /* k = triangle * 3 + corner */
        entry[offset[tri[k]]++] = (unsigned)(k / 3);
    for (size_t i = ids; i > 0; i--) /* each offset moved to its list's end: shift back */
        offset[i] = offset[i - 1];
    offset[0] = 0;
}

/* Makes buffer *buf of bytes from data (NULL: zeros). */
static pbfcl_status upload(const pbfcl_sim_view *v, size_t bytes, const void *data,
                           const char *what, cl_mem *buf)
{
    PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, bytes, what, buf));
    if (!data)
        return pbfcl_cl_write_zeros(v->cl, *buf, bytes);
    PBFCL_CL_CHECK(
        clEnqueueWriteBuffer(v->cl->queue, *buf, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
    return PBFCL_OK;
}

/* The device buffers of w's triangles (host copy set). */
static pbfcl_status make_buffers(const pbfcl_sim_view *v, wind_state *w)
{
    size_t ids = v->capacity, count = w->count;
    unsigned *offset = malloc((ids + 1) * sizeof *offset), *entry = malloc(3 * count * 4 + 4);
    cl_uint4 *quad = malloc(count * sizeof *quad + 1);
    pbfcl_status st = offset && entry && quad ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK) {
        build_lists(count, w->tri, ids, offset, entry);
        for (size_t t = 0; t < count; t++)
            quad[t] = (cl_uint4){{w->tri[3 * t], w->tri[3 * t + 1], w->tri[3 * t + 2], 0}};
        st = upload(v, (ids + 1) * 4, offset, "wind lists", &w->offset_buf);
    }
    if (st == PBFCL_OK)
        st = upload(v, 3 * count * 4, entry, "wind list entries", &w->entry_buf);
    if (st == PBFCL_OK)
        st = upload(v, count * 16, quad, "wind triangles", &w->tri_buf);
    free(offset);
    free(entry);
    free(quad);
    PBFCL_TRY(st);
    PBFCL_TRY(upload(v, ids * 4, NULL, "wind slots", &w->slot_buf));
    return upload(v, count * 16, NULL, "wind forces", &w->force_buf);
}

pbfcl_status pbfcl_pbf_set_triangles(pbfcl_sim *sim, size_t count, const unsigned *tri)
{
    pbfcl_sim_view v;
    wind_state *w = wind_of(sim, &v);
    if (count > 0 && !tri) {
        pbfcl_errorf("wind triangles: tri must not be NULL (or give count 0)");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (count > UINT32_MAX / 3) {
        pbfcl_errorf("%zu triangles are more than the %u the wind's lists can hold", count,
                     UINT32_MAX / 3);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t t = 0; t < count; t++) {
        const unsigned *a = tri + 3 * t;
        if (a[0] >= v.n || a[1] >= v.n || a[2] >= v.n || a[0] == a[1] || a[1] == a[2] ||
            a[0] == a[2]) {
            pbfcl_errorf("triangle %zu (particles %u, %u, %u of %zu) %s", t, a[0], a[1], a[2], v.n,
                         a[0] >= v.n || a[1] >= v.n || a[2] >= v.n
                             ? "names a particle beyond the count: give ids below it"
                             : "names a particle twice: give three different particles");
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    unsigned *copy = malloc(3 * count * sizeof *copy + 1);
    if (!copy)
        return PBFCL_ERR_OUT_OF_MEMORY;
    if (count)
        memcpy(copy, tri, 3 * count * sizeof *copy);
    PBFCL_CL_CHECK(clFinish(v.cl->queue));
    release_triangles(w);
    w->tri = copy;
    w->count = count;
    if (count == 0)
        return PBFCL_OK;
    pbfcl_status st = make_buffers(&v, w);
    if (st != PBFCL_OK)
        release_triangles(w);
    return st;
}

size_t pbfcl_pbf_triangle_count(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    return wind_of(sim, &v)->count;
}

void pbfcl_pbf_get_triangles(pbfcl_sim *sim, unsigned *tri)
{
    pbfcl_sim_view v;
    wind_state *w = wind_of(sim, &v);
    if (w->count)
        memcpy(tri, w->tri, 3 * w->count * sizeof *tri);
}

pbfcl_status pbfcl_pbf_wind_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx)
{
    pbfcl_sim_view v;
    wind_state *w = wind_of(sim, &v);
    cl_ulong count = w->count;
    PBFCL_TRY(put(ctx, "triangles", &count, sizeof count));
    return count ? put(ctx, "triangle_ids", w->tri, w->count * 12) : PBFCL_OK;
}

pbfcl_status pbfcl_pbf_wind_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx)
{
    cl_ulong count;
    PBFCL_TRY(get(ctx, "triangles", &count, sizeof count));
    if (count > UINT32_MAX / 3) {
        pbfcl_errorf("the saved triangles are damaged: %llu of them", (unsigned long long)count);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    unsigned *tri = malloc((size_t)count * 12 + 1);
    pbfcl_status st = tri ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && count)
        st = get(ctx, "triangle_ids", tri, (size_t)count * 12);
    if (st == PBFCL_OK)
        st = pbfcl_pbf_set_triangles(sim, (size_t)count, tri);
    free(tri);
    return st;
}

pbfcl_status pbfcl_pbf_read_wind_forces(pbfcl_sim *sim, float *force3)
{
    pbfcl_sim_view v;
    wind_state *w = wind_of(sim, &v);
    if (!w->forced) {
        memset(force3, 0, 3 * w->count * sizeof *force3);
        return PBFCL_OK;
    }
    cl_float4 *f = malloc(w->count * sizeof *f + 1);
    if (!f)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err =
        clEnqueueReadBuffer(v.cl->queue, w->force_buf, CL_TRUE, 0, w->count * 16, f, 0, NULL, NULL);
    for (size_t t = 0; err == CL_SUCCESS && t < w->count; t++)
        memcpy(force3 + 3 * t, f[t].s, 3 * sizeof *force3);
    free(f);
    PBFCL_CL_CHECK(err);
    return PBFCL_OK;
}

/* The force stage (it is 0): the slots of the ids, each triangle's force, each particle's
 * velocity change from its triangles'. */
static pbfcl_status wind_apply(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    (void)it;
    wind_state *w = state;
    pbfcl_sim_view v;
    pbf_view(sim, &v);
    const pbfcl_solver_settings *s = &v.scene->solver;
    if (w->count == 0 || (s->drag == 0.0f && s->lift == 0.0f))
        return PBFCL_OK; /* nothing launched without triangles or without air */
    cl_uint n = (cl_uint)v.n, count = (cl_uint)w->count;
    PBF_ARG(w->slots, 0, n);
    PBF_ARG(w->slots, 1, v.id_buf);
    PBF_ARG(w->slots, 2, w->slot_buf);
    PBFCL_TRY(pbf_launch(&v, w->slots, prof, PBFCL_STAGE_PREDICT));
    cl_kernel k = w->triangles;
    cl_float4 wind = {{s->wind_x, s->wind_y, s->wind_z, 0.0f}};
    PBF_ARG(k, 0, count);
    PBF_ARG(k, 1, wind);
    PBF_ARG(k, 2, s->drag);
    PBF_ARG(k, 3, s->lift);
    PBF_ARG(k, 4, w->tri_buf);
    PBF_ARG(k, 5, w->slot_buf);
    PBF_ARG(k, 6, *v.pos);
    PBF_ARG(k, 7, *v.vel);
    PBF_ARG(k, 8, w->force_buf);
    PBFCL_TRY(pbfcl_cl_launch(v.cl, k, w->count, v.wg, prof, PBFCL_STAGE_PREDICT));
    w->forced = 1;
    k = w->gather;
    PBFCL_TRY(pbf_set_head(&v, k));
    PBF_ARG(k, 2, v.id_buf);
    PBF_ARG(k, 3, w->offset_buf);
    PBF_ARG(k, 4, w->entry_buf);
    PBF_ARG(k, 5, w->force_buf);
    PBF_ARG(k, 6, v.inv_mass_buf);
    PBF_ARG(k, 7, *v.vel);
    return pbf_launch(&v, k, prof, PBFCL_STAGE_PREDICT);
}

const pbf_constraint_kind pbf_wind_force = {
    .name = "wind",
    .pass = PBF_PASS_FORCES,
    .create = wind_create,
    .destroy = wind_destroy,
    .project = wind_apply,
};
