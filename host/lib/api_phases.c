/* Phases in the API: pbfcl_make_phase, the checks of a phase array (the groups' meanings of
 * include/pbfcl.h: the fluid's group 0, bodies' groups 1 .. B, the static group) and of an
 * inverse mass array, and the conversion from and to pbfcl_solver_set_phases' short numbers. */
#include "api_internal.h"
#include "bodies/shape_match.h"
#include "pbfcl_shared.h"
#include "runtime/pbfcl_error.h"
#include "sim/sim.h"

#include <math.h>
#include <stdint.h>

_Static_assert(PBFCL_PHASE_GROUP_MASK == PBFCL_PHASE_GROUP_BITS, "phase groups");
_Static_assert(PBFCL_PHASE_FLAG_SELF_COLLIDE == PBFCL_PHASE_SELF_COLLIDE_BIT, "self-collide");
_Static_assert(PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER == PBFCL_PHASE_SELF_COLLIDE_FILTER_BIT,
               "self-collide filter");
_Static_assert(PBFCL_PHASE_FLAG_FLUID == PBFCL_PHASE_FLUID_BIT, "fluid flag");
_Static_assert(PBFCL_PHASE_GROUP_STATIC == PBFCL_PHASE_STATIC_WORD, "static group");

/* The flags pbfcl knows (bit 23, unused in FleX, is not one). */
#define KNOWN_FLAGS                                                                                \
    (PBFCL_PHASE_FLAG_SELF_COLLIDE | PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER | PBFCL_PHASE_FLAG_FLUID)

int pbfcl_make_phase(int group, int flags)
{
    if (group < 0 || group > PBFCL_PHASE_GROUP_MASK) {
        pbfcl_errorf("pbfcl_make_phase: group %d is out of range (0 to %d)", group,
                     PBFCL_PHASE_GROUP_MASK);
        return PBFCL_PHASE_INVALID;
    }
    if (flags & ~KNOWN_FLAGS) {
        pbfcl_errorf("pbfcl_make_phase: flags 0x%x hold unknown bits 0x%x (give "
                     "PBFCL_PHASE_FLAG_SELF_COLLIDE, _SELF_COLLIDE_FILTER or _FLUID)",
                     (unsigned)flags, (unsigned)(flags & ~KNOWN_FLAGS));
        return PBFCL_PHASE_INVALID;
    }
    return group | flags;
}

int pbfcl_api_phase_from_short(int phase)
{
    if (phase == PBFCL_PHASE_FLUID)
        return (int)PBFCL_PHASE_FLUID_WORD;
    return phase == PBFCL_PHASE_STATIC ? PBFCL_PHASE_GROUP_STATIC : phase;
}

int pbfcl_api_phase_to_short(int phase)
{
    if (phase & PBFCL_PHASE_FLAG_FLUID)
        return PBFCL_PHASE_FLUID;
    int group = phase & PBFCL_PHASE_GROUP_MASK;
    return group == PBFCL_PHASE_GROUP_STATIC ? PBFCL_PHASE_STATIC : group;
}

/* What is wrong with phase p of a solver of count particles, or NULL. */
static const char *phase_fault(int p, size_t count)
{
    int group = p & PBFCL_PHASE_GROUP_MASK, flags = p & ~PBFCL_PHASE_GROUP_MASK;
    if (flags & ~KNOWN_FLAGS)
        return "it has unknown flag bits (above bit 22; -1 is PBFCL_PHASE_INVALID, or the short "
               "PBFCL_PHASE_STATIC of pbfcl_solver_set_phases)";
    if (flags & PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER)
        return "PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER is not supported yet";
    if ((flags & PBFCL_PHASE_FLAG_FLUID) && p != (int)PBFCL_PHASE_FLUID_WORD)
        return "the only fluid phase is group 0 with the fluid and self-collide flags";
    if (p == (int)PBFCL_PHASE_FLUID_WORD)
        return NULL;
    if (group == 0)
        return "group 0 is the fluid's: give it the fluid and self-collide flags (a solid "
               "outside any body is not supported yet)";
    if (group == PBFCL_PHASE_GROUP_STATIC)
        return flags ? "the static group takes no flags" : NULL;
    if (!flags && group >= PBFCL_PHASE_SOLID_GROUP(PBFCL_SOLVER_MAX_GROUPS - 1))
        return "it is a solid group's phase (PBFCL_PHASE_SOLID_GROUP): give the particle the "
               "fluid's phase here, then put it into its group with pbfcl_solver_set_groups";
    if ((size_t)group > count)
        return "its group is out of range: body b is group b + 1, b below the particle count";
    return NULL;
}

