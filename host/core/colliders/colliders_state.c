/* The collision shapes in a saved state (colliders_state.h): each shape's id, name, geometry
 * and row as they are, so that a loaded set continues bit for bit. */
#include "colliders/colliders_state.h"
#include "colliders/colliders_internal.h"

#include <stdlib.h>
#include <string.h>

/* One shape's entry. */
static void entry_of(const collider_entry *e, pbfcl_shape_saved *s)
{
    memset(s, 0, sizeof *s);
    s->id = e->id;
    memcpy(s->name, e->name, sizeof s->name);
    s->name[sizeof s->name - 1] = '\0';
    s->plane_count = (cl_uint)e->geo.plane_count;
    s->tri_count = (cl_uint)e->geo.tri_count;
    if (e->geo.type == PBFCL_COLLIDER_SDF)
        memcpy(s->dims, e->geo.dims, sizeof s->dims);
    memcpy(s->grid_origin, e->geo.grid_origin, sizeof s->grid_origin);
    s->cell = e->geo.cell;
    memcpy(s->lo, e->geo.lo, sizeof s->lo);
    memcpy(s->hi, e->geo.hi, sizeof s->hi);
    s->row = e->row;
    s->moving = e->moving;
}

/* The forces' partial sums of the shapes there are, as they are on the device or still to go
 * there; zeros before the first force stage and past the shapes (never written there). */
