/* The device side of the collision shapes: the program (built at the first narrow phase with
 * shapes), the geometry and table uploads, the stages narrow, project and force, and the
 * readers of their results. */
#include "colliders/colliders_internal.h"

#include "runtime/build_options.h"
#include "runtime/programs.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define COL_ARG(kernel, idx, v) PBFCL_CL_CHECK(clSetKernelArg((kernel), (idx), sizeof(v), &(v)))
#define COL_K PBFCL_COLLIDER_CONTACTS
#define PARTIALS (PBFCL_COLLIDER_MAX_SHAPES * PBFCL_COLLIDER_FORCE_GROUPS * 2)

static void release_mem(cl_mem *m)
{
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
}

static void release_geometry_bufs(pbfcl_colliders *c)
{
    release_mem(&c->shape_buf);
    release_mem(&c->plane_buf);
    release_mem(&c->tri_buf);
    release_mem(&c->cell_start_buf);
    release_mem(&c->cell_tris_buf);
}

static void release_particle_bufs(pbfcl_colliders *c)
{
    release_mem(&c->contact_plane_buf);
    release_mem(&c->contact_shape_buf);
    release_mem(&c->push_buf);
    release_mem(&c->inside_buf);
    c->capacity = 0;
}

void pbfcl_colliders_destroy(pbfcl_colliders *c)
{
    if (!c)
        return;
    for (int k = 0; k < 2; k++)
        if (c->written[k]) { /* its write reads c */
            clWaitForEvents(1, &c->written[k]);
            clReleaseEvent(c->written[k]);
        }
    for (int i = 0; i < c->count; i++)
        pbfcl_collider_geometry_free(&c->shape[i].geo);
    cl_kernel *k[4] = {&c->narrow, &c->project, &c->force, &c->force_fold};
    for (int j = 0; j < 4; j++)
        if (*k[j])
            clReleaseKernel(*k[j]);
    if (c->program)
        clReleaseProgram(c->program);
    release_geometry_bufs(c);
    release_particle_bufs(c);
    release_mem(&c->sums_buf);
    release_mem(&c->partial_buf);
    release_mem(&c->pressure_buf);
    free(c->pending_forces);
    free(c);
}

/* The program and its kernels, once. */
static pbfcl_status build(pbfcl_colliders *c, const pbfcl_colliders_run *r)
{
    if (c->program)
        return PBFCL_OK;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_COLLIDERS);
    pbfcl_build_config cfg = {.wg_size = (unsigned)r->wg};
    if (r->build)
        cfg = *r->build;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    PBFCL_TRY(pbfcl_cl_build(r->cl, desc->files, desc->nfiles, options, &c->program));
    const char *names[4] = {"colliders_narrow", "colliders_project", "colliders_force",
                            "colliders_force_fold"};
    cl_kernel *k[4] = {&c->narrow, &c->project, &c->force, &c->force_fold};
    size_t local[4] = {0, 0, r->wg * 20, 0}; /* force: a float4 and a float per work-item */
    for (int j = 0; j < 4; j++) {
        PBFCL_TRY(pbfcl_cl_kernel(c->program, names[j], k[j]));
        PBFCL_TRY(pbfcl_cl_check_launch(r->cl, *k[j], names[j], r->wg, local[j]));
    }
    PBFCL_TRY(pbfcl_cl_buffer(r->cl, CL_MEM_READ_WRITE, PARTIALS * PBFCL_COLLIDER_FORCE_SPLIT * 16,
                              "collider work-group force sums", &c->sums_buf));
    PBFCL_TRY(pbfcl_cl_buffer(r->cl, CL_MEM_READ_WRITE, PARTIALS * 16, "collider force sums",
                              &c->partial_buf));
    PBFCL_TRY(pbfcl_cl_buffer(r->cl, CL_MEM_READ_WRITE, PARTIALS / 2 * 16, "collider pressure sums",
                              &c->pressure_buf));
    PBFCL_TRY(pbfcl_cl_write_zeros(r->cl, c->pressure_buf, PARTIALS / 2 * 16));
    if (!c->pending_forces) /* a loaded state's sums */
        return PBFCL_OK;
    pbfcl_status st = pbfcl_colliders_write_forces(c, r->cl, c->pending_forces);
    free(c->pending_forces);
    c->pending_forces = NULL;
    return st;
}

