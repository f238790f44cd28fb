/* Live solver parameters: the keys that change the density iterations, the XSPH viscosity and
 * the vorticity confinement between steps, each kept inside its range from the parameter list
 * (include/pbfcl.h), and gravity turned by the arrow keys. No GL and no OpenCL here: the
 * tests build this file on its own. */
#ifndef PBFCL_DEMO_PARAMS_H
#define PBFCL_DEMO_PARAMS_H

#include "pbfcl.h"

#include <stdbool.h>
#include <stddef.h>

/* The solver parameters the demo's keys change. */
typedef enum pbfcl_demo_tune {
    PBFCL_DEMO_TUNE_ITERATIONS, /* I / shift+I: one more / fewer */
    PBFCL_DEMO_TUNE_VISCOSITY,  /* V / shift+V: doubled / halved */
    PBFCL_DEMO_TUNE_VORTICITY,  /* O / shift+O: doubled / halved */
    PBFCL_DEMO_TUNE_WIND,       /* W / shift+W: the wind's speed doubled / halved */
    PBFCL_DEMO_TUNE_WIND_TURN,  /* E / shift+E: the wind turned 45 degrees left / right */
    PBFCL_DEMO_TUNE_COUNT
} pbfcl_demo_tune;

/* Changes parameter `which` of p by one notch up (notch > 0) or down: iterations by one;
 * viscosity and vorticity doubled or halved, from 0 to their smallest notch (a sixteenth of
 * the default) and below it back to 0; the wind (wind_x, wind_y, wind_z) doubled or halved in
 * speed, from none to 1 m/s along +x and below 1 m/s back to none, or turned 45 degrees about
 * +y (up): left (counterclockwise seen from above) for a notch up. A value outside the
 * parameter's range leaves p as it was and returns false. message gets the new value or the
 * limit reached. */
bool pbfcl_demo_tune_step(pbfcl_solver_params *p, pbfcl_demo_tune which, int notch, char *message,
                          size_t size);

/* Gravity of the same magnitude as g0, turned by pitch degrees about x, then roll degrees
 * about z. */
void pbfcl_demo_gravity_turn(const float g0[3], float pitch_deg, float roll_deg, float out[3]);

/* The HUD line of the live solver settings, e.g. "ITER 4  VISC 0.05  VORT 0.01 M/S", with
 * "  WIND 4 M/S AT 45 DEG" (the heading from +x, counterclockwise seen from above) when there
 * is wind. */
void pbfcl_demo_tune_describe(const pbfcl_solver_params *p, char *text, size_t size);

#endif
