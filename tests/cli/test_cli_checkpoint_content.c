/* Bad input: a checkpoint whose checksum was recomputed after its content was damaged, and
 * a huge file given to --resume. `pbfcl run --resume` refuses each with exit 2 and a message
 * that names the section and the field (and the index), never a crash, a wrap or a silent
 * run; a file of another kind is refused by its first 8 bytes, before the rest is read. */
#include "checkpoint.h"
#include "cli_util.h"
#include "scene/scene.h"

#include <stddef.h>
#include <stdint.h>

/* The offset and size of section name in checkpoint data (format in host/app/checkpoint.h). */
static size_t find_section(const char *data, size_t len, const char *name, size_t *bytes)
{
    size_t at = 8 + 4 + 16 + 8 + 8 + 8 + 64, want = strlen(name);
    uint32_t u32;
    uint64_t u64;
    memcpy(&u32, data + at, 4);
    at += 4 + u32;
    while (at + 12 <= len) {
        memcpy(&u32, data + at, 4);
        memcpy(&u64, data + at + 4 + u32, 8);
        size_t payload = at + 4 + u32 + 8;
        if (u32 == want && !memcmp(data + at + 4, name, want)) {
            *bytes = (size_t)u64;
            return payload;
        }
        at = payload + (size_t)u64;
    }
    ck_abort_msg("no section '%s'", name);
    return 0;
}

/* Gives data (len bytes) its checksum again: FNV-1a of all but the last 8 bytes. */
static void reseal(char *data, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len - 8; i++) {
        h ^= (unsigned char)data[i];
        h *= 1099511628211ull;
    }
    for (int k = 0; k < 8; k++)
        data[len - 8 + k] = (char)(h >> (8 * k));
}

/* One damage: in section, at byte offset (from the section's start, or from its end if
 * negative), write size bytes of value (a copy of the section's first 4 bytes if copy_first);
 * the error must contain expect. */
typedef struct damage {
    const char *section;
    long offset;
    int size;
    uint32_t value;
    bool copy_first;
    const char *expect;
} damage;

static const uint32_t huge_float = 0x7149f2ca; /* 1e30f */

/* On a checkpoint of dam-break-bodies (fluid first, then the bodies' particles). */
static const damage body_damages[] = {
    /* the reproduction: an out-of-bounds write in shape_match_slots before */
    {"ids", 0, 4, 0x7fffffffu, false,
     "section 'ids', id[0] is 2147483647, not below the particle "
     "count"},
    {"ids", 4, 4, 0, true, "section 'ids', id[1] is"}, /* a duplicate: a particle vanished */
    {"particle_phases", 0, 4, 99, false, "section 'particle_phases', phase[0] is 99"},
    /* a fluid particle said to be of body 0, which does not list it */
    {"particle_phases", 0, 4, 1, false, "particle 0's phase in 'particle_phases' is 1"},
    {"body_ranges", 4, 4, 1000000, false,
     "section 'body_ranges', range[0] is entries 0 to 1000000"},
    {"positions", 0, 4, huge_float, false,
     "section 'positions', position[0] x is 1e+30 m, outside "
     "the domain"},
    {"velocities", 4, 4, 0x7fc00000u, false, "section 'velocities', velocity[0] y is nan"},
    {"body_stiffness", 0, 4, 0x40000000u, false, "section 'body_stiffness', stiffness[0] is 2"},
    /* emitted ids would wrap */
    {"next_frame_id", 0, 4, 0xffffffffu, false, "section 'next_frame_id' is 4294967295"},
    {"frame_ids", 4, 4, 0, true, "section 'frame_ids' gives id"},
    /* the header's parameters and count are the state's */
    {"params", offsetof(pbfcl_scene_params, gravity), 4, 0x41200000u, false,
     "its header's parameters differ from section 'params'"},
    {"count", 0, 4, 5, false, "its header says 2952 particles and section 'count' 5"},
};

