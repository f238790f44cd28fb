/* The checks of a saved state's body and path tables (see state_check.h): the bodies'
 * entries, ranges, rest shapes, poses and stiffness against the phases; the paths' counts,
 * entries in id order on static particles, offsets, motions, keys and clock. */
#include "sim/state_check_internal.h"

#include "scene/scene.h"
#include "bodies/shape_match.h"

#include <math.h>
#include <stdlib.h>

/* The shape-matching tables: entries by body, each body's range, finite shapes and poses,
 * the phases of the entries' particles. */

static pbfcl_status check_entries(state_check_ctx *c, size_t bodies, size_t entries,
                                  const unsigned *id, const unsigned *body, const unsigned *range)
{
    for (size_t e = 0; e < entries; e++) {
        if (id[e] >= c->n)
            return state_check_damaged("body_entry_ids", "id", (long long)e,
                                       "is %u, not below the particle count %zu", id[e], c->n);
        if (body[e] >= bodies || (e > 0 && body[e] != body[e - 1] && body[e] != body[e - 1] + 1) ||
            (e == 0 && body[e] != 0))
            return state_check_damaged("body_entry_bodies", "body", (long long)e,
                                       "is %u; entries name bodies 0 to %zu in order, without gaps",
                                       body[e], bodies - 1);
        if (c->body_of[id[e]] != (int)body[e])
            return state_check_damaged("body_entry_ids", "id", (long long)e,
                                       "is particle %u, of phase %d in 'particle_phases', not "
                                       "body %u's (group %u)",
                                       id[e], c->phases[id[e]], body[e], body[e] + 1);
    }
    for (size_t b = 0; b < bodies; b++) {
        size_t first = range[2 * b], end = range[2 * b + 1];
        bool ok = first < end && end <= entries && body[first] == b && body[end - 1] == b &&
                  (first == 0 || body[first - 1] != b) && (end == entries || body[end] != b);
        if (!ok || end - first < PBFCL_SHAPE_MATCH_MIN_PARTICLES)
            return state_check_damaged(
                "body_ranges", "range", (long long)b,
                "is entries %zu to %zu of %zu, not body %zu's entries (at least %d)", first, end,
                entries, b, PBFCL_SHAPE_MATCH_MIN_PARTICLES);
    }
    return PBFCL_OK;
}

/* The body tables' sections in the order of sm_state_buffers, with what their floats hold. */
static const state_check_buffer check_body_buffers[] = {
    {"body_entry_ids", "id", 0, 4, CHECK_FINITE, 0},
    {"body_entry_bodies", "body", 0, 4, CHECK_FINITE, 0},
    {"body_rest_offsets", "offset", 0, 16, CHECK_OFFSET, 0},
    {"body_ranges", "range", 8, 0, CHECK_FINITE, 0},
    {"body_centres", "centre", 16, 0, CHECK_IN_BOX, 0},
    {"body_rotations", "rotation", 64, 0, CHECK_FINITE, 0},
    {"body_stiffness", "stiffness", 4, 0, CHECK_POSITIVE, 0},
    {"body_inertia", "inertia", 32, 0, CHECK_FINITE, 0},
    {"body_motion", "motion", 64, 0, CHECK_FINITE, 0},
};
#define CHECK_BODY_BUFFERS (sizeof check_body_buffers / sizeof check_body_buffers[0])

pbfcl_status state_check_bodies(state_check_ctx *c)
{
    void *data;
    PBFCL_TRY(state_check_take(c, "bodies", sizeof(check_sm_counts), &data));
    check_sm_counts k = *(const check_sm_counts *)data;
    size_t in_bodies = 0;
    bool *named = calloc(c->bodies + 1, sizeof *named);
    if (!named)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < c->n; i++) {
        in_bodies += c->body_of[i] >= 0;
        named[c->body_of[i] >= 0 ? c->body_of[i] + 1 : 0] = true;
    }
    size_t unnamed = 1;
    while (unnamed <= c->bodies && named[unnamed])
        unnamed++;
    free(named);
    if (unnamed <= c->bodies)
        return state_check_damaged("bodies", "bodies", -1,
                                   "is %zu but no particle has body %zu's phase %zu", c->bodies,
                                   unnamed - 1, unnamed);
    if (k.entries != in_bodies)
        return state_check_damaged("bodies", "entries", -1,
                                   "is %llu but the phases put %zu particles in bodies",
                                   (unsigned long long)k.entries, in_bodies);
    if (k.bodies == 0)
        return PBFCL_OK;
    void *t[CHECK_BODY_BUFFERS];
    for (size_t b = 0; b < CHECK_BODY_BUFFERS; b++) {
        const state_check_buffer *s = &check_body_buffers[b];
        size_t bytes = s->fixed * (size_t)k.entries + s->per_particle * (size_t)k.bodies;
        PBFCL_TRY(state_check_take(c, s->name, bytes, &t[b]));
        if (b >= 2 && b != 3)
            PBFCL_TRY(state_check_floats(c, s->name, s->field, t[b], bytes / 4 / (b == 6 ? 1 : 4),
                                         b == 6 ? 1 : 4, s->kind));
    }
    const float *stiffness = t[6];
    for (size_t b = 0; b < k.bodies; b++)
        if (stiffness[b] > 1.0f)
            return state_check_damaged("body_stiffness", "stiffness", (long long)b,
                                       "is %g; a stiffness is above 0 and at most 1", stiffness[b]);
    return check_entries(c, (size_t)k.bodies, (size_t)k.entries, t[0], t[1], t[3]);
}

