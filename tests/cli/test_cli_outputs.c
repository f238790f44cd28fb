/* The outputs of `pbfcl run` against each other and against its inputs, and the signals that
 * end a run, from the outside (docs/RELIABILITY.md, promises 1 and 5): no output replaces
 * another output or an input (links resolved), a resumed run replaces only the frames its
 * own run wrote, a read-only checkpoint is kept, a killed run's temporary files are removed by
 * the next, and a signal before the first step or a closed standard output stops the run
 * cleanly. */
#include "cli_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

/* Asserts that path holds text. */
static void assert_text(const char *path, const char *text)
{
    size_t len;
    char *data = cli_slurp(path, &len);
    ck_assert_msg(len == strlen(text) && !memcmp(data, text, len), "%s was changed", path);
    free(data);
}

/* Runs `pbfcl run` with args and asserts exit 2 and a message holding every part of need
 * (NULL-terminated). */
static void assert_refused(const char *args, const char *const *need)
{
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    for (; *need; need++)
        ck_assert_contains(r.err, *need);
}

/* Two outputs that are one file, an output where an exported frame goes, through links and
 * "..": refused before anything is written, with both names, even with --force. Before,
 * the checkpoint replaced the statistics and a frame replaced a statistics file, exit 0. */
START_TEST(outputs_never_collide)
{
    char x[128], e[128], sym[128], hard[128], args[1024];
    snprintf(x, sizeof x, "%s/x.out", cli_dir);
    snprintf(e, sizeof e, "%s/e", cli_dir);
    cli_write_file(x, "keep\n");
    snprintf(args, sizeof args,
             "run --particles 500 --steps 1 --stats '%s' --checkpoint '%s' --force", x, x);
    assert_refused(args,
                   (const char *const[]){"--stats", "--checkpoint", "are the same file", NULL});
    assert_text(x, "keep\n");
    snprintf(hard, sizeof hard, "%s/hard.out", cli_dir); /* a hard link: the same inode */
    ck_assert_int_eq(link(x, hard), 0);
    snprintf(args, sizeof args,
             "run --particles 500 --steps 1 --stats '%s' --checkpoint '%s' --force", hard, x);
    assert_refused(args, (const char *const[]){"hard.out", "x.out", "are the same file", NULL});
    assert_text(x, "keep\n");
    snprintf(sym, sizeof sym, "%s/link.csv", cli_dir); /* a link to a file not there yet */
    ck_assert_int_eq(symlink("later.ckp", sym), 0);
    snprintf(args, sizeof args,
             "run --particles 500 --steps 1 --stats '%s' --checkpoint '%s/./later.ckp'", sym,
             cli_dir);
    assert_refused(args, (const char *const[]){"link.csv", "later.ckp", "are the same file", NULL});
    snprintf(sym, sizeof sym, "%s/later.ckp", cli_dir);
    ck_assert(!cli_exists(sym));
    snprintf(args, sizeof args,
             "run --particles 500 --steps 2 --export '%s' --stats '%s/frame_00000.ply'", e, e);
    assert_refused(args, (const char *const[]){"--stats", "frame_00000.ply", "--export", NULL});
    snprintf(args, sizeof args,
             "run --particles 500 --steps 2 --export '%s' --checkpoint '%s/sub/../frame_00002.ply'",
             e, e);
    assert_refused(args,
                   (const char *const[]){"--checkpoint", "frame_00002.ply", "--export", NULL});
    snprintf(args, sizeof args,
             "run --particles 500 --steps 2 --export '%s' --stats '%s/frames.pvd'", e, e);
    assert_refused(args, (const char *const[]){"frames.pvd", NULL});
    ck_assert_msg(!cli_exists(e), "a refused run created %s", e);
}
END_TEST

/* The checkpoint being resumed is never replaced by another output (before, --stats c.ckp
 * --force destroyed it); --checkpoint may name it: the run continues it. */
