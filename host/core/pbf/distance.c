/* The distance constraint kind (distance.h): its kernels, the constraints on the host and the
 * device, the per-particle lists that let each particle gather its constraints' steps, and the
 * projection: distance_slots (the first iteration of a substep), distance_project over the
 * constraints, distance_gather over the particles. */
#include "pbf/distance.h"

#include "pbf/constraint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct distance_state {
    cl_kernel slots, project, gather;
    size_t count;      /* constraints: the caller's, then the attachments' (attach.c) */
    size_t own;        /* the caller's (pbfcl_pbf_set_distances), the first ones */
    unsigned *pair;    /* host copy: 2 ids per constraint */
    cl_float4 *rest;   /* host copy: (L, compliance, tether, 0) per constraint */
    cl_mem pair_buf;   /* uint2 per constraint */
    cl_mem rest_buf;   /* float4 per constraint */
    cl_mem offset_buf; /* uint per id (capacity + 1): the first entry of the id's list */
    cl_mem n_buf;      /* uint2 per id: its constraints other than tethers, its tethers */
    cl_mem entry_buf;  /* uint per (constraint, side): constraint * 2 + side, by id */
    cl_mem slot_buf;   /* uint per id: its slot after the sort */
    cl_mem lambda_buf; /* float per constraint: the multiplier of this substep */
    cl_mem corr_buf;   /* float4 per constraint: its step per unit inverse mass */
} distance_state;

static void release_constraints(distance_state *d)
{
    free(d->pair);
    free(d->rest);
    d->pair = NULL;
    d->rest = NULL;
    d->count = 0;
    d->own = 0;
    cl_mem *bufs[] = {&d->pair_buf, &d->rest_buf,   &d->offset_buf, &d->entry_buf,
                      &d->slot_buf, &d->lambda_buf, &d->corr_buf,   &d->n_buf};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        pbfcl_cl_release_buffer(bufs[k]);
}

static pbfcl_status distance_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    distance_state *d = calloc(1, sizeof *d);
    if (!(*state = d))
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(pbf_kernel(v, program, "distance_slots", &d->slots));
    PBFCL_TRY(pbf_kernel(v, program, "distance_project", &d->project));
    return pbf_kernel(v, program, "distance_gather", &d->gather);
}

static void distance_destroy(void *state)
{
    distance_state *d = state;
    cl_kernel k[] = {d->slots, d->project, d->gather};
    for (int i = 0; i < 3; i++)
        if (k[i])
            clReleaseKernel(k[i]);
    release_constraints(d);
    free(d);
}

static distance_state *distance_of(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    return pbf_constraint_state(pbf_view(sim, v), &pbf_distance_constraint);
}

