/* Tests of the cloth cooker (host/core/scene/cloth_cook.c) by counting: a grid of nu x nv
 * particles has (nu-1) nv + nu (nv-1) + (nu-1)(nv-1) edges and a bend across each interior
 * edge; every constraint's rest length is its particles' distance; a rope of n points has
 * n - 1 edges and n - 2 bends; tethers go from each free particle to each anchor's nearest
 * pinned particle; a sphere of s subdivisions has 10 * 4^s + 2 vertices on the sphere and
 * 20 * 4^s triangles enclosing less than the sphere's volume (a regular octahedron's exactly);
 * degenerate triangles, bad ropes, open, non-manifold and inside-out inflatables are refused
 * naming the object, the index and the fix. */
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

START_TEST(test_inflatables)
{
    const float c[3] = {0.5f, 0.5f, 0.5f};
    for (int s = 0; s <= 3; s++) {
        pbfcl_cloth_cook k;
        ck_assert_int_eq(pbfcl_cook_sphere("ball", c, 0.2f, s, 0.0f, 1e-3f, &k), PBFCL_OK);
        size_t four = (size_t)1 << (2 * s);
        ck_assert_uint_eq(k.particles, 10 * four + 2);
        ck_assert_uint_eq(k.triangles, 20 * four);
        ck_assert_uint_eq(k.edges, 30 * four); /* Euler: V - E + F = 2 */
        for (size_t i = 0; i < k.particles; i++) {
            double d = sqrt(pow(k.pos[3 * i] - 0.5, 2) + pow(k.pos[3 * i + 1] - 0.5, 2) +
                            pow(k.pos[3 * i + 2] - 0.5, 2));
            ck_assert_msg(fabs(d - 0.2) < 1e-6, "vertex %zu at %g from the centre", i, d);
        }
        double sphere = 4.0 / 3.0 * 3.14159265358979 * 0.008;
        ck_assert_msg(k.volume > 0.6 * sphere && k.volume < sphere, "volume %g", k.volume);
        pbfcl_cook_free(&k);
    }
    /* a regular octahedron of vertices at distance 1: volume 4/3 */
    float oct[18] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1};
    unsigned tri[24] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
    pbfcl_cloth_cook k;
    ck_assert_int_eq(pbfcl_cook_inflatable("oct", oct, 6, tri, 8, 0.0f, 0.0f, &k), PBFCL_OK);
    ck_assert_float_eq_tol(k.volume, 4.0f / 3.0f, 1e-6f);
    pbfcl_cook_free(&k);
    struct {
        unsigned a, b; /* swap tri[a] and tri[b] (a == b: set tri[a] to b - 100) */
        size_t nt;
        const char *says;
    } cases[] = {
        {0, 1, 8, "inflatable 'oct': triangles 0 and 3 both run from vertex 0 to 4"},
        {5, 101, 8, "oct': triangle 1 (2, 1, 1) is degenerate"},
        {0, 0, 7, "the edge from vertex 0 to 4 of triangle 2 has no triangle on its other side"},
        {0, 0, 3, "inflatable 'oct' has 3 triangles; a closed mesh has at least 4"},
        {1, 106, 8, "triangle 0 (0, 6, 4) names a vertex beyond its 6 vertices"},
    };
    for (size_t n = 0; n < sizeof cases / sizeof cases[0]; n++) {
        unsigned t[24];
        memcpy(t, tri, sizeof t);
        if (cases[n].b >= 100) {
            t[cases[n].a] = cases[n].b - 100;
        } else if (cases[n].a != cases[n].b) {
            t[cases[n].a] = tri[cases[n].b];
            t[cases[n].b] = tri[cases[n].a];
        }
        const unsigned *from = cases[n].nt == 7 ? t + 3 : t; /* 7: the first triangle left out */
        test_capture_begin();
        pbfcl_status st = pbfcl_cook_inflatable("oct", oct, 6, from, cases[n].nt, 0, 0, &k);
        const char *msg = test_capture_end();
        ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
        ck_assert_msg(strstr(msg, cases[n].says), "case %zu: '%s' lacks '%s'", n, msg,
                      cases[n].says);
    }
    /* inside out: every triangle turned round */
    unsigned inv[24];
    for (int t = 0; t < 8; t++) {
        inv[3 * t] = tri[3 * t];
        inv[3 * t + 1] = tri[3 * t + 2];
        inv[3 * t + 2] = tri[3 * t + 1];
    }
    test_capture_begin();
    pbfcl_status st = pbfcl_cook_inflatable("oct", oct, 6, inv, 8, 0, 0, &k);
    const char *msg = test_capture_end();
    ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_msg(strstr(msg, "inflatable 'oct' encloses a volume of -1.33333 m^3; its triangles "
                              "wind clockwise seen from outside: reverse the order of each "
                              "triangle's vertices"),
                  "'%s'", msg);
}
END_TEST

