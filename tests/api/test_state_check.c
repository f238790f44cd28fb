/* The checks of a saved solver state (host/core/sim/state_check.c) through the public API: a
 * state damaged in one field is refused by pbfcl_solver_load_state with
 * PBFCL_ERR_BAD_ARGUMENT and a message naming the section, the field and the index, before
 * any of it is used; the undamaged state loads; and the checks read every section a state
 * has, for both methods, with bodies, static particles and a keyed obstacle. */
#include "memory_state.h"
#include "scene/scene.h"
#include "sim/sim.h"
#include "sim/sim_state.h"
#include "sim/state_check.h"
#include "test_files.h"
#include "test_util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a saved state's sections (memory_state.h) ------------------------------------------ */

static int find_memory(const memory_state *m, const char *name)
{
    int k = memory_state_find(m, name);
    if (k < 0)
        ck_abort_msg("the state has no section '%s'", name);
    return k;
}

static char last_error[2048];

static void capture_log(pbfcl_log_level level, const char *message, void *user)
{
    (void)user;
    if (level == PBFCL_LOG_ERROR)
        snprintf(last_error, sizeof last_error, "%s", message);
}

/* ---- states of a scene setup --------------------------------------------------------------- */

/* Fluid, a box body and a sphere on a keyed, repeating path (static particles), PBF. */
static const char *const bodies_scene =
    "{\"name\": \"state-check\", \"particle_radius\": 0.02,\n"
    " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.4, 0.4, 0.2]},\n"
    " \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.4, 0.1, 0.2]}],\n"
    " \"bodies\": [{\"box\": {\"min\": [0.05, 0.2, 0.05], \"max\": [0.15, 0.3, 0.15]}, "
    "\"density\": 500}],\n"
    " \"obstacles\": [{\"sphere\": {\"center\": [0.3, 0.3, 0.1], \"radius\": 0.05},\n"
    "  \"path\": {\"keys\": [{\"time\": 0.05, \"position\": [0, -0.05, 0]}, {\"time\": 0.1}],\n"
    "   \"repeat\": true}}]}\n";

/* Plain fluid, SPH. */
static const char *const sph_scene =
    "{\"name\": \"state-check-sph\", \"particle_radius\": 0.02, \"solver\": {\"method\": "
    "\"sph\"},\n"
    " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.4, 0.4, 0.2]},\n"
    " \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.2, 0.2, 0.2]}]}\n";

typedef struct scene_run {
    pbfcl_context *ctx;
    pbfcl_solver_desc desc;
    size_t n;
    memory_state m;
} scene_run;

/* Runs text's scene for 2 frames on cl and saves its state into r->m. */
static void run_and_save(pbfcl_cl *cl, const char *text, scene_run *r)
{
    memset(r, 0, sizeof *r);
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.cl_context = cl->context, cd.cl_device = cl->dev.device, cd.cl_queue = cl->queue;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &cd, &r->ctx), PBFCL_OK);
    pbfcl_scene_setup *setup = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_load(test_temp_write("scene.json", text), &setup), PBFCL_OK);
    test_temp_remove();
    float *pos = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &pos, &r->n), PBFCL_OK);
    pbfcl_solver_desc_defaults(&r->desc);
    r->desc.capacity = r->n;
    ck_assert_int_eq(pbfcl_scene_setup_get_params(setup, &r->desc.scene, &r->desc.solver),
                     PBFCL_OK);
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(r->ctx, &r->desc, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, r->n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(setup, s), PBFCL_OK);
    for (int f = 0; f < 2; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_save_state(s, memory_state_put, &r->m), PBFCL_OK);
    pbfcl_free(pos);
    pbfcl_scene_setup_destroy(setup);
}

/* Loads r's state into a new solver of r's description. */
static pbfcl_status load_into_new(scene_run *r)
{
    pbfcl_solver *b = NULL;
    ck_assert_int_eq(pbfcl_solver_create(r->ctx, &r->desc, &b), PBFCL_OK);
    last_error[0] = '\0';
    pbfcl_status st = pbfcl_solver_load_state(b, memory_state_get, &r->m);
    ck_assert_int_eq(pbfcl_solver_destroy(b), PBFCL_OK);
    return st;
}

static void close_run(scene_run *r)
{
    memory_state_free(&r->m);
    ck_assert_int_eq(pbfcl_context_destroy(r->ctx), PBFCL_OK);
}

/* ---- damaged states are refused, naming the field ------------------------------------------ */

