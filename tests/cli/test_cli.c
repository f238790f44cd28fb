/* The pbfcl program from the outside ($PBFCL_PROGRAM, set by tests/CMakeLists.txt): bad input
 * gives a message naming what is wrong and a non-zero exit before any work starts; a short
 * `pbfcl run` writes the documented frames and statistics rows; a blow-up stops the run. */
#include "cli_util.h"
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp_dir[64];

static const char *make_tmp_dir(void)
{
    strcpy(tmp_dir, "/tmp/pbfcl_cli_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
    return tmp_dir;
}

static void remove_tmp_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A failure with a message, before any simulation started. */
static void assert_rejected(const cli_result *r, const char *part)
{
    ck_assert_msg(r->code == 1 || r->code == 2, "expected exit 1 or 2, got %d", r->code);
    ck_assert_contains(r->err, part);
    ck_assert_msg(strstr(r->out, "pbfcl run: scene") == NULL, "the run started: %s", r->out);
}

START_TEST(unknown_command)
{
    cli_result r;
    cli_run(&r, "frobnicate");
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "unknown command 'frobnicate'");
    ck_assert_contains(r.err, "run");
}
END_TEST

/* The developer commands moved to pbfcl-dev: pbfcl names the new place (exit 2), pbfcl-dev
 * lists them, and neither takes the other's commands. */
START_TEST(dev_commands_in_pbfcl_dev)
{
    static const char *const dev[] = {"bench-sort", "bench-split", "kernel-builds"};
    char cmd[1024], out[4096];
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) {
        snprintf(cmd, sizeof cmd, "'%s' %s --help 2>&1", cli_program("run"), dev[k]);
        FILE *p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        size_t len = fread(out, 1, sizeof out - 1, p);
        out[len] = '\0';
        int status = pclose(p);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "pbfcl %s: status %d", dev[k],
                      status);
        ck_assert_contains(out, "pbfcl-dev");
    }
    cli_result r;
    cli_run(&r, "kernel-builds --no-devices"); /* through pbfcl-dev */
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "particles\t");
    snprintf(cmd, sizeof cmd, "'%s' run --help >/dev/null 2>&1", cli_program("kernel-builds"));
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
}
END_TEST

START_TEST(run_help)
{
    cli_result r;
    cli_run(&r, "run --help");
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "--export DIR");
    ck_assert_contains(r.out, "--iterations N");
    ck_assert_contains(r.out, "--stats FILE.csv");
    /* --scene's help names every built-in scene the unknown-scene message lists (the table) */
    const char *scene = strstr(r.out, "\n  --scene NAME|FILE");
    ck_assert_msg(scene != NULL, "run --help has no --scene line");
    size_t line = strcspn(++scene, "\n");
    cli_result u;
    cli_run(&u, "run --scene dam-brake --steps 1");
    const char *list = strstr(u.err, "the built-in scenes are: ");
    ck_assert_msg(list != NULL, "no list of built-in scenes in: %s", u.err);
    list += strlen("the built-in scenes are: ");
    const char *end = strstr(list, " (or");
    ck_assert_msg(end != NULL, "the list of built-in scenes does not end: %s", list);
    int names = 0;
    for (const char *p = list; p < end;) {
        size_t len = strcspn(p, " ");
        bool found = false; /* as a whole word of the --scene line */
        for (const char *q = scene; !found && q < scene + line; q++)
            found = strncmp(q, p, len) == 0 && (q[len] == ',' || q[len] == ' ') &&
                    (q == scene || q[-1] == ' ');
        ck_assert_msg(found, "run --help's --scene does not name the built-in scene %.*s", (int)len,
                      p);
        names++;
        p += len + (p[len] == ' ');
    }
    ck_assert_int_ge(names, 12);
}
END_TEST

