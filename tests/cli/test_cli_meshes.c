/* The cloth and colliders of `pbfcl run --export` from the outside: a mesh file's faces are the
 * API's triangles of the same scene, and shapes.csv's rows the poses and velocities the API
 * reports for it stepped as far; a run resumed from a checkpoint writes the meshes (their
 * triangles in the saved state) and the collection byte for byte as the whole run does,
 * and shapes.csv's rows to float rounding; a folder holding another run's shapes.csv, and a
 * --stats file that is one of the mesh or shape files, are refused before anything runs. (The
 * files' content as readers see it: check_export_meshes.py.) */
#include "cli_util.h"
#include "pbfcl.h"

#include <math.h>
#include <stdint.h>

/* A small cloth falling onto a sphere collider beside a box collider that rises and turns. */
static const char scene_text[] =
    "{\"name\": \"cloth-shapes\", \"domain\": {\"min\": [0, 0, 0], \"max\": [0.6, 0.5, 0.4]},\n"
    " \"particle_radius\": 0.01, \"fluid\": [{\"min\": [0, 0, 0], \"max\": [0.1, 0.1, 0.1]}],\n"
    " \"cloth\": [{\"corner\": [0.1, 0.3, 0.1], \"u\": [0.2, 0, 0], \"v\": [0, 0, 0.2],\n"
    "   \"resolution\": [11, 11], \"mass\": 0.05}],\n"
    " \"colliders\": [{\"type\": \"sphere\", \"radius\": 0.06, \"position\": [0.2, 0.15, 0.2],\n"
    "   \"velocity\": [0.1, 0, 0]},\n"
    "  {\"type\": \"box\", \"half_extents\": [0.04, 0.05, 0.1], \"position\": [0.45, 0.05, 0.2],\n"
    "   \"velocity\": [0, 0.2, 0], \"angular_velocity\": [0, 2, 0]}]}\n";

static void write_scene(char *path, size_t size)
{
    snprintf(path, size, "%s/scene.json", cli_dir);
    cli_write_file(path, scene_text);
}

/* The value of column col (0-based) of the row of step and shape in a shapes.csv text. */
static double csv_value(const char *text, int step, int shape, int col)
{
    char head[32];
    snprintf(head, sizeof head, "\n%d,", step);
    for (const char *row = strstr(text, head); row; row = strchr(row + 1, '\n')) {
        row++;
        if (strtol(row, NULL, 10) != step)
            break;
        const char *c = row;
        for (int k = 0; k < 2; k++)
            c = strchr(c, ',') + 1;
        if (strtol(c, NULL, 10) != shape)
            continue;
        for (int k = 2; k < col; k++)
            c = strchr(c, ',') + 1;
        return strtod(c, NULL);
    }
    ck_abort_msg("shapes.csv has no row for step %d, shape %d", step, shape);
    return 0.0;
}

/* The run's mesh_00000.ply holds the solver's triangles: as many faces, each the particles (by
 * the vertices' ids: a particle's index at step 0) of the same triangle. */
static void assert_mesh_faces(pbfcl_solver *s)
{
    size_t nt = 0, len;
    ck_assert_int_eq(pbfcl_solver_triangle_count(s, &nt), PBFCL_OK);
    ck_assert_uint_eq(nt, 200); /* 11 x 11 particles, two triangles per cell */
    unsigned *tri = malloc(3 * nt * sizeof *tri);
    ck_assert_int_eq(pbfcl_solver_get_triangles(s, tri, nt), PBFCL_OK);
    char path[256];
    snprintf(path, sizeof path, "%s/e/mesh_00000.ply", cli_dir);
    char *buf = cli_slurp(path, &len);
    const char *v = strstr(buf, "element vertex "), *f = strstr(buf, "element face ");
    const char *end = strstr(buf, "end_header\n");
    ck_assert_msg(v && f && end, "%s: not a PLY mesh of pbfcl", path);
    size_t nv = strtoul(v + 15, NULL, 10), faces = strtoul(f + 13, NULL, 10);
    ck_assert_uint_eq(faces, nt);
    ck_assert_uint_eq(nv, 121);
    const unsigned char *body = (const unsigned char *)end + 11;
    ck_assert_uint_eq(len - (size_t)(body - (const unsigned char *)buf), nv * 16 + faces * 13);
    for (size_t t = 0; t < faces; t++) {
        const unsigned char *rec = body + nv * 16 + t * 13;
        ck_assert_uint_eq(rec[0], 3);
        for (int k = 0; k < 3; k++) {
            int32_t index;
            uint32_t id;
            memcpy(&index, rec + 1 + 4 * k, 4);
            ck_assert(index >= 0 && (size_t)index < nv);
            memcpy(&id, body + 16 * (size_t)index + 12, 4);
            ck_assert_msg(id == tri[3 * t + k], "face %zu corner %d: particle %u, triangle's %u", t,
                          k, id, tri[3 * t + k]);
        }
    }
    free(buf);
    free(tri);
}

