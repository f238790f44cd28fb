/* Scenes: the built-in scenes (dam-break, double-dam-break, drop, dam-break-bodies, soft-ball,
 * fountain), the checks that reject values that make no sense, the lattice that fills the fluid
 * shapes with particles, and the particle radius that gives a requested particle count. */
#include "scene/scene.h"
#include "runtime/clock.h"
#include "scene/params.h"
#include "scene/scene_mesh_rows.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- built-in scenes --------------------------------------------------------------- */

static void set3(float v[3], float x, float y, float z)
{
    v[0] = x;
    v[1] = y;
    v[2] = z;
}

static void add_box(pbfcl_scene *s, float x0, float y0, float z0, float x1, float y1, float z1)
{
    pbfcl_fluid_shape *f = &s->fluid[s->fluid_count++];
    memset(f, 0, sizeof *f);
    f->kind = PBFCL_SHAPE_BOX;
    set3(f->min, x0, y0, z0);
    set3(f->max, x1, y1, z1);
}

/* A 1.6 x 1.0 x 0.6 m tank with a 0.5 m wide, 0.6 m high water column at the x = 0 end. */
static void builtin_dam_break(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 1.6f, 1.0f, 0.6f);
    s->particle_radius = 0.01f;
    add_box(s, 0.0f, 0.0f, 0.0f, 0.5f, 0.6f, 0.6f);
}

/* The same tank with a 0.4 m wide column at each end. */
static void builtin_double_dam_break(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 1.6f, 1.0f, 0.6f);
    s->particle_radius = 0.01f;
    add_box(s, 0.0f, 0.0f, 0.0f, 0.4f, 0.6f, 0.6f);
    add_box(s, 1.2f, 0.0f, 0.0f, 1.6f, 0.6f, 0.6f);
}

/* A 1 m cube with a 0.25 m deep pool and a sphere of radius 0.15 m above it. */
static void builtin_drop(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 1.0f, 1.0f, 1.0f);
    s->particle_radius = 0.01f;
    add_box(s, 0.0f, 0.0f, 0.0f, 1.0f, 0.25f, 1.0f);
    pbfcl_fluid_shape *f = &s->fluid[s->fluid_count++];
    memset(f, 0, sizeof *f);
    f->kind = PBFCL_SHAPE_SPHERE;
    set3(f->center, 0.5f, 0.65f, 0.5f);
    f->radius = 0.15f;
}

static void add_body_box(pbfcl_scene *s, const float lo[3], const float hi[3], float density)
{
    pbfcl_body_shape *b = &s->bodies[s->body_count++];
    memset(b, 0, sizeof *b);
    b->shape.kind = PBFCL_SHAPE_BOX;
    set3(b->shape.min, lo[0], lo[1], lo[2]);
    set3(b->shape.max, hi[0], hi[1], hi[2]);
    b->density = density;
    b->stiffness = 1.0f;
}

/* The dam break with three rigid 0.1 m cubes: two of density 500 kg/m^3 at the top of the
 * water column (they float and tumble) and one of 2000 on the dry floor (the wave hits it). */
static void builtin_dam_break_bodies(pbfcl_scene *s)
{
    builtin_dam_break(s);
    add_body_box(s, (const float[3]){0.1f, 0.45f, 0.1f}, (const float[3]){0.2f, 0.55f, 0.2f},
                 500.0f);
    add_body_box(s, (const float[3]){0.3f, 0.45f, 0.35f}, (const float[3]){0.4f, 0.55f, 0.45f},
                 500.0f);
    add_body_box(s, (const float[3]){1.0f, 0.0f, 0.25f}, (const float[3]){1.1f, 0.1f, 0.35f},
                 2000.0f);
}

/* A soft ball dropped into a pool: the drop's 1 m cube with a 0.25 m deep pool, and a soft
 * sphere (stiffness 0.2, 600 kg/m^3: it floats) of radius 0.12 m centred 0.6 m up, thrown
 * down at 1.5 m/s. */
static void builtin_soft_ball(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 1.0f, 1.0f, 1.0f);
    s->particle_radius = 0.01f;
    add_box(s, 0.0f, 0.0f, 0.0f, 1.0f, 0.25f, 1.0f);
    pbfcl_body_shape *b = &s->bodies[s->body_count++];
    memset(b, 0, sizeof *b);
    b->shape.kind = PBFCL_SHAPE_SPHERE;
    set3(b->shape.center, 0.5f, 0.6f, 0.5f);
    b->shape.radius = 0.12f;
    b->density = 600.0f;
    b->stiffness = 0.2f;
    set3(b->velocity, 0.0f, -1.5f, 0.0f);
}