START_TEST(unknown_scene_lists_builtins)
{
    cli_result r;
    cli_run(&r, "run --scene dam-brake --steps 1");
    assert_rejected(&r, "unknown scene 'dam-brake'");
    ck_assert_contains(r.err, "dam-break");
    ck_assert_contains(r.err, "double-dam-break");
    ck_assert_contains(r.err, "drop");
    ck_assert_contains(r.err, "dam-break-bodies");
    ck_assert_contains(r.err, "soft-ball");
    ck_assert_contains(r.err, "fountain");
}
END_TEST

/* The built-in scene with bodies runs (the bodies come from the scene through the public API);
 * a checkpoint of it, or of a scene with a drain, is written and resumes (test_cli_resume
 * checks that the resumed runs are bit for bit the uninterrupted ones). */
START_TEST(run_scene_with_bodies)
{
    if (test_device_count() == 0) {
        printf("SKIP: no OpenCL device, the run with bodies is not tested\n");
        return;
    }
    const char *dir = make_tmp_dir();
    char args[512], ckpt[160];
    snprintf(ckpt, sizeof ckpt, "%s/run.ckpt", dir);
    cli_result r;
    cli_run(&r, "run --scene dam-break-bodies --particles 2000 --steps 3");
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "3 steps");
    snprintf(args, sizeof args,
             "run --scene dam-break-bodies --particles 2000 --steps 3 --checkpoint '%s'", ckpt);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 4", ckpt);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "resumed from");
    remove(ckpt);
    char scene[160];
    snprintf(scene, sizeof scene, "%s/flow.json", dir);
    FILE *f = fopen(scene, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": 0.05, "
          "\"fluid\": [{\"min\": [0,0,0], \"max\": [1,0.3,1]}], \"drains\": [{\"box\": "
          "{\"min\": [0.9,0,0], \"max\": [1,1,1]}}]}",
          f);
    fclose(f);
    snprintf(args, sizeof args, "run --scene '%s' --steps 3 --checkpoint '%s'", scene, ckpt);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    remove(scene); /* the checkpoint holds the scene */
    snprintf(args, sizeof args, "run --resume '%s' --steps 4", ckpt);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "resumed from");
    remove(ckpt);
    remove_tmp_dir();
}
END_TEST

/* Arguments that must be rejected, and what the message must name. */
static const struct {
    const char *args, *part;
} bad_args[] = {
    {"run --iterations -1", "--iterations"},
    {"run --iterations=-1", "--iterations"},
    {"run --particles -5", "--particles"},
    {"run --particles 12x", "--particles"},
    {"run --dt abc", "--dt"},
    {"run --dt nan", "--dt"},
    {"run --dt inf", "--dt"},
    {"run --dt 0", "--dt"},
    {"run --substeps 2.5", "--substeps"},
    {"run --viscosity -1", "--viscosity"},
    {"run --gravity 0,-9.81", "--gravity"},
    {"run --gravity 0,-9.81,0,1", "--gravity"},
    {"run --radius -0.01", "--radius"},
    {"run --contact-slop 1.5", "--contact-slop"},
    {"run --contact-slop -0.1", "--contact-slop"},
    {"run --scorr-n 2.5", "--scorr-n"},
    {"run --scorr-dq 1", "--scorr-dq"},
    {"run --h-ratio 9", "--h-ratio"},
    {"run --h-ratio 4.5", "--h-ratio"},
    {"run --h-ratio 2", "--h-ratio"},
    {"run --steps 0", "--steps"},
    {"run --steps", "--steps"},
    {"run --dt", "--dt"},
    {"run --every 2", "--export"},
    {"run --every 0 --export /tmp", "--every"},
    {"run --bogus", "unknown option '--bogus'"},
    {"run --particles 100 --radius 0.01", "--radius"},
    {"run --scene /nonexistent/pbfcl/scene.json", "/nonexistent/pbfcl/scene.json"},
    {"bench --diffuse 0", "--diffuse"},
    {"bench --diffuse 1e3", "--diffuse"},
    {"bench-split --runs 0", "--runs"},
    {"bench-split --particles 0", "--particles"},
    {"bench-split --particles 1000,x", "--particles"},
    {"bench-split --block", "--block"},
    {"bench-split --bogus 1", "unknown option '--bogus'"},
};

