/* The scene options shared by `pbfcl run`, `bench` and `demo`: one table names each option,
 * its value, its accepted range and where it is stored; values are parsed strictly (whole
 * string, finite, in range) and a bad one is reported with the option and the range. */
#include "scene_options.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum opt_kind { OPT_STRING, OPT_INT, OPT_LLONG, OPT_FLOAT, OPT_VEC3 } opt_kind;

/* One option: its name, value placeholder, kind, range [lo, hi] (lo excluded when lo_open),
 * where the value and its "set" flag live in pbfcl_scene_options, and its help line. */
typedef struct opt_spec {
    const char *name;
    const char *arg;
    opt_kind kind;
    const char *key; /* the scene-file key whose range applies (pbfcl_scene_range), or NULL */
    size_t value_off, set_off;
    const char *help;
} opt_spec;

#define NO_SET ((size_t)-1)
#define OFF(f) offsetof(pbfcl_scene_options, f)

/* --particles is not a scene-file setting: its range is the solver's particle limit. */
static const pbfcl_setting_range particles_range = {"particles", 1,     PBFCL_SCENE_MAX_PARTICLES,
                                                    false,       false, true};

static const opt_spec opt_specs[] = {
    {"--device", "D", OPT_STRING, NULL, OFF(device), NO_SET,
     "OpenCL device: index from `pbfcl devices` or part of its name"},
    {"--scene", "NAME|FILE", OPT_STRING, NULL, OFF(scene), NO_SET,
     "dam-break (default), double-dam-break, drop, or a .json scene file"},
    {"--particles", "N", OPT_LLONG, "particles", OFF(particles), NO_SET,
     "about N particles (sets the particle radius); default: the scene's radius"},
    {"--dt", "S", OPT_FLOAT, "solver.dt", OFF(dt), OFF(dt_set), "frame time step, seconds"},
    {"--substeps", "N", OPT_INT, "solver.substeps", OFF(substeps), OFF(substeps_set),
     "substeps per frame"},
    {"--iterations", "N", OPT_INT, "solver.iterations", OFF(iterations), OFF(iterations_set),
     "density solver iterations per substep"},
    {"--stabilization", "N", OPT_INT, "solver.stabilization_iterations", OFF(stabilization),
     OFF(stabilization_set), "collision stabilisation iterations"},
    {"--contact-interval", "N", OPT_INT, "solver.contact_interval", OFF(contact_interval),
     OFF(contact_interval_set), "collision passes after every N-th iteration and the last"},
    {"--chebyshev", "RHO", OPT_FLOAT, "solver.chebyshev_rho", OFF(chebyshev_rho),
     OFF(chebyshev_rho_set), "Chebyshev acceleration's spectral radius estimate (0: plain Jacobi)"},
    {"--cfl", "C", OPT_FLOAT, "solver.cfl", OFF(cfl), OFF(cfl_set),
     "a particle moves at most C * h per substep (adaptive substeps)"},
    {"--vorticity", "E", OPT_FLOAT, "solver.vorticity", OFF(vorticity), OFF(vorticity_set),
     "vorticity confinement epsilon (0: off)"},
    {"--viscosity", "C", OPT_FLOAT, "solver.viscosity", OFF(viscosity), OFF(viscosity_set),
     "XSPH viscosity c (0: off)"},
    {"--relaxation", "E", OPT_FLOAT, "solver.relaxation", OFF(relaxation), OFF(relaxation_set),
     "constraint relaxation epsilon"},
    {"--h-ratio", "K", OPT_FLOAT, "solver.h_ratio", OFF(h_ratio), OFF(h_ratio_set),
     "kernel radius h = K * particle radius"},
    {"--scorr-k", "K", OPT_FLOAT, "solver.scorr_k", OFF(scorr_k), OFF(scorr_k_set),
     "tensile correction strength k (0: off)"},
    {"--scorr-n", "N", OPT_INT, "solver.scorr_n", OFF(scorr_n), OFF(scorr_n_set),
     "tensile correction exponent n"},
    {"--scorr-dq", "Q", OPT_FLOAT, "solver.scorr_dq", OFF(scorr_dq), OFF(scorr_dq_set),
     "tensile correction delta q, a fraction of h"},
    {"--contact-slop", "S", OPT_FLOAT, "solver.contact_slop", OFF(contact_slop),
     OFF(contact_slop_set), "overlap (fraction of 2r) that contacts resolve by moving x* alone"},
    {"--max-speed", "V", OPT_FLOAT, "solver.max_speed", OFF(max_speed), OFF(max_speed_set),
     "blow-up guard: a speed above V m/s stops the run (0: derived from the scene)"},
    {"--radius", "R", OPT_FLOAT, "particle_radius", OFF(radius), OFF(radius_set),
     "particle radius, m (instead of --particles)"},
    {"--rest-density", "RHO", OPT_FLOAT, "rest_density", OFF(rest_density), OFF(rest_density_set),
     "rest density, kg/m^3"},
    {"--gravity", "X,Y,Z", OPT_VEC3, "gravity", OFF(gravity), OFF(gravity_set),
     "gravity vector, m/s^2"},
};