/* A fountain filling a basin around an obstacle: a 1 m cube with a 6 cm deep basin, a pillar
 * (a static box 0.16 m square and 0.3 m high) in its middle, and four nozzles of radius 2 cm
 * on the pillar's top that spray up and outwards (0.7 m/s out, 2.2 m/s up), each 500
 * particles/s, 5000 in all (10 s). */
static void builtin_fountain(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 1.0f, 1.0f, 1.0f);
    s->particle_radius = 0.01f;
    add_box(s, 0.0f, 0.0f, 0.0f, 1.0f, 0.06f, 1.0f);
    pbfcl_fluid_shape *o = &s->obstacles[s->obstacle_count++];
    memset(o, 0, sizeof *o);
    o->kind = PBFCL_SHAPE_BOX;
    set3(o->min, 0.42f, 0.0f, 0.42f);
    set3(o->max, 0.58f, 0.3f, 0.58f);
    static const float out[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}}; /* x, z */
    for (int k = 0; k < 4; k++) {
        pbfcl_emitter *e = &s->emitters[s->emitter_count++];
        memset(e, 0, sizeof *e);
        set3(e->center, 0.5f + 0.05f * out[k][0], 0.34f, 0.5f + 0.05f * out[k][1]);
        set3(e->velocity, 0.7f * out[k][0], 2.2f, 0.7f * out[k][1]);
        e->radius = 0.02f;
        e->rate = 500.0f;
        e->count = 5000;
    }
}

typedef struct builtin_scene {
    const char *name;
    void (*build)(pbfcl_scene *s);
} builtin_scene;

static const builtin_scene builtins[] = {
    {"dam-break", builtin_dam_break},
    {"double-dam-break", builtin_double_dam_break},
    {"drop", builtin_drop},
    {"dam-break-bodies", builtin_dam_break_bodies},
    {"soft-ball", builtin_soft_ball},
    {"fountain", builtin_fountain},
    {"cloth-drape", pbfcl_scene_builtin_cloth_drape},
    {"rope-bridge", pbfcl_scene_builtin_rope_bridge},
    {"flag", pbfcl_scene_builtin_flag},
    {"pour", pbfcl_scene_builtin_pour},
    {"mesh-container", pbfcl_scene_builtin_mesh_container},
    {"water-balloon", pbfcl_scene_builtin_water_balloon},
};

#define BUILTIN_COUNT (sizeof builtins / sizeof builtins[0])

const char *const *pbfcl_scene_builtin_names(void)
{
    static const char *names[BUILTIN_COUNT + 1];
    for (size_t k = 0; k < BUILTIN_COUNT; k++)
        names[k] = builtins[k].name;
    names[BUILTIN_COUNT] = NULL;
    return names;
}

int pbfcl_scene_is_file(const char *name)
{
    if (!name)
        return 0;
    size_t len = strlen(name);
    return strchr(name, '/') != NULL || (len >= 5 && !strcmp(name + len - 5, ".json"));
}

pbfcl_status pbfcl_scene_load(const char *name_or_file, pbfcl_scene *out)
{
    if (pbfcl_scene_is_file(name_or_file))
        return pbfcl_scene_load_json(name_or_file, out);
    PBFCL_TRY(pbfcl_scene_parse(name_or_file, out));
    return pbfcl_scene_validate(out);
}

pbfcl_status pbfcl_scene_parse(const char *name_or_file, pbfcl_scene *out)
{
    if (pbfcl_scene_is_file(name_or_file))
        return pbfcl_scene_parse_json(name_or_file, out);
    for (size_t k = 0; k < BUILTIN_COUNT; k++) {
        if (strcmp(name_or_file, builtins[k].name) != 0)
            continue;
        pbfcl_scene_defaults(out);
        snprintf(out->name, sizeof out->name, "%s", builtins[k].name);
        builtins[k].build(out);
        return PBFCL_OK;
    }
    pbfcl_msg m = {0};
    pbfcl_msg_addf(&m, "unknown scene '%s'; the built-in scenes are:", name_or_file);
    for (size_t k = 0; k < BUILTIN_COUNT; k++)
        pbfcl_msg_addf(&m, " %s", builtins[k].name);
    pbfcl_msg_addf(&m, " (or give a scene file ending in .json, see docs/SCENES.md)");
    pbfcl_msg_log(&m, PBFCL_LOG_ERROR);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* --- setting ranges ---------------------------------------------------------------- */

static const pbfcl_setting_range ranges[] = {
    {"particle_radius", 0, 1e3, true, false, false},
    {"rest_density", 0, 1e6, true, false, false},
    {"gravity", -1e4, 1e4, false, false, false},
    {"particles", 1, PBFCL_SCENE_MAX_PARTICLES, false, false, true}, /* the solver's limit */
};

const pbfcl_setting_range *pbfcl_scene_range(const char *key)
{
    if (!key)
        return NULL;
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++)
        if (!strcmp(ranges[k].key, key))
            return &ranges[k];
    return NULL;
}

