/* JSON scene files (schema in docs/SCENES.md), read with cJSON: every key is checked for its
 * type and array length, unknown and duplicate keys are rejected, and each error names the
 * file and the key. Without cJSON in the build, loading a file says so. */
#include "scene/scene.h"
#include "scene/params.h"

#include <stdio.h>

#ifndef PBFCL_HAVE_JSON

pbfcl_status pbfcl_scene_parse_json(const char *path, pbfcl_scene *out)
{
    return pbfcl_scene_load_json(path, out);
}

pbfcl_status pbfcl_scene_parse_json_text(const char *path, const char *text, pbfcl_scene *out)
{
    (void)text;
    return pbfcl_scene_load_json(path, out);
}

pbfcl_status pbfcl_scene_load_json(const char *path, pbfcl_scene *out)
{
    (void)out;
    pbfcl_errorf("cannot read scene file '%s': pbfcl was built without cJSON (install the "
                 "cJSON development files, e.g. libcjson-dev, and reconfigure with "
                 "-DPBFCL_WITH_JSON=ON), or use a built-in scene",
                 path);
    return PBFCL_ERR_UNSUPPORTED;
}

#else

#include "scene/cloth_cook.h"
#include "scene/obj_mesh.h"
#include "scene/scene_mesh.h"
#include "scene/input_file.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SCENE_FILE_MAX_BYTES (16u << 20)

/* Prints "pbfcl: error: FILE: KEY: <message>" and returns PBFCL_ERR_BAD_ARGUMENT. */
static pbfcl_status key_error(const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static pbfcl_status key_error(const char *path, const char *key, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pbfcl_errorf("%s: %s: %s", path, key, text);
    return PBFCL_ERR_BAD_ARGUMENT;
}

static const char *type_name(const cJSON *item)
{
    if (cJSON_IsNumber(item))
        return "a number";
    if (cJSON_IsString(item))
        return "a string";
    if (cJSON_IsArray(item))
        return "an array";
    if (cJSON_IsObject(item))
        return "an object";
    if (cJSON_IsBool(item))
        return "a boolean";
    return "null";
}

/* Rejects keys of obj not in allowed (listing the allowed ones) and duplicate keys. */
static pbfcl_status check_keys(const char *path, const char *where, const cJSON *obj,
                               const char *const *allowed)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        bool known = false;
        for (int k = 0; allowed[k] && !known; k++)
            known = !strcmp(c->string, allowed[k]);
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", where, where[0] ? "." : "", c->string);
        if (!known) {
            pbfcl_msg m = {0};
            pbfcl_msg_addf(&m, "%s: %s: unknown key; the keys allowed%s%s are:", path, key,
                           where[0] ? " in " : " at the top level", where);
            for (int k = 0; allowed[k]; k++)
                pbfcl_msg_addf(&m, " %s", allowed[k]);
            pbfcl_msg_log(&m, PBFCL_LOG_ERROR);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (!strcmp(d->string, c->string))
                return key_error(path, key, "duplicate key");
    }
    return PBFCL_OK;
}

static pbfcl_status get_number(const char *path, const char *key, const cJSON *item, float *out)
{
    if (!cJSON_IsNumber(item))
        return key_error(path, key, "expected a number, got %s", type_name(item));
    float v = (float)item->valuedouble;
    if (!isfinite(item->valuedouble) || !isfinite(v))
        return key_error(path, key, "%g is not a finite single-precision number",
                         item->valuedouble);
    *out = v;
    return PBFCL_OK;
}

static pbfcl_status get_int(const char *path, const char *key, const cJSON *item, int *out)
{
    if (!cJSON_IsNumber(item))
        return key_error(path, key, "expected an integer, got %s", type_name(item));
    double v = item->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < -2147483648.0 || v > 2147483647.0)
        return key_error(path, key, "expected an integer, got %g", v);
    *out = (int)v;
    return PBFCL_OK;
}

/* A name of PBFCL_METHOD_LIST ("pbf", "sph") as its index. */
static pbfcl_status get_method(const char *path, const char *key, const cJSON *item, int *out)
{
    char names[64];
    pbfcl_param_names_text(names, sizeof names);
    if (!cJSON_IsString(item))
        return key_error(path, key, "expected a name (%s), got %s", names, type_name(item));
    int m = pbfcl_method_from_name(item->valuestring);
    if (m < 0)
        return key_error(path, key, "unknown method '%s'; use %s", item->valuestring, names);
    *out = m;
    return PBFCL_OK;
}

static pbfcl_status get_vec3(const char *path, const char *key, const cJSON *item, float out[3])
{
    if (!cJSON_IsArray(item))
        return key_error(path, key, "expected an array of 3 numbers [x, y, z], got %s",
                         type_name(item));
    int len = cJSON_GetArraySize(item);
    if (len != 3)
        return key_error(path, key, "expected an array of 3 numbers [x, y, z], got %d element%s",
                         len, len == 1 ? "" : "s");
    for (int k = 0; k < 3; k++) {
        char elem[192];
        snprintf(elem, sizeof elem, "%s[%d]", key, k);
        PBFCL_TRY(get_number(path, elem, cJSON_GetArrayItem(item, k), &out[k]));
    }
    return PBFCL_OK;
}

/* Fetches a required member of obj; its absence is an error naming where.key. */
static pbfcl_status need(const char *path, const char *where, const cJSON *obj, const char *key,
                         const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (*out)
        return PBFCL_OK;
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", where, where[0] ? "." : "", key);
    return key_error(path, full, "missing (required)");
}

static pbfcl_status need_object(const char *path, const char *key, const cJSON *item)
{
    if (!cJSON_IsObject(item))
        return key_error(path, key, "expected an object, got %s", type_name(item));
    return PBFCL_OK;
}

/* An optional [x, y, z] member name of obj into out (left as it is when absent); errors name
 * where.name. */
static pbfcl_status get_optional_vec3(const char *path, const char *where, const cJSON *obj,
                                      const char *name, float out[3])
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return PBFCL_OK;
    char key[256];
    snprintf(key, sizeof key, "%s.%s", where, name);
    return get_vec3(path, key, v, out);
}

static pbfcl_status parse_domain(const char *path, const cJSON *item, pbfcl_scene *s)
{
    static const char *const keys[] = {"min", "max", NULL};
    const cJSON *min, *max;
    PBFCL_TRY(need_object(path, "domain", item));
    PBFCL_TRY(check_keys(path, "domain", item, keys));
    PBFCL_TRY(need(path, "domain", item, "min", &min));
    PBFCL_TRY(need(path, "domain", item, "max", &max));
    PBFCL_TRY(get_vec3(path, "domain.min", min, s->domain_min));
    return get_vec3(path, "domain.max", max, s->domain_max);
}

