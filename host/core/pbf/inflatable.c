/* The inflatable constraint kind (inflatable.h): its kernels, the inflatables on the host and
 * the device (triangles and vertices padded to whole work-groups per inflatable, each vertex's
 * triangles), the projection (the distance kind's id-to-slot map, or distance_slots in the
 * first iteration of a substep without distance constraints; then inflatable_volume, _normals,
 * _lambda, _move) and the checkpoints' sections. */
#include "pbf/inflatable.h"

#include "pbf/constraint.h"
#include "scene/cloth_cook.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_INFLATABLE                                                                              \
    0xffffffffu /* PBFCL_NO_INFLATABLE of cl/pbf/inflatable.cl: a padding slot                     \
                 */

typedef struct inflatable_state {
    cl_kernel slots, volume, normals, lambda, move;
    size_t count, triangles;      /* inflatables, their triangles */
    unsigned *tri_count;          /* host copy: triangles per inflatable */
    unsigned *tri;                /* host copy: 3 ids per triangle */
    cl_float4 *param;             /* host copy: (rest volume, pressure, compliance, 0) */
    size_t tri_slots, vert_slots; /* padded to whole work-groups per inflatable */
    cl_mem tri_buf;               /* uint4 per triangle slot: ids a, b, c, inflatable */
    cl_mem ref_buf;               /* uint per inflatable: its reference particle's id */
    cl_mem range_buf;             /* uint4 per inflatable: its groups (triangles, vertices) */
    cl_mem param_buf;             /* float4 per inflatable: (V1, compliance, 0, 0) */
    cl_mem vert_buf;              /* uint2 per vertex slot: id, inflatable */
    cl_mem voffset_buf, vtri_buf; /* uint: each vertex slot's triangle slots */
    cl_mem grad_buf, vgrad_buf;   /* float4 per triangle slot, per vertex slot */
    cl_mem vol_partial_buf;       /* float per triangle group */
    cl_mem den_partial_buf;       /* float per vertex group */
    cl_mem lambda_buf, state_buf; /* float, float4 (V, dlambda, lambda, D) per inflatable */
    cl_mem slot_buf;              /* uint per id: its slot after the sort (no distances) */
} inflatable_state;

static void release_inflatables(inflatable_state *d)
{
    free(d->tri_count);
    free(d->tri);
    free(d->param);
    d->tri_count = d->tri = NULL;
    d->param = NULL;
    d->count = d->triangles = d->tri_slots = d->vert_slots = 0;
    cl_mem *bufs[] = {&d->tri_buf,   &d->ref_buf,         &d->range_buf,       &d->param_buf,
                      &d->vert_buf,  &d->voffset_buf,     &d->vtri_buf,        &d->grad_buf,
                      &d->vgrad_buf, &d->vol_partial_buf, &d->den_partial_buf, &d->lambda_buf,
                      &d->state_buf, &d->slot_buf};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        pbfcl_cl_release_buffer(bufs[k]);
}

/* Makes kernel name and checks it at the work-group size with a float per work-item of local
 * memory. */
static pbfcl_status group_kernel(const pbfcl_sim_view *v, cl_program program, const char *name,
                                 cl_kernel *out)
{
    PBFCL_TRY(pbfcl_cl_kernel(program, name, out));
    return pbfcl_cl_check_launch(v->cl, *out, name, v->wg, v->wg * sizeof(cl_float));
}

static pbfcl_status inflatable_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    inflatable_state *d = calloc(1, sizeof *d);
    if (!(*state = d))
        return PBFCL_ERR_OUT_OF_MEMORY;
    /* the same map as the distance kind's, launched only without distance constraints */
    PBFCL_TRY(pbf_kernel(v, program, "distance_slots", &d->slots));
    PBFCL_TRY(group_kernel(v, program, "inflatable_volume", &d->volume));
    PBFCL_TRY(group_kernel(v, program, "inflatable_normals", &d->normals));
    PBFCL_TRY(pbf_kernel(v, program, "inflatable_lambda", &d->lambda));
    return pbf_kernel(v, program, "inflatable_move", &d->move);
}