int pbfcl_range_holds(const pbfcl_setting_range *r, double v)
{
    return r && isfinite(v) && (r->lo_open ? v > r->lo : v >= r->lo) &&
           (r->hi_open ? v < r->hi : v <= r->hi) && (!r->integer || v == floor(v));
}

void pbfcl_range_text(const pbfcl_setting_range *r, char *buf, size_t size)
{
    if (!buf || !size)
        return;
    if (!r) {
        snprintf(buf, size, "(no range: r is NULL)");
        return;
    }
    snprintf(buf, size, "%s %s %.12g and %s %.12g", r->integer ? "an integer" : "a number",
             r->lo_open ? ">" : ">=", r->lo, r->hi_open ? "<" : "<=", r->hi);
}

/* --- validation -------------------------------------------------------------------- */

bool pbfcl_scene_error(const pbfcl_scene *s, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pbfcl_errorf("scene '%s': %s", s->name, text);
    return false;
}

static const char axis_name[3] = {'x', 'y', 'z'};

static bool check_vec3(const pbfcl_scene *s, const char *key, const float v[3])
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(v[k]))
            return pbfcl_scene_error(s, "%s[%d] (%c) is not a finite number", key, k, axis_name[k]);
    return true;
}

static bool check_range(const pbfcl_scene *s, const char *key, double v);

/* The domain box, gravity and rest density (nothing that depends on the particle radius). */
static bool check_domain(const pbfcl_scene *s)
{
    if (!check_vec3(s, "domain.min", s->domain_min) ||
        !check_vec3(s, "domain.max", s->domain_max) || !check_vec3(s, "gravity", s->gravity))
        return false;
    for (int k = 0; k < 3; k++)
        if (!check_range(s, "gravity", s->gravity[k]))
            return false;
    if (!check_range(s, "rest_density", s->rest_density))
        return false;
    for (int k = 0; k < 3; k++) {
        float extent = s->domain_max[k] - s->domain_min[k];
        if (!(extent > 0.0f))
            return pbfcl_scene_error(s,
                                     "domain.max[%d] (%g) must be greater than domain.min[%d] (%g)",
                                     k, s->domain_max[k], k, s->domain_min[k]);
        if (!isfinite(extent))
            return pbfcl_scene_error(
                s,
                "the domain spans %g..%g m along %c, wider than single precision holds; "
                "use a smaller domain",
                s->domain_min[k], s->domain_max[k], axis_name[k]);
    }
    return true;
}

/* The particle radius against its range and the domain. */
static bool check_radius(const pbfcl_scene *s)
{
    float r = s->particle_radius;
    if (!check_range(s, "particle_radius", r))
        return false;
    for (int k = 0; k < 3; k++) {
        double extent = (double)s->domain_max[k] - s->domain_min[k];
        if (extent < 2.0 * r)
            return pbfcl_scene_error(
                s,
                "the domain is %g m along %c, less than one particle (2 * "
                "particle_radius = %g m); use a smaller radius or more particles",
                extent, axis_name[k], 2.0 * r);
        if (extent / (2.0 * r) > PBFCL_SCENE_MAX_SPACINGS)
            return pbfcl_scene_error(
                s,
                "the domain is %.3g particle spacings (2 * particle_radius) along %c, "
                "more than %.0g; use a larger radius or a smaller domain",
                extent / (2.0 * r), axis_name[k], PBFCL_SCENE_MAX_SPACINGS);
    }
    return true;
}

/* Checks that [lo, hi] of shape `where` lies in the domain along every axis (with a relative
 * tolerance). */
static bool check_inside(const pbfcl_scene *s, const char *where, const float lo[3],
                         const float hi[3])
{
    for (int k = 0; k < 3; k++) {
        float tol = 1e-6f * (s->domain_max[k] - s->domain_min[k]);
        if (lo[k] < s->domain_min[k] - tol || hi[k] > s->domain_max[k] + tol)
            return pbfcl_scene_error(
                s,
                "%s spans %g..%g along %c, outside the domain %g..%g; make the domain "
                "larger or the shape smaller",
                where, lo[k], hi[k], axis_name[k], s->domain_min[k], s->domain_max[k]);
    }
    return true;
}

