/* Checks of the collision shapes of a saved state (colliders/colliders_state.h): counts and
 * ids, each shape's kind, flags, sizes, pose, material and geometry's sizes, before the
 * sections they size are read, then every plane, node, triangle and sum finite. */
#include "sim/state_check_internal.h"

#include "colliders/colliders_state.h"

#include <math.h>
#include <string.h>

/* The floats of a shape's row: pose, previous pose, velocities, size, bounds, grid origin. */
static pbfcl_status check_row_floats(const state_check_ctx *c, const pbfcl_collider_shape *r,
                                     long long i)
{
    const float *v[] = {r->position,         r->rotation,   r->prev_position, r->prev_rotation,
                        r->velocity,         r->size,       r->bounds_min,    r->bounds_max,
                        r->angular_velocity, r->grid_origin};
    static const char *const names[] = {
        "position", "rotation",   "prev_position", "prev_rotation",    "velocity",
        "size",     "bounds_min", "bounds_max",    "angular_velocity", "grid_origin"};
    for (int k = 0; k < 10; k++)
        for (int l = 0; l < 4; l++)
            if (!isfinite(v[k][l]))
                return state_check_damaged("shape_entries", names[k], i,
                                           "%c is %g; it must be a finite number", "xyzw"[l],
                                           v[k][l]);
    const float *q[2] = {r->rotation, r->prev_rotation};
    for (int k = 0; k < 2; k++) {
        double len = sqrt((double)q[k][0] * q[k][0] + (double)q[k][1] * q[k][1] +
                          (double)q[k][2] * q[k][2] + (double)q[k][3] * q[k][3]);
        if (fabs(len - 1.0) > 1e-3)
            return state_check_damaged("shape_entries", k ? "prev_rotation" : "rotation", i,
                                       "has length %g; a rotation is a unit quaternion", len);
    }
    const float m[3] = {r->friction_static, r->friction_dynamic, r->margin};
    for (int k = 0; k < 3; k++)
        if (!(isfinite(m[k]) && m[k] >= 0.0f))
            return state_check_damaged("shape_entries", "friction and margin", i,
                                       "are %g, %g, %g; each must be finite and 0 or more", m[0],
                                       m[1], m[2]);
    (void)c;
    return PBFCL_OK;
}

/* The sizes a shape of its kind has: a primitive's size above 0 and no planes or triangles; a
 * hull's 4 or more planes; a mesh's triangles; an SDF's nodes, dims and cell. */
static pbfcl_status check_kind(const pbfcl_shape_saved *s, long long i)
{
    const pbfcl_collider_shape *r = &s->row;
    unsigned type = r->type;
    bool prim = type <= PBFCL_COLLIDER_BOX, convex = type == PBFCL_COLLIDER_CONVEX;
    bool mesh = type == PBFCL_COLLIDER_MESH, sdf = type == PBFCL_COLLIDER_SDF;
    if (type > PBFCL_COLLIDER_SDF)
        return state_check_damaged("shape_entries", "type", i, "is %u; give 0 to %u", type,
                                   PBFCL_COLLIDER_SDF);
    if (r->flags > (mesh ? PBFCL_COLLIDER_TWO_SIDED : 0u))
        return state_check_damaged("shape_entries", "flags", i, "are %u for a shape of type %u",
                                   r->flags, type);
    int sizes = type == PBFCL_COLLIDER_BOX ? 3 : (type == PBFCL_COLLIDER_CAPSULE ? 2 : 1);
    for (int k = 0; prim && k < sizes; k++)
        if (!(r->size[k] > 0.0f))
            return state_check_damaged("shape_entries", "size", i, "is %g; give above 0",
                                       r->size[k]);
    size_t nodes = (size_t)s->dims[0] * s->dims[1] * s->dims[2];
    bool planes_ok = prim || mesh ? s->plane_count == 0
                     : convex ? s->plane_count >= 4 && s->plane_count <= PBFCL_SHAPE_HULL_MAX_PLANES
                              : s->plane_count == nodes;
    bool tris_ok = mesh ? s->tri_count >= 1 && s->tri_count <= PBFCL_SHAPE_MESH_MAX_TRIANGLES
                        : s->tri_count == 0;
    if (!planes_ok || !tris_ok)
        return state_check_damaged("shape_entries", "plane and triangle counts", i,
                                   "are %u and %u for a shape of type %u", s->plane_count,
                                   s->tri_count, type);
    for (int k = 0; sdf && k < 3; k++)
        if (s->dims[k] < 2 || s->dims[k] > PBFCL_SHAPE_SDF_MAX_NODES)
            return state_check_damaged("shape_entries", "dims", i, "are %u, %u, %u; give 2 to %d",
                                       s->dims[0], s->dims[1], s->dims[2],
                                       PBFCL_SHAPE_SDF_MAX_NODES);
    if (sdf && !(isfinite(s->cell) && s->cell > 0.0f))
        return state_check_damaged("shape_entries", "cell", i, "is %g; give above 0", s->cell);
    return PBFCL_OK;
}

