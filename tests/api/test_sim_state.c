/* The state a simulation carries across frames: persistent particle ids that follow each
 * particle through the spatial sort, and saving and restoring it through the public API
 * (pbfcl_solver_save_state / load_state, what `pbfcl run --checkpoint` writes). */
#include "api_internal.h"
#include "memory_state.h"
#include "sim/sim.h"
#include "solver_methods.h"
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

/* Positions, velocities and densities in the caller's order, in one buffer for a bitwise
 * comparison, and the substeps of the last step. */
static unsigned char *snapshot(pbfcl_solver *s, size_t n, size_t *bytes, int *substeps)
{
    *bytes = n * (3 + 3 + 1) * 4;
    unsigned char *b = malloc(*bytes);
    float *f = (float *)b;
    ck_assert_int_eq(pbfcl_solver_get_positions(s, f, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_velocities(s, f + 3 * n, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_densities(s, f + 6 * n, n), PBFCL_OK);
    pbfcl_stats st;
    ck_assert_int_eq(pbfcl_solver_stats(s, &st), PBFCL_OK);
    *substeps = st.substeps;
    return b;
}

/* A solver on cl (through the public API) with the scene's parameters and no particles. */
static pbfcl_solver *api_solver(pbfcl_context *ctx, const pbfcl_scene *s, size_t capacity)
{
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = capacity;
    pbfcl_api_params_from_scene(s, &d.scene, &d.solver);
    pbfcl_solver *out = NULL;
    ck_assert_int_eq(pbfcl_solver_create(ctx, &d, &out), PBFCL_OK);
    return out;
}

/* A solver restored from the saved state of another at step 4 (with the push and the gravity
 * changed, and adaptive substeps, so that the host state matters) continues bit for bit as
 * the original does, in a solver created with the default parameters (the state carries its
 * own). Fails if any buffer or host value that carries across frames is left out of the
 * state (e.g. the substep bounds: the next frame then takes other substeps). */
static void check_checkpoint_resume(pbfcl_cl *cl)
{
    pbfcl_scene s;
    size_t n;
    float *start = small_dam(&s, &n);
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.cl_context = cl->context, cd.cl_device = cl->dev.device, cd.cl_queue = cl->queue;
    pbfcl_context *ctx = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &cd, &ctx), PBFCL_OK);
    pbfcl_solver *a = api_solver(ctx, &s, n);
    ck_assert_int_eq(pbfcl_solver_add(a, start, NULL, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_compute_densities(a), PBFCL_OK);
    pbfcl_scene_params sp;
    ck_assert_int_eq(pbfcl_solver_get_params(a, &sp, NULL), PBFCL_OK);
    sp.gravity[0] = 1.0f, sp.gravity[1] = -12.0f, sp.gravity[2] = 0.5f;
    ck_assert_int_eq(pbfcl_solver_set_params(a, &sp, NULL), PBFCL_OK);
    const float o[3] = {0.1f, 0.2f, 0.1f}, d[3] = {1, 0, 0}, push[3] = {0, 1, 0};
    ck_assert_int_eq(pbfcl_solver_set_push(a, o, d, push, 0.1f, 30.0f), PBFCL_OK);
    for (int f = 0; f < 4; f++)
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
    memory_state m;
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(pbfcl_solver_save_state(a, memory_state_put, &m), PBFCL_OK);
    for (int i = 0; i < m.count; i++) /* a load finds each section by its name */
        for (int j = i + 1; j < m.count; j++)
            ck_assert_msg(strcmp(m.name[i], m.name[j]) != 0, "two sections are named '%s'",
                          m.name[i]);
    pbfcl_scene defaults;
    pbfcl_scene_defaults(&defaults); /* other box, gravity, radius: the state brings its own */
    pbfcl_solver *b = api_solver(ctx, &defaults, n);
    ck_assert_int_eq(pbfcl_solver_load_state(b, memory_state_get, &m), PBFCL_OK);
    pbfcl_scene_params got;
    ck_assert_int_eq(pbfcl_solver_get_params(b, &got, NULL), PBFCL_OK);
    ck_assert_float_eq(got.gravity[1], -12.0f);
    size_t la, lb;
    int ka, kb;
    for (int f = 0; f < 4; f++) {
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_step(b, 0.0f, NULL), PBFCL_OK);
    }
    unsigned char *sa = snapshot(a, n, &la, &ka), *sb = snapshot(b, n, &lb, &kb);
    ck_assert_int_eq(kb, ka);
    ck_assert_uint_eq(la, lb);
    ck_assert_msg(memcmp(sa, sb, la) == 0, "the restored solver differs 4 frames later");
    /* a state does not load into a solver holding another count, nor one too small */
    pbfcl_solver *c = api_solver(ctx, &s, n - 1);
    ck_assert_int_eq(pbfcl_solver_load_state(c, memory_state_get, &m), PBFCL_ERR_CAPACITY);
    float one[3] = {0.1f, 0.1f, 0.1f};
    pbfcl_solver *e = api_solver(ctx, &s, n);
    ck_assert_int_eq(pbfcl_solver_add(e, one, NULL, 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_load_state(e, memory_state_get, &m), PBFCL_ERR_BAD_ARGUMENT);
    memory_state_free(&m);
    free(sa);
    free(sb);
    free(start);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK); /* and its solvers */
}