bool pbfcl_scene_check_shape(const pbfcl_scene *s, const char *where, const pbfcl_fluid_shape *f)
{
    char key[96];
    if (f->kind == PBFCL_SHAPE_BOX) {
        snprintf(key, sizeof key, "%s.min", where);
        if (!check_vec3(s, key, f->min))
            return false;
        snprintf(key, sizeof key, "%s.max", where);
        if (!check_vec3(s, key, f->max))
            return false;
        for (int k = 0; k < 3; k++)
            if (!(f->max[k] > f->min[k]))
                return pbfcl_scene_error(s, "%s.max[%d] (%g) must be greater than %s.min[%d] (%g)",
                                         where, k, f->max[k], where, k, f->min[k]);
        return check_inside(s, where, f->min, f->max);
    }
    if (f->kind == PBFCL_SHAPE_CAPSULE) {
        snprintf(key, sizeof key, "%s.capsule.a", where);
        if (!check_vec3(s, key, f->a))
            return false;
        snprintf(key, sizeof key, "%s.capsule.b", where);
        if (!check_vec3(s, key, f->b))
            return false;
        if (!isfinite(f->radius) || f->radius <= 0.0f)
            return pbfcl_scene_error(s, "%s.capsule.radius must be a number > 0 (got %g)", where,
                                     f->radius);
        if (f->a[0] == f->b[0] && f->a[1] == f->b[1] && f->a[2] == f->b[2])
            return pbfcl_scene_error(
                s,
                "%s.capsule.a and .b are the same point; give an axis of some length "
                "or use a sphere",
                where);
        float lo[3], hi[3];
        pbfcl_scene_shape_bounds(f, lo, hi);
        return check_inside(s, where, lo, hi);
    }
    if (f->kind == PBFCL_SHAPE_MESH)
        return pbfcl_scene_check_mesh(s, where, f) && check_inside(s, where, f->min, f->max);
    if (f->kind != PBFCL_SHAPE_SPHERE)
        return pbfcl_scene_error(s, "%s has an unknown shape kind %d", where, (int)f->kind);
    snprintf(key, sizeof key, "%s.sphere.center", where);
    if (!check_vec3(s, key, f->center))
        return false;
    if (!isfinite(f->radius) || f->radius <= 0.0f)
        return pbfcl_scene_error(s, "%s.sphere.radius must be a number > 0 (got %g)", where,
                                 f->radius);
    float lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = f->center[k] - f->radius;
        hi[k] = f->center[k] + f->radius;
    }
    return check_inside(s, where, lo, hi);
}

static bool check_shape(const pbfcl_scene *s, int i)
{
    char where[32];
    snprintf(where, sizeof where, "fluid[%d]", i);
    return pbfcl_scene_check_shape(s, where, &s->fluid[i]);
}

/* Checks a number against the range of its key (pbfcl_scene_range); the message names the
 * key and the range. */
static bool check_range(const pbfcl_scene *s, const char *key, double v)
{
    const pbfcl_setting_range *r = pbfcl_scene_range(key);
    if (pbfcl_range_holds(r, v))
        return true;
    char text[96];
    pbfcl_range_text(r, text, sizeof text);
    return pbfcl_scene_error(s, "%s must be %s (got %g)", key, text, v);
}

static bool check_solver(const pbfcl_scene *s)
{
    char where[96];
    snprintf(where, sizeof where, "scene '%s'", s->name);
    return pbfcl_solver_params_check_in(&s->solver, where) == PBFCL_OK;
}

/* An upper bound on the particle count: lattice points in each shape's bounding box. */
static double count_bound(const pbfcl_scene *s)
{
    double total = 0.0, spacing = 2.0 * s->particle_radius;
    int fb = s->fluid_count + s->body_count;
    for (int i = 0; i < fb + s->obstacle_count; i++) {
        const pbfcl_fluid_shape *f = i < s->fluid_count ? &s->fluid[i]
                                     : i < fb           ? &s->bodies[i - s->fluid_count].shape
                                                        : &s->obstacles[i - fb];
        double points = 1.0;
        float lo[3], hi[3];
        pbfcl_scene_shape_bounds(f, lo, hi);
        for (int k = 0; k < 3; k++)
            points *= floor(((double)hi[k] - lo[k]) / spacing) + 1.0;
        total += points;
    }
    return total;
}

