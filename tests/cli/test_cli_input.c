/* Bad input to the pbfcl program (docs/RELIABILITY.md, the catalogue): each case ends at once
 * with a message naming what is wrong and how to fix it, and a non-zero exit; none needs an
 * OpenCL device (options that are accepted are told apart from refused ones by running them
 * against a device that does not exist: the error is then about the device). */
#include "cli_util.h"

#include <sys/types.h>

#ifdef PBFCL_HAVE_JSON
/* Writes text to cli_dir/name and returns the path (static buffer). */
static const char *scene_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", cli_dir, name);
    cli_write_file(path, text);
    return path;
}

#define BASE                                                                                       \
    "\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": 0.05, "                \
    "\"fluid\": [{\"min\": [0,0,0], \"max\": [0.5,0.5,0.5]}]"

#endif

/* Refused: exit 2 (or 1 for files), the message, and the run never started. */
static void assert_refused(const cli_result *r, const char *part)
{
    ck_assert_msg(r->code == 1 || r->code == 2, "expected exit 1 or 2, got %d", r->code);
    ck_assert_contains(r->err, part);
    ck_assert_msg(strstr(r->out, "pbfcl run: scene") == NULL, "the run started: %s", r->out);
}

/* Accepted by the option and scene checks: the failure is the missing device. */
static void assert_accepted(const cli_result *r)
{
    ck_assert_int_eq(r->code, 1);
    ck_assert_contains(r->err, "no-such-device");
}

#ifdef PBFCL_HAVE_JSON
/* Defect 6: a FIFO, a directory or a device as the scene file is refused at once (a FIFO
 * hung forever; `timeout` turns a hang into exit 124). */
