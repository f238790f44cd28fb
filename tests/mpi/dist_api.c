/* The public API of a solver split over MPI ranks (include/pbfcl_mpi.h), from a program that
 * includes only the public headers (tests/CMakeLists.txt compiles it with include/ alone on its
 * path). Run under mpirun by the ctest entries "mpi": `dist_api CASE [FRAMES]`.
 *   world   bad input refused on every rank (a particle outside the box; no context on one
 *           rank: that rank names it, the others fail too, none waits), then a dam break of
 *           2925 particles split over MPI_COMM_WORLD, against the same scene on one device
 *           through pbfcl_solver (rank 0), frame by frame
 *   split   MPI_COMM_WORLD (4 ranks) split into two communicators of 2 ranks (MPI_Comm_split by
 *           rank parity), each running its own dam break (2925 and 2000 particles) against its
 *           own one-device run on its first rank
 * The particles start with velocities that vary by id. Each frame: every id held exactly once
 * (the gather), the ranks' counts summing to the total, momentum, kinetic energy, the front, the
 * mean and largest density within 1 % of one device's, every particle within 5 % of the radius
 * of where one device has it (measured over 12 frames: 2.1e-5 m of 0.0196, 2.2e-4 m of 0.0219 with
 * 2000 particles), and the reduced statistics' kinetic energy that of the gathered velocities. Exit
 * 0 passed, 1 failed (with the reason), 77 no OpenCL device. */
#include "pbfcl.h"
#include "pbfcl_mpi.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static _Noreturn void finish(int code, const char *msg)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (msg && (rank == 0 || code == 1))
        fprintf(code == 1 ? stderr : stdout, "%s%s\n", code == 1 ? "FAIL: " : "", msg);
    MPI_Finalize();
    exit(code);
}

static bool all(MPI_Comm comm, bool ok)
{
    int mine = ok, every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, comm);
    return every;
}

/* What a frame is compared by. */
typedef struct summary {
    double momentum[3], kinetic, front, mean_density, max_density, top_speed;
} summary;

static void summarise(const float *pos, const float *vel, const float *rho, size_t n, float mass,
                      summary *s)
{
    memset(s, 0, sizeof *s);
    s->front = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v2 = 0;
        for (int a = 0; a < 3; a++) {
            s->momentum[a] += (double)mass * vel[3 * i + a];
            v2 += (double)vel[3 * i + a] * vel[3 * i + a];
            s->top_speed = fmax(s->top_speed, fabs(vel[3 * i + a]));
        }
        s->kinetic += 0.5 * mass * v2;
        s->front = fmax(s->front, pos[3 * i]); /* the dam break flows along x */
        s->mean_density += rho[i] / (double)n;
        s->max_density = fmax(s->max_density, rho[i]);
    }
}

/* a against the one-device b, within 1 %; the first difference into why. */
static bool compare(const summary *a, const summary *b, double mass, size_t n, float wall,
                    char *why, size_t size)
{
    double p = fmax(b->top_speed, 1e-3) * mass * (double)n; /* all moving at the top speed */
    for (int k = 0; k < 3; k++)
        if (fabs(a->momentum[k] - b->momentum[k]) > 0.01 * p) {
            snprintf(why, size, "momentum[%d] %.6g against %.6g on one device", k, a->momentum[k],
                     b->momentum[k]);
            return false;
        }
    const char *name[] = {"kinetic energy", "front", "mean density", "largest density"};
    double x[] = {a->kinetic, a->front - wall, a->mean_density, a->max_density};
    double y[] = {b->kinetic, b->front - wall, b->mean_density, b->max_density};
    for (int k = 0; k < 4; k++)
        if (fabs(x[k] - y[k]) > 0.01 * fabs(y[k]) + (k == 0 ? 1e-9 : 0)) {
            snprintf(why, size, "%s %.6g against %.6g on one device", name[k], x[k], y[k]);
            return false;
        }
    return true;
}

/* Bad input refused with a status on every rank, none left waiting: a particle outside the box
 * (every rank), then no context on the last rank alone. */
