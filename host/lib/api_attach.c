/* Attachments in the API (pbfcl.h, "attachments"): particles held by collision shapes and bodies
 * (pbf/attach.h), by particle index; the phase each kind needs is checked here, the rest there,
 * each refused input named with its index and the fix. */
#include "api_internal.h"
#include "pbf/attach.h"
#include "runtime/pbfcl_error.h"
#include "sim/sim.h"

_Static_assert(PBFCL_ATTACH_SHAPE == PBFCL_PBF_ATTACH_SHAPE &&
                   PBFCL_ATTACH_BODY == PBFCL_PBF_ATTACH_BODY,
               "attachment kinds");

/* The simulation of a live solver running pbf, with its count and phases; NULL (logged) if not. */
static pbfcl_sim *attach_sim(const char *func, pbfcl_solver *s, size_t *n, int **phases)
{
    pbfcl_sim *sim;
    double fluid_w;
    if (!pbfcl_api_solver_cloth(func, s, &sim, n, phases, &fluid_w))
        return NULL;
    if (pbfcl_sim_scene(sim)->solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("%s: attachments are method pbf's, and this solver runs %s: set "
                     "solver.method to pbf",
                     func, pbfcl_method_name(pbfcl_sim_scene(sim)->solver.method));
        return NULL;
    }
    return sim;
}

/* What is wrong with attachment k's particle for its kind, or NULL (the rest is checked in
 * pbfcl_pbf_set_attachments). */
static const char *phase_fault(unsigned particle, int kind, size_t n, const int *phases)
{
    if (particle >= n)
        return "names a particle beyond the particle count: give an index below it";
    if (kind == PBFCL_ATTACH_SHAPE && phases[particle] != PBFCL_PHASE_GROUP_STATIC)
        return "attaches a particle that is not static to a shape: make it static first "
               "(pbfcl_solver_set_phases, PBFCL_PHASE_STATIC), as a pinned particle";
    if (kind == PBFCL_ATTACH_BODY && !pbfcl_api_phase_is_group(phases[particle]))
        return "attaches a particle of no solid group to a body: put it into a cloth's or "
               "rope's group first (pbfcl_solver_set_groups)";
    return NULL;
}

pbfcl_status pbfcl_solver_set_attachments(pbfcl_solver *s, const unsigned *particle,
                                          const int *kind, const int *target, const float *point,
                                          const float *compliance, size_t count)
{
    const char *f = "pbfcl_solver_set_attachments";
    size_t n;
    int *phases;
    pbfcl_sim *sim = attach_sim(f, s, &n, &phases);
    if (!sim)
        return PBFCL_ERR_BAD_ARGUMENT;
    if (count > 0 && (!particle || !kind || !target || !point)) {
        pbfcl_errorf("%s: particle, kind, target and point must not be NULL with count %zu; give "
                     "arrays (compliance may be NULL: 0)",
                     f, count);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t k = 0; k < count; k++) {
        const char *fault = phase_fault(particle[k], kind[k], n, phases);
        if (fault) {
            pbfcl_errorf("%s: attachment %zu (particle %u) %s", f, k, particle[k], fault);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    return pbfcl_pbf_set_attachments(sim, count, particle, kind, target, point, compliance);
}

pbfcl_status pbfcl_solver_attachment_count(pbfcl_solver *s, size_t *count)
{
    size_t n;
    int *phases;
    pbfcl_sim *sim = attach_sim("pbfcl_solver_attachment_count", s, &n, &phases);
    if (!sim || !count)
        return PBFCL_ERR_BAD_ARGUMENT;
    *count = pbfcl_pbf_attachment_count(sim);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_get_attachments(pbfcl_solver *s, unsigned *particle, int *kind,
                                          int *target, float *point, float *compliance,
                                          size_t count)
{
    const char *f = "pbfcl_solver_get_attachments";
    size_t n;
    int *phases;
    pbfcl_sim *sim = attach_sim(f, s, &n, &phases);
    if (!sim)
        return PBFCL_ERR_BAD_ARGUMENT;
    size_t have = pbfcl_pbf_attachment_count(sim);
    if (count != have) {
        pbfcl_errorf("%s: count is %zu, but there are %zu attachments: give "
                     "pbfcl_solver_attachment_count's number",
                     f, count, have);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return pbfcl_pbf_get_attachments(sim, particle, kind, target, point, compliance, NULL);
}

pbfcl_status pbfcl_api_clear_attachments(pbfcl_sim *sim)
{
    if (pbfcl_sim_scene(sim)->solver.method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    return pbfcl_pbf_set_attachments(sim, 0, NULL, NULL, NULL, NULL, NULL);
}