START_TEST(resumed_checkpoint_kept)
{
    if (!cli_have_device())
        return;
    char c[128], copy[128], link[128], args[1024];
    cli_result r;
    snprintf(c, sizeof c, "%s/c.ckp", cli_dir);
    snprintf(copy, sizeof copy, "%s/copy.ckp", cli_dir);
    snprintf(link, sizeof link, "%s/link.ckp", cli_dir);
    snprintf(args, sizeof args, "run --particles 500 --steps 2 --checkpoint '%s' --quiet", c);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    size_t len;
    char *data = cli_slurp(c, &len);
    cli_spit(copy, data, len);
    free(data);
    ck_assert_int_eq(symlink("c.ckp", link), 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 3 --stats '%s' --force", c, c);
    assert_refused(args, (const char *const[]){"--stats", "checkpoint being resumed", NULL});
    snprintf(args, sizeof args, "run --resume '%s' --steps 3 --stats '%s' --force", link, c);
    assert_refused(args, (const char *const[]){"link.ckp", "checkpoint being resumed", NULL});
    ck_assert(cli_same_bytes(c, copy));
    snprintf(args, sizeof args, "run --resume '%s' --steps 3 --checkpoint '%s' --quiet", c, c);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert(!cli_same_bytes(c, copy)); /* now at step 3 */
}
END_TEST

/* An existing read-only checkpoint is not replaced without --force (it was). */
START_TEST(read_only_checkpoint_kept)
{
    char c[128], args[512];
    const char *text = "PBFCLCKP and the rest of an earlier checkpoint\n";
    snprintf(c, sizeof c, "%s/ro.ckp", cli_dir);
    cli_write_file(c, text);
    ck_assert_int_eq(chmod(c, 0444), 0);
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --checkpoint '%s'", c);
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_ne(r.code, 0);
    ck_assert_contains(r.err, "is read-only");
    ck_assert_contains(r.err, "--force");
    assert_text(c, text);
    if (!cli_have_device())
        return;
    snprintf(args, sizeof args, "run --particles 500 --steps 1 --checkpoint '%s' --force", c);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_int_ne(cli_count_lines(c), 1); /* replaced by a real checkpoint */
}
END_TEST

/* --resume into a folder of another run's frames is refused (it deleted those after the
 * checkpoint's step), --force replaces them; into the folder of the checkpoint's own run
 * it replaces the frames after the step without --force, also when resumed twice. */
START_TEST(resume_keeps_other_runs_frames)
{
    if (!cli_have_device())
        return;
    char c[128], d[128], e[128], f[128], frame[256], args[1024];
    cli_result r;
    snprintf(c, sizeof c, "%s/c.ckp", cli_dir);
    snprintf(d, sizeof d, "%s/d.ckp", cli_dir);
    snprintf(e, sizeof e, "%s/other", cli_dir);
    snprintf(f, sizeof f, "%s/own", cli_dir);
    snprintf(args, sizeof args, "run --particles 500 --steps 2 --checkpoint '%s' --quiet", c);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --particles 500 --steps 5 --export '%s' --quiet", e);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 3 --export '%s'", c, e);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_contains(r.err, "a run other than the one that wrote checkpoint");
    ck_assert_contains(r.err, "--force");
    snprintf(frame, sizeof frame, "%s/frame_00005.ply", e);
    ck_assert(cli_exists(frame));
    snprintf(args, sizeof args, "run --resume '%s' --steps 3 --export '%s' --force --quiet", c, e);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert(!cli_exists(frame));
    snprintf(args, sizeof args,
             "run --particles 500 --steps 2 --export '%s' --checkpoint '%s' --quiet", f, d);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 5 --export '%s' --quiet", d, f);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 3 --export '%s' --quiet", d, f);
    cli_run(&r, args); /* as after a crash at step 5: the frames after step 2 are its own */
    ck_assert_int_eq(r.code, 0);
    snprintf(frame, sizeof frame, "%s/frame_00005.ply", f);
    ck_assert(!cli_exists(frame));
    snprintf(frame, sizeof frame, "%s/frame_00003.ply", f);
    ck_assert(cli_exists(frame));
}
END_TEST

