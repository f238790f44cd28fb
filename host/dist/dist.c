/* A rank's part of a split simulation: creation (its slab's particles with their global ids),
 * the frame (the core's step with the exchanges of dist_exchange.c, then the ghosts dropped and
 * the substep count's bounds reduced over every rank), the statistics reduced and the
 * particles gathered by id on rank 0. */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"
#include "solver_methods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pbfcl_status pbfcl_dist_check_scene(const pbfcl_scene *s)
{
    const char *what = s->obstacle_count > 0 ? "obstacles"
                       : s->cloth_count > 0  ? "cloth, ropes or inflatables"
                                             : NULL;
    if (what) {
        pbfcl_errorf("a run split over several ranks takes fluid, bodies, emitters, drains and "
                     "collision shapes; this scene has %s: run it on one rank (without mpirun, "
                     "or mpirun -np 1)",
                     what);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* The maxima of the bounds (fastest speed, reach along gravity) over every rank, which choose
 * the next frame's substeps: every rank takes the same count. */
static pbfcl_status global_bounds(pbfcl_dist *d)
{
    float b[3], g[3];
    PBFCL_TRY(pbfcl_sim_bounds(d->sim, b));
    MPI_Allreduce(b, g, 3, MPI_FLOAT, MPI_MAX, d->comm);
    PBFCL_TRY(dist_sph_bounds(d));
    return pbfcl_sim_write_bounds(d->sim, g);
}

/* This rank's particles: those in its slab, with their indices in positions as ids. */
static pbfcl_status create_sim(pbfcl_dist *d, pbfcl_cl *cl, const pbfcl_scene *scene,
                               const float *positions, size_t capacity)
{
    size_t n = d->n_global, m = 0;
    float *mine = malloc(3 * n * sizeof *mine + 12);
    unsigned *ids = malloc(n * 4 + 4), *slots = malloc(n * 4 + 4);
    pbfcl_status st = mine && ids && slots ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (dist_owner(d, positions[3 * i + d->layout.axis]) == d->rank) {
            memcpy(mine + 3 * m, positions + 3 * i, 3 * sizeof *mine);
            slots[m] = (unsigned)m;
            ids[m++] = (unsigned)i;
        }
    if (st == PBFCL_OK && capacity && capacity < m) {
        pbfcl_errorf("rank %d's slab starts with %zu particles, more than its room for %zu "
                     "(--rank-capacity); give more (its ghosts and the particles that arrive "
                     "need room too), or leave it out for room for all %zu",
                     d->rank, m, capacity, n);
        st = PBFCL_ERR_CAPACITY;
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_create_capacity(&d->sim, cl, scene, capacity ? capacity : n, mine, m);
    if (st == PBFCL_OK && m > 0) /* the global ids */
        st = pbfcl_sim_compact(d->sim, slots, m, ids);
    free(mine);
    free(ids);
    free(slots);
    return st;
}

pbfcl_status dist_setup_layout(pbfcl_dist *d, const pbfcl_dist_layout *layout)
{
    if (layout->ranks != d->size) {
        pbfcl_errorf("the layout has %d slabs for %d ranks", layout->ranks, d->size);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    d->layout = *layout;
    d->layout.cuts = malloc((size_t)(d->size + 1) * sizeof *d->layout.cuts);
    size_t per_rank = (size_t)d->size * sizeof(int);
    int **arrays[] = {&d->counts,      &d->displs,      &d->rcounts,      &d->rdispls,
                      &d->send.counts, &d->send.displs, &d->ghost.counts, &d->ghost.displs};
    bool ok = d->layout.cuts != NULL;
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
        ok = (*arrays[a] = calloc(1, per_rank)) && ok;
    ok = (d->requests = calloc((size_t)d->size * 2, sizeof *d->requests)) && ok;
    ok = (d->probed = calloc((size_t)d->size, sizeof *d->probed)) && ok;
    if (!ok)
        return PBFCL_ERR_OUT_OF_MEMORY;
    memcpy(d->layout.cuts, layout->cuts, (size_t)(d->size + 1) * sizeof *d->layout.cuts);
    return PBFCL_OK;
}

pbfcl_status dist_finish_local(pbfcl_dist *d)
{
    PBFCL_TRY(dist_rows_create(&d->rows, d->sim));
    float h = pbfcl_sim_params(d->sim)->h;
    PBFCL_TRY(pbfcl_dist_check_layout(&d->layout, h));
    d->halo = h * 1.001f; /* the search takes pairs within h: a margin for rounding */
    d->record = pbfcl_sim_record_bytes(d->sim);
    if (d->size > 1) {
        PBFCL_TRY(dist_exchange_create(d));
        pbfcl_sim_set_sync(d->sim, dist_sync, d);
    }
    return PBFCL_OK;
}

static pbfcl_status create_local(pbfcl_dist *d, pbfcl_cl *cl, const pbfcl_scene *scene,
                                 const pbfcl_dist_layout *layout, const float *positions,
                                 size_t capacity)
{
    PBFCL_TRY(pbfcl_dist_check_scene(scene));
    PBFCL_TRY(dist_setup_layout(d, layout));
    PBFCL_TRY(create_sim(d, cl, scene, positions, capacity));
    PBFCL_TRY(dist_shapes_add(d, scene)); /* every rank every shape */
    PBFCL_TRY(dist_bodies_create(d, scene, positions));
    return dist_finish_local(d);
}

pbfcl_dist *dist_alloc(MPI_Comm comm, size_t n)
{
    pbfcl_dist *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->comm = comm;
    MPI_Comm_rank(comm, &d->rank);
    MPI_Comm_size(comm, &d->size);
    d->n_global = n;
    return d;
}

pbfcl_status dist_agree(pbfcl_dist **out, pbfcl_dist *d, pbfcl_status st)
{
    int failed = st != PBFCL_OK, any = 0; /* every rank goes on, or none */
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, d->comm);
    if (any && !failed)
        st = PBFCL_ERR_SIMULATION; /* another rank said why */
    if (st != PBFCL_OK) {
        pbfcl_dist_destroy(d);
        return st;
    }
    *out = d;
    return PBFCL_OK;
}

pbfcl_status pbfcl_dist_create(pbfcl_dist **out, MPI_Comm comm, pbfcl_cl *cl,
                               const pbfcl_scene *scene, const pbfcl_dist_layout *layout,
                               const float *positions, size_t n, size_t capacity)
{
    *out = NULL;
    pbfcl_dist *d = dist_alloc(comm, n);
    if (!d)
        return PBFCL_ERR_OUT_OF_MEMORY;
    return dist_agree(out, d, create_local(d, cl, scene, layout, positions, capacity));
}

void pbfcl_dist_destroy(pbfcl_dist *d)
{
    if (!d)
        return;
    dist_exchange_release(d);
    dist_shapes_release(d);
    dist_rows_release(&d->rows);
    pbfcl_sim_destroy(d->sim);
    dist_bodies_release(d);
    int *arrays[] = {d->counts,      d->displs,      d->rcounts,      d->rdispls,
                     d->send.counts, d->send.displs, d->ghost.counts, d->ghost.displs};
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
        free(arrays[a]);
    free(d->requests);
    free(d->probed);
    free(d->layout.cuts);
    free(d);
}

/* After the core's work: the ghosts go. A failure on one rank leaves the others waiting in an
 * exchange, so it ends them all. */
static pbfcl_status settle(pbfcl_dist *d, pbfcl_status st)
{
    if (st == PBFCL_OK && d->size > 1)
        st = dist_drop_ghosts(d);
    if (st == PBFCL_OK) /* every particle left is this rank's own */
        st = dist_bodies_mark(d, pbfcl_sim_count(d->sim));
    if (st != PBFCL_OK && d->size > 1)
        pbfcl_dist_abort(d->comm, 1, pbfcl_status_message(st));
    return st;
}

pbfcl_status pbfcl_dist_step(pbfcl_dist *d, pbfcl_profile *prof)
{
    pbfcl_status st = dist_rebalance_due(d); /* new cuts: the first substep migrates */
    if (st == PBFCL_OK && d->size > 1)
        st = global_bounds(d); /* the same substeps */
    return settle(d, st == PBFCL_OK ? pbfcl_sim_step(d->sim, prof) : st);
}

pbfcl_status pbfcl_dist_compute_density(pbfcl_dist *d)
{
    return settle(d, pbfcl_sim_compute_density(d->sim));
}

pbfcl_sim *pbfcl_dist_sim(pbfcl_dist *d)
{
    return d->sim;
}

size_t pbfcl_dist_owned(const pbfcl_dist *d)
{
    return pbfcl_sim_count(d->sim);
}

const pbfcl_dist_traffic *pbfcl_dist_traffic_of(const pbfcl_dist *d)
{
    return &d->traffic;
}

size_t pbfcl_dist_total(const pbfcl_dist *d)
{
    return d->n_global;
}

_Noreturn void pbfcl_dist_abort(MPI_Comm comm, int code, const char *what)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    fprintf(stderr, "pbfcl: rank %d of %d failed: %s; stopping every rank\n", rank, size, what);
    fflush(stderr);
    MPI_Abort(comm, code);
    exit(code); /* MPI_Abort does not return */
}
