/* The "colliders" key of scene files (docs/SCENES.md, "Colliders"): each shape's values read,
 * a mesh's file found beside the scene file, defaults for what is left out, an SDF's
 * resolution and a motion's until; a collider of no known type, a mesh or an SDF without a
 * file, an unknown key, a rotation that is not four numbers, a resolution out of range, not a
 * whole number or on another type, and too many colliders refused naming colliders[i] and the
 * key. */
#include "scene/scene.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scene text with colliders (a JSON array) in a unit box. */
static pbfcl_status parse(const char *colliders, pbfcl_scene *s, const char **log)
{
    static char text[8192];
    snprintf(text, sizeof text,
             "{\"domain\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}, \"particle_radius\": 0.02,"
             " \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.2, 0.2, 0.2]}], \"colliders\": %s}",
             colliders);
    test_capture_begin();
    pbfcl_status st = pbfcl_scene_parse_json_text("/scenes/cup.json", text, s);
    *log = test_capture_end();
    return st;
}

START_TEST(test_scene_colliders_read)
{
    pbfcl_scene *s = malloc(sizeof *s);
    const char *log;
    ck_assert_int_eq(parse("[{\"type\": \"capsule\", \"radius\": 0.1, \"half_length\": 0.2,"
                           " \"position\": [0.5, 0.4, 0.3], \"rotation\": [0, 0, 1, 1],"
                           " \"velocity\": [1, 2, 3], \"angular_velocity\": [0, 0, 4],"
                           " \"friction\": 0.3, \"static_friction\": 0.6, \"margin\": 0.01},"
                           " {\"type\": \"mesh\", \"file\": \"cup.obj\", \"scale\": 2,"
                           " \"two_sided\": true}, {\"type\": \"box\"},"
                           " {\"type\": \"sdf\", \"file\": \"ramp.obj\", \"resolution\": 48,"
                           " \"angular_velocity\": [0, 0, 1], \"until\": 1.5}]",
                           s, &log),
                     PBFCL_OK);
    ck_assert_int_eq(s->collider_count, 4);
    const pbfcl_scene_collider *c = &s->colliders[0];
    ck_assert_int_eq(c->type, PBFCL_SHAPE_KIND_CAPSULE);
    ck_assert(c->radius == 0.1f && c->half_length == 0.2f && c->position[1] == 0.4f);
    ck_assert(c->rotation[2] == 1.0f && c->rotation[3] == 1.0f && c->velocity[2] == 3.0f);
    ck_assert(c->angular_velocity[2] == 4.0f && c->friction == 0.3f);
    ck_assert(c->static_friction == 0.6f && c->margin == 0.01f && c->file[0] == '\0');
    c = &s->colliders[1];
    ck_assert_int_eq(c->type, PBFCL_SHAPE_KIND_MESH);
    ck_assert_str_eq(c->file, "/scenes/cup.obj"); /* beside the scene file */
    ck_assert(c->scale == 2.0f && c->two_sided == 1);
    c = &s->colliders[2]; /* what is left out is zero: the shape's checks refuse a zero size */
    ck_assert(c->type == PBFCL_SHAPE_KIND_BOX && c->half_extents[0] == 0.0f);
    ck_assert(c->until == 0.0f && c->resolution == 0);
    c = &s->colliders[3];
    ck_assert_int_eq(c->type, PBFCL_SHAPE_KIND_SDF);
    ck_assert_str_eq(c->file, "/scenes/ramp.obj");
    ck_assert(c->resolution == 48 && c->until == 1.5f && c->angular_velocity[2] == 1.0f);
    free(s);
}
END_TEST

START_TEST(test_scene_colliders_refused)
{
    pbfcl_scene *s = malloc(sizeof *s);
    const char *log;
    const struct {
        const char *json, *says;
    } bad[] = {
        {"[{\"type\": \"cone\"}]", "colliders[0].type"},
        {"[{\"radius\": 1}]", "colliders[0]"},
        {"[{\"type\": \"box\"}, {\"type\": \"mesh\"}]", "colliders[1]: a mesh collider needs"},
        {"[{\"type\": \"sphere\", \"colour\": 1}]", "colour"},
        {"[{\"type\": \"sphere\", \"rotation\": [0, 0, 1]}]", "colliders[0].rotation"},
        {"[{\"type\": \"mesh\", \"file\": \"a.obj\", \"two_sided\": 1}]", "colliders[0].two_sided"},
        {"{\"type\": \"sphere\"}", "an array of shapes"},
        {"[{\"type\": \"sdf\"}]", "colliders[0]: an sdf collider needs"},
        {"[{\"type\": \"sdf\", \"file\": \"a.obj\", \"resolution\": 1}]",
         "colliders[0].resolution: an sdf collider's resolution is 2 to 128 cells, got 1"},
        {"[{\"type\": \"sdf\", \"file\": \"a.obj\", \"resolution\": 2.5}]",
         "colliders[0].resolution"},
        {"[{\"type\": \"box\", \"resolution\": 8}]", "only an sdf collider has a resolution"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_int_eq(parse(bad[k].json, s, &log), PBFCL_ERR_BAD_ARGUMENT);
        ck_assert_contains(log, bad[k].says);
    }
    char many[4096] = "[";
    for (int i = 0; i <= PBFCL_MAX_SCENE_COLLIDERS; i++)
        strcat(many, i ? ", {\"type\": \"sphere\"}" : "{\"type\": \"sphere\"}");
    strcat(many, "]");
    ck_assert_int_eq(parse(many, s, &log), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_contains(log, "at most 16 shapes");
    free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scene_colliders");
    TCase *tc = tcase_create("scene_colliders");
    tcase_add_test(tc, test_scene_colliders_read);
    tcase_add_test(tc, test_scene_colliders_refused);
    suite_add_tcase(s, tc);
    return test_run_suite(s, false);
}
