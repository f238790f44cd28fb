/* The command-line options shared by every command that runs a scene (`pbfcl run`, `bench`,
 * `demo`): device, scene, particle count and solver overrides, parsed strictly, and the
 * step that turns them into a validated scene and its particle positions. */
#ifndef PBFCL_SCENE_OPTIONS_H
#define PBFCL_SCENE_OPTIONS_H

#include "pbfcl.h"

#include <stdbool.h>
#include <stdio.h>

/* The most solver parameters the options can hold (pbfcl_solver_param_count() must fit). */
#define PBFCL_SCENE_OPTIONS_MAX_PARAMS 64

/* The scene options given on the command line; each override has a "set" flag. */
typedef struct pbfcl_scene_options {
    const char *device;  /* --device: NULL means $PBFCL_DEVICE, else the first GPU */
    const char *scene;   /* --scene: built-in name or .json file (default "dam-break") */
    long long particles; /* --particles: -1 means the scene's own particle radius */

    /* the solver overrides: one per entry of PBFCL_SOLVER_PARAM_LIST (include/pbfcl.h), by
     * its flag; solver_set[k] tells whether parameter k was given */
    pbfcl_solver_params solver;
    bool solver_set[PBFCL_SCENE_OPTIONS_MAX_PARAMS];
    float radius; /* --radius (particle radius), m */
    bool radius_set;
    float rest_density; /* --rest-density, kg/m^3 */
    bool rest_density_set;
    float gravity[3]; /* --gravity X,Y,Z, m/s^2 */
    bool gravity_set;
} pbfcl_scene_options;

/* The scene used when --scene is not given. */
#define PBFCL_DEFAULT_SCENE "dam-break"

/* Sets every option to "not given" (scene "dam-break", particles -1, no overrides). */
void pbfcl_scene_options_init(pbfcl_scene_options *o);

/* If argv[*i] is a scene option (also as --name=value), consumes it and its value (advancing
 * *i past the value) and returns 1; returns 0 if it is not one; -1 on a bad or missing value
 * (a message naming the option and the accepted range is printed). */
int pbfcl_scene_options_parse(pbfcl_scene_options *o, int argc, char **argv, int *i);

/* Prints the lines describing the scene options (for a command's --help). */
void pbfcl_scene_options_help(FILE *f);

/* Applies the solver and scene overrides of o to a scene's parameters (not --particles). */
void pbfcl_scene_options_apply(const pbfcl_scene_options *o, pbfcl_scene_params *scene,
                               pbfcl_solver_params *solver);

/* Loads the scene, applies the overrides and --particles, validates and fills it (all through
 * the public API): *setup holds the scene (destroy it), *positions its fluid (x y z triples,
 * pbfcl_free it) and *n its particle count. */
pbfcl_status pbfcl_scene_options_build(const pbfcl_scene_options *o, pbfcl_scene_setup **setup,
                                       float **positions, size_t *n);

/* Parses a whole string as a finite double; false if it is empty, has trailing characters,
 * overflows or is not finite. */
bool pbfcl_parse_double(const char *s, double *out);

/* Parses a whole string as a decimal integer; false on trailing characters or overflow. */
bool pbfcl_parse_llong(const char *s, long long *out);

#endif
