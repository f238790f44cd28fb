/* The state a simulation carries across frames: persistent particle ids that follow each
 * particle through the spatial sort, and (see checkpoint tests) saving and restoring it. */
#include "checkpoint.h"
#include "sim.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small dam break: a column of particles in the corner of a box. */
static float *small_dam(pbfcl_scene *s, size_t *n)
{
    pbfcl_scene_defaults(s);
    snprintf(s->name, sizeof s->name, "ids");
    s->particle_radius = 0.02f;
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = 0.0f;
        s->domain_max[a] = a == 1 ? 0.6f : 0.4f;
    }
    s->fluid_count = 1;
    s->fluid[0].kind = PBFCL_SHAPE_BOX;
    for (int a = 0; a < 3; a++) {
        s->fluid[0].min[a] = 0.0f;
        s->fluid[0].max[a] = a == 1 ? 0.4f : 0.16f;
    }
    float *pos = NULL;
    ck_assert_int_eq(pbfcl_scene_fill(s, &pos, n), PBFCL_OK);
    return pos;
}

/* After a few frames of a dam break (every substep sorts the particles, so their order
 * changes), the ids are a permutation of 0..n-1 and the particle read with id k is the one
 * that started at position k: it moved less than its speed allows. Fails if the ids are not
 * reordered with the particles (ids stay 0..n-1 while the positions are permuted). */
static void check_ids_follow(pbfcl_cl *cl)
{
    pbfcl_scene s;
    size_t n;
    float *start = small_dam(&s, &n);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, start, n), PBFCL_OK);
    int frames = 3;
    for (int f = 0; f < frames; f++)
        ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    unsigned *ids = malloc(n * sizeof *ids);
    float *pos = malloc(n * 3 * sizeof *pos), *vel = malloc(n * 3 * sizeof *vel);
    char *seen = calloc(n, 1);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, ids), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read(sim, pos, vel, NULL), PBFCL_OK);
    size_t moved_in_order = 0;
    double t = frames * s.solver.dt, g = 9.81;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(ids[i] < n, "id %u of particle %zu is not below n = %zu", ids[i], i, n);
        ck_assert_msg(!seen[ids[i]], "id %u appears twice", ids[i]);
        seen[ids[i]] = 1;
        moved_in_order += ids[i] != i;
        double d2 = 0.0;
        for (int a = 0; a < 3; a++) {
            double d = (double)pos[3 * i + a] - start[3 * ids[i] + a];
            d2 += d * d;
        }
        /* free fall from rest for t, with room for the solver's pushes: 2 * g t^2 / 2 + 2r */
        double bound = g * t * t + 2.0 * s.particle_radius;
        ck_assert_msg(sqrt(d2) <= bound, "particle id %u moved %.4f m in %.3f s (bound %.4f m)",
                      ids[i], sqrt(d2), t, bound);
    }
    ck_assert_msg(moved_in_order > n / 2,
                  "the sort left %zu of %zu particles in place; the test "
                  "needs a reordered state",
                  n - moved_in_order, n);
    fprintf(stderr, "    %zu particles, %zu of them away from their initial index\n", n,
            moved_in_order);
    free(seen);
    free(ids);
    free(pos);
    free(vel);
    free(start);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_ids_follow_particles)
{
    test_each_device(check_ids_follow);
}
END_TEST

/* Reads positions, velocities, densities and ids into one buffer for a bitwise comparison. */
static unsigned char *snapshot(pbfcl_sim *sim, size_t *bytes)
{
    size_t n = pbfcl_sim_count(sim);
    *bytes = n * (3 + 3 + 1 + 1) * 4;
    unsigned char *b = malloc(*bytes);
    float *f = (float *)b;
    ck_assert_int_eq(pbfcl_sim_read(sim, f, f + 3 * n, f + 6 * n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, (unsigned *)(f + 7 * n)), PBFCL_OK);
    return b;
}

/* A simulation restored from a checkpoint of another one at step 4 (with the push and the
 * gravity changed, and adaptive substeps, so that the host state matters) continues bit for
 * bit as the original does. Fails if any buffer or host value that carries across frames is
 * left out of the state table (e.g. the substep bounds: the next frame then takes other
 * substeps). */
static void check_checkpoint_resume(pbfcl_cl *cl)
{
    pbfcl_scene s;
    size_t n;
    float *start = small_dam(&s, &n);
    pbfcl_sim *a = NULL, *b = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&a, cl, &s, start, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_compute_density(a), PBFCL_OK);
    const float g[3] = {1.0f, -12.0f, 0.5f}, o[3] = {0.1f, 0.2f, 0.1f}, d[3] = {1, 0, 0};
    const float push[3] = {0, 1, 0};
    pbfcl_sim_set_gravity(a, g);
    pbfcl_sim_set_push(a, o, d, push, 0.1f, 30.0f);
    for (int f = 0; f < 4; f++)
        ck_assert_int_eq(pbfcl_sim_step(a, NULL), PBFCL_OK);
    char path[] = "/tmp/pbfcl_ckp_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(pbfcl_checkpoint_write(path, a, 4, 4 * s.solver.dt), PBFCL_OK);
    pbfcl_checkpoint *c = NULL;
    pbfcl_checkpoint_info info;
    ck_assert_int_eq(pbfcl_checkpoint_read(path, &c, &info), PBFCL_OK);
    ck_assert_uint_eq(info.n, n);
    ck_assert_int_eq(info.step, 4);
    ck_assert_uint_eq(info.format, PBFCL_CHECKPOINT_FORMAT);
    ck_assert_float_eq(info.scene.gravity[1], -12.0f);
    float *pos = malloc(n * 3 * sizeof *pos);
    ck_assert_int_eq(pbfcl_checkpoint_positions(c, pos), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_create(&b, cl, &info.scene, pos, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_checkpoint_restore(c, b), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_substeps(b), pbfcl_sim_substeps(a));
    for (int f = 0; f < 4; f++) {
        ck_assert_int_eq(pbfcl_sim_step(a, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_step(b, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_sim_substeps(b), pbfcl_sim_substeps(a));
    }
    size_t la, lb;
    unsigned char *sa = snapshot(a, &la), *sb = snapshot(b, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert_msg(memcmp(sa, sb, la) == 0, "the restored simulation differs 4 frames later");
    free(sa);
    free(sb);
    free(pos);
    free(start);
    pbfcl_checkpoint_free(c);
    remove(path);
    pbfcl_sim_destroy(a);
    pbfcl_sim_destroy(b);
}

START_TEST(test_checkpoint_resume)
{
    test_each_device(check_checkpoint_resume);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_state");
    TCase *tc = tcase_create("ids");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_ids_follow_particles);
    tcase_add_test(tc, test_checkpoint_resume);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