static bool refusals(MPI_Comm comm, pbfcl_context *ctx, char *why, size_t size)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    pbfcl_solver_desc desc;
    pbfcl_solver_desc_defaults(&desc);
    float pos[3 * 8];
    for (int i = 0; i < 8; i++) /* inside the default box, 7 of them */
        for (int a = 0; a < 3; a++)
            pos[3 * i + a] =
                desc.scene.domain_min[a] +
                (0.1f + 0.1f * (float)i) * (desc.scene.domain_max[a] - desc.scene.domain_min[a]);
    pos[3 * 7] = desc.scene.domain_max[0] + 1.0f;
    pbfcl_dist_solver *s = NULL;
    pbfcl_status st = pbfcl_dist_solver_create(comm, ctx, &desc, pos, NULL, 8, &s);
    if (st != PBFCL_ERR_BAD_ARGUMENT || s) {
        snprintf(why, size, "a particle outside the box: status %s on rank %d",
                 pbfcl_status_name(st), rank);
        return false;
    }
    pos[3 * 7] = desc.scene.domain_min[0];
    st = pbfcl_dist_solver_create(comm, rank == ranks - 1 ? NULL : ctx, &desc, pos, NULL, 8, &s);
    pbfcl_status want = rank == ranks - 1 ? PBFCL_ERR_INVALID_HANDLE : PBFCL_ERR_BAD_ARGUMENT;
    if (st != want || s) {
        snprintf(why, size, "no context on rank %d of %d: status %s on rank %d, %s expected",
                 ranks - 1, ranks, pbfcl_status_name(st), rank, pbfcl_status_name(want));
        return false;
    }
    return true;
}

/* One dam break of about target particles split over comm, against one device on its rank 0,
 * for frames frames; the verdict on every rank of comm, the reason into why. */