START_TEST(bad_arguments_rejected)
{
    cli_result r;
    cli_run(&r, bad_args[_i].args);
    assert_rejected(&r, bad_args[_i].part);
}
END_TEST

START_TEST(export_unwritable_fails_before_run)
{
    const char *dir = make_tmp_dir();
    char file[128], args[512];
    snprintf(file, sizeof file, "%s/file", dir);
    FILE *f = fopen(file, "w");
    fclose(f);
    cli_result r;
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --export '%s/sub'", file);
    cli_run(&r, args);
    assert_rejected(&r, "export directory");
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --export '%s'", file);
    cli_run(&r, args);
    assert_rejected(&r, "not a directory");
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --stats '%s/missing/s.csv'", dir);
    cli_run(&r, args);
    assert_rejected(&r, "statistics file");
    remove_tmp_dir();
}
END_TEST

START_TEST(unknown_device_lists_devices)
{
    cli_result r;
    cli_run(&r, "run --device no-such-device-xyz --particles 500 --steps 1");
    assert_rejected(&r, "no-such-device-xyz");
    pbfcl_device_info *devs = NULL;
    int count = 0;
    if (pbfcl_cl_enumerate(&devs, &count) == PBFCL_OK && count > 0)
        ck_assert_contains(r.err, devs[0].device_name);
    free(devs);
}
END_TEST

/* Parses a PLY header written by pbfcl; returns the vertex count and checks the size. */
static long ply_vertex_count(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "missing %s", path);
    char line[128];
    long n = -1, header = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "ply\n");
    while (fgets(line, sizeof line, f) && strcmp(line, "end_header\n") != 0)
        sscanf(line, "element vertex %ld", &n);
    header = ftell(f);
    fseek(f, 0, SEEK_END);
    ck_assert_int_eq(ftell(f), header + n * 40); /* 7 floats, id, phase, body */
    fclose(f);
    return n;
}

static bool file_exists(const char *dir, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

START_TEST(run_writes_frames_and_stats)
{
    if (test_device_count() == 0) {
        printf("SKIP: no OpenCL device, the successful run is not tested\n");
        return;
    }
    const char *dir = make_tmp_dir();
    char frames[128], csv[128], args[512], path[256];
    snprintf(frames, sizeof frames, "%s/frames", dir);
    snprintf(csv, sizeof csv, "%s/stats.csv", dir);
    snprintf(args, sizeof args,
             "run --scene dam-break --particles 2000 --steps 5 --export '%s' --every 2 "
             "--stats '%s'",
             frames, csv);
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "5 steps");
    ck_assert_contains(r.out, "steps/s");
    /* frames at steps 0 (initial state), 2 and 4; nothing else in the directory */
    static const char *const expected[] = {"frame_00000.ply", "frame_00002.ply", "frame_00004.ply"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", frames, expected[k]);
        long n = ply_vertex_count(path);
        ck_assert_msg(n >= 1800 && n <= 2200, "%s: %ld particles", path, n);
    }
    DIR *d = opendir(frames);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += e->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(entries, 3);
    ck_assert_int_eq(cli_count_lines(csv), 1 + 5);
    remove_tmp_dir();
}
END_TEST

/* A speed limit below what the scene reaches stops the run at step 1: exit 1, a message
 * saying what to change, the frame of step 0 kept, the bad frame not written. */
START_TEST(run_blow_up_stops)
{
    if (test_device_count() == 0) {
        printf("SKIP: no OpenCL device, the blow-up guard is not tested\n");
        return;
    }
    const char *dir = make_tmp_dir();
    char frames[128], csv[128], args[512];
    snprintf(frames, sizeof frames, "%s/frames", dir);
    snprintf(csv, sizeof csv, "%s/stats.csv", dir);
    snprintf(args, sizeof args,
             "run --particles 1000 --steps 5 --max-speed 0.001 --export '%s' --stats '%s'", frames,
             csv);
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_contains(r.err, "blew up at step 1");
    ck_assert_contains(r.err, "--dt");
    ck_assert_contains(r.err, "--substeps");
    ck_assert_contains(r.err, "--iterations");
    ck_assert(file_exists(frames, "frame_00000.ply"));
    ck_assert(!file_exists(frames, "frame_00001.ply"));
    ck_assert_int_eq(cli_count_lines(csv), 1 + 1);
    remove_tmp_dir();
}
END_TEST