pbfcl_status pbfcl_colliders_write_forces(pbfcl_colliders *c, pbfcl_cl *cl, const float *sums)
{
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(cl->queue, c->partial_buf, CL_TRUE, 0, PARTIALS * 16, sums,
                                        0, NULL, NULL));
    return PBFCL_OK;
}

/* A device buffer holding bytes of data (4 bytes if none). */
static pbfcl_status upload(pbfcl_cl *cl, const void *data, size_t bytes, const char *what,
                           cl_mem *out)
{
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, bytes, what, out));
    if (bytes)
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(cl->queue, *out, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
    return PBFCL_OK;
}

/* Every shape's planes (a hull's, an SDF's nodes), triangles and grid, concatenated (offsets
 * into the rows). */
static pbfcl_status upload_geometry(pbfcl_colliders *c, pbfcl_cl *cl)
{
    size_t planes = 0, tris = 0, cells = 0, entries = 0;
    for (int i = 0; i < c->count; i++) {
        const pbfcl_collider_geometry *g = &c->shape[i].geo;
        size_t nc = g->cell_start ? (size_t)g->dims[0] * g->dims[1] * g->dims[2] + 1 : 0;
        planes += g->plane_count;
        tris += g->tri_count;
        cells += nc;
        entries += nc ? g->cell_start[nc - 1] : 0;
    }
    float *pl = malloc(planes * 16 + 1), *tr = malloc(tris * 48 + 1);
    unsigned *cs = malloc(cells * 4 + 4), *ct = malloc(entries * 4 + 4);
    pbfcl_status st = (pl && tr && cs && ct) ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    size_t p0 = 0, t0 = 0, c0 = 0, e0 = 0;
    for (int i = 0; st == PBFCL_OK && i < c->count; i++) {
        const pbfcl_collider_geometry *g = &c->shape[i].geo;
        pbfcl_collider_shape *row = &c->shape[i].row;
        size_t nc = g->cell_start ? (size_t)g->dims[0] * g->dims[1] * g->dims[2] + 1 : 0;
        row->first = (pbfcl_uint)(g->plane_count ? p0 : t0);
        row->count = (pbfcl_uint)(g->plane_count ? g->plane_count : g->tri_count);
        row->grid_first = (pbfcl_uint)c0;
        memcpy(row->grid_dims, g->dims, sizeof g->dims);
        memcpy(row->grid_origin, g->grid_origin, sizeof g->grid_origin);
        row->grid_origin[3] = g->cell;
        if (g->plane_count) /* a mesh has no planes, a primitive or an SDF no triangles */
            memcpy(pl + 4 * p0, g->planes, g->plane_count * 16);
        if (g->tri_count)
            memcpy(tr + 12 * t0, g->tris, g->tri_count * 48);
        for (size_t k = 0; k < nc; k++)
            cs[c0 + k] = (unsigned)(e0 + g->cell_start[k]);
        for (size_t k = 0; nc && k < g->cell_start[nc - 1]; k++)
            ct[e0 + k] = (unsigned)(t0 + g->cell_tris[k]);
        p0 += g->plane_count;
        t0 += g->tri_count;
        c0 += nc;
        e0 += nc ? g->cell_start[nc - 1] : 0;
    }
    release_geometry_bufs(c);
    if (st == PBFCL_OK)
        st = upload(cl, pl, planes * 16, "collider planes", &c->plane_buf);
    if (st == PBFCL_OK)
        st = upload(cl, tr, tris * 48, "collider triangles", &c->tri_buf);
    if (st == PBFCL_OK)
        st = upload(cl, cs, cells * 4, "collider grid cells", &c->cell_start_buf);
    if (st == PBFCL_OK)
        st = upload(cl, ct, entries * 4, "collider grid triangles", &c->cell_tris_buf);
    if (st == PBFCL_OK)
        st = pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, sizeof c->turns[0], "collider shapes",
                             &c->shape_buf);
    free(pl);
    free(tr);
    free(cs);
    free(ct);
    c->geometry_dirty = st != PBFCL_OK;
    return st;
}