static pbfcl_status read_forces(pbfcl_colliders *c, pbfcl_cl *cl, float *out)
{
    size_t used = (size_t)c->count * PBFCL_COLLIDER_FORCE_GROUPS * 2 * 16;
    memset(out, 0, PBFCL_SHAPE_FORCE_FLOATS * sizeof *out);
    if (c->accumulated > 0 && c->partial_buf)
        PBFCL_CL_CHECK(
            clEnqueueReadBuffer(cl->queue, c->partial_buf, CL_TRUE, 0, used, out, 0, NULL, NULL));
    else if (c->accumulated > 0 && c->pending_forces)
        memcpy(out, c->pending_forces, used);
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_save(pbfcl_colliders *c, pbfcl_cl *cl, pbfcl_state_write_fn put,
                                  void *ctx)
{
    pbfcl_shapes_saved h = {0};
    if (c)
        h = (pbfcl_shapes_saved){(cl_uint)c->count, (cl_uint)c->next_id, c->accumulated > 0, c->dt};
    PBFCL_TRY(put(ctx, "shapes", &h, sizeof h));
    if (h.count == 0)
        return PBFCL_OK;
    size_t planes = 0, tris = 0;
    for (int i = 0; i < c->count; i++) {
        planes += c->shape[i].geo.plane_count;
        tris += c->shape[i].geo.tri_count;
    }
    if (planes * 16 + tris * 48 > PBFCL_SHAPES_MAX_SAVED_BYTES) {
        pbfcl_errorf("the shapes' geometry is %zu MB, more than a saved state holds (%llu MB): "
                     "give the SDFs a lower resolution or the meshes fewer triangles",
                     (planes * 16 + tris * 48) >> 20, PBFCL_SHAPES_MAX_SAVED_BYTES >> 20);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_shape_saved *e = malloc(h.count * sizeof *e);
    float *pl = malloc(planes * 16 + 16), *tr = malloc(tris * 48 + 16);
    float *forces = malloc(PBFCL_SHAPE_FORCE_FLOATS * sizeof *forces);
    pbfcl_status st = e && pl && tr && forces ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    size_t p0 = 0, t0 = 0;
    for (int i = 0; st == PBFCL_OK && i < c->count; i++) {
        const pbfcl_collider_geometry *g = &c->shape[i].geo;
        entry_of(&c->shape[i], e + i);
        if (g->plane_count)
            memcpy(pl + 4 * p0, g->planes, g->plane_count * 16);
        if (g->tri_count)
            memcpy(tr + 12 * t0, g->tris, g->tri_count * 48);
        p0 += g->plane_count;
        t0 += g->tri_count;
    }
    if (st == PBFCL_OK)
        st = put(ctx, "shape_entries", e, h.count * sizeof *e);
    if (st == PBFCL_OK && planes)
        st = put(ctx, "shape_planes", pl, planes * 16);
    if (st == PBFCL_OK && tris)
        st = put(ctx, "shape_triangles", tr, tris * 48);
    if (st == PBFCL_OK)
        st = read_forces(c, cl, forces);
    if (st == PBFCL_OK)
        st = put(ctx, "shape_forces", forces, PBFCL_SHAPE_FORCE_FLOATS * sizeof *forces);
    free(e);
    free(pl);
    free(tr);
    free(forces);
    return st;
}

/* Shape s's geometry from its entry and its planes and triangles (a mesh's grid made again). */
static pbfcl_status geometry_of(const pbfcl_shape_saved *s, const float *pl, const float *tr,
                                pbfcl_collider_geometry *g)
{
    memset(g, 0, sizeof *g);
    g->type = s->row.type;
    g->flags = s->row.flags;
    memcpy(g->size, s->row.size, sizeof g->size);
    memcpy(g->lo, s->lo, sizeof g->lo);
    memcpy(g->hi, s->hi, sizeof g->hi);
    memcpy(g->grid_origin, s->grid_origin, sizeof g->grid_origin);
    g->cell = s->cell;
    memcpy(g->dims, s->dims, sizeof g->dims);
    g->plane_count = s->plane_count;
    g->tri_count = s->tri_count;
    if ((g->plane_count && !(g->planes = malloc(g->plane_count * 16))) ||
        (g->tri_count && !(g->tris = malloc(g->tri_count * 48))))
        return PBFCL_ERR_OUT_OF_MEMORY;
    if (g->plane_count)
        memcpy(g->planes, pl, g->plane_count * 16);
    if (g->tri_count)
        memcpy(g->tris, tr, g->tri_count * 48);
    return g->type == PBFCL_COLLIDER_MESH ? pbfcl_collider_mesh_grid(g) : PBFCL_OK;
}

/* The saved sections after the header: entries, planes, triangles, forces, into *e, *pl, *tr
 * and forces (free the three arrays). */
static pbfcl_status read_sections(const pbfcl_shapes_saved *h, pbfcl_state_read_fn get, void *ctx,
                                  pbfcl_shape_saved **e, float **pl, float **tr, float *forces)
{
    *pl = *tr = NULL;
    if (!(*e = malloc(h->count * sizeof **e)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(get(ctx, "shape_entries", *e, h->count * sizeof **e));
    size_t planes = 0, tris = 0;
    for (cl_uint i = 0; i < h->count; i++) {
        planes += (*e)[i].plane_count;
        tris += (*e)[i].tri_count;
    }
    if (!(*pl = malloc(planes * 16 + 16)) || !(*tr = malloc(tris * 48 + 16)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    if (planes)
        PBFCL_TRY(get(ctx, "shape_planes", *pl, planes * 16));
    if (tris)
        PBFCL_TRY(get(ctx, "shape_triangles", *tr, tris * 48));
    return get(ctx, "shape_forces", forces, PBFCL_SHAPE_FORCE_FLOATS * sizeof *forces);
}

/* Replaces c's shapes with the n saved entries e over planes pl and triangles tr. */
static pbfcl_status adopt(pbfcl_colliders *c, const pbfcl_shape_saved *e, cl_uint n,
                          const float *pl, const float *tr)
{
    for (int i = 0; i < c->count; i++)
        pbfcl_collider_geometry_free(&c->shape[i].geo);
    c->count = 0;
    c->geometry_dirty = true;
    for (cl_uint i = 0; i < n; i++) {
        collider_entry *s = &c->shape[c->count];
        memset(s, 0, sizeof *s);
        s->id = e[i].id;
        memcpy(s->name, e[i].name, sizeof s->name);
        s->row = e[i].row;
        s->moving = e[i].moving;
        pbfcl_status st = geometry_of(e + i, pl, tr, &s->geo);
        if (st != PBFCL_OK) {
            pbfcl_collider_geometry_free(&s->geo);
            return st;
        }
        c->count++;
        pl += 4 * (size_t)e[i].plane_count;
        tr += 12 * (size_t)e[i].tri_count;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_load(pbfcl_colliders *c, pbfcl_cl *cl, pbfcl_state_read_fn get,
                                  void *ctx)
{
    pbfcl_shapes_saved h;
    PBFCL_TRY(get(ctx, "shapes", &h, sizeof h));
    pbfcl_shape_saved *e = NULL;
    float *pl = NULL, *tr = NULL, *forces = malloc(PBFCL_SHAPE_FORCE_FLOATS * sizeof *forces);
    pbfcl_status st = forces ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && h.count)
        st = read_sections(&h, get, ctx, &e, &pl, &tr, forces);
    if (st == PBFCL_OK)
        st = adopt(c, e, h.count, pl, tr);
    if (st == PBFCL_OK) {
        c->next_id = (int)h.next_id;
        c->accumulated = h.count && h.accumulated;
        c->dt = h.dt;
        free(c->pending_forces);
        c->pending_forces = NULL;
        if (c->accumulated && c->partial_buf) /* the set's device sums: now, else at its build */
            st = pbfcl_colliders_write_forces(c, cl, forces);
        else if (c->accumulated) {
            c->pending_forces = forces;
            forces = NULL;
        }
    }
    free(e);
    free(pl);
    free(tr);
    free(forces);
    return st;
}
