/* Tests of cloth tearing on the host (host/core/scene/cloth_tear.c): a cooked grid whose right
 * half is pulled away from its left tears along the line between them into two pieces; after
 * the splits the mesh is valid (every triangle's vertices distinct, every stretch edge of a
 * triangle held by a constraint and every constraint an edge of a triangle or a bend across an
 * edge two triangles share, tethers kept), the mass is what it was, each new particle sits
 * where its source was; nothing tears below the limit, with the limit 0, or at a pinned
 * vertex. */
#include "scene/cloth_cook.h"
#include "scene/cloth_tear.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NU 8
#define NV 6

/* The tear tables of a cooked NU x NV grid (spacing 0.1 m, bends on, compliance 1e-6 and 1e-4)
 * with every particle's limit limit and inverse mass 2 (pinned: 0); the right half (i >= NU /
 * 2) moved by shift along u. */
static void make_mesh(float limit, float shift, const unsigned char *pinned, bool tethers,
                      pbfcl_tear_mesh *m)
{
    float o[3] = {0, 1, 0}, u[3] = {0.1f * (NU - 1), 0, 0}, v[3] = {0, 0, 0.1f * (NV - 1)};
    pbfcl_cloth_cook c;
    ck_assert_int_eq(pbfcl_cook_grid("g", o, u, v, NU, NV, 1e-6f, 1e-4f, &c), PBFCL_OK);
    unsigned char none[NU * NV] = {0};
    ck_assert_int_eq(pbfcl_cook_pin(&c, pinned ? pinned : none, tethers), PBFCL_OK);
    memset(m, 0, sizeof *m);
    size_t n = c.particles;
    m->particles = n;
    m->pos = c.pos;
    m->inv_mass = malloc(n * sizeof *m->inv_mass);
    m->max_strain = malloc(n * sizeof *m->max_strain);
    m->source = malloc(n * sizeof *m->source);
    for (size_t i = 0; i < n; i++) {
        m->inv_mass[i] = pinned && pinned[i] ? 0.0f : 2.0f;
        m->max_strain[i] = limit;
        m->source[i] = (unsigned)i;
        if (i % NU >= NU / 2)
            m->pos[3 * i] += shift;
    }
    m->triangles = c.triangles;
    m->tri = c.tri;
    m->constraints = c.constraints;
    m->pair = c.pair;
    m->rest = c.rest;
    m->compliance = c.compliance;
    m->tether = c.tether;
    free(c.pinned);
}

static bool tri_has(const unsigned *t, unsigned v)
{
    return t[0] == v || t[1] == v || t[2] == v;
}

/* Whether p and q are vertices of one triangle. */
static bool is_edge(const pbfcl_tear_mesh *m, unsigned p, unsigned q)
{
    for (size_t t = 0; t < m->triangles; t++)
        if (tri_has(m->tri + 3 * t, p) && tri_has(m->tri + 3 * t, q))
            return true;
    return false;
}

/* Whether p and q are the opposite vertices of two triangles sharing an edge. */
static bool is_bend(const pbfcl_tear_mesh *m, unsigned p, unsigned q)
{
    for (size_t s = 0; s < m->triangles; s++) {
        const unsigned *a = m->tri + 3 * s;
        if (!tri_has(a, p))
            continue;
        for (size_t t = 0; t < m->triangles; t++) {
            const unsigned *b = m->tri + 3 * t;
            if (t == s || !tri_has(b, q) || tri_has(b, p) || tri_has(a, q))
                continue;
            int shared = 0;
            for (int k = 0; k < 3; k++)
                shared += tri_has(b, a[k]);
            if (shared == 2)
                return true;
        }
    }
    return false;
}

/* Whether a non-tether constraint joins p and q. */
static bool held(const pbfcl_tear_mesh *m, unsigned p, unsigned q)
{
    for (size_t c = 0; c < m->constraints; c++)
        if (!m->tether[c] && ((m->pair[2 * c] == p && m->pair[2 * c + 1] == q) ||
                              (m->pair[2 * c] == q && m->pair[2 * c + 1] == p)))
            return true;
    return false;
}

/* The mesh's invariants after tearing; its mass against mass0 (sum of 1 / w). */
static void check_valid(const pbfcl_tear_mesh *m, size_t n0, double mass0, size_t tethers0)
{
    size_t tethers = 0;
    for (size_t t = 0; t < m->triangles; t++) {
        const unsigned *v = m->tri + 3 * t;
        ck_assert_msg(v[0] != v[1] && v[1] != v[2] && v[0] != v[2] && v[0] < m->particles &&
                          v[1] < m->particles && v[2] < m->particles,
                      "triangle %zu is (%u, %u, %u) of %zu particles", t, v[0], v[1], v[2],
                      m->particles);
        for (int s = 0; s < 3; s++)
            ck_assert_msg(held(m, v[s], v[(s + 1) % 3]),
                          "triangle %zu's edge %u-%u has no "
                          "constraint",
                          t, v[s], v[(s + 1) % 3]);
    }
    for (size_t c = 0; c < m->constraints; c++) {
        unsigned p = m->pair[2 * c], q = m->pair[2 * c + 1];
        ck_assert_uint_ne(p, q);
        if (m->tether[c]) {
            tethers++;
            continue;
        }
        ck_assert_msg(is_edge(m, p, q) || is_bend(m, p, q),
                      "constraint %zu (%u-%u) is neither an edge of a triangle nor a bend", c, p,
                      q);
    }
    ck_assert_uint_eq(tethers, tethers0);
    double mass = 0.0;
    for (size_t i = 0; i < m->particles; i++)
        mass += m->inv_mass[i] > 0.0f ? 1.0 / m->inv_mass[i] : 0.0;
    ck_assert_msg(fabs(mass - mass0) < 1e-9 * mass0, "mass %.9g, was %.9g", mass, mass0);
    for (size_t i = n0; i < m->particles; i++) {
        unsigned s = m->source[i];
        ck_assert_uint_lt(s, n0);
        ck_assert_msg(memcmp(m->pos + 3 * i, m->pos + 3 * s, 12) == 0,
                      "particle %zu is not where its source %u is", i, s);
    }
}