static pbfcl_status parse_sphere(const char *path, const char *where, const cJSON *item,
                                 pbfcl_fluid_shape *f)
{
    static const char *const keys[] = {"center", "radius", NULL};
    char key[128];
    const cJSON *center, *radius;
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    PBFCL_TRY(need(path, where, item, "center", &center));
    PBFCL_TRY(need(path, where, item, "radius", &radius));
    snprintf(key, sizeof key, "%s.center", where);
    PBFCL_TRY(get_vec3(path, key, center, f->center));
    snprintf(key, sizeof key, "%s.radius", where);
    f->kind = PBFCL_SHAPE_SPHERE;
    return get_number(path, key, radius, &f->radius);
}

/* One fluid shape: {"min": [..], "max": [..]} or {"sphere": {"center": [..], "radius": R}}. */
static pbfcl_status parse_shape(const char *path, int i, const cJSON *item, pbfcl_fluid_shape *f)
{
    static const char *const keys[] = {"min", "max", "sphere", NULL};
    char where[48], key[96];
    snprintf(where, sizeof where, "fluid[%d]", i);
    memset(f, 0, sizeof *f);
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    const cJSON *sphere = cJSON_GetObjectItemCaseSensitive(item, "sphere");
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(item, "min");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(item, "max");
    if (sphere && (min || max))
        return key_error(path, where,
                         "give either \"min\" and \"max\" (a box) or \"sphere\", "
                         "not both");
    snprintf(key, sizeof key, "%s.sphere", where);
    if (sphere)
        return parse_sphere(path, key, sphere, f);
    PBFCL_TRY(need(path, where, item, "min", &min));
    PBFCL_TRY(need(path, where, item, "max", &max));
    f->kind = PBFCL_SHAPE_BOX;
    snprintf(key, sizeof key, "%s.min", where);
    PBFCL_TRY(get_vec3(path, key, min, f->min));
    snprintf(key, sizeof key, "%s.max", where);
    return get_vec3(path, key, max, f->max);
}

static pbfcl_status parse_fluid(const char *path, const cJSON *item, pbfcl_scene *s)
{
    if (!cJSON_IsArray(item))
        return key_error(path, "fluid", "expected an array of shapes, got %s", type_name(item));
    int count = cJSON_GetArraySize(item);
    if (count < 1 || count > PBFCL_MAX_FLUID_SHAPES)
        return key_error(path, "fluid", "expected 1 to %d shapes, got %d", PBFCL_MAX_FLUID_SHAPES,
                         count);
    int i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++)
        PBFCL_TRY(parse_shape(path, i, c, &s->fluid[i]));
    s->fluid_count = count;
    return PBFCL_OK;
}

/* A mesh's file name relative to the scene file at path (an absolute name as it is) into out;
 * false if it does not fit. */
static bool mesh_path(const char *path, const char *file, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    int dir = file[0] == '/' || !slash ? 0 : (int)(slash - path + 1);
    int len = snprintf(out, size, "%.*s%s", dir, path, file);
    return len >= 0 && (size_t)len < size;
}

/* "scale": a number or [sx, sy, sz], each above 0. */
static pbfcl_status get_scale(const char *path, const char *key, const cJSON *item, float out[3])
{
    if (cJSON_IsNumber(item)) {
        PBFCL_TRY(get_number(path, key, item, &out[0]));
        out[1] = out[2] = out[0];
    } else if (cJSON_IsArray(item)) {
        PBFCL_TRY(get_vec3(path, key, item, out));
    } else {
        return key_error(path, key, "expected a number or an array of 3 numbers, got %s",
                         type_name(item));
    }
    for (int k = 0; k < 3; k++)
        if (!(out[k] > 0.0f))
            return key_error(path, key, "must be above 0 (got %g); mirror a mesh in the OBJ file",
                             out[k]);
    return PBFCL_OK;
}

/* where.mesh: {"file": "x.obj", "scale": S, "rotate": [..], "translate": [..]}: the OBJ file
 * (relative to the scene file) read, checked and placed in s's meshes as shape f. */
static pbfcl_status parse_mesh(const char *path, const char *where, const cJSON *item,
                               pbfcl_scene *s, pbfcl_fluid_shape *f)
{
    static const char *const keys[] = {"file", "scale", "rotate", "translate", NULL};
    char key[128], file[4096];
    const cJSON *v;
    pbfcl_mesh_placement pl = {{1.0f, 1.0f, 1.0f}, {0}, {0}};
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    PBFCL_TRY(need(path, where, item, "file", &v));
    snprintf(key, sizeof key, "%s.file", where);
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return key_error(path, key, "expected the name of an OBJ file, got %s", type_name(v));
    if (!mesh_path(path, v->valuestring, file, sizeof file))
        return key_error(path, key, "the file name is too long");
    snprintf(key, sizeof key, "%s.scale", where);
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "scale")))
        PBFCL_TRY(get_scale(path, key, v, pl.scale));
    PBFCL_TRY(get_optional_vec3(path, where, item, "rotate", pl.rotate));
    PBFCL_TRY(get_optional_vec3(path, where, item, "translate", pl.translate));
    pbfcl_obj m;
    pbfcl_status st = pbfcl_obj_load(file, &m);
    if (st != PBFCL_OK) {
        pbfcl_errorf("(%s: %s.file)", path, where);
        return st;
    }
    st = pbfcl_scene_add_mesh(s, path, where, file, &m, &pl, f);
    pbfcl_obj_free(&m);
    return st;
}

/* The shape of bodies[i] or obstacles[i]: {"box": {"min": [..], "max": [..]}}, {"sphere":
 * {...}} or {"mesh": {...}}. */
static pbfcl_status parse_body_shape(const char *path, const char *where, const cJSON *item,
                                     pbfcl_scene *s, pbfcl_fluid_shape *f)
{
    static const char *const box_keys[] = {"min", "max", NULL};
    const cJSON *box = cJSON_GetObjectItemCaseSensitive(item, "box");
    const cJSON *sphere = cJSON_GetObjectItemCaseSensitive(item, "sphere");
    const cJSON *mesh = cJSON_GetObjectItemCaseSensitive(item, "mesh");
    char key[96];
    if ((box != NULL) + (sphere != NULL) + (mesh != NULL) != 1)
        return key_error(path, where,
                         "give exactly one shape: \"box\": {\"min\": [..], \"max\": [..]}, "
                         "\"sphere\": {\"center\": [..], \"radius\": R} or \"mesh\": "
                         "{\"file\": \"x.obj\"}");
    if (mesh) {
        snprintf(key, sizeof key, "%s.mesh", where);
        return parse_mesh(path, key, mesh, s, f);
    }
    if (sphere) {
        snprintf(key, sizeof key, "%s.sphere", where);
        return parse_sphere(path, key, sphere, f);
    }
    const cJSON *min, *max;
    snprintf(key, sizeof key, "%s.box", where);
    PBFCL_TRY(need_object(path, key, box));
    PBFCL_TRY(check_keys(path, key, box, box_keys));
    PBFCL_TRY(need(path, key, box, "min", &min));
    PBFCL_TRY(need(path, key, box, "max", &max));
    f->kind = PBFCL_SHAPE_BOX;
    snprintf(key, sizeof key, "%s.box.min", where);
    PBFCL_TRY(get_vec3(path, key, min, f->min));
    snprintf(key, sizeof key, "%s.box.max", where);
    return get_vec3(path, key, max, f->max);
}