/* The tethers' nearest pinned particle of each anchor (a k-d tree in the cooker) against a
 * plain scan: for each free particle and each anchor (the pinned particles joined by edges,
 * found here by flooding along the edges), the pinned particle at the least distance, the
 * lowest index among equally near ones. Grids of awkward sizes, some bent out of their plane,
 * with random pins, an edge and a column (on a lattice of whole metres some particles lie
 * exactly as near to a pin of the edge as to one of the column: the lower index wins) or two
 * corners. */
static size_t scan_nearest(const pbfcl_cloth_cook *c, const int *anchor, int a, size_t i)
{
    size_t best = c->particles;
    for (size_t p = 0; p < c->particles; p++)
        if (anchor[p] == a &&
            (best == c->particles ||
             dist(c->pos, (unsigned)i, (unsigned)p) < dist(c->pos, (unsigned)i, (unsigned)best)))
            best = p;
    return best;
}

/* anchor[p]: the anchor of pinned particle p (numbered by their lowest particle), -1 if free;
 * returns the anchors' count. */
static int flood_anchors(const pbfcl_cloth_cook *c, int *anchor)
{
    int count = 0;
    for (size_t p = 0; p < c->particles; p++)
        anchor[p] = -1;
    for (size_t p = 0; p < c->particles; p++) {
        if (!c->pinned[p] || anchor[p] >= 0)
            continue;
        anchor[p] = count;
        for (bool grew = true; grew;) {
            grew = false;
            for (size_t e = 0; e < c->edges; e++) {
                unsigned a = c->pair[2 * e], b = c->pair[2 * e + 1];
                if (c->pinned[a] && c->pinned[b] && (anchor[a] == count) != (anchor[b] == count)) {
                    anchor[a] = anchor[b] = count;
                    grew = true;
                }
            }
        }
        count++;
    }
    return count;
}

START_TEST(test_tethers_match_a_scan)
{
    unsigned seed = 7;
    for (int trial = 0; trial < 24; trial++) {
        seed = seed * 1103515245u + 12345u;
        int nu = 2 + (int)(seed >> 8) % 23, nv = 2 + (int)(seed >> 16) % 19;
        float o[3] = {0, 0, 0}, u[3] = {0.5f, 0.05f * (float)(trial % 3), 0},
              v[3] = {0, -0.4f, 0.1f * (float)(trial % 2)};
        pbfcl_cloth_cook c;
        ck_assert_int_eq(pbfcl_cook_grid("g", o, u, v, nu, nv, 0, 0, &c), PBFCL_OK);
        for (size_t i = 0; trial % 4 == 3 && i < c.particles; i++) /* bent out of its plane */
            c.pos[3 * i + 2] += 0.01f * (float)((i * 7) % 5);
        for (size_t i = 0; trial % 6 == 1 && i < c.particles; i++) { /* on whole metres: */
            c.pos[3 * i] = (float)(i % (size_t)nu); /* (i, j) as near to (i, 0) as to (0, j) */
            c.pos[3 * i + 1] = -(float)(i / (size_t)nu);
            c.pos[3 * i + 2] = 0.0f;
        }
        unsigned char *pinned = calloc(c.particles, 1);
        for (size_t i = 0; i < c.particles; i++) {
            seed = seed * 1103515245u + 12345u;
            int mode = trial % 3;
            pinned[i] = mode == 0   ? (seed >> 16) % 7 == 0
                        : mode == 1 ? i < (size_t)nu || i % (size_t)nu == 0
                                    : i == 0 || i == c.particles - 1;
        }
        pinned[c.particles / 2] = 1; /* at least one */
        size_t base = c.constraints;
        ck_assert_int_eq(pbfcl_cook_pin(&c, pinned, true), PBFCL_OK);
        int *anchor = malloc(c.particles * sizeof *anchor);
        int anchors = flood_anchors(&c, anchor);
        size_t q = base;
        for (size_t i = 0; i < c.particles; i++)
            for (int a = 0; !pinned[i] && a < anchors; a++, q++) {
                ck_assert_uint_lt(q, c.constraints);
                ck_assert_uint_eq(c.pair[2 * q], i);
                ck_assert_uint_eq(c.pair[2 * q + 1], scan_nearest(&c, anchor, a, i));
            }
        ck_assert_uint_eq(q, c.constraints);
        free(anchor);
        free(pinned);
        pbfcl_cook_free(&c);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cloth_cook");
    TCase *host = tcase_create("host");
    tcase_add_test(host, test_grid_counts);
    tcase_add_test(host, test_rope_and_tethers);
    tcase_add_test(host, test_tethers_match_a_scan);
    tcase_add_test(host, test_bad_input);
    tcase_add_test(host, test_inflatables);
    suite_add_tcase(suite, host);
    return test_run_suite(suite, false);
}
