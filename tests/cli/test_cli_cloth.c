/* The built-in cloth, rope and inflatable scenes through `pbfcl run`: the cloth of cloth-drape
 * falls onto the static sphere and stays outside it, the rope of rope-bridge keeps its pinned
 * ends and sags under the cube, the flag of flag streams downwind in its wind and hangs without
 * it, the balloon of water-balloon floats round, and no position or velocity is NaN (the frames
 * --export writes). */
#include "cli_util.h"

#include <math.h>
#include <stdint.h>

/* One PLY vertex as pbfcl writes it: x y z vx vy vz density id phase body. */
typedef struct vertex {
    float x[3], v[3], density;
    uint32_t id, phase;
    int32_t body;
} vertex;

_Static_assert(sizeof(vertex) == 40, "a PLY vertex");

/* The vertices of frame path, by id (ids 0 .. n - 1), into a malloc'ed array; *n their count.
 * Fails the test on a NaN or infinite position or velocity. */
static vertex *read_frame(const char *path, size_t *n)
{
    size_t len = 0;
    char *buf = cli_slurp(path, &len);
    const char *count = strstr(buf, "element vertex "), *end = strstr(buf, "end_header\n");
    ck_assert_msg(count && end, "%s: not a PLY file of pbfcl", path);
    *n = strtoul(count + 15, NULL, 10);
    size_t at = (size_t)(end - buf) + 11;
    ck_assert_uint_eq(len - at, *n * sizeof(vertex));
    vertex *v = malloc(*n * sizeof *v);
    for (size_t i = 0; i < *n; i++) {
        vertex u;
        memcpy(&u, buf + at + i * sizeof u, sizeof u);
        for (int k = 0; k < 3; k++)
            ck_assert_msg(isfinite(u.x[k]) && isfinite(u.v[k]), "%s: particle %u is not finite",
                          path, u.id);
        ck_assert_uint_lt(u.id, *n);
        v[u.id] = u;
    }
    free(buf);
    return v;
}

/* Runs scene for steps (with more options, e.g. "--drag 0") and reads its last frame. */
static vertex *run_scene_with(const char *scene, int steps, const char *more, size_t *n)
{
    char args[512], frame[160];
    snprintf(args, sizeof args,
             "run --scene %s --steps %d --export '%s' --every %d --quiet --force %s", scene, steps,
             cli_dir, steps, more);
    cli_result r;
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "pbfcl %s: exit %d: %s", args, r.code, r.err);
    snprintf(frame, sizeof frame, "%s/frame_%05d.ply", cli_dir, steps);
    return read_frame(frame, n);
}

static vertex *run_scene(const char *scene, int steps, size_t *n)
{
    return run_scene_with(scene, steps, "", n);
}

/* After 1.5 s the cloth (the last 441 particles: 21 x 21) has fallen from 0.4 m onto the
 * sphere (centre (0.3, 0.2, 0.3), radius 0.1 m): every cloth particle is outside the sphere
 * (farther than its radius from the centre), and the cloth came down (its highest particle
 * below 0.35 m). */
START_TEST(cloth_drape_stays_outside_the_sphere)
{
    if (!cli_have_device())
        return;
    size_t n = 0;
    vertex *v = run_scene("cloth-drape", 90, &n);
    ck_assert_uint_gt(n, 441);
    float top = 0.0f;
    for (size_t i = n - 441; i < n; i++) {
        double dx = v[i].x[0] - 0.3, dy = v[i].x[1] - 0.2, dz = v[i].x[2] - 0.3;
        double d = sqrt(dx * dx + dy * dy + dz * dz);
        ck_assert_msg(d > 0.1,
                      "cloth particle %zu at (%g, %g, %g) is inside the sphere (%g m "
                      "from its centre)",
                      i, v[i].x[0], v[i].x[1], v[i].x[2], d);
        top = fmaxf(top, v[i].x[1]);
    }
    ck_assert_msg(top < 0.35f, "the cloth did not fall: its top is at %g m", top);
    free(v);
}
END_TEST