/* An obstacle's motion: "velocity" and "angular_velocity" ([x, y, z], default 0) and "until"
 * (s, above 0; default: never stops). */
static pbfcl_status parse_motion(const char *path, const char *where, const cJSON *item,
                                 pbfcl_obstacle_motion *m)
{
    char key[96];
    const cJSON *v;
    memset(m, 0, sizeof *m);
    PBFCL_TRY(get_optional_vec3(path, where, item, "velocity", m->velocity));
    PBFCL_TRY(get_optional_vec3(path, where, item, "angular_velocity", m->angular_velocity));
    snprintf(key, sizeof key, "%s.until", where);
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "until"))) {
        PBFCL_TRY(get_number(path, key, v, &m->until));
        if (!(m->until > 0.0f))
            return key_error(path, key,
                             "must be a time above 0 s (got %g); leave it out for an "
                             "obstacle that never stops",
                             m->until);
    }
    return PBFCL_OK;
}

/* An obstacle's keyframed path: {"keys": [{"time", "position", "rotation"}, ...], "repeat"}
 * (position and rotation [x, y, z], default 0; repeat false by default). The values are
 * checked with the scene (pbfcl_scene_validate). */
static pbfcl_status parse_path(const char *path, const char *where, const cJSON *item,
                               pbfcl_obstacle_motion *m)
{
    static const char *const path_keys[] = {"keys", "repeat", NULL};
    static const char *const key_keys[] = {"time", "position", "rotation", NULL};
    char key[224];
    const cJSON *keys, *v;
    snprintf(key, sizeof key, "%s.path", where);
    PBFCL_TRY(need_object(path, key, item));
    PBFCL_TRY(check_keys(path, key, item, path_keys));
    PBFCL_TRY(need(path, key, item, "keys", &keys));
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "repeat"))) {
        snprintf(key, sizeof key, "%s.path.repeat", where);
        if (!cJSON_IsBool(v))
            return key_error(path, key, "expected true or false, got %s", type_name(v));
        m->repeat = cJSON_IsTrue(v);
    }
    snprintf(key, sizeof key, "%s.path.keys", where);
    if (!cJSON_IsArray(keys))
        return key_error(path, key,
                         "expected an array of keys {\"time\", \"position\", \"rotation\"}, got %s",
                         type_name(keys));
    int count = cJSON_GetArraySize(keys);
    if (count < 1 || count > PBFCL_MAX_PATH_KEYS)
        return key_error(path, key, "has %d keys; give 1 to %d", count, PBFCL_MAX_PATH_KEYS);
    m->key_count = count;
    for (int e = 0; e < count; e++) {
        const cJSON *k = cJSON_GetArrayItem(keys, e), *time;
        pbfcl_path_key *out = &m->keys[e];
        char at[160];
        snprintf(at, sizeof at, "%s.path.keys[%d]", where, e);
        PBFCL_TRY(need_object(path, at, k));
        PBFCL_TRY(check_keys(path, at, k, key_keys));
        PBFCL_TRY(need(path, at, k, "time", &time));
        snprintf(key, sizeof key, "%s.time", at);
        PBFCL_TRY(get_number(path, key, time, &out->time));
        PBFCL_TRY(get_optional_vec3(path, at, k, "position", out->position));
        PBFCL_TRY(get_optional_vec3(path, at, k, "rotation", out->rotation));
    }
    return PBFCL_OK;
}

/* obstacles[i]: exactly one of {"box": {"min", "max"}}, {"sphere": {"center", "radius"}},
 * {"capsule": {"a", "b", "radius"}} or {"mesh": {"file", ...}}. */
static pbfcl_status parse_obstacle(const char *path, int i, const cJSON *item, pbfcl_scene *s,
                                   pbfcl_fluid_shape *f)
{
    static const char *const keys[] = {
        "box", "sphere", "capsule", "mesh", "velocity", "angular_velocity", "until", "path", NULL};
    static const char *const capsule_keys[] = {"a", "b", "radius", NULL};
    char where[48], key[96];
    snprintf(where, sizeof where, "obstacles[%d]", i);
    memset(f, 0, sizeof *f);
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    PBFCL_TRY(parse_motion(path, where, item, &s->obstacle_motion[i]));
    const cJSON *keyed = cJSON_GetObjectItemCaseSensitive(item, "path");
    if (keyed)
        PBFCL_TRY(parse_path(path, where, keyed, &s->obstacle_motion[i]));
    const cJSON *capsule = cJSON_GetObjectItemCaseSensitive(item, "capsule");
    int shapes = 0;
    for (int k = 0; k < 4; k++)
        shapes += cJSON_GetObjectItemCaseSensitive(item, keys[k]) != NULL;
    if (capsule && shapes != 1)
        return key_error(path, where,
                         "give exactly one shape: \"box\", \"sphere\", \"capsule\" or \"mesh\"");
    if (!capsule)
        return parse_body_shape(path, where, item, s, f);
    const cJSON *a, *b, *radius;
    snprintf(key, sizeof key, "%s.capsule", where);
    PBFCL_TRY(need_object(path, key, capsule));
    PBFCL_TRY(check_keys(path, key, capsule, capsule_keys));
    PBFCL_TRY(need(path, key, capsule, "a", &a));
    PBFCL_TRY(need(path, key, capsule, "b", &b));
    PBFCL_TRY(need(path, key, capsule, "radius", &radius));
    f->kind = PBFCL_SHAPE_CAPSULE;
    snprintf(key, sizeof key, "%s.capsule.a", where);
    PBFCL_TRY(get_vec3(path, key, a, f->a));
    snprintf(key, sizeof key, "%s.capsule.b", where);
    PBFCL_TRY(get_vec3(path, key, b, f->b));
    snprintf(key, sizeof key, "%s.capsule.radius", where);
    return get_number(path, key, radius, &f->radius);
}

static pbfcl_status parse_obstacles(const char *path, const cJSON *item, pbfcl_scene *s)
{
    if (!cJSON_IsArray(item))
        return key_error(path, "obstacles", "expected an array of obstacles, got %s",
                         type_name(item));
    int count = cJSON_GetArraySize(item);
    if (count > PBFCL_MAX_OBSTACLES)
        return key_error(path, "obstacles", "expected at most %d obstacles, got %d",
                         PBFCL_MAX_OBSTACLES, count);
    int i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++)
        PBFCL_TRY(parse_obstacle(path, i, c, s, &s->obstacles[i]));
    s->obstacle_count = count;
    return PBFCL_OK;
}

