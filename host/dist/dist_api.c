/* The public API of a solver split over the ranks of an MPI communicator (include/pbfcl_mpi.h):
 * a thin wrapper of host/dist/'s pbfcl_dist, made from the public parameters on a public
 * context. The arguments are checked on every rank and the verdicts agreed (MPI_Allreduce)
 * before anything collective starts, so that bad input on one rank gives every rank a status
 * instead of leaving the others waiting. */
#include "pbfcl_mpi.h"

#include "api_internal.h"
#include "dist.h"
#include "runtime/pbfcl_error.h"
#include "solver_methods.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pbfcl_dist_solver {
    MPI_Comm comm; /* the caller's, duplicated */
    bool comm_made;
    pbfcl_dist *d;
};

/* Every rank's verdict st on comm: the first failure's status where this rank's is OK
 * (PBFCL_ERR_BAD_ARGUMENT: another rank said why). */
static pbfcl_status agree(MPI_Comm comm, pbfcl_status st)
{
    int failed = st != PBFCL_OK, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
    return any && st == PBFCL_OK ? PBFCL_ERR_BAD_ARGUMENT : st;
}

/* The local checks of pbfcl_dist_solver_create: the arguments, the scene from desc, and the
 * slabs planned from the positions (the same on every rank). */
static pbfcl_status check_create(MPI_Comm comm, pbfcl_context *ctx, const pbfcl_solver_desc *desc,
                                 const float *positions, size_t count, pbfcl_scene *scene,
                                 pbfcl_dist_layout *layout)
{
    static const char *func = "pbfcl_dist_solver_create";
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    if (!pbfcl_api_context_cl(ctx))
        return pbfcl_api_bad_handle(func, "context", ctx);
    if (!desc || !positions) {
        pbfcl_errorf("%s: %s is NULL", func, !desc ? "desc" : "positions");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (count < (size_t)ranks || count > UINT32_MAX / 64) {
        pbfcl_errorf("%s: %zu particles for %d ranks; give %d to %u (at least one a rank)", func,
                     count, ranks, ranks, UINT32_MAX / 64);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (desc->capacity > UINT32_MAX / 64) {
        pbfcl_errorf("%s: desc->capacity is %zu; give 0 (room for all) to %u particles", func,
                     desc->capacity, UINT32_MAX / 64);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_api_scene_from_params(&desc->scene, &desc->solver, scene);
    snprintf(scene->name, sizeof scene->name, "%s", func); /* messages name the call */
    PBFCL_TRY(pbfcl_scene_validate_settings(scene));
    PBFCL_TRY(pbfcl_dist_check_scene(scene));
    for (size_t i = 0; i < 3 * count; i++) { /* as pbfcl_solver_add refuses them */
        int a = (int)(i % 3);
        if (!(positions[i] >= scene->domain_min[a] && positions[i] <= scene->domain_max[a])) {
            pbfcl_errorf("%s: particle %zu's %c = %g is %s the box (%g to %g)", func, i / 3,
                         "xyz"[a], positions[i],
                         isfinite(positions[i]) ? "outside" : "not finite in", scene->domain_min[a],
                         scene->domain_max[a]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    pbfcl_pbf_params p;
    PBFCL_TRY(pbfcl_pbf_params_from_scene(scene, &p));
    return pbfcl_dist_plan(scene, p.h, positions, count, ranks, layout);
}

/* The velocities by id of this rank's particles (the others' are not read). */
static pbfcl_status set_velocities(pbfcl_dist *d, const float *velocities)
{
    pbfcl_sim *sim = pbfcl_dist_sim(d);
    size_t n = pbfcl_sim_count(sim);
    unsigned *ids = malloc(4 * n + 4);
    float *vel = malloc(12 * n + 12);
    pbfcl_status st = ids && vel ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && n > 0)
        st = pbfcl_sim_read_ids(sim, ids);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        memcpy(vel + 3 * i, velocities + 3 * (size_t)ids[i], 3 * sizeof *vel);
    if (st == PBFCL_OK && n > 0)
        st = pbfcl_sim_write(sim, NULL, vel);
    free(ids);
    free(vel);
    return st;
}

pbfcl_status pbfcl_dist_solver_create(MPI_Comm comm, pbfcl_context *ctx,
                                      const pbfcl_solver_desc *desc, const float *positions,
                                      const float *velocities, size_t count,
                                      pbfcl_dist_solver **out)
{
    if (!out) {
        pbfcl_errorf("pbfcl_dist_solver_create: out is NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *out = NULL;
    pbfcl_dist_solver *s = calloc(1, sizeof *s);
    pbfcl_scene *scene = calloc(1, sizeof *scene);
    pbfcl_dist_layout layout = {0, 0, NULL};
    pbfcl_status st = s && scene ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = check_create(comm, ctx, desc, positions, count, scene, &layout);
    st = agree(comm, st);
    if (st == PBFCL_OK)
        s->comm_made = MPI_Comm_dup(comm, &s->comm) == MPI_SUCCESS;
    st = st == PBFCL_OK ? agree(comm, s->comm_made ? PBFCL_OK : PBFCL_ERR_UNSUPPORTED) : st;
    if (st == PBFCL_OK) /* collective: every rank's verdict on its device */
        st = pbfcl_dist_create(&s->d, s->comm, pbfcl_api_context_cl(ctx), scene, &layout, positions,
                               count, desc->capacity);
    if (st == PBFCL_OK && velocities)
        st = agree(s->comm, set_velocities(s->d, velocities));
    if (st == PBFCL_OK) /* frame 0's density, as a step leaves it */
        st = pbfcl_dist_compute_density(s->d);
    free(layout.cuts);
    free(scene);
    if (st != PBFCL_OK) {
        pbfcl_dist_solver_destroy(s); /* every rank: the same status */
        return st;
    }
    *out = s;
    return PBFCL_OK;
}

pbfcl_status pbfcl_dist_solver_destroy(pbfcl_dist_solver *s)
{
    if (!s)
        return PBFCL_OK;
    pbfcl_dist_destroy(s->d);
    if (s->comm_made)
        MPI_Comm_free(&s->comm);
    free(s);
    return PBFCL_OK;
}

/* NULL: a message naming the call. */
static pbfcl_status check_solver(const char *func, const pbfcl_dist_solver *s)
{
    if (s && s->d)
        return PBFCL_OK;
    pbfcl_errorf("%s: the solver is NULL", func);
    return PBFCL_ERR_INVALID_HANDLE;
}

pbfcl_status pbfcl_dist_solver_set_rebalance(pbfcl_dist_solver *s, double threshold)
{
    PBFCL_TRY(check_solver("pbfcl_dist_solver_set_rebalance", s));
    return pbfcl_dist_set_rebalance(s->d, threshold);
}

pbfcl_status pbfcl_dist_solver_step(pbfcl_dist_solver *s)
{
    PBFCL_TRY(check_solver("pbfcl_dist_solver_step", s));
    return pbfcl_dist_step(s->d, NULL);
}

pbfcl_status pbfcl_dist_solver_count(const pbfcl_dist_solver *s, size_t *local, size_t *total)
{
    PBFCL_TRY(check_solver("pbfcl_dist_solver_count", s));
    if (local)
        *local = pbfcl_dist_owned(s->d);
    if (total)
        *total = pbfcl_dist_total(s->d);
    return PBFCL_OK;
}

pbfcl_status pbfcl_dist_solver_get_local(pbfcl_dist_solver *s, float *positions, float *velocities,
                                         unsigned *ids, size_t count)
{
    PBFCL_TRY(check_solver("pbfcl_dist_solver_get_local", s));
    size_t n = pbfcl_dist_owned(s->d);
    if (count != n) {
        pbfcl_errorf("pbfcl_dist_solver_get_local: count is %zu but this rank owns %zu particles "
                     "(pbfcl_dist_solver_count)",
                     count, n);
        return PBFCL_ERR_BUFFER_SIZE;
    }
    if (n == 0)
        return PBFCL_OK;
    pbfcl_sim *sim = pbfcl_dist_sim(s->d);
    if (positions || velocities)
        PBFCL_TRY(pbfcl_sim_read(sim, positions, velocities, NULL));
    return ids ? pbfcl_sim_read_ids(sim, ids) : PBFCL_OK;
}

pbfcl_status pbfcl_dist_solver_gather(pbfcl_dist_solver *s, float *positions, float *velocities,
                                      float *densities)
{
    PBFCL_TRY(check_solver("pbfcl_dist_solver_gather", s));
    return pbfcl_dist_gather(s->d, positions, velocities, densities);
}

pbfcl_status pbfcl_dist_solver_stats(pbfcl_dist_solver *s, pbfcl_stats *out)
{
    PBFCL_TRY(check_solver("pbfcl_dist_solver_stats", s));
    if (!out) {
        pbfcl_errorf("pbfcl_dist_solver_stats: out is NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return pbfcl_dist_stats(s->d, out);
}
