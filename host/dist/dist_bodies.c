/* Rigid and soft bodies (shape matching, host/core/bodies/shape_match.h) in a split simulation:
 * every rank holds every body's entries (ids, rest offsets, pose), its particles migrate and are
 * ghosts like the fluid's (their records carry their phases and inverse masses), each body's
 * sums are taken over each rank's owned particles and added up over the ranks in rank order
 * (MPI_Allgather, then the same sum on every rank), so that every rank makes the same poses
 * and moves its particles, owned and ghosts, to the same goals (docs/DISTRIBUTED.md). */
#include "dist_internal.h"

#include "bodies/shape_match.h"
#include "pbfcl_shared.h"
#include "runtime/clock.h"
#include "runtime/pbfcl_error.h"
#include "scene/scene.h"

#include <stdlib.h>
#include <string.h>

/* The floats of a body's sums (PBFCL_SHAPE_MATCH_ROWS float4). */
#define DIST_BODY_FLOATS (PBFCL_SHAPE_MATCH_ROWS * 4)

/* Every rank's share of each body's sums, added in rank order: the same floats on every rank,
 * whatever order MPI would add them in (pbfcl_shape_match_combine_fn). */
static pbfcl_status combine(void *ctx, float *totals, size_t bodies)
{
    pbfcl_dist *d = ctx;
    size_t per_rank = bodies * DIST_BODY_FLOATS, need = per_rank * (size_t)d->size;
    if (need > d->body_sums_cap) {
        float *grown = realloc(d->body_sums, need * sizeof *grown);
        if (!grown)
            return PBFCL_ERR_OUT_OF_MEMORY;
        d->body_sums = grown;
        d->body_sums_cap = need;
    }
    double start = pbfcl_wall_seconds(); /* the exchanges' time (dist.h), all of it in MPI */
    MPI_Allgather(totals, (int)per_rank, MPI_FLOAT, d->body_sums, (int)per_rank, MPI_FLOAT,
                  d->comm);
    double spent = pbfcl_wall_seconds() - start;
    d->traffic.seconds += spent;
    d->traffic.mpi_seconds += spent;
    d->traffic.part_seconds[PBFCL_DIST_PART_MPI] += spent;
    d->traffic.messages += (unsigned long long)(d->size - 1);
    for (size_t k = 0; k < per_rank; k++) {
        double sum = 0.0;
        for (int r = 0; r < d->size; r++)
            sum += d->body_sums[(size_t)r * per_rank + k];
        totals[k] = (float)sum;
    }
    return PBFCL_OK;
}

/* The entries of the scene's bodies from the phases of its fill (by body, ids ascending), the
 * positions as their rest shapes; *count their number. */
static pbfcl_status body_entries(const pbfcl_scene *scene, const int *phases, size_t n,
                                 const float *positions, unsigned *id, unsigned *body, float *rest,
                                 size_t *count)
{
    size_t e = 0;
    for (int b = 0; b < scene->body_count; b++)
        for (size_t i = 0; i < n; i++)
            if (phases[i] == b + 1) {
                id[e] = (unsigned)i;
                body[e] = (unsigned)b;
                memcpy(rest + 3 * e++, positions + 3 * i, 3 * sizeof *rest);
            }
    *count = e;
    return PBFCL_OK;
}

/* The scene's velocities of the bodies' particles this rank holds (the fluid's stay). */
static pbfcl_status body_velocities(pbfcl_dist *d, const pbfcl_scene *scene, const int *phases)
{
    size_t m = pbfcl_sim_count(d->sim);
    if (m == 0)
        return PBFCL_OK;
    unsigned *ids = malloc(m * sizeof *ids);
    float *vel = malloc(3 * m * sizeof *vel);
    pbfcl_status st = ids && vel ? pbfcl_sim_read_ids(d->sim, ids) : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_sim_read(d->sim, NULL, vel, NULL);
    for (size_t i = 0; st == PBFCL_OK && i < m; i++)
        if (phases[ids[i]] > 0 && phases[ids[i]] <= scene->body_count)
            memcpy(vel + 3 * i, scene->bodies[phases[ids[i]] - 1].velocity, 3 * sizeof *vel);
    if (st == PBFCL_OK)
        st = pbfcl_sim_write(d->sim, NULL, vel);
    free(ids);
    free(vel);
    return st;
}

pbfcl_status dist_bodies_create(pbfcl_dist *d, const pbfcl_scene *scene, const float *positions)
{
    if (scene->body_count == 0)
        return PBFCL_OK;
    size_t n = d->n_global;
    if (pbfcl_sim_capacity(d->sim) < n) {
        pbfcl_errorf("a split run with bodies needs room for every particle on each rank (each "
                     "body's particles are named by id on every rank); leave out --rank-capacity");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    int *phases = malloc(n * sizeof *phases + 4);
    unsigned *id = malloc(n * sizeof *id + 4), *body = malloc(n * sizeof *body + 4);
    float *rest = malloc(3 * n * sizeof *rest + 12);
    float stiffness[PBFCL_MAX_BODIES], inv_mass[PBFCL_MAX_BODIES];
    size_t entries = 0;
    pbfcl_status st = phases && id && body && rest ? pbfcl_scene_phases(scene, phases, n)
                                                   : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = body_entries(scene, phases, n, positions, id, body, rest, &entries);
    for (int b = 0; b < scene->body_count; b++) { /* as pbfcl_solver_set_body makes them */
        stiffness[b] = scene->bodies[b].stiffness;
        inv_mass[b] = scene->rest_density / scene->bodies[b].density;
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_set_bodies_split(d->sim, (size_t)scene->body_count, entries, id, body, rest,
                                        stiffness, inv_mass);
    if (st == PBFCL_OK)
        st = body_velocities(d, scene, phases);
    free(phases);
    free(id);
    free(body);
    free(rest);
    if (st != PBFCL_OK || d->size == 1) /* one rank: one device's path, the same frames */
        return st;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    size_t ids = pbfcl_sim_capacity(d->sim); /* every id, of the fill and of particles to come */
    PBFCL_TRY(pbfcl_cl_buffer(v.cl, CL_MEM_READ_WRITE, ids * sizeof(cl_uint), "bodies' presence",
                              &d->here_buf));
    PBFCL_TRY(pbfcl_shape_match_split(v.bodies, d->here_buf, combine, d));
    return dist_bodies_mark(d, pbfcl_sim_count(d->sim));
}

pbfcl_status dist_bodies_mark(pbfcl_dist *d, size_t owned)
{
    if (!d->here_buf)
        return PBFCL_OK;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    static const cl_uint empty = PBFCL_EMPTY;
    PBFCL_CL_CHECK(clEnqueueFillBuffer(v.cl->queue, d->here_buf, &empty, sizeof empty, 0,
                                       v.capacity * sizeof empty, 0, NULL, NULL));
    PBFCL_TRY(pbfcl_particles_slots_into(v.particles, v.n, v.id_buf, d->here_buf, NULL,
                                         PBFCL_STAGE_OTHER));
    v.bodies->owned = (cl_uint)owned; /* the slots below it: this rank's own (before the sort) */
    return PBFCL_OK;
}

void dist_bodies_release(pbfcl_dist *d)
{
    pbfcl_cl_release_buffer(&d->here_buf);
    free(d->body_sums);
    d->body_sums = NULL;
    d->body_sums_cap = 0;
}
