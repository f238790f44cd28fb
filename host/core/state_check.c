/* Checks of a saved solver state (see state_check.h): the sections are read into host memory,
 * each field is checked against the particle count, the bodies and the domain, and the first
 * bad one is named. The sections and what each field holds are those of the state tables of
 * sim.c (sim_state_buffers), shape_match.c (sm_state_buffers) and kinematic.c
 * (kin_state_buffers); test_api's state_check_covers_every_section holds the lists together. */
#include "state_check.h"

#include "scene.h"
#include "shape_match.h"
#include "sim.h"
#include "sim_state.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_MAX_OWNED 32

typedef struct check {
    pbfcl_state_read_fn get;
    void *ctx;
    const pbfcl_state_limits *lim;
    size_t n;
    void *owned[CHECK_MAX_OWNED];
    int owned_count;
    const unsigned *ids;    /* "ids": the caller's index of each particle, in the solver's order */
    const int *phases;      /* "particle_phases", in the caller's order */
    size_t statics, bodies; /* particles of phase PBFCL_PHASE_STATIC; bodies the phases name */
} check;

/* Logs that field (index: its element, or -1) of section is bad and what it holds. */
static pbfcl_status damaged(const char *section, const char *field, long long index,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static pbfcl_status damaged(const char *section, const char *field, long long index,
                            const char *fmt, ...)
{
    char what[256], at[32] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (index >= 0)
        snprintf(at, sizeof at, "[%lld]", index);
    pbfcl_errorf("the saved state is damaged: section '%s', %s%s %s; it cannot be loaded (save "
                 "the state again)",
                 section, field, at, what);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* Reads section name (bytes bytes) into *out, freed with the check. */
static pbfcl_status take(check *c, const char *name, size_t bytes, void **out)
{
    if (c->owned_count == CHECK_MAX_OWNED)
        return PBFCL_ERR_OUT_OF_MEMORY;
    void *data = malloc(bytes ? bytes : 1);
    if (!data)
        return PBFCL_ERR_OUT_OF_MEMORY;
    c->owned[c->owned_count++] = data;
    *out = data;
    return c->get(c->ctx, name, data, bytes);
}

float pbfcl_state_margin(const pbfcl_state_limits *lim, int axis)
{
    return lim->box_max[axis] - lim->box_min[axis];
}

/* What a float field may hold. */
typedef enum check_kind {
    CHECK_FINITE,  /* any finite value */
    CHECK_NONNEG,  /* finite and 0 or more */
    CHECK_IN_BOX,  /* x, y, z inside the box and its margin, the rest finite */
    CHECK_OFFSET,  /* x, y, z an offset within the box and its margins, the rest finite */
    CHECK_POSITIVE /* finite and above 0 */
} check_kind;

static bool float_ok(const check *c, check_kind kind, float v, int lane)
{
    if (!isfinite(v))
        return false;
    switch (kind) {
    case CHECK_NONNEG:
        return v >= 0.0f;
    case CHECK_POSITIVE:
        return v > 0.0f;
    case CHECK_IN_BOX:
        return lane > 2 || (v >= c->lim->box_min[lane] - pbfcl_state_margin(c->lim, lane) &&
                            v <= c->lim->box_max[lane] + pbfcl_state_margin(c->lim, lane));
    case CHECK_OFFSET:
        return lane > 2 || fabsf(v) <= 3.0f * pbfcl_state_margin(c->lim, lane);
    default:
        return true;
    }
}

/* Checks count elements of lanes floats each. */
static pbfcl_status check_floats(const check *c, const char *section, const char *field,
                                 const float *v, size_t count, int lanes, check_kind kind)
{
    static const char *const lane_names[] = {"x", "y", "z", "w"};
    for (size_t i = 0; i < count; i++)
        for (int l = 0; l < lanes; l++) {
            float x = v[i * (size_t)lanes + (size_t)l];
            if (float_ok(c, kind, x, l))
                continue;
            const char *lane = lanes == 4 ? lane_names[l] : "";
            if (kind == CHECK_IN_BOX && isfinite(x) && l < 3)
                return damaged(section, field, (long long)i,
                               "%s is %g m, outside the domain [%g, %g] and its margin of %g m",
                               lane, x, c->lim->box_min[l], c->lim->box_max[l],
                               pbfcl_state_margin(c->lim, l));
            if (kind == CHECK_OFFSET && isfinite(x) && l < 3)
                return damaged(section, field, (long long)i,
                               "%s is %g m, farther than the domain with its margins (%g m)", lane,
                               x, 3.0f * pbfcl_state_margin(c->lim, l));
            return damaged(section, field, (long long)i, "%s%sis %g; it must be %s", lane,
                           lanes == 4 ? " " : "", x,
                           kind == CHECK_NONNEG     ? "a finite number of 0 or more"
                           : kind == CHECK_POSITIVE ? "a finite number above 0"
                                                    : "a finite number");
        }
    return PBFCL_OK;
}

/* The solver's per-particle and fixed sections: size, what their floats hold, methods. */
typedef struct check_buffer {
    const char *name, *field;
    size_t per_particle, fixed;
    check_kind kind;
    unsigned methods; /* bit m: method m has it */
} check_buffer;

#define ALL_METHODS ((1u << PBFCL_METHOD_PBF) | (1u << PBFCL_METHOD_SPH))
#define PBF_ONLY (1u << PBFCL_METHOD_PBF)
static const check_buffer check_buffers[] = {
    {"positions", "position", 16, 0, CHECK_IN_BOX, ALL_METHODS},
    {"predicted_positions", "position", 16, 0, CHECK_IN_BOX, PBF_ONLY},
    {"velocities", "velocity", 16, 0, CHECK_FINITE, ALL_METHODS},
    {"vorticity_forces", "force", 16, 0, CHECK_FINITE, PBF_ONLY},
    {"vorticity", "vorticity", 16, 0, CHECK_FINITE, PBF_ONLY},
    {"lambdas", "lambda", 16, 0, CHECK_FINITE, PBF_ONLY},
    {"corrected_positions", "position", 16, 0, CHECK_FINITE, PBF_ONLY},
    {"densities", "density", 4, 0, CHECK_NONNEG, ALL_METHODS},
    {"inverse_masses", "inverse mass", 4, 0, CHECK_NONNEG, ALL_METHODS},
    {"substep_bounds", "bound", 0, 12, CHECK_NONNEG, ALL_METHODS},
    {"largest_acceleration", "acceleration", 0, 4, CHECK_NONNEG, ALL_METHODS},
};
#define CHECK_BUFFER_COUNT (sizeof check_buffers / sizeof check_buffers[0])

static pbfcl_status check_float_buffers(check *c)
{
    for (size_t k = 0; k < CHECK_BUFFER_COUNT; k++) {
        const check_buffer *b = &check_buffers[k];
        if (!((b->methods >> c->lim->method) & 1u))
            continue;
        size_t bytes = b->per_particle ? b->per_particle * c->n : b->fixed;
        void *data;
        PBFCL_TRY(take(c, b->name, bytes, &data));
        int lanes = b->per_particle == 16 ? 4 : 1;
        PBFCL_TRY(
            check_floats(c, b->name, b->field, data, bytes / (4 * (size_t)lanes), lanes, b->kind));
    }
    return PBFCL_OK;
}

/* "ids": each particle's index in the caller's order, each below the count and none twice. */
static pbfcl_status check_ids(check *c)
{
    void *data;
    PBFCL_TRY(take(c, "ids", c->n * 4, &data));
    const unsigned *ids = data;
    unsigned char *seen = calloc(c->n ? c->n : 1, 1);
    if (!seen)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t i = 0; i < c->n && st == PBFCL_OK; i++) {
        if (ids[i] >= c->n)
            st = damaged("ids", "id", (long long)i, "is %u, not below the particle count %zu",
                         ids[i], c->n);
        else if (seen[ids[i]]++)
            st =
                damaged("ids", "id", (long long)i, "is %u, which another particle has too", ids[i]);
    }
    free(seen);
    c->ids = ids;
    return st;
}

/* The "bodies" section: how many bodies and entries the body tables hold. */
typedef struct check_sm_counts {
    uint64_t bodies, entries;
} check_sm_counts;

/* "particle_phases" (caller's order): fluid, static or a body of the "bodies" section's. */
static pbfcl_status check_particle_phases(check *c)
{
    void *data, *counts;
    PBFCL_TRY(take(c, "bodies", sizeof(check_sm_counts), &counts));
    uint64_t bodies = ((const check_sm_counts *)counts)->bodies;
    if (bodies > c->n)
        return damaged("bodies", "bodies", -1, "is %llu, more than the %zu particles",
                       (unsigned long long)bodies, c->n);
    if (bodies > 0 && c->lim->method != PBFCL_METHOD_PBF)
        return damaged("bodies", "bodies", -1,
                       "is %llu but the state's method is %s; bodies "
                       "need pbf",
                       (unsigned long long)bodies, pbfcl_method_name(c->lim->method));
    c->bodies = (size_t)bodies;
    PBFCL_TRY(take(c, "particle_phases", c->n * sizeof(int), &data));
    const int *p = data;
    for (size_t i = 0; i < c->n; i++) {
        if (p[i] < PBFCL_PHASE_STATIC || (p[i] > 0 && (size_t)p[i] > c->bodies))
            return damaged("particle_phases", "phase", (long long)i,
                           "is %d; a phase is -1 (static), 0 (fluid) or a body's 1 to %zu (the "
                           "state has %zu bodies)",
                           p[i], c->bodies, c->bodies);
        c->statics += p[i] == PBFCL_PHASE_STATIC;
    }
    c->phases = p;
    return PBFCL_OK;
}

/* "phases" (the solver's order) says what "particle_phases" says of the same particle. */
static pbfcl_status check_device_phases(check *c)
{
    void *data, *masses;
    PBFCL_TRY(take(c, "phases", c->n * 4, &data));
    PBFCL_TRY(take(c, "inverse_masses", c->n * 4, &masses));
    const unsigned *d = data;
    const float *w = masses;
    for (size_t i = 0; i < c->n; i++) {
        int p = c->phases[c->ids[i]];
        unsigned want = p == PBFCL_PHASE_STATIC ? PBFCL_SIM_PHASE_STATIC : (unsigned)p;
        if (d[i] != want)
            return damaged("phases", "phase", (long long)i,
                           "is %u but particle %u's phase in 'particle_phases' is %d", d[i],
                           c->ids[i], p);
        /* static particles do not move (0), the fluid's is 1, a body's its own above 0 */
        if (p == PBFCL_PHASE_STATIC ? w[i] != 0.0f : p == 0 ? w[i] != 1.0f : !(w[i] > 0.0f))
            return damaged("inverse_masses", "inverse mass", (long long)i,
                           "is %g but the particle is %s (inverse mass %s)", w[i],
                           p < 0    ? "static"
                           : p == 0 ? "fluid"
                                    : "in a body",
                           p < 0    ? "0"
                           : p == 0 ? "1"
                                    : "above 0");
    }
    return PBFCL_OK;
}

/* "host": the solver's constants, gravity, push, substeps and static count. */
static pbfcl_status check_host(check *c)
{
    void *data;
    PBFCL_TRY(take(c, "host", sizeof(sim_host_state), &data));
    const sim_host_state *h = data;
    const pbfcl_pbf_params *p = &h->params;
    const float *f = (const float *)p;
    for (size_t k = 0; k < sizeof *p / sizeof(float); k++)
        if ((const void *)&f[k] != (const void *)&p->scorr_n && !isfinite(f[k]))
            return damaged("host", "solver constant", (long long)k, "is %g, not finite", f[k]);
    for (int a = 0; a < 3; a++)
        if (p->box_min[a] != c->lim->box_min[a] || p->box_max[a] != c->lim->box_max[a])
            return damaged("host", "box", a, "is %g to %g but the parameters' domain is %g to %g",
                           p->box_min[a], p->box_max[a], c->lim->box_min[a], c->lim->box_max[a]);
    if (!(p->dt > 0.0f && p->h > 0.0f && p->mass > 0.0f && p->radius > 0.0f))
        return damaged("host", "dt, h, mass and radius", -1,
                       "are %g, %g, %g, %g; each must be "
                       "above 0",
                       p->dt, p->h, p->mass, p->radius);
    const cl_float4 *v[] = {&h->gravity, &h->push_origin, &h->push_dir, &h->push};
    static const char *const names[] = {"gravity", "push_origin", "push_dir", "push"};
    for (int k = 0; k < 4; k++)
        PBFCL_TRY(check_floats(c, "host", names[k], v[k]->s, 1, 4, CHECK_FINITE));
    if (h->substeps < 1 || h->substeps > 1000) /* the range of solver.substeps */
        return damaged("host", "substeps", -1, "is %d; give 1 to 1000", h->substeps);
    if (h->statics != c->statics)
        return damaged("host", "statics", -1, "is %llu but the phases name %zu static particles",
                       (unsigned long long)h->statics, c->statics);
    return PBFCL_OK;
}

/* The shape-matching tables: entries by body, each body's range, finite shapes and poses,
 * the phases of the entries' particles. */

static pbfcl_status check_entries(check *c, size_t bodies, size_t entries, const unsigned *id,
                                  const unsigned *body, const unsigned *range)
{
    for (size_t e = 0; e < entries; e++) {
        if (id[e] >= c->n)
            return damaged("body_entry_ids", "id", (long long)e,
                           "is %u, not below the particle count %zu", id[e], c->n);
        if (body[e] >= bodies || (e > 0 && body[e] != body[e - 1] && body[e] != body[e - 1] + 1) ||
            (e == 0 && body[e] != 0))
            return damaged("body_entry_bodies", "body", (long long)e,
                           "is %u; entries name bodies 0 to %zu in order, without gaps", body[e],
                           bodies - 1);
        if (c->phases[id[e]] != (int)body[e] + 1)
            return damaged("body_entry_ids", "id", (long long)e,
                           "is particle %u, of phase %d in 'particle_phases', not body %u's %u",
                           id[e], c->phases[id[e]], body[e], body[e] + 1);
    }
    for (size_t b = 0; b < bodies; b++) {
        size_t first = range[2 * b], end = range[2 * b + 1];
        bool ok = first < end && end <= entries && body[first] == b && body[end - 1] == b &&
                  (first == 0 || body[first - 1] != b) && (end == entries || body[end] != b);
        if (!ok || end - first < PBFCL_SHAPE_MATCH_MIN_PARTICLES)
            return damaged("body_ranges", "range", (long long)b,
                           "is entries %zu to %zu of %zu, not body %zu's entries (at least %d)",
                           first, end, entries, b, PBFCL_SHAPE_MATCH_MIN_PARTICLES);
    }
    return PBFCL_OK;
}

/* The body tables' sections in the order of sm_state_buffers, with what their floats hold. */
static const check_buffer check_body_buffers[] = {
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

static pbfcl_status check_bodies(check *c)
{
    void *data;
    PBFCL_TRY(take(c, "bodies", sizeof(check_sm_counts), &data));
    check_sm_counts k = *(const check_sm_counts *)data;
    size_t in_bodies = 0;
    bool *named = calloc(c->bodies + 1, sizeof *named);
    if (!named)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < c->n; i++) {
        in_bodies += c->phases[i] > 0;
        named[c->phases[i] > 0 ? c->phases[i] : 0] = true;
    }
    size_t unnamed = 1;
    while (unnamed <= c->bodies && named[unnamed])
        unnamed++;
    free(named);
    if (unnamed <= c->bodies)
        return damaged("bodies", "bodies", -1, "is %zu but no particle has body %zu's phase %zu",
                       c->bodies, unnamed - 1, unnamed);
    if (k.entries != in_bodies)
        return damaged("bodies", "entries", -1,
                       "is %llu but the phases put %zu particles in bodies",
                       (unsigned long long)k.entries, in_bodies);
    if (k.bodies == 0)
        return PBFCL_OK;
    void *t[CHECK_BODY_BUFFERS];
    for (size_t b = 0; b < CHECK_BODY_BUFFERS; b++) {
        const check_buffer *s = &check_body_buffers[b];
        size_t bytes = s->fixed * (size_t)k.entries + s->per_particle * (size_t)k.bodies;
        PBFCL_TRY(take(c, s->name, bytes, &t[b]));
        if (b >= 2 && b != 3)
            PBFCL_TRY(check_floats(c, s->name, s->field, t[b], bytes / 4 / (b == 6 ? 1 : 4),
                                   b == 6 ? 1 : 4, s->kind));
    }
    const float *stiffness = t[6];
    for (size_t b = 0; b < k.bodies; b++)
        if (stiffness[b] > 1.0f)
            return damaged("body_stiffness", "stiffness", (long long)b,
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

static pbfcl_status check_path_counts(const check *c, const check_path_head *h)
{
    if ((h->paths == 0) != (h->entries == 0) || h->entries > c->n || h->paths > h->entries ||
        h->keys < h->paths || h->keys > h->paths * (PBFCL_MAX_PATH_KEYS + 1))
        return damaged("paths", "paths, entries and keys", -1,
                       "are %llu, %llu and %llu; a path has particles (at most the %zu there "
                       "are) and 1 to %d keys",
                       (unsigned long long)h->paths, (unsigned long long)h->entries,
                       (unsigned long long)h->keys, c->n, PBFCL_MAX_PATH_KEYS + 1);
    if (!isfinite(h->time) || h->time < 0.0)
        return damaged("paths", "time", -1, "is %g s; it must be a finite time of 0 or more",
                       h->time);
    return PBFCL_OK;
}

static pbfcl_status check_path_entries(const check *c, const check_path_head *h, const unsigned *id,
                                       const float *offset)
{
    PBFCL_TRY(
        check_floats(c, "path_offsets", "offset", offset, (size_t)h->entries, 4, CHECK_OFFSET));
    for (size_t e = 0; e < h->entries; e++) {
        if (id[e] >= c->n || (e > 0 && id[e] <= id[e - 1]))
            return damaged("path_entry_ids", "id", (long long)e,
                           "is %u; ids are below the particle count %zu and increase", id[e], c->n);
        if (c->phases[id[e]] != PBFCL_PHASE_STATIC)
            return damaged("path_entry_ids", "id", (long long)e,
                           "is particle %u, of phase %d; a moving obstacle's particles are "
                           "static (-1)",
                           id[e], c->phases[id[e]]);
        float w = offset[4 * e + 3];
        if (!(w >= 0.0f && w < (float)h->paths && w == floorf(w)))
            return damaged("path_offsets", "path", (long long)e, "is %g; give a path 0 to %llu", w,
                           (unsigned long long)h->paths - 1);
    }
    return PBFCL_OK;
}

static pbfcl_status check_paths(check *c)
{
    void *data, *id, *offset, *motion, *keys;
    PBFCL_TRY(take(c, "paths", sizeof(check_path_head), &data));
    check_path_head h = *(const check_path_head *)data;
    PBFCL_TRY(check_path_counts(c, &h));
    if (h.entries == 0)
        return PBFCL_OK;
    PBFCL_TRY(take(c, "path_entry_ids", 4 * (size_t)h.entries, &id));
    PBFCL_TRY(take(c, "path_offsets", 16 * (size_t)h.entries, &offset));
    PBFCL_TRY(take(c, "path_motions", 64 * (size_t)h.paths, &motion));
    PBFCL_TRY(take(c, "path_keys", 32 * (size_t)h.keys, &keys));
    PBFCL_TRY(check_path_entries(c, &h, id, offset));
    PBFCL_TRY(
        check_floats(c, "path_motions", "motion", motion, 4 * (size_t)h.paths, 4, CHECK_FINITE));
    PBFCL_TRY(check_floats(c, "path_keys", "key", keys, 2 * (size_t)h.keys, 4, CHECK_FINITE));
    for (size_t p = 0; p < h.paths; p++) {
        const float *r = (const float *)motion + 16 * p + 12; /* first key, keys */
        if (!(r[0] >= 0.0f && r[1] >= 1.0f && r[0] == floorf(r[0]) && r[1] == floorf(r[1]) &&
              (double)r[0] + r[1] <= (double)h.keys))
            return damaged("path_motions", "keys", (long long)p,
                           "are %g to %g; a path's keys are whole numbers within the %llu saved",
                           r[0], r[0] + r[1], (unsigned long long)h.keys);
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_state_check(pbfcl_state_read_fn get, void *ctx, const pbfcl_state_limits *lim)
{
    check c;
    memset(&c, 0, sizeof c);
    c.get = get;
    c.ctx = ctx;
    c.lim = lim;
    c.n = lim->count;
    pbfcl_status st = check_particle_phases(&c);
    if (st == PBFCL_OK)
        st = check_host(&c);
    if (st == PBFCL_OK)
        st = check_float_buffers(&c);
    if (st == PBFCL_OK)
        st = check_ids(&c);
    if (st == PBFCL_OK)
        st = check_device_phases(&c);
    if (st == PBFCL_OK)
        st = check_bodies(&c);
    if (st == PBFCL_OK)
        st = check_paths(&c);
    for (int k = 0; k < c.owned_count; k++)
        free(c.owned[k]);
    return st;
}
