/* `pbfcl run --checkpoint` and `--resume` for scenes beyond plain fluid, from the outside: a
 * run of bodies, of still and moving obstacles, of an emitter and a drain, or of the fast
 * solver's warm-started coarse correction, stopped at a
 * checkpoint and resumed, writes the frames (and bodies.csv) byte for byte as the run that
 * was never stopped does (same device); a checkpoint pieced together from two is refused with
 * what differs. */
#include "cli_util.h"

#include <stdint.h>

/* Asserts that files a and b (what names them in the message) hold the same bytes. */
static void assert_same(const char *a, const char *b, const char *what)
{
    size_t la, lb;
    char *x = cli_slurp(a, &la), *y = cli_slurp(b, &lb);
    ck_assert_msg(la == lb && memcmp(x, y, la) == 0, "%s differs after the resume (%s, %s)", what,
                  a, b);
    free(x);
    free(y);
}

/* The vertex count in a PLY frame's header. */
static long ply_vertices(const char *path)
{
    size_t len;
    char *text = cli_slurp(path, &len);
    const char *v = strstr(text, "element vertex ");
    ck_assert_ptr_nonnull(v);
    long n = strtol(v + strlen("element vertex "), NULL, 10);
    free(text);
    return n;
}

#define STEPS 8
#define HALF 4

/* The statistics of the resumed run (a.csv's header, then the rows of steps HALF + 1 ..
 * STEPS) are the last rows of the straight run's, byte for byte. */
static void check_stats_tail(const char *a, const char *b)
{
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s.csv", a);
    snprintf(pb, sizeof pb, "%s.csv", b);
    size_t la, lb;
    char *x = cli_slurp(pa, &la), *y = cli_slurp(pb, &lb);
    const char *rows = strchr(y, '\n'); /* after the header */
    ck_assert_ptr_nonnull(rows);
    rows++;
    char first[32];
    snprintf(first, sizeof first, "\n%d,", HALF + 1);
    const char *tail = strstr(x, first);
    ck_assert_ptr_nonnull(tail);
    ck_assert_msg(!strcmp(tail + 1, rows), "the statistics after the resume differ:\n%s\n%s",
                  tail + 1, rows);
    ck_assert_int_eq(strncmp(x, y, (size_t)(rows - y)), 0); /* the same header */
    free(x);
    free(y);
}

/* Runs scene (with extra options) STEPS steps straight into DIR/a-tag, and HALF steps with a
 * checkpoint then resumed to STEPS into DIR/b-tag; every frame must be byte-identical (the
 * particles' positions, velocities, densities, ids and phases), the statistics of the
 * resumed steps, and bodies.csv too if bodies. Returns the vertex counts of frames 0, HALF and
 * STEPS in counts. */
static void check_resume(const char *tag, const char *scene, bool bodies, long counts[3])
{
    char a[128], b[128], ckp[128], args[1024], pa[256], pb[256];
    snprintf(a, sizeof a, "%s/a-%s", cli_dir, tag);
    snprintf(b, sizeof b, "%s/b-%s", cli_dir, tag);
    snprintf(ckp, sizeof ckp, "%s/%s.ckp", cli_dir, tag);
    cli_result r;
    snprintf(args, sizeof args, "run --scene %s --steps %d --export '%s' --stats '%s.csv' --quiet",
             scene, STEPS, a, a);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --scene %s --steps %d --export '%s' --checkpoint '%s' --quiet",
             scene, HALF, b, ckp);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps %d --export '%s' --stats '%s.csv'", ckp,
             STEPS, b, b);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_contains(r.out, "resumed from");
    for (int step = 0; step <= STEPS; step++) {
        char what[64];
        snprintf(pa, sizeof pa, "%s/frame_%05d.ply", a, step);
        snprintf(pb, sizeof pb, "%s/frame_%05d.ply", b, step);
        snprintf(what, sizeof what, "%s: frame %d", tag, step);
        assert_same(pa, pb, what);
        if (step % HALF == 0)
            counts[step / HALF] = ply_vertices(pa);
    }
    check_stats_tail(a, b);
    snprintf(pa, sizeof pa, "%s/bodies.csv", a);
    snprintf(pb, sizeof pb, "%s/bodies.csv", b);
    ck_assert_int_eq(access(pa, F_OK) == 0, bodies);
    if (bodies)
        assert_same(pa, pb, "bodies.csv");
}

/* Rigid bodies tumbling in a dam break: their rest shapes, poses, motions and stiffnesses
 * carry across the checkpoint. The bodies' row count of bodies.csv is checked by comparing
 * with the straight run's (no row repeated or missing). */