/* Writes DIR/bad.ckp: good with damage d, its checksum recomputed. */
static void write_damaged(const char *good, const damage *d, const char *bad)
{
    size_t len, bytes;
    char *data = cli_slurp(good, &len);
    size_t at = find_section(data, len, d->section, &bytes);
    size_t where = at + (size_t)(d->offset >= 0 ? d->offset : (long)bytes + d->offset);
    ck_assert_uint_le(where + (size_t)d->size, at + bytes);
    uint32_t v = d->value;
    if (d->copy_first)
        memcpy(&v, data + at, 4);
    memcpy(data + where, &v, (size_t)d->size); /* little-endian, as the file */
    reseal(data, len);
    cli_spit(bad, data, len);
    free(data);
}

/* Resumes bad and expects exit 2 with expect in the message. */
static void expect_refused(const char *bad, const char *expect)
{
    char args[512];
    cli_result r;
    snprintf(args, sizeof args, "run --resume '%s' --steps 3 --quiet", bad);
    cli_run(&r, args);
    ck_assert_msg(r.code == 2, "exit %d, expected 2 (refused)", r.code);
    ck_assert_contains(r.err, expect);
    ck_assert_contains(r.err, "damaged");
}

START_TEST(damaged_content_refused)
{
    const damage *d = &body_damages[_i];
    if (!cli_have_device())
        return;
    char good[128], bad[128], args[512];
    snprintf(good, sizeof good, "%s/bodies.ckp", cli_dir);
    snprintf(bad, sizeof bad, "%s/bad.ckp", cli_dir);
    cli_result r;
    snprintf(args, sizeof args,
             "run --scene dam-break-bodies --particles 3000 --steps 1 --checkpoint '%s' --quiet",
             good);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    write_damaged(good, d, bad);
    expect_refused(bad, d->expect);
    if (_i == 0) { /* the undamaged file resumes */
        snprintf(args, sizeof args, "run --resume '%s' --steps 2 --quiet", good);
        cli_run(&r, args);
        ck_assert_int_eq(r.code, 0);
    }
}
END_TEST

/* The header's step and time: a negative step or a NaN time is refused before the rest. */
START_TEST(damaged_header_refused)
{
    if (!cli_have_device())
        return;
    char good[128], bad[128], args[512];
    snprintf(good, sizeof good, "%s/small.ckp", cli_dir);
    snprintf(bad, sizeof bad, "%s/bad.ckp", cli_dir);
    cli_result r;
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --checkpoint '%s' --quiet", good);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    const size_t step_at = 8 + 4 + 16 + 8, time_at = step_at + 8; /* checkpoint.h's header */
    const struct {
        size_t at;
        uint64_t value;
        const char *expect;
    } cases[] = {{step_at, (uint64_t)-5, "has step -5 at time"},
                 {time_at, 0x7ff8000000000000ull, "at time nan s in its header"}};
    for (int k = 0; k < 2; k++) {
        size_t len;
        char *data = cli_slurp(good, &len);
        memcpy(data + cases[k].at, &cases[k].value, 8);
        reseal(data, len);
        cli_spit(bad, data, len);
        free(data);
        snprintf(args, sizeof args, "run --resume '%s' --steps 3", bad);
        cli_run(&r, args);
        ck_assert_int_eq(r.code, 2);
        ck_assert_contains(r.err, cases[k].expect);
    }
}
END_TEST

/* A boolean of the saved scene that is neither 0 nor 1 (undefined behaviour when read as
 * one, at host/core/scene/scene_obstacles.c's check of the keys before), and a shape kind past the
 * enum, on a checkpoint of a scene with a keyed, repeating obstacle. */
