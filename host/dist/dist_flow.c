/* Emitters and drains in a split simulation (docs/DISTRIBUTED.md). Emitters: every rank
 * computes the same particles of every emitter at the same time (pbfcl_scene_emit:
 * deterministic), numbers them with the same global ids (the next ones after the whole
 * simulation's count, emitter by emitter, as one device's solver numbers them) and keeps those
 * in its slab. Drains: each rank removes its own fluid particles in a drain, every rank learns
 * every removed id (MPI_Allgatherv) and renumbers the ids left as one device's solver does
 * (each id less the removed ids below it: 0..n-1 in the same order). The whole count changes
 * by the same number on every rank, checked against the sum of the ranks' counts. */
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

/* Every rank's count summed equals the whole simulation's (after emitting or draining), or
 * every rank fails saying so. Collective. */
static pbfcl_status check_total(pbfcl_dist *d, pbfcl_status st, const char *after)
{
    unsigned long long mine = st == PBFCL_OK ? pbfcl_sim_count(d->sim) : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, d->comm);
    if (st == PBFCL_OK && all != d->n_global) {
        pbfcl_errorf("after %s, the ranks hold %llu particles but the simulation has %zu (a "
                     "particle kept by no rank or by two)",
                     after, all, d->n_global);
        st = PBFCL_ERR_SIMULATION;
    }
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
    return check_total(d, st, "emitting");
}

/* This rank's fluid particles in a drain: their ids into gone (*k of them), the others' slots
 * into keep (*m). */
static pbfcl_status find_drained(pbfcl_dist *d, const pbfcl_scene *scene, unsigned *gone, size_t *k,
                                 unsigned *keep, unsigned *keep_ids, size_t *m)
{
    size_t n = pbfcl_sim_count(d->sim);
    float *pos = malloc(12 * n + 12);
    unsigned *phase = malloc(4 * n + 4), *ids = malloc(4 * n + 4);
    pbfcl_status st = pos && phase && ids ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && n > 0)
        st = pbfcl_sim_read(d->sim, pos, NULL, NULL);
    if (st == PBFCL_OK && n > 0)
        st = pbfcl_sim_read_phases(d->sim, phase, NULL);
    if (st == PBFCL_OK && n > 0)
        st = pbfcl_sim_read_ids(d->sim, ids);
    *k = *m = 0;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (phase[i] == PBFCL_SIM_PHASE_FLUID && pbfcl_scene_in_drain(scene, pos + 3 * i)) {
            gone[(*k)++] = ids[i];
        } else {
            keep[*m] = (unsigned)i;
            keep_ids[(*m)++] = ids[i];
        }
    free(pos);
    free(phase);
    free(ids);
    return st;
}

static int by_value(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* The ids below id among the sorted removed ones (k of them). */
static size_t removed_below(const unsigned *removed, size_t k, unsigned id)
{
    size_t lo = 0, hi = k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (removed[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Every rank's removed ids, sorted, into *all (malloc'd; *total of them). Collective. */
static pbfcl_status gather_removed(pbfcl_dist *d, const unsigned *gone, size_t k, unsigned **all,
                                   size_t *total)
{
    int mine = (int)k;
    MPI_Allgather(&mine, 1, MPI_INT, d->rcounts, 1, MPI_INT, d->comm);
    *total = 0;
    for (int r = 0; r < d->size; r++) {
        d->rdispls[r] = (int)*total;
        *total += (size_t)d->rcounts[r];
    }
    if (!(*all = malloc(4 * *total + 4)))
        pbfcl_dist_abort(d->comm, 1, "out of host memory for the drained particles' ids");
    MPI_Allgatherv(gone, mine, MPI_UNSIGNED, *all, d->rcounts, d->rdispls, MPI_UNSIGNED, d->comm);
    d->traffic.messages += (unsigned long long)(2 * (d->size - 1));
    qsort(*all, *total, sizeof **all, by_value);
    return PBFCL_OK;
}

/* The ids left renumbered (keep_ids, m of them) and the bodies' entries with them: id less the
 * removed ids below it. */
static pbfcl_status renumber(pbfcl_dist *d, const unsigned *removed, size_t total,
                             const unsigned *keep, unsigned *keep_ids, size_t m)
{
    for (size_t i = 0; i < m; i++)
        keep_ids[i] -= (unsigned)removed_below(removed, total, keep_ids[i]);
    PBFCL_TRY(pbfcl_sim_compact(d->sim, keep, m, keep_ids));
    if (pbfcl_sim_body_count(d->sim) == 0)
        return PBFCL_OK;
    unsigned *map = malloc(4 * d->n_global + 4); /* every old id's new one (bodies: any rank's) */
    if (!map)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t id = 0; id < d->n_global; id++)
        map[id] = (unsigned)(id - removed_below(removed, total, (unsigned)id));
    pbfcl_status st = pbfcl_sim_remap_body_ids(d->sim, map);
    free(map);
    return st;
}

pbfcl_status pbfcl_dist_drain(pbfcl_dist *d, const pbfcl_scene *scene, size_t *removed_ids,
                              size_t *removed)
{
    *removed = 0;
    if (scene->drain_count == 0)
        return PBFCL_OK;
    size_t n = pbfcl_sim_count(d->sim), k = 0, m = 0, total = 0;
    unsigned *gone = malloc(4 * n + 4), *keep = malloc(4 * n + 4), *keep_ids = malloc(4 * n + 4);
    unsigned *all = NULL;
    pbfcl_status st = gone && keep && keep_ids ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = find_drained(d, scene, gone, &k, keep, keep_ids, &m);
    if (st != PBFCL_OK) /* the others wait in the gather */
        pbfcl_dist_abort(d->comm, 1, "finding the drained particles failed (see above)");
    gather_removed(d, gone, k, &all, &total);
    for (size_t i = 0; removed_ids && i < total; i++)
        removed_ids[i] = all[i];
    if (total > 0) {
        st = renumber(d, all, total, keep, keep_ids, m);
        d->n_global -= total;
        *removed = total;
        if (st == PBFCL_OK) /* the bodies' map: the slots moved */
            st = dist_bodies_mark(d, pbfcl_sim_count(d->sim));
    }
    free(gone);
    free(keep);
    free(keep_ids);
    free(all);
    return total > 0 ? check_total(d, st, "draining") : st;
}
