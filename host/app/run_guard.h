/* The blow-up guard of `pbfcl run`: after every step it stops a run that has gone wrong,
 * with the step and what to change. It watches
 *   - non-finite positions or velocities (at once),
 *   - a particle faster than the scene's max_speed (at once),
 *   - a collapsed fluid: mean density error above RUN_GUARD_DENSITY_PERCENT % of the rest
 *     density, or neighbour lists cut short (summed over the step's substeps) more than
 *     RUN_GUARD_OVERFLOW_PERCENT / 100 times per particle, for RUN_GUARD_STEPS steps in a
 *     row. A sound run stays far below both (a dam break: about 1 % and 0). */
#ifndef PBFCL_RUN_GUARD_H
#define PBFCL_RUN_GUARD_H

#include "pbfcl.h"

#include <stdbool.h>

#define RUN_GUARD_DENSITY_PERCENT 50.0
#define RUN_GUARD_OVERFLOW_PERCENT 5.0
#define RUN_GUARD_STEPS 10

/* The guard's memory of the steps so far, and what it measures against (from the solver). */
typedef struct run_guard {
    pbfcl_solver_params solver; /* the settings the advice names */
    float speed_limit;          /* pbfcl_solver_speed_limit, m/s */
    unsigned max_neighbors;     /* pbfcl_solver_max_neighbours */
    long long dense_steps;      /* consecutive steps above the density bound */
    long long overflow_steps;   /* consecutive steps above the overflow bound */
    long long cut_steps;        /* steps in which any neighbour list was cut short */
} run_guard;

/* Sets the guard up for solver: its settings, speed limit and neighbour list capacity. */
pbfcl_status run_guard_init(run_guard *g, const pbfcl_solver *solver);

/* True (with a message giving the step and what to change) if the run must stop; warns
 * the first time a neighbour list is cut short. */
bool run_guard_check(run_guard *g, size_t n, const pbfcl_stats *st, long long step);

#endif