/* An optional number key of obj (out keeps its value when absent). */
static pbfcl_status get_optional_number(const char *path, const char *where, const cJSON *obj,
                                        const char *name, float *out)
{
    char key[96];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    snprintf(key, sizeof key, "%s.%s", where, name);
    return v ? get_number(path, key, v, out) : PBFCL_OK;
}

/* colliders[i]'s "rotation", "two_sided" and "file" (a convex hull and a mesh need one). */
static pbfcl_status parse_collider_extras(const char *path, const char *where, const cJSON *item,
                                          pbfcl_scene_collider *c)
{
    char key[96];
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "rotation"))) {
        snprintf(key, sizeof key, "%s.rotation", where);
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 4)
            return key_error(path, key, "expected a quaternion [x, y, z, w], got %s", type_name(v));
        int k = 0;
        for (const cJSON *e = v->child; e; e = e->next)
            PBFCL_TRY(get_number(path, key, e, &c->rotation[k++]));
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "two_sided"))) {
        snprintf(key, sizeof key, "%s.two_sided", where);
        if (!cJSON_IsBool(v))
            return key_error(path, key, "expected true or false, got %s", type_name(v));
        c->two_sided = cJSON_IsTrue(v);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "file"))) {
        snprintf(key, sizeof key, "%s.file", where);
        if (!cJSON_IsString(v) || !v->valuestring[0])
            return key_error(path, key, "expected the name of an OBJ file, got %s", type_name(v));
        if (!mesh_path(path, v->valuestring, c->file, sizeof c->file))
            return key_error(path, key, "the file name is too long");
    } else if (c->type >= 3) {
        static const char *const needs[] = {"a convex", "a mesh", "an sdf"};
        return key_error(path, where, "%s collider needs \"file\": an OBJ file",
                         needs[c->type - 3]);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "resolution"))) {
        snprintf(key, sizeof key, "%s.resolution", where);
        if (c->type != PBFCL_SHAPE_KIND_SDF)
            return key_error(path, key, "only an sdf collider has a resolution: remove it");
        PBFCL_TRY(get_int(path, key, v, &c->resolution));
        if (c->resolution < 2 || c->resolution > PBFCL_MAX_SDF_RESOLUTION)
            return key_error(path, key, "an sdf collider's resolution is 2 to %d cells, got %d",
                             PBFCL_MAX_SDF_RESOLUTION, c->resolution);
    }
    return PBFCL_OK;
}

/* colliders[i]: {"type": "sphere" | "capsule" | "box" | "convex" | "mesh" | "sdf", its size
 * ("radius", "half_length", "half_extents"; "file", "scale", "two_sided", "resolution"),
 * "position", "rotation" (quaternion x, y, z, w), "velocity", "angular_velocity", "friction",
 * "static_friction", "margin"}. The shape itself is checked when it is made. */
static pbfcl_status parse_collider(const char *path, int i, const cJSON *item,
                                   pbfcl_scene_collider *c)
{
    static const char *const keys[] = {"type",
                                       "radius",
                                       "half_length",
                                       "half_extents",
                                       "file",
                                       "scale",
                                       "two_sided",
                                       "position",
                                       "rotation",
                                       "velocity",
                                       "angular_velocity",
                                       "friction",
                                       "static_friction",
                                       "margin",
                                       "resolution",
                                       "until",
                                       NULL};
    static const char *const types[] = {"sphere", "capsule", "box", "convex", "mesh", "sdf"};
    char where[48], key[96];
    const cJSON *v;
    snprintf(where, sizeof where, "colliders[%d]", i);
    memset(c, 0, sizeof *c);
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    PBFCL_TRY(need(path, where, item, "type", &v));
    c->type = -1;
    for (int t = 0; t < 6 && cJSON_IsString(v); t++)
        if (!strcmp(v->valuestring, types[t]))
            c->type = t;
    snprintf(key, sizeof key, "%s.type", where);
    if (c->type < 0)
        return key_error(path, key,
                         "expected \"sphere\", \"capsule\", \"box\", \"convex\", "
                         "\"mesh\" or \"sdf\"");
    const char *const numbers[] = {"radius",          "half_length", "scale", "friction",
                                   "static_friction", "margin",      "until"};
    float *const at[] = {&c->radius,          &c->half_length, &c->scale, &c->friction,
                         &c->static_friction, &c->margin,      &c->until};
    for (int k = 0; k < 7; k++)
        PBFCL_TRY(get_optional_number(path, where, item, numbers[k], at[k]));
    const char *const vectors[] = {"half_extents", "position", "velocity", "angular_velocity"};
    float *const vec[] = {c->half_extents, c->position, c->velocity, c->angular_velocity};
    for (int k = 0; k < 4; k++)
        PBFCL_TRY(get_optional_vec3(path, where, item, vectors[k], vec[k]));
    return parse_collider_extras(path, where, item, c);
}

static pbfcl_status parse_colliders(const char *path, const cJSON *item, pbfcl_scene *s)
{
    if (!cJSON_IsArray(item))
        return key_error(path, "colliders", "expected an array of shapes, got %s", type_name(item));
    int count = cJSON_GetArraySize(item);
    if (count > PBFCL_MAX_SCENE_COLLIDERS)
        return key_error(path, "colliders", "expected at most %d shapes, got %d",
                         PBFCL_MAX_SCENE_COLLIDERS, count);
    int i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++)
        PBFCL_TRY(parse_collider(path, i, c, &s->colliders[i]));
    s->collider_count = count;
    return PBFCL_OK;
}

/* One body: its shape, density (required), stiffness (1) and velocity (0). */
static pbfcl_status parse_body(const char *path, int i, const cJSON *item, pbfcl_scene *s,
                               pbfcl_body_shape *b)
{
    static const char *const keys[] = {"box",       "sphere",   "mesh", "density",
                                       "stiffness", "velocity", NULL};
    char where[48], key[96];
    const cJSON *v;
    snprintf(where, sizeof where, "bodies[%d]", i);
    memset(b, 0, sizeof *b);
    b->stiffness = 1.0f;
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    PBFCL_TRY(parse_body_shape(path, where, item, s, &b->shape));
    PBFCL_TRY(need(path, where, item, "density", &v));
    snprintf(key, sizeof key, "%s.density", where);
    PBFCL_TRY(get_number(path, key, v, &b->density));
    snprintf(key, sizeof key, "%s.stiffness", where);
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "stiffness")))
        PBFCL_TRY(get_number(path, key, v, &b->stiffness));
    PBFCL_TRY(get_optional_vec3(path, where, item, "velocity", b->velocity));
    return PBFCL_OK;
}