/* A process id that no longer runs: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    return pid;
}

/* The temporary files a killed run (SIGKILL) left beside the checkpoint and the frames are
 * removed by the next run that writes there; a running writer's, and other files', stay. */
START_TEST(stale_temporary_files_removed)
{
    if (!cli_have_device())
        return;
    char e[128], stale[256], frame_tmp[256], live[256], other[256], args[512];
    long dead = (long)dead_pid();
    snprintf(e, sizeof e, "%s/e", cli_dir);
    ck_assert_int_eq(mkdir(e, 0777), 0);
    snprintf(stale, sizeof stale, "%s/.c.ckp.tmp%ld.0", cli_dir, dead);
    snprintf(frame_tmp, sizeof frame_tmp, "%s/.frame_00001.ply.tmp%ld.7", e, dead);
    snprintf(live, sizeof live, "%s/.c.ckp.tmp%ld.0", cli_dir, (long)getpid());
    snprintf(other, sizeof other, "%s/.notes.txt.tmp%ld.0", cli_dir, dead);
    cli_write_file(stale, "cut");
    cli_write_file(frame_tmp, "cut");
    cli_write_file(live, "being written");
    cli_write_file(other, "not ours");
    snprintf(args, sizeof args,
             "run --particles 500 --steps 1 --checkpoint '%s/c.ckp' --export '%s' --quiet", cli_dir,
             e);
    cli_result r;
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(!cli_exists(stale), "%s was left", stale);
    ck_assert_msg(!cli_exists(frame_tmp), "%s was left", frame_tmp);
    ck_assert_msg(cli_exists(live), "a running writer's %s was removed", live);
    ck_assert_msg(cli_exists(other), "%s (not a file of the run) was removed", other);
}
END_TEST

/* Starts `pbfcl run` with argv (NULL-terminated, after "run"), stdout to out_fd and stderr to
 * err; with pending, that signal is raised (blocked) before the program starts, as if it
 * came before the handlers were installed. */
static pid_t spawn_run(const char *const *argv, int out_fd, const char *err, int pending)
{
    const char *program = cli_program("run");
    const char *args[32] = {program, "run"};
    for (int k = 0; argv[k] && k < 29; k++)
        args[k + 2] = argv[k];
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid > 0)
        return pid;
    int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0 || dup2(out_fd, 1) < 0 || dup2(fd, 2) < 0)
        _exit(126);
    for (int other = 3; other < 1024; other++) /* e.g. the pipe's read end: not a reader */
        close(other);
    if (pending) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, pending);
        sigprocmask(SIG_BLOCK, &set, NULL);
        raise(pending); /* pending across exec until the program unblocks it */
    }
    execv(program, (char *const *)args);
    _exit(127);
}

/* Waits for pid and returns its exit status, failing the test if a signal killed it. */
static int exit_status(pid_t pid, const char *err)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    char text[16384];
    cli_read_text(err, text, sizeof text);
    printf("stderr:\n%s\n", text);
    ck_assert_msg(WIFEXITED(status), "pbfcl was killed by signal %d", WTERMSIG(status));
    return WEXITSTATUS(status);
}

/* A signal that comes before the handlers could act (here: raised before the program
 * started) stops the run before its first step, leaving no folder it created and no
 * checkpoint. Before, it stayed blocked and the run wrote everything; sent a moment after
 * the start it killed the run and left the export folders. */
