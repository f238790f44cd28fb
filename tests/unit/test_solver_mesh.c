/* The ropes the program draws and exports (host/app/solver_mesh.c), found among distance
 * constraints as a solver holds them: a rope's edges chained in order with its bends and
 * tethers left out, a closed loop, a junction of three arms, two ropes apart, and a particle of
 * a triangle (cloth) never part of a rope. */
#include "solver_mesh.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* The ropes of count constraints over n particles. */
static pbfcl_solver_mesh ropes(size_t n, const unsigned *pair, const float *rest,
                               const unsigned char *tether, size_t count,
                               const unsigned char *in_tri)
{
    pbfcl_solver_mesh m;
    memset(&m, 0, sizeof m);
    m.n = n;
    unsigned char none[64] = {0};
    ck_assert_int_eq(pbfcl_solver_mesh_ropes(&m, pair, rest, tether, count, in_tri ? in_tri : none),
                     PBFCL_OK);
    return m;
}

/* Line l's points as a string "0 1 2 ..." (for messages and comparisons). */
static void line_text(const pbfcl_solver_mesh *m, size_t l, char *out, size_t size)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t p = m->line_start[l]; p < m->line_start[l + 1]; p++)
        k += (size_t)snprintf(out + k, size - k, p > m->line_start[l] ? " %u" : "%u",
                              m->line_pts[p]);
}

/* A rope of 6 particles as the cooker makes it, edges (i, i+1), bends (i, i+2) and tethers
 * from particle 0, in a shuffled order: one line through 0..5 in order. */
START_TEST(rope_in_order)
{
    unsigned pair[] = {2, 4, 3, 4, 0, 1, 0, 5, 1, 3, 4, 5, 1, 2, 0, 2, 3, 5, 2, 3, 0, 4};
    float rest[] = {2, 1, 1, 5, 2, 1, 1, 2, 2, 1, 4};
    unsigned char tether[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    pbfcl_solver_mesh m = ropes(6, pair, rest, tether, 11, NULL);
    char text[128];
    ck_assert_uint_eq(m.line_count, 1);
    line_text(&m, 0, text, sizeof text);
    ck_assert_msg(!strcmp(text, "0 1 2 3 4 5") || !strcmp(text, "5 4 3 2 1 0"), "line %s", text);
    pbfcl_solver_mesh_free(&m);
}
END_TEST

/* A loop of 5 (no bends): one closed line, its first point again at its end. */
START_TEST(rope_loop)
{
    unsigned pair[] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 0};
    float rest[] = {1, 1, 1, 1, 1};
    pbfcl_solver_mesh m = ropes(5, pair, rest, NULL, 5, NULL);
    ck_assert_uint_eq(m.line_count, 1);
    ck_assert_uint_eq(m.line_start[1], 6);
    ck_assert_uint_eq(m.line_pts[0], m.line_pts[5]);
    pbfcl_solver_mesh_free(&m);
}
END_TEST

/* Three arms from particle 0 (1-2, 3-4, 5-6) and a rope apart (7-8): four lines, each arm from
 * the junction. */
START_TEST(rope_junction_and_two_ropes)
{
    unsigned pair[] = {0, 1, 1, 2, 0, 3, 3, 4, 0, 5, 5, 6, 7, 8};
    float rest[] = {1, 1, 1, 1, 1, 1, 1};
    pbfcl_solver_mesh m = ropes(9, pair, rest, NULL, 7, NULL);
    ck_assert_uint_eq(m.line_count, 4);
    char text[4][64];
    for (size_t l = 0; l < 4; l++)
        line_text(&m, l, text[l], sizeof text[l]);
    ck_assert_str_eq(text[0], "0 1 2");
    ck_assert_str_eq(text[1], "0 3 4");
    ck_assert_str_eq(text[2], "0 5 6");
    ck_assert_str_eq(text[3], "7 8");
    pbfcl_solver_mesh_free(&m);
}
END_TEST

/* Constraints touching a particle of a triangle (a cloth's edges, a rope tied to a cloth's
 * corner) are no rope: only 3-4-5 is. */
START_TEST(rope_not_cloth)
{
    unsigned pair[] = {0, 1, 1, 2, 2, 0, 2, 3, 3, 4, 4, 5};
    float rest[] = {1, 1, 1, 1, 1, 1};
    unsigned char in_tri[6] = {1, 1, 1, 0, 0, 0};
    pbfcl_solver_mesh m = ropes(6, pair, rest, NULL, 6, in_tri);
    ck_assert_uint_eq(m.line_count, 1);
    char text[64];
    line_text(&m, 0, text, sizeof text);
    ck_assert_msg(!strcmp(text, "3 4 5") || !strcmp(text, "5 4 3"), "line %s", text);
    pbfcl_solver_mesh_free(&m);
}
END_TEST

START_TEST(rope_none)
{
    pbfcl_solver_mesh m = ropes(3, NULL, NULL, NULL, 0, NULL);
    ck_assert_uint_eq(m.line_count, 0);
    ck_assert_uint_eq(m.line_start[0], 0);
    pbfcl_solver_mesh_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("solver_mesh");
    TCase *t = tcase_create("ropes");
    tcase_add_test(t, rope_in_order);
    tcase_add_test(t, rope_loop);
    tcase_add_test(t, rope_junction_and_two_ropes);
    tcase_add_test(t, rope_not_cloth);
    tcase_add_test(t, rope_none);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