/* One damage: in section, at byte offset, write size bytes of value (a copy of the
 * section's first 4 bytes if copy_first); the message must contain expect. */
typedef struct damage {
    const char *section;
    size_t offset;
    int size;
    uint64_t value;
    bool copy_first;
    const char *expect;
} damage;

static const damage damages[] = {
    {"ids", 0, 4, 0x7fffffffu, false, "section 'ids', id[0] is 2147483647, not below"},
    {"ids", 4, 4, 0, true, "section 'ids', id[1] is"},
    {"particle_phases", 0, 4, 7, false, "section 'particle_phases', phase[0] is 7"},
    {"bodies", 0, 8, 1ull << 40, false, "section 'bodies', bodies is 1099511627776"},
    {"body_ranges", 4, 4, 100000, false, "section 'body_ranges', range[0] is entries 0 to 100000"},
    {"body_entry_ids", 0, 4, 0x7fffffffu, false, "section 'body_entry_ids', id[0] is 2147483647"},
    {"positions", 0, 4, 0x7149f2cau, false, "section 'positions', position[0] x is 1e+30 m"},
    {"predicted_positions", 8, 4, 0xff800000u, false, "position[0] z is -inf"},
    {"host", offsetof(sim_host_state, substeps), 4, 0, false, "section 'host', substeps is 0"},
    {"host", offsetof(sim_host_state, params.scorr_n), 4, 0x80000000u, false,
     "section 'host', scorr_n is 2147483648; give 1 to 16"},
    /* a kernel radius other than the parameters' (the grid is built for theirs) */
    {"host", offsetof(sim_host_state, params.h), 4, 0x3f800000u, false,
     "section 'host', solver constant[10] has bits 3f800000 but the parameters give"},
    {"host", offsetof(sim_host_state, statics), 8, 1, false, "section 'host', statics is 1 but"},
    {"paths", 0, 8, 1ull << 33, false, "section 'paths', paths, entries and keys are 8589934592"},
    {"paths", 24, 8, 0x7ff8000000000000ull, false, "section 'paths', time is nan"},
    {"path_entry_ids", 0, 4, 0x7fffffffu, false, "section 'path_entry_ids', id[0] is 2147483647"},
    {"path_offsets", 12, 4, 0x42c60000u, false, "section 'path_offsets', path[0] is 99"},
    {"path_keys", 0, 4, 0x7fc00000u, false, "section 'path_keys', key[0] x is nan"},
    {"body_rest_offsets", 4, 4, 0x7149f2cau, false,
     "section 'body_rest_offsets', offset[0] y is "
     "1e+30 m, farther than"},
};
#define DAMAGES ((int)(sizeof damages / sizeof damages[0]))

static void check_damaged_refused(pbfcl_cl *cl)
{
    scene_run r;
    run_and_save(cl, bodies_scene, &r);
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_ERROR);
    ck_assert_int_eq(load_into_new(&r), PBFCL_OK);
    for (int d = 0; d < DAMAGES; d++) {
        const damage *x = &damages[d];
        int k = find_memory(&r.m, x->section);
        ck_assert_uint_le(x->offset + (size_t)x->size, r.m.bytes[k]);
        unsigned char *bytes = r.m.data[k], saved[8];
        memcpy(saved, bytes + x->offset, (size_t)x->size);
        uint64_t v = x->value;
        if (x->copy_first)
            memcpy(&v, bytes, 4);
        memcpy(bytes + x->offset, &v, (size_t)x->size); /* little-endian hosts */
        pbfcl_status st = load_into_new(&r);
        memcpy(bytes + x->offset, saved, (size_t)x->size);
        ck_assert_msg(st == PBFCL_ERR_BAD_ARGUMENT, "damage %d (%s): status %d", d, x->expect,
                      (int)st);
        ck_assert_msg(strstr(last_error, x->expect) && strstr(last_error, "damaged"),
                      "damage %d: expected '%s', got '%s'", d, x->expect, last_error);
    }
    /* a fluid particle's inverse mass other than 1 (the slot of one in the solver's order) */
    const unsigned *phase = r.m.data[find_memory(&r.m, "phases")];
    float *w = r.m.data[find_memory(&r.m, "inverse_masses")];
    size_t fluid = 0;
    while (fluid < r.n && phase[fluid] != PBFCL_SIM_PHASE_FLUID)
        fluid++;
    ck_assert_uint_lt(fluid, r.n);
    w[fluid] = 0.5f;
    ck_assert_int_eq(load_into_new(&r), PBFCL_ERR_BAD_ARGUMENT);
    char expect[128];
    snprintf(expect, sizeof expect,
             "section 'inverse_masses', inverse mass[%zu] is 0.5 but the particle is fluid "
             "(inverse mass 1)",
             fluid);
    ck_assert_msg(strstr(last_error, expect), "expected '%s', got '%s'", expect, last_error);
    w[fluid] = 1.0f;
    ck_assert_int_eq(load_into_new(&r), PBFCL_OK); /* every damage undone */
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    close_run(&r);
}