START_TEST(resume_with_bodies)
{
    if (!cli_have_device())
        return;
    long counts[3];
    check_resume("bodies", "dam-break-bodies --particles 3000", true, counts);
}
END_TEST

/* A soft body (stiffness below 1): its goal pull and pose carry across too. */
START_TEST(resume_with_soft_body)
{
    if (!cli_have_device())
        return;
    long counts[3];
    check_resume("soft", "soft-ball --particles 3000", true, counts);
}
END_TEST

/* The fast solver (one coarse correction a substep): its later substeps start the correction
 * from the last one's phi, which no checkpoint holds, so each frame's first substep starts
 * cold and a frame depends on its state alone. */
START_TEST(resume_with_warm_correction)
{
    if (!cli_have_device())
        return;
    long counts[3];
    check_resume("warm", "dam-break --particles 3000 --iterations 2 --multilevel 1 --cfl 1", false,
                 counts);
}
END_TEST

/* A still box, a sphere moving down and turning (a kinematic path that stops at 0.2 s, after
 * the checkpoint at 0.067 s) and a sphere on a keyed path that repeats every 0.1 s: the paths'
 * clock, keys and particles carry across. */
START_TEST(resume_with_obstacles)
{
    if (!cli_have_device())
        return;
    char scene[128];
    snprintf(scene, sizeof scene, "%s/obstacles.json", cli_dir);
    cli_write_file(
        scene,
        "{\"name\": \"obstacles-resume\", \"particle_radius\": 0.01,\n"
        " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.4, 0.4, 0.2]},\n"
        " \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.2, 0.15, 0.2]}],\n"
        " \"obstacles\": [{\"box\": {\"min\": [0.25, 0, 0.05], \"max\": [0.3, 0.1, 0.15]}},\n"
        "  {\"sphere\": {\"center\": [0.1, 0.3, 0.1], \"radius\": 0.03}, \"velocity\": [0, -0.5, "
        "0],\n"
        "   \"angular_velocity\": [0, 0, 3], \"until\": 0.2},\n"
        "  {\"sphere\": {\"center\": [0.3, 0.3, 0.1], \"radius\": 0.03}, \"path\": {\"keys\": [\n"
        "   {\"time\": 0.05, \"position\": [0, -0.05, 0], \"rotation\": [0, 0, 1]},\n"
        "   {\"time\": 0.1}], \"repeat\": true}}]}\n");
    long counts[3];
    check_resume("obstacles", scene, false, counts);
}
END_TEST

/* Collision shapes (colliders): a still sphere, a tilted box moving and turning through the
 * fluid, and the SDF of a closed OBJ cube sliding under it: the checkpoint holds their poses,
 * and every frame of the resumed run is the straight run's (a moving shape made again from
 * the scene at the checkpoint's time differed in the last bits). */
START_TEST(resume_with_colliders)
{
    if (!cli_have_device())
        return;
    char scene[128], cube[128];
    snprintf(scene, sizeof scene, "%s/colliders.json", cli_dir);
    snprintf(cube, sizeof cube, "%s/cube.obj", cli_dir);
    cli_write_file(cube, "v -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\n"
                         "v -1 -1 1\nv 1 -1 1\nv 1 1 1\nv -1 1 1\n"
                         "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\n"
                         "f 4 8 7\nf 4 7 3\nf 1 5 8\nf 1 8 4\nf 2 3 7\nf 2 7 6\n");
    cli_write_file(scene, "{\"name\": \"colliders-resume\", \"particle_radius\": 0.01,\n"
                          " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.4, 0.4, 0.2]},\n"
                          " \"fluid\": [{\"min\": [0, 0.2, 0], \"max\": [0.15, 0.35, 0.2]}],\n"
                          " \"colliders\": [{\"type\": \"sphere\", \"radius\": 0.05,\n"
                          "   \"position\": [0.08, 0.1, 0.1], \"friction\": 0.2},\n"
                          "  {\"type\": \"box\", \"half_extents\": [0.08, 0.01, 0.1],\n"
                          "   \"position\": [0.28, 0.08, 0.1], \"rotation\": [0, 0, 0.2, 1],\n"
                          "   \"velocity\": [-0.3, 0.2, 0], \"angular_velocity\": [0, 0, 1.3]},\n"
                          "  {\"type\": \"sdf\", \"file\": \"cube.obj\", \"scale\": 0.03,\n"
                          "   \"resolution\": 12, \"position\": [0.05, 0.03, 0.1],\n"
                          "   \"velocity\": [0.4, 0, 0], \"friction\": 0.3}]}\n");
    long counts[3];
    check_resume("colliders", scene, false, counts);
}
END_TEST