/* The per-particle buffers for capacity particles. */
static pbfcl_status particle_bufs(pbfcl_colliders *c, pbfcl_cl *cl, size_t capacity)
{
    if (c->capacity >= capacity && c->contact_plane_buf)
        return PBFCL_OK;
    release_particle_bufs(c);
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, capacity * COL_K * 16, "contact planes",
                              &c->contact_plane_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, capacity * COL_K * 4, "contact shapes",
                              &c->contact_shape_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, capacity * COL_K * 16, "contact pushes",
                              &c->push_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, capacity * 4, "particles inside shapes",
                              &c->inside_buf));
    c->capacity = capacity;
    return PBFCL_OK;
}

/* q advanced by the rotation vector w dt (q' = exp(w dt / 2) q), normalised. */
static void rotate_by(float q[4], const float w[3], float dt)
{
    double a[3] = {w[0] * dt, w[1] * dt, w[2] * dt};
    double ang = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    if (ang == 0.0)
        return;
    double s = sin(ang / 2) / ang, r[4] = {a[0] * s, a[1] * s, a[2] * s, cos(ang / 2)};
    double o[4] = {r[3] * q[0] + r[0] * q[3] + r[1] * q[2] - r[2] * q[1],
                   r[3] * q[1] - r[0] * q[2] + r[1] * q[3] + r[2] * q[0],
                   r[3] * q[2] + r[0] * q[1] - r[1] * q[0] + r[2] * q[3],
                   r[3] * q[3] - r[0] * q[0] - r[1] * q[1] - r[2] * q[2]};
    double len = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2] + o[3] * o[3]);
    for (int k = 0; k < 4; k++)
        q[k] = (float)(o[k] / len);
}

/* v rotated by unit quaternion q. */
static void rotate_vec(const float q[4], const float v[3], float out[3])
{
    float t[3] = {2 * (q[1] * v[2] - q[2] * v[1]), 2 * (q[2] * v[0] - q[0] * v[2]),
                  2 * (q[0] * v[1] - q[1] * v[0])};
    out[0] = v[0] + q[3] * t[0] + q[1] * t[2] - q[2] * t[1];
    out[1] = v[1] + q[3] * t[1] + q[2] * t[0] - q[0] * t[2];
    out[2] = v[2] + q[3] * t[2] + q[0] * t[1] - q[1] * t[0];
}

/* Grows row's bounds by the local box lo..hi at pose (p, q). */
static void grow_bounds(pbfcl_collider_shape *row, const float *lo, const float *hi, const float *p,
                        const float *q)
{
    for (int corner = 0; corner < 8; corner++) {
        float v[3], w[3];
        for (int k = 0; k < 3; k++)
            v[k] = (corner >> k) & 1 ? hi[k] : lo[k];
        rotate_vec(q, v, w);
        for (int k = 0; k < 3; k++) {
            row->bounds_min[k] = fminf(row->bounds_min[k], w[k] + p[k]);
            row->bounds_max[k] = fmaxf(row->bounds_max[k], w[k] + p[k]);
        }
    }
}

/* Each shape one substep on: the pose at its start is the last one's end; its bounds swept.
 * A shape whose time of motion ran out stops (its velocities 0) from the next substep. */
static void advance(pbfcl_colliders *c, float dt)
{
    for (int i = 0; i < c->count; i++) {
        collider_entry *e = &c->shape[i];
        pbfcl_collider_shape *row = &e->row;
        if (!(e->moving > 0.0f)) {
            memset(row->velocity, 0, sizeof row->velocity);
            memset(row->angular_velocity, 0, sizeof row->angular_velocity);
        }
        float step = fminf(dt, e->moving); /* dt while it moves for ever */
        e->moving -= step;
        memcpy(row->prev_position, row->position, sizeof row->position);
        memcpy(row->prev_rotation, row->rotation, sizeof row->rotation);
        for (int k = 0; k < 3; k++)
            row->position[k] += row->velocity[k] * step;
        rotate_by(row->rotation, row->angular_velocity, step);
        for (int k = 0; k < 3; k++) {
            row->bounds_min[k] = INFINITY;
            row->bounds_max[k] = -INFINITY;
        }
        const pbfcl_collider_geometry *g = &c->shape[i].geo;
        grow_bounds(row, g->lo, g->hi, row->prev_position, row->prev_rotation);
        grow_bounds(row, g->lo, g->hi, row->position, row->rotation);
        for (int k = 0; k < 3; k++) {
            row->bounds_min[k] -= row->margin;
            row->bounds_max[k] += row->margin;
        }
        c->rows[i] = *row;
    }
}