pbfcl_status pbfcl_scene_validate_settings(const pbfcl_scene *s)
{
    return check_domain(s) && check_solver(s) ? PBFCL_OK : PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status pbfcl_scene_validate_layout(const pbfcl_scene *s)
{
    if (!check_domain(s) || !check_solver(s))
        return PBFCL_ERR_BAD_ARGUMENT;
    if (s->fluid_count < 1 || s->fluid_count > PBFCL_MAX_FLUID_SHAPES) {
        pbfcl_scene_error(s, "the scene needs 1 to %d fluid shapes (has %d)",
                          PBFCL_MAX_FLUID_SHAPES, s->fluid_count);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int i = 0; i < s->fluid_count; i++)
        if (!check_shape(s, i))
            return PBFCL_ERR_BAD_ARGUMENT;
    return pbfcl_scene_check_bodies(s) && pbfcl_scene_check_obstacles(s) &&
                   pbfcl_scene_check_cloths(s)
               ? PBFCL_OK
               : PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status pbfcl_scene_validate(const pbfcl_scene *s)
{
    PBFCL_TRY(pbfcl_scene_validate_layout(s));
    if (!check_radius(s))
        return PBFCL_ERR_BAD_ARGUMENT;
    double bound = count_bound(s);
    if (bound > (double)PBFCL_SCENE_MAX_PARTICLES) {
        pbfcl_scene_error(
            s,
            "particle_radius %g m would give up to %.3g particles, more than %llu; use a "
            "larger radius or fewer --particles",
            s->particle_radius, bound, PBFCL_SCENE_MAX_PARTICLES);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return pbfcl_scene_check_body_sampling(s) && pbfcl_scene_check_obstacle_sampling(s) &&
                   pbfcl_scene_check_flow(s)
               ? PBFCL_OK
               : PBFCL_ERR_BAD_ARGUMENT;
}

/* --- the lattice ------------------------------------------------------------------- */

bool pbfcl_scene_inside(const pbfcl_scene *s, const pbfcl_fluid_shape *f, const double p[3],
                        double tol)
{
    if (f->kind == PBFCL_SHAPE_MESH)
        return pbfcl_scene_mesh_inside(s, f, p, tol);
    if (f->kind == PBFCL_SHAPE_BOX) {
        for (int k = 0; k < 3; k++)
            if (p[k] < f->min[k] - tol || p[k] > f->max[k] + tol)
                return false;
        return true;
    }
    double c[3] = {f->center[0], f->center[1], f->center[2]};
    if (f->kind == PBFCL_SHAPE_CAPSULE) { /* the nearest point of the axis a-b */
        double ab[3], ap[3], t = 0.0, len2 = 0.0;
        for (int k = 0; k < 3; k++) {
            ab[k] = (double)f->b[k] - f->a[k];
            ap[k] = p[k] - f->a[k];
            t += ab[k] * ap[k];
            len2 += ab[k] * ab[k];
        }
        t = len2 > 0.0 ? fmin(fmax(t / len2, 0.0), 1.0) : 0.0;
        for (int k = 0; k < 3; k++)
            c[k] = f->a[k] + t * ab[k];
    }
    double d2 = 0.0;
    for (int k = 0; k < 3; k++)
        d2 += (p[k] - c[k]) * (p[k] - c[k]);
    return d2 <= ((double)f->radius + tol) * ((double)f->radius + tol);
}

void pbfcl_scene_shape_bounds(const pbfcl_fluid_shape *f, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; k++) {
        if (f->kind == PBFCL_SHAPE_BOX || f->kind == PBFCL_SHAPE_MESH) {
            lo[k] = f->min[k];
            hi[k] = f->max[k];
        } else if (f->kind == PBFCL_SHAPE_CAPSULE) {
            lo[k] = fminf(f->a[k], f->b[k]) - f->radius;
            hi[k] = fmaxf(f->a[k], f->b[k]) + f->radius;
        } else {
            lo[k] = f->center[k] - f->radius;
            hi[k] = f->center[k] + f->radius;
        }
    }
}

/* The lattice index range [lo[k], hi[k]] of shape f, cut to the domain interior. */
static void shape_index_range(const pbfcl_scene *s, const pbfcl_fluid_shape *f,
                              const double origin[3], long long lo[3], long long hi[3])
{
    double r = s->particle_radius, spacing = 2.0 * r, eps = 1e-4;
    float flo[3], fhi[3];
    pbfcl_scene_shape_bounds(f, flo, fhi);
    for (int k = 0; k < 3; k++) {
        double a = fmax(flo[k], s->domain_min[k] + r);
        double b = fmin(fhi[k], s->domain_max[k] - r);
        lo[k] = (long long)ceil((a - origin[k]) / spacing - eps);
        hi[k] = (long long)floor((b - origin[k]) / spacing + eps);
    }
}

/* A walk over the lattice: the scene, its lattice, and the masks of its mesh shapes, each
 * sampled row by row when first asked about (slot: bodies[b] is b, obstacles[o] is
 * PBFCL_MAX_BODIES + o); a mesh whose mask could not be made is tested point by point. */
#define WALK_SLOTS (PBFCL_MAX_BODIES + PBFCL_MAX_OBSTACLES)
typedef struct walk {
    const pbfcl_scene *s;
    pbfcl_lattice_frame l;
    pbfcl_mesh_mask mask[WALK_SLOTS];
    signed char made[WALK_SLOTS]; /* 0 not yet, 1 made, -1 out of memory */
    double start, last;           /* when the walk began, and its last progress line */
} walk;

static void walk_begin(walk *w, const pbfcl_scene *s)
{
    double r = s->particle_radius;
    w->s = s;
    w->l = (pbfcl_lattice_frame){{s->domain_min[0] + r, s->domain_min[1] + r, s->domain_min[2] + r},
                                 2.0 * r,
                                 1e-4 * (2.0 * r)};
    memset(w->made, 0, sizeof w->made);
    w->start = w->last = pbfcl_wall_seconds();
}

/* The name of shape f (in slot `slot`, or -1 for a fluid shape) into out. */
static void walk_name(const walk *w, const pbfcl_fluid_shape *f, int slot, char *out, size_t size)
{
    if (slot < 0)
        snprintf(out, size, "fluid[%d]", (int)(f - w->s->fluid));
    else if (slot < PBFCL_MAX_BODIES)
        snprintf(out, size, "bodies[%d]", slot);
    else
        snprintf(out, size, "obstacles[%d]", slot - PBFCL_MAX_BODIES);
}

/* Progress of a long walk: a line after a second, then one a second at most. */
static void walk_report(walk *w, const pbfcl_fluid_shape *f, int slot, double done)
{
    double now = pbfcl_wall_seconds();
    if (now - w->start < 1.0 || now - w->last < 1.0)
        return;
    w->last = now;
    char name[32];
    walk_name(w, f, slot, name, sizeof name);
    pbfcl_infof("setting up: the lattice points of %s: %.0f%% after %.0f s", name, 100.0 * done,
                now - w->start);
}

static void walk_end(walk *w)
{
    for (int i = 0; i < WALK_SLOTS; i++)
        if (w->made[i] == 1)
            pbfcl_mesh_mask_free(&w->mask[i]);
}

/* Makes the mask of mesh shape f in slot i: over its lattice index range and one more point
 * each way. */
static void walk_make_mask(walk *w, const pbfcl_fluid_shape *f, int i)
{
    long long lo[3], hi[3];
    shape_index_range(w->s, f, w->l.origin, lo, hi);
    for (int k = 0; k < 3; k++) {
        lo[k]--;
        hi[k]++;
    }
    char what[32];
    walk_name(w, f, i, what, sizeof what);
    bool made = pbfcl_mesh_mask_build(w->s, f, what, &w->l, lo, hi, &w->mask[i]) == PBFCL_OK;
    if (!made)
        pbfcl_warnf("%s: out of host memory to sample its mesh row by row; testing it point by "
                    "point instead (slow)",
                    what);
    w->made[i] = made ? 1 : -1;
}

/* Whether lattice point p, index i, lies in shape f (in slot `slot`, or -1 if it has none). */
static bool walk_inside(walk *w, const pbfcl_fluid_shape *f, int slot, const long long i[3],
                        const double p[3])
{
    if (f->kind != PBFCL_SHAPE_MESH || slot < 0)
        return pbfcl_scene_inside(w->s, f, p, w->l.tol);
    if (w->made[slot] == 0)
        walk_make_mask(w, f, slot);
    if (w->made[slot] == 1)
        return pbfcl_mesh_mask_holds(&w->mask[slot], i[0], i[1], i[2]);
    return pbfcl_scene_mesh_inside(w->s, f, p, w->l.tol);
}

/* Whether lattice point p, index i, lies in one of the bodies or obstacles. */
static bool in_body(walk *w, const long long i[3], const double p[3])
{
    const pbfcl_scene *s = w->s;
    for (int b = 0; b < s->body_count; b++)
        if (walk_inside(w, &s->bodies[b].shape, b, i, p))
            return true;
    for (int o = 0; o < s->obstacle_count; o++)
        if (walk_inside(w, &s->obstacles[o], PBFCL_MAX_BODIES + o, i, p))
            return true;
    return false;
}

/* Whether a point of shape f is claimed by another shape. */
typedef bool (*walk_skip)(walk *w, const pbfcl_fluid_shape *f, const long long i[3],
                          const double p[3]);

/* Visits the lattice points inside shape f (slot as walk_inside's), skipping those `skip`
 * claims; writes them to out (from entry n) if not NULL; returns n plus their count. */
static size_t shape_walk(walk *w, const pbfcl_fluid_shape *f, int slot, walk_skip skip, float *out,
                         size_t n)
{
    const pbfcl_lattice_frame *l = &w->l;
    long long lo[3], hi[3], i[3];
    shape_index_range(w->s, f, l->origin, lo, hi);
    for (i[0] = lo[0]; i[0] <= hi[0]; i[0]++) {
        for (i[1] = lo[1]; i[1] <= hi[1]; i[1]++)
            for (i[2] = lo[2]; i[2] <= hi[2]; i[2]++) {
                double p[3];
                for (int k = 0; k < 3; k++)
                    p[k] = l->origin[k] + l->spacing * i[k];
                if (!walk_inside(w, f, slot, i, p) || (skip && skip(w, f, i, p)))
                    continue;
                if (out)
                    for (int k = 0; k < 3; k++)
                        out[3 * n + k] = (float)p[k];
                n++;
            }
        walk_report(w, f, slot, (double)(i[0] - lo[0] + 1) / (double)(hi[0] - lo[0] + 1));
    }
    return n;
}

/* A fluid point is claimed by an earlier fluid shape, a body or an obstacle. */
static bool fluid_skip(walk *w, const pbfcl_fluid_shape *f, const long long i[3], const double p[3])
{
    for (const pbfcl_fluid_shape *g = w->s->fluid; g < f; g++)
        if (pbfcl_scene_inside(w->s, g, p, w->l.tol))
            return true;
    return in_body(w, i, p);
}

size_t pbfcl_scene_body_walk(const pbfcl_scene *s, int b, float *out)
{
    walk w;
    walk_begin(&w, s);
    size_t n = shape_walk(&w, &s->bodies[b].shape, b, NULL, out, 0);
    walk_end(&w);
    return n;
}

/* An obstacle's point is claimed by an earlier obstacle. */
static bool obstacle_skip(walk *w, const pbfcl_fluid_shape *f, const long long i[3],
                          const double p[3])
{
    for (int o = 0; &w->s->obstacles[o] < f; o++)
        if (walk_inside(w, &w->s->obstacles[o], PBFCL_MAX_BODIES + o, i, p))
            return true;
    return false;
}

size_t pbfcl_scene_obstacle_walk(const pbfcl_scene *s, int o, float *out)
{
    walk w;
    walk_begin(&w, s);
    size_t n = shape_walk(&w, &s->obstacles[o], PBFCL_MAX_BODIES + o, obstacle_skip, out, 0);
    walk_end(&w);
    return n;
}

/* Visits every lattice point inside the fluid once (the first shape that holds it claims
 * it, a body or an obstacle before any), then each body's, then each obstacle's (the first
 * obstacle that holds it claims it); writes them to out if not NULL; returns the count. */
static size_t lattice_walk(const pbfcl_scene *s, float *out)
{
    walk w;
    walk_begin(&w, s);
    size_t n = 0;
    for (int i = 0; i < s->fluid_count; i++)
        n = shape_walk(&w, &s->fluid[i], -1, fluid_skip, out, n);
    for (int b = 0; b < s->body_count; b++)
        n = shape_walk(&w, &s->bodies[b].shape, b, NULL, out, n);
    for (int o = 0; o < s->obstacle_count; o++)
        n = shape_walk(&w, &s->obstacles[o], PBFCL_MAX_BODIES + o, obstacle_skip, out, n);
    walk_end(&w);
    for (int c = 0; c < s->cloth_count; c++) /* the cloths and ropes last, not on the lattice */
        n += pbfcl_scene_cloth_walk(s, c, out ? out + 3 * n : NULL);
    return n;
}

size_t pbfcl_scene_count(const pbfcl_scene *s)
{
    return lattice_walk(s, NULL);
}

pbfcl_status pbfcl_scene_fill(const pbfcl_scene *s, float **positions, size_t *n)
{
    *positions = NULL;
    *n = 0;
    PBFCL_TRY(pbfcl_scene_validate(s));
    size_t count = lattice_walk(s, NULL);
    if (count == 0) {
        pbfcl_scene_error(
            s,
            "the fluid shapes hold no particle at particle_radius %g m (spacing %g m); use a "
            "smaller radius or more --particles",
            s->particle_radius, 2.0 * s->particle_radius);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    float *p = malloc(count * 3 * sizeof *p);
    if (!p) {
        pbfcl_errorf("out of host memory for %zu particle positions (%zu bytes)", count,
                     count * 3 * sizeof *p);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    lattice_walk(s, p);
    *positions = p;
    *n = count;
    return PBFCL_OK;
}

/* --- particle count ---------------------------------------------------------------- */

static double fluid_volume(const pbfcl_scene *s)
{
    double v = 0.0;
    for (int i = 0; i < s->fluid_count; i++) {
        const pbfcl_fluid_shape *f = &s->fluid[i];
        if (f->kind == PBFCL_SHAPE_BOX)
            v += ((double)f->max[0] - f->min[0]) * ((double)f->max[1] - f->min[1]) *
                 ((double)f->max[2] - f->min[2]);
        else
            v += 4.0 / 3.0 * 3.14159265358979 * (double)f->radius * f->radius * f->radius;
    }
    return v;
}

/* The best radius found so far for a target count, and the bracket around the target:
 * r_many gives at least target particles, r_few fewer (0 / INFINITY until found). */
typedef struct count_search {
    size_t target, best_n;
    double best_r, best_err, r_many, r_few;
} count_search;

/* Counts the particles at radius r and updates the search; returns the count. A radius whose
 * bound (count_bound) pbfcl_scene_validate refuses counts as too many particles, whatever it
 * fills, and is never chosen: --particles at the limit chose one 1 % above it and was then
 * refused for it. */
static size_t count_try(pbfcl_scene *s, count_search *c, double r)
{
    s->particle_radius = (float)r;
    double bound = count_bound(s);
    bool too_fine = bound > 4.0 * PBFCL_SCENE_MAX_PARTICLES;
    for (int k = 0; k < 3; k++) /* keeps the lattice indices in range (check_radius) */
        too_fine |=
            !((double)s->domain_max[k] - s->domain_min[k] <= PBFCL_SCENE_MAX_SPACINGS * 2 * r);
    size_t n = too_fine ? 0 : lattice_walk(s, NULL);
    bool allowed = bound <= (double)PBFCL_SCENE_MAX_PARTICLES;
    if (!allowed && (double)n < bound) /* too many: the bound, or more than the limit */
        n = (size_t)fmin(bound, 8.0 * PBFCL_SCENE_MAX_PARTICLES);
    double err = fabs((double)n - (double)c->target) / (double)c->target;
    if (n > 0 && allowed && err < c->best_err) {
        c->best_err = err;
        c->best_r = r;
        c->best_n = n;
    }
    if (n >= c->target && r > c->r_many)
        c->r_many = r;
    if (n < c->target && r < c->r_few)
        c->r_few = r;
    return n;
}

pbfcl_status pbfcl_scene_set_particle_count(pbfcl_scene *s, size_t target)
{
    if (target < 1 || target > PBFCL_SCENE_MAX_PARTICLES) {
        pbfcl_scene_error(s, "the particle count must be from 1 to %llu (got %zu)",
                          PBFCL_SCENE_MAX_PARTICLES, target);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    count_search c = {target, 0, 0.0, INFINITY, 0.0, INFINITY};
    /* Newton-like steps from the volume estimate, then bisection of the bracket. */
    double r = cbrt(fluid_volume(s) / (8.0 * (double)target));
    for (int iter = 0; iter < 8 && c.best_err > 0.01; iter++) {
        size_t n = count_try(s, &c, r);
        r *= n > 0 ? cbrt((double)n / (double)target) : 0.5;
    }
    for (int iter = 0; iter < 24 && c.best_err > 0.01 && c.r_many > 0.0 && isfinite(c.r_few);
         iter++)
        count_try(s, &c, 0.5 * (c.r_many + c.r_few));
    s->particle_radius = (float)c.best_r;
    if (c.best_n == 0) {
        pbfcl_scene_error(
            s, "found no particle radius that fills the fluid with about %zu particles", target);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (c.best_err > 0.1)
        pbfcl_warnf("scene '%s': %zu particles requested, the closest lattice holds %zu", s->name,
                    target, c.best_n);
    return PBFCL_OK;
}

/* --- blow-up guard ----------------------------------------------------------------- */

float pbfcl_scene_max_speed(const pbfcl_scene *s)
{
    if (s->solver.max_speed > 0.0f)
        return s->solver.max_speed;
    double d2 = 0.0, g2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double e = (double)s->domain_max[k] - s->domain_min[k];
        d2 += e * e;
        g2 += (double)s->gravity[k] * s->gravity[k];
    }
    double g = fmax(sqrt(g2), 9.81);
    return (float)(4.0 * sqrt(2.0 * g * sqrt(d2)));
}