START_TEST(damaged_scene_refused)
{
    if (!cli_have_device())
        return;
    char scene[128], good[128], bad[128], args[512];
    snprintf(scene, sizeof scene, "%s/keyed.json", cli_dir);
    snprintf(good, sizeof good, "%s/keyed.ckp", cli_dir);
    snprintf(bad, sizeof bad, "%s/bad.ckp", cli_dir);
    cli_write_file(scene, "{\"name\": \"keyed\", \"particle_radius\": 0.02,\n"
                          " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.4, 0.4, 0.2]},\n"
                          " \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.2, 0.15, 0.2]}],\n"
                          " \"obstacles\": [{\"sphere\": {\"center\": [0.3, 0.3, 0.1], \"radius\": "
                          "0.05},\n"
                          "  \"path\": {\"keys\": [{\"time\": 0.05, \"position\": [0, -0.05, 0]},\n"
                          "   {\"time\": 0.1}], \"repeat\": true}}]}\n");
    cli_result r;
    snprintf(args, sizeof args, "run --scene '%s' --steps 1 --checkpoint '%s' --quiet", scene,
             good);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    damage d = {"scene", (long)offsetof(pbfcl_scene, obstacle_motion[0].repeat),
                1,       2,
                false,   "section 'scene', obstacle_motion.repeat[0] is 2; a boolean is 0 or 1"};
    write_damaged(good, &d, bad);
    expect_refused(bad, d.expect);
    damage k = {"scene", (long)offsetof(pbfcl_scene, obstacles[0].kind), 4, 7,
                false,   "section 'scene', obstacles[0] kind is 7"};
    write_damaged(good, &k, bad);
    expect_refused(bad, k.expect);
}
END_TEST

/* A 40 GB sparse file is refused at once by its first bytes: of another kind ("not a pbfcl
 * checkpoint"), or a checkpoint's magic and format followed by zeros (a particle count the
 * size cannot hold). The run is limited to 4 GB of address space: a reader that allocated
 * the file's size or read it whole would fail with "out of memory" instead. (Not under
 * ASan, which reserves terabytes of address space for its shadow memory.) A FIFO is refused
 * without being opened (the open would wait for a writer). */
#if defined(__SANITIZE_ADDRESS__)
static const char *const address_limit = "";
#else
static const char *const address_limit = "ulimit -v 4194304;";
#endif

START_TEST(huge_file_refused_by_its_start)
{
    char path[128], cmd[512];
    snprintf(path, sizeof path, "%s/huge.ckp", cli_dir);
    char ours[12] = "PBFCLCKP"; /* the magic and this build's format, little-endian */
    uint32_t format = PBFCL_CHECKPOINT_FORMAT;
    memcpy(ours + 8, &format, 4);
    const char *starts[2] = {"NOTACKPT", ours};
    const char *expect[2] = {"is not a pbfcl checkpoint (no PBFCLCKP header)",
                             "which a file of 42949672960 bytes cannot"};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fwrite(starts[k], 1, k ? 12 : 8, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "truncate -s 40G '%s'", path);
        ck_assert_int_eq(system(cmd), 0);
        char args[256];
        cli_result r;
        snprintf(args, sizeof args, "run --resume '%s' --steps 3", path);
        cli_run_sh(&r, address_limit, args);
        ck_assert_int_eq(r.code, 2);
        ck_assert_contains(r.err, expect[k]);
        remove(path);
    }
    /* a FIFO is refused without being opened, which would wait for a writer */
    snprintf(cmd, sizeof cmd, "mkfifo '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
    char args[256];
    cli_result r;
    snprintf(args, sizeof args, "run --resume '%s' --steps 3", path);
    cli_run_sh(&r, "timeout 60", args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_contains(r.err, "cannot read checkpoint");
    ck_assert_contains(r.err, "not a regular file");
    remove(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_checkpoint_content");
    TCase *t = tcase_create("content");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, cli_setup, cli_teardown);
    tcase_add_loop_test(t, damaged_content_refused, 0,
                        (int)(sizeof body_damages / sizeof body_damages[0]));
    tcase_add_test(t, damaged_header_refused);
    tcase_add_test(t, damaged_scene_refused);
    tcase_add_test(t, huge_file_refused_by_its_start);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
