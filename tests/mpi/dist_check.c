/* The simulation split over MPI ranks (host/dist/), run under mpirun by the ctest entries of
 * tests/CMakeLists.txt ("mpi"): `dist_check CASE`, every rank the same program.
 *   dam [FRAMES PARTICLES THRESHOLD]
 *           a small dam break on all ranks against the same run on rank 0 alone, frame by
 *           frame: every id held exactly once, the particle count (mass) exact, momentum,
 *           kinetic energy, the front and the mean and largest density within 1 %; with
 *           THRESHOLD, rebalancing at it: the counts drift past it first, and every frame that
 *           rebalanced leaves the most on a rank at most THRESHOLD times the mean; on several
 *           ranks, the same split without the overlap (pbfcl_dist_set_overlap) alongside: the
 *           frames of the two the same to the byte
 *   shapes [FRAMES PARTICLES]
 *           dam's comparison on mesh-container with a box, a capsule and a moving sphere:
 *           besides, every shape's pose the same on every rank and near one
 *           rank's, the force on it summed over the ranks near one rank's
 *   sph [FRAMES PARTICLES]
 *           dam's comparison with the SPH method
 *   multilevel [FRAMES PARTICLES]
 *           dam's comparison with the fast solver's multilevel coarse correction, whose grid
 *           the ranks add (--iterations 2 --multilevel 1 --cfl 1)
 *   shapes-multilevel [FRAMES PARTICLES]
 *           shapes' comparison with the multilevel correction, whose pressure on the shapes'
 *           solid cells each rank adds to their force for its share of each cell
 *   cross   3 ranks: a blob crossing the middle slab within one frame (two boundaries), the
 *           ranks it leaves emptied and stepping on, no particle lost or duplicated
 *   refuse  3 ranks: rebalancing refused, the slabs kept, where two ranks lack the room
 *   fail    2 ranks: rank 1 runs out of room mid-run; every rank must stop with its message
 *   bodies [FRAMES]
 *           three bodies falling into fluid, two of them across a cut at the start, one moving
 *           across the other cut (3 ranks), against rank 0 alone: every id held once, every
 *           body's pose the same bits on every rank (on one rank those of rank 0 alone), each
 *           centre within 0.5 mm (1/40 of the spacing) of one rank's and within 0.01 mm of the
 *           mean of its particles' positions
 *   bodies-multilevel [FRAMES]
 *           bodies' comparison with the fast solver's multilevel correction, which moves the
 *           bodies' particles by the pressure the ranks' added grid gives (ml_correct)
 * Exit 0 passed, 1 failed (on rank 0, with the reason), 77 no OpenCL device. */
#include "dist.h"

#include "pbf/pbf_colliders.h"

#include "runtime/pbfcl_error.h"
#include "scene/scene.h"
#include "solver_methods.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static int rank_of(MPI_Comm c)
{
    int r;
    MPI_Comm_rank(c, &r);
    return r;
}

/* Ends the test on every rank with code (the message from rank 0). */
static _Noreturn void finish(int code, const char *msg)
{
    if (rank_of(MPI_COMM_WORLD) == 0 && msg)
        fprintf(code ? stderr : stdout, "%s%s\n", code ? "FAIL: " : "", msg);
    MPI_Finalize();
    exit(code);
}

/* Every rank's verdict: false anywhere fails everywhere. */
static bool all(bool ok)
{
    int mine = ok, every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return every;
}

/* What a frame of the whole simulation is compared by. */
typedef struct summary {
    double momentum[3], kinetic, front, mean_density, max_density;
} summary;

static void summarise(const float *pos, const float *vel, const float *rho, size_t n, float mass,
                      int axis, summary *s)
{
    memset(s, 0, sizeof *s);
    s->front = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v2 = 0;
        for (int a = 0; a < 3; a++) {
            s->momentum[a] += (double)mass * vel[3 * i + a];
            v2 += (double)vel[3 * i + a] * vel[3 * i + a];
        }
        s->kinetic += 0.5 * mass * v2;
        s->front = fmax(s->front, pos[3 * i + axis]);
        s->mean_density += rho[i] / (double)n;
        s->max_density = fmax(s->max_density, rho[i]);
    }
}

/* |a - b| within tol of scale. */
static bool near(double a, double b, double scale, double tol)
{
    return fabs(a - b) <= tol * scale;
}

static pbfcl_status dam_scene(pbfcl_scene *s, float **pos, size_t *n, size_t target)
{
    PBFCL_TRY(pbfcl_scene_load("dam-break", s));
    PBFCL_TRY(pbfcl_scene_set_particle_count(s, target));
    return pbfcl_scene_fill(s, pos, n);
}

/* The shapes case: mesh-container (a dam break in a two-sided mesh tank over an SDF ramp) with
 * a static box and capsule on the floor in the flow's path and a sphere moving at 1 m/s from x
 * 0.75 toward the column (a sphere, a box, a capsule, a mesh, an SDF). */
