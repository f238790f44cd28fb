/* A saved state held in memory, section by section: memory_state_put and memory_state_get are
 * the put and get callbacks of pbfcl_solver_save_state / pbfcl_solver_load_state (and of the
 * core's savers with the same signature), for the tests that save a state, read or damage its
 * sections and load it again; memory_state_expect_resumed, the check that a solver loaded from a
 * saved state runs on as the one saved does, byte for byte. Header-only, of pbfcl.h and Check
 * alone: test_api, linked against the shared library, uses it too. */
#ifndef PBFCL_MEMORY_STATE_H
#define PBFCL_MEMORY_STATE_H

#include "pbfcl.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY_STATE_SECTIONS 256

/* Zero it before a save ({0}); memory_state_free releases the sections. */
typedef struct memory_state {
    int count;
    char name[MEMORY_STATE_SECTIONS][64];
    void *data[MEMORY_STATE_SECTIONS];
    size_t bytes[MEMORY_STATE_SECTIONS];
    bool asked[MEMORY_STATE_SECTIONS]; /* read back by a load */
} memory_state;

/* Keeps a copy of the section (user: the memory_state). */
static inline pbfcl_status memory_state_put(void *user, const char *name, const void *data,
                                            size_t bytes)
{
    memory_state *m = user;
    ck_assert_int_lt(m->count, MEMORY_STATE_SECTIONS);
    snprintf(m->name[m->count], sizeof m->name[0], "%s", name);
    m->data[m->count] = malloc(bytes + 1);
    memcpy(m->data[m->count], data, bytes);
    m->bytes[m->count++] = bytes;
    return PBFCL_OK;
}

/* The index of the section called name, -1 if there is none. */
static inline int memory_state_find(const memory_state *m, const char *name)
{
    for (int k = 0; k < m->count; k++)
        if (!strcmp(m->name[k], name))
            return k;
    return -1;
}

/* Copies the section called name of exactly bytes bytes into data and marks it asked;
 * PBFCL_ERR_BAD_ARGUMENT if there is none. */
static inline pbfcl_status memory_state_get(void *user, const char *name, void *data, size_t bytes)
{
    memory_state *m = user;
    for (int k = 0; k < m->count; k++)
        if (!strcmp(m->name[k], name) && m->bytes[k] == bytes) {
            memcpy(data, m->data[k], bytes);
            m->asked[k] = true;
            return PBFCL_OK;
        }
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* Releases the sections and empties m. */
static inline void memory_state_free(memory_state *m)
{
    for (int k = 0; k < m->count; k++)
        free(m->data[k]);
    m->count = 0;
}

/* What a saved-then-loaded test compares of a solver: floats values into out (user: the
 * test's). */
typedef void (*memory_state_reader)(pbfcl_solver *s, float *out, void *user);

/* The saved-then-loaded check: a's state saved into m (emptied first; the caller frees it, and
 * may damage its sections afterwards) and loaded into b; then, before a step and after each of
 * frames steps of both (the parameters' dt), read's floats values of b equal a's byte for byte,
 * else the test fails naming the frame and the first value that differs. a's last read is left
 * in last_a (floats values; NULL: not kept). */
static inline void memory_state_expect_resumed(pbfcl_solver *a, pbfcl_solver *b, memory_state *m,
                                               int frames, size_t floats, memory_state_reader read,
                                               void *user, float *last_a)
{
    memset(m, 0, sizeof *m);
    ck_assert_int_eq(pbfcl_solver_save_state(a, memory_state_put, m), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_load_state(b, memory_state_get, m), PBFCL_OK);
    float *va = malloc(floats * sizeof *va + 4), *vb = malloc(floats * sizeof *vb + 4);
    ck_assert(va && vb);
    for (int f = 0; f <= frames; f++) {
        if (f > 0) {
            ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
            ck_assert_int_eq(pbfcl_solver_step(b, 0.0f, NULL), PBFCL_OK);
        }
        read(a, va, user);
        read(b, vb, user);
        for (size_t k = 0; k < floats; k++)
            ck_assert_msg(!memcmp(va + k, vb + k, sizeof *va),
                          "frame %d after the load: value %zu is %.9g, the straight run's %.9g", f,
                          k, vb[k], va[k]);
    }
    if (last_a)
        memcpy(last_a, va, floats * sizeof *va);
    free(va);
    free(vb);
}

#endif
