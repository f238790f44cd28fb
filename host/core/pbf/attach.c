/* The attachments (attach.h): the table on the host, the shapes' entries on the device with the
 * stage attach_shapes, the bodies' zero-length distance constraints handed to distance.c, and
 * their checkpoint sections. */
#include "pbf/attach.h"

#include "bodies/shape_match.h"
#include "pbf/constraint.h"
#include "pbf/distance.h"
#include "pbf/pbf_colliders.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NO_SHAPE 0xffffffffu /* attach.cl: a shape index of none */

typedef struct attach_state {
    cl_kernel shapes; /* attach_shapes */
    size_t count;
    unsigned *particle, *anchor; /* ids per attachment */
    float *length;               /* m per attachment: a body's, from its point to its anchor */
    cl_int2 *target;             /* (kind, target) per attachment */
    cl_float4 *point;            /* (point, compliance) per attachment */
    size_t entries;              /* attachments to shapes, on the device sorted by id */
    cl_mem entry_id_buf;         /* uint per entry */
    cl_mem entry_point_buf;      /* float4 per entry: point, w its shape in shape_ids */
    cl_mem shape_index_buf;      /* uint per shape_ids: the shape's row in the table */
    int shape_ids[PBFCL_MAX_SHAPES], shapes_named;
    cl_uint shape_index[PBFCL_MAX_SHAPES]; /* as uploaded */
} attach_state;

static void release_table(attach_state *a)
{
    free(a->particle);
    free(a->anchor);
    free(a->target);
    free(a->point);
    free(a->length);
    a->particle = a->anchor = NULL;
    a->length = NULL;
    a->target = NULL;
    a->point = NULL;
    a->count = a->entries = 0;
    a->shapes_named = 0;
    pbfcl_cl_release_buffer(&a->entry_id_buf);
    pbfcl_cl_release_buffer(&a->entry_point_buf);
    pbfcl_cl_release_buffer(&a->shape_index_buf);
}

static pbfcl_status attach_create(const pbfcl_sim_view *v, cl_program program, void **state)
{
    attach_state *a = calloc(1, sizeof *a);
    if (!(*state = a))
        return PBFCL_ERR_OUT_OF_MEMORY;
    return pbf_kernel(v, program, "attach_shapes", &a->shapes);
}

static void attach_destroy(void *state)
{
    attach_state *a = state;
    if (!a)
        return;
    if (a->shapes)
        clReleaseKernel(a->shapes);
    release_table(a);
    free(a);
}

static attach_state *attach_of(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    return pbf_constraint_state(pbf_view(sim, v), &pbf_attach_constraint);
}

/* ---- the table ---------------------------------------------------------------------------- */

/* The body particle (id) nearest to point p of body b's rest shape (m entries of bodies), or
 * UINT32_MAX if the body has none, and its distance from p (*length). */
static unsigned nearest_of_body(size_t m, const unsigned *id, const unsigned *body,
                                const float *rest3, int b, const float *p, float *length)
{
    unsigned best = UINT32_MAX;
    double best_d = INFINITY;
    for (size_t e = 0; e < m; e++) {
        if (body[e] != (unsigned)b)
            continue;
        double d = 0.0;
        for (int k = 0; k < 3; k++)
            d += ((double)rest3[3 * e + k] - p[k]) * ((double)rest3[3 * e + k] - p[k]);
        if (d < best_d) {
            best_d = d;
            best = id[e];
        }
    }
    *length = (float)sqrt(best_d);
    return best;
}

/* Each body attachment's anchor, its body's particle nearest to its point at rest, and their
 * distance. */
static pbfcl_status find_anchors(const pbfcl_sim_view *v, size_t count, const cl_int2 *target,
                                 const cl_float4 *point, unsigned *anchor, float *length)
{
    size_t m = v->bodies ? v->bodies->entries : 0;
    unsigned *id = malloc(m * sizeof *id + 4), *body = malloc(m * sizeof *body + 4);
    float *rest3 = malloc(3 * m * sizeof *rest3 + 4);
    pbfcl_status st = id && body && rest3 ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && m)
        st = pbfcl_shape_match_read_rest(v->bodies, id, body, rest3);
    for (size_t k = 0; st == PBFCL_OK && k < count; k++)
        if (target[k].s[0] == PBFCL_PBF_ATTACH_BODY)
            anchor[k] = nearest_of_body(m, id, body, rest3, target[k].s[1], point[k].s, length + k);
    free(id);
    free(body);
    free(rest3);
    return st;
}