/* After 1 s the rope (the last 41 particles) keeps its pinned ends at (0.1, 0.4, 0.2) and
 * (0.9, 0.4, 0.2) (within 1e-6 m: where the scene put them) and its middle has sagged below them.
 */
START_TEST(rope_bridge_holds_its_ends)
{
    if (!cli_have_device())
        return;
    size_t n = 0;
    vertex *v = run_scene("rope-bridge", 60, &n);
    ck_assert_uint_gt(n, 41);
    const vertex *first = &v[n - 41], *last = &v[n - 1], *mid = &v[n - 21];
    ck_assert_float_eq_tol(first->x[0], 0.1f, 1e-6f);
    ck_assert_float_eq_tol(first->x[1], 0.4f, 1e-6f);
    ck_assert_float_eq_tol(last->x[0], 0.9f, 1e-6f);
    ck_assert_float_eq_tol(last->x[1], 0.4f, 1e-6f);
    ck_assert_msg(mid->x[1] < 0.39f, "the rope's middle is at %g m: it did not sag", mid->x[1]);
    free(v);
}
END_TEST

/* The flag (the last 16 x 11 particles, particle (i, j) at (0.15, 0.3 + 0.02 j, 0.1 + 0.02 i)
 * at the start, across the wind) after 1 s: its free particles' mean x (0.15 at the start) moved
 * more than 0.1 m downwind (+x), the pole (i = 0) is where the scene put it within 1e-6 m; with
 * drag and lift 0 the flag only hangs: its mean x moved less than 1 mm. */
static double flag_mean_x(const vertex *v, size_t n)
{
    ck_assert_uint_gt(n, 176);
    double sum = 0.0;
    for (int j = 0; j < 11; j++)
        for (int i = 0; i < 16; i++) {
            const vertex *p = &v[n - 176 + (size_t)(16 * j + i)];
            if (i > 0) {
                sum += p->x[0] / 165.0;
                continue;
            }
            ck_assert_float_eq_tol(p->x[0], 0.15f, 1e-6f);
            ck_assert_float_eq_tol(p->x[1], 0.3f + 0.02f * (float)j, 1e-6f);
            ck_assert_float_eq_tol(p->x[2], 0.1f, 1e-6f);
        }
    return sum;
}

START_TEST(flag_streams_downwind)
{
    if (!cli_have_device())
        return;
    size_t n = 0;
    vertex *v = run_scene("flag", 60, &n);
    double windy = flag_mean_x(v, n) - 0.15;
    free(v);
    v = run_scene_with("flag", 60, "--drag 0 --lift 0", &n);
    double still = flag_mean_x(v, n) - 0.15;
    free(v);
    printf("  flag: the mean x moved %.4f m in the wind, %.6f m without\n", windy, still);
    ck_assert_msg(windy > 0.1, "the flag moved %g m downwind; want more than 0.1 m", windy);
    ck_assert_msg(fabs(still) < 1e-3, "without air the flag moved %g m along x", still);
}
END_TEST

/* After 1 s of water-balloon the balloon (the last 162 particles) has fallen from 0.55 m into
 * the 0.2 m pool and floats: its centre between 0.15 and 0.3 m up, its particles' mean
 * distance from the centre within 5 % of its 8 cm radius (the gas holds its volume) and none of
 * them dented inward by more than the shell's particle spacing. */