static void inflatable_destroy(void *state)
{
    inflatable_state *d = state;
    cl_kernel k[] = {d->slots, d->volume, d->normals, d->lambda, d->move};
    for (int i = 0; i < 5; i++)
        if (k[i])
            clReleaseKernel(k[i]);
    release_inflatables(d);
    free(d);
}

static inflatable_state *inflatable_of(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    return pbf_constraint_state(pbf_view(sim, v), &pbf_inflatable_constraint);
}

/* Checks inflatable k's numbers; says what is wrong and the fix. */
static pbfcl_status check_numbers(size_t k, float rest, float pressure, float compliance)
{
    if (!isfinite(rest) || !(rest > 0.0f)) {
        pbfcl_errorf("inflatable %zu has rest volume %g; give the volume its mesh encloses at "
                     "rest, finite and > 0 m^3",
                     k, (double)rest);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!isfinite(pressure) || !(pressure > 0.0f)) {
        pbfcl_errorf("inflatable %zu has pressure %g; give a finite pressure > 0 (1: it holds its "
                     "rest volume)",
                     k, (double)pressure);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!isfinite(compliance) || compliance < 0.0f) {
        pbfcl_errorf("inflatable %zu has compliance %g; give a finite compliance >= 0 m^3/Pa (0: "
                     "it keeps its volume)",
                     k, (double)compliance);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* Checks the triangles of inflatable k (nt from tri) against n particles and owner (per id:
 * the inflatable it belongs to, or NO_INFLATABLE; marked here). */
static pbfcl_status check_triangles(size_t k, const unsigned *tri, size_t nt, size_t n,
                                    unsigned *owner)
{
    char name[40];
    snprintf(name, sizeof name, "inflatable %zu", k);
    for (size_t t = 0; t < nt; t++) {
        const unsigned *q = tri + 3 * t;
        if (q[0] >= n || q[1] >= n || q[2] >= n || q[0] == q[1] || q[1] == q[2] || q[0] == q[2]) {
            pbfcl_errorf("%s: triangle %zu (%u, %u, %u) needs three different particles below "
                         "the count, %zu; fix its indices",
                         name, t, q[0], q[1], q[2], n);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        for (int s = 0; s < 3; s++) {
            if (owner[q[s]] != NO_INFLATABLE && owner[q[s]] != (unsigned)k) {
                pbfcl_errorf("%s: triangle %zu names particle %u, a vertex of inflatable %u too; "
                             "give each inflatable particles of its own",
                             name, t, q[s], owner[q[s]]);
                return PBFCL_ERR_BAD_ARGUMENT;
            }
            owner[q[s]] = (unsigned)k;
        }
    }
    return pbfcl_cook_check_closed(name, tri, nt);
}

/* Uploads bytes of data (NULL: zeros) into a new buffer *buf. */
static pbfcl_status upload(const pbfcl_sim_view *v, size_t bytes, const void *data,
                           const char *what, cl_mem *buf)
{
    PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, bytes, what, buf));
    if (!data)
        return pbfcl_cl_write_zeros(v->cl, *buf, bytes);
    if (bytes)
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(v->cl->queue, *buf, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
    return PBFCL_OK;
}

/* The host tables of the device layout, made by layout() and freed by free_layout(). */
typedef struct layout {
    cl_uint4 *tri, *range;
    cl_uint2 *vert;
    unsigned *ref, *voffset, *vtri, *vslot; /* vslot: per id, its vertex slot */
    cl_float4 *param;
} layout;

static void free_layout(layout *l)
{
    free(l->tri);
    free(l->range);
    free(l->vert);
    free(l->ref);
    free(l->voffset);
    free(l->vtri);
    free(l->vslot);
    free(l->param);
}

static size_t groups_of(size_t items, size_t wg)
{
    return (items + wg - 1) / wg;
}

static int id_order(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* The vertex slots of inflatable k (its triangles tri, nt) from slot *vs on: its particles in
 * increasing id order (vslot[id] their slots), then padding to a whole group; ids is scratch of
 * 3 nt. */
static void layout_vertices(layout *l, unsigned k, const unsigned *tri, size_t nt, size_t wg,
                            unsigned *ids, size_t *vs)
{
    size_t first = *vs;
    memcpy(ids, tri, 3 * nt * sizeof *ids);
    qsort(ids, 3 * nt, sizeof *ids, id_order);
    for (size_t j = 0; j < 3 * nt; j++)
        if (j == 0 || ids[j] != ids[j - 1]) {
            l->vslot[ids[j]] = (unsigned)*vs;
            l->vert[(*vs)++] = (cl_uint2){{ids[j], k}};
        }
    size_t groups = groups_of(*vs - first, wg);
    while (*vs < first + groups * wg)
        l->vert[(*vs)++] = (cl_uint2){{0, NO_INFLATABLE}};
    l->range[k].s[2] = (cl_uint)(first / wg);
    l->range[k].s[3] = (cl_uint)groups;
}

/* The triangle slots of inflatable k (tri, nt) from *ts on, then padding to a whole group. */
static void layout_triangles(layout *l, unsigned k, const unsigned *tri, size_t nt, size_t wg,
                             size_t *ts)
{
    size_t first = *ts, groups = groups_of(nt, wg);
    l->range[k].s[0] = (cl_uint)(first / wg);
    l->range[k].s[1] = (cl_uint)groups;
    for (size_t t = 0; t < nt; t++)
        l->tri[(*ts)++] = (cl_uint4){{tri[3 * t], tri[3 * t + 1], tri[3 * t + 2], k}};
    while (*ts < first + groups * wg)
        l->tri[(*ts)++] = (cl_uint4){{0, 0, 0, NO_INFLATABLE}};
}

/* Each vertex slot's triangle slots: voffset (vs + 1) and vtri, from the triangle slots. */
static void layout_lists(layout *l, size_t ts, size_t vs)
{
    memset(l->voffset, 0, (vs + 1) * sizeof *l->voffset);
    for (size_t s = 0; s < ts; s++)
        for (int c = 0; c < 3 && l->tri[s].s[3] != NO_INFLATABLE; c++)
            l->voffset[l->vslot[l->tri[s].s[c]] + 1]++;
    for (size_t v = 0; v < vs; v++)
        l->voffset[v + 1] += l->voffset[v];
    for (size_t s = 0; s < ts; s++) /* each list filled from its end, in slot order */
        for (int c = 0; c < 3 && l->tri[s].s[3] != NO_INFLATABLE; c++)
            l->vtri[l->voffset[l->vslot[l->tri[s].s[c]]]++] = (unsigned)s;
    for (size_t v = vs; v > 0; v--) /* each offset moved to its list's end: shift back */
        l->voffset[v] = l->voffset[v - 1];
    l->voffset[0] = 0;
}

/* Every table of d's inflatables for work-group size wg and ids particle ids; *ts, *vs the
 * triangle and vertex slots. */
static pbfcl_status layout_make(const inflatable_state *d, size_t wg, size_t ids, layout *l,
                                size_t *ts, size_t *vs)
{
    memset(l, 0, sizeof *l);
    size_t most_t = 0, most_v = 0, largest = 0;
    for (size_t k = 0; k < d->count; k++) {
        most_t += groups_of(d->tri_count[k], wg) * wg;
        most_v += groups_of(3 * (size_t)d->tri_count[k], wg) * wg; /* at most 3 per triangle */
        largest = d->tri_count[k] > largest ? d->tri_count[k] : largest;
    }
    l->tri = malloc(most_t * sizeof *l->tri + 1);
    l->range = malloc(d->count * sizeof *l->range + 1);
    l->vert = malloc(most_v * sizeof *l->vert + 1);
    l->ref = malloc(d->count * sizeof *l->ref + 1);
    l->voffset = malloc((most_v + 1) * sizeof *l->voffset);
    l->vtri = malloc(3 * d->triangles * sizeof *l->vtri + 1);
    l->vslot = malloc(ids * sizeof *l->vslot + 1);
    l->param = malloc(d->count * sizeof *l->param + 1);
    unsigned *scratch = malloc(3 * largest * sizeof *scratch + 1);
    if (!l->tri || !l->range || !l->vert || !l->ref || !l->voffset || !l->vtri || !l->vslot ||
        !l->param || !scratch) {
        free(scratch);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    *ts = *vs = 0;
    const unsigned *tri = d->tri;
    for (unsigned k = 0; k < d->count; k++) {
        size_t nt = d->tri_count[k];
        const cl_float4 *p = &d->param[k];
        l->ref[k] = tri[0];
        l->param[k] = (cl_float4){{p->s[0] * p->s[1], p->s[2], 0.0f, 0.0f}};
        layout_triangles(l, k, tri, nt, wg, ts);
        layout_vertices(l, k, tri, nt, wg, scratch, vs);
        tri += 3 * nt;
    }
    free(scratch);
    layout_lists(l, *ts, *vs);
    return PBFCL_OK;
}

/* The device buffers of d's inflatables (host copies set). */
static pbfcl_status make_buffers(const pbfcl_sim_view *v, inflatable_state *d)
{
    layout l;
    size_t ts = 0, vs = 0, wg = v->wg, k = d->count;
    pbfcl_status st = layout_make(d, wg, v->capacity, &l, &ts, &vs);
    d->tri_slots = ts;
    d->vert_slots = vs;
    struct {
        size_t bytes;
        const void *data;
        const char *what;
        cl_mem *buf;
    } rows[] = {
        {ts * 16, l.tri, "inflatable triangles", &d->tri_buf},
        {k * 4, l.ref, "inflatable references", &d->ref_buf},
        {k * 16, l.range, "inflatable groups", &d->range_buf},
        {k * 16, l.param, "inflatable parameters", &d->param_buf},
        {vs * 8, l.vert, "inflatable vertices", &d->vert_buf},
        {(vs + 1) * 4, l.voffset, "inflatable vertex lists", &d->voffset_buf},
        {3 * d->triangles * 4, l.vtri, "inflatable vertex list entries", &d->vtri_buf},
        {ts * 16, NULL, "inflatable triangle gradients", &d->grad_buf},
        {vs * 16, NULL, "inflatable vertex gradients", &d->vgrad_buf},
        {ts / wg * 4, NULL, "inflatable volume partials", &d->vol_partial_buf},
        {vs / wg * 4, NULL, "inflatable denominator partials", &d->den_partial_buf},
        {k * 4, NULL, "inflatable multipliers", &d->lambda_buf},
        {k * 16, NULL, "inflatable states", &d->state_buf},
        {v->capacity * 4, NULL, "inflatable slots", &d->slot_buf},
    };
    for (size_t r = 0; st == PBFCL_OK && r < sizeof rows / sizeof rows[0]; r++)
        st = upload(v, rows[r].bytes, rows[r].data, rows[r].what, rows[r].buf);
    free_layout(&l);
    return st;
}

/* Replaces d's inflatables by the checked ones (the arrays taken over). */
static pbfcl_status adopt(const pbfcl_sim_view *v, inflatable_state *d, size_t count,
                          unsigned *tri_count, unsigned *tri, cl_float4 *param)
{
    PBFCL_CL_CHECK(clFinish(v->cl->queue));
    release_inflatables(d);
    d->tri_count = tri_count;
    d->tri = tri;
    d->param = param;
    d->count = count;
    for (size_t k = 0; k < count; k++)
        d->triangles += tri_count[k];
    if (count == 0)
        return PBFCL_OK;
    pbfcl_status st = make_buffers(v, d);
    if (st != PBFCL_OK)
        release_inflatables(d);
    return st;
}

/* Checks count inflatables (tri_count, tri, params as (rest, pressure, compliance, 0)) against
 * n particles of ids capacity. */
static pbfcl_status check_all(size_t count, const unsigned *tri_count, const unsigned *tri,
                              const cl_float4 *param, size_t n, size_t capacity)
{
    unsigned *owner = malloc(capacity * sizeof *owner + 1);
    if (!owner)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < capacity; i++)
        owner[i] = NO_INFLATABLE;
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; st == PBFCL_OK && k < count; k++) {
        st = check_numbers(k, param[k].s[0], param[k].s[1], param[k].s[2]);
        if (st == PBFCL_OK)
            st = check_triangles(k, tri, tri_count[k], n, owner);
        tri += 3 * (size_t)tri_count[k];
    }
    free(owner);
    return st;
}

/* Copies of the arrays for adopt(); NULL on failure (all freed). */
static pbfcl_status copy_all(size_t count, size_t triangles, unsigned **tc, unsigned **tri,
                             cl_float4 **param)
{
    *tc = malloc(count * sizeof **tc + 1);
    *tri = malloc(3 * triangles * sizeof **tri + 1);
    *param = malloc(count * sizeof **param + 1);
    if (*tc && *tri && *param)
        return PBFCL_OK;
    free(*tc);
    free(*tri);
    free(*param);
    return PBFCL_ERR_OUT_OF_MEMORY;
}

pbfcl_status pbfcl_pbf_set_inflatables(pbfcl_sim *sim, size_t count, const unsigned *tri_count,
                                       const unsigned *tri, const float *rest,
                                       const float *pressure, const float *compliance)
{
    pbfcl_sim_view v;
    inflatable_state *d = inflatable_of(sim, &v);
    if (count > 0 && (!tri_count || !tri || !rest || !pressure || !compliance)) {
        pbfcl_errorf("inflatables: triangle counts, triangles, rest volumes, pressures and "
                     "compliances must not be NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    size_t triangles = 0;
    for (size_t k = 0; k < count; k++) {
        if (tri_count[k] < 4 || tri_count[k] > UINT32_MAX / 4) {
            pbfcl_errorf("inflatable %zu has %u triangles; a closed mesh has at least 4 (and at "
                         "most %u here): give its whole surface",
                         k, tri_count[k], UINT32_MAX / 4);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        triangles += tri_count[k];
    }
    unsigned *tc, *t;
    cl_float4 *param;
    PBFCL_TRY(copy_all(count, triangles, &tc, &t, &param));
    for (size_t k = 0; k < count; k++)
        param[k] = (cl_float4){{rest[k], pressure[k], compliance[k], 0.0f}};
    if (count) {
        memcpy(tc, tri_count, count * sizeof *tc);
        memcpy(t, tri, 3 * triangles * sizeof *t);
    }
    pbfcl_status st = check_all(count, tc, t, param, v.n, v.capacity);
    if (st != PBFCL_OK) {
        free(tc);
        free(t);
        free(param);
        return st;
    }
    return adopt(&v, d, count, tc, t, param);
}

void pbfcl_pbf_inflatable_count(pbfcl_sim *sim, size_t *count, size_t *triangles)
{
    pbfcl_sim_view v;
    inflatable_state *d = inflatable_of(sim, &v);
    if (count)
        *count = d->count;
    if (triangles)
        *triangles = d->triangles;
}

pbfcl_status pbfcl_pbf_get_inflatables(pbfcl_sim *sim, unsigned *tri_count, unsigned *tri,
                                       float *rest, float *pressure, float *compliance)
{
    pbfcl_sim_view v;
    inflatable_state *d = inflatable_of(sim, &v);
    if (tri_count && d->count)
        memcpy(tri_count, d->tri_count, d->count * sizeof *tri_count);
    if (tri && d->triangles)
        memcpy(tri, d->tri, 3 * d->triangles * sizeof *tri);
    for (size_t k = 0; k < d->count; k++) {
        if (rest)
            rest[k] = d->param[k].s[0];
        if (pressure)
            pressure[k] = d->param[k].s[1];
        if (compliance)
            compliance[k] = d->param[k].s[2];
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_read_inflatables(pbfcl_sim *sim, float *volume, float *gauge)
{
    pbfcl_sim_view v;
    inflatable_state *d = inflatable_of(sim, &v);
    if (d->count == 0)
        return PBFCL_OK;
    cl_float4 *s = malloc(d->count * sizeof *s);
    if (!s)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = clEnqueueReadBuffer(v.cl->queue, d->state_buf, CL_TRUE, 0, d->count * sizeof *s, s,
                                     0, NULL, NULL);
    float inv_dt2 = v.params->inv_dt * v.params->inv_dt;
    for (size_t k = 0; err == CL_SUCCESS && k < d->count; k++) {
        if (volume)
            volume[k] = s[k].s[0];
        if (gauge)
            gauge[k] = s[k].s[2] * inv_dt2;
    }
    free(s);
    PBFCL_CL_CHECK(err);
    return PBFCL_OK;
}

/* Launches k over items in work-groups of wg with a float per work-item of local memory at
 * argument local_arg. */
static pbfcl_status launch_groups(const pbfcl_sim_view *v, cl_kernel k, cl_uint local_arg,
                                  size_t items, pbfcl_profile *prof)
{
    PBFCL_CL_CHECK(clSetKernelArg(k, local_arg, v->wg * sizeof(cl_float), NULL));
    return pbfcl_cl_launch(v->cl, k, items, v->wg, prof, PBFCL_STAGE_SOLVE);
}

/* One projection: the slots of the ids (first iteration of a substep, after the sort), the
 * volumes, the vertices' gradients, the multipliers and the moves. */
static pbfcl_status inflatable_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    inflatable_state *d = state;
    if (d->count == 0)
        return PBFCL_OK; /* a scene without inflatables launches nothing */
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    cl_uint n = (cl_uint)v.n, count = (cl_uint)d->count, first = it == 0;
    cl_uint ts = (cl_uint)d->tri_slots, vs = (cl_uint)d->vert_slots;
    /* The map is slot[id] of every particle, whatever kind reads it: with distance constraints
     * (a balloon's membrane) the distance kind, projected before this one (constraints.c), has
     * mapped the ids in this iteration already, and its map is read; without, this kind maps. */
    cl_mem slot = pbf_distance_slots(ps);
    if (!slot && first) {
        PBF_ARG(d->slots, 0, n);
        PBF_ARG(d->slots, 1, v.id_buf);
        PBF_ARG(d->slots, 2, d->slot_buf);
        PBFCL_TRY(pbf_launch(&v, d->slots, prof, PBFCL_STAGE_SOLVE));
    }
    if (!slot)
        slot = d->slot_buf;
    cl_kernel k = d->volume;
    cl_mem va[] = {d->tri_buf, d->ref_buf, slot, *v.pred, d->grad_buf, d->vol_partial_buf};
    PBF_ARG(k, 0, ts);
    for (cl_uint a = 0; a < 6; a++)
        PBF_ARG(k, 1 + a, va[a]);
    PBFCL_TRY(launch_groups(&v, k, 7, ts, prof));
    k = d->normals;
    cl_mem na[] = {d->vert_buf, d->voffset_buf, d->vtri_buf,  d->grad_buf,
                   slot,        v.inv_mass_buf, d->vgrad_buf, d->den_partial_buf};
    PBF_ARG(k, 0, v.params_buf);
    PBF_ARG(k, 1, vs);
    for (cl_uint a = 0; a < 8; a++)
        PBF_ARG(k, 2 + a, na[a]);
    PBFCL_TRY(launch_groups(&v, k, 10, vs, prof));
    k = d->lambda;
    cl_mem la[] = {d->range_buf,       d->param_buf,  d->vol_partial_buf,
                   d->den_partial_buf, d->lambda_buf, d->state_buf};
    PBF_ARG(k, 0, v.params_buf);
    PBF_ARG(k, 1, count);
    PBF_ARG(k, 2, first);
    for (cl_uint a = 0; a < 6; a++)
        PBF_ARG(k, 3 + a, la[a]);
    PBFCL_TRY(pbfcl_cl_launch(v.cl, k, d->count, v.wg, prof, PBFCL_STAGE_SOLVE));
    k = d->move;
    cl_mem ma[] = {d->vert_buf, d->vgrad_buf, d->state_buf, slot, *v.pred};
    PBF_ARG(k, 0, v.params_buf);
    PBF_ARG(k, 1, vs);
    for (cl_uint a = 0; a < 5; a++)
        PBF_ARG(k, 2 + a, ma[a]);
    return pbfcl_cl_launch(v.cl, k, vs, v.wg, prof, PBFCL_STAGE_SOLVE);
}

const pbf_constraint_kind pbf_inflatable_constraint = {
    .name = "inflatable",
    .pass = PBF_PASS_POSITIONS,
    .create = inflatable_create,
    .destroy = inflatable_destroy,
    .project = inflatable_project,
};

/* ---- checkpoints -------------------------------------------------------------------------- */

pbfcl_status pbfcl_pbf_inflatable_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx)
{
    pbfcl_sim_view v;
    inflatable_state *d = inflatable_of(sim, &v);
    cl_ulong count = d->count;
    PBFCL_TRY(put(ctx, "inflatables", &count, sizeof count));
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(put(ctx, "inflatable_triangle_counts", d->tri_count, d->count * 4));
    PBFCL_TRY(put(ctx, "inflatable_triangles", d->tri, d->triangles * 12));
    return put(ctx, "inflatable_params", d->param, d->count * 16);
}

pbfcl_status pbfcl_pbf_inflatable_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx)
{
    pbfcl_sim_view v;
    inflatable_state *d = inflatable_of(sim, &v);
    cl_ulong count;
    PBFCL_TRY(get(ctx, "inflatables", &count, sizeof count));
    if (count > v.capacity) {
        pbfcl_errorf("the saved inflatables are damaged: %llu of them for %zu particles",
                     (unsigned long long)count, v.capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    unsigned *tc = malloc((size_t)count * 4 + 1);
    if (!tc)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st =
        count ? get(ctx, "inflatable_triangle_counts", tc, (size_t)count * 4) : PBFCL_OK;
    size_t triangles = 0;
    for (size_t k = 0; st == PBFCL_OK && k < count; k++) {
        triangles += tc[k];
        if (tc[k] < 4 || triangles > 4 * v.capacity) {
            pbfcl_errorf("the saved inflatables are damaged: inflatable %zu has %u triangles", k,
                         tc[k]);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    unsigned *tcc = NULL, *tri = NULL;
    cl_float4 *param = NULL;
    if (st == PBFCL_OK)
        st = copy_all((size_t)count, triangles, &tcc, &tri, &param);
    if (st == PBFCL_OK && count) {
        memcpy(tcc, tc, (size_t)count * 4);
        st = get(ctx, "inflatable_triangles", tri, triangles * 12);
        if (st == PBFCL_OK)
            st = get(ctx, "inflatable_params", param, (size_t)count * 16);
        if (st == PBFCL_OK)
            st = check_all((size_t)count, tcc, tri, param, v.n, v.capacity);
    }
    free(tc);
    if (st != PBFCL_OK) {
        free(tcc);
        free(tri);
        free(param);
        return st;
    }
    return adopt(&v, d, (size_t)count, tcc, tri, param);
}