/* Steps of 1/60 s after which the run exports a row (the run's frames). */
#define STEPS 6
#define EVERY 3

START_TEST(shapes_csv_matches_api)
{
    if (!cli_have_device())
        return;
    char scene[128], args[512], csv[256];
    write_scene(scene, sizeof scene);
    snprintf(args, sizeof args, "run --scene '%s' --steps %d --every %d --export '%s/e' --quiet",
             scene, STEPS, EVERY, cli_dir);
    cli_result r;
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "pbfcl %s: %s", args, r.err);
    snprintf(csv, sizeof csv, "%s/e/shapes.csv", cli_dir);
    size_t len;
    char *text = cli_slurp(csv, &len);

    /* the same scene through the API */
    pbfcl_scene_setup *setup;
    ck_assert_int_eq(pbfcl_scene_setup_load(scene, &setup), PBFCL_OK);
    float *pos;
    size_t n;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &pos, &n), PBFCL_OK);
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    pbfcl_context *ctx;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &cd, &ctx), PBFCL_OK);
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    sd.capacity = n;
    ck_assert_int_eq(pbfcl_scene_setup_get_params(setup, &sd.scene, &sd.solver), PBFCL_OK);
    pbfcl_solver *s;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &sd, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(setup, s), PBFCL_OK);
    assert_mesh_faces(s);
    int count;
    ck_assert_int_eq(pbfcl_shape_count(s, &count), PBFCL_OK);
    ck_assert_int_eq(count, 2);
    for (int step = 0; step <= STEPS; step++) {
        if (step > 0)
            ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        if (step % EVERY)
            continue;
        for (int i = 0; i < count; i++) {
            int id;
            float p[3], q[4];
            pbfcl_shape_info info;
            ck_assert_int_eq(pbfcl_shape_id(s, i, &id), PBFCL_OK);
            ck_assert_int_eq(pbfcl_shape_get_pose(s, id, p, q), PBFCL_OK);
            ck_assert_int_eq(pbfcl_shape_get_info(s, id, &info), PBFCL_OK);
            float want[13] = {p[0], p[1], p[2], q[0], q[1], q[2], q[3]};
            memcpy(want + 7, info.velocity, sizeof info.velocity);
            memcpy(want + 10, info.angular_velocity, sizeof info.angular_velocity);
            for (int c = 0; c < 13; c++) {
                double got = csv_value(text, step, i, 4 + c);
                ck_assert_msg(fabs(got - want[c]) <= 1e-6 * (1.0 + fabs(want[c])),
                              "step %d shape %d column %d: shapes.csv %.9g, the API %.9g", step, i,
                              4 + c, got, (double)want[c]);
            }
        }
    }
    ck_assert_int_eq(cli_count(text, "\n"), 1 + count * (STEPS / EVERY + 1)); /* header + rows */
    ck_assert_int_eq(cli_count(text, ",sphere,"), STEPS / EVERY + 1);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
    pbfcl_scene_setup_destroy(setup);
    pbfcl_free(pos);
    free(text);
}
END_TEST

/* A run stopped with a checkpoint at step 4 and resumed to 6 writes what the whole run does:
 * every mesh with its triangles (which the saved state keeps: without them the resumed meshes
 * had none), the collection, and shapes.csv's rows (those after the checkpoint's step that the
 * stopped run never wrote, and none twice). */