START_TEST(early_signal_leaves_nothing)
{
    if (!cli_have_device())
        return;
    char top[128], frames[128], ckp[128], out[128], err[128], text[16384];
    snprintf(top, sizeof top, "%s/a", cli_dir);
    snprintf(frames, sizeof frames, "%s/a/b/frames", cli_dir);
    snprintf(ckp, sizeof ckp, "%s/early.ckp", cli_dir);
    snprintf(out, sizeof out, "%s/out", cli_dir);
    snprintf(err, sizeof err, "%s/err", cli_dir);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    ck_assert_int_ge(fd, 0);
    const char *const argv[] = {"--particles", "500",          "--steps", "5", "--export",
                                frames,        "--checkpoint", ckp,       NULL};
    pid_t pid = spawn_run(argv, fd, err, SIGTERM);
    close(fd);
    ck_assert_int_eq(exit_status(pid, err), 128 + SIGTERM);
    cli_read_text(out, text, sizeof text);
    ck_assert_contains(text, "stopped by SIGTERM before the first step");
    ck_assert_msg(!cli_exists(top), "%s was left behind", top);
    ck_assert(!cli_exists(ckp));
}
END_TEST

/* Standard output a pipe nobody reads (`pbfcl run | head` after head has gone): the run
 * stops as on SIGPIPE, exit 141 with a message on stderr, and leaves no folder. Before,
 * SIGPIPE killed it with no message. */
START_TEST(closed_stdout_stops_cleanly)
{
    if (!cli_have_device())
        return;
    char frames[128], err[128], text[16384];
    snprintf(frames, sizeof frames, "%s/frames", cli_dir);
    snprintf(err, sizeof err, "%s/err", cli_dir);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    close(fds[0]); /* the reader has gone */
    const char *const argv[] = {"--particles", "500",  "--steps", "100000",
                                "--export",    frames, NULL};
    pid_t pid = spawn_run(argv, fds[1], err, 0);
    close(fds[1]);
    ck_assert_int_eq(exit_status(pid, err), 128 + SIGPIPE);
    cli_read_text(err, text, sizeof text);
    ck_assert_contains(text, "stopped by SIGPIPE");
    ck_assert_msg(!cli_exists(frames), "%s was left behind", frames);
}
END_TEST

/* The reader of standard output goes away during the run (`pbfcl run | head -1`), then
 * Ctrl-C: the summary cannot be written, yet the run stops as on SIGINT (exit 130, the
 * checkpoint). Before, the last flush of standard output raised SIGPIPE and killed it. */
START_TEST(reader_gone_during_run)
{
    if (!cli_have_device())
        return;
    char ckp[128], csv[128], err[128];
    snprintf(ckp, sizeof ckp, "%s/gone.ckp", cli_dir);
    snprintf(csv, sizeof csv, "%s/gone.csv", cli_dir);
    snprintf(err, sizeof err, "%s/err", cli_dir);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    const char *const argv[] = {"--particles", "500",     "--steps", "100000", "--checkpoint",
                                ckp,           "--stats", csv,       NULL};
    pid_t pid = spawn_run(argv, fds[1], err, 0);
    close(fds[1]);
    for (int tries = 0; tries < 600; tries++) { /* until 3 steps are done, at most 60 s */
        nanosleep(&(struct timespec){0, 100000000}, NULL);
        if (cli_exists(csv) && cli_count_lines(csv) >= 4)
            break;
    }
    close(fds[0]); /* the reader goes */
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    ck_assert_int_eq(exit_status(pid, err), 128 + SIGINT);
    ck_assert(cli_exists(ckp));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_outputs");
    TCase *t = tcase_create("outputs");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, cli_setup, cli_teardown);
    tcase_add_test(t, outputs_never_collide);
    tcase_add_test(t, resumed_checkpoint_kept);
    tcase_add_test(t, read_only_checkpoint_kept);
    tcase_add_test(t, resume_keeps_other_runs_frames);
    tcase_add_test(t, stale_temporary_files_removed);
    tcase_add_test(t, early_signal_leaves_nothing);
    tcase_add_test(t, closed_stdout_stops_cleanly);
    tcase_add_test(t, reader_gone_during_run);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