static pbfcl_status shapes_scene(pbfcl_scene *s, float **pos, size_t *n, size_t target)
{
    PBFCL_TRY(pbfcl_scene_load("mesh-container", s));
    PBFCL_TRY(pbfcl_scene_set_particle_count(s, target));
    pbfcl_scene_collider *c = &s->colliders[s->collider_count];
    memset(c, 0, 3 * sizeof *c);
    c[0].type = PBFCL_SHAPE_KIND_BOX;
    memcpy(c[0].half_extents, (float[]){0.04f, 0.06f, 0.1f}, 12);
    memcpy(c[0].position, (float[]){0.65f, 0.08f, 0.2f}, 12);
    c[1].type = PBFCL_SHAPE_KIND_CAPSULE;
    c[1].radius = 0.04f;
    c[1].half_length = 0.08f;
    memcpy(c[1].position, (float[]){0.6f, 0.07f, 0.45f}, 12);
    c[2].type = PBFCL_SHAPE_KIND_SPHERE;
    c[2].radius = 0.07f;
    memcpy(c[2].position, (float[]){0.75f, 0.12f, 0.3f}, 12);
    c[2].velocity[0] = -1.0f;
    for (int k = 0; k < 3; k++) {
        c[k].rotation[3] = 1.0f;
        c[k].friction = 0.1f;
    }
    s->collider_count += 3;
    return pbfcl_scene_fill(s, pos, n);
}

/* After frame f: every shape's pose the same on every rank, bit for bit, and within 1e-5 m of
 * the single rank's; the force on it (summed over the ranks) within 2 % of the fluid's weight
 * of the single rank's (a rank that counted its ghosts too was 6 % off on 2 ranks at frame 2).
 * Differences go to worst: pose (m), force (of the weight). */