pbfcl_status pbfcl_api_check_phases(const char *func, const int *phases, size_t count,
                                    size_t *bodies, size_t *sizes, int *body_phase)
{
    size_t nb = 0;
    for (size_t i = 0; i < count; i++) {
        int p = phases[i];
        const char *fault = phase_fault(p, count);
        if (fault) {
            pbfcl_errorf("%s: particle %zu has phase %d (0x%x): %s", func, i, p, (unsigned)p,
                         fault);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        int group = p & PBFCL_PHASE_GROUP_MASK;
        if (p == (int)PBFCL_PHASE_FLUID_WORD || group == PBFCL_PHASE_GROUP_STATIC)
            continue;
        size_t b = (size_t)group - 1;
        if (sizes[b]++ == 0)
            body_phase[b] = p;
        else if (body_phase[b] != p) {
            pbfcl_errorf("%s: particle %zu has phase 0x%x, but body %zu (group %d) has phase "
                         "0x%x: a group's particles share one phase (its flags)",
                         func, i, (unsigned)p, b, group, (unsigned)body_phase[b]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        nb = b + 1 > nb ? b + 1 : nb;
    }
    for (size_t b = 0; b < nb; b++)
        if (sizes[b] < PBFCL_SHAPE_MATCH_MIN_PARTICLES) {
            pbfcl_errorf("%s: body %zu has %zu particle%s; a body needs at least %d (bodies "
                         "are numbered 0 to %zu without gaps, body b in group b + 1)",
                         func, b, sizes[b], sizes[b] == 1 ? "" : "s",
                         PBFCL_SHAPE_MATCH_MIN_PARTICLES, nb - 1);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    *bodies = nb;
    return PBFCL_OK;
}

/* What is wrong with inverse mass w (1/kg) of a particle of phase p (fluid_w: the fluid's;
 * volume: a particle's, V = m / rest_density), or NULL. */
static const char *inv_mass_fault(float w, int p, double fluid_w, double volume)
{
    if (isnan(w) || w < 0.0f || isinf(w))
        return "an inverse mass is a finite number, 0 or above";
    if (p == (int)PBFCL_PHASE_FLUID_WORD)
        return fabs(w - fluid_w) <= 1e-5 * fluid_w
                   ? NULL
                   : "a fluid particle's is the fluid's, 1 / (rest_density V), V = (2r)^3 / 1.0098 "
                     "at the default h_ratio";
    if ((p & PBFCL_PHASE_GROUP_MASK) == PBFCL_PHASE_GROUP_STATIC)
        return w == 0.0f ? NULL : "a static particle's is 0";
    if (pbfcl_api_phase_is_group(p))
        return w > 0.0f ? NULL : "a solid group's particle moves: give a value above 0";
    if (w == 0.0f) /* a body's particle */
        return "a body's particle moves: 0 is the static group's (give it "
               "PBFCL_PHASE_GROUP_STATIC)";
    double density = 1.0 / (w * volume); /* as pbfcl_solver_set_body takes it */
    if (!(density >= 0.1 && density <= 1e5))
        return "a body's density 1 / (w V) must be between 0.1 and 1e5 kg/m^3";
    return NULL;
}

pbfcl_status pbfcl_api_check_inverse_masses(const char *func, const float *w, const int *phases,
                                            size_t count, double fluid_w, double volume,
                                            float *body_w)
{
    for (size_t i = 0; i < count; i++) {
        const char *fault = inv_mass_fault(w[i], phases[i], fluid_w, volume);
        if (fault) {
            pbfcl_errorf("%s: particle %zu (phase 0x%x) has inverse mass %g 1/kg: %s", func, i,
                         (unsigned)phases[i], w[i], fault);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        int group = phases[i] & PBFCL_PHASE_GROUP_MASK;
        if (phases[i] == (int)PBFCL_PHASE_FLUID_WORD || group == PBFCL_PHASE_GROUP_STATIC ||
            pbfcl_api_phase_is_group(phases[i]))
            continue;
        float *bw = body_w + (group - 1);
        if (*bw == 0.0f) {
            *bw = w[i];
        } else if (*bw != w[i]) {
            pbfcl_errorf("%s: particle %zu has inverse mass %g 1/kg, but body %d has %g: a "
                         "body's particles are of one mass",
                         func, i, w[i], group - 1, *bw);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    return PBFCL_OK;
}

_Static_assert(PBFCL_PHASE_SOLID_GROUP(7) == (int)PBFCL_SIM_PHASE_GROUP(7), "solid groups");

bool pbfcl_api_phase_is_group(int phase)
{
    return phase < (int)PBFCL_SIM_PHASE_STATIC &&
           phase >= (int)PBFCL_SIM_PHASE_GROUP(PBFCL_SIM_MAX_GROUPS - 1);
}
