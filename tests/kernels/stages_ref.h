/* The stage check the tests of both particle methods make: one profiled frame records time in
 * every stage the method declares (pbfcl_solver_method.stages) and in no other. Header-only. */
#ifndef PBFCL_STAGES_REF_H
#define PBFCL_STAGES_REF_H

#include "runtime/profile.h"
#include "sim/sim.h"
#include "sim/solver_method.h"
#include "test_util.h"

#include <stdbool.h>
#include <stdlib.h>

/* Steps sim one frame with profiling and checks its stages against m's. */
static inline void check_frame_stages(pbfcl_sim *sim, const pbfcl_solver_method *m)
{
    pbfcl_profile *prof = calloc(1, sizeof *prof);
    ck_assert_ptr_nonnull(prof);
    double ms[PBFCL_STAGE_COUNT] = {0};
    ck_assert_int_eq(pbfcl_sim_step(sim, prof), PBFCL_OK);
    ck_assert_int_eq(pbfcl_profile_collect(prof, ms), CL_SUCCESS);
    for (int st = 0; st < PBFCL_STAGE_COUNT; st++) {
        bool declared = false;
        for (int k = 0; k < m->stage_count; k++)
            declared |= m->stages[k] == (pbfcl_stage)st;
        ck_assert_msg(declared == (ms[st] > 0.0), "stage %s: declared %d, recorded %.4f ms",
                      pbfcl_stage_name((pbfcl_stage)st), declared, ms[st]);
    }
    free(prof);
}

#endif