/* An emitter and a drain: the fluid block falls into the drain while the nozzle emits 1.5
 * layers a step, so particles leave and arrive on both sides of the checkpoint; the emitted
 * counts and the frames' ids (never reused) carry across. */
START_TEST(resume_with_flow)
{
    if (!cli_have_device())
        return;
    char scene[128];
    snprintf(scene, sizeof scene, "%s/flow.json", cli_dir);
    cli_write_file(
        scene, "{\"name\": \"flow-resume\", \"particle_radius\": 0.01,\n"
               " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.4, 0.4, 0.2]},\n"
               " \"fluid\": [{\"min\": [0.2, 0.1, 0], \"max\": [0.4, 0.2, 0.2]}],\n"
               " \"emitters\": [{\"center\": [0.1, 0.3, 0.1], \"radius\": 0.03,\n"
               "   \"velocity\": [2, 0, 0], \"rate\": 800, \"count\": 400}],\n"
               " \"drains\": [{\"box\": {\"min\": [0.3, 0, 0], \"max\": [0.4, 0.15, 0.2]}}]}\n");
    long counts[3];
    check_resume("flow", scene, false, counts);
    /* the flow is real: the count changed before and after the checkpoint */
    ck_assert_int_ne(counts[0], counts[1]);
    ck_assert_int_ne(counts[1], counts[2]);
}
END_TEST

/* A run resumed twice from one checkpoint: the second resume cuts the rows the first wrote
 * after the checkpoint's step from bodies.csv, so the file holds each exported step once. */
START_TEST(resume_twice_cuts_bodies_csv)
{
    if (!cli_have_device())
        return;
    char a[128], b[128], ckp[128], args[1024], pa[256], pb[256];
    snprintf(a, sizeof a, "%s/a", cli_dir);
    snprintf(b, sizeof b, "%s/b", cli_dir);
    snprintf(ckp, sizeof ckp, "%s/twice.ckp", cli_dir);
    cli_result r;
    const char *scene = "dam-break-bodies --particles 2000";
    snprintf(args, sizeof args, "run --scene %s --steps 6 --export '%s' --quiet", scene, a);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --scene %s --steps 2 --export '%s' --checkpoint '%s' --quiet",
             scene, b, ckp);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 4 --export '%s' --quiet", ckp, b);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(args, sizeof args, "run --resume '%s' --steps 6 --export '%s' --quiet", ckp, b);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    snprintf(pa, sizeof pa, "%s/bodies.csv", a);
    snprintf(pb, sizeof pb, "%s/bodies.csv", b);
    assert_same(pa, pb, "bodies.csv resumed twice");
}
END_TEST

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

/* Writes DIR/out.ckp: checkpoint into with its "scene" section taken from checkpoint from. */
static void splice_scene(const char *into, const char *from, const char *out)
{
    size_t li, lf, bi, bf;
    char *di = cli_slurp(into, &li), *df = cli_slurp(from, &lf);
    size_t oi = find_section(di, li, "scene", &bi), of = find_section(df, lf, "scene", &bf);
    ck_assert_uint_eq(bi, bf);
    memcpy(di + oi, df + of, bi);
    reseal(di, li);
    cli_spit(out, di, li);
    free(di);
    free(df);
}

/* Bad input: a checkpoint whose scene description is of another scene, or of the same scene
 * with a body fewer, is refused before the run with what differs (the unspliced one
 * resumes), and one of an older format with the format and what to do. */