START_TEST(water_balloon_floats)
{
    if (!cli_have_device())
        return;
    size_t n = 0;
    vertex *v = run_scene("water-balloon", 60, &n);
    ck_assert_uint_gt(n, 162);
    double c[3] = {0, 0, 0}, r = 0.0;
    for (size_t i = n - 162; i < n; i++)
        for (int k = 0; k < 3; k++)
            c[k] += v[i].x[k] / 162.0;
    for (size_t i = n - 162; i < n; i++)
        r += sqrt(pow(v[i].x[0] - c[0], 2) + pow(v[i].x[1] - c[1], 2) + pow(v[i].x[2] - c[2], 2)) /
             162.0;
    ck_assert_msg(c[1] > 0.15 && c[1] < 0.3, "the balloon's centre is %g m up", c[1]);
    ck_assert_msg(fabs(r / 0.08 - 1.0) < 0.05, "the balloon's mean radius is %g m", r);
    /* no dent: every shell particle within one particle spacing (an icosahedron's edge, 1.0515
     * R, halved by each of the 2 subdivisions) of the mean radius */
    double spacing = 1.0515 * 0.08 / 4.0, least = r;
    for (size_t i = n - 162; i < n; i++)
        least = fmin(least, sqrt(pow(v[i].x[0] - c[0], 2) + pow(v[i].x[1] - c[1], 2) +
                                 pow(v[i].x[2] - c[2], 2)));
    printf("  water-balloon: mean radius %.4f m, the nearest shell particle %.4f m from the centre "
           "(spacing %.4f m)\n",
           r, least, spacing);
    ck_assert_msg(least > r - spacing, "a shell particle is dented %.4f m inside the mean radius",
                  r - least);
    free(v);
}
END_TEST

/* A run of scene stopped at step 30 (--checkpoint) and resumed to 60 writes the same last frame,
 * byte for byte, as one run to 60: the state keeps the groups, the constraints, the
 * triangles the wind acts on and the inflatables. */
static void resumes(const char *scene)
{
    char args[512], a[160], b[160];
    cli_result r;
    snprintf(args, sizeof args, "run --scene %s --steps 30 --checkpoint '%s/c.state' --quiet",
             scene, cli_dir);
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "%s: %s", args, r.err);
    snprintf(args, sizeof args,
             "run --resume '%s/c.state' --steps 60 --export '%s/a' --every 60 --quiet --force",
             cli_dir, cli_dir);
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "%s: %s", args, r.err);
    snprintf(args, sizeof args,
             "run --scene %s --steps 60 --export '%s/b' --every 60 --quiet --force", scene,
             cli_dir);
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "%s: %s", args, r.err);
    snprintf(a, sizeof a, "%s/a/frame_00060.ply", cli_dir);
    snprintf(b, sizeof b, "%s/b/frame_00060.ply", cli_dir);
    ck_assert_msg(cli_same_bytes(a, b), "%s: the resumed run differs from the whole one", scene);
}

START_TEST(cloth_drape_resumes_where_it_stopped)
{
    if (cli_have_device())
        resumes("cloth-drape");
}
END_TEST

START_TEST(water_balloon_resumes)
{
    if (cli_have_device())
        resumes("water-balloon");
}
END_TEST

START_TEST(flag_resumes_in_the_wind)
{
    if (cli_have_device())
        resumes("flag");
}
END_TEST

/* A self-colliding cloth (its phases carry the flag on the device, not in the API's phases)
 * checkpointed and resumed: the state loads (its check takes the flag) and runs on as one run. */
START_TEST(self_colliding_cloth_resumes)
{
    if (!cli_have_device())
        return;
    char scene[160];
    snprintf(scene, sizeof scene, "%s/fold.json", cli_dir);
    cli_write_file(scene,
                   "{\"name\": \"fold\", \"particle_radius\": 0.01,\n"
                   " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.6, 0.6, 0.6]},\n"
                   " \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.6, 0.02, 0.6]}],\n"
                   " \"cloth\": [{\"corner\": [0.1, 0.3, 0.1], \"u\": [0.4, 0, 0], \"v\": [0, 0.2, "
                   "0.4],\n  \"resolution\": [21, 21], \"mass\": 0.2, \"self_collide\": true}]}\n");
    resumes(scene);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_cloth");
    TCase *t = tcase_create("cloth");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, cli_setup, cli_teardown);
    tcase_add_test(t, cloth_drape_stays_outside_the_sphere);
    tcase_add_test(t, rope_bridge_holds_its_ends);
    tcase_add_test(t, flag_streams_downwind);
    tcase_add_test(t, cloth_drape_resumes_where_it_stopped);
    tcase_add_test(t, flag_resumes_in_the_wind);
    tcase_add_test(t, water_balloon_floats);
    tcase_add_test(t, water_balloon_resumes);
    tcase_add_test(t, self_colliding_cloth_resumes);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