START_TEST(test_checkpoint_resume)
{
    test_each_device(check_checkpoint_resume);
}
END_TEST

/* The same with a body and static particles (set through the public API's phases after 3
 * frames, so the rest shape is a reordered state's): the restored solver has the body, its
 * pose and the static particles, and continues bit for bit. Fails if the bodies' or the
 * host's sections are left out (the body then loses its rest shape, the static particles
 * their count). */
static void check_checkpoint_resume_phases(pbfcl_cl *cl)
{
    pbfcl_scene s;
    size_t n;
    float *start = small_dam(&s, &n);
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.cl_context = cl->context, cd.cl_device = cl->dev.device, cd.cl_queue = cl->queue;
    pbfcl_context *ctx = NULL;
    ck_assert_int_eq(pbfcl_context_create(PBFCL_VERSION, &cd, &ctx), PBFCL_OK);
    pbfcl_solver *a = api_solver(ctx, &s, n);
    ck_assert_int_eq(pbfcl_solver_add(a, start, NULL, n), PBFCL_OK);
    for (int f = 0; f < 3; f++)
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
    int *phase = calloc(n, sizeof *phase), *got = calloc(n, sizeof *got);
    for (size_t i = 0; i < 16; i++) /* ids 0..7 a body, 8..15 static */
        phase[i] = i < 8 ? PBFCL_PHASE_BODY(0) : PBFCL_PHASE_STATIC;
    ck_assert_int_eq(pbfcl_solver_set_phases(a, phase, n), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_set_body(a, 0, 0.5f, 400.0f), PBFCL_OK);
    for (int f = 0; f < 3; f++)
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
    memory_state m;
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(pbfcl_solver_save_state(a, memory_state_put, &m), PBFCL_OK);
    pbfcl_scene defaults;
    pbfcl_scene_defaults(&defaults);
    pbfcl_solver *b = api_solver(ctx, &defaults, n);
    ck_assert_int_eq(pbfcl_solver_load_state(b, memory_state_get, &m), PBFCL_OK);
    int bodies = 0;
    ck_assert_int_eq(pbfcl_solver_body_count(b, &bodies), PBFCL_OK);
    ck_assert_int_eq(bodies, 1);
    ck_assert_int_eq(pbfcl_solver_get_phases(b, got, n), PBFCL_OK);
    ck_assert_int_eq(memcmp(got, phase, n * sizeof *phase), 0);
    for (int f = 0; f < 4; f++) {
        ck_assert_int_eq(pbfcl_solver_step(a, 0.0f, NULL), PBFCL_OK);
        ck_assert_int_eq(pbfcl_solver_step(b, 0.0f, NULL), PBFCL_OK);
    }
    size_t la, lb;
    int ka, kb;
    unsigned char *sa = snapshot(a, n, &la, &ka), *sb = snapshot(b, n, &lb, &kb);
    ck_assert_uint_eq(la, lb);
    ck_assert_msg(memcmp(sa, sb, la) == 0, "the restored solver differs 4 frames later");
    float ca[3], qa[4], cb[3], qb[4];
    ck_assert_int_eq(pbfcl_solver_get_bodies(a, ca, qa, 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_solver_get_bodies(b, cb, qb, 1), PBFCL_OK);
    ck_assert_msg(!memcmp(ca, cb, sizeof ca) && !memcmp(qa, qb, sizeof qa),
                  "the restored body's pose differs");
    memory_state_free(&m);
    free(sa);
    free(sb);
    free(phase);
    free(got);
    free(start);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}

START_TEST(test_checkpoint_resume_phases)
{
    test_each_device(check_checkpoint_resume_phases);
}
END_TEST

/* The sections a simulation saves, in order, with a body and a path: the checkpoint's contract
 * (old checkpoints load by these names, state_check.c reads them). Each row once: the core's
 * saved buffers, PBF's and its constraint kinds' (the density's lambdas), the fixed buffers,
 * then the attachments' (the bodies', the paths'). Fails if a buffer or an attachment moved
 * changes a name, drops a saved section, saves a scratch one or reorders them. */
static void check_section_names(pbfcl_cl *cl)
{
    static const char *const want[] = {"host",
                                       "positions",
                                       "predicted_positions",
                                       "velocities",
                                       "ids",
                                       "phases",
                                       "inverse_masses",
                                       "densities",
                                       "vorticity_forces",
                                       "corrected_positions",
                                       "vorticity",
                                       "lambdas",
                                       "substep_bounds",
                                       "largest_acceleration",
                                       "bodies",
                                       "body_entry_ids",
                                       "body_entry_bodies",
                                       "body_rest_offsets",
                                       "body_ranges",
                                       "body_centres",
                                       "body_rotations",
                                       "body_stiffness",
                                       "body_inertia",
                                       "body_motion",
                                       "paths",
                                       "path_entry_ids",
                                       "path_offsets",
                                       "path_motions",
                                       "path_keys",
                                       "distances",
                                       "triangles",
                                       "shapes",
                                       "inflatables",
                                       "attachments"};
    const int count = (int)(sizeof want / sizeof want[0]);
    pbfcl_scene s;
    size_t n;
    float *start = small_dam(&s, &n);
    pbfcl_sim *sim = NULL;
    ck_assert_int_eq(pbfcl_sim_create(&sim, cl, &s, start, n), PBFCL_OK);
    unsigned id[4] = {0, 1, 2, 3}, body[4] = {0, 0, 0, 0}, path[2] = {0, 0};
    float rest[12] = {0}, stiffness = 1.0f, inv_mass = 1.0f, offset[6] = {0};
    for (int e = 0; e < 4; e++)
        rest[3 * e] = 0.04f * (float)e;
    ck_assert_int_eq(pbfcl_sim_set_bodies(sim, 1, 4, id, body, rest, &stiffness, &inv_mass),
                     PBFCL_OK);
    unsigned statics[2] = {8, 9};
    ck_assert_int_eq(pbfcl_sim_set_static(sim, 2, statics), PBFCL_OK);
    pbfcl_kinematic_path p;
    memset(&p, 0, sizeof p);
    p.velocity[0] = 0.1f, p.stop = 1.0f;
    ck_assert_int_eq(pbfcl_sim_set_paths(sim, 1, &p, 2, statics, path, offset), PBFCL_OK);
    ck_assert_int_eq(pbfcl_sim_step(sim, NULL), PBFCL_OK);
    memory_state m;
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(pbfcl_sim_state_save(sim, memory_state_put, &m), PBFCL_OK);
    for (int k = 0; k < m.count && k < count; k++)
        ck_assert_msg(!strcmp(m.name[k], want[k]), "section %d is '%s', not '%s'", k, m.name[k],
                      want[k]);
    ck_assert_int_eq(m.count, count);
    memory_state_free(&m);
    free(start);
    pbfcl_sim_destroy(sim);
}

START_TEST(test_section_names)
{
    test_each_device(check_section_names);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_state");
    TCase *tc = tcase_create("ids");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_ids_follow_particles);
    tcase_add_test(tc, test_checkpoint_resume);
    tcase_add_test(tc, test_checkpoint_resume_phases);
    tcase_add_test(tc, test_section_names);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