/* What is wrong with attachment k among n particles, or NULL. */
static const char *fault(const pbfcl_sim_view *v, pbfcl_colliders *c, unsigned particle,
                         cl_int2 target, cl_float4 point)
{
    if (particle >= v->n)
        return "names a particle beyond the particle count: give an index below it";
    for (int a = 0; a < 4; a++)
        if (!isfinite(point.s[a]))
            return a < 3 ? "has a point that is not finite: give its xyz in the target's frame (m)"
                         : "has a compliance that is not finite: give 0 or above (m/N; 0 rigid)";
    if (point.s[3] < 0.0f)
        return "has a negative compliance: give 0 or above (m/N; 0 is rigid)";
    if (target.s[0] == PBFCL_PBF_ATTACH_SHAPE)
        return pbfcl_colliders_index(c, target.s[1]) < 0
                   ? "names a shape that does not exist: give the id pbfcl_shape_create returned"
                   : NULL;
    if (target.s[0] == PBFCL_PBF_ATTACH_BODY) {
        size_t bodies = pbfcl_shape_match_count(v->bodies);
        return target.s[1] < 0 || (size_t)target.s[1] >= bodies
                   ? "names a body that does not exist: give an index below the body count"
                   : NULL;
    }
    return "has an unknown kind: give PBFCL_ATTACH_SHAPE or PBFCL_ATTACH_BODY";
}