/* One entry: its id unique and below next_id, its name ended, its kind, floats and bounds. */
static pbfcl_status check_entry(const state_check_ctx *c, const pbfcl_shape_saved *e, size_t i,
                                cl_uint next_id)
{
    const pbfcl_shape_saved *s = e + i;
    if (s->id < 0 || (cl_uint)s->id >= next_id)
        return state_check_damaged("shape_entries", "id", (long long)i,
                                   "is %d; give 0 to the next id less 1, %u", s->id, next_id);
    for (size_t j = 0; j < i; j++)
        if (e[j].id == s->id)
            return state_check_damaged("shape_entries", "id", (long long)i,
                                       "is %d, as is shape %zu's", s->id, j);
    if (!memchr(s->name, '\0', sizeof s->name))
        return state_check_damaged("shape_entries", "name", (long long)i,
                                   "does not end within its %zu bytes", sizeof s->name);
    PBFCL_TRY(check_kind(s, (long long)i));
    PBFCL_TRY(check_row_floats(c, &s->row, (long long)i));
    if (!(isfinite(s->grid_origin[0]) && isfinite(s->grid_origin[1]) &&
          isfinite(s->grid_origin[2]) && isfinite(s->cell)))
        return state_check_damaged("shape_entries", "grid", (long long)i,
                                   "has its origin or cell not finite");
    if (!(s->moving >= 0.0f)) /* +infinity: for ever */
        return state_check_damaged("shape_entries", "moving", (long long)i,
                                   "is %g s; give 0 or more", s->moving);
    for (int k = 0; k < 3; k++)
        if (!(isfinite(s->lo[k]) && isfinite(s->hi[k]) && s->lo[k] <= s->hi[k]))
            return state_check_damaged("shape_entries", "bounds", (long long)i,
                                       "are %g to %g along axis %d; give finite bounds in order",
                                       s->lo[k], s->hi[k], k);
    return PBFCL_OK;
}

/* A hull's planes: unit normals. */
static pbfcl_status check_planes(const pbfcl_shape_saved *e, cl_uint n, const float *pl)
{
    for (cl_uint i = 0; i < n; pl += 4 * (size_t)e[i].plane_count, i++)
        for (cl_uint k = 0; e[i].row.type == PBFCL_COLLIDER_CONVEX && k < e[i].plane_count; k++) {
            const float *p = pl + 4 * k;
            double len = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
            if (fabs(len - 1.0) > 1e-3)
                return state_check_damaged("shape_planes", "normal", (long long)k,
                                           "of shape %u has length %g; a plane's is 1", i, len);
        }
    return PBFCL_OK;
}

pbfcl_status state_check_shapes(state_check_ctx *c)
{
    if (c->lim->method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    void *data;
    PBFCL_TRY(state_check_take(c, "shapes", sizeof(pbfcl_shapes_saved), &data));
    pbfcl_shapes_saved h;
    memcpy(&h, data, sizeof h);
    if (h.count > PBFCL_COLLIDER_MAX_SHAPES || h.accumulated > 1 || h.next_id > INT32_MAX ||
        !(isfinite(h.dt) && h.dt >= 0.0f))
        return state_check_damaged("shapes", "count, accumulated, next id and dt", -1,
                                   "are %u, %u, %u, %g; give at most %d shapes, a flag 0 or 1, an "
                                   "id that fits an int and a dt of 0 or more",
                                   h.count, h.accumulated, h.next_id, h.dt,
                                   PBFCL_COLLIDER_MAX_SHAPES);
    if (h.count == 0)
        return PBFCL_OK;
    PBFCL_TRY(state_check_take(c, "shape_entries", h.count * sizeof(pbfcl_shape_saved), &data));
    const pbfcl_shape_saved *e = data;
    size_t planes = 0, tris = 0;
    for (cl_uint i = 0; i < h.count; i++) {
        PBFCL_TRY(check_entry(c, e, i, h.next_id));
        planes += e[i].plane_count; /* each bounded above: no overflow */
        tris += e[i].tri_count;
    }
    if (planes * 16 + tris * 48 > PBFCL_SHAPES_MAX_SAVED_BYTES)
        return state_check_damaged("shape_entries", "plane and triangle counts", -1,
                                   "add up to %zu MB; a saved state holds at most %llu MB",
                                   (planes * 16 + tris * 48) >> 20,
                                   PBFCL_SHAPES_MAX_SAVED_BYTES >> 20);
    void *pl = NULL, *tr = NULL, *forces;
    if (planes) {
        PBFCL_TRY(state_check_take(c, "shape_planes", planes * 16, &pl));
        PBFCL_TRY(state_check_floats(c, "shape_planes", "value", pl, planes, 4, CHECK_FINITE));
        PBFCL_TRY(check_planes(e, h.count, pl));
    }
    if (tris) {
        PBFCL_TRY(state_check_take(c, "shape_triangles", tris * 48, &tr));
        PBFCL_TRY(
            state_check_floats(c, "shape_triangles", "corner", tr, tris * 3, 4, CHECK_FINITE));
    }
    PBFCL_TRY(state_check_take(c, "shape_forces", PBFCL_SHAPE_FORCE_FLOATS * 4, &forces));
    return state_check_floats(c, "shape_forces", "sum", forces, PBFCL_SHAPE_FORCE_FLOATS / 4, 4,
                              CHECK_FINITE);
}
