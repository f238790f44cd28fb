/* Live solver parameters: one notch up or down within the parameter list's ranges, gravity's
 * direction, and their HUD line. */
#include "demo_params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The parameter list's name of each tunable parameter, and whether it moves by factors. */
static const struct {
    const char *name;
    bool scaled;
} tunable[PBFCL_DEMO_TUNE_COUNT] = {
    {"iterations", false},
    {"viscosity", true},
    {"vorticity", true},
};

static const pbfcl_param_info *find_param(const char *name)
{
    for (int i = 0; i < pbfcl_solver_param_count(); i++)
        if (!strcmp(pbfcl_solver_param(i)->name, name))
            return pbfcl_solver_param(i);
    return NULL;
}

/* The value one notch from v: +-1, or doubled / halved down to a sixteenth of the default
 * and from there to 0 (and back up from 0). */
static double next_value(const pbfcl_param_info *info, bool scaled, double v, int notch)
{
    if (!scaled)
        return v + (notch > 0 ? 1.0 : -1.0);
    double least = info->def / 16.0;
    if (notch > 0)
        return v < least ? least : 2.0 * v;
    return v <= least * 1.0001 ? 0.0 : 0.5 * v;
}

bool pbfcl_demo_tune_step(pbfcl_solver_params *p, pbfcl_demo_tune which, int notch, char *message,
                          size_t size)
{
    const pbfcl_param_info *info =
        (int)which >= 0 && which < PBFCL_DEMO_TUNE_COUNT ? find_param(tunable[which].name) : NULL;
    if (!info || notch == 0) {
        snprintf(message, size, "no such setting");
        return false;
    }
    double v = pbfcl_param_get(p, info);
    double next = next_value(info, tunable[which].scaled, v, notch);
    if (!pbfcl_param_in_range(info, next)) {
        char range[96];
        pbfcl_param_range_text(info, range, sizeof range);
        snprintf(message, size, "%s stays %g: it must be %s", info->name, v, range);
        return false;
    }
    pbfcl_param_set(p, info, next);
    snprintf(message, size, "%s %g%s%s", info->name, pbfcl_param_get(p, info),
             info->unit[0] ? " " : "", info->unit);
    return true;
}

void pbfcl_demo_gravity_turn(const float g0[3], float pitch_deg, float roll_deg, float out[3])
{
    const float to_rad = 3.14159265f / 180.0f;
    float cp = cosf(pitch_deg * to_rad), sp = sinf(pitch_deg * to_rad);
    float cr = cosf(roll_deg * to_rad), sr = sinf(roll_deg * to_rad);
    float y = cp * g0[1] - sp * g0[2], z = sp * g0[1] + cp * g0[2]; /* about x */
    out[0] = cr * g0[0] - sr * y;                                   /* about z */
    out[1] = sr * g0[0] + cr * y;
    out[2] = z;
}

void pbfcl_demo_tune_describe(const pbfcl_solver_params *p, char *text, size_t size)
{
    snprintf(text, size, "ITER %d  VISC %.3g  VORT %.3g M/S", p->iterations, (double)p->viscosity,
             (double)p->vorticity);
}