/* The shapes one substep on, into the table's next turn, and its non-blocking upload. */
static pbfcl_status upload_table(pbfcl_colliders *c, const pbfcl_colliders_run *r)
{
    int t = c->turn ^= 1;
    if (c->written[t]) { /* two substeps ago: long done, but its host rows must not change */
        PBFCL_CL_CHECK(clWaitForEvents(1, &c->written[t]));
        clReleaseEvent(c->written[t]);
        c->written[t] = NULL;
    }
    c->rows = c->turns[t];
    advance(c, r->dt);
    c->dt = r->dt;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(r->cl->queue, c->shape_buf, CL_FALSE, 0,
                                        (size_t)c->count * sizeof c->rows[0], c->rows, 0, NULL,
                                        &c->written[t]));
    return PBFCL_OK;
}

_Static_assert(sizeof(pbfcl_collider_shape) % 16 == 0 &&
                   offsetof(pbfcl_collider_shape, rotation) == 16,
               "pbfcl_colliders_table's rows");

cl_mem pbfcl_colliders_table(const pbfcl_colliders *c, size_t *row_float4s)
{
    *row_float4s = sizeof(pbfcl_collider_shape) / 16;
    return c && c->program ? c->shape_buf : NULL;
}

pbfcl_status pbfcl_colliders_narrow(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                    cl_mem pos_buf, cl_mem pred_buf, pbfcl_profile *prof)
{
    if (!c || c->count == 0)
        return PBFCL_OK;
    PBFCL_TRY(build(c, r));
    PBFCL_TRY(particle_bufs(c, r->cl, r->capacity));
    if (c->geometry_dirty)
        PBFCL_TRY(upload_geometry(c, r->cl));
    PBFCL_TRY(upload_table(c, r));
    cl_kernel k = c->narrow;
    cl_uint n = (cl_uint)r->n, shapes = (cl_uint)c->count;
    COL_ARG(k, 0, r->params_buf);
    COL_ARG(k, 1, n);
    COL_ARG(k, 2, pos_buf);
    COL_ARG(k, 3, pred_buf);
    COL_ARG(k, 4, c->shape_buf);
    COL_ARG(k, 5, shapes);
    COL_ARG(k, 6, c->plane_buf);
    COL_ARG(k, 7, c->tri_buf);
    COL_ARG(k, 8, c->cell_start_buf);
    COL_ARG(k, 9, c->cell_tris_buf);
    COL_ARG(k, 10, c->contact_plane_buf);
    COL_ARG(k, 11, c->contact_shape_buf);
    COL_ARG(k, 12, c->push_buf);
    COL_ARG(k, 13, c->inside_buf);
    return pbfcl_cl_launch(r->cl, k, r->n, r->wg, prof, PBFCL_STAGE_SOLVE);
}

pbfcl_status pbfcl_colliders_project(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                     cl_mem pos_buf, cl_mem q_buf, cl_mem inv_mass_buf,
                                     pbfcl_profile *prof)
{
    if (!c || c->count == 0 || !c->program)
        return PBFCL_OK;
    cl_kernel k = c->project;
    cl_uint n = (cl_uint)r->n;
    COL_ARG(k, 0, r->params_buf);
    COL_ARG(k, 1, n);
    COL_ARG(k, 2, pos_buf);
    COL_ARG(k, 3, q_buf);
    COL_ARG(k, 4, inv_mass_buf);
    COL_ARG(k, 5, c->shape_buf);
    COL_ARG(k, 6, c->contact_plane_buf);
    COL_ARG(k, 7, c->contact_shape_buf);
    COL_ARG(k, 8, c->push_buf);
    return pbfcl_cl_launch(r->cl, k, r->n, r->wg, prof, PBFCL_STAGE_SOLVE);
}

