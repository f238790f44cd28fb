/* The whole simulation seen from one place: the statistics reduced over every rank, and the
 * particles gathered on rank 0 by id, checking that each id is held exactly once. */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"

#include <stdlib.h>
#include <string.h>

pbfcl_status pbfcl_dist_stats(pbfcl_dist *d, pbfcl_stats *out)
{
    pbfcl_stats s;
    memset(&s, 0, sizeof s);
    double n = (double)pbfcl_sim_count(d->sim);
    if (n > 0 && pbfcl_sim_stats_compute(d->sim, &s) != PBFCL_OK)
        pbfcl_dist_abort(d->comm, 1, "computing the statistics failed (see above)");
    s.substeps = pbfcl_sim_substeps(d->sim); /* the same on every rank */
    /* sums: averages weighted by the particles (fluid only: every particle is fluid) */
    double sum[10] = {s.kinetic_energy,
                      s.density_error_avg * n,
                      s.neighbours_avg * n,
                      s.momentum[0],
                      s.momentum[1],
                      s.momentum[2],
                      n,
                      s.outside,
                      s.nan,
                      s.neighbour_overflow};
    double most[4] = {s.density_error_max, s.max_speed, s.neighbours_max, s.unstable};
    double gsum[10], gmost[4];
    MPI_Allreduce(sum, gsum, 10, MPI_DOUBLE, MPI_SUM, d->comm);
    MPI_Allreduce(most, gmost, 4, MPI_DOUBLE, MPI_MAX, d->comm);
    double all = gsum[6] > 0 ? gsum[6] : 1.0;
    *out = s;
    out->kinetic_energy = gsum[0];
    out->density_error_avg = gsum[1] / all;
    out->neighbours_avg = gsum[2] / all;
    for (int a = 0; a < 3; a++)
        out->momentum[a] = gsum[3 + a];
    out->outside = (unsigned)gsum[7];
    out->nan = (unsigned)gsum[8];
    out->neighbour_overflow = (unsigned)gsum[9];
    out->density_error_max = gmost[0];
    out->max_speed = gmost[1];
    out->neighbours_max = (unsigned)gmost[2];
    out->unstable = (int)gmost[3];
    return PBFCL_OK;
}

/* This rank's particles: ids and (x, v, density) rows of 7 floats. */
static pbfcl_status read_owned(pbfcl_dist *d, size_t n, unsigned *ids, float *rows)
{
    float *pos = malloc(3 * n * sizeof *pos + 12), *vel = malloc(3 * n * sizeof *vel + 12);
    float *rho = malloc(n * sizeof *rho + 4);
    pbfcl_status st =
        pos && vel && rho ? pbfcl_sim_read(d->sim, pos, vel, rho) : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_sim_read_ids(d->sim, ids);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        memcpy(rows + 7 * i, pos + 3 * i, 3 * sizeof(float));
        memcpy(rows + 7 * i + 3, vel + 3 * i, 3 * sizeof(float));
        rows[7 * i + 6] = rho[i];
    }
    free(pos);
    free(vel);
    free(rho);
    return st;
}

/* On rank 0: places the gathered rows by id; fails naming an id held twice or by no rank. */
static pbfcl_status place(pbfcl_dist *d, size_t got, const unsigned *ids, const float *rows,
                          float *pos3, float *vel3, float *density)
{
    size_t n = d->n_global;
    unsigned char *seen = calloc(n + 1, 1);
    if (!seen)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; st == PBFCL_OK && k < got; k++) {
        unsigned id = ids[k];
        if (id >= n || seen[id]) {
            pbfcl_errorf("particle id %u is held by two ranks (or is no id of the %zu)", id, n);
            st = PBFCL_ERR_SIMULATION;
            break;
        }
        seen[id] = 1;
        if (pos3)
            memcpy(pos3 + 3 * (size_t)id, rows + 7 * k, 3 * sizeof(float));
        if (vel3)
            memcpy(vel3 + 3 * (size_t)id, rows + 7 * k + 3, 3 * sizeof(float));
        if (density)
            density[id] = rows[7 * k + 6];
    }
    for (size_t id = 0; st == PBFCL_OK && id < n; id++)
        if (!seen[id]) {
            pbfcl_errorf("particle id %zu is held by no rank: it was lost", id);
            st = PBFCL_ERR_SIMULATION;
        }
    free(seen);
    return st;
}

pbfcl_status pbfcl_dist_gather(pbfcl_dist *d, float *pos3, float *vel3, float *density)
{
    size_t n = pbfcl_sim_count(d->sim);
    int mine = (int)n;
    MPI_Gather(&mine, 1, MPI_INT, d->rcounts, 1, MPI_INT, 0, d->comm);
    unsigned *ids = malloc(n * 4 + 4), *all_ids = NULL;
    float *rows = malloc(n * 28 + 28), *all_rows = NULL;
    if (!ids || !rows || read_owned(d, n, ids, rows) != PBFCL_OK)
        pbfcl_dist_abort(d->comm, 1, "reading the particles failed (see above)");
    pbfcl_status st = PBFCL_OK;
    size_t got = 0;
    if (d->rank == 0) {
        for (int r = 0; r < d->size; r++) {
            d->rdispls[r] = (int)got;
            d->counts[r] = 7 * d->rcounts[r];
            d->displs[r] = 7 * (int)got;
            got += (size_t)d->rcounts[r];
        }
        all_ids = malloc(got * 4 + 4);
        all_rows = malloc(got * 28 + 28);
        if (!all_ids || !all_rows)
            pbfcl_dist_abort(d->comm, 1, "out of host memory for the gathered particles");
    }
    MPI_Gatherv(ids, mine, MPI_UNSIGNED, all_ids, d->rcounts, d->rdispls, MPI_UNSIGNED, 0, d->comm);
    MPI_Gatherv(rows, 7 * mine, MPI_FLOAT, all_rows, d->counts, d->displs, MPI_FLOAT, 0, d->comm);
    if (d->rank == 0 && st == PBFCL_OK)
        st = place(d, got, all_ids, all_rows, pos3, vel3, density);
    int code = (int)st; /* rank 0's verdict for every rank */
    MPI_Bcast(&code, 1, MPI_INT, 0, d->comm);
    free(ids);
    free(rows);
    free(all_ids);
    free(all_rows);
    return st != PBFCL_OK ? st : (pbfcl_status)code;
}
