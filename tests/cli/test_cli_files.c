/* The files of `pbfcl run` from the outside (docs/RELIABILITY.md): nothing existing is
 * destroyed or replaced without --force, a failed run leaves nothing it created, frames are
 * whole and carry ids and the real density, a resumed run continues bit for bit, Ctrl-C
 * stops cleanly, and a collapsed simulation is stopped. */
#include "checkpoint.h"
#include "cli_util.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Defect 1: the statistics file is created only once the run has started, and never
 * replaces an existing file without --force; the scene file is never a target. Before, the
 * file was truncated first and deleted when the device could not be opened. */
START_TEST(stats_file_never_destroyed)
{
    char csv[128], scene[128], args[512];
    cli_result r;
    snprintf(csv, sizeof csv, "%s/old.csv", cli_dir);
    cli_write_file(csv, "keep\n");
    snprintf(args, sizeof args,
             "run --particles 1000 --steps 1 --stats '%s' --device no-such-device", csv);
    cli_run(&r, args); /* the reproduction: old.csv was deleted */
    ck_assert_int_eq(r.code, 1);
    size_t len;
    char *text = cli_slurp(csv, &len);
    ck_assert_str_eq(text, "keep\n");
    free(text);
    snprintf(args, sizeof args,
             "run --particles 1000 --steps 1 --stats '%s' --force --device no-such-device", csv);
    cli_run(&r, args); /* replacing is allowed, but only once the run has started */
    ck_assert_int_eq(r.code, 1);
    text = cli_slurp(csv, &len);
    ck_assert_str_eq(text, "keep\n");
    free(text);
    snprintf(args, sizeof args, "run --particles 1000 --steps 1 --stats '%s'", csv);
    cli_run(&r, args);
    ck_assert_int_ne(r.code, 0);
    ck_assert_contains(r.err, "already exists");
    ck_assert_contains(r.err, "--force");
    text = cli_slurp(csv, &len);
    ck_assert_str_eq(text, "keep\n");
    free(text);
#ifdef PBFCL_HAVE_JSON /* the scene file is never a target */
    snprintf(scene, sizeof scene, "%s/scene.json", cli_dir);
    cli_write_file(scene, "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": "
                          "0.05, \"fluid\": [{\"min\": [0,0,0], \"max\": [0.5,0.5,0.5]}]}");
    snprintf(args, sizeof args, "run --scene '%s' --steps 1 --stats '%s' --force", scene, scene);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "is the scene file");
    size_t scene_len;
    text = cli_slurp(scene, &scene_len);
    ck_assert_contains(text, "particle_radius");
    free(text);
#else
    (void)scene;
#endif
}
END_TEST

/* Defect 11: a run that fails before its first step leaves no directory it created. */
START_TEST(failed_run_leaves_no_tree)
{
    char frames[128], top[128], args[512];
    snprintf(top, sizeof top, "%s/a", cli_dir);
    snprintf(frames, sizeof frames, "%s/a/b/frames", cli_dir);
    snprintf(args, sizeof args,
             "run --particles 1000 --steps 1 --export '%s' --device no-such-device", frames);
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(!cli_exists(top), "%s was left behind", top);
}
END_TEST

/* A folder that holds frames of another run is refused (it silently interleaved two runs);
 * --force replaces them all, also the ones the new run does not write. */
START_TEST(export_folder_with_frames)
{
    char frames[128], old[256], args[512];
    cli_result r;
    snprintf(frames, sizeof frames, "%s/frames", cli_dir);
    ck_assert_int_eq(mkdir(frames, 0777), 0);
    snprintf(old, sizeof old, "%s/frame_00009.ply", frames);
    cli_write_file(old, "an earlier run's frame\n");
    snprintf(args, sizeof args, "run --particles 1000 --steps 2 --export '%s'", frames);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_contains(r.err, "already holds 1 frame file");
    ck_assert_contains(r.err, "--force");
    ck_assert(cli_exists(old));
    if (!cli_have_device())
        return;
    snprintf(args, sizeof args, "run --particles 1000 --steps 2 --export '%s' --force", frames);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert(!cli_exists(old));
    snprintf(old, sizeof old, "%s/frame_00002.ply", frames);
    ck_assert(cli_exists(old));
}
END_TEST

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The appended array `name` of a .vtu pbfcl wrote, and its byte count. */
static const unsigned char *vtu_array(const char *text, const char *name, uint32_t *bytes)
{
    char key[64];
    snprintf(key, sizeof key, "Name=\"%s\"", name);
    const char *p = strstr(text, key);
    ck_assert_ptr_nonnull(p);
    long long off = atoll(strstr(p, "offset=\"") + 8);
    const char *data = strstr(text, "encoding=\"raw\">\n_") + strlen("encoding=\"raw\">\n_");
    *bytes = le32((const unsigned char *)data + off);
    return (const unsigned char *)data + off + 8;
}

/* VTK frames from a run: every K steps, a .pvd with the simulated times, ids a permutation,
 * and at step 0 the real SPH density (it was 1000 for every particle). */
