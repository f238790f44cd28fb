/* The scene options shared by `pbfcl run`, `bench` and `demo`: one table names each scene
 * option, its value, its accepted range and where it is stored, and the solver options are
 * the solver parameter list's (PBFCL_SOLVER_PARAM_LIST); values are parsed strictly (whole
 * string, finite, in range) and a bad one is reported with the option and the range. */
#include "scene_options.h"
#include "app_env.h"
#include "cli_args.h"

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

static const opt_spec opt_specs[] = {
    {"--device", "D", OPT_STRING, NULL, OFF(device), NO_SET,
     "OpenCL device: index from `pbfcl devices` or part of its name"},
    {"--scene", "NAME|FILE", OPT_STRING, NULL, OFF(scene), NO_SET,
     "dam-break (default), double-dam-break, drop, dam-break-bodies, soft-ball, fountain, "
     "cloth-drape, rope-bridge, flag, pour, mesh-container, water-balloon, or a .json scene file"},
    {"--particles", "N", OPT_LLONG, "particles", OFF(particles), NO_SET,
     "about N particles (sets the particle radius; the device must hold them, some 600 bytes "
     "each); default: the scene's radius"},
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
    return pbfcl_scene_range(s->key);
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

/* True if arg is flag, either "--flag" or "--flag=value" (*inline_value: the value or NULL). */
static bool flag_matches(const char *arg, const char *flag, const char **inline_value)
{
    size_t len = strlen(flag);
    if (strncmp(arg, flag, len) != 0 || (arg[len] != '\0' && arg[len] != '='))
        return false;
    *inline_value = arg[len] == '=' ? arg + len + 1 : NULL;
    return true;
}

/* The solver parameter called key; -1 if none. */
static int param_by_key(const char *key)
{
    for (int k = 0; k < pbfcl_solver_param_count(); k++)
        if (!strcmp(pbfcl_solver_param(k)->name, key))
            return k;
    return -1;
}

/* The solver parameter whose flag, or former flag (PBFCL_SOLVER_PARAM_FORMER_LIST), arg is;
 * -1 if none. */
static int find_param(const char *arg, const char **inline_value)
{
    for (int k = 0; k < pbfcl_solver_param_count(); k++)
        if (flag_matches(arg, pbfcl_solver_param(k)->flag, inline_value))
            return k;
#define FORMER_FLAG_(key, flag, current)                                                           \
    if (flag_matches(arg, flag, inline_value))                                                     \
        return param_by_key(current);
    PBFCL_SOLVER_PARAM_FORMER_LIST(FORMER_FLAG_)
#undef FORMER_FLAG_
    return -1;
}

/* The placeholder of a solver option's value in messages and help. */
static const char *param_arg(const pbfcl_param_info *info)
{
    return (info->flags & PBFCL_PARAM_NAMED) ? "NAME" : info->is_int ? "N" : "X";
}

/* Parses a solver option's value into o->solver; -1 (with a message) if it is not valid. */
static int parse_param(pbfcl_scene_options *o, int k, int argc, char **argv, int *i,
                       const char *value)
{
    const pbfcl_param_info *info = pbfcl_solver_param(k);
    if (!value) {
        if (*i + 1 >= argc) {
            app_errorf("%s needs a value (%s %s)", info->flag, info->flag, param_arg(info));
            return -1;
        }
        if (!pbfcl_cli_separate_value(info->flag, (int)strlen(info->flag), argv[*i + 1]))
            return -1;
        value = argv[++*i];
    }
    double v;
    long long ll;
    bool ok = (info->flags & PBFCL_PARAM_NAMED) ? (v = pbfcl_method_from_name(value)) >= 0
              : info->is_int ? pbfcl_parse_llong(value, &ll) && (v = (double)ll, true)
                             : pbfcl_parse_double(value, &v);
    /* the value kept is a float for the float parameters: it must be in range as one too */
    double kept = info->is_int ? v : (double)(float)v;
    if (!ok || !pbfcl_param_in_range(info, v) || !pbfcl_param_in_range(info, kept)) {
        char range[128];
        pbfcl_param_range_text(info, range, sizeof range);
        if (ok && pbfcl_param_in_range(info, v))
            app_errorf("%s: '%s' becomes %g in single precision, outside the accepted range; "
                       "expected %s",
                       info->flag, value, kept, range);
        else
            app_errorf("%s: '%s' is not valid; expected %s", info->flag, value, range);
        return -1;
    }
    pbfcl_param_set(&o->solver, info, v);
    o->solver_set[k] = true;
    (*i)++;
    return 1;
}

int pbfcl_scene_options_parse(pbfcl_scene_options *o, int argc, char **argv, int *i)
{
    const char *value = NULL;
    const opt_spec *s = find_spec(argv[*i], &value);
    if (!s) {
        int k = find_param(argv[*i], &value);
        return k < 0 ? 0 : parse_param(o, k, argc, argv, i, value);
    }
    if (!value) {
        if (*i + 1 >= argc) {
            app_errorf("%s needs a value (%s %s)", s->name, s->name, s->arg);
            return -1;
        }
        if (!pbfcl_cli_separate_value(s->name, (int)strlen(s->name), argv[*i + 1]))
            return -1;
        value = argv[++*i];
    }
    if (!store_value(s, o, value)) {
        char range[128];
        range_text(s, range, sizeof range);
        double d;
        if (s->kind == OPT_STRING)
            app_errorf("%s needs a non-empty value (%s %s)", s->name, s->name, s->arg);
        else if (s->kind == OPT_FLOAT && pbfcl_parse_double(value, &d) &&
                 pbfcl_range_holds(spec_range(s), d))
            app_errorf("%s: '%s' becomes %g in single precision, outside the accepted range; "
                       "expected %s",
                       s->name, value, (double)(float)d, range);
        else
            app_errorf("%s: '%s' is not valid; expected %s", s->name, value, range);
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
    for (int k = 0; k < pbfcl_solver_param_count(); k++) {
        const pbfcl_param_info *info = pbfcl_solver_param(k);
        char left[40], range[128];
        snprintf(left, sizeof left, "%s %s", info->flag, param_arg(info));
        pbfcl_param_range_text(info, range, sizeof range);
        char def[32];
        if (info->flags & PBFCL_PARAM_NAMED)
            snprintf(def, sizeof def, "%s", pbfcl_method_name((int)info->def));
        else
            snprintf(def, sizeof def, "%g", info->def);
        fprintf(f, "  %-24s %s%s%s (%s; default %s)\n", left, info->help, info->unit[0] ? ", " : "",
                info->unit, range, def);
    }
    fprintf(f, "  (options also take the form --name=value; solver overrides replace the "
               "scene's values)\n");
}

void pbfcl_scene_options_apply(const pbfcl_scene_options *o, pbfcl_scene_params *scene,
                               pbfcl_solver_params *solver)
{
    for (int k = 0; k < pbfcl_solver_param_count(); k++)
        if (o->solver_set[k]) {
            const pbfcl_param_info *info = pbfcl_solver_param(k);
            pbfcl_param_set(solver, info, pbfcl_param_get(&o->solver, info));
        }
    if (o->radius_set)
        scene->particle_radius = o->radius;
    if (o->rest_density_set)
        scene->rest_density = o->rest_density;
    if (o->gravity_set)
        memcpy(scene->gravity, o->gravity, sizeof scene->gravity);
}

/* Applies o to a loaded setup and fills it. */
static pbfcl_status build_setup(const pbfcl_scene_options *o, pbfcl_scene_setup *setup,
                                float **positions, size_t *n)
{
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
    pbfcl_status st = pbfcl_scene_setup_get_params(setup, &sp, &vp);
    if (st != PBFCL_OK)
        return st;
    pbfcl_scene_options_apply(o, &sp, &vp);
    if ((st = pbfcl_scene_setup_set_params(setup, &sp, &vp)) != PBFCL_OK)
        return st;
    if (o->particles >= 0 &&
        (st = pbfcl_scene_setup_set_particle_count(setup, (size_t)o->particles)) != PBFCL_OK)
        return st;
    return pbfcl_scene_setup_fill(setup, positions, n);
}

pbfcl_status pbfcl_scene_options_build(const pbfcl_scene_options *o, pbfcl_scene_setup **setup,
                                       float **positions, size_t *n)
{
    *setup = NULL;
    *positions = NULL;
    *n = 0;
    if (o->radius_set && o->particles >= 0) {
        app_errorf("--particles and --radius both set the particle size; give only one");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    const char *name = o->scene ? o->scene : PBFCL_DEFAULT_SCENE;
    pbfcl_status st = pbfcl_scene_setup_load(name, setup);
    if (st == PBFCL_OK)
        st = build_setup(o, *setup, positions, n);
    if (st != PBFCL_OK && *setup && pbfcl_scene_is_file(name))
        app_errorf("(in scene file '%s'%s)", name,
                   o->particles >= 0 || o->radius_set ? ", with the command line's overrides" : "");
    if (st != PBFCL_OK) {
        pbfcl_scene_setup_destroy(*setup);
        *setup = NULL;
    }
    return st;
}
