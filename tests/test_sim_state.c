/* The state a simulation carries across frames: persistent particle ids that follow each
 * particle through the spatial sort, and (see checkpoint tests) saving and restoring it. */
#include "sim.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    Suite *s = suite_create("sim_state");
    TCase *tc = tcase_create("ids");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_ids_follow_particles);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
