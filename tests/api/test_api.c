/* The public API (include/pbfcl.h) as a program that embeds pbfcl uses it, linked against the
 * shared library and including nothing else of pbfcl: particles set, stepped and read back in
 * the caller's order by id (traced by continuity through the solver's reordering), adding and
 * removing particles, parameters changed between steps, the caller's own OpenCL context, and
 * every misuse answered with its status and a message naming the argument. Runs on every
 * OpenCL device (or the one PBFCL_DEVICE names). */
#include "each_device.h"
#include "memory_state.h"
#include "pbfcl.h"
#include "poly6_ref.h"
#include "test_files.h" /* test helpers that need nothing of pbfcl */

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define R 0.01f

/* ---- the device under test and the messages the library logs ---------------------------- */

static char device_spec[32]; /* the index of the device under test, as pbfcl_context_desc wants */
static char last_message[4096];
static int messages;

static void capture_log(pbfcl_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    snprintf(last_message, sizeof last_message, "%s", message);
    messages++;
}

/* Asserts that the last logged message contains text. */
static void expect_message(const char *text)
{
    ck_assert_msg(strstr(last_message, text), "expected a message containing '%s', got '%s'", text,
                  last_message);
}

/* True if the last timed step of s ran the stage called name (pbfcl_solver_timer's list). */
static bool timer_ran(const pbfcl_solver *s, const char *name)
{
    for (int i = 0; i < pbfcl_solver_timer_count(s); i++) {
        const char *stage = NULL;
        ck_assert_int_eq(pbfcl_solver_timer(s, i, &stage, NULL), PBFCL_OK);
        if (!strcmp(stage, name))
            return true;
    }
    return false;
}

/* The device time of the stage called name in the last timed step of s, ms. */
static double timer_ms(const pbfcl_solver *s, const char *name)
{
    double ms = -1.0;
    ck_assert_int_eq(pbfcl_solver_timer_ms(s, name, &ms), PBFCL_OK);
    return ms;
}

/* A solver in a box of sx * sy * sz with room for capacity particles. */
static pbfcl_solver *open_solver(pbfcl_context *ctx, size_t capacity, float sx, float sy, float sz)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = capacity;
    d.scene.particle_radius = R;
    d.scene.domain_max[0] = sx;
    d.scene.domain_max[1] = sy;
    d.scene.domain_max[2] = sz;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    return s;
}

/* nn[0] * nn[1] * nn[2] particles at spacing 2r from lo + r. */
static float *block(const int nn[3], const float lo[3], size_t *n)
{
    *n = (size_t)nn[0] * nn[1] * nn[2];
    float *p = malloc(*n * 3 * sizeof *p);
    size_t c = 0;
    for (int k = 0; k < nn[2]; k++)
        for (int j = 0; j < nn[1]; j++)
            for (int i = 0; i < nn[0]; i++) {
                p[c++] = lo[0] + R + 2 * R * i;
                p[c++] = lo[1] + R + 2 * R * j;
                p[c++] = lo[2] + R + 2 * R * k;
            }
    return p;
}

