/* The host table of a simulation's collision shapes: add (checked), remove, move. */
#include "colliders/colliders_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pbfcl_status pbfcl_colliders_create(pbfcl_colliders **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
}

int pbfcl_colliders_count(const pbfcl_colliders *c)
{
    return c ? c->count : 0;
}

int pbfcl_colliders_index(const pbfcl_colliders *c, int id)
{
    for (int i = 0; c && i < c->count; i++)
        if (c->shape[i].id == id)
            return i;
    return -1;
}

static bool finite_n(const float *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return false;
    return true;
}

/* The unit quaternion of rotation (all zero: none) into q; false if not finite or too short. */
static bool unit_quaternion(const float *rotation, float q[4])
{
    double len = 0.0;
    for (int k = 0; k < 4; k++)
        len += (double)rotation[k] * rotation[k];
    if (len == 0.0) {
        q[0] = q[1] = q[2] = 0.0f;
        q[3] = 1.0f;
        return true;
    }
    if (!finite_n(rotation, 4) || !(len > 1e-12) || !isfinite(len))
        return false;
    for (int k = 0; k < 4; k++)
        q[k] = (float)(rotation[k] / sqrt(len));
    return true;
}

/* Checks and writes a pose and velocities into row (NULL: kept). */
static pbfcl_status set_motion(pbfcl_collider_shape *row, const char *name, const float *position,
                               const float *rotation, const float *velocity,
                               const float *angular_velocity)
{
    float q[4];
    const char *bad = NULL;
    if (position && !finite_n(position, 3))
        bad = "position";
    else if (rotation && !unit_quaternion(rotation, q))
        bad = "rotation (a quaternion x, y, z, w of non-zero length, or all zero for none)";
    else if (velocity && !finite_n(velocity, 3))
        bad = "velocity";
    else if (angular_velocity && !finite_n(angular_velocity, 3))
        bad = "angular velocity";
    if (bad) {
        pbfcl_errorf("%s: its %s is not finite: give finite numbers", name, bad);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (position)
        memcpy(row->position, position, 3 * sizeof(float));
    if (rotation)
        memcpy(row->rotation, q, sizeof q);
    memcpy(row->prev_position, row->position, sizeof row->position); /* a jump, not a move */
    memcpy(row->prev_rotation, row->rotation, sizeof row->rotation);
    if (velocity)
        memcpy(row->velocity, velocity, 3 * sizeof(float));
    if (angular_velocity)
        memcpy(row->angular_velocity, angular_velocity, 3 * sizeof(float));
    return PBFCL_OK;
}

/* The material: friction coefficients and margin, each finite and >= 0. */
static pbfcl_status set_material(pbfcl_collider_shape *row, const char *name,
                                 const pbfcl_shape_desc *d)
{
    const float v[3] = {d->friction, d->static_friction, d->margin};
    const char *what[3] = {"friction", "static friction", "margin"};
    for (int k = 0; k < 3; k++)
        if (!(isfinite(v[k]) && v[k] >= 0.0f)) {
            pbfcl_errorf("%s: its %s is %g: give a finite value of 0 or more", name, what[k],
                         (double)v[k]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    row->friction_dynamic = d->friction;
    row->friction_static = d->static_friction;
    row->margin = d->margin;
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_add(pbfcl_colliders *c, const pbfcl_shape_desc *d, int *id)
{
    char name[64];
    if (d->name)
        snprintf(name, sizeof name, "shape '%s'", d->name);
    else
        snprintf(name, sizeof name, "shape %d", c->next_id);
    if (c->count >= PBFCL_COLLIDER_MAX_SHAPES) {
        pbfcl_errorf("%s: a simulation holds at most %d shapes: destroy one first, or merge "
                     "static shapes into one mesh",
                     name, PBFCL_COLLIDER_MAX_SHAPES);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    collider_entry e = {.id = c->next_id, .moving = d->until > 0.0f ? d->until : INFINITY};
    memcpy(e.name, name, sizeof name);
    if (!(isfinite(d->until) && d->until >= 0.0f)) {
        pbfcl_errorf("%s: its until is %g s: give a finite time of 0 (for ever) or more", name,
                     (double)d->until);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    static const float none[4] = {0};
    PBFCL_TRY(set_motion(&e.row, name, d->position, d->rotation ? d->rotation : none, d->velocity,
                         d->angular_velocity));
    PBFCL_TRY(set_material(&e.row, name, d));
    PBFCL_TRY(pbfcl_collider_geometry_build(d, name, &e.geo));
    e.row.type = e.geo.type;
    e.row.flags = e.geo.flags;
    memcpy(e.row.size, e.geo.size, sizeof e.row.size);
    c->shape[c->count++] = e;
    c->next_id++;
    c->geometry_dirty = true;
    c->accumulated = 0;
    *id = e.id;
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_remove(pbfcl_colliders *c, int id)
{
    int i = pbfcl_colliders_index(c, id);
    if (i < 0) {
        pbfcl_errorf("shape id %d: there is no such shape (destroyed, or never made)", id);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_collider_geometry_free(&c->shape[i].geo);
    memmove(c->shape + i, c->shape + i + 1, (size_t)(c->count - i - 1) * sizeof c->shape[0]);
    c->count--;
    c->geometry_dirty = true;
    c->accumulated = 0;
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_set_motion(pbfcl_colliders *c, int id, const float position[3],
                                        const float rotation[4], const float velocity[3],
                                        const float angular_velocity[3])
{
    int i = pbfcl_colliders_index(c, id);
    if (i < 0) {
        pbfcl_errorf("shape id %d: there is no such shape (destroyed, or never made)", id);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_collider_shape row = c->shape[i].row; /* unchanged if refused */
    PBFCL_TRY(set_motion(&row, c->shape[i].name, position, rotation, velocity, angular_velocity));
    c->shape[i].row = row;
    if (velocity || angular_velocity) /* new velocities move it until changed */
        c->shape[i].moving = INFINITY;
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_get_pose(const pbfcl_colliders *c, int id, float position[3],
                                      float rotation[4])
{
    int i = pbfcl_colliders_index(c, id);
    if (i < 0) {
        pbfcl_errorf("shape id %d: there is no such shape (destroyed, or never made)", id);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (position)
        memcpy(position, c->shape[i].row.position, 3 * sizeof(float));
    if (rotation)
        memcpy(rotation, c->shape[i].row.rotation, 4 * sizeof(float));
    return PBFCL_OK;
}

pbfcl_status pbfcl_colliders_view_at(const pbfcl_colliders *c, int i, pbfcl_collider_view *out)
{
    if (!c || i < 0 || i >= c->count)
        return PBFCL_ERR_BAD_ARGUMENT;
    const collider_entry *e = &c->shape[i];
    out->id = e->id;
    out->name = e->name;
    out->geo = &e->geo;
    memcpy(out->velocity, e->row.velocity, sizeof out->velocity);
    memcpy(out->angular_velocity, e->row.angular_velocity, sizeof out->angular_velocity);
    return PBFCL_OK;
}