pbfcl_status pbfcl_colliders_hold(pbfcl_colliders *c, const pbfcl_colliders_run *r, cl_mem pos_buf,
                                  cl_mem pred_buf, cl_mem inv_mass_buf, pbfcl_profile *prof)
{
    return pbfcl_colliders_project(c, r, pos_buf, pred_buf, inv_mass_buf, prof);
}

pbfcl_status pbfcl_colliders_force(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                   cl_mem inv_mass_buf, pbfcl_profile *prof)
{
    if (!c || c->count == 0 || !c->program)
        return PBFCL_OK;
    cl_kernel k = c->force, fold = c->force_fold;
    cl_uint n = (cl_uint)r->n, reset = c->accumulated == 0;
    COL_ARG(k, 0, r->params_buf);
    COL_ARG(k, 1, n);
    COL_ARG(k, 2, inv_mass_buf);
    COL_ARG(k, 3, c->contact_shape_buf);
    COL_ARG(k, 4, c->push_buf);
    COL_ARG(k, 5, c->inside_buf);
    COL_ARG(k, 6, c->sums_buf);
    /* work-groups a partial sum: enough for 4 particles a work-item, at most FORCE_SPLIT */
    size_t want = (r->n + 4 * r->wg * PBFCL_COLLIDER_FORCE_GROUPS - 1) /
                  (4 * r->wg * PBFCL_COLLIDER_FORCE_GROUPS);
    cl_uint per = (cl_uint)(want < 1                            ? 1
                            : want > PBFCL_COLLIDER_FORCE_SPLIT ? PBFCL_COLLIDER_FORCE_SPLIT
                                                                : want);
    COL_ARG(fold, 0, per);
    COL_ARG(fold, 1, c->sums_buf);
    COL_ARG(fold, 2, reset);
    COL_ARG(fold, 3, c->partial_buf);
    COL_ARG(fold, 4, c->pressure_buf);
    size_t global[2] = {PBFCL_COLLIDER_FORCE_GROUPS * per * r->wg, (size_t)c->count};
    size_t local[2] = {r->wg, 1};
    size_t fold_groups = (PBFCL_COLLIDER_FORCE_GROUPS + r->wg - 1) / r->wg; /* 1 if wg >= 16 */
    size_t fold_global[2] = {fold_groups * r->wg, (size_t)c->count};
    cl_event ev[2] = {NULL, NULL};
    PBFCL_TRY(pbfcl_cl_pay_owed(r->cl));
    PBFCL_CL_CHECK(clEnqueueNDRangeKernel(r->cl->queue, k, 2, NULL, global, local, 0, NULL,
                                          prof ? &ev[0] : NULL));
    PBFCL_CL_CHECK(clEnqueueNDRangeKernel(r->cl->queue, fold, 2, NULL, fold_global, local, 0, NULL,
                                          prof ? &ev[1] : NULL));
    if (ev[0])
        pbfcl_profile_add(prof, PBFCL_STAGE_SOLVE, ev[0], k);
    if (ev[1])
        pbfcl_profile_add(prof, PBFCL_STAGE_SOLVE, ev[1], fold);
    c->accumulated = 1;
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_read(pbfcl_colliders *c, pbfcl_cl *cl, int id, float force[3],
                                  unsigned *contacts, unsigned *inside)
{
    int i = pbfcl_colliders_index(c, id);
    if (i < 0) {
        pbfcl_errorf("shape id %d: there is no such shape (destroyed, or never made)", id);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    double sum[5] = {0};
    if (c->accumulated > 0) {
        cl_float4 part[2 * PBFCL_COLLIDER_FORCE_GROUPS];
        size_t at = (size_t)i * sizeof part;
        if (c->partial_buf)
            PBFCL_CL_CHECK(clEnqueueReadBuffer(cl->queue, c->partial_buf, CL_TRUE, at, sizeof part,
                                               part, 0, NULL, NULL));
        else /* loaded, not yet on the device */
            memcpy(part, (const char *)c->pending_forces + at, sizeof part);
        for (int g = 0; g < PBFCL_COLLIDER_FORCE_GROUPS; g++) {
            for (int k = 0; k < 4; k++)
                sum[k] += part[2 * g].s[k];
            sum[4] += part[2 * g + 1].s[0];
        }
    }
    double to_force = c->dt > 0.0f ? -1.0 / ((double)c->dt * c->dt) : 0.0;
    for (int k = 0; force && k < 3; k++)
        force[k] = (float)(sum[k] * to_force);
    if (contacts)
        *contacts = (unsigned)lround(sum[3]);
    if (inside)
        *inside = (unsigned)lround(sum[4]);
    return PBFCL_OK;
}

bool pbfcl_colliders_planes(const pbfcl_colliders *c, cl_mem *planes, cl_mem *shapes, cl_mem *push)
{
    bool on = c && c->count > 0 && c->program && c->contact_plane_buf;
    *planes = on ? c->contact_plane_buf : NULL;
    *shapes = on ? c->contact_shape_buf : NULL;
    *push = on ? c->push_buf : NULL;
    return on;
}

bool pbfcl_colliders_solids(const pbfcl_colliders *c, pbfcl_colliders_solid_view *out)
{
    *out = (pbfcl_colliders_solid_view){0};
    if (!c || c->count == 0 || !c->program || !c->shape_buf)
        return false;
    out->shapes = c->shape_buf;
    out->planes = c->plane_buf;
    out->pressure = c->pressure_buf;
    out->count = (unsigned)c->count;
    out->groups = PBFCL_COLLIDER_FORCE_GROUPS;
    return true;
}

bool pbfcl_colliders_counted(const pbfcl_colliders *c, cl_mem bufs[2], size_t elem[2])
{
    bool on = c && c->count > 0 && c->program && c->contact_shape_buf;
    bufs[0] = on ? c->contact_shape_buf : NULL;
    bufs[1] = on ? c->inside_buf : NULL;
    elem[0] = COL_K * sizeof(cl_int);
    elem[1] = sizeof(cl_uint);
    return on;
}

pbfcl_status pbfcl_colliders_write_contacts(pbfcl_colliders *c, const pbfcl_colliders_run *r,
                                            size_t n, const float *planes4, const int *shapes)
{
    PBFCL_TRY(build(c, r));
    PBFCL_TRY(particle_bufs(c, r->cl, r->capacity));
    size_t rows = r->capacity * COL_K;
    float *push = calloc(rows * 4 + 4, sizeof *push);
    int *none = malloc(rows * sizeof *none + sizeof *none);
    if (!push || !none) {
        free(push);
        free(none);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (size_t k = 0; k < rows; k++)
        none[k] = k < n * COL_K ? shapes[k] : -1;
    cl_int e =
        clEnqueueWriteBuffer(r->cl->queue, c->push_buf, CL_TRUE, 0, rows * 16, push, 0, NULL, NULL);
    if (e == CL_SUCCESS) /* the planes' rows past n: zeros, as the pushes */
        e = clEnqueueWriteBuffer(r->cl->queue, c->contact_plane_buf, CL_TRUE, 0, rows * 16, push, 0,
                                 NULL, NULL);
    if (e == CL_SUCCESS && n)
        e = clEnqueueWriteBuffer(r->cl->queue, c->contact_plane_buf, CL_TRUE, 0, n * COL_K * 16,
                                 planes4, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(r->cl->queue, c->contact_shape_buf, CL_TRUE, 0, rows * 4, none, 0,
                                 NULL, NULL);
    free(push);
    free(none);
    PBFCL_CL_CHECK(e);
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_read_contacts(pbfcl_colliders *c, pbfcl_cl *cl, size_t n,
                                           float *planes4, int *shapes)
{
    if (!c->program || n == 0)
        return PBFCL_OK;
    if (planes4)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(cl->queue, c->contact_plane_buf, CL_TRUE, 0,
                                           n * COL_K * 16, planes4, 0, NULL, NULL));
    if (shapes)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(cl->queue, c->contact_shape_buf, CL_TRUE, 0,
                                           n * COL_K * 4, shapes, 0, NULL, NULL));
    return PBFCL_OK;
}