START_TEST(mismatched_checkpoint_refused)
{
    if (!cli_have_device())
        return;
    char two[128], one[128], c2[128], c1[128], cs[128], bad[128], args[1024];
    const char *body = "{\"box\": {\"min\": [%s, 0.02, 0.02], \"max\": [%s, 0.08, 0.08]}, "
                       "\"density\": 500}";
    char b0[160], b1[160];
    snprintf(b0, sizeof b0, body, "0.02", "0.08");
    snprintf(b1, sizeof b1, body, "0.12", "0.18");
    char text[1024];
    const char *head = "{\"name\": \"bodies-resume\", \"particle_radius\": 0.01,\n"
                       " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.2, 0.2, 0.1]},\n"
                       " \"fluid\": [{\"min\": [0, 0.1, 0], \"max\": [0.2, 0.15, 0.1]}],\n";
    snprintf(two, sizeof two, "%s/two.json", cli_dir);
    snprintf(one, sizeof one, "%s/one.json", cli_dir);
    snprintf(text, sizeof text, "%s \"bodies\": [%s, %s]}\n", head, b0, b1);
    cli_write_file(two, text);
    snprintf(text, sizeof text, "%s \"bodies\": [%s]}\n", head, b0);
    cli_write_file(one, text);
    snprintf(c2, sizeof c2, "%s/two.ckp", cli_dir);
    snprintf(c1, sizeof c1, "%s/one.ckp", cli_dir);
    snprintf(cs, sizeof cs, "%s/soft.ckp", cli_dir);
    snprintf(bad, sizeof bad, "%s/bad.ckp", cli_dir);
    cli_result r;
    const char *files[3][2] = {{two, c2}, {one, c1}, {"soft-ball --particles 2000", cs}};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "run --scene %s --steps 1 --checkpoint '%s' --quiet",
                 files[k][0], files[k][1]);
        cli_run(&r, args);
        ck_assert_int_eq(r.code, 0);
    }
    splice_scene(c2, c1, bad); /* the same scene with body 1 left out */
    snprintf(args, sizeof args, "run --resume '%s' --steps 2", bad);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "its scene 'bodies-resume' has 1 body but its solver state holds 2");
    ck_assert_contains(r.err, "resume a checkpoint written whole");
    splice_scene(c2, cs, bad); /* another scene altogether */
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "is of scene 'bodies-resume' but holds the description of scene "
                              "'soft-ball'");
    splice_scene(c2, c2, bad); /* the splice itself leaves a good checkpoint good */
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    size_t len;
    char *data = cli_slurp(c2, &len); /* a file of format 2, before bodies were saved */
    data[8] = 2;
    reseal(data, len);
    cli_spit(bad, data, len);
    free(data);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 2);
    ck_assert_contains(r.err, "has format version 2 (written by pbfcl ");
    ck_assert_contains(r.err, "reads version 8: resume it with the pbfcl that wrote it");
}
END_TEST

/* Checkpoints of format 4 (pbfcl 0.2), 5 (before the shapes were saved and the scene's
 * colliders had a resolution), 6 (before the inflatables) and 7 (before the attachments and the
 * tear limits) are refused at their header with the format and what to do, before anything is read
 * past it. */
START_TEST(old_formats_refused)
{
    if (!cli_have_device())
        return;
    char two[128], c2[128], args[1024];
    snprintf(two, sizeof two, "%s/two.json", cli_dir);
    cli_write_file(two, "{\"name\": \"old\", \"particle_radius\": 0.01,\n"
                        " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.2, 0.2, 0.1]},\n"
                        " \"fluid\": [{\"min\": [0, 0.1, 0], \"max\": [0.2, 0.15, 0.1]}]}\n");
    snprintf(c2, sizeof c2, "%s/old.ckp", cli_dir);
    cli_result r;
    snprintf(args, sizeof args, "run --scene %s --steps 1 --checkpoint '%s' --quiet", two, c2);
    cli_run(&r, args);
    ck_assert_int_eq(r.code, 0);
    for (char format = 4; format <= 7; format++) {
        size_t len;
        char *data = cli_slurp(c2, &len);
        data[8] = format; /* the format, little-endian */
        reseal(data, len);
        char old[128], want[64];
        snprintf(old, sizeof old, "%s/old%d.ckp", cli_dir, format);
        cli_spit(old, data, len);
        free(data);
        snprintf(args, sizeof args, "run --resume '%s' --steps 2 --quiet", old);
        cli_run(&r, args);
        ck_assert_int_eq(r.code, 2);
        snprintf(want, sizeof want, "has format version %d (written by pbfcl ", format);
        ck_assert_contains(r.err, want);
        ck_assert_contains(r.err, "reads version 8: resume it with the pbfcl that wrote it, or "
                                  "run the scene again with --checkpoint");
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_resume");
    TCase *t = tcase_create("resume");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, cli_setup, cli_teardown);
    tcase_add_test(t, resume_with_bodies);
    tcase_add_test(t, resume_with_soft_body);
    tcase_add_test(t, resume_with_warm_correction);
    tcase_add_test(t, resume_with_obstacles);
    tcase_add_test(t, resume_with_colliders);
    tcase_add_test(t, resume_with_flow);
    tcase_add_test(t, resume_twice_cuts_bodies_csv);
    tcase_add_test(t, mismatched_checkpoint_refused);
    tcase_add_test(t, old_formats_refused);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