/* Checks constraint c; says what is wrong and the fix. */
static pbfcl_status check_constraint(size_t c, const unsigned *pair, float rest, float compliance,
                                     size_t n)
{
    if (pair[0] >= n || pair[1] >= n) {
        pbfcl_errorf("distance constraint %zu joins particles %u and %u, but there are %zu "
                     "particles; give it ids below %zu",
                     c, pair[0], pair[1], n, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (pair[0] == pair[1]) {
        pbfcl_errorf("distance constraint %zu joins particle %u to itself; give it two different "
                     "particles",
                     c, pair[0]);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!isfinite(rest) || rest < 0.0f) {
        pbfcl_errorf("distance constraint %zu has rest length %g; give it a finite length >= 0 m",
                     c, (double)rest);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!isfinite(compliance) || compliance < 0.0f) {
        pbfcl_errorf("distance constraint %zu has compliance %g; give it a finite compliance "
                     ">= 0 m/N (0: rigid)",
                     c, (double)compliance);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* The per-particle lists of count constraints over ids below ids: offset (ids + 1 entries) and
 * entry (2 count: constraint * 2 + side, grouped by id, in constraint order within an id). */
static void build_lists(size_t count, const unsigned *pair, size_t ids, unsigned *offset,
                        unsigned *entry)
{
    memset(offset, 0, (ids + 1) * sizeof *offset);
    for (size_t k = 0; k < 2 * count; k++)
        offset[pair[k] + 1]++;
    for (size_t i = 0; i < ids; i++)
        offset[i + 1] += offset[i];
    for (size_t k = 0; k < 2 * count; k++) /* k = constraint * 2 + side */
        entry[offset[pair[k]]++] = (unsigned)k;
    for (size_t i = ids; i > 0; i--) /* each offset moved to its list's end: shift back */
        offset[i] = offset[i - 1];
    offset[0] = 0;
}

/* n (2 per id): each id's constraints other than tethers, and its tethers. */
static void count_kinds(size_t count, const unsigned *pair, const cl_float4 *rest, size_t ids,
                        unsigned *n)
{
    memset(n, 0, 2 * ids * sizeof *n);
    for (size_t k = 0; k < 2 * count; k++)
        n[2 * pair[k] + (rest[k / 2].s[2] != 0.0f)]++;
}

/* Makes buffer *buf of bytes from data (NULL: uninitialised). */
static pbfcl_status upload(const pbfcl_sim_view *v, size_t bytes, const void *data,
                           const char *what, cl_mem *buf)
{
    PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, bytes, what, buf));
    if (data && bytes)
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(v->cl->queue, *buf, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
    return PBFCL_OK;
}

/* The device buffers of d's constraints (host copies set). */
static pbfcl_status make_buffers(const pbfcl_sim_view *v, distance_state *d)
{
    size_t ids = v->capacity, count = d->count;
    unsigned *offset = malloc((ids + 1) * sizeof *offset), *entry = malloc(2 * count * 4 + 4);
    pbfcl_status st = offset && entry ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK) {
        build_lists(count, d->pair, ids, offset, entry);
        st = upload(v, (ids + 1) * 4, offset, "distance lists", &d->offset_buf);
    }
    if (st == PBFCL_OK)
        st = upload(v, 2 * count * 4, entry, "distance list entries", &d->entry_buf);
    unsigned *kinds = st == PBFCL_OK ? malloc(2 * ids * sizeof *kinds + 1) : NULL;
    if (st == PBFCL_OK && !kinds)
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK) {
        count_kinds(count, d->pair, d->rest, ids, kinds);
        st = upload(v, 2 * ids * 4, kinds, "distance counts", &d->n_buf);
    }
    free(kinds);
    free(offset);
    free(entry);
    PBFCL_TRY(st);
    PBFCL_TRY(upload(v, count * 8, d->pair, "distance pairs", &d->pair_buf));
    PBFCL_TRY(upload(v, count * 16, d->rest, "distance rest values", &d->rest_buf));
    PBFCL_TRY(upload(v, ids * 4, NULL, "distance slots", &d->slot_buf));
    PBFCL_TRY(upload(v, count * 4, NULL, "distance multipliers", &d->lambda_buf));
    return upload(v, count * 16, NULL, "distance steps", &d->corr_buf);
}

/* Replaces d's constraints by the checked pair and rest (taken over), the first own of them the
 * caller's. */
static pbfcl_status adopt(const pbfcl_sim_view *v, distance_state *d, size_t count, size_t own,
                          unsigned *pair, cl_float4 *rest)
{
    PBFCL_CL_CHECK(clFinish(v->cl->queue));
    release_constraints(d);
    d->pair = pair;
    d->rest = rest;
    d->count = count;
    d->own = own;
    if (count == 0)
        return PBFCL_OK;
    pbfcl_status st = make_buffers(v, d);
    if (st != PBFCL_OK)
        release_constraints(d);
    return st;
}

/* Replaces d's constraints: count of pair and rest (the caller's if own, else the
 * attachments'), the other part of the set kept; checked already. */
static pbfcl_status replace_part(const pbfcl_sim_view *v, distance_state *d, bool own, size_t count,
                                 const unsigned *pair, const float *rest, const float *compliance,
                                 const unsigned char *tether)
{
    size_t keep_first = own ? d->own : 0, keep_n = own ? d->count - d->own : d->own;
    size_t total = keep_n + count, at = own ? 0 : keep_n;
    const unsigned *kept_pair = d->pair ? d->pair + 2 * keep_first : NULL;
    const cl_float4 *kept_rest = d->rest ? d->rest + keep_first : NULL;
    unsigned *p = malloc(2 * total * sizeof *p + 1);
    cl_float4 *r = malloc(total * sizeof *r + 1);
    if (!p || !r) {
        free(p);
        free(r);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    size_t kept_at = own ? count : 0; /* the caller's first, the attachments' after */
    if (keep_n) {
        memcpy(p + 2 * kept_at, kept_pair, 2 * keep_n * sizeof *p);
        memcpy(r + kept_at, kept_rest, keep_n * sizeof *r);
    }
    if (count)
        memcpy(p + 2 * at, pair, 2 * count * sizeof *p);
    for (size_t c = 0; c < count; c++)
        r[at + c] = (cl_float4){{rest[c], compliance[c], tether && tether[c] ? 1.0f : 0.0f, 0.0f}};
    return adopt(v, d, total, own ? count : d->own, p, r);
}

pbfcl_status pbfcl_pbf_set_distances(pbfcl_sim *sim, size_t count, const unsigned *pair,
                                     const float *rest, const float *compliance,
                                     const unsigned char *tether)
{
    pbfcl_sim_view v;
    distance_state *d = distance_of(sim, &v);
    if (count > 0 && (!pair || !rest || !compliance)) {
        pbfcl_errorf("distance constraints: pairs, rest lengths and compliances must not be NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (count > UINT32_MAX / 2 - (d->count - d->own)) {
        pbfcl_errorf("%zu distance constraints are more than the %u the lists can hold", count,
                     UINT32_MAX / 2);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t c = 0; c < count; c++)
        PBFCL_TRY(check_constraint(c, pair + 2 * c, rest[c], compliance[c], v.n));
    return replace_part(&v, d, true, count, pair, rest, compliance, tether);
}

pbfcl_status pbfcl_pbf_set_attached_distances(pbfcl_sim *sim, size_t count, const unsigned *pair,
                                              const float *rest, const float *compliance)
{
    pbfcl_sim_view v;
    distance_state *d = distance_of(sim, &v);
    for (size_t c = 0; c < count; c++)
        PBFCL_TRY(check_constraint(c, pair + 2 * c, rest[c], compliance[c], v.capacity));
    return replace_part(&v, d, false, count, pair, rest, compliance, NULL);
}

size_t pbfcl_pbf_distance_count(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    return distance_of(sim, &v)->own;
}

pbfcl_status pbfcl_pbf_get_distances(pbfcl_sim *sim, unsigned *pair, float *rest, float *compliance,
                                     unsigned char *tether)
{
    pbfcl_sim_view v;
    distance_state *d = distance_of(sim, &v);
    for (size_t c = 0; c < d->own; c++) {
        if (pair) {
            pair[2 * c] = d->pair[2 * c];
            pair[2 * c + 1] = d->pair[2 * c + 1];
        }
        if (rest)
            rest[c] = d->rest[c].s[0];
        if (compliance)
            compliance[c] = d->rest[c].s[1];
        if (tether)
            tether[c] = d->rest[c].s[2] != 0.0f;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_read_distance_forces(pbfcl_sim *sim, float *force)
{
    pbfcl_sim_view v;
    distance_state *d = distance_of(sim, &v);
    if (d->own == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(v.cl->queue, d->lambda_buf, CL_TRUE, 0, d->own * 4, force, 0,
                                       NULL, NULL));
    float s = -v.params->inv_dt * v.params->inv_dt;
    for (size_t c = 0; c < d->own; c++)
        force[c] *= s;
    return PBFCL_OK;
}

/* The projection of solver iteration it: the slots of the ids (first iteration of a substep,
 * after the sort), then pbfcl_pbf_distance_sweeps sweeps, each every constraint's step, then
 * every particle's sum of its constraints' steps. */
static pbfcl_status distance_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    distance_state *d = state;
    if (d->count == 0)
        return PBFCL_OK; /* a scene without distance constraints launches nothing */
    pbfcl_sim_view v;
    pbf_view(sim, &v);
    cl_uint n = (cl_uint)v.n, count = (cl_uint)d->count, first = it == 0;
    if (first) {
        PBF_ARG(d->slots, 0, n);
        PBF_ARG(d->slots, 1, v.id_buf);
        PBF_ARG(d->slots, 2, d->slot_buf);
        PBFCL_TRY(pbf_launch(&v, d->slots, prof, PBFCL_STAGE_SOLVE));
    }
    int sweeps = pbfcl_pbf_distance_sweeps(it, v.scene->solver.iterations);
    for (int sweep = 0; sweep < sweeps; sweep++) {
        cl_kernel k = d->project;
        cl_uint reset = first && sweep == 0; /* the substep's multipliers start at 0 */
        cl_mem args[] = {d->pair_buf, d->rest_buf,    d->n_buf,      d->slot_buf,
                         *v.pred,     v.inv_mass_buf, d->lambda_buf, d->corr_buf};
        PBF_ARG(k, 0, v.params_buf);
        PBF_ARG(k, 1, count);
        PBF_ARG(k, 2, reset);
        for (cl_uint a = 0; a < 8; a++)
            PBF_ARG(k, 3 + a, args[a]);
        PBFCL_TRY(pbfcl_cl_launch(v.cl, k, d->count, v.wg, prof, PBFCL_STAGE_SOLVE));
        k = d->gather;
        PBFCL_TRY(pbf_set_head(&v, k));
        PBF_ARG(k, 2, v.id_buf);
        PBF_ARG(k, 3, d->offset_buf);
        PBF_ARG(k, 4, d->entry_buf);
        PBF_ARG(k, 5, d->corr_buf);
        PBF_ARG(k, 6, v.inv_mass_buf);
        PBF_ARG(k, 7, *v.pred);
        PBFCL_TRY(pbf_launch(&v, k, prof, PBFCL_STAGE_SOLVE));
    }
    return PBFCL_OK;
}

cl_mem pbf_distance_slots(const pbf_state *ps)
{
    const distance_state *d = pbf_constraint_state(ps, &pbf_distance_constraint);
    return d && d->count ? d->slot_buf : NULL;
}

const pbf_constraint_kind pbf_distance_constraint = {
    .name = "distance",
    .pass = PBF_PASS_POSITIONS,
    .create = distance_create,
    .destroy = distance_destroy,
    .project = distance_project,
};

/* ---- checkpoints -------------------------------------------------------------------------- */

pbfcl_status pbfcl_pbf_distance_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx)
{
    pbfcl_sim_view v;
    distance_state *d = distance_of(sim, &v);
    cl_ulong count = d->own; /* the attachments' are attach.c's */
    PBFCL_TRY(put(ctx, "distances", &count, sizeof count));
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(put(ctx, "distance_pairs", d->pair, d->own * 8));
    return put(ctx, "distance_rest", d->rest, d->own * 16);
}

pbfcl_status pbfcl_pbf_distance_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx)
{
    pbfcl_sim_view v;
    distance_state *d = distance_of(sim, &v);
    cl_ulong count;
    PBFCL_TRY(get(ctx, "distances", &count, sizeof count));
    if (count > UINT32_MAX / 2) {
        pbfcl_errorf("the saved distance constraints are damaged: %llu of them",
                     (unsigned long long)count);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    unsigned *p = malloc((size_t)count * 8 + 1);
    cl_float4 *r = malloc((size_t)count * 16 + 1);
    pbfcl_status st = p && r ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && count)
        st = get(ctx, "distance_pairs", p, (size_t)count * 8);
    if (st == PBFCL_OK && count)
        st = get(ctx, "distance_rest", r, (size_t)count * 16);
    for (size_t c = 0; st == PBFCL_OK && c < count; c++)
        st = check_constraint(c, p + 2 * c, r[c].s[0], r[c].s[1], v.n);
    if (st != PBFCL_OK) {
        free(p);
        free(r);
        return st;
    }
    return adopt(&v, d, (size_t)count, (size_t)count, p, r); /* attach.c's load adds its own */
}