START_TEST(meshes_resume_byte_for_byte)
{
    if (!cli_have_device())
        return;
    char scene[128], args[512], a[256], b[256];
    write_scene(scene, sizeof scene);
    cli_result r;
    snprintf(args, sizeof args,
             "run --scene '%s' --steps 6 --export '%s/a' --format vtk --every 2 --quiet", scene,
             cli_dir);
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "%s: %s", args, r.err);
    snprintf(args, sizeof args,
             "run --scene '%s' --steps 4 --export '%s/b' --format vtk --every 2 --checkpoint "
             "'%s/c.state' --quiet",
             scene, cli_dir, cli_dir);
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "%s: %s", args, r.err);
    snprintf(args, sizeof args,
             "run --resume '%s/c.state' --steps 6 --export '%s/b' --format vtk --every 2 "
             "--quiet",
             cli_dir, cli_dir);
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "%s: %s", args, r.err);
    const char *files[] = {"mesh_00000.vtp", "mesh_00004.vtp", "mesh_00006.vtp",
                           "frames.pvd",     "shape_00.obj",   "shape_01.obj"};
    for (int i = 0; i < 6; i++) {
        snprintf(a, sizeof a, "%s/a/%s", cli_dir, files[i]);
        snprintf(b, sizeof b, "%s/b/%s", cli_dir, files[i]);
        ck_assert_msg(cli_same_bytes(a, b), "%s of the resumed run differs", files[i]);
    }
    /* the moving shapes are made again where their velocities carried them by the
     * checkpoint's time: the same rows, equal within float rounding (docs/SCENES.md) */
    snprintf(a, sizeof a, "%s/a/shapes.csv", cli_dir);
    snprintf(b, sizeof b, "%s/b/shapes.csv", cli_dir);
    size_t la, lb;
    char *x = cli_slurp(a, &la), *y = cli_slurp(b, &lb);
    ck_assert_int_eq(cli_count(x, "\n"), cli_count(y, "\n"));
    ck_assert_int_eq(cli_count(x, "\n"), 1 + 2 * 4); /* steps 0, 2, 4, 6; two shapes */
    for (int step = 0; step <= 6; step += 2)
        for (int shape = 0; shape < 2; shape++)
            for (int col = 4; col < 17; col++) {
                double u = csv_value(x, step, shape, col), v = csv_value(y, step, shape, col);
                ck_assert_msg(fabs(u - v) <= 1e-6,
                              "shapes.csv step %d shape %d column %d: %.9g "
                              "whole, %.9g resumed",
                              step, shape, col, u, v);
            }
    free(x);
    free(y);
}
END_TEST

/* Refused before the run, naming the file: a folder holding another run's shapes.csv (unless
 * --force), a --stats file that a mesh or shapes.csv of the export would be. */
START_TEST(mesh_outputs_refused)
{
    char scene[128], args[512], path[256];
    write_scene(scene, sizeof scene);
    cli_result r;
    snprintf(path, sizeof path, "%s/old", cli_dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/old/shapes.csv", cli_dir);
    cli_write_file(path, "step,time\n");
    snprintf(args, sizeof args, "run --scene '%s' --steps 1 --export '%s/old' --quiet", scene,
             cli_dir);
    cli_run(&r, args);
    ck_assert_int_ne(r.code, 0);
    ck_assert_contains(r.err, "already holds shapes.csv of another run");
    ck_assert_contains(r.err, "--force");
    const char *taken[2] = {"shapes.csv", "mesh_00000.ply"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args,
                 "run --scene '%s' --steps 1 --export '%s/new' --stats '%s/new/%s' --quiet", scene,
                 cli_dir, cli_dir, taken[i]);
        cli_run(&r, args);
        ck_assert_int_ne(r.code, 0);
        ck_assert_contains(r.err, taken[i]);
        ck_assert_contains(r.err, "is a file that --export");
    }
    if (!cli_have_device())
        return;
    snprintf(args, sizeof args, "run --scene '%s' --steps 1 --export '%s/old' --force --quiet",
             scene, cli_dir);
    cli_run(&r, args);
    ck_assert_msg(r.code == 0, "--force: %s", r.err);
    size_t len;
    char *text = cli_slurp(path, &len);
    ck_assert_msg(!strncmp(text, "step,time,shape,type,", 21), "shapes.csv not replaced: %s", text);
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_meshes");
    TCase *t = tcase_create("meshes");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, cli_setup, cli_teardown);
    tcase_add_test(t, shapes_csv_matches_api);
    tcase_add_test(t, meshes_resume_byte_for_byte);
    tcase_add_test(t, mesh_outputs_refused);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