/* The "paths" section and the kinematic tables: counts bounded by the particles, entries in
 * the order of their ids naming static particles, each on a path that exists, finite offsets,
 * motions and keys, each path's keys within the saved ones. */
typedef struct check_path_head {
    uint64_t paths, entries, keys;
    double time;
} check_path_head;

static pbfcl_status check_path_counts(const state_check_ctx *c, const check_path_head *h)
{
    if ((h->paths == 0) != (h->entries == 0) || h->entries > c->n || h->paths > h->entries ||
        h->keys < h->paths || h->keys > h->paths * (PBFCL_MAX_PATH_KEYS + 1))
        return state_check_damaged(
            "paths", "paths, entries and keys", -1,
            "are %llu, %llu and %llu; a path has particles (at most the %zu there "
            "are) and 1 to %d keys",
            (unsigned long long)h->paths, (unsigned long long)h->entries,
            (unsigned long long)h->keys, c->n, PBFCL_MAX_PATH_KEYS + 1);
    if (!isfinite(h->time) || h->time < 0.0)
        return state_check_damaged("paths", "time", -1,
                                   "is %g s; it must be a finite time of 0 or more", h->time);
    return PBFCL_OK;
}

static pbfcl_status check_path_entries(const state_check_ctx *c, const check_path_head *h,
                                       const unsigned *id, const float *offset)
{
    PBFCL_TRY(state_check_floats(c, "path_offsets", "offset", offset, (size_t)h->entries, 4,
                                 CHECK_OFFSET));
    for (size_t e = 0; e < h->entries; e++) {
        if (id[e] >= c->n || (e > 0 && id[e] <= id[e - 1]))
            return state_check_damaged("path_entry_ids", "id", (long long)e,
                                       "is %u; ids are below the particle count %zu and increase",
                                       id[e], c->n);
        if (c->body_of[id[e]] != CHECK_NOT_BODY_STATIC)
            return state_check_damaged("path_entry_ids", "id", (long long)e,
                                       "is particle %u, of phase %d; a moving obstacle's "
                                       "particles are static",
                                       id[e], c->phases[id[e]]);
        float w = offset[4 * e + 3];
        if (!(w >= 0.0f && w < (float)h->paths && w == floorf(w)))
            return state_check_damaged("path_offsets", "path", (long long)e,
                                       "is %g; give a path 0 to %llu", w,
                                       (unsigned long long)h->paths - 1);
    }
    return PBFCL_OK;
}

pbfcl_status state_check_paths(state_check_ctx *c)
{
    void *data, *id, *offset, *motion, *keys;
    PBFCL_TRY(state_check_take(c, "paths", sizeof(check_path_head), &data));
    check_path_head h = *(const check_path_head *)data;
    PBFCL_TRY(check_path_counts(c, &h));
    if (h.entries == 0)
        return PBFCL_OK;
    PBFCL_TRY(state_check_take(c, "path_entry_ids", 4 * (size_t)h.entries, &id));
    PBFCL_TRY(state_check_take(c, "path_offsets", 16 * (size_t)h.entries, &offset));
    PBFCL_TRY(state_check_take(c, "path_motions", 64 * (size_t)h.paths, &motion));
    PBFCL_TRY(state_check_take(c, "path_keys", 32 * (size_t)h.keys, &keys));
    PBFCL_TRY(check_path_entries(c, &h, id, offset));
    PBFCL_TRY(state_check_floats(c, "path_motions", "motion", motion, 4 * (size_t)h.paths, 4,
                                 CHECK_FINITE));
    PBFCL_TRY(state_check_floats(c, "path_keys", "key", keys, 2 * (size_t)h.keys, 4, CHECK_FINITE));
    for (size_t p = 0; p < h.paths; p++) {
        const float *r = (const float *)motion + 16 * p + 12; /* first key, keys */
        if (!(r[0] >= 0.0f && r[1] >= 1.0f && r[0] == floorf(r[0]) && r[1] == floorf(r[1]) &&
              (double)r[0] + r[1] <= (double)h.keys))
            return state_check_damaged(
                "path_motions", "keys", (long long)p,
                "are %g to %g; a path's keys are whole numbers within the %llu saved", r[0],
                r[0] + r[1], (unsigned long long)h.keys);
    }
    return PBFCL_OK;
}