/* bench-split on a small dam break: every stage has a row, and split-and-compress gives the
 * neighbour lists' densities (to float rounding) and neighbour counts. */
START_TEST(bench_split_compares_paths)
{
    if (test_device_count() == 0) {
        printf("SKIP: no OpenCL device, bench-split is not tested\n");
        return;
    }
    cli_result r;
    cli_run(&r, "bench-split --particles 3000 --runs 2 --warmup 1");
    ck_assert_int_eq(r.code, 0);
    static const char *const rows[] = {"\tneighbours\t", "\tlist_density\t", "\tsplit_count\t",
                                       "\tsplit_scan\t", "\tsplit_write\t",  "\tsplit_density\t",
                                       "\tlist_total\t", "\tsplit_total\t"};
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
        ck_assert_contains(r.out, rows[k]);
    const char *acc = strstr(r.out, "list_overflow\n");
    ck_assert_ptr_nonnull(acc);
    size_t n = 0, blocks = 0, count_diff = 99;
    double per_block = 0.0, max_rel = 1.0;
    unsigned overflow = 99;
    ck_assert_int_eq(sscanf(acc + strlen("list_overflow\n"), "%zu %zu %lf %lf %zu %u", &n, &blocks,
                            &per_block, &max_rel, &count_diff, &overflow),
                     6);
    ck_assert_msg(n >= 2700 && n <= 3300 && blocks > n / 27 && blocks < n,
                  "%zu particles, %zu blocks", n, blocks);
    ck_assert_msg(max_rel < 1e-5, "densities differ by %g", max_rel);
    ck_assert_uint_eq(count_diff, 0);
    ck_assert_uint_eq(overflow, 0);
}
END_TEST

/* bench --diffuse: the diffuse stage has its own row, timed, and the run says how many diffuse
 * particles it made; without it there is no such row (bench lists the stages that ran: a pbf
 * step has none of sph's either). */
START_TEST(bench_diffuse_stage)
{
    if (test_device_count() == 0) {
        printf("SKIP: no OpenCL device, bench --diffuse is not tested\n");
        return;
    }
    cli_result r;
    cli_run(&r, "bench --particles 2000 --steps 3 --warmup 40 --diffuse 5000");
    ck_assert_int_eq(r.code, 0);
    const char *row = strstr(r.out, "\ndiffuse\t");
    ck_assert_ptr_nonnull(row);
    ck_assert_msg(atof(row + strlen("\ndiffuse\t")) > 0.0, "%s", r.out);
    const char *made = strstr(r.out, "capacity 5000; ");
    ck_assert_ptr_nonnull(made);
    ck_assert_msg(atoi(made + strlen("capacity 5000; ")) > 0, "no diffuse particles:\n%s", r.out);
    cli_run(&r, "bench --particles 2000 --steps 2 --warmup 0");
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "\nsolve\t");
    ck_assert_msg(!strstr(r.out, "\ndiffuse\t") && !strstr(r.out, "\ndensity\t"), "%s", r.out);
    ck_assert(strstr(r.out, "# diffuse particles") == NULL);
}
END_TEST

/* bench reports the mean step beside the median, and a run whose measured steps are broken
 * (no density correction: the dam break collapses and its neighbour lists are cut short) is
 * marked step by step with a warning on both streams and exit status 3, where a sound one
 * exits 0 with no mark. */