#define OPT_COUNT (sizeof opt_specs / sizeof opt_specs[0])

bool pbfcl_parse_double(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool pbfcl_parse_llong(const char *s, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

void pbfcl_scene_options_init(pbfcl_scene_options *o)
{
    memset(o, 0, sizeof *o);
    o->scene = PBFCL_DEFAULT_SCENE;
    o->particles = -1;
}

static const pbfcl_setting_range *spec_range(const opt_spec *s)
{
    return s->kind == OPT_LLONG ? &particles_range : pbfcl_scene_range(s->key);
}

/* Writes the accepted range of an option, e.g. "a number > 0 and <= 1". */
static void range_text(const opt_spec *s, char *buf, size_t size)
{
    char text[96];
    pbfcl_range_text(spec_range(s), text, sizeof text);
    snprintf(buf, size, "%s%s", s->kind == OPT_VEC3 ? "three values X,Y,Z, each " : "", text);
}

/* True if v, and v as stored (a float rounds tiny values to 0), are in the option's range. */
static bool in_range(const opt_spec *s, double v)
{
    const pbfcl_setting_range *r = spec_range(s);
    bool stored_ok = s->kind == OPT_INT || s->kind == OPT_LLONG || pbfcl_range_holds(r, (float)v);
    return pbfcl_range_holds(r, v) && stored_ok;
}

/* Parses "X,Y,Z" into three in-range floats. */
static bool parse_vec3(const opt_spec *s, const char *text, float out[3])
{
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return false;
    strcpy(buf, text);
    char *p = buf;
    for (int k = 0; k < 3; k++) {
        char *comma = strchr(p, ',');
        if ((k < 2) != (comma != NULL))
            return false;
        if (comma)
            *comma = '\0';
        double v;
        if (!pbfcl_parse_double(p, &v) || !in_range(s, v))
            return false;
        out[k] = (float)v;
        p = comma ? comma + 1 : p;
    }
    return true;
}

/* Parses and stores one option's value; false if it is not valid. */
static bool store_value(const opt_spec *s, pbfcl_scene_options *o, const char *text)
{
    char *field = (char *)o + s->value_off;
    double d;
    long long ll;
    switch (s->kind) {
    case OPT_STRING:
        if (text[0] == '\0')
            return false;
        *(const char **)field = text;
        return true;
    case OPT_INT:
    case OPT_LLONG:
        if (!pbfcl_parse_llong(text, &ll) || !in_range(s, (double)ll))
            return false;
        if (s->kind == OPT_INT)
            *(int *)field = (int)ll;
        else
            *(long long *)field = ll;
        return true;
    case OPT_FLOAT:
        if (!pbfcl_parse_double(text, &d) || !in_range(s, d))
            return false;
        *(float *)field = (float)d;
        return true;
    case OPT_VEC3:
        return parse_vec3(s, text, (float *)field);
    }
    return false;
}

/* The option named by arg (either "--name" or "--name=value"); NULL if none. */
static const opt_spec *find_spec(const char *arg, const char **inline_value)
{
    for (size_t k = 0; k < OPT_COUNT; k++) {
        size_t len = strlen(opt_specs[k].name);
        if (strncmp(arg, opt_specs[k].name, len) != 0)
            continue;
        if (arg[len] == '\0') {
            *inline_value = NULL;
            return &opt_specs[k];
        }
        if (arg[len] == '=') {
            *inline_value = arg + len + 1;
            return &opt_specs[k];
        }
    }
    return NULL;
}

int pbfcl_scene_options_parse(pbfcl_scene_options *o, int argc, char **argv, int *i)
{
    const char *value = NULL;
    const opt_spec *s = find_spec(argv[*i], &value);
    if (!s)
        return 0;
    if (!value) {
        if (*i + 1 >= argc) {
            pbfcl_errorf("%s needs a value (%s %s)", s->name, s->name, s->arg);
            return -1;
        }
        value = argv[++*i];
    }
    if (!store_value(s, o, value)) {
        char range[128];
        range_text(s, range, sizeof range);
        double d;
        if (s->kind == OPT_STRING)
            pbfcl_errorf("%s needs a non-empty value (%s %s)", s->name, s->name, s->arg);
        else if (s->kind == OPT_FLOAT && pbfcl_parse_double(value, &d) &&
                 pbfcl_range_holds(spec_range(s), d))
            pbfcl_errorf("%s: '%s' becomes %g in single precision, outside the accepted range; "
                         "expected %s",
                         s->name, value, (double)(float)d, range);
        else
            pbfcl_errorf("%s: '%s' is not valid; expected %s", s->name, value, range);
        return -1;
    }
    if (s->set_off != NO_SET)
        *(bool *)((char *)o + s->set_off) = true;
    (*i)++;
    return 1;
}

void pbfcl_scene_options_help(FILE *f)
{
    for (size_t k = 0; k < OPT_COUNT; k++) {
        const opt_spec *s = &opt_specs[k];
        char left[40];
        snprintf(left, sizeof left, "%s %s", s->name, s->arg);
        fprintf(f, "  %-24s %s", left, s->help);
        if (s->kind != OPT_STRING) {
            char range[128];
            range_text(s, range, sizeof range);
            fprintf(f, " (%s)", range);
        }
        fputc('\n', f);
    }
    fprintf(f, "  (options also take the form --name=value; solver overrides replace the "
               "scene's values)\n");
}

void pbfcl_scene_options_apply(const pbfcl_scene_options *o, pbfcl_scene *scene)
{
    pbfcl_solver_settings *sv = &scene->solver;
    if (o->dt_set)
        sv->dt = o->dt;
    if (o->substeps_set)
        sv->substeps = o->substeps;
    if (o->iterations_set)
        sv->iterations = o->iterations;
    if (o->stabilization_set)
        sv->stabilization_iterations = o->stabilization;
    if (o->contact_interval_set)
        sv->contact_interval = o->contact_interval;
    if (o->chebyshev_rho_set)
        sv->chebyshev_rho = o->chebyshev_rho;
    if (o->cfl_set)
        sv->cfl = o->cfl;
    if (o->vorticity_set)
        sv->vorticity = o->vorticity;
    if (o->viscosity_set)
        sv->viscosity = o->viscosity;
    if (o->relaxation_set)
        sv->relaxation = o->relaxation;
    if (o->h_ratio_set)
        sv->h_ratio = o->h_ratio;
    if (o->scorr_k_set)
        sv->scorr_k = o->scorr_k;
    if (o->scorr_n_set)
        sv->scorr_n = (float)o->scorr_n;
    if (o->scorr_dq_set)
        sv->scorr_dq = o->scorr_dq;
    if (o->contact_slop_set)
        sv->contact_slop = o->contact_slop;
    if (o->max_speed_set)
        sv->max_speed = o->max_speed;
    if (o->radius_set)
        scene->particle_radius = o->radius;
    if (o->rest_density_set)
        scene->rest_density = o->rest_density;
    if (o->gravity_set)
        memcpy(scene->gravity, o->gravity, sizeof scene->gravity);
}

pbfcl_status pbfcl_scene_options_build(const pbfcl_scene_options *o, pbfcl_scene *scene,
                                       float **positions, size_t *n)
{
    *positions = NULL;
    *n = 0;
    if (o->radius_set && o->particles >= 0) {
        pbfcl_errorf("--particles and --radius both set the particle size; give only one");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    const char *name = o->scene ? o->scene : PBFCL_DEFAULT_SCENE;
    PBFCL_TRY(pbfcl_scene_parse(name, scene));
    pbfcl_scene_options_apply(o, scene);
    pbfcl_status st = PBFCL_OK;
    if (o->particles >= 0) { /* the file's own radius is replaced, so it is not checked */
        st = pbfcl_scene_validate_layout(scene);
        if (st == PBFCL_OK)
            st = pbfcl_scene_set_particle_count(scene, (size_t)o->particles);
    }
    if (st == PBFCL_OK)
        st = pbfcl_scene_validate(scene);
    if (st != PBFCL_OK && pbfcl_scene_is_file(name))
        pbfcl_errorf("(in scene file '%s'%s)", name,
                     o->particles >= 0 || o->radius_set ? ", with the command line's overrides"
                                                        : "");
    PBFCL_TRY(st);
    return pbfcl_scene_fill(scene, positions, n);
}