static pbfcl_status parse_bodies(const char *path, const cJSON *item, pbfcl_scene *s)
{
    if (!cJSON_IsArray(item))
        return key_error(path, "bodies", "expected an array of bodies, got %s", type_name(item));
    int count = cJSON_GetArraySize(item);
    if (count > PBFCL_MAX_BODIES)
        return key_error(path, "bodies", "expected at most %d bodies, got %d", PBFCL_MAX_BODIES,
                         count);
    int i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++)
        PBFCL_TRY(parse_body(path, i, c, s, &s->bodies[i]));
    s->body_count = count;
    return PBFCL_OK;
}

/* One emitter: {"center": [..], "radius": R, "velocity": [..], "rate": N, "count": N}. */
static pbfcl_status parse_emitter(const char *path, int i, const cJSON *item, pbfcl_emitter *m)
{
    static const char *const keys[] = {"center", "radius", "velocity", "rate", "count", NULL};
    char where[48], key[96];
    const cJSON *v;
    snprintf(where, sizeof where, "emitters[%d]", i);
    memset(m, 0, sizeof *m);
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    int count = 0;
    static const char *const vec_keys[] = {"center", "velocity"};
    float *vecs[] = {m->center, m->velocity};
    for (int k = 0; k < 2; k++) {
        PBFCL_TRY(need(path, where, item, vec_keys[k], &v));
        snprintf(key, sizeof key, "%s.%s", where, vec_keys[k]);
        PBFCL_TRY(get_vec3(path, key, v, vecs[k]));
    }
    static const char *const num_keys[] = {"radius", "rate"};
    float *nums[] = {&m->radius, &m->rate};
    for (int k = 0; k < 2; k++) {
        PBFCL_TRY(need(path, where, item, num_keys[k], &v));
        snprintf(key, sizeof key, "%s.%s", where, num_keys[k]);
        PBFCL_TRY(get_number(path, key, v, nums[k]));
    }
    PBFCL_TRY(need(path, where, item, "count", &v));
    snprintf(key, sizeof key, "%s.count", where);
    PBFCL_TRY(get_int(path, key, v, &count));
    m->count = count;
    return PBFCL_OK;
}

/* One drain: {"box": {"min": [..], "max": [..]}}. */
static pbfcl_status parse_drain(const char *path, int i, const cJSON *item, pbfcl_fluid_shape *f)
{
    static const char *const keys[] = {"box", NULL};
    static const char *const box_keys[] = {"min", "max", NULL};
    char where[48], key[96];
    const cJSON *box, *min, *max;
    snprintf(where, sizeof where, "drains[%d]", i);
    memset(f, 0, sizeof *f);
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    PBFCL_TRY(need(path, where, item, "box", &box));
    snprintf(where, sizeof where, "drains[%d].box", i);
    PBFCL_TRY(need_object(path, where, box));
    PBFCL_TRY(check_keys(path, where, box, box_keys));
    PBFCL_TRY(need(path, where, box, "min", &min));
    PBFCL_TRY(need(path, where, box, "max", &max));
    f->kind = PBFCL_SHAPE_BOX;
    snprintf(key, sizeof key, "%s.min", where);
    PBFCL_TRY(get_vec3(path, key, min, f->min));
    snprintf(key, sizeof key, "%s.max", where);
    return get_vec3(path, key, max, f->max);
}

/* "emitters" or "drains": an array of at most most entries, each parsed by its function. */
static pbfcl_status parse_flow(const char *path, const char *name, const cJSON *item,
                               pbfcl_scene *s)
{
    bool emitters = !strcmp(name, "emitters");
    int most = emitters ? PBFCL_MAX_EMITTERS : PBFCL_MAX_DRAINS;
    if (!cJSON_IsArray(item))
        return key_error(path, name, "expected an array, got %s", type_name(item));
    int count = cJSON_GetArraySize(item);
    if (count > most)
        return key_error(path, name, "expected at most %d, got %d", most, count);
    int i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++)
        PBFCL_TRY(emitters ? parse_emitter(path, i, c, &s->emitters[i])
                           : parse_drain(path, i, c, &s->drains[i]));
    *(emitters ? &s->emitter_count : &s->drain_count) = count;
    return PBFCL_OK;
}

/* The solver keys are the parameter list's names (PBFCL_SOLVER_PARAM_LIST, include/pbfcl.h)
 * and their former spellings (PBFCL_SOLVER_PARAM_FORMER_LIST). */
#define SOLVER_KEY_COUNT ((size_t)pbfcl_solver_param_count())

static const char *const former_keys[][2] = {
#define FORMER_KEY_(key, flag, current) {key, current},
    PBFCL_SOLVER_PARAM_FORMER_LIST(FORMER_KEY_)
#undef FORMER_KEY_
};
#define FORMER_KEY_COUNT (sizeof former_keys / sizeof former_keys[0])

/* The value of the parameter called name in item, under its name or a former one (*key: the
 * one used); NULL if neither is there, an error if both are. */
static pbfcl_status solver_value(const char *path, const cJSON *item, const char *name,
                                 const char **key, const cJSON **out)
{
    *key = name;
    *out = cJSON_GetObjectItemCaseSensitive(item, name);
    for (size_t f = 0; f < FORMER_KEY_COUNT; f++) {
        if (strcmp(former_keys[f][1], name) != 0)
            continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, former_keys[f][0]);
        if (v && *out)
            return key_error(path, "solver", "%s and its former name %s are both given; keep %s",
                             name, former_keys[f][0], name);
        if (v) {
            *key = former_keys[f][0];
            *out = v;
        }
    }
    return PBFCL_OK;
}

static pbfcl_status parse_solver(const char *path, const cJSON *item, pbfcl_solver_settings *sv)
{
    const char *names[64];
    if (SOLVER_KEY_COUNT + FORMER_KEY_COUNT >= 64)
        return PBFCL_ERR_BAD_ARGUMENT; /* the list outgrew this parser */
    for (size_t k = 0; k < SOLVER_KEY_COUNT; k++)
        names[k] = pbfcl_solver_param((int)k)->name;
    for (size_t f = 0; f < FORMER_KEY_COUNT; f++)
        names[SOLVER_KEY_COUNT + f] = former_keys[f][0];
    names[SOLVER_KEY_COUNT + FORMER_KEY_COUNT] = NULL;
    PBFCL_TRY(need_object(path, "solver", item));
    PBFCL_TRY(check_keys(path, "solver", item, names));
    for (size_t k = 0; k < SOLVER_KEY_COUNT; k++) {
        const pbfcl_param_info *info = pbfcl_solver_param((int)k);
        const char *name;
        const cJSON *v;
        PBFCL_TRY(solver_value(path, item, info->name, &name, &v));
        if (!v)
            continue;
        char key[64];
        snprintf(key, sizeof key, "solver.%s", name);
        void *field = (char *)sv + info->offset;
        if (info->flags & PBFCL_PARAM_NAMED)
            PBFCL_TRY(get_method(path, key, v, (int *)field));
        else if (info->is_int)
            PBFCL_TRY(get_int(path, key, v, (int *)field));
        else
            PBFCL_TRY(get_number(path, key, v, (float *)field));
    }
    return PBFCL_OK;
}

