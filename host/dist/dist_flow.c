/* Emitters in a split simulation: every rank computes the same particles of every emitter at
 * the same time (pbfcl_scene_emit: deterministic), numbers them with the same global ids (the
 * next ones after the whole simulation's count, emitter by emitter, as one device's solver
 * numbers them) and keeps those in its slab; the whole count grows by the same number on every
 * rank, checked against the sum of the ranks' counts (docs/DISTRIBUTED.md). */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"
#include "scene/scene.h"

#include <stdlib.h>
#include <string.h>

/* Keeps the k emitted particles (pos, vel; ids first..first+k-1) that lie in this rank's slab:
 * appended, then given their ids. */
static pbfcl_status keep_mine(pbfcl_dist *d, const float *pos, const float *vel, size_t k,
                              size_t first)
{
    float *p = malloc(12 * k + 12), *v = malloc(12 * k + 12);
    unsigned *ids = malloc(4 * k + 4);
    size_t m = 0, n = pbfcl_sim_count(d->sim);
    pbfcl_status st = p && v && ids ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < k; i++)
        if (dist_owner(d, pos[3 * i + d->layout.axis]) == d->rank) {
            memcpy(p + 3 * m, pos + 3 * i, 12);
            memcpy(v + 3 * m, vel + 3 * i, 12);
            ids[m++] = (unsigned)(first + i);
        }
    if (st == PBFCL_OK && m > pbfcl_sim_capacity(d->sim) - n) {
        pbfcl_errorf("rank %d holds %zu particles and its slab receives %zu emitted ones, beyond "
                     "its room for %zu; give a larger --rank-capacity, or leave it out for room "
                     "for the fill and every emitter's particles",
                     d->rank, n, m, pbfcl_sim_capacity(d->sim));
        st = PBFCL_ERR_CAPACITY;
    }
    if (st == PBFCL_OK && m > 0)
        st = pbfcl_sim_append(d->sim, p, v, m);
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_ids(d->sim, n, m, ids);
    free(p);
    free(v);
    free(ids);
    return st;
}

pbfcl_status pbfcl_dist_emit(pbfcl_dist *d, const pbfcl_scene *scene, long long *emitted,
                             double time, size_t *added)
{
    *added = 0;
    pbfcl_status st = PBFCL_OK;
    for (int e = 0; st == PBFCL_OK && e < scene->emitter_count; e++) {
        long long due = pbfcl_scene_emitted_by(scene, e, time), from = emitted[e];
        if (due <= from)
            continue;
        size_t k = (size_t)(due - from);
        float *pos = malloc(12 * k), *vel = malloc(12 * k);
        st = pos && vel ? pbfcl_scene_emit(scene, e, from, due, time, pos, vel)
                        : PBFCL_ERR_OUT_OF_MEMORY;
        if (st == PBFCL_OK)
            st = keep_mine(d, pos, vel, k, d->n_global);
        free(pos);
        free(vel);
        if (st == PBFCL_OK) {
            emitted[e] = due;
            d->n_global += k;
            *added += k;
        }
    }
    if (st == PBFCL_OK && *added > 0) /* the bodies' map: the new particles are this rank's */
        st = dist_bodies_mark(d, pbfcl_sim_count(d->sim));
    unsigned long long mine = st == PBFCL_OK ? pbfcl_sim_count(d->sim) : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, d->comm);
    if (st == PBFCL_OK && all != d->n_global) {
        pbfcl_errorf("after emitting, the ranks hold %llu particles but the simulation has %zu "
                     "(an emitted particle kept by no rank or by two)",
                     all, d->n_global);
        st = PBFCL_ERR_SIMULATION;
    }
    return st;
}
