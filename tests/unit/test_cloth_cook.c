/* Tests of the cloth cooker (host/core/scene/cloth_cook.c) by counting: a grid of nu x nv
 * particles has (nu-1) nv + nu (nv-1) + (nu-1)(nv-1) edges and a bend across each interior
 * edge; every constraint's rest length is its particles' distance; a rope of n points has
 * n - 1 edges and n - 2 bends; tethers go from each free particle to the nearest pinned one;
 * degenerate triangles and bad ropes are refused naming the object, the index and the fix. */
#include "scene/cloth_cook.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

static float dist(const float *p, unsigned a, unsigned b)
{
    float s = 0.0f;
    for (int k = 0; k < 3; k++)
        s += (p[3 * a + k] - p[3 * b + k]) * (p[3 * a + k] - p[3 * b + k]);
    return sqrtf(s);
}

START_TEST(test_grid_counts)
{
    const int sizes[][2] = {{2, 2}, {3, 2}, {5, 7}};
    for (int k = 0; k < 3; k++) {
        int nu = sizes[k][0], nv = sizes[k][1];
        float o[3] = {0, 1, 0}, u[3] = {0.4f, 0, 0}, v[3] = {0, 0, 0.3f};
        pbfcl_cloth_cook c;
        ck_assert_int_eq(pbfcl_cook_grid("g", o, u, v, nu, nv, 1e-6f, 1e-4f, &c), PBFCL_OK);
        size_t edges = (size_t)(nu - 1) * nv + (size_t)nu * (nv - 1) + (size_t)(nu - 1) * (nv - 1);
        size_t boundary = 2 * (size_t)(nu - 1) + 2 * (size_t)(nv - 1);
        ck_assert_uint_eq(c.particles, (size_t)nu * nv);
        ck_assert_uint_eq(c.triangles, 2 * (size_t)(nu - 1) * (nv - 1));
        ck_assert_uint_eq(c.edges, edges);
        ck_assert_uint_eq(c.bends, edges - boundary);
        for (size_t q = 0; q < c.constraints; q++) {
            ck_assert_uint_ne(c.pair[2 * q], c.pair[2 * q + 1]);
            ck_assert_float_eq_tol(c.rest[q], dist(c.pos, c.pair[2 * q], c.pair[2 * q + 1]), 1e-6f);
            ck_assert_float_eq(c.compliance[q], q < c.edges ? 1e-6f : 1e-4f);
        }
        pbfcl_cook_free(&c);
    }
}
END_TEST

START_TEST(test_rope_and_tethers)
{
    float pts[5 * 3];
    for (int i = 0; i < 5; i++) {
        pts[3 * i] = 0.1f * i;
        pts[3 * i + 1] = 0.5f;
        pts[3 * i + 2] = 0.0f;
    }
    pbfcl_cloth_cook c;
    ck_assert_int_eq(pbfcl_cook_rope("r", pts, 5, 0.0f, 1e-3f, &c), PBFCL_OK);
    ck_assert_uint_eq(c.edges, 4);
    ck_assert_uint_eq(c.bends, 3);
    ck_assert_float_eq_tol(c.rest[4], 0.2f, 1e-6f); /* the first bend spans two segments */
    unsigned char pinned[5] = {1, 0, 0, 0, 1};
    ck_assert_int_eq(pbfcl_cook_pin(&c, pinned, true), PBFCL_OK);
    ck_assert_uint_eq(c.tethers, 6); /* the ends are two anchors: each free particle to both */
    for (size_t t = 0; t < 6; t++) {
        size_t q = c.edges + c.bends + t;
        ck_assert(c.tether[q]);
        ck_assert_uint_eq(c.pair[2 * q], t / 2 + 1);
        ck_assert_uint_eq(c.pair[2 * q + 1], t % 2 ? 4 : 0);
        ck_assert_float_eq(c.compliance[q], 0.0f);
        ck_assert_float_eq_tol(c.rest[q], dist(c.pos, c.pair[2 * q], c.pair[2 * q + 1]), 1e-6f);
    }
    pbfcl_cook_free(&c);
    /* a 3 x 3 grid with its edge j = 0 pinned: one anchor (joined by edges), so each free
     * particle has one tether, to the pinned particle above it */
    const float o[3] = {0, 0, 0}, u[3] = {1, 0, 0}, v[3] = {0, 1, 0};
    ck_assert_int_eq(pbfcl_cook_grid("g", o, u, v, 3, 3, 0.0f, 0.0f, &c), PBFCL_OK);
    unsigned char edge[9] = {1, 1, 1};
    ck_assert_int_eq(pbfcl_cook_pin(&c, edge, true), PBFCL_OK);
    ck_assert_uint_eq(c.tethers, 6);
    for (size_t t = 0; t < 6; t++) {
        size_t q = c.edges + c.bends + t;
        ck_assert_uint_eq(c.pair[2 * q], t + 3);
        ck_assert_uint_eq(c.pair[2 * q + 1], t % 3);
    }
    pbfcl_cook_free(&c);
}
END_TEST

START_TEST(test_bad_input)
{
    float pos[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0};
    struct {
        unsigned tri[6];
        const char *says;
    } cases[] = {
        {{0, 1, 2, 0, 1, 3}, "cloth 'm': triangle 1 (0, 1, 3) is degenerate"},
        {{0, 1, 2, 2, 2, 1}, "triangle 1 (2, 2, 1) is degenerate (no area); remove it"},
        {{0, 1, 2, 0, 1, 4}, "triangle 1 (0, 1, 4) names a vertex beyond its 4 vertices"},
    };
    for (int k = 0; k < 3; k++) {
        pbfcl_cloth_cook c;
        test_capture_begin();
        pbfcl_status st = pbfcl_cook_mesh("m", pos, 4, cases[k].tri, 2, 0, 0, &c);
        const char *msg = test_capture_end();
        ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
        ck_assert_msg(strstr(msg, cases[k].says), "'%s' lacks '%s'", msg, cases[k].says);
    }
    float same[6] = {0, 0, 0, 0, 0, 0};
    pbfcl_cloth_cook c;
    test_capture_begin();
    ck_assert_int_eq(pbfcl_cook_rope("r", same, 2, 0, 0, &c), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(test_capture_end(), "rope 'r': points 0 and 1 are at one place"));
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cloth_cook");
    TCase *host = tcase_create("host");
    tcase_add_test(host, test_grid_counts);
    tcase_add_test(host, test_rope_and_tethers);
    tcase_add_test(host, test_bad_input);
    suite_add_tcase(suite, host);
    return test_run_suite(suite, false);
}