/* Reads the whole file into a NUL-terminated malloc'ed buffer. */
static pbfcl_status read_text(const char *path, char **out)
{
    return pbfcl_read_input_file(path, "scene file", "give a JSON scene file (see docs/SCENES.md)",
                                 SCENE_FILE_MAX_BYTES, out);
}

/* The deepest nesting of arrays and objects in text (outside strings), up to its end. */
static int nesting_depth(const char *text)
{
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (const char *p = text; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '[' || *p == '{') {
            deepest = ++depth > deepest ? depth : deepest;
        } else if ((*p == ']' || *p == '}') && depth > 0) {
            depth--;
        }
    }
    return deepest;
}

/* The line and column (from 1) of at in text. */
static void text_position(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; p++, (*col)++)
        if (*p == '\n') {
            (*line)++;
            *col = 0;
        }
}

/* The first \u0000 escape inside a string of text, or NULL: cJSON makes it a NUL character,
 * which ends the string there (a name or a mesh's file name cut short without a word). */
static const char *nul_escape(const char *text)
{
    bool in_string = false;
    for (const char *p = text; *p; p++) {
        if (!in_string) {
            in_string = *p == '"';
        } else if (*p == '"') {
            in_string = false;
        } else if (*p == '\\' && p[1]) {
            if (p[1] == 'u' && strncmp(p + 2, "0000", 4) == 0)
                return p;
            p++;
        }
    }
    return NULL;
}

/* Reports a JSON syntax error at `at` with its line and column. */
static void syntax_error(const char *path, const char *text, const char *at)
{
    if (nesting_depth(text) > CJSON_NESTING_LIMIT) {
        pbfcl_errorf("%s: arrays and objects are nested more than %d deep; a scene file needs "
                     "3 levels (see docs/SCENES.md)",
                     path, CJSON_NESTING_LIMIT);
        return;
    }
    if (!at || at < text)
        at = text;
    int line, col;
    text_position(text, at, &line, &col);
    char near[32];
    snprintf(near, sizeof near, "%.24s", at);
    for (char *p = near; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    pbfcl_errorf("%s:%d:%d: JSON syntax error near '%s' (check commas, quotes and brackets)", path,
                 line, col, near[0] ? near : "end of file");
}

/* Length of the UTF-8 sequence starting at p (1 to 4), or 0 if it is not valid UTF-8. */
static int utf8_length(const unsigned char *p)
{
    int len = p[0] < 0x80           ? 1
              : (p[0] >> 5) == 0x6  ? 2
              : (p[0] >> 4) == 0xE  ? 3
              : (p[0] >> 3) == 0x1E ? 4
                                    : 0;
    for (int k = 1; k < len; k++)
        if ((p[k] >> 6) != 0x2)
            return 0;
    return len;
}

/* A scene name is printed in messages and the demo: printable UTF-8 text of 1 to size-1 bytes
 * without control characters. */
static pbfcl_status check_name(const char *path, const char *name, size_t size)
{
    size_t len = strlen(name);
    if (len == 0)
        return key_error(path, "name", "expected a non-empty string, got an empty string");
    if (len >= size)
        return key_error(path, "name", "is %zu bytes long; use at most %zu", len, size - 1);
    for (const unsigned char *p = (const unsigned char *)name; *p;) {
        int n = utf8_length(p);
        if (n == 0)
            return key_error(path, "name", "is not valid UTF-8 (byte %zu); use plain text",
                             (size_t)(p - (const unsigned char *)name));
        if (n == 1 && (*p < 0x20 || *p == 0x7F))
            return key_error(path, "name",
                             "contains a control character (byte %zu, code %u); use printable "
                             "text",
                             (size_t)(p - (const unsigned char *)name), *p);
        p += n;
    }
    return PBFCL_OK;
}

/* A cloth's or rope's "pin": an array of names (pin_names[k] is bit pin_bits[k]). */
static pbfcl_status parse_pins(const char *path, const char *where, const cJSON *item, bool rope,
                               unsigned *pin)
{
    static const char *const cloth_names[] = {"corner00", "corner10", "corner01", "corner11",
                                              "corners",  "edge_u0",  "edge_u1",  "edge_v0",
                                              "edge_v1",  NULL};
    static const unsigned cloth_bits[] = {
        PBFCL_PIN_CORNER00, PBFCL_PIN_CORNER10, PBFCL_PIN_CORNER01, PBFCL_PIN_CORNER11, 15u,
        PBFCL_PIN_EDGE_U0,  PBFCL_PIN_EDGE_U1,  PBFCL_PIN_EDGE_V0,  PBFCL_PIN_EDGE_V1};
    static const char *const rope_names[] = {"start", "end", NULL};
    static const unsigned rope_bits[] = {PBFCL_PIN_CORNER00, PBFCL_PIN_CORNER10};
    const char *const *names = rope ? rope_names : cloth_names;
    const unsigned *bits = rope ? rope_bits : cloth_bits;
    char key[96], list[160] = "";
    snprintf(key, sizeof key, "%s.pin", where);
    for (int k = 0; names[k]; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", k ? ", " : "",
                 names[k]);
    if (!cJSON_IsArray(item))
        return key_error(path, key, "expected an array of names (%s), got %s", list,
                         type_name(item));
    for (const cJSON *c = item->child; c; c = c->next) {
        int k = 0;
        while (names[k] && !(cJSON_IsString(c) && !strcmp(c->valuestring, names[k])))
            k++;
        if (!names[k])
            return key_error(path, key, "unknown pin %s; use %s",
                             cJSON_IsString(c) ? c->valuestring : type_name(c), list);
        *pin |= bits[k];
    }
    return PBFCL_OK;
}

/* What holds the pinned particles: {"collider": i}, {"body": i} or {"obstacle": i}. */
static pbfcl_status parse_attach(const char *path, const char *where, const cJSON *v,
                                 pbfcl_cloth_shape *c)
{
    static const char *const keys[] = {"collider", "body", "obstacle", NULL};
    static const int kinds[] = {PBFCL_CLOTH_ATTACH_COLLIDER, PBFCL_CLOTH_ATTACH_BODY,
                                PBFCL_CLOTH_ATTACH_OBSTACLE};
    char key[96];
    snprintf(key, sizeof key, "%s.attach", where);
    PBFCL_TRY(need_object(path, key, v));
    PBFCL_TRY(check_keys(path, key, v, keys));
    int found = -1, given = 0;
    for (int k = 0; keys[k]; k++)
        if (cJSON_GetObjectItemCaseSensitive(v, keys[k])) {
            found = k;
            given++;
        }
    if (given != 1)
        return key_error(path, key,
                         "expected one of {\"collider\": i} (the pinned particles move with "
                         "colliders[i]), {\"body\": i} (they hang from bodies[i]) or "
                         "{\"obstacle\": i} (they move with obstacles[i])");
    snprintf(key, sizeof key, "%s.attach.%s", where, keys[found]);
    PBFCL_TRY(
        get_int(path, key, cJSON_GetObjectItemCaseSensitive(v, keys[found]), &c->attach_index));
    c->attach = kinds[found];
    return PBFCL_OK;
}

/* The numbers and flags a cloth and a rope share. */
static pbfcl_status parse_cloth_common(const char *path, const char *where, const cJSON *item,
                                       pbfcl_cloth_shape *c)
{
    static const char *const names[] = {"mass", "stretch_compliance", "bend_compliance", NULL};
    float *outs[] = {&c->mass, &c->stretch, &c->bend};
    char key[96];
    const cJSON *v;
    PBFCL_TRY(need(path, where, item, "mass", &v));
    for (int k = 0; names[k]; k++)
        if ((v = cJSON_GetObjectItemCaseSensitive(item, names[k]))) {
            snprintf(key, sizeof key, "%s.%s", where, names[k]);
            PBFCL_TRY(get_number(path, key, v, outs[k]));
        }
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "tethers"))) {
        snprintf(key, sizeof key, "%s.tethers", where);
        if (!cJSON_IsBool(v))
            return key_error(path, key, "expected true or false, got %s", type_name(v));
        c->tethers = cJSON_IsTrue(v);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "pin")))
        PBFCL_TRY(parse_pins(path, where, v, c->rope, &c->pin));
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "attach")))
        PBFCL_TRY(parse_attach(path, where, v, c));
    return PBFCL_OK;
}

