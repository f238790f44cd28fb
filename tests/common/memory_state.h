/* A saved state held in memory, section by section: memory_state_put and memory_state_get are
 * the put and get callbacks of pbfcl_solver_save_state / pbfcl_solver_load_state (and of the
 * core's savers with the same signature), for the tests that save a state, read or damage its
 * sections and load it again. Header-only, of pbfcl.h and Check alone: test_api, linked
 * against the shared library, uses it too. */
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

#endif
