/* Self-collision of cloth (pbfcl_sim_set_group_self_collide, host/core/sim/sim.c): two sheets
 * of one solid group, the lower pinned along its edges as a trampoline 0.1 m up, the upper
 * dropped onto it from 6 cm above, offset by r so that its particles fall over the holes
 * between the lower's. With the group's self-collide flag no particle of the upper sheet ever
 * crosses the lower (the signed side of each against the lower sheet's triangle under it, every
 * frame); without it (the control) the upper sheet falls through. A state saved and loaded
 * into another simulation keeps the flag, also through a later pbfcl_sim_set_groups. */
#include "memory_state.h"
#include "pbf/distance.h"
#include "pbf/pbf.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define R 0.01f
#define S 10 /* particles along each side of a sheet */
#define SHEET (S * S)
#define X0 0.11f
#define LOW 0.1f
#define HIGH 0.16f

/* Appends the edges (sides and one diagonal per cell, compliance 0) of the sheet whose first
 * particle is first. */
static size_t sheet_edges(unsigned first, unsigned *pair, float *rest, size_t c)
{
    for (unsigned j = 0; j < S; j++)
        for (unsigned i = 0; i < S; i++) {
            unsigned p = first + j * S + i;
            unsigned next[3][2] = {
                {i + 1 < S, p + 1}, {j + 1 < S, p + S}, {i + 1 < S && j + 1 < S, p + S + 1}};
            for (int k = 0; k < 3; k++)
                if (next[k][0]) {
                    pair[2 * c] = p;
                    pair[2 * c + 1] = next[k][1];
                    rest[c++] = k < 2 ? 2 * R : 2 * R * sqrtf(2.0f);
                }
        }
    return c;
}

/* The particles of the group (all but the lower sheet's edges) into ids, their relative inverse
 * masses (1) into w; their count. */
static size_t free_particles(unsigned *ids, float *w)
{
    size_t ng = 0;
    for (unsigned i = 0; i < 2 * SHEET; i++) {
        unsigned a = i % S, b = (i % SHEET) / S;
        if (!(i < SHEET && (a == 0 || b == 0 || a == S - 1 || b == S - 1))) {
            ids[ng] = i;
            w[ng++] = 1.0f;
        }
    }
    return ng;
}

static pbfcl_sim *sheets(pbfcl_cl *cl, bool self_collide)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    s.particle_radius = R;
    for (int a = 0; a < 3; a++) {
        s.domain_min[a] = 0.0f;
        s.domain_max[a] = a == 1 ? 0.3f : 0.4f;
        s.gravity[a] = a == 1 ? -9.81f : 0.0f;
    }
    s.solver.iterations = 20;
    s.solver.substeps = 4;
    float pos[3 * 2 * SHEET];
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < S; j++)
            for (int i = 0; i < S; i++) {
                float *p = pos + 3 * (k * SHEET + j * S + i);
                p[0] = X0 + 2 * R * i + (k ? R : 0.0f);
                p[1] = k ? HIGH : LOW;
                p[2] = X0 + 2 * R * j + (k ? R : 0.0f);
            }
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, pos, 2 * SHEET), PBFCL_OK);
    unsigned pin[4 * S], ids[2 * SHEET], group[2 * SHEET] = {0};
    float w[2 * SHEET];
    size_t np = 0, ng = 0;
    for (unsigned i = 0; i < 2 * SHEET; i++) {
        unsigned a = i % S, b = (i % SHEET) / S;
        if (i < SHEET && (a == 0 || b == 0 || a == S - 1 || b == S - 1))
            pin[np++] = i; /* the lower sheet's edges */
        else {
            ids[ng] = i;
            w[ng++] = 1.0f;
        }
    }
    ck_assert_int_eq(pbfcl_sim_set_static(sim, np, pin), PBFCL_OK);
    unsigned char on = 1;
    if (self_collide)
        ck_assert_int_eq(pbfcl_sim_set_group_self_collide(sim, 1, &on), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_set_groups(sim, ng, ids, group, w), PBFCL_OK);
    unsigned pair[2 * 6 * SHEET];
    float rest[6 * SHEET], comp[6 * SHEET] = {0};
    size_t c = sheet_edges(0, pair, rest, 0);
    c = sheet_edges(SHEET, pair, rest, c);
    ck_assert_int_eq(pbfcl_pbf_set_distances(sim, c, pair, rest, comp, NULL), PBFCL_OK);
    return sim;
}