START_TEST(load_state_refuses_damage)
{
    test_each_device(check_damaged_refused);
}
END_TEST

/* A damaged count (a billion distance constraints) is refused before memory for the sections
 * it sizes is taken: with most_bytes the state's whole size, a "distances" count of 2^27 (a
 * "distance_pairs" section of 1 GiB) names the section and the bound; the count put back, the
 * same limits pass. Without the bound the checker would allocate the GiB and fail later on
 * the section's size, with no word of damage. */
static void check_counts_bounded(pbfcl_cl *cl)
{
    scene_run r;
    run_and_save(cl, bodies_scene, &r);
    size_t total = 0;
    for (int k = 0; k < r.m.count; k++)
        total += r.m.bytes[k];
    pbfcl_state_limits lim = {r.n, r.desc.solver.method, {0}, {0}, NULL, total, "the whole state"};
    memcpy(lim.box_min, r.desc.scene.domain_min, sizeof lim.box_min);
    memcpy(lim.box_max, r.desc.scene.domain_max, sizeof lim.box_max);
    ck_assert_int_eq(pbfcl_state_check(memory_state_get, &r.m, &lim), PBFCL_OK);
    int k = find_memory(&r.m, "distances");
    ck_assert_uint_eq(r.m.bytes[k], 8);
    uint64_t saved, damaged = 1ull << 27;
    memcpy(&saved, r.m.data[k], 8);
    memcpy(r.m.data[k], &damaged, 8);
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_ERROR);
    last_error[0] = '\0';
    ck_assert_int_eq(pbfcl_state_check(memory_state_get, &r.m, &lim), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_msg(strstr(last_error, "damaged: section 'distance_pairs', size would be "
                                     "1073741824 bytes") &&
                      strstr(last_error, "more than the whole state"),
                  "got '%s'", last_error);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    memcpy(r.m.data[k], &saved, 8);
    ck_assert_int_eq(pbfcl_state_check(memory_state_get, &r.m, &lim), PBFCL_OK);
    close_run(&r);
}

START_TEST(damaged_count_refused_before_allocation)
{
    test_each_device(check_counts_bounded);
}
END_TEST

/* ---- a scene setup's saved scene ----------------------------------------------------------- */

/* Saves the setup of scene (a file or a built-in name), damages its "scene" section by each of
 * damages in turn and checks that pbfcl_scene_setup_load_state refuses it naming the field;
 * the section put back loads. */
static void check_scene_damages(const char *scene, const damage *damages, size_t count)
{
    pbfcl_scene_setup *setup = NULL, *copy = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_load(scene, &setup), PBFCL_OK);
    memory_state m;
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(pbfcl_scene_setup_save_state(setup, memory_state_put, &m), PBFCL_OK);
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_ERROR);
    int k = find_memory(&m, "scene");
    unsigned char *bytes = m.data[k];
    for (size_t d = 0; d < count; d++) {
        const damage *x = &damages[d];
        unsigned char saved[8];
        memcpy(saved, bytes + x->offset, (size_t)x->size);
        memcpy(bytes + x->offset, &x->value, (size_t)x->size); /* little-endian hosts */
        last_error[0] = '\0';
        pbfcl_status st = pbfcl_scene_setup_load_state(memory_state_get, &m, &copy);
        memcpy(bytes + x->offset, saved, (size_t)x->size);
        ck_assert_msg(st == PBFCL_ERR_BAD_ARGUMENT && strstr(last_error, x->expect),
                      "%s, damage %zu: status %d, expected '%s', got '%s'", scene, d, (int)st,
                      x->expect, last_error);
    }
    ck_assert_int_eq(pbfcl_scene_setup_load_state(memory_state_get, &m, &copy), PBFCL_OK);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    pbfcl_scene_setup_destroy(copy);
    pbfcl_scene_setup_destroy(setup);
    memory_state_free(&m);
}