/* One cloth {"corner", "u", "v", "resolution": [nu, nv], ...} or rope {"start", "end",
 * "points", ...}, on top of pbfcl_cloth_shape_defaults. */
static pbfcl_status parse_cloth(const char *path, const char *where, const cJSON *item, bool rope,
                                pbfcl_cloth_shape *c)
{
    static const char *const cloth_keys[] = {
        "corner",          "u",       "v",    "resolution",   "mass",   "pin", "stretch_compliance",
        "bend_compliance", "tethers", "tear", "self_collide", "attach", NULL};
    static const char *const rope_keys[] = {
        "start",           "end",     "points", "mass", "pin", "stretch_compliance",
        "bend_compliance", "tethers", "attach", NULL};
    char key[96];
    const cJSON *v;
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, rope ? rope_keys : cloth_keys));
    const char *const vecs[] = {rope ? "start" : "corner", rope ? "end" : "u", "v"};
    float *outs[] = {c->corner, c->u, c->v};
    for (int k = 0; k < (rope ? 2 : 3); k++) {
        PBFCL_TRY(need(path, where, item, vecs[k], &v));
        snprintf(key, sizeof key, "%s.%s", where, vecs[k]);
        PBFCL_TRY(get_vec3(path, key, v, outs[k]));
    }
    for (int k = 0; rope && k < 3; k++)
        c->u[k] -= c->corner[k]; /* the end, as the rope's extent */
    PBFCL_TRY(need(path, where, item, rope ? "points" : "resolution", &v));
    snprintf(key, sizeof key, "%s.%s", where, rope ? "points" : "resolution");
    if (rope) {
        PBFCL_TRY(get_int(path, key, v, &c->res[0]));
    } else {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
            return key_error(path, key, "expected two integers [nu, nv], got %s", type_name(v));
        for (int k = 0; k < 2; k++)
            PBFCL_TRY(get_int(path, key, cJSON_GetArrayItem(v, k), &c->res[k]));
    }
    if (!rope && (v = cJSON_GetObjectItemCaseSensitive(item, "self_collide"))) {
        snprintf(key, sizeof key, "%s.self_collide", where);
        if (!cJSON_IsBool(v))
            return key_error(path, key, "expected true or false, got %s", type_name(v));
        c->self_collide = cJSON_IsTrue(v);
    }
    if (!rope && (v = cJSON_GetObjectItemCaseSensitive(item, "tear"))) {
        snprintf(key, sizeof key, "%s.tear", where);
        PBFCL_TRY(get_number(path, key, v, &c->tear));
    }
    if (c->tear > 0.0f && !cJSON_GetObjectItemCaseSensitive(item, "tethers"))
        c->tethers = false; /* tethers would hold the torn pieces together: off unless asked */
    return parse_cloth_common(path, where, item, c);
}

/* An inflatable's sphere {"center", "radius", "subdivisions"} (no subdivisions: from the
 * particle radius). */
static pbfcl_status parse_inflatable_sphere(const char *path, const char *where, const cJSON *item,
                                            pbfcl_cloth_shape *c)
{
    static const char *const keys[] = {"center", "radius", "subdivisions", NULL};
    char key[128];
    const cJSON *v;
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    PBFCL_TRY(need(path, where, item, "center", &v));
    snprintf(key, sizeof key, "%s.center", where);
    PBFCL_TRY(get_vec3(path, key, v, c->shape.center));
    PBFCL_TRY(need(path, where, item, "radius", &v));
    snprintf(key, sizeof key, "%s.radius", where);
    PBFCL_TRY(get_number(path, key, v, &c->shape.radius));
    if (!(c->shape.radius > 0.0f))
        return key_error(path, key, "expected the radius in m, above 0, got %g", c->shape.radius);
    if ((v = cJSON_GetObjectItemCaseSensitive(item, "subdivisions"))) {
        snprintf(key, sizeof key, "%s.subdivisions", where);
        PBFCL_TRY(get_int(path, key, v, &c->subdivisions));
        if (c->subdivisions < 0 || c->subdivisions > PBFCL_COOK_MAX_SUBDIVISIONS)
            return key_error(path, key, "expected 0 to %d (10 * 4^s + 2 particles), got %d",
                             PBFCL_COOK_MAX_SUBDIVISIONS, c->subdivisions);
    }
    c->shape.kind = PBFCL_SHAPE_SPHERE;
    return PBFCL_OK;
}

/* One inflatable {"sphere": {...}} or {"mesh": {...}} with "mass", "pressure", "compliance"
 * and the shell's "stretch_compliance" and "bend_compliance", on top of
 * pbfcl_inflatable_shape_defaults. */