/* Positions by id. */
static void positions(pbfcl_sim *sim, float *pos)
{
    size_t n = pbfcl_sim_count(sim);
    float p[3 * 2 * SHEET];
    unsigned id[2 * SHEET];
    ck_assert_int_eq(pbfcl_sim_read(sim, p, NULL, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_read_ids(sim, id), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        memcpy(pos + 3 * id[i], p + 3 * i, 12);
}

/* The least signed distance of an upper particle above the lower sheet: against the plane of
 * the lower's triangle under it (found by its rest cell: (p, q, s) or (p, s, r) of the cell's
 * two), its normal pointing up. */
static double least_side(const float *pos)
{
    double least = INFINITY;
    for (int k = SHEET; k < 2 * SHEET; k++) {
        const float *x = pos + 3 * k;
        double u = (x[0] - X0) / (2 * R), v = (x[2] - X0) / (2 * R);
        int i = (int)floor(u), j = (int)floor(v);
        if (i < 0 || j < 0 || i >= S - 1 || j >= S - 1)
            continue; /* not over the lower sheet */
        unsigned p = (unsigned)(j * S + i), q = p + 1, r = p + S, s = r + 1;
        unsigned t1 = u - i >= v - j ? q : s, t2 = u - i >= v - j ? s : r;
        const float *a = pos + 3 * p, *b = pos + 3 * t1, *c = pos + 3 * t2;
        double e1[3], e2[3], n[3];
        for (int d = 0; d < 3; d++) {
            e1[d] = b[d] - a[d];
            e2[d] = c[d] - a[d];
        }
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) * (n[1] < 0 ? -1.0 : 1.0);
        double side = ((x[0] - a[0]) * n[0] + (x[1] - a[1]) * n[1] + (x[2] - a[2]) * n[2]) / len;
        least = fmin(least, side);
    }
    return least;
}

/* With the flag: every frame of 1 s, every upper particle over the lower sheet is above it
 * (its least distance above the planes, r/2 at least: resting in the hollows it is sqrt(2) r
 * above the lower's particles). Without: by the end the upper sheet is below the lower. */
static void fold(pbfcl_cl *cl)
{
    float pos[3 * 2 * SHEET];
    for (int flag = 1; flag >= 0; flag--) {
        pbfcl_sim *sim = sheets(cl, flag);
        double least = INFINITY, last = 0.0;
        for (int f = 0; f < 60; f++) {
            ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
            positions(sim, pos);
            for (int k = 0; k < 3 * 2 * SHEET; k++)
                ck_assert_msg(isfinite(pos[k]), "frame %d: particle %d is not finite", f, k / 3);
            last = least_side(pos);
            least = fmin(least, last);
        }
        printf("  self-collide %s: the upper sheet's least height above the lower %.5f m "
               "(at the end %.5f m)\n",
               flag ? "on" : "off", least, last);
        if (flag)
            ck_assert_msg(least > 0.5 * R,
                          "with self-collide a particle came %.5f m from the "
                          "lower sheet (crossed if negative)",
                          least);
        else
            ck_assert_msg(last < -R,
                          "without self-collide the upper sheet did not fall through "
                          "(%.5f m above the lower)",
                          last);
        pbfcl_sim_destroy(sim);
    }
}

/* The group particles' phases all carry the self-collide flag (want) or none does. */
static void expect_flag(pbfcl_sim *sim, bool want, const char *when)
{
    unsigned phase[2 * SHEET];
    ck_assert_int_eq(pbfcl_sim_read_phases(sim, phase, NULL), PBFCL_OK);
    int grouped = 0;
    for (int i = 0; i < 2 * SHEET; i++)
        if (PBFCL_SIM_PHASE_IS_GROUP(phase[i])) {
            grouped++;
            ck_assert_msg(((phase[i] & PBFCL_PHASE_SELF_COLLIDE_BIT) != 0) == want,
                          "%s: phase %u of a group particle", when, phase[i]);
        }
    ck_assert_int_eq(grouped, 2 * SHEET - 4 * (S - 1));
}

static void save_load(pbfcl_cl *cl)
{
    pbfcl_sim *a = sheets(cl, true), *b = sheets(cl, false);
    ck_assert_int_eq(pbfcl_sim_step(a, NULL), PBFCL_OK);
    expect_flag(a, true, "set");
    expect_flag(b, false, "not set");
    memory_state m;
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(pbfcl_sim_state_save(a, memory_state_put, &m), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_state_load(b, memory_state_get, &m), PBFCL_OK);
    expect_flag(b, true, "loaded");
    unsigned ids[2 * SHEET], group[2 * SHEET] = {0};
    float w[2 * SHEET];
    size_t ng = free_particles(ids, w);
    ck_assert_int_eq(pbfcl_sim_set_groups(b, ng, ids, group, w), PBFCL_OK); /* as a tear does */
    expect_flag(b, true, "grouped again after the load");
    memory_state_free(&m);
    pbfcl_sim_destroy(a);
    pbfcl_sim_destroy(b);
}

START_TEST(test_cloth_self_collide_saved)
{
    test_each_device(save_load);
}
END_TEST

START_TEST(test_cloth_self_collide_fold)
{
    test_each_device(fold);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cloth_self_collide");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_test(dev, test_cloth_self_collide_fold);
    tcase_add_test(dev, test_cloth_self_collide_saved);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
