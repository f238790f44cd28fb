/* Checks of a saved scene's bytes (the "scene" section, see state_check.h) before they are
 * used as a pbfcl_scene: what pbfcl_scene_validate cannot see because the parser never makes
 * it (a boolean of 2, a shape kind of 7, a count past its array, a triangle naming a vertex
 * that does not exist), and reading it as the struct would be undefined behaviour. */
#include "sim/state_check.h"

#include "scene/scene.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Logs that field (index: its element, or -1) of the "scene" section is bad and why. */
static pbfcl_status bad_scene(const char *field, int index, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static pbfcl_status bad_scene(const char *field, int index, const char *fmt, ...)
{
    char at[24] = "", what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (index >= 0)
        snprintf(at, sizeof at, "[%d]", index);
    pbfcl_errorf("the saved state is damaged: section 'scene', %s%s %s; it cannot be loaded "
                 "(save the state again)",
                 field, at, what);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* An int of the bytes at offset. */
static int int_at(const unsigned char *b, size_t offset)
{
    int v;
    memcpy(&v, b + offset, sizeof v);
    return v;
}

/* The counts of the scene's arrays: each within its array. */
static pbfcl_status check_counts(const unsigned char *b)
{
    static const struct {
        const char *field;
        size_t offset;
        int most;
    } counts[] = {
        {"fluid_count", offsetof(pbfcl_scene, fluid_count), PBFCL_MAX_FLUID_SHAPES},
        {"body_count", offsetof(pbfcl_scene, body_count), PBFCL_MAX_BODIES},
        {"emitter_count", offsetof(pbfcl_scene, emitter_count), PBFCL_MAX_EMITTERS},
        {"drain_count", offsetof(pbfcl_scene, drain_count), PBFCL_MAX_DRAINS},
        {"obstacle_count", offsetof(pbfcl_scene, obstacle_count), PBFCL_MAX_OBSTACLES},
        {"meshes.vertex_count", offsetof(pbfcl_scene, meshes.vertex_count),
         PBFCL_MAX_MESH_VERTICES},
        {"meshes.triangle_count", offsetof(pbfcl_scene, meshes.triangle_count),
         PBFCL_MAX_MESH_TRIANGLES},
        {"collider_count", offsetof(pbfcl_scene, collider_count), PBFCL_MAX_SCENE_COLLIDERS},
        {"cloth_count", offsetof(pbfcl_scene, cloth_count), PBFCL_MAX_CLOTHS},
    };
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int v = int_at(b, counts[k].offset);
        if (v < 0 || v > counts[k].most)
            return bad_scene(counts[k].field, -1, "is %d; give 0 to %d", v, counts[k].most);
    }
    return PBFCL_OK;
}

/* Shape at offset (of field[index]): a kind of the enum; a mesh's triangles exist. */
static pbfcl_status check_shape(const unsigned char *b, size_t offset, const char *field, int index)
{
    int kind = int_at(b, offset + offsetof(pbfcl_fluid_shape, kind));
    if (kind < PBFCL_SHAPE_BOX || kind > PBFCL_SHAPE_MESH)
        return bad_scene(field, index,
                         "kind is %d; a shape's kind is 0 to 3 (box, sphere, "
                         "capsule, mesh)",
                         kind);
    if (kind != PBFCL_SHAPE_MESH)
        return PBFCL_OK;
    int first = int_at(b, offset + offsetof(pbfcl_fluid_shape, mesh_first));
    int count = int_at(b, offset + offsetof(pbfcl_fluid_shape, mesh_count));
    int triangles = int_at(b, offsetof(pbfcl_scene, meshes.triangle_count));
    if (first < 0 || count < 1 || first > triangles || count > triangles - first)
        return bad_scene(field, index, "has triangles %d to %d; a mesh's lie within the scene's %d",
                         first, first + count, triangles);
    return PBFCL_OK;
}

/* Each cloth, rope and inflatable: its booleans 0 or 1, what holds its pins one of the enum,
 * an inflatable's shape a kind of the enum with its triangles in the scene. */
static pbfcl_status check_cloths(const unsigned char *b)
{
    static const struct {
        const char *field;
        size_t offset;
    } flags[] = {
        {"cloths.rope", offsetof(pbfcl_cloth_shape, rope)},
        {"cloths.inflatable", offsetof(pbfcl_cloth_shape, inflatable)},
        {"cloths.tethers", offsetof(pbfcl_cloth_shape, tethers)},
        {"cloths.self_collide", offsetof(pbfcl_cloth_shape, self_collide)},
    };
    for (int i = 0; i < int_at(b, offsetof(pbfcl_scene, cloth_count)); i++) {
        size_t at = offsetof(pbfcl_scene, cloths) + (size_t)i * sizeof(pbfcl_cloth_shape);
        for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
            if (b[at + flags[k].offset] > 1)
                return bad_scene(flags[k].field, i, "is %u; a boolean is 0 or 1",
                                 b[at + flags[k].offset]);
        int attach = int_at(b, at + offsetof(pbfcl_cloth_shape, attach));
        if (attach < PBFCL_CLOTH_ATTACH_WORLD || attach > PBFCL_CLOTH_ATTACH_OBSTACLE)
            return bad_scene("cloths.attach", i,
                             "is %d; what holds the pins is 0 to 3 (the world, a collider, a "
                             "body, an obstacle)",
                             attach);
        if (b[at + offsetof(pbfcl_cloth_shape, inflatable)])
            PBFCL_TRY(check_shape(b, at + offsetof(pbfcl_cloth_shape, shape), "cloths.shape", i));
    }
    return PBFCL_OK;
}

/* Every used shape of the scene's lists. */
static pbfcl_status check_shapes(const unsigned char *b)
{
    struct {
        const char *field;
        size_t first, stride, count;
    } lists[] = {
        {"fluid", offsetof(pbfcl_scene, fluid), sizeof(pbfcl_fluid_shape),
         offsetof(pbfcl_scene, fluid_count)},
        {"bodies", offsetof(pbfcl_scene, bodies), sizeof(pbfcl_body_shape),
         offsetof(pbfcl_scene, body_count)},
        {"drains", offsetof(pbfcl_scene, drains), sizeof(pbfcl_fluid_shape),
         offsetof(pbfcl_scene, drain_count)},
        {"obstacles", offsetof(pbfcl_scene, obstacles), sizeof(pbfcl_fluid_shape),
         offsetof(pbfcl_scene, obstacle_count)},
    };
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (int i = 0; i < int_at(b, lists[l].count); i++)
            PBFCL_TRY(
                check_shape(b, lists[l].first + (size_t)i * lists[l].stride, lists[l].field, i));
    return PBFCL_OK;
}

/* Each collider: a kind of the enum, two_sided a boolean, a resolution 0 or in range, its
 * file's name ending within its array. */
static pbfcl_status check_colliders(const unsigned char *b)
{
    for (int i = 0; i < int_at(b, offsetof(pbfcl_scene, collider_count)); i++) {
        size_t at = offsetof(pbfcl_scene, colliders) + (size_t)i * sizeof(pbfcl_scene_collider);
        int type = int_at(b, at + offsetof(pbfcl_scene_collider, type));
        int two = int_at(b, at + offsetof(pbfcl_scene_collider, two_sided));
        int res = int_at(b, at + offsetof(pbfcl_scene_collider, resolution));
        if (type < PBFCL_SHAPE_KIND_SPHERE || type > PBFCL_SHAPE_KIND_SDF)
            return bad_scene("colliders.type", i, "is %d; a collider's type is 0 to %d", type,
                             PBFCL_SHAPE_KIND_SDF);
        if (two != 0 && two != 1)
            return bad_scene("colliders.two_sided", i, "is %d; a boolean is 0 or 1", two);
        if (res != 0 && (res < 2 || res > PBFCL_MAX_SDF_RESOLUTION))
            return bad_scene("colliders.resolution", i, "is %d; give 0 or 2 to %d", res,
                             PBFCL_MAX_SDF_RESOLUTION);
        if (!memchr(b + at + offsetof(pbfcl_scene_collider, file), '\0',
                    sizeof((pbfcl_scene_collider *)0)->file))
            return bad_scene("colliders.file", i, "does not end within its %zu bytes",
                             sizeof((pbfcl_scene_collider *)0)->file);
        int first = int_at(b, at + offsetof(pbfcl_scene_collider, mesh_first));
        int count = int_at(b, at + offsetof(pbfcl_scene_collider, mesh_count));
        int triangles = int_at(b, offsetof(pbfcl_scene, meshes.triangle_count));
        if (type >= PBFCL_SHAPE_KIND_CONVEX && b[at + offsetof(pbfcl_scene_collider, file)] == 0 &&
            (first < 0 || count < 1 || first > triangles - count))
            return bad_scene("colliders.mesh_first", i,
                             "and its count are %d and %d; a collider without a file takes 1 or "
                             "more of the scene's %d triangles",
                             first, count, triangles);
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_state_check_scene(const void *bytes, size_t size)
{
    const unsigned char *b = bytes;
    if (size != sizeof(pbfcl_scene))
        return bad_scene("size", -1, "is %zu bytes; a scene of this build has %zu", size,
                         sizeof(pbfcl_scene));
    if (!memchr(b + offsetof(pbfcl_scene, name), '\0', sizeof((pbfcl_scene *)0)->name))
        return bad_scene("name", -1, "does not end within its 64 bytes");
    PBFCL_TRY(check_counts(b));
    PBFCL_TRY(check_shapes(b));
    PBFCL_TRY(check_colliders(b));
    PBFCL_TRY(check_cloths(b));
    for (int i = 0; i < int_at(b, offsetof(pbfcl_scene, obstacle_count)); i++) {
        size_t at =
            offsetof(pbfcl_scene, obstacle_motion) + (size_t)i * sizeof(pbfcl_obstacle_motion);
        unsigned char repeat = b[at + offsetof(pbfcl_obstacle_motion, repeat)];
        if (repeat > 1)
            return bad_scene("obstacle_motion.repeat", i, "is %u; a boolean is 0 or 1", repeat);
    }
    int vertices = int_at(b, offsetof(pbfcl_scene, meshes.vertex_count));
    for (int t = 0; t < int_at(b, offsetof(pbfcl_scene, meshes.triangle_count)); t++)
        for (int k = 0; k < 3; k++) {
            int v = int_at(b, offsetof(pbfcl_scene, meshes.triangles) + ((size_t)t * 3 + k) * 4);
            if (v < 0 || v >= vertices)
                return bad_scene("meshes.triangles", t,
                                 "names vertex %d; a triangle's are below "
                                 "meshes.vertex_count, %d",
                                 v, vertices);
        }
    return PBFCL_OK;
}