static bool run(MPI_Comm comm, pbfcl_context *ctx, size_t target, int frames, char *why,
                size_t size)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    pbfcl_scene_setup *setup = NULL;
    float *pos0 = NULL;
    size_t n = 0;
    pbfcl_solver_desc desc;
    pbfcl_solver_desc_defaults(&desc);
    if (pbfcl_scene_setup_load("dam-break", &setup) != PBFCL_OK ||
        pbfcl_scene_setup_set_particle_count(setup, target) != PBFCL_OK ||
        pbfcl_scene_setup_get_params(setup, &desc.scene, &desc.solver) != PBFCL_OK ||
        pbfcl_scene_setup_fill(setup, &pos0, &n) != PBFCL_OK) {
        snprintf(why, size, "the dam break scene failed");
        return false;
    }
    float *vel0 = malloc(12 * n); /* by id, that a mix-up of ids shows */
    for (size_t i = 0; vel0 && i < n; i++) {
        vel0[3 * i] = 0.5f * (float)(i % 7) / 7.0f;
        vel0[3 * i + 1] = 0.0f;
        vel0[3 * i + 2] = 0.2f * (float)(i % 5) / 5.0f - 0.1f;
    }
    pbfcl_dist_solver *split = NULL;
    if (!vel0 || pbfcl_dist_solver_create(comm, ctx, &desc, pos0, vel0, n, &split) != PBFCL_OK) {
        snprintf(why, size, "pbfcl_dist_solver_create failed on %d ranks", ranks);
        return false;
    }
    pbfcl_solver *ref = NULL;
    float *pos[2] = {NULL, NULL}, *vel[2] = {NULL, NULL}, *rho[2] = {NULL, NULL};
    desc.capacity = n;
    bool ok = rank != 0 || (pbfcl_solver_create(ctx, &desc, &ref) == PBFCL_OK &&
                            pbfcl_solver_add(ref, pos0, vel0, n) == PBFCL_OK);
    for (int k = 0; k < 2 && ok; k++)
        ok = (pos[k] = malloc(12 * n)) && (vel[k] = malloc(12 * n)) && (rho[k] = malloc(4 * n));
    float mass = 1.0f; /* the particles' mass: from one device's statistics */
    double worst = 0;
    snprintf(why, size, "%s",
             rank == 0 ? "setting up the one-device run failed" : "another rank failed (above)");
    for (int f = 1; f <= frames && all(comm, ok); f++) {
        pbfcl_stats st;
        size_t local = 0, total = 0, sum = 0;
        ok = pbfcl_dist_solver_step(split) == PBFCL_OK &&
             pbfcl_dist_solver_stats(split, &st) == PBFCL_OK &&
             pbfcl_dist_solver_count(split, &local, &total) == PBFCL_OK &&
             (!ref || pbfcl_solver_step(ref, 0.0f, NULL) == PBFCL_OK);
        MPI_Allreduce(&local, &sum, 1, sizeof(size_t) == 8 ? MPI_UINT64_T : MPI_UINT32_T, MPI_SUM,
                      comm);
        if (ok && (sum != n || total != n)) {
            snprintf(why, size, "frame %d: the ranks own %zu particles, total %zu, of %zu", f, sum,
                     total, n);
            ok = false;
        }
        if (!all(comm, ok))
            break;
        if (pbfcl_dist_solver_gather(split, pos[0], vel[0], rho[0]) != PBFCL_OK) {
            snprintf(why, size, "frame %d: a particle was lost or held twice (see above)", f);
            ok = false;
        }
        if (!ok || rank != 0)
            continue;
        ok = pbfcl_solver_get_positions(ref, pos[1], n) == PBFCL_OK &&
             pbfcl_solver_get_velocities(ref, vel[1], n) == PBFCL_OK &&
             pbfcl_solver_get_densities(ref, rho[1], n) == PBFCL_OK;
        pbfcl_stats one;
        ok = ok && pbfcl_solver_stats(ref, &one) == PBFCL_OK;
        /* the particles' mass from one device's kinetic energy and velocities */
        double v2 = 0;
        for (size_t i = 0; ok && i < 3 * n; i++)
            v2 += (double)vel[1][i] * vel[1][i];
        mass = v2 > 0 ? (float)(2.0 * one.kinetic_energy / v2) : 1.0f;
        summary a, b;
        summarise(pos[0], vel[0], rho[0], n, mass, &a);
        summarise(pos[1], vel[1], rho[1], n, mass, &b);
        char frame_why[256];
        if (ok &&
            !compare(&a, &b, mass, n, desc.scene.domain_min[0], frame_why, sizeof frame_why)) {
            snprintf(why, size, "frame %d on %d ranks: %s", f, ranks, frame_why);
            ok = false;
        } else if (ok && fabs(st.kinetic_energy - a.kinetic) > 1e-5 * a.kinetic + 1e-12) {
            snprintf(why, size,
                     "frame %d: the reduced statistics' kinetic energy %.8g, the gathered "
                     "velocities' %.8g",
                     f, st.kinetic_energy, a.kinetic);
            ok = false;
        }
        for (size_t i = 0; ok && i < 3 * n; i++)
            worst = fmax(worst, fabs(pos[0][i] - pos[1][i]));
        if (ok && worst > 0.05 * desc.scene.particle_radius) {
            snprintf(why, size,
                     "frame %d on %d ranks: a particle is %.3g m from where one device has it, "
                     "beyond 5 %% of the radius",
                     f, ranks, worst);
            ok = false;
        }
    }
    ok = all(comm, ok);
    if (ok && rank == 0)
        snprintf(why, size,
                 "%zu particles on %d ranks against one device, %d frames: every id held once, "
                 "the counts summing to %zu; largest displacement of a particle from one "
                 "device's %.2e m (radius %g m)",
                 n, ranks, frames, n, worst, desc.scene.particle_radius);
    pbfcl_dist_solver_destroy(split);
    pbfcl_solver_destroy(ref);
    pbfcl_scene_setup_destroy(setup);
    pbfcl_free(pos0);
    free(vel0);
    for (int k = 0; k < 2; k++) {
        free(pos[k]);
        free(vel[k]);
        free(rho[k]);
    }
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2)
        finish(2, "usage: dist_api world|split [FRAMES]");
    int frames = argc > 2 ? atoi(argv[2]) : 12, rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.device = getenv("PBFCL_DEVICE");
    pbfcl_context *ctx = NULL;
    if (!all(MPI_COMM_WORLD, pbfcl_context_create(PBFCL_VERSION, &cd, &ctx) == PBFCL_OK))
        finish(SKIP, "SKIP: no OpenCL device");
    char why[512] = "";
    bool ok = false;
    if (!strcmp(argv[1], "world")) {
        ok = all(MPI_COMM_WORLD, refusals(MPI_COMM_WORLD, ctx, why, sizeof why)) &&
             run(MPI_COMM_WORLD, ctx, 3000, frames, why, sizeof why);
    } else if (!strcmp(argv[1], "split")) {
        if (ranks != 4)
            finish(2, "split wants 4 ranks");
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        ok = run(half, ctx, rank % 2 ? 2000 : 3000, frames, why, sizeof why);
        if (ok && rank < 2) /* each group's first rank says what its run did */
            printf("group %d (world ranks %d and %d): %s\n", rank, rank, rank + 2, why);
        fflush(stdout);
        MPI_Comm_free(&half);
        ok = all(MPI_COMM_WORLD, ok);
        snprintf(why + strlen(why), sizeof why - strlen(why), "%s",
                 ok ? " (two independent simulations on two communicators)" : "");
    } else {
        finish(2, "unknown case");
    }
    pbfcl_context_destroy(ctx);
    if (!ok)
        finish(1, why[0] ? why : "another rank failed (see above)");
    finish(0, why);
}
