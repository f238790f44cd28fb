/* Live solver parameters: one notch up or down within the parameter list's ranges, gravity's
 * direction, and their HUD line. */
#include "demo_params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The parameter list's name of each tunable scalar, and whether it moves by factors. */
static const struct {
    const char *name;
    bool scaled;
} tunable[PBFCL_DEMO_TUNE_WIND] = {
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

/* The wind's heading in degrees from +x, counterclockwise seen from above (+y). */
static double wind_heading(const double w[3])
{
    double h = atan2(-w[2], w[0]) * 180.0 / 3.14159265358979;
    return h == 0.0 ? 0.0 : h; /* not -0 for a wind along +x */
}

/* The wind one notch faster or slower (turn false) or turned 45 degrees about +y. */
static bool tune_wind(pbfcl_solver_params *p, bool turn, int notch, char *message, size_t size)
{
    double w[3] = {p->wind_x, p->wind_y, p->wind_z};
    double speed = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (turn && speed == 0.0) {
        snprintf(message, size, "no wind to turn: W starts it");
        return false;
    }
    if (turn) {
        double a = (notch > 0 ? 45.0 : -45.0) * 3.14159265358979 / 180.0;
        double x = cos(a) * w[0] + sin(a) * w[2], z = -sin(a) * w[0] + cos(a) * w[2];
        w[0] = x;
        w[2] = z;
    } else if (speed == 0.0) {
        if (notch < 0) {
            snprintf(message, size, "there is no wind to weaken");
            return false;
        }
        w[0] = 1.0;
    } else {
        double next = notch > 0         ? (speed < 1.0 ? 1.0 : 2.0 * speed)
                      : speed <= 1.0001 ? 0.0
                                        : 0.5 * speed;
        for (int k = 0; k < 3; k++)
            w[k] *= next / speed;
    }
    static const char *const names[3] = {"wind_x", "wind_y", "wind_z"};
    for (int k = 0; k < 3; k++) {
        const pbfcl_param_info *info = find_param(names[k]);
        if (!info || !pbfcl_param_in_range(info, w[k])) {
            char range[96] = "in its range";
            if (info)
                pbfcl_param_range_text(info, range, sizeof range);
            snprintf(message, size, "the wind stays: %s would be %g, it must be %s", names[k], w[k],
                     range);
            return false;
        }
    }
    p->wind_x = (float)w[0];
    p->wind_y = (float)w[1];
    p->wind_z = (float)w[2];
    double now = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (now == 0.0)
        snprintf(message, size, "wind off");
    else
        snprintf(message, size, "wind %g m/s at %.0f degrees (%g %g %g m/s)", now, wind_heading(w),
                 (double)p->wind_x, (double)p->wind_y, (double)p->wind_z);
    return true;
}

bool pbfcl_demo_tune_step(pbfcl_solver_params *p, pbfcl_demo_tune which, int notch, char *message,
                          size_t size)
{
    if ((which == PBFCL_DEMO_TUNE_WIND || which == PBFCL_DEMO_TUNE_WIND_TURN) && notch != 0)
        return tune_wind(p, which == PBFCL_DEMO_TUNE_WIND_TURN, notch, message, size);
    const pbfcl_param_info *info =
        (int)which >= 0 && which < PBFCL_DEMO_TUNE_WIND ? find_param(tunable[which].name) : NULL;
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
    int n = snprintf(text, size, "ITER %d  VISC %.3g  VORT %.3g M/S", p->iterations,
                     (double)p->viscosity, (double)p->vorticity);
    double w[3] = {p->wind_x, p->wind_y, p->wind_z};
    double speed = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (speed > 0.0 && n >= 0 && (size_t)n < size)
        snprintf(text + n, size - (size_t)n, "  WIND %.3g M/S AT %.0f DEG", speed, wind_heading(w));
}