static bool check_shapes(pbfcl_dist *split, pbfcl_dist *ref, int f, double weight, double *worst,
                         char *why, size_t size)
{
    pbfcl_colliders *c = pbfcl_pbf_colliders(pbfcl_dist_sim(split));
    int shapes = pbfcl_colliders_count(c);
    bool ok = true;
    for (int i = 0; i < shapes; i++) {
        pbfcl_collider_view view;
        float pose[7], force[3], ref_pose[7], ref_force[3], lo[7], hi[7];
        ok = pbfcl_colliders_view_at(c, i, &view) == PBFCL_OK &&
             pbfcl_colliders_get_pose(c, view.id, pose, pose + 3) == PBFCL_OK && ok;
        ok = pbfcl_dist_shape_contacts(split, view.id, force, NULL, NULL) == PBFCL_OK && ok;
        MPI_Allreduce(pose, lo, 7, MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(pose, hi, 7, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
        if (ok && memcmp(lo, hi, sizeof lo)) {
            snprintf(why, size, "frame %d: shape %d's pose differs between the ranks", f, i);
            ok = false;
        }
        if (!ref || !ok)
            continue;
        pbfcl_colliders *rc = pbfcl_pbf_colliders(pbfcl_dist_sim(ref));
        ok = pbfcl_colliders_get_pose(rc, view.id, ref_pose, ref_pose + 3) == PBFCL_OK &&
             pbfcl_dist_shape_contacts(ref, view.id, ref_force, NULL, NULL) == PBFCL_OK;
        double dp = 0, df = 0;
        for (int k = 0; k < 7; k++)
            dp = fmax(dp, fabs((double)pose[k] - ref_pose[k]));
        for (int k = 0; k < 3; k++)
            df = fmax(df, fabs((double)force[k] - ref_force[k]) / weight);
        worst[0] = fmax(worst[0], dp);
        worst[1] = fmax(worst[1], df);
        if (ok && (dp > 1e-5 || df > 0.02)) {
            snprintf(why, size,
                     "frame %d: shape %d: pose %.3g m from one rank's, force (%g, %g, %g) N "
                     "against (%g, %g, %g) N on one rank (%.3g of the weight %g N)",
                     f, i, dp, force[0], force[1], force[2], ref_force[0], ref_force[1],
                     ref_force[2], df, weight);
            ok = false;
        }
    }
    return ok;
}

/* A frame of both runs compared; the first difference in words into why. */
static bool compare(const summary *a, const summary *b, double speed_scale, float mass, size_t n,
                    const float *box_lo, int axis, char *why, size_t size)
{
    double p = speed_scale * mass * (double)n; /* momentum scale: all moving at the top speed */
    for (int k = 0; k < 3; k++)
        if (!near(a->momentum[k], b->momentum[k], p, 0.01)) {
            snprintf(why, size, "momentum[%d] %.6g against %.6g on one rank", k, a->momentum[k],
                     b->momentum[k]);
            return false;
        }
    const char *name[] = {"kinetic energy", "front (from the wall)", "mean density",
                          "largest density"};
    double x[] = {a->kinetic, a->front - box_lo[axis], a->mean_density, a->max_density};
    double y[] = {b->kinetic, b->front - box_lo[axis], b->mean_density, b->max_density};
    for (int k = 0; k < 4; k++)
        if (!near(x[k], y[k], fabs(y[k]) + (k == 0 ? 1e-9 : 0), 0.01)) {
            snprintf(why, size, "%s %.6g against %.6g on one rank", name[k], x[k], y[k]);
            return false;
        }
    return true;
}

/* The slabs of ranks along the longest axis, by particle count. */
static pbfcl_status plan(const pbfcl_scene *s, const float *pos, size_t n, int ranks,
                         pbfcl_dist_layout *l)
{
    pbfcl_pbf_params p;
    PBFCL_TRY(pbfcl_pbf_params_from_scene(s, &p));
    return pbfcl_dist_plan(s, p.h, pos, n, ranks, l);
}

/* Frame f of the split run (on every rank) and of the reference (on rank 0) gathered. */
typedef struct dam_run {
    pbfcl_dist *split, *ref, *plain; /* plain: the split without the overlap */
    float *pos[3], *vel[3], *rho[3];
    size_t n;
    double worst[5];        /* largest relative differences: momentum, kinetic, front, densities */
    int identical_until[3]; /* the last frame whose positions, velocities, densities were */
} dam_run;

static bool dam_frame(dam_run *r, const pbfcl_scene *s, int axis, float mass, int f, char *why,
                      size_t size)
{
    if (!all(pbfcl_dist_gather(r->split, r->pos[0], r->vel[0], r->rho[0]) == PBFCL_OK)) {
        snprintf(why, size, "frame %d: a particle was lost or held twice (see above)", f);
        return false;
    }
    if (r->plain) {
        if (!all(pbfcl_dist_gather(r->plain, r->pos[2], r->vel[2], r->rho[2]) == PBFCL_OK)) {
            snprintf(why, size, "frame %d: without the overlap a particle was lost", f);
            return false;
        }
        if (rank_of(MPI_COMM_WORLD) == 0 &&
            (memcmp(r->pos[0], r->pos[2], 12 * r->n) || memcmp(r->vel[0], r->vel[2], 12 * r->n) ||
             memcmp(r->rho[0], r->rho[2], 4 * r->n))) {
            snprintf(why, size,
                     "frame %d: the overlap changed the frame (positions %s, "
                     "velocities %s, densities %s)",
                     f, memcmp(r->pos[0], r->pos[2], 12 * r->n) ? "differ" : "same",
                     memcmp(r->vel[0], r->vel[2], 12 * r->n) ? "differ" : "same",
                     memcmp(r->rho[0], r->rho[2], 4 * r->n) ? "differ" : "same");
            return false;
        }
    }
    if (rank_of(MPI_COMM_WORLD) != 0)
        return true;
    if (pbfcl_dist_gather(r->ref, r->pos[1], r->vel[1], r->rho[1]) != PBFCL_OK)
        return false;
    summary a, b;
    summarise(r->pos[0], r->vel[0], r->rho[0], r->n, mass, axis, &a);
    summarise(r->pos[1], r->vel[1], r->rho[1], r->n, mass, axis, &b);
    double top = 0;
    for (size_t i = 0; i < 3 * r->n; i++)
        top = fmax(top, fabs(r->vel[1][i]));
    if (f > 0)
        for (int k = 0; k < 3; k++) {
            float *x[] = {r->pos[0], r->vel[0], r->rho[0]},
                  *y[] = {r->pos[1], r->vel[1], r->rho[1]};
            size_t len = k == 2 ? r->n : 3 * r->n;
            if (r->identical_until[k] == f - 1 && !memcmp(x[k], y[k], len * 4))
                r->identical_until[k] = f;
        }
    if (getenv("DIST_DEBUG")) {
        int bad = 0;
        for (size_t i = 0; i < r->n; i++)
            if (fabsf(r->rho[0][i] - r->rho[1][i]) > 1.0f && bad++ < 5)
                printf("frame %d id %zu x %g %g %g rho %g ref %g\n", f, i, r->pos[0][3 * i],
                       r->pos[0][3 * i + 1], r->pos[0][3 * i + 2], r->rho[0][i], r->rho[1][i]);
        printf("frame %d: %d densities differ\n", f, bad);
    }
    char frame_why[256];
    if (!compare(&a, &b, fmax(top, 1e-3), mass, r->n, s->domain_min, axis, frame_why,
                 sizeof frame_why)) {
        snprintf(why, size, "frame %d: %s", f, frame_why);
        return false;
    }
    double rel[] = {0, fabs(a.kinetic - b.kinetic) / fmax(b.kinetic, 1e-9),
                    fabs(a.front - b.front) / (b.front - s->domain_min[axis]),
                    fabs(a.mean_density - b.mean_density) / b.mean_density,
                    fabs(a.max_density - b.max_density) / b.max_density};
    for (int k = 0; k < 3; k++)
        rel[0] = fmax(rel[0], fabs(a.momentum[k] - b.momentum[k]) / (top * mass * (double)r->n));
    for (int k = 0; k < 5; k++)
        r->worst[k] = fmax(r->worst[k], rel[k]);
    return true;
}

/* The most particles a rank owns, counted here, as a multiple of the mean. */
static double count_ratio(pbfcl_dist *d, size_t n, unsigned long long *most)
{
    unsigned long long mine = pbfcl_dist_owned(d);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&mine, most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return (double)*most * size / (double)n;
}

/* After frame f: a frame that rebalanced leaves every rank at most threshold times the mean
 * (the counts taken here); before the first rebalance (as without it) the counts drifted past
 * the threshold. Each rebalance's counts (the most on a rank before and after) go to log. */
typedef struct balance_check {
    double threshold, unbalanced, worst_after; /* ratios */
    unsigned long long seen;
    char log[512];
} balance_check;

static bool check_balance(balance_check *c, pbfcl_dist *d, size_t n, int f, char *why, size_t size)
{
    const pbfcl_dist_balance *b = pbfcl_dist_balance_of(d);
    unsigned long long most;
    double ratio = count_ratio(d, n, &most);
    if (b->rebalances == c->seen) {
        if (c->seen == 0)
            c->unbalanced = fmax(c->unbalanced, ratio);
        return true;
    }
    c->seen = b->rebalances;
    c->worst_after = fmax(c->worst_after, ratio);
    size_t len = strlen(c->log);
    snprintf(c->log + len, sizeof c->log - len, "%sframe %d: %llu -> %llu", len ? ", " : "", f,
             b->before_max, most);
    if (ratio > c->threshold) {
        snprintf(why, size,
                 "frame %d rebalanced (the most on a rank %llu before) and left a rank with "
                 "%llu, %.3f times the mean, above the threshold %g",
                 f, b->before_max, most, ratio, c->threshold);
        return false;
    }
    return true;
}

/* The dam break run by the SPH method (weakly compressible, velocity Verlet). */
static pbfcl_status sph_scene(pbfcl_scene *s, float **pos, size_t *n, size_t target)
{
    PBFCL_TRY(pbfcl_scene_load("dam-break", s));
    s->solver.method = PBFCL_METHOD_SPH;
    PBFCL_TRY(pbfcl_scene_set_particle_count(s, target));
    return pbfcl_scene_fill(s, pos, n);
}

/* The dam break with the fast solver's multilevel coarse correction (2 iterations, the first
 * ending with it, cfl 1): each rank gathers its own particles into the grid over the whole box
 * and the ranks add the grids (host/dist/dist_multilevel.c). */
static pbfcl_status multilevel_scene(pbfcl_scene *s, float **pos, size_t *n, size_t target)
{
    PBFCL_TRY(dam_scene(s, pos, n, target));
    s->solver.iterations = 2;
    s->solver.multilevel = 1;
    s->solver.multilevel_limit =
        0.0f; /* a split run's corrections do not adapt (one device's do) */
    s->solver.cfl = 1.0f;
    return PBFCL_OK;
}

/* The shapes case with the multilevel correction (as multilevel_scene). */
static pbfcl_status shapes_multilevel_scene(pbfcl_scene *s, float **pos, size_t *n, size_t target)
{
    PBFCL_TRY(shapes_scene(s, pos, n, target));
    s->solver.iterations = 2;
    s->solver.multilevel = 1;
    s->solver.multilevel_limit = 0.0f; /* as multilevel_scene */
    s->solver.cfl = 1.0f;
    return PBFCL_OK;
}

enum { CASE_DAM, CASE_SHAPES, CASE_SPH, CASE_MULTILEVEL, CASE_SHAPES_MULTILEVEL };

static int run_dam(pbfcl_cl *cl, int frames, size_t target, double threshold, int kind)
{
    bool shapes = kind == CASE_SHAPES || kind == CASE_SHAPES_MULTILEVEL;
    pbfcl_scene s;
    float *pos = NULL;
    size_t n = 0;
    int size, rank = rank_of(MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pbfcl_status (*scene)(pbfcl_scene *, float **, size_t *, size_t) =
        kind == CASE_SHAPES              ? shapes_scene
        : kind == CASE_SHAPES_MULTILEVEL ? shapes_multilevel_scene
        : kind == CASE_SPH               ? sph_scene
        : kind == CASE_MULTILEVEL        ? multilevel_scene
                                         : dam_scene;
    if (scene(&s, &pos, &n, target) != PBFCL_OK)
        finish(1, "the dam break scene failed");
    pbfcl_dist_layout l, one = {0, 1, (double[]){-INFINITY, INFINITY}};
    dam_run r = {.n = n};
    if (plan(&s, pos, n, size, &l) != PBFCL_OK)
        finish(1, "planning the slabs failed");
    one.axis = l.axis;
    if (pbfcl_dist_create(&r.split, MPI_COMM_WORLD, cl, &s, &l, pos, n, 0) != PBFCL_OK ||
        pbfcl_dist_set_rebalance(r.split, threshold) != PBFCL_OK)
        finish(1, "creating the split simulation failed");
    if (size > 1 && kind != CASE_SPH && /* SPH's exchanges are not overlapped */
        (pbfcl_dist_create(&r.plain, MPI_COMM_WORLD, cl, &s, &l, pos, n, 0) != PBFCL_OK ||
         pbfcl_dist_set_rebalance(r.plain, threshold) != PBFCL_OK))
        finish(1, "creating the split simulation without the overlap failed");
    if (r.plain)
        pbfcl_dist_set_overlap(r.plain, false);
    balance_check bal = {.threshold = threshold};
    bool ok =
        rank != 0 || pbfcl_dist_create(&r.ref, MPI_COMM_SELF, cl, &s, &one, pos, n, 0) == PBFCL_OK;
    for (int k = 0; k < 3 && ok; k++) {
        ok = (r.pos[k] = malloc(12 * n)) && (r.vel[k] = malloc(12 * n)) &&
             (r.rho[k] = malloc(4 * n));
    }
    if (!all(ok))
        finish(1, "setting up the reference failed");
    ok = pbfcl_dist_compute_density(r.split) == PBFCL_OK &&
         (!r.plain || pbfcl_dist_compute_density(r.plain) == PBFCL_OK) &&
         (!r.ref || pbfcl_dist_compute_density(r.ref) == PBFCL_OK);
    float mass = pbfcl_sim_params(pbfcl_dist_sim(r.split))->mass;
    double weight = mass * (double)n * fabs(s.gravity[1]), shape_worst[2] = {0, 0};
    char why[512] = "a step failed";
    for (int f = 0; all(ok) && f <= frames; f++) {
        ok = dam_frame(&r, &s, l.axis, mass, f, why, sizeof why);
        if (shapes && all(ok)) /* on every rank: the forces are summed with a collective */
            ok = check_shapes(r.split, r.ref, f, weight, shape_worst, why, sizeof why);
        if (threshold > 0) /* on every rank: it counts with a collective */
            ok = check_balance(&bal, r.split, n, f, why, sizeof why) && ok;
        if (all(ok) && f < frames)
            ok = pbfcl_dist_step(r.split, NULL) == PBFCL_OK &&
                 (!r.plain || pbfcl_dist_step(r.plain, NULL) == PBFCL_OK) &&
                 (!r.ref || pbfcl_dist_step(r.ref, NULL) == PBFCL_OK);
    }
    if (!all(ok))
        finish(1, why);
    const pbfcl_dist_traffic *t = pbfcl_dist_traffic_of(r.split);
    if (r.plain && (t->overlapped == 0 || t->interior == 0 || t->boundary == 0)) {
        snprintf(why, sizeof why,
                 "the overlap did not run (%llu exchanges in flight, %llu interior and %llu "
                 "boundary particles over the substeps): the frames compare nothing",
                 t->overlapped, t->interior, t->boundary);
        finish(1, why);
    }
    if (r.plain && rank == 0)
        printf("overlap: the frames the same to the byte as without it; %.1f exchanges a "
               "substep in flight while the interior ran (rank 0: %.0f interior, %.0f boundary "
               "particles)\n",
               (double)t->overlapped / (double)t->substeps,
               (double)t->interior / (double)t->substeps,
               (double)t->boundary / (double)t->substeps);
    if (threshold > 0 && (bal.seen == 0 || bal.unbalanced <= threshold)) {
        snprintf(why, sizeof why,
                 "no rebalance in %d frames (threshold %g; the most on a rank before: %.3f "
                 "times the mean): the scene does not test it",
                 frames, threshold, bal.unbalanced);
        finish(1, why);
    }
    if (threshold > 0 && rank == 0)
        printf("rebalancing at %g: before the first, a rank held up to %.3f times the mean; %llu "
               "rebalances, each leaving at most %.3f times the mean (the most on a rank before "
               "-> after: %s)\n",
               threshold, bal.unbalanced, bal.seen, bal.worst_after, bal.log);
    if (rank == 0)
        printf("%s, %zu particles, %d ranks against 1, %d frames: every id held once at "
               "every frame; largest relative differences: momentum %.2e (of the top speed's), "
               "kinetic energy %.2e, front %.2e, mean density %.2e, largest density %.2e; "
               "bit-identical to one rank's up to frame: positions %d, velocities %d, densities "
               "%d\n",
               kind == CASE_SHAPES_MULTILEVEL
                   ? "mesh-container with 5 shapes (multilevel correction)"
               : shapes                  ? "mesh-container with 5 shapes"
               : kind == CASE_SPH        ? "dam break (SPH)"
               : kind == CASE_MULTILEVEL ? "dam break (multilevel correction)"
                                         : "dam break",
               n, size, frames, r.worst[0], r.worst[1], r.worst[2], r.worst[3], r.worst[4],
               r.identical_until[0], r.identical_until[1], r.identical_until[2]);
    if (rank == 0 && shapes)
        printf("shapes: poses identical on every rank, at most %.2e m from one rank's; forces "
               "at most %.2e of the fluid's weight (%.4g N) from one rank's\n",
               shape_worst[0], shape_worst[1], weight);
    pbfcl_dist_destroy(r.split);
    pbfcl_dist_destroy(r.ref);
    pbfcl_dist_destroy(r.plain);
    for (int k = 0; k < 3; k++) {
        free(r.pos[k]);
        free(r.vel[k]);
        free(r.rho[k]);
    }
    free(l.cuts);
    free(pos);
    return 0;
}

/* A 4 x 4 x 4 blob in a box 1 m long along x without gravity, on 3 slabs: x < 0.2, 0.2 to
 * 0.3 (2.5 h) and beyond; the blob starts in the first, within one frame at 20 m/s it crosses
 * the middle one and lands in the last. */
static pbfcl_status blob_scene(pbfcl_scene *s, float **pos, size_t *n)
{
    pbfcl_scene_defaults(s);
    const float hi[3] = {1.0f, 0.3f, 0.3f};
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = 0.0f;
        s->domain_max[a] = hi[a];
        s->gravity[a] = 0.0f;
        s->fluid[0].min[a] = 0.05f;
        s->fluid[0].max[a] = 0.13f;
    }
    s->fluid[0].kind = PBFCL_SHAPE_BOX;
    s->fluid_count = 1;
    return pbfcl_scene_fill(s, pos, n);
}

static int run_cross(pbfcl_cl *cl)
{
    pbfcl_scene s;
    float *pos = NULL;
    size_t n = 0;
    int rank = rank_of(MPI_COMM_WORLD);
    if (blob_scene(&s, &pos, &n) != PBFCL_OK)
        finish(1, "the blob scene failed");
    pbfcl_dist_layout l = {0, 3, (double[]){-INFINITY, 0.2, 0.3, INFINITY}};
    pbfcl_dist *d = NULL;
    if (pbfcl_dist_create(&d, MPI_COMM_WORLD, cl, &s, &l, pos, n, 0) != PBFCL_OK)
        finish(1, "creating the split simulation failed");
    size_t owned = pbfcl_dist_owned(d);
    float *vel = malloc(12 * owned + 12);
    for (size_t i = 0; vel && i < owned; i++)
        vel[3 * i] = 20.0f, vel[3 * i + 1] = vel[3 * i + 2] = 0.0f;
    bool ok = vel && pbfcl_sim_write(pbfcl_dist_sim(d), NULL, vel) == PBFCL_OK;
    if (!all(ok && (rank == 0) == (owned == n)))
        finish(1, "the blob does not start whole on rank 0");
    char why[256] = "";
    for (int f = 1; f <= 4 && all(ok); f++) {
        ok = pbfcl_dist_step(d, NULL) == PBFCL_OK &&
             pbfcl_dist_gather(d, NULL, NULL, NULL) == PBFCL_OK; /* every id once */
        owned = pbfcl_dist_owned(d);
        if (f == 1 && (rank == 2) != (owned == n)) { /* two boundaries crossed in a frame */
            snprintf(why, sizeof why, "after frame 1 rank %d owns %zu of %zu", rank, owned, n);
            ok = false;
        }
    }
    if (!all(ok))
        finish(1, why[0] ? why : "a frame lost or duplicated a particle (see above)");
    if (rank == 0)
        printf("a blob of %zu crossed two slabs in one frame; ranks 0 and 1 emptied and stepped "
               "on for 3 frames; every id held once at every frame\n",
               n);
    pbfcl_dist_destroy(d);
    free(vel);
    free(pos);
    return 0;
}

/* 3 ranks, the blob at rest on rank 0 (3 times the mean), rebalancing at 1.2, ranks 1 and 2
 * with room for 10 particles: the plan would give them a third each, so it is refused on every
 * rank, the slabs kept, and tried again 10 frames later; nothing overflows. */
static int run_refuse(pbfcl_cl *cl)
{
    pbfcl_scene s;
    float *pos = NULL;
    size_t n = 0;
    int rank = rank_of(MPI_COMM_WORLD);
    if (blob_scene(&s, &pos, &n) != PBFCL_OK)
        finish(1, "the blob scene failed");
    pbfcl_dist_layout l = {0, 3, (double[]){-INFINITY, 0.2, 0.3, INFINITY}};
    pbfcl_dist *d = NULL;
    if (pbfcl_dist_create(&d, MPI_COMM_WORLD, cl, &s, &l, pos, n, rank == 0 ? n : 10) != PBFCL_OK ||
        pbfcl_dist_set_rebalance(d, 1.2) != PBFCL_OK)
        finish(1, "creating the split simulation failed");
    bool ok = true;
    for (int f = 1; f <= 12 && all(ok); f++)
        ok = pbfcl_dist_step(d, NULL) == PBFCL_OK &&
             pbfcl_dist_gather(d, NULL, NULL, NULL) == PBFCL_OK;
    const pbfcl_dist_balance *b = pbfcl_dist_balance_of(d);
    char why[256] = "";
    if (ok && (b->refusals != 2 || b->rebalances != 0 || (rank == 0) != (pbfcl_dist_owned(d) == n)))
        snprintf(why, sizeof why,
                 "rank %d: %llu refusals (2 expected: frames 1 and 12), %llu plans, owns %zu of "
                 "%zu",
                 rank, b->refusals, b->rebalances, pbfcl_dist_owned(d), n);
    if (!all(ok && !why[0]))
        finish(1, why[0] ? why : "a frame failed (see above)");
    if (rank == 0)
        printf("rebalancing refused for want of room at frames 1 and 12 on every rank; the blob of "
               "%zu stayed on rank 0, every id held once\n",
               n);
    pbfcl_dist_destroy(d);
    free(pos);
    return 0;
}

/* Rank 1 has room for its own particles and one more: its first ghosts overflow it. */
static int run_fail(pbfcl_cl *cl)
{
    pbfcl_scene s;
    float *pos = NULL;
    size_t n = 0, mine = 0;
    pbfcl_dist_layout l;
    if (dam_scene(&s, &pos, &n, 1000) != PBFCL_OK || plan(&s, pos, n, 2, &l) != PBFCL_OK)
        finish(1, "the dam break scene failed");
    for (size_t i = 0; i < n; i++)
        mine += pos[3 * i + l.axis] >= l.cuts[1];
    pbfcl_dist *d = NULL;
    size_t room = rank_of(MPI_COMM_WORLD) == 1 ? mine + 1 : 0;
    if (pbfcl_dist_create(&d, MPI_COMM_WORLD, cl, &s, &l, pos, n, room) != PBFCL_OK)
        finish(1, "creating the split simulation failed");
    for (int f = 0; f < 3; f++)
        pbfcl_dist_step(d, NULL); /* ends every rank on rank 1's failure */
    finish(1, "rank 1 should have failed");
}

/* Fluid 0.1 deep in a box 0.48 x 0.36 x 0.2, spacing 0.02, and three bodies: boxes of 3 x 3 x 3
 * particles across x = 0.16 (body 0, light) and x = 0.24 (body 1, heavy) and a sphere moving
 * at -0.5 m/s along x from x = 0.38 (body 2, across x = 0.32 within 0.2 s). */
static pbfcl_status bodies_scene(pbfcl_scene *s, float **pos, size_t *n, bool multilevel)
{
    pbfcl_scene_defaults(s);
    const float hi[3] = {0.48f, 0.36f, 0.2f};
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = 0.0f;
        s->domain_max[a] = hi[a];
        s->fluid[0].min[a] = 0.0f;
        s->fluid[0].max[a] = a == 1 ? 0.1f : hi[a];
    }
    s->particle_radius = 0.01f;
    s->fluid[0].kind = PBFCL_SHAPE_BOX;
    s->fluid_count = 1;
    const float lo[2][3] = {{0.13f, 0.2f, 0.05f}, {0.21f, 0.16f, 0.06f}};
    const float density[3] = {500.0f, 2000.0f, 800.0f};
    for (int b = 0; b < 3; b++) {
        pbfcl_body_shape *body = &s->bodies[b];
        memset(body, 0, sizeof *body);
        body->density = density[b];
        body->stiffness = 1.0f;
        body->shape.kind = b < 2 ? PBFCL_SHAPE_BOX : PBFCL_SHAPE_SPHERE;
        for (int a = 0; b < 2 && a < 3; a++) {
            body->shape.min[a] = lo[b][a];
            body->shape.max[a] = lo[b][a] + 0.06f;
        }
    }
    memcpy(s->bodies[2].shape.center, (float[3]){0.38f, 0.24f, 0.1f}, sizeof(float[3]));
    s->bodies[2].shape.radius = 0.04f;
    s->bodies[2].velocity[0] = -0.5f;
    s->bodies[2].velocity[1] = -1.0f;
    s->body_count = 3;
    if (multilevel) { /* as multilevel_scene */
        s->solver.iterations = 2;
        s->solver.multilevel = 1;
        s->solver.multilevel_limit = 0.0f;
        s->solver.cfl = 1.0f;
    }
    return pbfcl_scene_fill(s, pos, n);
}

/* The poses of d's bodies: centres and quaternions, 7 floats a body. */
static bool read_poses(pbfcl_dist *d, float *pose)
{
    return pbfcl_sim_read_bodies(pbfcl_dist_sim(d), pose, pose + 3 * 3) == PBFCL_OK;
}

/* Whether every rank's 21 floats are the same bits as rank 0's. */
static bool same_everywhere(const float *pose)
{
    float first[21];
    memcpy(first, pose, sizeof first);
    MPI_Bcast(first, 21, MPI_FLOAT, 0, MPI_COMM_WORLD);
    return all(!memcmp(first, pose, sizeof first));
}

/* The largest distance of a body's centre (pose) from the mean of its particles' positions (pos
 * by id; phases from the scene's fill). */
static double centre_gap(const float *pose, const float *pos, const int *phases, size_t n)
{
    double worst = 0;
    for (int b = 0; b < 3; b++) {
        double c[3] = {0, 0, 0}, k = 0;
        for (size_t i = 0; i < n; i++)
            if (phases[i] == b + 1) {
                for (int a = 0; a < 3; a++)
                    c[a] += pos[3 * i + a];
                k++;
            }
        double d2 = 0;
        for (int a = 0; a < 3; a++)
            d2 += (c[a] / k - pose[3 * b + a]) * (c[a] / k - pose[3 * b + a]);
        worst = fmax(worst, sqrt(d2));
    }
    return worst;
}

static int run_bodies(pbfcl_cl *cl, int frames, bool multilevel)
{
    pbfcl_scene s;
    float *pos = NULL;
    size_t n = 0;
    int size, rank = rank_of(MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (bodies_scene(&s, &pos, &n, multilevel) != PBFCL_OK)
        finish(1, "the bodies scene failed");
    double cuts[4] = {-INFINITY, size == 2 ? 0.24 : 0.16, size == 2 ? INFINITY : 0.32, INFINITY};
    cuts[size] = INFINITY;
    pbfcl_dist_layout l = {0, size, cuts}, one = {0, 1, (double[]){-INFINITY, INFINITY}};
    int *phases = malloc(n * sizeof *phases);
    float *got = malloc(12 * n), *ref = malloc(12 * n);
    pbfcl_dist *d = NULL, *r = NULL;
    if (!phases || !got || !ref || pbfcl_scene_phases(&s, phases, n) != PBFCL_OK ||
        pbfcl_dist_create(&d, MPI_COMM_WORLD, cl, &s, &l, pos, n, 0) != PBFCL_OK)
        finish(1, "creating the split simulation failed");
    bool ok =
        rank != 0 || pbfcl_dist_create(&r, MPI_COMM_SELF, cl, &s, &one, pos, n, 0) == PBFCL_OK;
    ok = ok && pbfcl_dist_compute_density(d) == PBFCL_OK &&
         (!r || pbfcl_dist_compute_density(r) == PBFCL_OK);
    double worst_ref = 0, worst_gap = 0;
    char why[256] = "a step failed";
    for (int f = 1; all(ok) && f <= frames; f++) {
        float pose[21], pose_ref[21];
        ok = pbfcl_dist_step(d, NULL) == PBFCL_OK && (!r || pbfcl_dist_step(r, NULL) == PBFCL_OK);
        ok = all(ok) && all(pbfcl_dist_gather(d, got, NULL, NULL) == PBFCL_OK) &&
             all(read_poses(d, pose));
        if (!ok) {
            snprintf(why, sizeof why, "frame %d: a step, a gather (every id once) or a read failed",
                     f);
            break;
        }
        if (!same_everywhere(pose)) {
            snprintf(why, sizeof why, "frame %d: the ranks hold different body poses", f);
            ok = false;
            break;
        }
        if (rank != 0)
            continue;
        ok = pbfcl_dist_gather(r, ref, NULL, NULL) == PBFCL_OK && read_poses(r, pose_ref);
        for (int b = 0; ok && b < 3; b++) {
            double d2 = 0;
            for (int a = 0; a < 3; a++)
                d2 += (pose[3 * b + a] - pose_ref[3 * b + a]) *
                      (double)(pose[3 * b + a] - pose_ref[3 * b + a]);
            worst_ref = fmax(worst_ref, sqrt(d2));
        }
        worst_gap = fmax(worst_gap, centre_gap(pose, got, phases, n));
        if (worst_ref > 5e-4 || worst_gap > 1e-5 || (size == 1 && memcmp(pose, pose_ref, 84))) {
            snprintf(why, sizeof why,
                     "frame %d: a body's centre is %.3g m from one rank's (0.5 mm allowed; on one "
                     "rank none) and %.3g m from its particles' mean (0.01 mm allowed)",
                     f, worst_ref, worst_gap);
            ok = false;
        }
    }
    if (!all(ok))
        finish(1, why);
    if (rank == 0)
        printf("bodies%s, %zu particles, %d ranks against 1, %d frames: every id held once, "
               "every pose the same on every rank; the largest distance of a body's centre from "
               "one rank's %.3g m, from its particles' mean %.3g m\n",
               multilevel ? " (multilevel correction)" : "", n, size, frames, worst_ref, worst_gap);
    pbfcl_dist_destroy(d);
    pbfcl_dist_destroy(r);
    free(phases);
    free(got);
    free(ref);
    free(pos);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2)
        finish(2, "usage: dist_check "
                  "dam|shapes|sph|multilevel|shapes-multilevel|cross|refuse|fail|bodies|"
                  "bodies-multilevel");
    pbfcl_cl cl;
    memset(&cl, 0, sizeof cl);
    if (!all(pbfcl_cl_open(&cl, getenv("PBFCL_DEVICE")) == PBFCL_OK))
        finish(SKIP, "SKIP: no OpenCL device");
    int code = 2;
    int kind = !strcmp(argv[1], "dam")                 ? CASE_DAM
               : !strcmp(argv[1], "shapes")            ? CASE_SHAPES
               : !strcmp(argv[1], "sph")               ? CASE_SPH
               : !strcmp(argv[1], "multilevel")        ? CASE_MULTILEVEL
               : !strcmp(argv[1], "shapes-multilevel") ? CASE_SHAPES_MULTILEVEL
                                                       : -1;
    if (kind >= 0)
        code = run_dam(&cl, argc > 2 ? atoi(argv[2]) : 20, argc > 3 ? (size_t)atol(argv[3]) : 3000,
                       argc > 4 ? atof(argv[4]) : 0.0, kind);
    else if (!strcmp(argv[1], "cross"))
        code = run_cross(&cl);
    else if (!strcmp(argv[1], "refuse"))
        code = run_refuse(&cl);
    else if (!strcmp(argv[1], "fail"))
        code = run_fail(&cl);
    else if (!strcmp(argv[1], "bodies"))
        code = run_bodies(&cl, argc > 2 ? atoi(argv[2]) : 12, false);
    else if (!strcmp(argv[1], "bodies-multilevel"))
        code = run_bodies(&cl, argc > 2 ? atoi(argv[2]) : 12, true);
    pbfcl_cl_destroy(&cl);
    finish(code, code == 2 ? "unknown case" : NULL);
}