START_TEST(bench_marks_broken_steps)
{
    if (test_device_count() == 0) {
        printf("SKIP: no OpenCL device, bench's broken steps are not tested\n");
        return;
    }
    cli_result r;
    cli_run(&r, "bench --particles 2000 --steps 2 --warmup 20 --iterations 0");
    ck_assert_msg(r.code == 3, "exit %d:\n%s", r.code, r.out);
    ck_assert_contains(r.out, "# step time over the measured steps: mean ");
    ck_assert_int_eq(cli_count(r.out, "# BROKEN measured step "), 2);
    ck_assert_contains(r.out, "neighbour lists cut short");
    ck_assert_contains(r.out, "# WARNING: 2 of the 2 measured steps are broken");
    ck_assert_contains(r.err, "WARNING: 2 of the 2 measured steps are broken");
    cli_run(&r, "bench --particles 2000 --steps 2 --warmup 0");
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "# step time over the measured steps: mean ");
    ck_assert_msg(!strstr(r.out, "BROKEN") && !strstr(r.out, "WARNING"), "%s", r.out);
}
END_TEST

/* The particles `pbfcl run` ends with: "pbfcl run: S steps, N particles, ..." in its output. */
static long run_final_count(const char *args)
{
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    const char *at = strstr(r.err, " steps, ");
    if (!at)
        at = strstr(r.out, " steps, ");
    ck_assert_msg(at != NULL, "no summary line from `pbfcl %s`", args);
    return atol(at + strlen(" steps, "));
}

/* bench runs a scene's emitters and drains after every step as `pbfcl run` does: a fountain
 * benched 3 steps after 2 warm-up ones ends with the particles of a 5-step run, and what it
 * says it emitted less drained over the measured steps is what a run gains from step 2 to 5.
 * Without the flow in bench it would end with the fill alone. */
START_TEST(bench_runs_emitters_and_drains)
{
    if (test_device_count() == 0) {
        printf("SKIP: no OpenCL device, bench's emitters are not tested\n");
        return;
    }
    const char *scene = "--scene fountain --particles 14000";
    char args[256];
    snprintf(args, sizeof args, "run %s --steps 5", scene);
    long after5 = run_final_count(args);
    snprintf(args, sizeof args, "run %s --steps 2", scene);
    long after2 = run_final_count(args);
    cli_result r;
    snprintf(args, sizeof args, "bench %s --steps 3 --warmup 2", scene);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    const char *line = strstr(r.out, "# emitters and drains");
    ck_assert_msg(line != NULL, "no emitters line:\n%s", r.out);
    long emitted = -1, drained = -1, end = -1;
    const char *e = strstr(line, "): "), *d = strstr(line, "emitted and "),
               *a = strstr(line, "after the last step");
    ck_assert(e && d && a);
    emitted = atol(e + 3);
    drained = atol(d + strlen("emitted and "));
    const char *comma = a;
    while (comma > line && comma[-1] != ',')
        comma--;
    end = atol(comma);
    ck_assert_msg(emitted > 0, "the fountain emitted nothing in 3 steps:\n%s", line);
    ck_assert_int_eq(end, after5);
    ck_assert_int_eq(emitted - drained, after5 - after2);
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("errors");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, unknown_command);
    tcase_add_test(t, dev_commands_in_pbfcl_dev);
    tcase_add_test(t, run_help);
    tcase_add_test(t, unknown_scene_lists_builtins);
    tcase_add_loop_test(t, bad_arguments_rejected, 0, (int)(sizeof bad_args / sizeof bad_args[0]));
    tcase_add_test(t, export_unwritable_fails_before_run);
    tcase_add_test(t, unknown_device_lists_devices);
    suite_add_tcase(s, t);
    TCase *run = tcase_create("run");
    tcase_set_timeout(run, 300);
    tcase_add_test(run, run_writes_frames_and_stats);
    tcase_add_test(run, run_blow_up_stops);
    tcase_add_test(run, run_scene_with_bodies);
    tcase_add_test(run, bench_split_compares_paths);
    tcase_add_test(run, bench_diffuse_stage);
    tcase_add_test(run, bench_marks_broken_steps);
    tcase_add_test(run, bench_runs_emitters_and_drains);
    suite_add_tcase(s, run);
    return s;
}

int main(void)
{
    return test_run_suite(cli_suite(), false);
}