static double dist3(const float *a, const float *b)
{
    double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

/* ---- bodies --------------------------------------------------------------------------------- */

/* A state writer that keeps nothing. */
static pbfcl_status discard_section(void *user, const char *name, const void *data, size_t bytes)
{
    (void)user;
    (void)name;
    (void)data;
    (void)bytes;
    return PBFCL_OK;
}

/* Phases by particle: two 2^3 blocks of particles made bodies 0 and 1 among fluid particles
 * after 3 frames (the solver's order no longer the caller's) keep their phases through 20
 * frames and a removal of fluid particles below them, which renumbers them; the bodies keep
 * the shapes they had when made (every pairwise distance within 0.5 %); a body particle cannot
 * be removed; bad densities and stiffnesses are refused; a state with bodies cannot be saved;
 * setting every phase to fluid removes the bodies. */
START_TEST(test_bodies_phases)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 200, 0.3f, 0.3f, 0.3f);
    int nn[3] = {4, 2, 4}, cube[3] = {2, 2, 2};
    float lo[3] = {0.05f, 0.0f, 0.05f}, a[3] = {0.06f, 0.15f, 0.06f}, b[3] = {0.18f, 0.15f, 0.18f};
    size_t nf, na, nb;
    float *fluid = block(nn, lo, &nf), *pa = block(cube, a, &na), *pb = block(cube, b, &nb);
    ck_assert_int_eq(pbfcl_solver_add(s, fluid, NULL, nf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pa, NULL, na), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pb, NULL, nb), PBFCL_OK);
    size_t n = nf + na + nb;
    int *phase = malloc(n * sizeof *phase), *got = malloc(n * sizeof *got);
    for (size_t i = 0; i < n; i++)
        phase[i] = i < nf ? PBFCL_PHASE_FLUID : PBFCL_PHASE_BODY(i < nf + na ? 0 : 1);
    float *at_set = malloc(n * 3 * sizeof *at_set); /* the rest shapes: positions when set */
    for (int f = 0; f < 3; f++) /* sorted: the solver's order is no longer the caller's */
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, at_set, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phase, n), PBFCL_OK);
    int bodies = 0;
    ck_assert_int_eq(pbfcl_solver_body_count(s, &bodies), PBFCL_OK);
    ck_assert_int_eq(bodies, 2);
    ck_assert_int_eq(pbfcl_solver_set_body(s, 1, 1.0f, 2000.0f), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_body(s, 1, 0.0f, 2000.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("stiffness 0");
    ck_assert_int_eq(pbfcl_solver_set_body(s, 1, 1.0f, 0.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("density 0");
    size_t drop[2] = {0, 3}, solid_one = nf;
    ck_assert_int_eq(pbfcl_solver_remove(s, &solid_one, 1), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("belongs to body 0");
    float *pos = malloc(n * 3 * sizeof *pos);
    for (int f = 0; f < 20; f++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        if (f == 10) { /* fluid particles 0 and 3 go: every body particle's index drops by 2 */
            ck_assert_int_eq(pbfcl_solver_remove(s, drop, 2), PBFCL_OK);
            n -= 2;
            memmove(phase, phase + 2, n * sizeof *phase);
        }
    }
    ck_assert_int_eq(pbfcl_solver_get_phases(s, got, n), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == phase[i], "particle %zu has phase %d, set %d", i, got[i], phase[i]);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, n), PBFCL_OK);
    const float *rest[2] = {at_set + 3 * nf, at_set + 3 * (nf + na)};
    for (int body = 0; body < 2; body++) { /* rigid: every pairwise distance kept */
        const float *x = pos + 3 * (nf - 2 + (size_t)body * na);
        for (size_t i = 0; i < na; i++)
            for (size_t j = i + 1; j < na; j++) {
                double d0 = dist3(rest[body] + 3 * i, rest[body] + 3 * j);
                double d = dist3(x + 3 * i, x + 3 * j);
                ck_assert_msg(fabs(d - d0) <= 0.005 * d0, "body %d: %zu-%zu at %g, rest %g", body,
                              i, j, d, d0);
            }
    }
    float com[6], quat[8];
    ck_assert_int_eq(pbfcl_solver_get_bodies(s, com, quat, 2), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_bodies(s, com, quat, 1), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_msg(com[1] < a[1] + 2 * R, "body 0 did not fall (centre at %g m)", com[1]);
    ck_assert_int_eq(pbfcl_solver_save_state(s, discard_section, NULL), PBFCL_OK); /* bodies too */
    for (size_t i = 0; i < n; i++) /* all fluid: no bodies left */
        phase[i] = PBFCL_PHASE_FLUID;
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phase, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_body_count(s, &bodies), PBFCL_OK);
    ck_assert_int_eq(bodies, 0);
    ck_assert_int_eq(pbfcl_solver_save_state(s, discard_section, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    free(fluid);
    free(pa);
    free(pb);
    free(phase);
    free(got);
    free(pos);
    free(at_set);
}
END_TEST

/* Static particles by phase: a 3^3 block made static under falling fluid, after 3 frames (the
 * solver's order no longer the caller's), reads back PBFCL_PHASE_STATIC and stays exactly
 * where it was through 20 frames while the fluid lands on it; it cannot be removed, and a
 * state with static particles can be saved. */
START_TEST(test_static_phases)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 200, 0.3f, 0.3f, 0.3f);
    int nn[3] = {3, 3, 3}, mm[3] = {3, 2, 3};
    float lo[3] = {0.1f, 0.0f, 0.1f}, up[3] = {0.1f, 0.12f, 0.1f};
    size_t ns, nf;
    float *block_s = block(nn, lo, &ns), *block_f = block(mm, up, &nf);
    ck_assert_int_eq(pbfcl_solver_add(s, block_s, NULL, ns), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, block_f, NULL, nf), PBFCL_OK);
    size_t n = ns + nf;
    int *phase = malloc(n * sizeof *phase), *got = malloc(n * sizeof *got);
    float *at = malloc(n * 12), *pos = malloc(n * 12);
    for (size_t i = 0; i < n; i++)
        phase[i] = i < ns ? PBFCL_PHASE_STATIC : PBFCL_PHASE_FLUID;
    for (int f = 0; f < 3; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phase, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, at, n), PBFCL_OK);
    for (int f = 0; f < 20; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_phases(s, got, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, n), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == phase[i], "particle %zu has phase %d, set %d", i, got[i], phase[i]);
    for (size_t i = 0; i < ns; i++)
        ck_assert_msg(memcmp(pos + 3 * i, at + 3 * i, 12) == 0,
                      "static particle %zu moved from (%g, %g, %g) to (%g, %g, %g)", i, at[3 * i],
                      at[3 * i + 1], at[3 * i + 2], pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    for (size_t i = ns; i < n; i++) { /* none inside the box of the block's centres */
        int inside = 1;
        for (int a = 0; a < 3; a++)
            inside = inside && pos[3 * i + a] >= at[a] && pos[3 * i + a] <= at[3 * (ns - 1) + a];
        ck_assert_msg(!inside, "fluid particle %zu at (%g, %g, %g) is inside the static block", i,
                      pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    }
    size_t one = 0;
    ck_assert_int_eq(pbfcl_solver_remove(s, &one, 1), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("particles[0] = 0 is static");
    ck_assert_int_eq(pbfcl_solver_save_state(s, discard_section, NULL), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        phase[i] = PBFCL_PHASE_FLUID;
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phase, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_save_state(s, discard_section, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    free(block_s);
    free(block_f);
    free(phase);
    free(got);
    free(at);
    free(pos);
}
END_TEST

/* ---- phases as FleX has them (pbfcl_make_phase) --------------------------------------------- */

/* Whether a is within rel (relative) of b. */
static bool near_rel(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

/* Asserts that setting phase words (n of them) is refused with a message naming text. */
static void refuse_phases(pbfcl_solver *s, const int *words, size_t n, const char *text)
{
    ck_assert_int_eq(pbfcl_solver_set_particle_phases(s, words, n), PBFCL_ERR_BAD_ARGUMENT);
    expect_message(text);
}

/* Asserts that setting inverse masses w (n) is refused with a message naming text. */
static void refuse_inverse_masses(pbfcl_solver *s, const float *w, size_t n, const char *text)
{
    ck_assert_int_eq(pbfcl_solver_set_inverse_masses(s, w, n), PBFCL_ERR_BAD_ARGUMENT);
    expect_message(text);
}

/* Phase words and inverse masses by particle: 8 fluid particles, a body of 8 with self-collide
 * and 8 static ones (after 2 frames: the solver's order is not the caller's) read back as set,
 * in both the words and the short numbers; the inverse masses are the fluid's 1 / m, the body's
 * from its density, 0 for the static ones, and a set of them reads back; every bad phase or
 * inverse mass is refused naming the particle and the value, and leaves what was set. */
START_TEST(test_particle_phases)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 100, 0.3f, 0.3f, 0.3f);
    int nn[3] = {2, 2, 2};
    float lo[3][3] = {{0.05f, 0.0f, 0.05f}, {0.15f, 0.1f, 0.15f}, {0.2f, 0.0f, 0.05f}};
    for (int b = 0; b < 3; b++) {
        size_t c;
        float *p = block(nn, lo[b], &c);
        ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, c), PBFCL_OK);
        free(p);
    }
    for (int f = 0; f < 2; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    enum { N = 24 };
    int fluid = pbfcl_make_phase(0, PBFCL_PHASE_FLAG_FLUID | PBFCL_PHASE_FLAG_SELF_COLLIDE);
    int body = pbfcl_make_phase(1, PBFCL_PHASE_FLAG_SELF_COLLIDE);
    int fixed = pbfcl_make_phase(PBFCL_PHASE_GROUP_STATIC, 0);
    int words[N], got[N], bad[N];
    for (int i = 0; i < N; i++)
        words[i] = i < 8 ? fluid : i < 16 ? body : fixed;
    ck_assert_int_eq(pbfcl_solver_set_particle_phases(s, words, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_particle_phases(s, got, N), PBFCL_OK);
    ck_assert_int_eq(memcmp(got, words, sizeof got), 0);
    ck_assert_int_eq(pbfcl_solver_get_phases(s, got, N), PBFCL_OK);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(got[i], i < 8 ? PBFCL_PHASE_FLUID : i < 16 ? 1 : PBFCL_PHASE_STATIC);
    int bodies = 0;
    ck_assert_int_eq(pbfcl_solver_body_count(s, &bodies), PBFCL_OK);
    ck_assert_int_eq(bodies, 1);

    const struct {
        int first, last, phase;
        const char *text;
    } bad_phases[] = {
        {2, 2, fluid | (1 << 23), "particle 2 has phase 13631488 (0xd00000): it has unknown flag"},
        {3, 3, PBFCL_PHASE_INVALID, "particle 3 has phase -1 (0xffffffff): it has unknown flag"},
        {8, 15, body | PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER,
         "particle 8 has phase 3145729 (0x300001): PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER is not "
         "supported yet"},
        {8, 15, 500, "particle 8 has phase 500 (0x1f4): its group is out of range"},
        {0, 0, fluid | 2, "particle 0 has phase 5242882 (0x500002): the only fluid phase"},
        {1, 1, 0, "particle 1 has phase 0 (0x0): group 0 is the fluid's"},
        {16, 16, fixed | PBFCL_PHASE_FLAG_SELF_COLLIDE, "static group takes no flags"},
        {9, 9, 1, "particle 9 has phase 0x1, but body 0 (group 1) has phase 0x100001"},
    };
    for (size_t k = 0; k < sizeof bad_phases / sizeof bad_phases[0]; k++) {
        memcpy(bad, words, sizeof bad);
        for (int i = bad_phases[k].first; i <= bad_phases[k].last; i++)
            bad[i] = bad_phases[k].phase;
        refuse_phases(s, bad, N, bad_phases[k].text);
    }
    ck_assert_int_eq(pbfcl_solver_get_particle_phases(s, got, N), PBFCL_OK);
    ck_assert_int_eq(memcmp(got, words, sizeof got), 0); /* the refusals changed nothing */

    float w[N], back[N], m = (float)ref_fluid_mass(1000.0, R, 4.0 * R); /* the default h_ratio */
    ck_assert_int_eq(pbfcl_solver_set_body(s, 0, 1.0f, 2000.0f), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_inverse_masses(s, w, N), PBFCL_OK);
    for (int i = 0; i < N; i++) {
        double want = i < 8 ? 1.0 / m : i < 16 ? 0.5 / m : 0.0;
        ck_assert_msg(near_rel(w[i], want, 1e-5), "particle %d: inverse mass %g, want %g", i, w[i],
                      want);
    }
    for (int i = 8; i < 16; i++)
        w[i] = 500.0f; /* a body of density 1 / (500 V), 252 kg/m^3 (V = m / 1000) */
    ck_assert_int_eq(pbfcl_solver_set_inverse_masses(s, w, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_inverse_masses(s, back, N), PBFCL_OK);
    for (int i = 0; i < N; i++)
        ck_assert_msg(near_rel(back[i], w[i], 1e-6), "particle %d: inverse mass %g, set %g", i,
                      back[i], w[i]);
    const struct {
        int first, last;
        float w;
        const char *text;
    } bad_masses[] = {
        {3, 3, -1.0f, "particle 3 (phase 0x500000) has inverse mass -1 1/kg: an inverse mass is"},
        {9, 9, NAN, "particle 9 (phase 0x100001) has inverse mass nan 1/kg"},
        {10, 10, INFINITY, "particle 10 (phase 0x100001) has inverse mass inf 1/kg"},
        {0, 0, 100.0f, "particle 0 (phase 0x500000) has inverse mass 100 1/kg: a fluid"},
        {17, 17, 1.0f, "particle 17 (phase 0xfffff) has inverse mass 1 1/kg: a static"},
        {8, 15, 0.0f, "particle 8 (phase 0x100001) has inverse mass 0 1/kg: a body's particle"},
        {12, 12, 300.0f, "particle 12 has inverse mass 300 1/kg, but body 0 has 500"},
        {8, 15, 1e9f, "particle 8 (phase 0x100001) has inverse mass 1e+09 1/kg: a body's density"},
    };
    for (size_t k = 0; k < sizeof bad_masses / sizeof bad_masses[0]; k++) {
        float wb[N];
        memcpy(wb, w, sizeof wb);
        for (int i = bad_masses[k].first; i <= bad_masses[k].last; i++)
            wb[i] = bad_masses[k].w;
        refuse_inverse_masses(s, wb, N, bad_masses[k].text);
    }
    ck_assert_int_eq(pbfcl_solver_get_inverse_masses(s, back, N), PBFCL_OK);
    ck_assert(near_rel(back[8], w[8], 1e-6)); /* the refusals changed nothing */
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* The mean distance of each particle of a 2^3 cube (8 particles from first, in the caller's
 * order) to its three lattice neighbours. */
static double cube_spacing(const float *pos, size_t first)
{
    double sum = 0.0;
    for (int i = 0; i < 8; i++)
        for (int a = 0; a < 3; a++) /* the neighbour along axis a: bit a flipped */
            sum += dist3(pos + 3 * (first + (size_t)i), pos + 3 * (first + (size_t)(i ^ (1 << a))));
    return sum / 24.0;
}

/* Self-collide as FleX has it, on a soft body (stiffness 0.1) whose rest shape is a 2^3 cube
 * at spacing 1.2r, every lattice pair overlapping by 0.8r, without gravity: without the flag its
 * particles do not collide and it keeps its shape (spacing within 1 %); with it the contacts
 * push them apart against the shape matching (spacing grows by more than a quarter of the
 * overlap). */
START_TEST(test_self_collide)
{
    double spacing[2];
    for (int flag = 0; flag < 2; flag++) {
        pbfcl_context *ctx = test_open_context(device_spec);
        pbfcl_solver *s = open_solver(ctx, 50, 0.3f, 0.3f, 0.3f);
        pbfcl_scene_params sp;
        ck_assert_int_eq(pbfcl_solver_get_params(s, &sp, NULL), PBFCL_OK);
        sp.gravity[0] = sp.gravity[1] = sp.gravity[2] = 0.0f;
        ck_assert_int_eq(pbfcl_solver_set_params(s, &sp, NULL), PBFCL_OK);
        float cube[24];
        for (int i = 0; i < 8; i++)
            for (int a = 0; a < 3; a++)
                cube[3 * i + a] = 0.15f + ((i >> a) & 1) * 1.2f * R;
        ck_assert_int_eq(pbfcl_solver_add(s, cube, NULL, 8), PBFCL_OK);
        int phases[8];
        for (int i = 0; i < 8; i++)
            phases[i] = pbfcl_make_phase(1, flag ? PBFCL_PHASE_FLAG_SELF_COLLIDE : 0);
        ck_assert_int_eq(pbfcl_solver_set_particle_phases(s, phases, 8), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_set_body(s, 0, 0.1f, 1000.0f), PBFCL_OK);
        for (int f = 0; f < 10; f++)
            ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        float pos[24];
        ck_assert_int_eq(pbfcl_solver_get_positions(s, pos, 8), PBFCL_OK);
        spacing[flag] = cube_spacing(pos, 0);
        ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
        ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    }
    double rest = 1.2 * R, overlap = 0.8 * R;
    printf("self-collide: spacing %.4g r without the flag, %.4g r with it (rest 1.2 r)\n",
           spacing[0] / R, spacing[1] / R);
    ck_assert_msg(fabs(spacing[0] - rest) <= 0.01 * rest,
                  "without self-collide the body's spacing went from %g to %g", rest, spacing[0]);
    ck_assert_msg(spacing[1] > rest + 0.25 * overlap,
                  "with self-collide the body's spacing is %g, rest %g: its particles did not "
                  "push each other apart",
                  spacing[1], rest);
}
END_TEST

/* A phase word in the numbers of a checkpoint from before the phases' flags. */
static int old_phase(int word)
{
    if (word == pbfcl_make_phase(0, PBFCL_PHASE_FLAG_FLUID | PBFCL_PHASE_FLAG_SELF_COLLIDE))
        return 0;
    return word == PBFCL_PHASE_GROUP_STATIC ? -1 : word;
}

/* A checkpoint saved before the phases' flags: a state of fluid, a body and static particles
 * whose two phase sections (the API's by particle, the device's by slot) are rewritten in the
 * old numbers (0 fluid, b + 1, -1 static) loads into a new solver with today's phases, its
 * static particles stay put through a step, and that step is the saved solver's, bit for bit. */
START_TEST(test_old_checkpoint_phases)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 100, 0.3f, 0.3f, 0.3f);
    int nn[3] = {2, 2, 2};
    float lo[3][3] = {{0.05f, 0.0f, 0.05f}, {0.15f, 0.1f, 0.15f}, {0.2f, 0.0f, 0.05f}};
    for (int b = 0; b < 3; b++) {
        size_t c;
        float *p = block(nn, lo[b], &c);
        ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, c), PBFCL_OK);
        free(p);
    }
    enum { N = 24 };
    int shorts[N], words[N], got[N];
    for (int i = 0; i < N; i++)
        shorts[i] = i < 8 ? PBFCL_PHASE_FLUID : i < 16 ? PBFCL_PHASE_BODY(0) : PBFCL_PHASE_STATIC;
    ck_assert_int_eq(pbfcl_solver_set_phases(s, shorts, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_particle_phases(s, words, N), PBFCL_OK);
    memory_state m = {.count = 0};
    ck_assert_int_eq(pbfcl_solver_save_state(s, memory_state_put, &m), PBFCL_OK);
    int id_at = memory_state_find(&m, "particle_phases"), slot_at = memory_state_find(&m, "phases");
    ck_assert_int_ge(id_at, 0);
    ck_assert_int_ge(slot_at, 0);
    ck_assert_uint_eq(m.bytes[slot_at], N * 4);
    int *by_id = m.data[id_at];
    unsigned *by_slot = m.data[slot_at];
    int fixed = 0;
    for (int i = 0; i < N; i++) { /* the old numbers */
        by_id[i] = old_phase(by_id[i]);
        by_slot[i] = (unsigned)old_phase((int)by_slot[i]);
        fixed += by_slot[i] == 0xffffffffu;
    }
    ck_assert_int_eq(fixed, 8);
    pbfcl_solver *t = open_solver(ctx, 100, 0.3f, 0.3f, 0.3f);
    ck_assert_int_eq(pbfcl_solver_load_state(t, memory_state_get, &m), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_particle_phases(t, got, N), PBFCL_OK);
    ck_assert_int_eq(memcmp(got, words, sizeof got), 0);
    float before[3 * N], after[3 * N];
    ck_assert_int_eq(pbfcl_solver_get_positions(t, before, N), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(t, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(t, after, N), PBFCL_OK);
    ck_assert_int_eq(memcmp(before + 48, after + 48, 8 * 12), 0); /* static: not moved */
    float original[3 * N]; /* the saved solver's step from there: the same, bit for bit */
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, original, N), PBFCL_OK);
    for (int i = 0; i < 3 * N; i++)
        ck_assert_msg(original[i] == after[i], "particle %d: %c %.9g after the load, %.9g without",
                      i / 3, "xyz"[i % 3], after[i], original[i]);
    memory_state_free(&m);
    ck_assert_int_eq(pbfcl_solver_destroy(t), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* ---- particles by id ------------------------------------------------------------------------ */

/* A block falls and splashes for 100 frames. Every frame, particle k moves no further than its
 * speed allows (a wrong id map swaps particles metres apart), and for every particle the
 * nearest one of the next frame to where its velocity carries it is itself in most cases (it
 * is traced by continuity); meanwhile the solver's own order is not the caller's. */
START_TEST(test_trace_by_id)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 1000, 0.3f, 0.3f, 0.2f);
    const int nn[3] = {8, 10, 8};
    const float lo[3] = {0.0f, 0.05f, 0.0f};
    size_t n;
    float *start = block(nn, lo, &n);
    ck_assert_int_eq(pbfcl_solver_add(s, start, NULL, n), PBFCL_OK);
    float *x = malloc(n * 3 * sizeof *x), *next = malloc(n * 3 * sizeof *next);
    float *v = malloc(n * 3 * sizeof *v);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, x, n), PBFCL_OK);
    ck_assert_msg(memcmp(x, start, n * 3 * sizeof *x) == 0, "positions differ before any step");
    const float dt = 1.0f / 60.0f;
    long traced = 0, followed = 0;
    double worst = 0.0;
    for (int f = 0; f < 100; f++) {
        pbfcl_stats st;
        ck_assert_int_eq(pbfcl_solver_step(s, dt, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_stats(s, &st), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_positions(s, next, n), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_velocities(s, v, n), PBFCL_OK);
        double reach = (st.max_speed + 9.81 * dt) * dt * 1.5 + 1e-4;
        for (size_t k = 0; k < n; k++) {
            double d = dist3(x + 3 * k, next + 3 * k);
            worst = fmax(worst, d / reach);
            ck_assert_msg(d <= reach, "frame %d: particle %zu moved %.4f m, more than %.4f m", f, k,
                          d, reach);
        }
        for (size_t k = 0; k < n; k += 7) { /* the nearest to x_k + v_k dt is k itself */
            float guess[3];
            for (int a = 0; a < 3; a++)
                guess[a] = x[3 * k + a] + v[3 * k + a] * dt;
            size_t best = 0;
            for (size_t j = 1; j < n; j++)
                if (dist3(guess, next + 3 * j) < dist3(guess, next + 3 * best))
                    best = j;
            traced++;
            followed += best == k;
        }
        memcpy(x, next, n * 3 * sizeof *x);
    }
    ck_assert_msg(followed >= traced * 9 / 10, "only %ld of %ld traced particles were followed",
                  followed, traced);
    ck_assert_msg(x[1] < start[1] - 0.02f, "particle 0 did not fall (y %.3f from %.3f)", x[1],
                  start[1]);
    /* the render hook writes the caller's order too: entry k is particle k, w its speed */
    cl_context clc;
    cl_command_queue q;
    ck_assert_int_eq(pbfcl_context_cl(ctx, &clc, NULL, &q), PBFCL_OK);
    cl_int err;
    cl_mem buf = clCreateBuffer(clc, CL_MEM_READ_WRITE, n * 16, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(pbfcl_solver_copy_positions(s, buf), PBFCL_OK);
    float *internal = malloc(n * 16);
    ck_assert_int_eq(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * 16, internal, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t k = 0; k < n; k++) {
        double speed = sqrt((double)v[3 * k] * v[3 * k] + (double)v[3 * k + 1] * v[3 * k + 1] +
                            (double)v[3 * k + 2] * v[3 * k + 2]);
        for (int a = 0; a < 3; a++)
            ck_assert_msg(internal[4 * k + a] == x[3 * k + a],
                          "copy_positions[%zu][%d] = %.7g, get_positions %.7g", k, a,
                          internal[4 * k + a], x[3 * k + a]);
        ck_assert_msg(fabs(internal[4 * k + 3] - speed) <= 1e-6 + 1e-5 * speed,
                      "copy_positions[%zu].w = %.7g, |v| %.7g", k, internal[4 * k + 3], speed);
    }
    fprintf(stderr, "    traced %ld, followed %ld; largest move %.2f of its bound\n", traced,
            followed, worst);
    clReleaseMemObject(buf);
    free(internal);
    free(start);
    free(x);
    free(next);
    free(v);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* Emitting and draining: added particles get the next ids and their exact data; removing
 * closes the gaps in the caller's order (erase semantics); the capacity is enforced. */
START_TEST(test_add_remove)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 1500, 0.3f, 0.3f, 0.2f);
    const int nn[3] = {10, 10, 10};
    const float lo[3] = {0.0f, 0.0f, 0.0f}, lo2[3] = {0.0f, 0.22f, 0.0f};
    size_t n, n2;
    float *a = block(nn, lo, &n);
    ck_assert_int_eq(pbfcl_solver_add(s, a, NULL, n), PBFCL_OK);
    for (int f = 0; f < 5; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    const int mm[3] = {5, 4, 5};
    float *b = block(mm, lo2, &n2); /* an emitter: 100 particles shot sideways */
    float *bv = malloc(n2 * 3 * sizeof *bv);
    for (size_t i = 0; i < n2; i++) {
        bv[3 * i] = 1.0f;
        bv[3 * i + 1] = -0.5f;
        bv[3 * i + 2] = 0.25f;
    }
    ck_assert_int_eq(pbfcl_solver_add(s, b, bv, n2), PBFCL_OK);
    size_t count = 0;
    ck_assert_int_eq(pbfcl_solver_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, n + n2);
    float *x = malloc(count * 3 * sizeof *x), *v = malloc(count * 3 * sizeof *v);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, x, count), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_velocities(s, v, count), PBFCL_OK);
    ck_assert_msg(memcmp(x + 3 * n, b, n2 * 3 * sizeof *b) == 0, "added positions differ");
    ck_assert_msg(memcmp(v + 3 * n, bv, n2 * 3 * sizeof *bv) == 0, "added velocities differ");
    for (int f = 0; f < 10; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, x, count), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, b, NULL, 401), PBFCL_ERR_CAPACITY);
    /* drain every third particle and particle count - 1 */
    size_t *gone = malloc(count * sizeof *gone), ngone = 0;
    for (size_t k = 0; k < count; k += 3)
        gone[ngone++] = k;
    gone[ngone++] = count - 1;
    ck_assert_int_eq(pbfcl_solver_remove(s, gone, ngone), PBFCL_OK);
    size_t left = 0;
    ck_assert_int_eq(pbfcl_solver_count(s, &left), PBFCL_OK);
    ck_assert_uint_eq(left, count - ngone);
    float *y = malloc(left * 3 * sizeof *y);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, y, left), PBFCL_OK);
    size_t j = 0;
    for (size_t k = 0; k < count; k++) {
        if (k % 3 == 0 || k == count - 1)
            continue;
        ck_assert_msg(memcmp(y + 3 * j, x + 3 * k, 3 * sizeof *y) == 0,
                      "after removal particle %zu is not the former particle %zu", j, k);
        j++;
    }
    ck_assert_uint_eq(j, left);
    /* the survivors go on simulating, ids intact */
    for (int f = 0; f < 5; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    pbfcl_stats st;
    ck_assert_int_eq(pbfcl_solver_stats(s, &st), PBFCL_OK);
    ck_assert_uint_eq(st.nan, 0);
    ck_assert_uint_eq(st.outside, 0);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, y, left), PBFCL_OK);
    size_t dup[2] = {3, 3};
    ck_assert_int_eq(pbfcl_solver_remove(s, dup, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("listed twice");
    size_t beyond = left;
    ck_assert_int_eq(pbfcl_solver_remove(s, &beyond, 1), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("not an active particle");
    free(a);
    free(b);
    free(bv);
    free(x);
    free(v);
    free(y);
    free(gone);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK); /* takes the solver with it */
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_ERR_INVALID_HANDLE);
}
END_TEST