/* pbfcl_scene_setup_load_state checks the saved scene's bytes before it reads them as a
 * scene: a boolean of 2 (undefined behaviour in the keys' check before; a cloth's, found by
 * the checkpoint fuzzer, in its messages' names), a shape kind past the enum, what holds a
 * cloth's pins past its enum, a count past its array, a triangle naming a vertex that does
 * not exist. No device is needed. */
START_TEST(scene_setup_load_state_refuses_damage)
{
    const damage scene_damages[] = {
        {"scene", offsetof(pbfcl_scene, obstacle_motion[0].repeat), 1, 2, false,
         "section 'scene', obstacle_motion.repeat[0] is 2; a boolean is 0 or 1"},
        {"scene", offsetof(pbfcl_scene, obstacles[0].kind), 4, 9, false,
         "section 'scene', obstacles[0] kind is 9"},
        {"scene", offsetof(pbfcl_scene, fluid_count), 4, 1000, false,
         "section 'scene', fluid_count is 1000; give 0 to 32"},
        {"scene", offsetof(pbfcl_scene, meshes.triangle_count), 4, 1, false,
         "section 'scene', meshes.triangles[0] names vertex 0; a triangle's are below"},
    };
    check_scene_damages(test_temp_write("scene.json", bodies_scene), scene_damages,
                        sizeof scene_damages / sizeof scene_damages[0]);
    test_temp_remove();
    const damage cloth_damages[] = {
        {"scene", offsetof(pbfcl_scene, cloth_count), 4, 17, false,
         "section 'scene', cloth_count is 17; give 0 to 16"},
        {"scene", offsetof(pbfcl_scene, cloths[0].rope), 1, 255, false,
         "section 'scene', cloths.rope[0] is 255; a boolean is 0 or 1"},
        {"scene", offsetof(pbfcl_scene, cloths[0].inflatable), 1, 2, false,
         "section 'scene', cloths.inflatable[0] is 2"},
        {"scene", offsetof(pbfcl_scene, cloths[0].tethers), 1, 3, false,
         "section 'scene', cloths.tethers[0] is 3"},
        {"scene", offsetof(pbfcl_scene, cloths[0].self_collide), 1, 2, false,
         "section 'scene', cloths.self_collide[0] is 2"},
        {"scene", offsetof(pbfcl_scene, cloths[0].attach), 4, 9, false,
         "section 'scene', cloths.attach[0] is 9; what holds the pins is 0 to 3"},
    };
    check_scene_damages("cloth-drape", cloth_damages,
                        sizeof cloth_damages / sizeof cloth_damages[0]);
}
END_TEST

/* ---- the checks cover every section ------------------------------------------------------- */

/* pbfcl_state_check reads every section that a state of text's scene has but the two
 * pbfcl_solver_load_state reads itself ("count", "params"): a section added to one of the
 * state tables (sim.c, shape_match.c, kinematic.c) without a check fails here. */
static void check_covers(pbfcl_cl *cl, const char *text)
{
    scene_run r;
    run_and_save(cl, text, &r);
    pbfcl_state_limits lim = {r.n, r.desc.solver.method, {0}, {0}, NULL, 0, NULL};
    memcpy(lim.box_min, r.desc.scene.domain_min, sizeof lim.box_min);
    memcpy(lim.box_max, r.desc.scene.domain_max, sizeof lim.box_max);
    ck_assert_int_eq(pbfcl_state_check(memory_state_get, &r.m, &lim), PBFCL_OK);
    for (int k = 0; k < r.m.count; k++)
        ck_assert_msg(r.m.asked[k] || !strcmp(r.m.name[k], "count") ||
                          !strcmp(r.m.name[k], "params"),
                      "section '%s' is not checked (host/core/sim/state_check.c)", r.m.name[k]);
    close_run(&r);
}

static void check_covers_pbf(pbfcl_cl *cl)
{
    check_covers(cl, bodies_scene);
}

static void check_covers_sph(pbfcl_cl *cl)
{
    check_covers(cl, sph_scene);
}

START_TEST(state_check_covers_every_section)
{
    test_each_device(check_covers_pbf);
    test_each_device(check_covers_sph);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("state_check");
    TCase *tc = tcase_create("state_check");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, load_state_refuses_damage);
    tcase_add_test(tc, damaged_count_refused_before_allocation);
    tcase_add_test(tc, scene_setup_load_state_refuses_damage);
    tcase_add_test(tc, state_check_covers_every_section);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