START_TEST(scene_not_a_regular_file)
{
    char fifo[256], args[512];
    snprintf(fifo, sizeof fifo, "%s/pipe.json", cli_dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    cli_result r;
    snprintf(args, sizeof args, "run --scene '%s' --steps 1", fifo);
    cli_run_sh(&r, "timeout 300", args); /* a hang guard: the refusal comes at once */
    assert_refused(&r, "is a FIFO");
    ck_assert_contains(r.err, "give a JSON scene file");
    snprintf(args, sizeof args, "run --scene '%s/' --steps 1", cli_dir);
    cli_run(&r, args);
    assert_refused(&r, "is a directory");
    cli_run(&r, "run --scene /dev/zero --steps 1");
    assert_refused(&r, "is a character device");
}
END_TEST

/* Defect 8: the unclear messages, each now naming the problem. */
START_TEST(scene_messages_name_the_problem)
{
    char args[512];
    cli_result r;
    char deep[5000] = "{\"a\": ";
    for (int k = 0; k < 1100; k++)
        strcat(deep, "[");
    snprintf(args, sizeof args, "run --scene '%s'", scene_file("deep.json", deep));
    cli_run(&r, args);
    assert_refused(&r, "nested more than 1000 deep");
    snprintf(args, sizeof args, "run --scene '%s'",
             scene_file("empty-name.json", "{\"name\": \"\", " BASE "}"));
    cli_run(&r, args);
    assert_refused(&r, "got an empty string");
    snprintf(args, sizeof args, "run --scene '%s'",
             scene_file("ctrl.json", "{\"name\": \"a\\u001b[31mred\", " BASE "}"));
    cli_run(&r, args);
    assert_refused(&r, "control character");
    ck_assert_msg(strchr(r.err, 0x1b) == NULL, "the escape character was printed raw");
    snprintf(args, sizeof args, "run --scene '%s'",
             scene_file("utf8.json", "{\"name\": \"a\xff\xfe\", " BASE "}"));
    cli_run(&r, args);
    assert_refused(&r, "not valid UTF-8");
    cli_run(&r, "run --radius 1e-50");
    assert_refused(&r, "--radius: '1e-50' becomes 0 in single precision");
    cli_run(&r, "run --dt 1e-50");
    assert_refused(&r, "--dt: '1e-50' becomes 0 in single precision");
}
END_TEST

/* Defect 8: a domain too large for the solver's grid is refused once, before any device is
 * opened (the device named here does not exist, and is never reached). */
START_TEST(grid_too_large_before_device)
{
    char args[512];
    cli_result r;
    snprintf(args, sizeof args, "run --device no-such-device --scene '%s'",
             scene_file("huge.json",
                        "{\"domain\": {\"min\": [0,0,0], \"max\": [1000,1,1]}, "
                        "\"particle_radius\": 0.01, \"fluid\": [{\"min\": [0,0,0], \"max\": "
                        "[0.1,0.1,0.1]}]}"));
    cli_run(&r, args);
    assert_refused(&r, "Morton grid");
    ck_assert_int_eq(cli_count(r.err, "Morton grid"), 1);
    ck_assert_msg(strstr(r.err, "no-such-device") == NULL, "the device was opened first");
}
END_TEST

#endif

/* Defect 8: --particles beyond the solver's limit is refused at once (it took 12.7 s): with
 * the command line, before a device is looked up (no time is measured: a loaded machine may
 * take seconds to start any program). */
START_TEST(too_many_particles_refused_fast)
{
    cli_result r;
    cli_run(&r, "run --particles 1000000000 --device no-such-device");
    assert_refused(&r, "--particles");
    ck_assert_contains(r.err, "67108863");
    ck_assert_msg(strstr(r.err, "no-such-device") == NULL, "the device was looked up first");
}
END_TEST

/* An option taken as the value of the option before it is refused naming both: `--stats
 * --force` wrote the statistics to a file named --force and forced nothing. Each parser of
 * separate values refuses it (the run's own options, the scene's and the solver's, bench's);
 * a value written with = is taken as it is. */
START_TEST(option_as_value_refused)
{
    static const char *const cases[][2] = {
        {"run --stats --force --steps 1", "--stats needs a value but is followed by the option "
                                          "--force; give --stats its value"},
        {"run --scene --particles 500", "--scene needs a value but is followed by the option "
                                        "--particles"},
        {"run --dt --substeps 3", "--dt needs a value but is followed by the option --substeps"},
        {"bench --steps --warmup 1", "--steps needs a value but is followed by the option "
                                     "--warmup"},
    };
    char args[256];
    cli_result r;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(args, sizeof args, "%s --device no-such-device", cases[k][0]);
        cli_run(&r, args);
        ck_assert_int_eq(r.code, 2);
        assert_refused(&r, cases[k][1]);
    }
    cli_run(&r, "run --scene=--no-such-scene --steps 1 --device no-such-device");
    ck_assert_contains(r.err, "'--no-such-scene'");
    ck_assert_msg(strstr(r.err, "followed by the option") == NULL, "--scene=VALUE was refused");
    cli_run(&r, "run --gravity 0,-9.81,0 --dt 0.01 --device no-such-device");
    assert_accepted(&r); /* a value starting with one - is a value */
}
END_TEST

/* The sph method's bad input, refused before a device is opened, each naming the setting and
 * a value that works: an unknown --solver, a speed of sound too low for the scene, a frame
 * the CFL condition cannot cut into sph_max_steps steps. */
START_TEST(sph_bad_input_refused)
{
    cli_result r;
    cli_run(&r, "run --solver wcsph --device no-such-device");
    assert_refused(&r, "--solver: 'wcsph' is not valid; expected pbf or sph");
    cli_run(&r, "run --solver sph --speed-of-sound 5 --device no-such-device");
    assert_refused(&r, "solver.speed_of_sound 5 m/s is below");
    ck_assert_contains(r.err, "use solver.speed_of_sound >= 44.3");
    cli_run(&r, "run --solver sph --dt 1 --device no-such-device");
    assert_refused(&r, "solver.dt 1 s needs");
    ck_assert_contains(r.err, "use solver.dt <=");
    ck_assert_msg(strstr(r.err, "no-such-device") == NULL, "the device was opened first");
    cli_run(&r, "params");
    ck_assert_contains(r.out, "| `method` | `--solver` | name | pbf |");
}
END_TEST

#ifdef PBFCL_HAVE_JSON
/* Defect 4: a domain whose extent overflows float is refused with a message (it reached a
 * float to long long conversion out of range: undefined behaviour, see the ASan/UBSan CI). */
