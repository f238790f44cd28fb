/* What the checks of a saved state (state_check.c, state_check_bodies.c) share: the state
 * being checked, the kinds of float fields, and the helpers that read a section and name a
 * bad field. Private to those two files. */
#ifndef PBFCL_STATE_CHECK_INTERNAL_H
#define PBFCL_STATE_CHECK_INTERNAL_H

#include "sim/state_check.h"

#include <stdbool.h>
#include <stdint.h>

#define CHECK_MAX_OWNED 48

/* A check in progress: how it reads sections, what it checks against, what it read. */
/* What state_check_ctx.body_of holds for a particle in no body. */
#define CHECK_NOT_BODY_FLUID (-1)
#define CHECK_NOT_BODY_STATIC (-2)
#define CHECK_NOT_BODY_GROUP (-3) /* a solid group's (cloth, rope) */

typedef struct state_check_ctx {
    pbfcl_state_read_fn get;
    void *ctx;
    const pbfcl_state_limits *lim;
    size_t n;
    void *owned[CHECK_MAX_OWNED];
    int owned_count;
    const unsigned *ids;    /* "ids": the caller's index of each particle, in the solver's order */
    const int *phases;      /* "particle_phases", in the caller's order */
    int *body_of;           /* per particle (caller's order): its body, or a CHECK_NOT_BODY_* */
    size_t statics, bodies; /* particles of phase PBFCL_PHASE_STATIC; the "bodies" count */
    size_t grouped;         /* particles of solid groups (cloth, ropes) */
} state_check_ctx;

/* What a float field may hold. */
typedef enum state_check_kind {
    CHECK_FINITE,  /* any finite value */
    CHECK_NONNEG,  /* finite and 0 or more */
    CHECK_IN_BOX,  /* x, y, z inside the box and its margin, the rest finite */
    CHECK_OFFSET,  /* x, y, z an offset within the box and its margins, the rest finite */
    CHECK_POSITIVE /* finite and above 0 */
} state_check_kind;

/* The solver's per-particle and fixed sections: size, what their floats hold, methods. */
typedef struct state_check_buffer {
    const char *name, *field;
    size_t per_particle, fixed;
    state_check_kind kind;
    unsigned methods; /* bit m: method m has it */
} state_check_buffer;

/* The "bodies" section: how many bodies and entries the body tables hold. */
typedef struct check_sm_counts {
    uint64_t bodies, entries;
} check_sm_counts;

/* Logs that field (index: its element, or -1) of section is bad and what it holds (fmt);
 * returns PBFCL_ERR_BAD_ARGUMENT. */
pbfcl_status state_check_damaged(const char *section, const char *field, long long index,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Reads section name (bytes bytes) into *out, freed with the check. */
pbfcl_status state_check_alloc(state_check_ctx *c, size_t bytes, void **out);
pbfcl_status state_check_take(state_check_ctx *c, const char *name, size_t bytes, void **out);

/* Checks count elements of lanes floats each of field in section. */
pbfcl_status state_check_floats(const state_check_ctx *c, const char *section, const char *field,
                                const float *v, size_t count, int lanes, state_check_kind kind);

/* The bodies' tables (after the phases): entries, ranges, shapes, poses, stiffness. */
pbfcl_status state_check_bodies(state_check_ctx *c);

/* The paths' tables: counts, entries, offsets, motions, keys, clock. */
pbfcl_status state_check_paths(state_check_ctx *c);

/* The collision shapes (state_check_shapes.c): counts, ids, kinds, poses, geometry. */
pbfcl_status state_check_shapes(state_check_ctx *c);

#endif
