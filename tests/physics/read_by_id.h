/* A simulation's particles by id, for the physics tests that follow particles through the
 * solver's reordering. Header-only. */
#ifndef PBFCL_READ_BY_ID_H
#define PBFCL_READ_BY_ID_H

#include "sim/sim.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Positions and velocities by particle id (either may be NULL): pos[3 * id .. 3 * id + 2]. */
static inline void read_by_id(pbfcl_sim *sim, float *pos, float *vel)
{
    size_t n = pbfcl_sim_count(sim);
    float *p = malloc(n * 12), *v = malloc(n * 12);
    unsigned *id = malloc(n * 4);
    ck_assert_int_eq(pbfcl_sim_read(sim, p, v, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (size_t i = 0; i < n; i++) {
        if (pos)
            memcpy(pos + 3 * id[i], p + 3 * i, 12);
        if (vel)
            memcpy(vel + 3 * id[i], v + 3 * i, 12);
    }
    free(p);
    free(v);
    free(id);
}

#endif