START_TEST(vtk_frames_from_a_run)
{
    if (!cli_have_device())
        return;
    char frames[128], args[512], path[256];
    snprintf(frames, sizeof frames, "%s/vtk", cli_dir);
    snprintf(args, sizeof args,
             "run --particles 1500 --steps 4 --every 2 --export '%s' --format vtk --up z", frames);
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(path, sizeof path, "%s/frames.pvd", frames);
    size_t len;
    char *pvd = cli_slurp(path, &len);
    ck_assert_contains(pvd, "timestep=\"0\" group=\"\" part=\"0\" file=\"frame_00000.vtu\"");
    ck_assert_contains(pvd, "file=\"frame_00002.vtu\"");
    ck_assert_contains(pvd, "file=\"frame_00004.vtu\"");
    ck_assert_int_eq(cli_count(pvd, "<DataSet"), 3);
    double t2 = atof(strstr(strstr(strstr(pvd, "<DataSet") + 1, "<DataSet"), "timestep=\"") + 10);
    ck_assert_msg(fabs(t2 - 2.0 / 60.0) < 1e-6, "step 2 at time %g", t2);
    free(pvd);
    snprintf(path, sizeof path, "%s/frame_00000.vtu", frames);
    char *text = cli_slurp(path, &len);
    ck_assert_contains(text, ", z up");
    uint32_t bytes;
    const unsigned char *dens = vtu_array(text, "density", &bytes);
    size_t n = bytes / 4, not_rest = 0;
    const unsigned char *ids = vtu_array(text, "id", &bytes);
    ck_assert_uint_eq(bytes / 4, n);
    char *seen = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        float d;
        memcpy(&d, dens + 4 * i, 4);
        ck_assert_msg(d > 300.0f && d < 1200.0f, "density %g at step 0", d);
        not_rest += d != 1000.0f;
        uint32_t id = le32(ids + 4 * i);
        ck_assert_uint_lt(id, n);
        ck_assert_msg(!seen[id], "id %u twice", id);
        seen[id] = 1;
    }
    ck_assert_msg(not_rest > n / 2, "%zu of %zu densities are the placeholder 1000", n - not_rest,
                  n);
    free(seen);
    free(text);
}
END_TEST

/* Checkpoint and resume with method (pbf or sph): a run stopped at step 3 and resumed to
 * step 6 writes frames 4..6 byte for byte as the uninterrupted run does (same device), and the
 * collection lists all. */
static void check_resume(const char *method)
{
    char a[128], b[128], ckp[128], args[768], pa[256], pb[256];
    snprintf(a, sizeof a, "%s/a-%s", cli_dir, method);
    snprintf(b, sizeof b, "%s/b-%s", cli_dir, method);
    snprintf(ckp, sizeof ckp, "%s/run-%s.ckp", cli_dir, method);
    cli_result r;
    snprintf(args, sizeof args,
             "run --scene drop --solver %s --particles 3000 --steps 6 --export '%s' --format vtk",
             method, a);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args,
             "run --scene drop --solver %s --particles 3000 --steps 3 --export '%s' --format vtk "
             "--checkpoint '%s'",
             method, b, ckp);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 6 --export '%s' --format vtk", ckp, b);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "resumed from");
    for (int step = 0; step <= 6; step++) {
        snprintf(pa, sizeof pa, "%s/frame_%05d.vtu", a, step);
        snprintf(pb, sizeof pb, "%s/frame_%05d.vtu", b, step);
        ck_assert_msg(cli_same_bytes(pa, pb), "%s: frame %d differs after the resume", method,
                      step);
    }
    snprintf(pa, sizeof pa, "%s/frames.pvd", a);
    snprintf(pb, sizeof pb, "%s/frames.pvd", b);
    ck_assert_msg(cli_same_bytes(pa, pb), "the collections differ");
    snprintf(args, sizeof args, "run --resume '%s' --steps 3", ckp);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "give --steps above it");
}

START_TEST(resume_is_bit_identical)
{
    if (!cli_have_device())
        return;
    check_resume("pbf");
}
END_TEST

/* The same with the sph method: its state (positions, velocities, ids, densities, the largest
 * acceleration of the last frame) carries across the checkpoint. */
START_TEST(resume_is_bit_identical_sph)
{
    if (!cli_have_device())
        return;
    check_resume("sph");
}
END_TEST

/* A damaged, cut or foreign checkpoint is refused with what is wrong; an existing file that
 * is not a checkpoint is not overwritten by --checkpoint without --force. */