/* ---- parameters between steps ---------------------------------------------------------------- */

static double mean_y(pbfcl_solver *s, size_t n, float *buf)
{
    ck_assert_int_eq(pbfcl_solver_get_positions(s, buf, n), PBFCL_OK);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += buf[3 * i + 1];
    return sum / (double)n;
}

/* Without gravity a block floats still; with gravity set between steps it falls. A smaller
 * kernel radius (a new grid) cuts the neighbours from the 26 of h = 4r toward the 18 of 3r. */
START_TEST(test_params_mid_run)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 600, 0.3f, 0.4f, 0.3f);
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
    ck_assert_int_eq(pbfcl_solver_get_params(s, &sp, &vp), PBFCL_OK);
    sp.gravity[1] = 0.0f;
    ck_assert_int_eq(pbfcl_solver_set_params(s, &sp, &vp), PBFCL_OK);
    const int nn[3] = {8, 8, 8};
    const float lo[3] = {0.07f, 0.2f, 0.07f};
    size_t n;
    float *p = block(nn, lo, &n), *buf = malloc(n * 3 * sizeof *buf);
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, n), PBFCL_OK);
    double y0 = mean_y(s, n, buf);
    for (int f = 0; f < 10; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    double y1 = mean_y(s, n, buf);
    ck_assert_msg(fabs(y1 - y0) < 0.002, "without gravity the block moved %.4f m", y1 - y0);
    pbfcl_stats st4, st3;
    ck_assert_int_eq(pbfcl_solver_stats(s, &st4), PBFCL_OK);
    sp.gravity[1] = -9.81f;
    ck_assert_int_eq(pbfcl_solver_set_params(s, &sp, &vp), PBFCL_OK);
    for (int f = 0; f < 10; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    double y2 = mean_y(s, n, buf), fall = 0.5 * 9.81 * (10.0 / 60.0) * (10.0 / 60.0);
    ck_assert_msg(y1 - y2 > 0.5 * fall, "with gravity the block fell %.4f m, not about %.4f m",
                  y1 - y2, fall);
    sp.gravity[1] = 0.0f;
    vp.h_ratio = 3.0f;
    ck_assert_int_eq(pbfcl_solver_set_params(s, &sp, &vp), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_stats(s, &st3), PBFCL_OK);
    ck_assert_msg(st3.neighbours_avg < 0.85 * st4.neighbours_avg,
                  "h = 3r gives %.1f neighbours on average, h = 4r gave %.1f", st3.neighbours_avg,
                  st4.neighbours_avg);
    pbfcl_solver_params got;
    ck_assert_int_eq(pbfcl_solver_get_params(s, NULL, &got), PBFCL_OK);
    ck_assert(got.h_ratio == 3.0f);
    /* a refused value leaves the old ones */
    int iterations = got.iterations;
    vp.iterations = iterations + 5;
    vp.h_ratio = -1.0f;
    ck_assert_int_eq(pbfcl_solver_set_params(s, &sp, &vp), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("solver.h_ratio");
    ck_assert_int_eq(pbfcl_solver_get_params(s, NULL, &got), PBFCL_OK);
    ck_assert_int_eq(got.iterations, iterations);
    ck_assert(got.h_ratio == 3.0f);
    /* a frame dt given to step becomes the parameters' dt */
    ck_assert_int_eq(pbfcl_solver_step(s, 0.01f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_params(s, NULL, &got), PBFCL_OK);
    ck_assert(got.dt == 0.01f);
    free(p);
    free(buf);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* ---- the caller's OpenCL objects --------------------------------------------------------------
 */

/* The device_index-th device over all platforms (pbfcl's numbering). */
static cl_device_id nth_device(int index)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    ck_assert_int_eq(clGetPlatformIDs(16, plats, &np), CL_SUCCESS);
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id devs[64];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS)
            continue;
        if (index < (int)nd)
            return devs[index];
        index -= (int)nd;
    }
    ck_abort_msg("device %s not found", device_spec);
    return NULL;
}

/* A context on the caller's cl_context and queues: timers need profiling, copy_positions
 * fills the caller's buffer, and a buffer of another context or too small is refused. */
START_TEST(test_wrap_cl_context)
{
    cl_device_id dev = nth_device(atoi(device_spec));
    cl_int err;
    cl_context clc = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(clc, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_command_queue plain = clCreateCommandQueue(clc, dev, 0, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    pbfcl_context_desc d;
    pbfcl_context_desc_defaults(&d);
    d.cl_context = clc;
    d.cl_device = dev;
    d.cl_queue = q;
    pbfcl_context *ctx = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_OK);
    cl_context got_context;
    cl_command_queue got_queue;
    ck_assert_int_eq(pbfcl_context_cl(ctx, &got_context, NULL, &got_queue), PBFCL_OK);
    ck_assert_ptr_eq(got_context, clc);
    ck_assert_ptr_eq(got_queue, q);
    pbfcl_solver *s = open_solver(ctx, 500, 0.2f, 0.2f, 0.2f);
    const int nn[3] = {7, 7, 7};
    const float lo[3] = {0.0f, 0.0f, 0.0f};
    size_t n;
    float *p = block(nn, lo, &n);
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, n), PBFCL_OK);
    pbfcl_timers t;
    ck_assert_int_eq(pbfcl_solver_timer_count(s), 0); /* no timed step yet */
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, &t), PBFCL_OK);
    ck_assert_msg(t.total > 0.0 && t.kernels > 0 && t.substeps >= 3,
                  "timers: total %.4f ms, %d kernels, %d substeps", t.total, t.kernels, t.substeps);
    double sum = 0.0, ms;
    const char *name;
    for (int i = 0; i < pbfcl_solver_timer_count(s); i++) {
        name = NULL;
        ck_assert_int_eq(pbfcl_solver_timer(s, i, &name, &ms), PBFCL_OK);
        ck_assert_msg(name && ms >= 0.0 && timer_ms(s, name) == ms, "stage %d: %s %g ms", i,
                      name ? name : "(null)", ms);
        sum += ms;
    }
    ck_assert_msg(fabs(sum - t.total) <= 1e-9 * t.total + 1e-12, "stages sum to %.6f, total %.6f",
                  sum, t.total);
    ck_assert_msg(timer_ms(s, "sort") > 0.0 && timer_ms(s, "solve") > 0.0, "sort %.4f, solve %.4f",
                  timer_ms(s, "sort"), timer_ms(s, "solve"));
    /* pbf's stages only: none of sph's, no diffuse while it is off, each named once */
    ck_assert(timer_ran(s, "predict") && timer_ran(s, "neighbours"));
    ck_assert(!timer_ran(s, "density") && !timer_ran(s, "diffuse"));
    ck_assert_msg(timer_ms(s, "diffuse") == 0.0, "a stage that did not run took no time");
    ck_assert_int_eq(pbfcl_solver_timer(s, pbfcl_solver_timer_count(s), &name, &ms),
                     PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_timer_count - 1");
    ck_assert_int_eq(pbfcl_solver_timer(s, -1, &name, &ms), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_timer_ms(s, "sorting", &ms), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("'sorting' is not a stage; the stages are: predict hash sort");
    ck_assert_int_eq(pbfcl_solver_timer_ms(s, NULL, &ms), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("name is NULL");
    const char *kname = NULL;
    ck_assert_int_gt(pbfcl_solver_kernel_times(s, 0, &kname, NULL, NULL), 0);
    ck_assert_ptr_nonnull(kname);
    /* copy_positions into the caller's buffer */
    cl_mem buf = clCreateBuffer(clc, CL_MEM_READ_WRITE, n * 16, NULL, &err);
    cl_mem small = clCreateBuffer(clc, CL_MEM_READ_WRITE, n * 16 - 16, NULL, &err);
    ck_assert_int_eq(pbfcl_solver_copy_positions(s, buf), PBFCL_OK);
    float *xs = malloc(n * 16), *byid = malloc(n * 12);
    ck_assert_int_eq(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * 16, xs, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, byid, n), PBFCL_OK);
    double a = 0.0, b = 0.0;
    for (size_t i = 0; i < n; i++) {
        a += xs[4 * i + 1];
        b += byid[3 * i + 1];
    }
    ck_assert_msg(fabs(a - b) < 1e-4 * n, "copied y sum %.6f, by id %.6f", a, b);
    ck_assert_int_eq(pbfcl_solver_copy_positions(s, small), PBFCL_ERR_BUFFER_SIZE);
    expect_message("particles need");
    /* a buffer of another context */
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, n * 16, NULL, &err);
    ck_assert_int_eq(pbfcl_solver_copy_positions(s, foreign), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("another cl_context");
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    /* the caller's objects outlive the context (it retained and released them) */
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    /* a queue without profiling: steps run, timers are refused */
    d.cl_queue = plain;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_OK);
    s = open_solver(ctx, 500, 0.2f, 0.2f, 0.2f);
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, &t), PBFCL_ERR_UNSUPPORTED);
    expect_message("CL_QUEUE_PROFILING_ENABLE");
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    /* a queue of another context than the one given */
    cl_command_queue other_q = clCreateCommandQueue(other, dev, 0, &err);
    d.cl_queue = other_q;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_null(ctx);
    d.cl_queue = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("give all three");
    free(p);
    free(xs);
    free(byid);
    clReleaseMemObject(buf);
    clReleaseMemObject(small);
    clReleaseMemObject(foreign);
    clReleaseCommandQueue(other_q);
    clReleaseCommandQueue(plain);
    clReleaseCommandQueue(q);
    clReleaseContext(other);
    clReleaseContext(clc);
}
END_TEST