START_TEST(overflowing_domain_refused)
{
    char args[512];
    cli_result r;
    snprintf(args, sizeof args, "run --scene '%s'",
             scene_file("overflow.json",
                        "{\"domain\":{\"min\":[-3e38,-3e38,-3e38],\"max\":[3e38,3e38,3e38]},"
                        "\"particle_radius\":1e18,\"fluid\":[{\"min\":[1e20,1e20,1e20],\"max\":"
                        "[2e20,2e20,2e20]}]}"));
    cli_run(&r, args);
    assert_refused(&r, "wider than single precision holds");
    ck_assert_msg(strstr(r.err, "runtime error") == NULL, "undefined behaviour: %s", r.err);
    snprintf(args, sizeof args, "run --scene '%s'",
             scene_file("spacings.json",
                        "{\"domain\":{\"min\":[-1e37,0,0],\"max\":[1e37,1,1]},"
                        "\"particle_radius\":1e-3,\"fluid\":[{\"min\":[0,0,0],\"max\":"
                        "[0.1,0.1,0.1]}]}"));
    cli_run(&r, args);
    assert_refused(&r, "particle spacings");
    ck_assert_msg(strstr(r.err, "runtime error") == NULL, "undefined behaviour: %s", r.err);
}
END_TEST

/* Defect 5: --particles replaces the file's particle_radius, so the file's own value is not
 * checked (it was, and 1e-6 was refused). */
START_TEST(particles_replace_file_radius)
{
    char args[512];
    cli_result r;
    snprintf(args, sizeof args, "run --device no-such-device --particles 1000 --scene '%s'",
             scene_file("tiny.json", "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, "
                                     "\"particle_radius\": 1e-6, \"fluid\": [{\"min\": [0,0,0], "
                                     "\"max\": [0.5,0.5,0.5]}]}"));
    cli_run(&r, args);
    assert_accepted(&r);
    snprintf(args, sizeof args, "run --device no-such-device --scene '%s/tiny.json'", cli_dir);
    cli_run(&r, args); /* without --particles the radius is the file's, and far too small */
    assert_refused(&r, "particle_radius");
}
END_TEST

#endif

/* Defect 9: one range per setting: the command line and a scene file accept the same
 * values (gravity, max_speed, scorr_dq differed). */
