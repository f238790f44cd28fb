/* Checks of a saved solver state (see state_check.h): the sections are read into host memory,
 * each field is checked against the particle count, the bodies and the domain, and the first
 * bad one is named. The sections and what each field holds are those of the state tables of
 * sim.c (sim_state_buffers), shape_match.c (sm_state_buffers) and kinematic.c
 * (kin_state_buffers); test_state_check's state_check_covers_every_section holds the lists
 * together. This file holds the helpers, the particles' sections and the host's; the body and
 * path tables are state_check_bodies.c's. */
#include "sim/state_check_internal.h"

#include "scene/scene.h"
#include "sim/sim.h"
#include "sim/sim_state.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Logs that field (index: its element, or -1) of section is bad and what it holds. */
pbfcl_status state_check_damaged(const char *section, const char *field, long long index,
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

/* bytes of memory into *out, freed with the check. */
pbfcl_status state_check_alloc(state_check_ctx *c, size_t bytes, void **out)
{
    if (c->owned_count == CHECK_MAX_OWNED) {
        pbfcl_errorf("the state checker holds at most %d sections at once; raise CHECK_MAX_OWNED "
                     "(host/core/sim/state_check_internal.h)",
                     CHECK_MAX_OWNED);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    void *data = malloc(bytes ? bytes : 1);
    if (!data)
        return PBFCL_ERR_OUT_OF_MEMORY;
    c->owned[c->owned_count++] = data;
    *out = data;
    return PBFCL_OK;
}

/* Reads section name (bytes bytes, as the counts read before it give) into *out, freed with
 * the check; more bytes than any section can hold are refused before they are allocated. */
pbfcl_status state_check_take(state_check_ctx *c, const char *name, size_t bytes, void **out)
{
    *out = NULL;
    if (c->lim->most_bytes && bytes > c->lim->most_bytes)
        return state_check_damaged(name, "size", -1,
                                   "would be %zu bytes by the counts saved before it, more than "
                                   "%s",
                                   bytes,
                                   c->lim->most_bytes_of ? c->lim->most_bytes_of : "allowed");
    PBFCL_TRY(state_check_alloc(c, bytes, out));
    return c->get(c->ctx, name, *out, bytes);
}

float pbfcl_state_margin(const pbfcl_state_limits *lim, int axis)
{
    return lim->box_max[axis] - lim->box_min[axis];
}

static bool float_ok(const state_check_ctx *c, state_check_kind kind, float v, int lane)
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
pbfcl_status state_check_floats(const state_check_ctx *c, const char *section, const char *field,
                                const float *v, size_t count, int lanes, state_check_kind kind)
{
    static const char *const lane_names[] = {"x", "y", "z", "w"};
    for (size_t i = 0; i < count; i++)
        for (int l = 0; l < lanes; l++) {
            float x = v[i * (size_t)lanes + (size_t)l];
            if (float_ok(c, kind, x, l))
                continue;
            const char *lane = lanes == 4 ? lane_names[l] : "";
            if (kind == CHECK_IN_BOX && isfinite(x) && l < 3)
                return state_check_damaged(
                    section, field, (long long)i,
                    "%s is %g m, outside the domain [%g, %g] and its margin of %g m", lane, x,
                    c->lim->box_min[l], c->lim->box_max[l], pbfcl_state_margin(c->lim, l));
            if (kind == CHECK_OFFSET && isfinite(x) && l < 3)
                return state_check_damaged(
                    section, field, (long long)i,
                    "%s is %g m, farther than the domain with its margins (%g m)", lane, x,
                    3.0f * pbfcl_state_margin(c->lim, l));
            return state_check_damaged(section, field, (long long)i, "%s%sis %g; it must be %s",
                                       lane, lanes == 4 ? " " : "", x,
                                       kind == CHECK_NONNEG     ? "a finite number of 0 or more"
                                       : kind == CHECK_POSITIVE ? "a finite number above 0"
                                                                : "a finite number");
        }
    return PBFCL_OK;
}
#define ALL_METHODS ((1u << PBFCL_METHOD_PBF) | (1u << PBFCL_METHOD_SPH))
#define PBF_ONLY (1u << PBFCL_METHOD_PBF)
static const state_check_buffer check_buffers[] = {
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

/* Each buffer is freed once checked: the check holds one of them at a time beside the ids
 * and phases. */
static pbfcl_status check_float_buffers(state_check_ctx *c)
{
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; k < CHECK_BUFFER_COUNT && st == PBFCL_OK; k++) {
        const state_check_buffer *b = &check_buffers[k];
        if (!((b->methods >> c->lim->method) & 1u))
            continue;
        size_t bytes = b->per_particle ? b->per_particle * c->n : b->fixed;
        int lanes = b->per_particle == 16 ? 4 : 1;
        void *data = malloc(bytes ? bytes : 1);
        st = data ? c->get(c->ctx, b->name, data, bytes) : PBFCL_ERR_OUT_OF_MEMORY;
        if (st == PBFCL_OK)
            st = state_check_floats(c, b->name, b->field, data, bytes / (4 * (size_t)lanes), lanes,
                                    b->kind);
        free(data);
    }
    return st;
}

/* "ids": each particle's index in the caller's order, each below the count and none twice. */
static pbfcl_status check_ids(state_check_ctx *c)
{
    void *data;
    PBFCL_TRY(state_check_take(c, "ids", c->n * 4, &data));
    const unsigned *ids = data;
    unsigned char *seen = calloc(c->n ? c->n : 1, 1);
    if (!seen)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t i = 0; i < c->n && st == PBFCL_OK; i++) {
        if (ids[i] >= c->n)
            st = state_check_damaged("ids", "id", (long long)i,
                                     "is %u, not below the particle count %zu", ids[i], c->n);
        else if (seen[ids[i]]++)
            st = state_check_damaged("ids", "id", (long long)i,
                                     "is %u, which another particle has too", ids[i]);
    }
    free(seen);
    c->ids = ids;
    return st;
}

/* What a saved phase is, in today's encoding (a state saved before the phases' flags holds 0,
 * b + 1 and -1: pbfcl_sim_phase_upgrade): PHASE_NONE for a word that is none of these. */
typedef enum phase_kind {
    PHASE_STATIC,
    PHASE_FLUID,
    PHASE_BODY,
    PHASE_GROUP,
    PHASE_NONE
} phase_kind;

static phase_kind kind_of_phase(unsigned p, size_t bodies)
{
    if (p == PBFCL_SIM_PHASE_STATIC)
        return PHASE_STATIC;
    if (p == PBFCL_SIM_PHASE_FLUID)
        return PHASE_FLUID;
    unsigned group = p & PBFCL_PHASE_GROUP_BITS, flags = p & ~PBFCL_PHASE_GROUP_BITS;
    if (group >= 1 && group <= bodies && (flags & ~PBFCL_PHASE_SELF_COLLIDE_BIT) == 0)
        return PHASE_BODY; /* body group - 1, self-colliding or not */
    if (PBFCL_SIM_PHASE_IS_GROUP(p))
        return PHASE_GROUP; /* a solid group's (cloth, rope), self-colliding or not */
    return PHASE_NONE;
}

/* "particle_phases" (caller's order): fluid, static, a body of the "bodies" section's or a
 * solid group's. */
static pbfcl_status check_particle_phases(state_check_ctx *c)
{
    void *data, *counts;
    PBFCL_TRY(state_check_take(c, "bodies", sizeof(check_sm_counts), &counts));
    uint64_t bodies = ((const check_sm_counts *)counts)->bodies;
    if (bodies > c->n)
        return state_check_damaged("bodies", "bodies", -1, "is %llu, more than the %zu particles",
                                   (unsigned long long)bodies, c->n);
    if (bodies > 0 && c->lim->method != PBFCL_METHOD_PBF)
        return state_check_damaged("bodies", "bodies", -1,
                                   "is %llu but the state's method is %s; bodies need pbf",
                                   (unsigned long long)bodies, pbfcl_method_name(c->lim->method));
    c->bodies = (size_t)bodies;
    PBFCL_TRY(state_check_take(c, "particle_phases", c->n * sizeof(int), &data));
    const int *p = data;
    void *body_of;
    PBFCL_TRY(state_check_alloc(c, c->n * sizeof(int), &body_of));
    c->body_of = body_of;
    for (size_t i = 0; i < c->n; i++) {
        unsigned word = pbfcl_sim_phase_upgrade((unsigned)p[i]);
        phase_kind kind = kind_of_phase(word, c->bodies);
        if (kind == PHASE_NONE)
            return state_check_damaged(
                "particle_phases", "phase", (long long)i,
                "is %d (0x%x); a phase is the fluid's, the static particles', a body's group 1 "
                "to %zu (the state has %zu bodies) with or without self-collide, or a solid "
                "group's",
                p[i], (unsigned)p[i], c->bodies, c->bodies);
        c->statics += kind == PHASE_STATIC;
        c->grouped += kind == PHASE_GROUP;
        c->body_of[i] = kind == PHASE_BODY     ? (int)PBFCL_SIM_PHASE_BODY_OF(word)
                        : kind == PHASE_STATIC ? CHECK_NOT_BODY_STATIC
                        : kind == PHASE_GROUP  ? CHECK_NOT_BODY_GROUP
                                               : CHECK_NOT_BODY_FLUID;
    }
    c->phases = p;
    return PBFCL_OK;
}

/* "phases" (the solver's order) says what "particle_phases" says of the same particle. */
static pbfcl_status check_device_phases(state_check_ctx *c)
{
    void *data, *masses;
    PBFCL_TRY(state_check_take(c, "phases", c->n * 4, &data));
    PBFCL_TRY(state_check_take(c, "inverse_masses", c->n * 4, &masses));
    const unsigned *d = data;
    const float *w = masses;
    for (size_t i = 0; i < c->n; i++) {
        int p = c->phases[c->ids[i]];
        unsigned want = pbfcl_sim_phase_upgrade((unsigned)p), got = pbfcl_sim_phase_upgrade(d[i]);
        if (PBFCL_SIM_PHASE_IS_GROUP(want) && PBFCL_SIM_PHASE_IS_GROUP(got))
            got &= ~PBFCL_PHASE_SELF_COLLIDE_BIT; /* the group's flag lives on the device only */
        if (got != want)
            return state_check_damaged("phases", "phase", (long long)i,
                                       "is %u but particle %u's phase in 'particle_phases' is %d",
                                       d[i], c->ids[i], p);
        /* static particles do not move (0), the fluid's is 1, a body's or a group's above 0 */
        static const char *const what[4] = {"static (inverse mass 0)", "fluid (inverse mass 1)",
                                            "in a body (inverse mass above 0)",
                                            "in a solid group (inverse mass above 0)"};
        phase_kind kind = kind_of_phase(want, c->bodies);
        if (kind == PHASE_STATIC  ? w[i] != 0.0f
            : kind == PHASE_FLUID ? w[i] != 1.0f
                                  : !(w[i] > 0.0f))
            return state_check_damaged("inverse_masses", "inverse mass", (long long)i,
                                       "is %g but the particle is %s", w[i], what[kind]);
    }
    return PBFCL_OK;
}

/* The host's solver constants are those the parameters derive, but for the ones that follow
 * the last frame's substeps. */
static pbfcl_status check_constants(const state_check_ctx *c, const pbfcl_pbf_params *saved)
{
    if (!c->lim->constants)
        return PBFCL_OK;
    pbfcl_pbf_params want = *c->lim->constants;
    want.dt = saved->dt;
    want.inv_dt = saved->inv_dt;
    want.viscosity = saved->viscosity;
    /* A method other than PBF derives none of PBF's own constants (they stay 0) and reads
     * none: a state saved before PBF's constants left the common derive holds them, unread. */
    bool pbf = c->lim->method == PBFCL_METHOD_PBF;
    for (size_t k = 0; k < sizeof want / 4; k++) {
        uint32_t a, b; /* the bits, copied: the fields are floats and one uint */
        memcpy(&a, (const char *)saved + 4 * k, 4);
        memcpy(&b, (const char *)&want + 4 * k, 4);
        if (a != b && (pbf || b != 0))
            return state_check_damaged("host", "solver constant", (long long)k,
                                       "has bits %08x but the parameters give %08x", a, b);
    }
    return PBFCL_OK;
}

/* "host": the solver's constants, gravity, push, substeps and static count. */
static pbfcl_status check_host(state_check_ctx *c)
{
    void *data;
    PBFCL_TRY(state_check_take(c, "host", sizeof(sim_host_state), &data));
    const sim_host_state *h = data;
    const pbfcl_pbf_params *p = &h->params;
    const float *f = (const float *)p;
    for (size_t k = 0; k < sizeof *p / sizeof(float); k++)
        if ((const void *)&f[k] != (const void *)&p->scorr_n && !isfinite(f[k]))
            return state_check_damaged("host", "solver constant", (long long)k, "is %g, not finite",
                                       f[k]);
    for (int a = 0; a < 3; a++)
        if (p->box_min[a] != c->lim->box_min[a] || p->box_max[a] != c->lim->box_max[a])
            return state_check_damaged(
                "host", "box", a, "is %g to %g but the parameters' domain is %g to %g",
                p->box_min[a], p->box_max[a], c->lim->box_min[a], c->lim->box_max[a]);
    if (!(p->dt > 0.0f && p->h > 0.0f && p->mass > 0.0f && p->radius > 0.0f))
        return state_check_damaged("host", "dt, h, mass and radius", -1,
                                   "are %g, %g, %g, %g; each must be above 0", p->dt, p->h, p->mass,
                                   p->radius);
    /* the range of solver.scorr_n, a loop's count in PBF's kernels; a method without the
     * tensile term (SPH) derives none and saves 0 */
    unsigned scorr_lo = c->lim->method == PBFCL_METHOD_PBF ? 1 : 0;
    if (p->scorr_n < scorr_lo || p->scorr_n > 16)
        return state_check_damaged("host", "scorr_n", -1, "is %u; give %u to 16", p->scorr_n,
                                   scorr_lo);
    PBFCL_TRY(check_constants(c, p));
    const cl_float4 *v[] = {&h->gravity, &h->push_origin, &h->push_dir, &h->push};
    static const char *const names[] = {"gravity", "push_origin", "push_dir", "push"};
    for (int k = 0; k < 4; k++)
        PBFCL_TRY(state_check_floats(c, "host", names[k], v[k]->s, 1, 4, CHECK_FINITE));
    if (h->substeps < 1 || h->substeps > 1000) /* the range of solver.substeps */
        return state_check_damaged("host", "substeps", -1, "is %d; give 1 to 1000", h->substeps);
    if (h->solid_groups != c->grouped)
        return state_check_damaged("host", "solid_groups", -1,
                                   "is %u but the phases name %zu particles of solid groups",
                                   h->solid_groups, c->grouped);
    if (h->statics != c->statics)
        return state_check_damaged("host", "statics", -1,
                                   "is %llu but the phases name %zu static particles",
                                   (unsigned long long)h->statics, c->statics);
    return PBFCL_OK;
}

/* "distances" (PBF's distance constraints): their count, then "distance_pairs" (two different
 * particles below the count each) and "distance_rest" (rest length, compliance, tether flag,
 * 0: lengths and compliances finite and >= 0, the flag 0 or 1). */
static pbfcl_status check_distances(state_check_ctx *c)
{
    if (c->lim->method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    void *data;
    PBFCL_TRY(state_check_take(c, "distances", sizeof(cl_ulong), &data));
    cl_ulong count;
    memcpy(&count, data, sizeof count);
    if (count > UINT32_MAX / 2)
        return state_check_damaged("distances", "count", -1, "is %llu; at most %u fit the lists",
                                   (unsigned long long)count, UINT32_MAX / 2);
    if (count == 0)
        return PBFCL_OK;
    void *pairs, *rest;
    PBFCL_TRY(state_check_take(c, "distance_pairs", (size_t)count * 8, &pairs));
    PBFCL_TRY(state_check_take(c, "distance_rest", (size_t)count * 16, &rest));
    const cl_uint *p = pairs;
    const cl_float4 *r = rest;
    for (size_t k = 0; k < count; k++) {
        if (p[2 * k] >= c->n || p[2 * k + 1] >= c->n || p[2 * k] == p[2 * k + 1])
            return state_check_damaged("distance_pairs", "pair", (long long)k,
                                       "joins %u and %u; give two different particles below %zu",
                                       p[2 * k], p[2 * k + 1], c->n);
        const float *f = r[k].s;
        if (!(isfinite(f[0]) && f[0] >= 0.0f && isfinite(f[1]) && f[1] >= 0.0f &&
              (f[2] == 0.0f || f[2] == 1.0f) && f[3] == 0.0f))
            return state_check_damaged("distance_rest", "constraint", (long long)k,
                                       "is (%g, %g, %g, %g); give a rest length and compliance "
                                       "finite and >= 0, a tether flag 0 or 1, then 0",
                                       f[0], f[1], f[2], f[3]);
    }
    return PBFCL_OK;
}

/* "triangles" (the wind's, PBF's): their count, then "triangle_ids" (three different particles
 * below the count each). */
static pbfcl_status check_triangles(state_check_ctx *c)
{
    if (c->lim->method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    void *data;
    PBFCL_TRY(state_check_take(c, "triangles", sizeof(cl_ulong), &data));
    cl_ulong count;
    memcpy(&count, data, sizeof count);
    if (count > UINT32_MAX / 3)
        return state_check_damaged("triangles", "count", -1, "is %llu; at most %u fit the lists",
                                   (unsigned long long)count, UINT32_MAX / 3);
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(state_check_take(c, "triangle_ids", (size_t)count * 12, &data));
    const cl_uint *t = data;
    for (size_t k = 0; k < count; k++, t += 3)
        if (t[0] >= c->n || t[1] >= c->n || t[2] >= c->n || t[0] == t[1] || t[1] == t[2] ||
            t[0] == t[2])
            return state_check_damaged("triangle_ids", "triangle", (long long)k,
                                       "joins %u, %u and %u; give three different particles "
                                       "below %zu",
                                       t[0], t[1], t[2], c->n);
    return PBFCL_OK;
}

/* Inflatable k's parameters (rest volume, pressure, compliance, 0): finite, the first two > 0,
 * the compliance >= 0. */
static bool inflatable_params_ok(const float *f)
{
    return isfinite(f[0]) && f[0] > 0.0f && isfinite(f[1]) && f[1] > 0.0f && isfinite(f[2]) &&
           f[2] >= 0.0f && f[3] == 0.0f;
}

/* "inflatables" (PBF's inflatables): their count, then "inflatable_triangle_counts" (4 or more
 * each), "inflatable_triangles" (three different particles below the count each) and
 * "inflatable_params" (inflatable_params_ok). Whether each mesh is closed is checked when it is
 * loaded (pbfcl_pbf_inflatable_load), as when it is set. */
static pbfcl_status check_inflatables(state_check_ctx *c)
{
    if (c->lim->method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    void *data, *counts, *tris, *params;
    PBFCL_TRY(state_check_take(c, "inflatables", sizeof(cl_ulong), &data));
    cl_ulong count;
    memcpy(&count, data, sizeof count);
    if (count > c->n)
        return state_check_damaged("inflatables", "count", -1, "is %llu; at most %zu fit",
                                   (unsigned long long)count, c->n);
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(state_check_take(c, "inflatable_triangle_counts", (size_t)count * 4, &counts));
    size_t triangles = 0;
    const cl_uint *tc = counts;
    for (size_t k = 0; k < count; k++) {
        triangles += tc[k];
        if (tc[k] < 4 || triangles > 4 * c->n)
            return state_check_damaged("inflatable_triangle_counts", "inflatable", (long long)k,
                                       "has %u triangles; give 4 or more, 2 per particle at most",
                                       tc[k]);
    }
    PBFCL_TRY(state_check_take(c, "inflatable_triangles", triangles * 12, &tris));
    PBFCL_TRY(state_check_take(c, "inflatable_params", (size_t)count * 16, &params));
    const cl_uint *t = tris;
    for (size_t k = 0; k < triangles; k++) {
        const cl_uint *q = t + 3 * k;
        if (q[0] >= c->n || q[1] >= c->n || q[2] >= c->n || q[0] == q[1] || q[1] == q[2] ||
            q[0] == q[2])
            return state_check_damaged("inflatable_triangles", "triangle", (long long)k,
                                       "is (%u, %u, %u); give three different particles below %zu",
                                       q[0], q[1], q[2], c->n);
    }
    const cl_float4 *p = params;
    for (size_t k = 0; k < count; k++)
        if (!inflatable_params_ok(p[k].s))
            return state_check_damaged("inflatable_params", "inflatable", (long long)k,
                                       "is (%g, %g, %g, %g); give a rest volume and pressure "
                                       "finite and > 0, a compliance finite and >= 0, then 0",
                                       p[k].s[0], p[k].s[1], p[k].s[2], p[k].s[3]);
    return PBFCL_OK;
}

/* "attachments" (PBF's attachments of particles to shapes and bodies): their count, then
 * "attachment_particles" and "attachment_anchors" (below the count each), "attachment_targets"
 * (kind 0 or 1, a target >= 0), "attachment_points" (finite, the compliance >= 0) and
 * "attachment_lengths" (finite, >= 0). Whether
 * the shapes and bodies exist and a particle is attached once is checked when they are loaded
 * (pbfcl_pbf_attach_load), as when they are set. */
static pbfcl_status check_attachments(state_check_ctx *c)
{
    if (c->lim->method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    void *data, *particles, *targets, *points, *anchors;
    PBFCL_TRY(state_check_take(c, "attachments", sizeof(cl_ulong), &data));
    cl_ulong count;
    memcpy(&count, data, sizeof count);
    if (count > c->n)
        return state_check_damaged("attachments", "count", -1, "is %llu; at most %zu fit",
                                   (unsigned long long)count, c->n);
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(state_check_take(c, "attachment_particles", (size_t)count * 4, &particles));
    PBFCL_TRY(state_check_take(c, "attachment_targets", (size_t)count * 8, &targets));
    PBFCL_TRY(state_check_take(c, "attachment_points", (size_t)count * 16, &points));
    PBFCL_TRY(state_check_take(c, "attachment_anchors", (size_t)count * 4, &anchors));
    void *lengths;
    PBFCL_TRY(state_check_take(c, "attachment_lengths", (size_t)count * 4, &lengths));
    const float *len = lengths;
    const cl_uint *p = particles, *a = anchors;
    const cl_int2 *t = targets;
    const cl_float4 *x = points;
    for (size_t k = 0; k < count; k++) {
        if (p[k] >= c->n || a[k] >= c->n)
            return state_check_damaged(p[k] >= c->n ? "attachment_particles" : "attachment_anchors",
                                       "attachment", (long long)k,
                                       "names particle %u; give one below %zu",
                                       p[k] >= c->n ? p[k] : a[k], c->n);
        if ((t[k].s[0] != 0 && t[k].s[0] != 1) || t[k].s[1] < 0)
            return state_check_damaged("attachment_targets", "attachment", (long long)k,
                                       "is (%d, %d); give kind 0 (shape) or 1 (body), a target "
                                       ">= 0",
                                       t[k].s[0], t[k].s[1]);
        if (!(isfinite(len[k]) && len[k] >= 0.0f))
            return state_check_damaged("attachment_lengths", "attachment", (long long)k,
                                       "is %g; give a finite length >= 0", len[k]);
        const float *f = x[k].s;
        if (!(isfinite(f[0]) && isfinite(f[1]) && isfinite(f[2]) && isfinite(f[3]) && f[3] >= 0))
            return state_check_damaged("attachment_points", "attachment", (long long)k,
                                       "is (%g, %g, %g, %g); give a finite point and a finite "
                                       "compliance >= 0",
                                       f[0], f[1], f[2], f[3]);
    }
    return PBFCL_OK;
}

/* "tear_limits" (the API's tearing, pbfcl_solver_set_tearing): the count of solid groups with
 * a limit, then "tear_limit_values" (a strain each, finite and >= 0). */
static pbfcl_status check_tear_limits(state_check_ctx *c)
{
    void *data, *values;
    PBFCL_TRY(state_check_take(c, "tear_limits", sizeof(cl_ulong), &data));
    cl_ulong count;
    memcpy(&count, data, sizeof count);
    if (count > PBFCL_SIM_MAX_GROUPS)
        return state_check_damaged("tear_limits", "count", -1, "is %llu; at most %u groups",
                                   (unsigned long long)count, (unsigned)PBFCL_SIM_MAX_GROUPS);
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(state_check_take(c, "tear_limit_values", (size_t)count * 4, &values));
    const float *v = values;
    for (size_t g = 0; g < count; g++)
        if (!(v[g] >= 0.0f) || isinf(v[g]))
            return state_check_damaged("tear_limit_values", "group", (long long)g,
                                       "has the limit %g; give a finite strain, 0 or above", v[g]);
    return PBFCL_OK;
}

pbfcl_status pbfcl_state_check(pbfcl_state_read_fn get, void *ctx, const pbfcl_state_limits *lim)
{
    state_check_ctx c;
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
        st = state_check_bodies(&c);
    if (st == PBFCL_OK)
        st = state_check_paths(&c);
    if (st == PBFCL_OK)
        st = check_distances(&c);
    if (st == PBFCL_OK)
        st = check_triangles(&c);
    if (st == PBFCL_OK)
        st = state_check_shapes(&c);
    if (st == PBFCL_OK)
        st = check_inflatables(&c);
    if (st == PBFCL_OK)
        st = check_attachments(&c);
    if (st == PBFCL_OK)
        st = check_tear_limits(&c);
    for (int k = 0; k < c.owned_count; k++)
        free(c.owned[k]);
    return st;
}