/* The pieces of the mesh: connected sets of vertices through triangles (union-find). */
static int pieces(const pbfcl_tear_mesh *m)
{
    unsigned *root = malloc(m->particles * sizeof *root);
    for (size_t i = 0; i < m->particles; i++)
        root[i] = (unsigned)i;
    for (size_t t = 0; t < m->triangles; t++)
        for (int s = 1; s < 3; s++) {
            unsigned a = m->tri[3 * t], b = m->tri[3 * t + s];
            while (root[a] != a)
                a = root[a];
            while (root[b] != b)
                b = root[b];
            root[a] = b;
        }
    int count = 0;
    for (size_t i = 0; i < m->particles; i++)
        count += root[i] == i;
    free(root);
    return count;
}

static double mass_of(const pbfcl_tear_mesh *m)
{
    double mass = 0.0;
    for (size_t i = 0; i < m->particles; i++)
        mass += m->inv_mass[i] > 0.0f ? 1.0 / m->inv_mass[i] : 0.0;
    return mass;
}

/* The right half pulled 0.05 m away (the edges across the line strained by 50 % and more
 * along u) with a limit of 20 %: one call splits one vertex per row, which cuts the grid in two
 * along the line, the mesh valid. (A second call on the same positions would cut the strained
 * cells off the other side too: in a simulation they first follow their piece.) */
START_TEST(test_tear_in_two)
{
    pbfcl_tear_mesh m;
    make_mesh(0.2f, 0.05f, NULL, false, &m);
    size_t n0 = m.particles, splits = 0;
    double mass0 = mass_of(&m);
    ck_assert_int_eq(pieces(&m), 1);
    ck_assert_int_eq(pbfcl_cloth_tear(&m, 1000, &splits), PBFCL_OK);
    check_valid(&m, n0, mass0, 0);
    printf("  %zu splits: %zu particles, %d pieces\n", splits, m.particles, pieces(&m));
    ck_assert_uint_eq(splits, NV);
    ck_assert_uint_eq(m.particles, n0 + splits);
    ck_assert_int_eq(pieces(&m), 2);
    pbfcl_tear_mesh_free(&m);
}
END_TEST

/* max_splits bounds a call; the mesh is valid after each single split. */
START_TEST(test_tear_one_at_a_time)
{
    pbfcl_tear_mesh m;
    make_mesh(0.2f, 0.05f, NULL, false, &m);
    size_t n0 = m.particles, splits = 0;
    double mass0 = mass_of(&m);
    for (int call = 0; call < 3; call++) {
        ck_assert_int_eq(pbfcl_cloth_tear(&m, 1, &splits), PBFCL_OK);
        ck_assert_uint_eq(splits, 1);
        ck_assert_uint_eq(m.particles, n0 + (size_t)call + 1);
        check_valid(&m, n0, mass0, 0);
    }
    pbfcl_tear_mesh_free(&m);
}
END_TEST

/* Below the limit, with the limit 0 (off), or with the vertices of the strained edges pinned
 * on both sides, nothing tears; tethers stay. */
START_TEST(test_tear_none)
{
    pbfcl_tear_mesh m;
    size_t splits = 1;
    make_mesh(0.6f, 0.05f, NULL, false, &m); /* 50 % < 60 % */
    ck_assert_int_eq(pbfcl_cloth_tear(&m, 1000, &splits), PBFCL_OK);
    ck_assert_uint_eq(splits, 0);
    pbfcl_tear_mesh_free(&m);
    make_mesh(0.0f, 0.05f, NULL, false, &m);
    ck_assert_int_eq(pbfcl_cloth_tear(&m, 1000, &splits), PBFCL_OK);
    ck_assert_uint_eq(splits, 0);
    pbfcl_tear_mesh_free(&m);
    unsigned char pinned[NU * NV] = {0};
    for (int j = 0; j < NV; j++)
        pinned[j * NU + NU / 2 - 1] = pinned[j * NU + NU / 2] = 1;
    make_mesh(0.2f, 0.05f, pinned, true, &m);
    size_t tethers0 = 0;
    for (size_t c = 0; c < m.constraints; c++)
        tethers0 += m.tether[c];
    ck_assert_uint_gt(tethers0, 0);
    ck_assert_int_eq(pbfcl_cloth_tear(&m, 1000, &splits), PBFCL_OK);
    ck_assert_uint_eq(splits, 0);
    check_valid(&m, m.particles, mass_of(&m), tethers0);
    pbfcl_tear_mesh_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cloth_tear");
    TCase *t = tcase_create("tear");
    tcase_add_test(t, test_tear_in_two);
    tcase_add_test(t, test_tear_one_at_a_time);
    tcase_add_test(t, test_tear_none);
    suite_add_tcase(s, t);
    return test_run_suite(s, false);
}