static pbfcl_status parse_inflatable(const char *path, const char *where, const cJSON *item,
                                     pbfcl_scene *s, pbfcl_cloth_shape *c)
{
    static const char *const keys[] = {"sphere",          "mesh",       "mass",
                                       "pressure",        "compliance", "stretch_compliance",
                                       "bend_compliance", NULL};
    static const char *const names[] = {
        "mass", "pressure", "compliance", "stretch_compliance", "bend_compliance", NULL};
    float *outs[] = {&c->mass, &c->pressure, &c->compliance, &c->stretch, &c->bend};
    char key[96];
    const cJSON *v, *sphere, *mesh;
    PBFCL_TRY(need_object(path, where, item));
    PBFCL_TRY(check_keys(path, where, item, keys));
    sphere = cJSON_GetObjectItemCaseSensitive(item, "sphere");
    mesh = cJSON_GetObjectItemCaseSensitive(item, "mesh");
    if ((sphere != NULL) + (mesh != NULL) != 1)
        return key_error(path, where,
                         "give exactly one shape: \"sphere\": {\"center\": [..], \"radius\": R, "
                         "\"subdivisions\": S} or \"mesh\": {\"file\": \"x.obj\"} (closed)");
    snprintf(key, sizeof key, "%s.%s", where, sphere ? "sphere" : "mesh");
    if (sphere)
        PBFCL_TRY(parse_inflatable_sphere(path, key, sphere, c));
    else
        PBFCL_TRY(parse_mesh(path, key, mesh, s, &c->shape));
    PBFCL_TRY(need(path, where, item, "mass", &v));
    for (int k = 0; names[k]; k++)
        if ((v = cJSON_GetObjectItemCaseSensitive(item, names[k]))) {
            snprintf(key, sizeof key, "%s.%s", where, names[k]);
            PBFCL_TRY(get_number(path, key, v, outs[k]));
        }
    return PBFCL_OK;
}

/* "cloth", "rope" or "inflatable": an array of them, appended to the scene's cloths. */
static pbfcl_status parse_cloths(const char *path, const char *name, const cJSON *item,
                                 pbfcl_scene *s)
{
    bool rope = !strcmp(name, "rope"), inflatable = !strcmp(name, "inflatable");
    if (!cJSON_IsArray(item))
        return key_error(path, name, "expected an array of %ss, got %s", name, type_name(item));
    int i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++) {
        if (s->cloth_count >= PBFCL_MAX_CLOTHS)
            return key_error(path, name,
                             "expected at most %d cloths, ropes and inflatables together",
                             PBFCL_MAX_CLOTHS);
        pbfcl_cloth_shape *cl = &s->cloths[s->cloth_count++];
        if (inflatable)
            pbfcl_inflatable_shape_defaults(cl);
        else
            pbfcl_cloth_shape_defaults(cl, rope);
        cl->index = i;
        char where[48];
        snprintf(where, sizeof where, "%s[%d]", name, i);
        PBFCL_TRY(inflatable ? parse_inflatable(path, where, c, s, cl)
                             : parse_cloth(path, where, c, rope, cl));
    }
    return PBFCL_OK;
}

/* Fills s from the parsed root object (on top of the defaults). */
static pbfcl_status parse_root(const char *path, const cJSON *root, pbfcl_scene *s)
{
    static const char *const keys[] = {"name",         "domain",    "gravity",    "particle_radius",
                                       "rest_density", "fluid",     "bodies",     "emitters",
                                       "drains",       "obstacles", "solver",     "colliders",
                                       "cloth",        "rope",      "inflatable", NULL};
    const cJSON *item;
    if (!cJSON_IsObject(root))
        return key_error(path, "(top level)", "expected an object {...}, got %s", type_name(root));
    PBFCL_TRY(check_keys(path, "", root, keys));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "name"))) {
        if (!cJSON_IsString(item))
            return key_error(path, "name", "expected a non-empty string, got %s", type_name(item));
        PBFCL_TRY(check_name(path, item->valuestring, sizeof s->name));
        snprintf(s->name, sizeof s->name, "%s", item->valuestring);
    }
    PBFCL_TRY(need(path, "", root, "domain", &item));
    PBFCL_TRY(parse_domain(path, item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "gravity")))
        PBFCL_TRY(get_vec3(path, "gravity", item, s->gravity));
    PBFCL_TRY(need(path, "", root, "particle_radius", &item));
    PBFCL_TRY(get_number(path, "particle_radius", item, &s->particle_radius));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "rest_density")))
        PBFCL_TRY(get_number(path, "rest_density", item, &s->rest_density));
    PBFCL_TRY(need(path, "", root, "fluid", &item));
    PBFCL_TRY(parse_fluid(path, item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "bodies")))
        PBFCL_TRY(parse_bodies(path, item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "emitters")))
        PBFCL_TRY(parse_flow(path, "emitters", item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "drains")))
        PBFCL_TRY(parse_flow(path, "drains", item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "obstacles")))
        PBFCL_TRY(parse_obstacles(path, item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "colliders")))
        PBFCL_TRY(parse_colliders(path, item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "solver")))
        PBFCL_TRY(parse_solver(path, item, &s->solver));
    s->cloth_count = 0;
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "cloth")))
        PBFCL_TRY(parse_cloths(path, "cloth", item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "rope")))
        PBFCL_TRY(parse_cloths(path, "rope", item, s));
    if ((item = cJSON_GetObjectItemCaseSensitive(root, "inflatable")))
        PBFCL_TRY(parse_cloths(path, "inflatable", item, s));
    return PBFCL_OK;
}

/* The file's name without directories and without ".json", as the default scene name; bytes
 * that are not printable ASCII become '?' (a file name need not be text). */
static void default_name(const char *path, char *name, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 5 && !strcmp(base + len - 5, ".json"))
        len -= 5;
    snprintf(name, size, "%.*s", (int)(len < size - 1 ? len : size - 1), base);
    for (char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7F)
            *p = '?';
}

pbfcl_status pbfcl_scene_load_json(const char *path, pbfcl_scene *out)
{
    PBFCL_TRY(pbfcl_scene_parse_json(path, out));
    pbfcl_status st = pbfcl_scene_validate(out);
    if (st != PBFCL_OK)
        pbfcl_errorf("(in scene file '%s')", path);
    return st;
}

pbfcl_status pbfcl_scene_parse_json(const char *path, pbfcl_scene *out)
{
    char *text = NULL;
    PBFCL_TRY(read_text(path, &text));
    pbfcl_status st = pbfcl_scene_parse_json_text(path, text, out);
    free(text);
    return st;
}

pbfcl_status pbfcl_scene_parse_json_text(const char *path, const char *text, pbfcl_scene *out)
{
    const char *nul = nul_escape(text), *end = NULL;
    if (nul) {
        int line, col;
        text_position(text, nul, &line, &col);
        pbfcl_errorf("%s:%d:%d: a string holds \\u0000 (a NUL character), which would end the "
                     "string there; remove it",
                     path, line, col);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        syntax_error(path, text, end);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_scene_defaults(out);
    out->fluid_count = 0;
    default_name(path, out->name, sizeof out->name);
    pbfcl_status st = parse_root(path, root, out);
    cJSON_Delete(root);
    return st;
}

#endif