START_TEST(cli_and_json_share_ranges)
{
    static const struct {
        const char *option, *json;
        bool ok;
    } cases[] = {
        {"--gravity 0,-2e4,0", "\"gravity\": [0,-2e4,0]", false},
        {"--gravity 0,-1e4,0", "\"gravity\": [0,-1e4,0]", true},
        {"--max-speed 0", "\"solver\": {\"max_speed\": 0}", true},
        {"--max-speed 2e9", "\"solver\": {\"max_speed\": 2e9}", false},
        {"--scorr-dq 0.995", "\"solver\": {\"scorr_dq\": 0.995}", true},
        {"--scorr-dq 1", "\"solver\": {\"scorr_dq\": 1}", false},
        {"--rest-density 2e6", "\"rest_density\": 2e6", false},
        {"--radius 2000", "\"particle_radius\": 2000", false},
        /* the former spellings of pbfcl 0.2 (PBFCL_SOLVER_PARAM_FORMER_LIST) */
        {"--diffuse-spray-neighbors 5", "\"solver\": {\"diffuse_spray_neighbors\": 5}", true},
        {"--diffuse-bubble-neighbors=30", "\"solver\": {\"diffuse_bubble_neighbors\": 30}", true},
        {"--diffuse-bubble-neighbours 30", "\"solver\": {\"diffuse_bubble_neighbours\": 30}", true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char args[1024];
        cli_result r;
        snprintf(args, sizeof args, "run --device no-such-device %s", cases[k].option);
        cli_run(&r, args);
        if (cases[k].ok)
            assert_accepted(&r);
        else
            ck_assert_int_eq(r.code, 2);
#ifdef PBFCL_HAVE_JSON
        char json[512];
        bool radius = strstr(cases[k].json, "particle_radius") != NULL;
        snprintf(json, sizeof json,
                 "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, %s\"fluid\": [{\"min\": "
                 "[0,0,0], \"max\": [0.5,0.5,0.5]}], %s}",
                 radius ? "" : "\"particle_radius\": 0.05, ", cases[k].json);
        snprintf(args, sizeof args, "run --device no-such-device --scene '%s'",
                 scene_file("range.json", json));
        cli_run(&r, args);
        if (cases[k].ok)
            assert_accepted(&r);
        else
            ck_assert_int_eq(r.code, 2);
#endif
    }
}
END_TEST

/* Defect 9: --name=value for every option of every command; devices takes --device; there
 * is --version. */
START_TEST(cli_conventions)
{
    cli_result r;
    static const char *const accepted[] = {
        "run --device=no-such-device --steps=5 --every=2 --export=%s/never/x --format=vtk "
        "--up=z",
        "run --device=no-such-device --stats=%s/never.csv --quiet --force",
        "run --device=no-such-device --checkpoint=%s/never.ckp --checkpoint-every=3",
        "bench --device=no-such-device --steps=5 --warmup=1%.0s",
        "bench-sort --device=no-such-device --runs=1 --sizes=1000%.0s",
    };
    for (size_t k = 0; k < sizeof accepted / sizeof accepted[0]; k++) {
        char args[512];
        snprintf(args, sizeof args, accepted[k], cli_dir);
        cli_run(&r, args);
        ck_assert_msg(r.code == 1 && strstr(r.err, "no-such-device"), "'%s' was not accepted",
                      args);
    }
    char never[128];
    snprintf(never, sizeof never, "%s/never", cli_dir);
    ck_assert(!cli_exists(never));
    cli_run(&r, "devices --device=no-such-device");
    ck_assert_int_eq(r.code, 1);
    ck_assert_contains(r.err, "no-such-device");
    cli_run(&r, "devices --bogus");
    ck_assert_int_eq(r.code, 2);
    if (test_device_count() > 0) {
        cli_run(&r, "devices --device 0");
        ck_assert_int_eq(r.code, 0);
        ck_assert_contains(r.out, "--device 0 selects:");
    }
    char version[64]; /* the header's version: the program prints the library's */
    snprintf(version, sizeof version, "pbfcl %d.%d.%d", PBFCL_VERSION_MAJOR, PBFCL_VERSION_MINOR,
             PBFCL_VERSION_PATCH);
    cli_run(&r, "--version");
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, version);
    cli_run(&r, "run --version");
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, version);
    cli_run(&r, "run --force=yes");
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "--force takes no value");
    cli_run(&r, "run --format obj --export x");
    assert_refused(&r, "--format: 'obj' is not valid; expected ply or vtk");
    cli_run(&r, "run --up x --export x");
    assert_refused(&r, "expected y or z");
    cli_run(&r, "run --format vtk");
    assert_refused(&r, "give --export DIR too");
    cli_run(&r, "run --checkpoint-every 5");
    assert_refused(&r, "give --checkpoint FILE too");
    cli_run(&r, "run --resume /nonexistent.ckp --particles 100");
    assert_refused(&r, "leave out --scene, --particles");
}
END_TEST

/* Defect 7: output that cannot be written is an error, not a success. */
START_TEST(stdout_write_errors_fail)
{
    cli_result r;
    cli_run(&r, "--help >/dev/full");
    ck_assert_int_eq(r.code, 1);
    ck_assert_contains(r.err, "cannot write to standard output");
    cli_run(&r, "devices >/dev/full");
    ck_assert_int_ne(r.code, 0);
    if (test_device_count() > 0) {
        cli_run(&r, "run --particles 500 --steps 1 >/dev/full");
        ck_assert_int_eq(r.code, 1);
        ck_assert_contains(r.err, "cannot write to standard output");
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_input");
    TCase *t = tcase_create("input");
    tcase_set_timeout(t, 120);
    tcase_add_checked_fixture(t, cli_setup, cli_teardown);
#ifdef PBFCL_HAVE_JSON
    tcase_add_test(t, scene_not_a_regular_file);
    tcase_add_test(t, scene_messages_name_the_problem);
    tcase_add_test(t, grid_too_large_before_device);
    tcase_add_test(t, overflowing_domain_refused);
    tcase_add_test(t, particles_replace_file_radius);
#else
    printf("SKIP: this build reads no scene files (no cJSON): the scene-file cases and the JSON "
           "half of the shared ranges are not tested\n");
#endif
    tcase_add_test(t, too_many_particles_refused_fast);
    tcase_add_test(t, sph_bad_input_refused);
    tcase_add_test(t, option_as_value_refused);
    tcase_add_test(t, cli_and_json_share_ranges);
    tcase_add_test(t, cli_conventions);
    tcase_add_test(t, stdout_write_errors_fail);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