START_TEST(bad_checkpoints_refused)
{
    char ckp[128], args[512];
    cli_result r;
    snprintf(ckp, sizeof ckp, "%s/not.ckp", cli_dir);
    cli_write_file(ckp, "{\"a scene\": true}\n");
    snprintf(args, sizeof args, "run --resume '%s'", ckp);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "is not a pbfcl checkpoint");
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --checkpoint '%s'", ckp);
    cli_run(&r, args);
    ck_assert_int_ne(r.code, 0);
    ck_assert_contains(r.err, "is not a pbfcl checkpoint");
    ck_assert_int_eq(cli_count_lines(ckp), 1);
    if (!cli_have_device())
        return;
    snprintf(ckp, sizeof ckp, "%s/good.ckp", cli_dir);
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --checkpoint '%s'", ckp);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    size_t len;
    char *data = cli_slurp(ckp, &len);
    data[len / 2] ^= 0x40; /* one bit flipped in the middle */
    char bad[128];
    snprintf(bad, sizeof bad, "%s/flipped.ckp", cli_dir);
    FILE *f = fopen(bad, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
    snprintf(args, sizeof args, "run --resume '%s' --steps 2", bad);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "fails its checksum");
    data[len / 2] ^= 0x40;
    f = fopen(bad, "wb");
    fwrite(data, 1, len - 100, f); /* cut short */
    fclose(f);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "checkpoint");
    free(data);
}
END_TEST

/* Ctrl-C (SIGINT; SIGTERM, SIGHUP of a closed terminal and SIGPIPE of a closed pipe alike)
 * stops the run after the current step: exit 128 + the signal, the summary, a checkpoint that
 * resumes, and a statistics file of whole rows up to that step. Before, the run ended at
 * once with no message (SIGHUP and SIGPIPE until issue 24). */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
static const char *const stop_names[] = {"SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE"};

START_TEST(signal_stops_cleanly)
{
    int sig = stop_signals[_i];
    const char *name = stop_names[_i];
    if (!cli_have_device())
        return;
    char ckp[128], csv[128], out[128], cmd[1024];
    snprintf(ckp, sizeof ckp, "%s/stop.ckp", cli_dir);
    snprintf(csv, sizeof csv, "%s/stop.csv", cli_dir);
    snprintf(out, sizeof out, "%s/stop.out", cli_dir);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        snprintf(cmd, sizeof cmd,
                 "exec '%s' run --particles 1000 --steps 100000 --checkpoint '%s' "
                 "--stats '%s' >'%s' 2>&1",
                 cli_program("run"), ckp, csv, out);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* until 3 steps are done, however long this machine takes to start the run (ctest's
     * time limit catches a run that never steps) */
    int status;
    while (!(cli_exists(csv) && cli_count_lines(csv) >= 4)) {
        nanosleep(&(struct timespec){0, 100000000}, NULL);
        ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "pbfcl ended before its third step");
    }
    ck_assert_int_eq(kill(pid, sig), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    char text[16384];
    cli_read_text(out, text, sizeof text);
    printf("%s", text);
    ck_assert_msg(WIFEXITED(status), "pbfcl did not exit by itself");
    ck_assert_int_eq(WEXITSTATUS(status), 128 + sig);
    char said[64];
    snprintf(said, sizeof said, "stopped by %s after step", name);
    ck_assert_contains(text, said);
    ck_assert_contains(text, "checkpoint written to");
    long long stopped = atoll(strstr(text, said) + strlen(said));
    ck_assert_int_eq(cli_count_lines(csv), 1 + stopped);
    pbfcl_checkpoint *c = NULL;
    pbfcl_checkpoint_info info;
    ck_assert_int_eq(pbfcl_checkpoint_read(ckp, &c, &info), PBFCL_OK);
    ck_assert_int_eq(info.step, stopped);
    pbfcl_checkpoint_free(c);
    cli_result r;
    snprintf(cmd, sizeof cmd, "run --resume '%s' --steps %lld", ckp, stopped + 2);
    cli_run(&r, cmd);
    ck_assert_int_eq(r.code, 0);
}
END_TEST

/* Defect 10: a collapsed fluid (strong vorticity confinement, the speed limit raised out of
 * the way) is stopped by the density bound after 10 steps; it ran to the end with exit 0. */
START_TEST(collapse_is_stopped)
{
    if (!cli_have_device())
        return;
    char csv[128], args[512];
    snprintf(csv, sizeof csv, "%s/collapse.csv", cli_dir);
    snprintf(args, sizeof args,
             "run --particles 1000 --steps 40 --vorticity 1e6 --max-speed 1e9 --stats '%s'", csv);
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_contains(r.err, "collapsed at step 10");
    ck_assert_contains(r.err, "--vorticity");
    ck_assert_int_eq(cli_count_lines(csv), 1 + 10);
}
END_TEST

/* --quiet prints nothing but warnings and errors. */
START_TEST(quiet_run)
{
    if (!cli_have_device())
        return;
    cli_result r;
    cli_run(&r, "run --particles 500 --steps 2 --quiet");
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_files");
    TCase *t = tcase_create("files");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, cli_setup, cli_teardown);
    tcase_add_test(t, stats_file_never_destroyed);
    tcase_add_test(t, failed_run_leaves_no_tree);
    tcase_add_test(t, export_folder_with_frames);
    tcase_add_test(t, vtk_frames_from_a_run);
    tcase_add_test(t, resume_is_bit_identical);
    tcase_add_test(t, resume_is_bit_identical_sph);
    tcase_add_test(t, bad_checkpoints_refused);
    tcase_add_loop_test(t, signal_stops_cleanly, 0, 4);
    tcase_add_test(t, collapse_is_stopped);
    tcase_add_test(t, quiet_run);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
