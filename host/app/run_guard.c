/* The blow-up guard (run_guard.h). */
#include "run_guard.h"
#include "runtime/pbfcl_error.h"

#include <stdio.h>
#include <string.h>

static void advise(const run_guard *g, const char *extra)
{
    const pbfcl_solver_params *v = &g->solver;
    fprintf(stderr,
            "  try a smaller --dt (now %g), more --substeps (now %d) or more --iterations (now "
            "%d)%s\n",
            v->dt, v->substeps, v->iterations, extra);
}

/* Counts a step against a bound held for RUN_GUARD_STEPS in a row; true when reached. */
static bool held(long long *count, bool above)
{
    *count = above ? *count + 1 : 0;
    return *count >= RUN_GUARD_STEPS;
}

pbfcl_status run_guard_init(run_guard *g, const pbfcl_solver *solver)
{
    memset(g, 0, sizeof *g);
    PBFCL_TRY(pbfcl_solver_get_params(solver, NULL, &g->solver));
    PBFCL_TRY(pbfcl_solver_speed_limit(solver, &g->speed_limit));
    return pbfcl_solver_max_neighbours(solver, &g->max_neighbors);
}

bool run_guard_check(run_guard *g, size_t n, const pbfcl_stats *st, long long step)
{
    float limit = g->speed_limit;
    if (st->nan > 0) {
        pbfcl_errorf("the simulation blew up at step %lld: %u of %zu particles have a "
                     "non-finite position or velocity",
                     step, st->nan, n);
        advise(g, "");
        return true;
    }
    if (!(st->max_speed <= limit)) {
        pbfcl_errorf("the simulation blew up at step %lld: a particle moves at %.3g m/s, above "
                     "the limit of %.3g m/s for this scene",
                     step, st->max_speed, limit);
        advise(g, ", or raise --max-speed if such speeds are expected");
        return true;
    }
    double overflow = 100.0 * st->neighbour_overflow / (double)(n ? n : 1);
    bool dense = held(&g->dense_steps, st->density_error_avg > RUN_GUARD_DENSITY_PERCENT);
    bool full = held(&g->overflow_steps, overflow > RUN_GUARD_OVERFLOW_PERCENT);
    if (dense || full) {
        pbfcl_errorf("the simulation collapsed at step %lld: for %d steps in a row %s (mean "
                     "density error %.3g %% of the rest density; neighbour lists of %u entries "
                     "cut short %.3g times per particle in the last step)",
                     step, RUN_GUARD_STEPS,
                     dense ? "the fluid was compressed to more than 1.5 times its rest density"
                           : "neighbour lists were cut short for many particles",
                     st->density_error_avg, g->max_neighbors, overflow / 100.0);
        advise(g, ", or a weaker --gravity or --vorticity");
        return true;
    }
    if (st->neighbour_overflow > 0 && g->cut_steps++ == 0)
        pbfcl_warnf("step %lld: %u times a particle had more than %u neighbours and its list was "
                    "cut short (the fluid is compressed beyond what the solver resolves); try a "
                    "smaller --dt, more --substeps or more --iterations",
                    step, st->neighbour_overflow, g->max_neighbors);
    return false;
}