/* ---- misuse ------------------------------------------------------------------------------------
 */

/* The push refuses a direction or a push vector that is not finite (a NaN direction silently
 * pushed nothing, a NaN push made every pushed particle NaN) and, while it is on (strength not
 * 0), a zero direction, a zero push or no reach; strength 0 turns it off whatever the rest. */
START_TEST(test_push_refuses_nonsense)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 10, 1.0f, 1.0f, 1.0f);
    const float o[3] = {0.5f, 0.5f, 0.5f}, d[3] = {0, -1, 0}, zero[3] = {0, 0, 0};
    const float nan_dir[3] = {NAN, 0, 1}, inf_dir[3] = {0, INFINITY, 0}, nan_push[3] = {1, NAN, 0};
    ck_assert_int_eq(pbfcl_solver_set_push(s, o, nan_dir, d, 0.1f, 5.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_set_push: dir (nan, 0, 1) is not finite");
    ck_assert_int_eq(pbfcl_solver_set_push(s, o, inf_dir, d, 0.1f, 5.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("dir (0, inf, 0) is not finite");
    ck_assert_int_eq(pbfcl_solver_set_push(s, o, d, nan_push, 0.1f, 5.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("push (1, nan, 0) is not finite");
    ck_assert_int_eq(pbfcl_solver_set_push(s, nan_dir, d, d, 0.1f, 5.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("origin (nan, 0, 1) is not finite");
    ck_assert_int_eq(pbfcl_solver_set_push(s, o, zero, d, 0.1f, 5.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("dir is (0, 0, 0); give the ray a direction");
    ck_assert_int_eq(pbfcl_solver_set_push(s, o, d, zero, 0.1f, 5.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("push is (0, 0, 0)");
    ck_assert_int_eq(pbfcl_solver_set_push(s, o, d, d, 0.0f, 5.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("radius 0 is not > 0");
    ck_assert_int_eq(pbfcl_solver_set_push(s, zero, zero, zero, 0.0f, 0.0f), PBFCL_OK); /* off */
    ck_assert_int_eq(pbfcl_solver_set_push(s, o, d, d, 0.1f, 5.0f), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* A particle placed outside the box, by pbfcl_solver_add or pbfcl_solver_set_positions, is
 * refused naming the particle and the box, and nothing is changed (the next step moved it to
 * the nearest wall without a word); one on a face of the box is taken and the next step
 * moves it to the walls (the box less r), as it holds every particle. */
START_TEST(test_outside_box_refused)
{
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver *s = open_solver(ctx, 10, 1.0f, 0.5f, 1.0f);
    float two[6] = {0.5f, 0.25f, 0.5f, 0.5f, 0.7f, 0.5f}, got[6];
    size_t count = 9;
    ck_assert_int_eq(pbfcl_solver_add(s, two, NULL, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_add: particle 1 is at y = 0.7, outside the box (0, 0, 0) to "
                   "(1, 0.5, 1)");
    ck_assert_int_eq(pbfcl_solver_count(s, &count), PBFCL_OK);
    ck_assert_uint_eq(count, 0); /* neither was added */
    two[4] = 0.5f;               /* on the top face */
    ck_assert_int_eq(pbfcl_solver_add(s, two, NULL, 2), PBFCL_OK);
    float moved[6] = {-0.01f, 0.25f, 0.5f, 0.5f, 0.25f, 0.5f};
    ck_assert_int_eq(pbfcl_solver_set_positions(s, moved, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_solver_set_positions: particle 0 is at x = -0.01, outside the box");
    ck_assert_int_eq(pbfcl_solver_get_positions(s, got, 2), PBFCL_OK);
    ck_assert(memcmp(got, two, sizeof got) == 0); /* unchanged */
    const float up[3] = {0.0f, 0.0f, 0.0f};
    pbfcl_scene_params sp;
    ck_assert_int_eq(pbfcl_solver_get_params(s, &sp, NULL), PBFCL_OK);
    memcpy(sp.gravity, up, sizeof up);
    ck_assert_int_eq(pbfcl_solver_set_params(s, &sp, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, got, 2), PBFCL_OK);
    ck_assert_msg(got[4] <= 0.5f - R, "the particle on the face stayed at y = %g", got[4]);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

/* Every entry point given a NULL handle, a destroyed one, a wrong count or a missing array
 * returns its status (and never crashes); the message names the argument. */
START_TEST(test_misuse)
{
    float xyz[3] = {0.1f, 0.1f, 0.1f};
    size_t count;
    pbfcl_stats st;
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
    pbfcl_timers t;
    unsigned mn;
    int phase = 0;
    const float o[3] = {0, 0, 0};
    /* NULL handles */
    ck_assert_int_eq(pbfcl_solver_step(NULL, 0.0f, NULL), PBFCL_ERR_INVALID_HANDLE);
    expect_message("solver is NULL");
    ck_assert_int_eq(pbfcl_solver_add(NULL, xyz, NULL, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_remove(NULL, &count, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_count(NULL, &count), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_capacity(NULL, &count), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_get_positions(NULL, xyz, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_set_positions(NULL, xyz, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_get_velocities(NULL, xyz, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_set_velocities(NULL, xyz, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_get_densities(NULL, xyz, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_set_phases(NULL, &phase, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_get_phases(NULL, &phase, 1), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_stats(NULL, &st), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_set_params(NULL, &sp, &vp), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_get_params(NULL, &sp, &vp), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_copy_positions(NULL, NULL), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_max_neighbours(NULL, &mn), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_timer_count(NULL), 0);
    ck_assert_int_eq(pbfcl_solver_timer(NULL, 0, NULL, NULL), PBFCL_ERR_INVALID_HANDLE);
    double ms;
    ck_assert_int_eq(pbfcl_solver_timer_ms(NULL, "sort", &ms), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_set_push(NULL, o, o, o, 0, 0), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_finish(NULL), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_compute_densities(NULL), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_save_state(NULL, NULL, NULL), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_load_state(NULL, NULL, NULL), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_context_cl(NULL, NULL, NULL, NULL), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_desc_check(NULL), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("desc is NULL");
    ck_assert_int_eq(pbfcl_devices_print(NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_device_find("no-such-device-anywhere", NULL), PBFCL_ERR_BAD_DEVICE);
    expect_message("no-such-device-anywhere");
    ck_assert_int_eq(pbfcl_solver_destroy(NULL), PBFCL_OK); /* like free(NULL) */
    ck_assert_int_eq(pbfcl_context_destroy(NULL), PBFCL_OK);
    pbfcl_solver_desc desc;
    pbfcl_solver_desc_defaults(&desc);
    desc.capacity = 100;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(NULL, &desc, &s), PBFCL_ERR_INVALID_HANDLE);
    expect_message("context is NULL");

    pbfcl_context *ctx = test_open_context(device_spec);
    ck_assert_int_eq(pbfcl_solver_create(ctx, NULL, &s), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("desc is NULL");
    desc.capacity = 0;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &desc, &s), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("capacity");
    desc.capacity = 100;
    desc.solver.h_ratio = 9.0f;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &desc, &s), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("solver.h_ratio");
    ck_assert_ptr_null(s);
    ck_assert_int_eq(pbfcl_solver_desc_check(&desc), PBFCL_ERR_BAD_ARGUMENT); /* no device */
    expect_message("solver.h_ratio");
    desc.solver.h_ratio = 4.0f;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &desc, &s), PBFCL_OK);
    /* counts and arrays */
    float two[6] = {0.1f, 0.1f, 0.1f, 0.2f, 0.1f, 0.1f};
    ck_assert_int_eq(pbfcl_solver_add(s, two, NULL, 2), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(s, xyz, 1), PBFCL_ERR_BUFFER_SIZE);
    expect_message("count is 1 but the solver has 2");
    ck_assert_int_eq(pbfcl_solver_set_positions(s, NULL, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("positions is NULL");
    ck_assert_int_eq(pbfcl_solver_get_velocities(s, two, 101), PBFCL_ERR_CAPACITY);
    ck_assert_int_eq(pbfcl_solver_add(s, NULL, NULL, 3), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_add(s, two, NULL, 99), PBFCL_ERR_CAPACITY);
    expect_message("capacity of 100");
    float bad[3] = {0.1f, NAN, 0.1f};
    ck_assert_int_eq(pbfcl_solver_add(s, bad, NULL, 1), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("positions[1]");
    int solid[2] = {0, PBFCL_PHASE_BODY(0)}, wild[2] = {-2, 0};
    ck_assert_int_eq(pbfcl_solver_set_phases(s, solid, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("body 0 has 1 particle;");
    ck_assert_int_eq(pbfcl_solver_set_phases(s, wild, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("phases[0] is -2");
    ck_assert_int_eq(pbfcl_solver_set_body(s, 0, 1.0f, 1000.0f), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("body 0 does not exist");
    int both[2] = {PBFCL_PHASE_BODY(0), PBFCL_PHASE_BODY(0)};
    float outside[6] = {0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.9995f}; /* z beyond the walls at 0.99 */
    ck_assert_int_eq(pbfcl_solver_set_positions(s, outside, 2), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, both, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("body 0: particle 1 is at z = 0.9995, beyond the walls");
    int fixed[2] = {PBFCL_PHASE_FLUID, PBFCL_PHASE_STATIC};
    ck_assert_int_eq(pbfcl_solver_set_phases(s, fixed, 2), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("a static particle: particle 1 is at z = 0.9995, beyond the walls");
    int phases[2] = {7, 7};
    ck_assert_int_eq(pbfcl_solver_get_phases(s, phases, 2), PBFCL_OK);
    ck_assert(phases[0] == PBFCL_PHASE_FLUID && phases[1] == PBFCL_PHASE_FLUID);
    ck_assert_int_eq(pbfcl_solver_step(s, NAN, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_step(s, 5.0f, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_copy_positions(s, NULL), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_solver_set_params(s, NULL, NULL), PBFCL_OK); /* keeps both */
    ck_assert_int_eq(pbfcl_solver_get_params(s, NULL, &vp), PBFCL_OK);
    vp.iterations = -1;
    ck_assert_int_eq(pbfcl_solver_set_params(s, NULL, &vp), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("solver.iterations");
    ck_assert_int_eq(pbfcl_solver_save_state(s, NULL, NULL), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("write is NULL");
    ck_assert_int_eq(pbfcl_solver_load_state(s, NULL, NULL), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("read is NULL");
    /* a destroyed solver */
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, &t), PBFCL_ERR_INVALID_HANDLE);
    expect_message("destroyed");
    ck_assert_int_eq(pbfcl_solver_get_positions(s, two, 2), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_save_state(s, NULL, NULL), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_ERR_INVALID_HANDLE);
    /* a context passed as a solver is refused, not dereferenced */
    ck_assert_int_eq(pbfcl_solver_count((pbfcl_solver *)ctx, &count), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_solver_create(ctx, &desc, &s), PBFCL_ERR_INVALID_HANDLE);
    /* every status has a name and a message */
    ck_assert_str_eq(pbfcl_status_name(PBFCL_ERR_VERSION), "PBFCL_ERR_VERSION");
    ck_assert_ptr_nonnull(strstr(pbfcl_status_message(PBFCL_ERR_INVALID_HANDLE), "handle"));
}
END_TEST

/* A program built against another major version is refused at init; the run-time version is
 * the header's. */
START_TEST(test_version)
{
    ck_assert_int_eq(pbfcl_version(), PBFCL_VERSION);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", PBFCL_VERSION_MAJOR, PBFCL_VERSION_MINOR,
             PBFCL_VERSION_PATCH);
    ck_assert_str_eq(pbfcl_version_string(), want);
    pbfcl_context *ctx = (pbfcl_context *)1;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION + 10000, NULL, &ctx), PBFCL_ERR_VERSION);
    ck_assert_ptr_null(ctx);
    expect_message("rebuild it against");
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION + 1, NULL, NULL), PBFCL_ERR_BAD_ARGUMENT);
}
END_TEST

/* A kernel override directory that lacks a file, or holds a broken one, fails naming the path
 * and the fix; a copy of cl/ serves with its folders or flat; the built-in kernels need no
 * directory at all. */
START_TEST(test_kernel_dir)
{
    pbfcl_context_desc d;
    pbfcl_context_desc_defaults(&d);
    d.device = device_spec;
    d.kernel_dir = "/nonexistent/pbfcl-kernels";
    pbfcl_context *ctx = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_ERR_KERNEL_FILE);
    expect_message("/nonexistent/pbfcl-kernels");
    expect_message("unset it to use the kernels built into the library");
    /* the same files flat (dir/pbf.cl, not dir/pbf/pbf.cl) are found too */
    char flat[] = "/tmp/pbfcl-test-kernels-flat-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(flat));
    char cmd[768];
    snprintf(cmd, sizeof cmd, "cp %s/*/*.cl %s/*/*.h %s/", PBFCL_TEST_CL_DIR, PBFCL_TEST_CL_DIR,
             flat);
    ck_assert_int_eq(system(cmd), 0);
    d.kernel_dir = flat;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    /* a flat copy that lacks a file names the file in its folder */
    snprintf(cmd, sizeof cmd, "rm %s/hash.cl", flat);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_ERR_KERNEL_FILE);
    expect_message("grid/hash.cl");
    snprintf(cmd, sizeof cmd, "rm -r %s", flat);
    ck_assert_int_eq(system(cmd), 0);
    /* a copy of cl/, its folders kept, with a broken pbf/pbf.cl */
    char dir[] = "/tmp/pbfcl-test-kernels-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp -r %s/. %s/ && echo 'this is not OpenCL C' >> %s/pbf/pbf.cl",
             PBFCL_TEST_CL_DIR, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    d.kernel_dir = dir;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &d, &ctx), PBFCL_OK);
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    sd.capacity = 10;
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &sd, &s), PBFCL_ERR_BUILD);
    expect_message(dir);
    expect_message("pbf/pbf.cl");
    expect_message("fix the files there, or unset the override");
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
    snprintf(cmd, sizeof cmd, "rm -r %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The value helpers (parameter and range descriptions) refuse NULL with a message and a
 * neutral result instead of crashing; the ranges they describe are the ones the loaders and
 * the command line enforce. No device needed. */
START_TEST(test_value_helpers)
{
    pbfcl_solver_params p;
    pbfcl_solver_params_defaults(&p);
    const pbfcl_param_info *iters = NULL;
    for (int i = 0; i < pbfcl_solver_param_count(); i++)
        if (!strcmp(pbfcl_solver_param(i)->name, "iterations"))
            iters = pbfcl_solver_param(i);
    ck_assert_ptr_nonnull(iters);
    ck_assert_ptr_null(pbfcl_solver_param(pbfcl_solver_param_count()));
    ck_assert(pbfcl_param_get(NULL, iters) == 0.0);
    expect_message("p is NULL");
    ck_assert(pbfcl_param_get(&p, NULL) == 0.0);
    expect_message("info is NULL");
    pbfcl_param_set(NULL, iters, 3.0);
    expect_message("p is NULL");
    ck_assert_int_eq(pbfcl_param_in_range(NULL, 1.0), 0);
    expect_message("info is NULL");
    char text[96];
    ck_assert_int_eq(pbfcl_param_range_text(NULL, text, sizeof text), -1);
    ck_assert_int_eq(pbfcl_param_range_text(iters, NULL, 10), -1);
    expect_message("buf is NULL");
    ck_assert_int_gt(pbfcl_param_range_text(iters, NULL, 0), 0); /* snprintf's count query */
    ck_assert_ptr_null(pbfcl_scene_range(NULL));
    ck_assert_ptr_null(pbfcl_scene_range("no_such_key"));
    ck_assert_int_eq(pbfcl_range_holds(NULL, 1.0), 0);
    pbfcl_range_text(NULL, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "NULL"));
    ck_assert_int_eq(pbfcl_scene_is_file(NULL), 0);
    ck_assert_int_eq(pbfcl_scene_is_file("dam-break"), 0);
    ck_assert_int_ne(pbfcl_scene_is_file("my.json"), 0);
    /* the particle count's range is the solver's limit, a whole number from 1 */
    const pbfcl_setting_range *count = pbfcl_scene_range("particles");
    ck_assert_ptr_nonnull(count);
    ck_assert(!pbfcl_range_holds(count, 0.0) && pbfcl_range_holds(count, 1.0));
    ck_assert(!pbfcl_range_holds(count, 2.5) && !pbfcl_range_holds(count, count->hi + 1.0));
    const pbfcl_setting_range *r = pbfcl_scene_range("particle_radius");
    ck_assert(r && !pbfcl_range_holds(r, 0.0) && pbfcl_range_holds(r, 0.01));
    pbfcl_range_text(r, text, sizeof text);
    ck_assert_str_eq(text, "a number > 0 and <= 1000");
}
END_TEST

/* A scene setup: loaded, its parameters changed (a larger radius gives fewer particles, the
 * particle count sets the radius), a change that leaves the fluid outside the box refused,
 * and the handle checked like the others. No device needed. */
START_TEST(test_scene_setup)
{
    pbfcl_scene_setup *s = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_load("dam-break", &s), PBFCL_OK);
    char name[64];
    ck_assert_int_eq(pbfcl_scene_setup_name(s, name, sizeof name), PBFCL_OK);
    ck_assert_str_eq(name, "dam-break");
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
    ck_assert_int_eq(pbfcl_scene_setup_get_params(s, &sp, &vp), PBFCL_OK);
    float *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    ck_assert_int_eq(pbfcl_scene_setup_fill(s, &a, &na), PBFCL_OK);
    sp.particle_radius *= 2.0f;
    vp.iterations = 7;
    ck_assert_int_eq(pbfcl_scene_setup_set_params(s, &sp, &vp), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_fill(s, &b, &nb), PBFCL_OK);
    ck_assert_msg(nb * 6 < na && nb * 10 > na, "radius x 2: %zu particles from %zu", nb, na);
    pbfcl_solver_params got;
    ck_assert_int_eq(pbfcl_scene_setup_get_params(s, NULL, &got), PBFCL_OK);
    ck_assert_int_eq(got.iterations, 7);
    pbfcl_free(b);
    ck_assert_int_eq(pbfcl_scene_setup_set_particle_count(s, 5000), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_fill(s, &b, &nb), PBFCL_OK);
    ck_assert_msg(nb > 4000 && nb < 6000, "about 5000 particles: %zu", nb);
    sp.domain_max[0] = 0.2f; /* the column is 0.5 m wide */
    ck_assert_int_eq(pbfcl_scene_setup_set_params(s, &sp, &vp), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("outside the domain");
    ck_assert_int_eq(pbfcl_scene_setup_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_load("no-such-scene", &s), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_null(s);
    expect_message("built-in scenes");
    ck_assert_int_eq(pbfcl_scene_setup_load("drop", &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_fill(s, &b, &nb), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_scene_setup_destroy(s), PBFCL_ERR_INVALID_HANDLE);
    ck_assert_int_eq(pbfcl_scene_setup_name(NULL, name, sizeof name), PBFCL_ERR_INVALID_HANDLE);
    pbfcl_free(a);
    pbfcl_free(b);
}
END_TEST

/* A solver descriptor with setup's scene and solver parameters and room for capacity
 * particles. */
static pbfcl_solver_desc setup_desc(const pbfcl_scene_setup *setup, size_t capacity)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = capacity;
    ck_assert_int_eq(pbfcl_scene_setup_get_params(setup, &d.scene, &d.solver), PBFCL_OK);
    return d;
}

/* A scene file's bodies through the public API, as pbfcl run and the demo use it: fill, add,
 * apply. At r = 0.05 in a unit box the fluid y <= 0.5 (500 lattice points) loses the 8 that
 * the box body (2 x 3 x 2 points) holds, and the sphere at (0.7, 0.7, 0.7) holds the 8 points
 * around its centre: phases are 492 fluid, 12 body 0, 8 body 1. The sphere's velocity is set
 * on its particles only, and after one step its centre has moved v_x dt along x. */
START_TEST(test_scene_setup_bodies)
{
    const char *path = test_temp_write(
        "bodies.json",
        "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": 0.05, "
        "\"gravity\": [0,0,0], \"fluid\": [{\"min\": [0,0,0], \"max\": [1,0.5,1]}], "
        "\"bodies\": [{\"box\": {\"min\": [0.2,0.3,0.2], \"max\": [0.4,0.6,0.4]}, "
        "\"density\": 500}, {\"sphere\": {\"center\": [0.7,0.7,0.7], \"radius\": 0.1}, "
        "\"density\": 2000, \"velocity\": [1, 0, 0]}]}");
    pbfcl_scene_params lp;
    pbfcl_solver_params lv;
    float *lpos = NULL;
    size_t ln = 0;
    ck_assert_int_eq(pbfcl_load_scene(path, 0, &lp, &lv, &lpos, &ln), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("pbfcl_scene_setup_apply_bodies");
    ck_assert_ptr_null(lpos);
    pbfcl_scene_setup *setup = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_load(path, &setup), PBFCL_OK);
    test_temp_remove();
    int nb = -1;
    ck_assert_int_eq(pbfcl_scene_setup_body_count(setup, &nb), PBFCL_OK);
    ck_assert_int_eq(nb, 2);
    float *pos = NULL;
    size_t n = 0;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &pos, &n), PBFCL_OK);
    ck_assert_uint_eq(n, 512u);
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver_desc d = setup_desc(setup, n);
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n - 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(setup, s), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("the scene fills 512");
    pbfcl_solver_destroy(s);
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(setup, s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_body_count(s, &nb), PBFCL_OK);
    ck_assert_int_eq(nb, 2);
    int *phase = malloc(n * sizeof *phase);
    float *vel = malloc(n * 3 * sizeof *vel);
    ck_assert_int_eq(pbfcl_solver_get_phases(s, phase, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_velocities(s, vel, n), PBFCL_OK);
    for (size_t i = 0; i < n; i++) {
        int want = i < 492   ? PBFCL_PHASE_FLUID
                   : i < 504 ? PBFCL_PHASE_BODY(0)
                             : PBFCL_PHASE_BODY(1);
        ck_assert_int_eq(phase[i], want);
        ck_assert_float_eq(vel[3 * i], want == PBFCL_PHASE_BODY(1) ? 1.0f : 0.0f);
        ck_assert_float_eq(vel[3 * i + 1], 0.0f);
    }
    float com0[6], com1[6];
    ck_assert_int_eq(pbfcl_solver_get_bodies(s, com0, NULL, 2), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_bodies(s, com1, NULL, 2), PBFCL_OK);
    double moved = com1[3] - com0[3];
    ck_assert_msg(fabs(moved - d.solver.dt) < 0.05 * d.solver.dt,
                  "the sphere moved %g m along x in one step of %g s at 1 m/s", moved, d.solver.dt);
    free(phase);
    free(vel);
    pbfcl_free(pos);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
    pbfcl_scene_setup_destroy(setup);
}
END_TEST

/* A scene's obstacles through the public API: pbfcl_load_scene refuses the scene (naming
 * obstacles), the setup counts 1 obstacle and 0 bodies, and apply_bodies makes its particles
 * static. At r = 0.05 in a unit box the fluid x <= 0.3, y <= 0.8 holds 3 x 8 x 10 = 240
 * lattice points; the sphere of radius 0.1 at the lattice point (0.55, 0.15, 0.55) holds it
 * and its 6 neighbours at 0.1 (the next are 0.141 away): phases 240 fluid, 7 static. Through
 * 40 frames of the fluid collapsing onto it, the static particles stay where they were, bit
 * for bit, and no fluid particle comes within r of one (half the contact distance 2r). */
START_TEST(test_scene_setup_obstacles)
{
    const char *path = test_temp_write(
        "obstacles.json",
        "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": 0.05, "
        "\"fluid\": [{\"min\": [0,0,0], \"max\": [0.3,0.8,1]}], "
        "\"obstacles\": [{\"sphere\": {\"center\": [0.55,0.15,0.55], \"radius\": 0.1}}]}");
    pbfcl_scene_params lp;
    pbfcl_solver_params lv;
    float *lpos = NULL;
    size_t ln = 0;
    ck_assert_int_eq(pbfcl_load_scene(path, 0, &lp, &lv, &lpos, &ln), PBFCL_ERR_BAD_ARGUMENT);
    expect_message("has obstacles");
    pbfcl_scene_setup *setup = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_load(path, &setup), PBFCL_OK);
    test_temp_remove();
    int no = -1, nb = -1;
    ck_assert_int_eq(pbfcl_scene_setup_obstacle_count(setup, &no), PBFCL_OK);
    ck_assert_int_eq(no, 1);
    ck_assert_int_eq(pbfcl_scene_setup_body_count(setup, &nb), PBFCL_OK);
    ck_assert_int_eq(nb, 0);
    ck_assert_int_eq(pbfcl_scene_setup_obstacle_count(setup, NULL), PBFCL_ERR_BAD_ARGUMENT);
    float *pos = NULL;
    size_t n = 0;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &pos, &n), PBFCL_OK);
    ck_assert_uint_eq(n, 247u);
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver_desc d = setup_desc(setup, n);
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(setup, s), PBFCL_OK);
    int *phase = malloc(n * sizeof *phase);
    float *now = malloc(n * 12);
    ck_assert_int_eq(pbfcl_solver_get_phases(s, phase, n), PBFCL_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(phase[i], i < 240 ? PBFCL_PHASE_FLUID : PBFCL_PHASE_STATIC);
    double nearest = 1.0;
    for (int frame = 0; frame < 40; frame++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_positions(s, now, n), PBFCL_OK);
        for (size_t j = 240; j < n; j++) {
            ck_assert_msg(memcmp(now + 3 * j, pos + 3 * j, 12) == 0,
                          "frame %d: static particle %zu moved to (%g, %g, %g)", frame, j,
                          now[3 * j], now[3 * j + 1], now[3 * j + 2]);
            for (size_t i = 0; i < 240; i++)
                nearest = fmin(nearest, dist3(now + 3 * i, pos + 3 * j));
        }
        ck_assert_msg(nearest >= 0.05, "frame %d: a fluid particle is %g m from a static one",
                      frame, nearest);
    }
    ck_assert_msg(nearest < 0.15, "the fluid never reached the obstacle (nearest %g m)", nearest);
    free(phase);
    free(now);
    pbfcl_free(pos);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
    pbfcl_scene_setup_destroy(setup);
}
END_TEST

/* A solver running a scene file with obstacles on paths, and the worst errors of their
 * particles against the paths' closed forms so far. */
typedef struct path_run {
    pbfcl_scene_setup *setup;
    pbfcl_context *ctx;
    pbfcl_solver *s;
    float *start, *now, *vel; /* the particles at the start (fill order), now, their velocities */
    size_t n, fluid;          /* particles; the fluid's come first, then the obstacles' */
    size_t split;             /* for path_at: the obstacle particles below it are the first's */
    double worst, worst_v;    /* m off the path; m/s off its velocity */
} path_run;

/* Writes text to name, loads it as a scene and fills a solver with its particles, bodies and
 * paths. */
static void path_run_open(path_run *r, const char *name, const char *text)
{
    memset(r, 0, sizeof *r);
    const char *file = test_temp_write(name, text);
    ck_assert_int_eq(pbfcl_scene_setup_load(file, &r->setup), PBFCL_OK);
    test_temp_remove();
    ck_assert_int_eq(pbfcl_scene_setup_fill(r->setup, &r->start, &r->n), PBFCL_OK);
    r->ctx = test_open_context(device_spec);
    pbfcl_solver_desc d = setup_desc(r->setup, r->n);
    ck_assert_int_eq(pbfcl_solver_create(r->ctx, &d, &r->s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(r->s, r->start, NULL, r->n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_scene_setup_apply_bodies(r->setup, r->s), PBFCL_OK);
    int *phase = malloc(r->n * sizeof *phase);
    ck_assert_int_eq(pbfcl_solver_get_phases(r->s, phase, r->n), PBFCL_OK);
    while (r->fluid < r->n && phase[r->fluid] == PBFCL_PHASE_FLUID)
        r->fluid++;
    free(phase);
    r->now = malloc(r->n * 12);
    r->vel = malloc(r->n * 12);
}

/* Steps frame (of 1/60 s) and checks every obstacle particle j against the closed form
 * at(r, j, t, out): where it is, within 1e-5 m (float rounding), and its velocity, the chord of
 * the last substep, within 1e-4 m/s. */
static void path_run_frame(path_run *r, int frame,
                           void (*at)(const path_run *r, size_t j, double t, double out[3]))
{
    ck_assert_int_eq(pbfcl_solver_step(r->s, 0.0f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_positions(r->s, r->now, r->n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_velocities(r->s, r->vel, r->n), PBFCL_OK);
    pbfcl_stats st;
    ck_assert_int_eq(pbfcl_solver_stats(r->s, &st), PBFCL_OK);
    double t = frame / 60.0, sub = 1.0 / 60.0 / st.substeps;
    for (size_t j = r->fluid; j < r->n; j++) {
        double want[3], before[3];
        at(r, j, t, want);
        at(r, j, t - sub, before);
        for (int k = 0; k < 3; k++) {
            r->worst = fmax(r->worst, fabs(r->now[3 * j + k] - want[k]));
            r->worst_v = fmax(r->worst_v, fabs(r->vel[3 * j + k] - (want[k] - before[k]) / sub));
        }
    }
    ck_assert_msg(r->worst <= 1e-5, "frame %d: an obstacle particle is %g m off its path", frame,
                  r->worst);
    ck_assert_msg(r->worst_v <= 1e-4, "frame %d: an obstacle particle's velocity is %g m/s off",
                  frame, r->worst_v);
}

static void path_run_close(path_run *r)
{
    free(r->now);
    free(r->vel);
    pbfcl_free(r->start);
    pbfcl_solver_destroy(r->s);
    pbfcl_context_destroy(r->ctx);
    pbfcl_scene_setup_destroy(r->setup);
}

/* Where the closed form puts obstacle particle j (which started at x0) at time t: the paddle
 * (the particles below r->split) moves at 0.5 m/s along x until t = 1 s; the rotor turns at 2
 * rad/s about z through (0.8, 0.4, 0.15). */
static void path_at(const path_run *r, size_t j, double t, double out[3])
{
    const float *x0 = r->start + 3 * j;
    if (j < r->split) {
        out[0] = x0[0] + 0.5 * fmin(t, 1.0);
        out[1] = x0[1];
        out[2] = x0[2];
        return;
    }
    double a = 2.0 * t, dx = x0[0] - 0.8, dy = x0[1] - 0.4;
    out[0] = 0.8 + cos(a) * dx - sin(a) * dy;
    out[1] = 0.4 + sin(a) * dx + cos(a) * dy;
    out[2] = x0[2];
}

/* The keyed paddle below at time t: a particle that started at x0 (c its centre), from the
 * start pose through the keys (0.3 s: shifted 0.2 m along x and turned 1.5 rad about y; 0.6 s:
 * back at the start after a whole turn), linear in the shift and the angle, every 0.6 s. */
static void keyed_at(const path_run *r, size_t j, double t, double out[3])
{
    const float *x0 = r->start + 3 * j;
    const double c[3] = {0.34, 0.14, 0.15}, period = 0.6;
    double tk = t - period * floor(t / period), shift, angle;
    if (tk < 0.3) {
        shift = 0.2 * tk / 0.3;
        angle = 1.5 * tk / 0.3;
    } else {
        shift = 0.2 * (0.6 - tk) / 0.3;
        angle = 1.5 + (6.283185307 - 1.5) * (tk - 0.3) / 0.3;
    }
    double dx = x0[0] - c[0], dz = x0[2] - c[2]; /* about +y: x' = x cos + z sin */
    out[0] = c[0] + shift + cos(angle) * dx + sin(angle) * dz;
    out[1] = x0[1];
    out[2] = c[2] - sin(angle) * dx + cos(angle) * dz;
}

/* A keyed path through the scene file and the public API: a paddle (x 0.3..0.38, y 0.02..0.26,
 * z 0.1..0.2) in a pool 0.2 m deep moves out and turns, then comes back turning on, every 0.6 s
 * (keyed_at, 1.2 s: two rounds). Every frame each of its particles is where the closed form
 * puts it (within 1e-5 m) with the velocity of its path over the last substep (within 1e-4
 * m/s), across the keys and the repeat. */
START_TEST(test_scene_setup_keyed_obstacle)
{
    path_run r;
    path_run_open(
        &r, "keyed.json",
        "{\"domain\": {\"min\": [0,0,0], \"max\": [1,0.6,0.3]}, \"particle_radius\": 0.02, "
        "\"fluid\": [{\"min\": [0,0,0], \"max\": [1,0.2,0.3]}], \"obstacles\": ["
        "{\"box\": {\"min\": [0.3,0.02,0.1], \"max\": [0.38,0.26,0.2]}, \"path\": {\"keys\": ["
        "{\"time\": 0.3, \"position\": [0.2,0,0], \"rotation\": [0,1.5,0]},"
        "{\"time\": 0.6, \"rotation\": [0,6.283185307,0]}], \"repeat\": true}}]}");
    ck_assert_uint_eq(r.n - r.fluid,
                      3u * 7u * 3u); /* x 0.30 .. 0.38, y 0.02 .. 0.26, z 0.10 .. 0.18 */
    for (int frame = 1; frame <= 72; frame++)
        path_run_frame(&r, frame, keyed_at);
    printf("keyed obstacle: worst path error %.2g m, velocity %.2g m/s\n", r.worst, r.worst_v);
    path_run_close(&r);
}
END_TEST

/* Obstacles on paths through the public API. In a 1 x 0.6 x 0.3 m box with a pool 0.2 m deep
 * at r = 0.02, a paddle (the box x 0.1..0.18, y 0.02..0.26, z 0..0.3) moves at 0.5 m/s along
 * +x until t = 1 s, and a rotor above the water (x 0.75..0.85, y 0.3..0.5, z 0.1..0.2) turns
 * at 2 rad/s about z through its centre. Every frame each obstacle particle is where the
 * closed form puts it (x0 + v min(t, 1) or c + R_z(2t)(x0 - c), within 1e-5 m: float
 * rounding) with the velocity of its path over the last substep (the chord, within 1e-4 m/s); no
 * fluid centre comes within r of an obstacle particle (half the contact distance) nor lies inside
 * the paddle's box by more than r; and the water is pushed: the fluid's momentum along +x is
 * positive from 0.1 s on while the paddle moves. */
START_TEST(test_scene_setup_moving_obstacles)
{
    path_run r;
    path_run_open(
        &r, "paddle.json",
        "{\"domain\": {\"min\": [0,0,0], \"max\": [1,0.6,0.3]}, \"particle_radius\": 0.02, "
        "\"fluid\": [{\"min\": [0,0,0], \"max\": [1,0.2,0.3]}], \"obstacles\": ["
        "{\"box\": {\"min\": [0.1,0.02,0], \"max\": [0.18,0.26,0.3]}, \"velocity\": [0.5,0,0], "
        "\"until\": 1},"
        "{\"box\": {\"min\": [0.75,0.3,0.1], \"max\": [0.85,0.5,0.2]}, "
        "\"angular_velocity\": [0,0,2]}]}");
    size_t fluid = r.fluid, n = r.n, paddle = 0;
    const float *now = r.now, *vel = r.vel;
    for (size_t i = fluid; i < n; i++) /* the paddle's particles come first */
        paddle += r.start[3 * i + 1] < 0.28f;
    r.split = fluid + paddle;
    ck_assert_uint_eq(paddle, 3u * 7u * 7u); /* x 0.10 .. 0.18, y 0.02 .. 0.26, z 0.02 .. 0.26 */
    ck_assert_uint_eq(n - fluid - paddle, 2u * 6u * 3u); /* x 0.78, 0.82; y 0.30 .. 0.50 */
    double nearest = 1.0, deepest = -1.0;
    for (int frame = 1; frame <= 72; frame++) {
        path_run_frame(&r, frame, path_at);
        double t = frame / 60.0, tp = fmin(t, 1.0);
        double px = 0.0, lo = 0.1 + 0.5 * tp, hi = 0.18 + 0.5 * tp;
        for (size_t i = 0; i < fluid; i++) {
            const float *q = now + 3 * i;
            px += vel[3 * i];
            double depth = fmin(fmin(q[0] - lo, hi - q[0]), fmin(q[1] - 0.02, 0.26 - q[1]));
            deepest = fmax(deepest, depth);
            ck_assert_msg(depth <= 0.02, "frame %d: fluid particle %zu is %g m inside the paddle",
                          frame, i, depth);
            for (size_t j = fluid; j < n; j++)
                nearest = fmin(nearest, dist3(q, now + 3 * j));
        }
        ck_assert_msg(nearest >= 0.02, "frame %d: a fluid particle is %g m from an obstacle's",
                      frame, nearest);
        if (t >= 0.1 && t <= 1.0)
            ck_assert_msg(px > 0.0, "frame %d: the fluid's momentum along x is %g (x the mass)",
                          frame, px);
        if (t >= 0.2 && t <= 0.8) /* measured: 0.18 to 0.26 m/s */
            ck_assert_msg(px / (double)fluid > 0.05 * 0.5,
                          "frame %d: the fluid moves at %g m/s on average along x, less than 5 %% "
                          "of the paddle's 0.5 m/s",
                          frame, px / (double)fluid);
        if (frame % 12 == 0)
            printf("t %.2f s: fluid momentum / particle mass %.3f m/s, deepest %.4f m\n", t, px,
                   deepest);
    }
    printf("moving obstacles: worst path error %.2g m, velocity %.2g m/s; nearest fluid %.4f m\n",
           r.worst, r.worst_v, nearest);
    path_run_close(&r);
}
END_TEST

/* Emitters and drains through the public API, step by step. A nozzle of radius 0.05 at
 * (0.5, 0.5, 0.5) at r = 0.02 holds 5 particles a layer (the centre and 4 at 0.04); at 100
 * particles/s along +x it has emitted floor(100 t / 5) * 5 by time t, never more than its
 * count 60 (the capacity is the fill's 27 and 60). The drain x >= 0.8 takes the particles
 * that reach it: each reported index held a fluid particle inside it before the call, none is
 * left inside after it, and the active count is fill + emitted - drained every step. */
START_TEST(test_scene_setup_flow)
{
    const char *path = test_temp_write(
        "flow.json",
        "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": 0.02, "
        "\"gravity\": [0,0,0], \"fluid\": [{\"min\": [0,0,0], \"max\": [0.1,0.1,0.1]}], "
        "\"emitters\": [{\"center\": [0.5,0.5,0.5], \"radius\": 0.05, \"velocity\": [1,0,0], "
        "\"rate\": 100, \"count\": 60}], "
        "\"drains\": [{\"box\": {\"min\": [0.8,0,0], \"max\": [1,1,1]}}]}");
    pbfcl_scene_setup *setup = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_load(path, &setup), PBFCL_OK);
    test_temp_remove();
    int ne = 0, nd = 0;
    ck_assert_int_eq(pbfcl_scene_setup_flow_count(setup, &ne, &nd), PBFCL_OK);
    ck_assert_int_eq(ne, 1);
    ck_assert_int_eq(nd, 1);
    float *pos = NULL;
    size_t n = 0, cap = 0;
    ck_assert_int_eq(pbfcl_scene_setup_fill(setup, &pos, &n), PBFCL_OK);
    ck_assert_uint_eq(n, 27u);
    ck_assert_int_eq(pbfcl_scene_setup_capacity(setup, &cap), PBFCL_OK);
    ck_assert_uint_eq(cap, 27u + 60u);
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver_desc d = setup_desc(setup, cap);
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_add(s, pos, NULL, n), PBFCL_OK);
    float *before = malloc(cap * 3 * sizeof *before), *after = malloc(cap * 3 * sizeof *after);
    size_t *removed = malloc(cap * sizeof *removed), emitted = 0, drained = 0;
    int steps = 50;
    for (int step = 1; step <= steps; step++) {
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, NULL), PBFCL_OK);
        double t = step * (double)d.solver.dt;
        size_t count = 0, k = 0, added = 0;
        ck_assert_int_eq(pbfcl_solver_count(s, &count), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_get_positions(s, before, count), PBFCL_OK);
        ck_assert_int_eq(pbfcl_scene_setup_flow(setup, s, t, removed, &k, &added), PBFCL_OK);
        for (size_t i = 0; i < k; i++) {
            ck_assert(i == 0 || removed[i] > removed[i - 1]);
            ck_assert_msg(before[3 * removed[i]] >= 0.8f, "step %d: removed particle %zu at x %g",
                          step, removed[i], before[3 * removed[i]]);
        }
        emitted += added;
        drained += k;
        long long want = (long long)floor(100.0 * t / 5.0 + 1e-9) * 5;
        want = want < 60 ? want : 60;
        ck_assert_msg((long long)emitted == want, "t = %g s: %zu emitted, expected %lld", t,
                      emitted, want);
        ck_assert(emitted <= 60 && (emitted == 60 || fabs((double)emitted - 100.0 * t) < 5.0));
        ck_assert_int_eq(pbfcl_solver_count(s, &count), PBFCL_OK);
        ck_assert_uint_eq(count, 27u + emitted - drained);
        ck_assert_uint_le(count, cap);
        ck_assert_int_eq(pbfcl_solver_get_positions(s, after, count), PBFCL_OK);
        for (size_t i = 0; i < count - added; i++)
            ck_assert_msg(after[3 * i] < 0.8f, "step %d: particle %zu left in the drain", step, i);
    }
    ck_assert_msg(drained > 0, "nothing reached the drain in %d steps", steps);
    ck_assert_uint_eq(emitted, 60u);
    /* the setup's state: a copy made from it has emitted all 60 too, so it adds nothing more
     * (a fresh setup would emit them again), and a damaged count is refused */
    memory_state st;
    memset(&st, 0, sizeof st);
    ck_assert_int_eq(pbfcl_scene_setup_save_state(setup, memory_state_put, &st), PBFCL_OK);
    ck_assert_int_eq(st.count, 2);
    pbfcl_scene_setup *copy = NULL;
    ck_assert_int_eq(pbfcl_scene_setup_load_state(memory_state_get, &st, &copy), PBFCL_OK);
    size_t copy_cap = 0, k = 0, added = 0;
    ck_assert_int_eq(pbfcl_scene_setup_capacity(copy, &copy_cap), PBFCL_OK);
    ck_assert_uint_eq(copy_cap, cap);
    ck_assert_int_eq(pbfcl_scene_setup_flow(copy, s, 10.0, removed, &k, &added), PBFCL_OK);
    ck_assert_uint_eq(added, 0u);
    ck_assert_int_eq(pbfcl_scene_setup_destroy(copy), PBFCL_OK);
    ck_assert_str_eq(st.name[1], "emitted");
    long long *count = (long long *)st.data[1];
    count[0] = 61; /* more than the emitter's count */
    ck_assert_int_eq(pbfcl_scene_setup_load_state(memory_state_get, &st, &copy),
                     PBFCL_ERR_BAD_ARGUMENT);
    expect_message("emitter 0 of scene");
    ck_assert_ptr_null(copy);
    ck_assert_int_eq(pbfcl_scene_setup_load_state(NULL, &st, &copy), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_scene_setup_save_state(NULL, memory_state_put, &st),
                     PBFCL_ERR_INVALID_HANDLE);
    memory_state_free(&st);
    free(before);
    free(after);
    free(removed);
    pbfcl_free(pos);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
    pbfcl_scene_setup_destroy(setup);
}
END_TEST

/* ---- the suite, once per device ---------------------------------------------------------------
 */

/* ---- the sph method ---------------------------------------------------------------------- */

/* The sph method through the API: its name converts both ways, a solver created with it steps
 * a falling block with time in sph's stages (density, force, integrate) and none in pbf's
 * (predict, solve, vorticity_viscosity), its particles come back in the caller's order (the
 * block falls as a whole, every particle below its start), and a change of method and bodies
 * (pbf's) are refused with a message naming solver.method. */
START_TEST(test_sph_method)
{
    ck_assert_int_eq(pbfcl_method_from_name("sph"), PBFCL_METHOD_SPH);
    ck_assert_str_eq(pbfcl_method_name(PBFCL_METHOD_PBF), "pbf");
    ck_assert_int_eq(pbfcl_method_from_name("wcsph"), -1);
    ck_assert_ptr_null(pbfcl_method_name(PBFCL_METHOD_COUNT));
    pbfcl_context *ctx = test_open_context(device_spec);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = 300;
    d.scene.particle_radius = R;
    d.scene.domain_max[0] = d.scene.domain_max[2] = 0.2f;
    d.solver.method = PBFCL_METHOD_SPH;
    d.solver.dt = 0.004f; /* short frames: this is about the API, not the physics */
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &s), PBFCL_OK);
    const int nn[3] = {6, 6, 6};
    const float lo[3] = {0.04f, 0.5f, 0.04f};
    size_t n;
    float *p = block(nn, lo, &n), *q = malloc(n * 3 * sizeof *q);
    ck_assert_int_eq(pbfcl_solver_add(s, p, NULL, n), PBFCL_OK);
    pbfcl_timers t;
    for (int f = 0; f < 5; f++)
        ck_assert_int_eq(pbfcl_solver_step(s, 0.0f, &t), PBFCL_OK);
    ck_assert_msg(timer_ms(s, "density") > 0 && timer_ms(s, "force") > 0 &&
                      timer_ms(s, "integrate") > 0 && timer_ms(s, "neighbours") > 0,
                  "sph's stages: density %g, force %g, integrate %g ms", timer_ms(s, "density"),
                  timer_ms(s, "force"), timer_ms(s, "integrate"));
    ck_assert_msg(!timer_ran(s, "predict") && !timer_ran(s, "solve") &&
                      !timer_ran(s, "vorticity_viscosity"),
                  "pbf's stages timed in an sph step");
    ck_assert_int_eq(pbfcl_solver_get_positions(s, q, n), PBFCL_OK);
    for (size_t i = 0; i < n; i++) /* the block in free fall: all of it moved down, together */
        ck_assert_msg(q[3 * i + 1] < p[3 * i + 1] && fabs(q[3 * i] - p[3 * i]) < 0.2f * R,
                      "particle %zu at (%g, %g) from (%g, %g)", i, q[3 * i], q[3 * i + 1], p[3 * i],
                      p[3 * i + 1]);
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
    ck_assert_int_eq(pbfcl_solver_get_params(s, &sp, &vp), PBFCL_OK);
    ck_assert_int_eq(vp.method, PBFCL_METHOD_SPH);
    vp.method = PBFCL_METHOD_PBF;
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
    ck_assert_int_eq(pbfcl_solver_set_params(s, &sp, &vp), PBFCL_ERR_BAD_ARGUMENT);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    expect_message("solver.method cannot change");
    int *phases = calloc(n, sizeof *phases); /* two particles as a body: shape matching is pbf's */
    phases[0] = phases[1] = PBFCL_PHASE_BODY(0);
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
    ck_assert_int_eq(pbfcl_solver_set_phases(s, phases, n), PBFCL_ERR_UNSUPPORTED);
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    expect_message("bodies need solver.method pbf");
    free(phases);
    free(p);
    free(q);
    pbfcl_solver_destroy(s);
    pbfcl_context_destroy(ctx);
}
END_TEST

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_scene_setup);
    tcase_add_test(tc, test_scene_setup_bodies);
    tcase_add_test(tc, test_scene_setup_obstacles);
    tcase_add_test(tc, test_scene_setup_moving_obstacles);
    tcase_add_test(tc, test_scene_setup_keyed_obstacle);
    tcase_add_test(tc, test_scene_setup_flow);
    tcase_add_test(tc, test_value_helpers);
    tcase_add_test(tc, test_misuse);
    tcase_add_test(tc, test_push_refuses_nonsense);
    tcase_add_test(tc, test_outside_box_refused);
    tcase_add_test(tc, test_bodies_phases);
    tcase_add_test(tc, test_static_phases);
    tcase_add_test(tc, test_particle_phases);
    tcase_add_test(tc, test_self_collide);
    tcase_add_test(tc, test_old_checkpoint_phases);
    tcase_add_test(tc, test_kernel_dir);
    tcase_add_test(tc, test_wrap_cl_context);
    tcase_add_test(tc, test_params_mid_run);
    tcase_add_test(tc, test_add_remove);
    tcase_add_test(tc, test_trace_by_id);
    tcase_add_test(tc, test_sph_method);
}

int main(void)
{
    pbfcl_set_log(capture_log, NULL, PBFCL_LOG_WARNING);
    (void)messages;
    return test_run_on_each_device("api", 600, add_tests, device_spec);
}