/* Checks the table; a particle twice is found through seen (n entries, zeroed). */
static pbfcl_status check_table(const pbfcl_sim_view *v, pbfcl_colliders *c, size_t count,
                                const unsigned *particle, const cl_int2 *target,
                                const cl_float4 *point, unsigned char *seen)
{
    for (size_t k = 0; k < count; k++) {
        const char *f = fault(v, c, particle[k], target[k], point[k]);
        if (!f && seen[particle[k]]++)
            f = "attaches a particle attached already: attach each particle once";
        if (f) {
            pbfcl_errorf("attachment %zu (particle %u, %s %d) %s", k, particle[k],
                         target[k].s[0] == PBFCL_PBF_ATTACH_BODY ? "body" : "shape", target[k].s[1],
                         f);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    return PBFCL_OK;
}

typedef struct id_entry {
    unsigned id, k;
} id_entry;

static int by_id(const void *x, const void *y)
{
    unsigned a = ((const id_entry *)x)->id, b = ((const id_entry *)y)->id;
    return (a > b) - (a < b);
}

/* The device entries of the attachments to shapes, sorted by id (a's table set). */
static pbfcl_status upload_shapes(const pbfcl_sim_view *v, attach_state *a)
{
    id_entry *e = malloc(a->count * sizeof *e + 1);
    if (!e)
        return PBFCL_ERR_OUT_OF_MEMORY;
    size_t m = 0;
    a->shapes_named = 0;
    for (size_t k = 0; k < a->count; k++)
        if (a->target[k].s[0] == PBFCL_PBF_ATTACH_SHAPE)
            e[m++] = (id_entry){a->particle[k], (unsigned)k};
    qsort(e, m, sizeof *e, by_id);
    unsigned *ids = malloc(m * sizeof *ids + 4);
    cl_float4 *pts = malloc(m * sizeof *pts + 16);
    pbfcl_status st = ids && pts ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t j = 0; st == PBFCL_OK && j < m; j++) {
        int shape = a->target[e[j].k].s[1], s = 0;
        while (s < a->shapes_named && a->shape_ids[s] != shape)
            s++;
        if (s == a->shapes_named) {
            a->shape_ids[s] = shape;
            a->shape_index[s] = NO_SHAPE; /* uploaded at the first stage */
            a->shapes_named++;
        }
        ids[j] = e[j].id;
        pts[j] = a->point[e[j].k];
        pts[j].s[3] = (float)s;
    }
    a->entries = m;
    cl_mem_flags rw = CL_MEM_READ_WRITE;
    if (st == PBFCL_OK && m)
        st = pbfcl_cl_buffer(v->cl, rw, m * 4, "attachment ids", &a->entry_id_buf);
    if (st == PBFCL_OK && m)
        st = pbfcl_cl_buffer(v->cl, rw, m * 16, "attachment points", &a->entry_point_buf);
    if (st == PBFCL_OK && m)
        st = pbfcl_cl_buffer(v->cl, rw, sizeof a->shape_index, "attachment shapes",
                             &a->shape_index_buf);
    cl_int err = CL_SUCCESS;
    if (st == PBFCL_OK && m)
        err = clEnqueueWriteBuffer(v->cl->queue, a->entry_id_buf, CL_TRUE, 0, m * 4, ids, 0, NULL,
                                   NULL);
    if (st == PBFCL_OK && m && err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(v->cl->queue, a->entry_point_buf, CL_TRUE, 0, m * 16, pts, 0,
                                   NULL, NULL);
    if (st == PBFCL_OK && m && err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(v->cl->queue, a->shape_index_buf, CL_TRUE, 0,
                                   sizeof a->shape_index, a->shape_index, 0, NULL, NULL);
    free(e);
    free(ids);
    free(pts);
    PBFCL_TRY(st);
    PBFCL_CL_CHECK(err);
    return PBFCL_OK;
}

/* The bodies' zero-length constraints to distance.c. */
static pbfcl_status hand_bodies(pbfcl_sim *sim, const attach_state *a)
{
    unsigned *pair = malloc(2 * a->count * sizeof *pair + 4);
    float *comp = malloc(a->count * sizeof *comp + 4), *rest = malloc(a->count * sizeof *rest + 4);
    pbfcl_status st = pair && comp && rest ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    size_t m = 0;
    for (size_t k = 0; st == PBFCL_OK && k < a->count; k++)
        if (a->target[k].s[0] == PBFCL_PBF_ATTACH_BODY) {
            pair[2 * m] = a->particle[k];
            pair[2 * m + 1] = a->anchor[k];
            rest[m] = a->length[k];
            comp[m++] = a->point[k].s[3];
        }
    if (st == PBFCL_OK)
        st = pbfcl_pbf_set_attached_distances(sim, m, pair, rest, comp);
    free(pair);
    free(comp);
    free(rest);
    return st;
}

/* Replaces a's table by the checked arrays (taken over) and derives the device entries and the
 * bodies' constraints from it. */
static pbfcl_status adopt(pbfcl_sim *sim, size_t count, unsigned *particle, cl_int2 *target,
                          cl_float4 *point, unsigned *anchor, float *length)
{
    pbfcl_sim_view v;
    attach_state *a = attach_of(sim, &v);
    PBFCL_CL_CHECK(clFinish(v.cl->queue));
    release_table(a);
    a->count = count;
    a->particle = particle;
    a->target = target;
    a->point = point;
    a->anchor = anchor;
    a->length = length;
    pbfcl_status st = upload_shapes(&v, a);
    if (st == PBFCL_OK)
        st = hand_bodies(sim, a);
    if (st != PBFCL_OK)
        release_table(a);
    return st;
}

/* Takes count attachments in (particle, target, point; anchor and length NULL: found) after
 * checking them. */
static pbfcl_status take(pbfcl_sim *sim, size_t count, unsigned *p, cl_int2 *t, cl_float4 *x,
                         unsigned *anchor, float *length)
{
    pbfcl_sim_view v;
    attach_of(sim, &v);
    unsigned char *seen = calloc(v.n + 1, 1);
    pbfcl_status st = seen ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = check_table(&v, pbfcl_pbf_colliders(sim), count, p, t, x, seen);
    free(seen);
    if (st == PBFCL_OK && !anchor) {
        anchor = malloc(count * sizeof *anchor + 4);
        length = calloc(count + 1, sizeof *length);
        st = anchor && length ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
        for (size_t k = 0; st == PBFCL_OK && k < count; k++)
            anchor[k] = p[k];
        if (st == PBFCL_OK)
            st = find_anchors(&v, count, t, x, anchor, length);
    }
    for (size_t k = 0; st == PBFCL_OK && k < count; k++)
        if (!(length[k] >= 0.0f) || isinf(length[k])) { /* a loaded one checked */
            pbfcl_errorf("attachment %zu (particle %u) is held at length %g; give a finite "
                         "length >= 0",
                         k, p[k], (double)length[k]);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
    for (size_t k = 0; st == PBFCL_OK && k < count; k++)
        if (anchor[k] >= v.n) { /* a body's particle; a loaded one checked */
            pbfcl_errorf("attachment %zu (particle %u, body %d) is held by particle %u, beyond the "
                         "%zu particles: the body has no particle there",
                         k, p[k], t[k].s[1], anchor[k], v.n);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
    if (st == PBFCL_OK)
        return adopt(sim, count, p, t, x, anchor, length);
    free(p);
    free(t);
    free(x);
    free(anchor);
    free(length);
    return st;
}

pbfcl_status pbfcl_pbf_set_attachments(pbfcl_sim *sim, size_t count, const unsigned *particle,
                                       const int *kind, const int *target, const float *point3,
                                       const float *compliance)
{
    unsigned *p = malloc(count * sizeof *p + 4);
    cl_int2 *t = malloc(count * sizeof *t + 8);
    cl_float4 *x = malloc(count * sizeof *x + 16);
    if (!p || !t || !x) {
        free(p);
        free(t);
        free(x);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (size_t k = 0; k < count; k++) {
        p[k] = particle[k];
        t[k] = (cl_int2){{kind[k], target[k]}};
        x[k] = (cl_float4){
            {point3[3 * k], point3[3 * k + 1], point3[3 * k + 2], compliance ? compliance[k] : 0}};
    }
    return take(sim, count, p, t, x, NULL, NULL);
}

size_t pbfcl_pbf_attachment_count(pbfcl_sim *sim)
{
    pbfcl_sim_view v;
    return attach_of(sim, &v)->count;
}

pbfcl_status pbfcl_pbf_get_attachments(pbfcl_sim *sim, unsigned *particle, int *kind, int *target,
                                       float *point3, float *compliance, unsigned *anchor)
{
    pbfcl_sim_view v;
    const attach_state *a = attach_of(sim, &v);
    for (size_t k = 0; k < a->count; k++) {
        if (particle)
            particle[k] = a->particle[k];
        if (kind)
            kind[k] = a->target[k].s[0];
        if (target)
            target[k] = a->target[k].s[1];
        for (int c = 0; point3 && c < 3; c++)
            point3[3 * k + c] = a->point[k].s[c];
        if (compliance)
            compliance[k] = a->point[k].s[3];
        if (anchor)
            anchor[k] = a->anchor[k];
    }
    return PBFCL_OK;
}

/* a's table again without the attachments to shape `shape` or of a particle rank removes,
 * renumbered by rank (NULL: as they are). */
static pbfcl_status filter(pbfcl_sim *sim, const unsigned *rank, int shape)
{
    pbfcl_sim_view v;
    const attach_state *a = attach_of(sim, &v);
    if (a->count == 0)
        return PBFCL_OK;
    size_t n = a->count, m = 0;
    unsigned *p = malloc(n * sizeof *p), *anchor = malloc(n * sizeof *anchor);
    float *length = malloc(n * sizeof *length);
    cl_int2 *t = malloc(n * sizeof *t);
    cl_float4 *x = malloc(n * sizeof *x);
    if (!p || !anchor || !length || !t || !x) {
        free(p);
        free(anchor);
        free(length);
        free(t);
        free(x);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (size_t k = 0; k < n; k++) {
        unsigned pk = rank ? rank[a->particle[k]] : a->particle[k];
        unsigned ak = rank ? rank[a->anchor[k]] : a->anchor[k];
        bool gone = pk == UINT32_MAX || ak == UINT32_MAX ||
                    (a->target[k].s[0] == PBFCL_PBF_ATTACH_SHAPE && a->target[k].s[1] == shape);
        if (gone)
            continue;
        p[m] = pk;
        anchor[m] = ak;
        length[m] = a->length[k];
        t[m] = a->target[k];
        x[m++] = a->point[k];
    }
    return take(sim, m, p, t, x, anchor, length);
}

pbfcl_status pbfcl_pbf_attach_remap(pbfcl_sim *sim, const unsigned *rank)
{
    return filter(sim, rank, INT32_MIN);
}

pbfcl_status pbfcl_pbf_attach_shape_removed(pbfcl_sim *sim, int id)
{
    return filter(sim, NULL, id);
}

/* ---- the stage ---------------------------------------------------------------------------- */

/* attach_shapes in the first iteration of a substep, after the shapes' narrow phase uploaded
 * their poses at its end: each attached static particle's x* to its shape's point. */
static pbfcl_status attach_project(pbfcl_sim *sim, void *state, int it, pbfcl_profile *prof)
{
    attach_state *a = state;
    if (a->entries == 0 || it != 0)
        return PBFCL_OK; /* a scene without them launches nothing */
    pbfcl_sim_view v;
    pbf_view(sim, &v);
    pbfcl_colliders *c = pbfcl_pbf_colliders(sim);
    size_t stride;
    cl_mem table = pbfcl_colliders_table(c, &stride);
    if (!table)
        return PBFCL_OK;
    bool changed = false; /* shapes destroyed since: the rows moved */
    for (int s = 0; s < a->shapes_named; s++) {
        int i = pbfcl_colliders_index(c, a->shape_ids[s]);
        cl_uint row = i < 0 ? NO_SHAPE : (cl_uint)i;
        changed = changed || row != a->shape_index[s];
        a->shape_index[s] = row;
    }
    if (changed)
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(v.cl->queue, a->shape_index_buf, CL_TRUE, 0,
                                            sizeof a->shape_index, a->shape_index, 0, NULL, NULL));
    cl_kernel k = a->shapes;
    cl_uint n = (cl_uint)v.n, m = (cl_uint)a->entries, rows = (cl_uint)stride;
    PBF_ARG(k, 0, n);
    PBF_ARG(k, 1, v.phase_buf);
    PBF_ARG(k, 2, v.id_buf);
    PBF_ARG(k, 3, m);
    PBF_ARG(k, 4, a->entry_id_buf);
    PBF_ARG(k, 5, a->entry_point_buf);
    PBF_ARG(k, 6, a->shape_index_buf);
    PBF_ARG(k, 7, rows);
    PBF_ARG(k, 8, table);
    PBF_ARG(k, 9, *v.pred);
    return pbf_launch(&v, k, prof, PBFCL_STAGE_SOLVE);
}

const pbf_constraint_kind pbf_attach_constraint = {
    .name = "attach",
    .pass = PBF_PASS_POSITIONS,
    .create = attach_create,
    .destroy = attach_destroy,
    .project = attach_project,
};

/* ---- checkpoints -------------------------------------------------------------------------- */

pbfcl_status pbfcl_pbf_attach_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx)
{
    pbfcl_sim_view v;
    const attach_state *a = attach_of(sim, &v);
    cl_ulong count = a->count;
    PBFCL_TRY(put(ctx, "attachments", &count, sizeof count));
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(put(ctx, "attachment_particles", a->particle, a->count * 4));
    PBFCL_TRY(put(ctx, "attachment_targets", a->target, a->count * 8));
    PBFCL_TRY(put(ctx, "attachment_points", a->point, a->count * 16));
    PBFCL_TRY(put(ctx, "attachment_anchors", a->anchor, a->count * 4));
    return put(ctx, "attachment_lengths", a->length, a->count * 4);
}

pbfcl_status pbfcl_pbf_attach_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx)
{
    cl_ulong count;
    PBFCL_TRY(get(ctx, "attachments", &count, sizeof count));
    if (count > UINT32_MAX) {
        pbfcl_errorf("the saved attachments are damaged: %llu of them", (unsigned long long)count);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    size_t n = (size_t)count;
    unsigned *p = malloc(n * 4 + 4), *anchor = malloc(n * 4 + 4);
    float *length = malloc(n * 4 + 4);
    cl_int2 *t = malloc(n * 8 + 8);
    cl_float4 *x = malloc(n * 16 + 16);
    pbfcl_status st = p && anchor && length && t && x ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && n)
        st = get(ctx, "attachment_particles", p, n * 4);
    if (st == PBFCL_OK && n)
        st = get(ctx, "attachment_targets", t, n * 8);
    if (st == PBFCL_OK && n)
        st = get(ctx, "attachment_points", x, n * 16);
    if (st == PBFCL_OK && n)
        st = get(ctx, "attachment_anchors", anchor, n * 4);
    if (st == PBFCL_OK && n)
        st = get(ctx, "attachment_lengths", length, n * 4);
    if (st == PBFCL_OK)
        return take(sim, n, p, t, x, anchor, length); /* checked there, as a call's */
    free(p);
    free(anchor);
    free(length);
    free(t);
    free(x);
    return st;
}
