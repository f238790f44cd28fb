/* A cloth that cannot hold: once, after the first frames, the stretch of each solid group's
 * rigid distance constraints (compliance 0, tethers aside) is measured on the host; a group
 * stretched on average beyond PBFCL_HOLD_MAX_STRETCH gets one warning naming it, its stretch
 * and what to change (more iterations or substeps, tethers, or a compliance). */
#include "api_internal.h"
#include "pbf/distance.h"
#include "runtime/pbfcl_error.h"
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>

/* The group of a phase (pbfcl_make_phase's), or -1. */
static long group_of(int phase)
{
    return pbfcl_api_phase_is_group(phase) ? (long)(PBFCL_PHASE_GROUP_STATIC - 1 - phase) : -1;
}

/* Per group g < groups: sum[g] of the rigid constraints' stretch (max(0, |x_a - x_b| / rest -
 * 1)), count[g] and most[g], a constraint counted in the group of its first grouped particle;
 * groups with a tear limit are left out (they are meant to stretch to it). */
static void stretch_by_group(const pbfcl_api_cloth *cloth, const int *phases, const float *pos,
                             size_t c, const unsigned *pair, const float *rest,
                             const float *compliance, const unsigned char *tether, double *sum,
                             size_t *count, double *most, size_t groups)
{
    for (size_t k = 0; k < c; k++) {
        if (tether[k] || compliance[k] != 0.0f || !(rest[k] > 0.0f))
            continue;
        unsigned a = pair[2 * k], b = pair[2 * k + 1];
        long g = group_of(phases[a]) >= 0 ? group_of(phases[a]) : group_of(phases[b]);
        if (g < 0 || (size_t)g >= groups ||
            ((size_t)g < cloth->tear_groups && cloth->tear[g] > 0.0f))
            continue;
        double d2 = 0.0;
        for (int x = 0; x < 3; x++)
            d2 += pow((double)pos[3 * a + x] - pos[3 * b + x], 2.0);
        double e = fmax(0.0, sqrt(d2) / rest[k] - 1.0);
        sum[g] += e;
        count[g]++;
        most[g] = fmax(most[g], e);
    }
}

/* Warns about the group stretched most on average if that passes the limit. */
static void warn_worst(const pbfcl_scene *sc, const double *sum, const size_t *count,
                       const double *most, size_t groups)
{
    long worst = -1;
    int others = 0;
    for (size_t g = 0; g < groups; g++)
        if (count[g] && sum[g] / count[g] > PBFCL_HOLD_MAX_STRETCH) {
            others += worst >= 0;
            if (worst < 0 || sum[g] / count[g] > sum[worst] / count[worst])
                worst = (long)g;
        }
    if (worst < 0)
        return;
    pbfcl_warnf("the rigid distance constraints (compliance 0) of solid group %ld (a scene's "
                "cloths, ropes and inflatables are groups 0, 1, ... in file order) are "
                "stretched by %.1f %% on average, %.1f %% at most, after %d steps%s: %d "
                "iterations and %d substeps cannot hold them. Give more iterations "
                "(solver.iterations, --iterations) or substeps, tethers to its pins (a hanging "
                "cloth or rope), or a stretch compliance if it should stretch",
                worst, 100.0 * sum[worst] / count[worst], 100.0 * most[worst],
                PBFCL_HOLD_CHECK_STEP, others ? " (and other groups too)" : "",
                sc->solver.iterations, sc->solver.substeps);
}

pbfcl_status pbfcl_api_cloth_hold(pbfcl_solver *s)
{
    pbfcl_sim *sim;
    size_t n;
    int *phases;
    double fluid_w;
    pbfcl_api_cloth *cloth =
        pbfcl_api_solver_cloth("pbfcl_solver_step", s, &sim, &n, &phases, &fluid_w);
    if (!cloth)
        return PBFCL_ERR_INVALID_HANDLE;
    size_t c = pbfcl_api_distance_count(sim), groups = PBFCL_SOLVER_MAX_GROUPS;
    if (c == 0 || cloth->hold_steps > PBFCL_HOLD_CHECK_STEP ||
        ++cloth->hold_steps < PBFCL_HOLD_CHECK_STEP)
        return PBFCL_OK;
    cloth->hold_steps++; /* past the check: never again */
    float *pos = malloc(3 * n * sizeof *pos + 1), *rest = malloc(c * sizeof *rest + 1);
    float *compliance = malloc(c * sizeof *compliance + 1);
    unsigned *pair = malloc(2 * c * sizeof *pair + 1);
    unsigned char *tether = malloc(c + 1);
    double *sum = calloc(groups, sizeof *sum), *most = calloc(groups, sizeof *most);
    size_t *count = calloc(groups, sizeof *count);
    pbfcl_status st = pos && rest && compliance && pair && tether && sum && most && count
                          ? pbfcl_solver_get_positions(s, pos, n)
                          : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_pbf_get_distances(sim, pair, rest, compliance, tether);
    if (st == PBFCL_OK) {
        stretch_by_group(cloth, phases, pos, c, pair, rest, compliance, tether, sum, count, most,
                         groups);
        warn_worst(pbfcl_sim_scene(sim), sum, count, most, groups);
    }
    free(pos);
    free(rest);
    free(compliance);
    free(pair);
    free(tether);
    free(sum);
    free(most);
    free(count);
    return st;
}
