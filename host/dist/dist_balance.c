/* Rebalancing: when the most particles a rank owns drifts past a threshold times the mean, the
 * cuts are planned anew at the quantiles of the whole simulation's distribution along the split
 * axis (a histogram of every rank's coordinates, binned on its device and summed by
 * MPI_Allreduce), checked against each rank's room, and written to the device exchange's
 * bounds; the frame's first migration then sends every particle whose owner changed to its new
 * rank, through the usual path (records, ids and all). */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bins of the histogram: 128 KB reduced per plan; a cut lands within 1/BINS of the particles'
 * extent of its quantile. */
#define BINS 16384
/* Frames before a plan refused for want of room is tried again. */
#define REFUSED_WAIT 10

pbfcl_status pbfcl_dist_set_rebalance(pbfcl_dist *d, double threshold)
{
    if (threshold != 0.0 &&
        !(threshold >= PBFCL_DIST_REBALANCE_MIN && threshold <= PBFCL_DIST_REBALANCE_MAX)) {
        pbfcl_errorf("rebalance threshold %g is out of range: give 0 (off) or %g to %g (the most "
                     "particles a rank may own before the slabs are planned anew, as a multiple "
                     "of the mean)",
                     threshold, PBFCL_DIST_REBALANCE_MIN, PBFCL_DIST_REBALANCE_MAX);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    d->balance.threshold = threshold;
    return PBFCL_OK;
}

const pbfcl_dist_balance *pbfcl_dist_balance_of(const pbfcl_dist *d)
{
    return &d->balance;
}

/* The histogram over [lo, lo + BINS * width) (the outermost bins take what lies beyond). */
typedef struct histogram {
    double lo, width;
    unsigned long long count[BINS];
} histogram;

static int bin_of(const histogram *g, double c)
{
    double b = floor((c - g->lo) / g->width);
    return b < 0 ? 0 : b >= BINS ? BINS - 1 : (int)b;
}

/* The particles below the edge of bin b (its lower edge; BINS: all). */
static unsigned long long below_edge(const unsigned long long *cum, int b)
{
    return cum[b < 0 ? 0 : b > BINS ? BINS : b];
}

/* Every rank's coordinates along the axis binned on its device (exchange_histogram: only the
 * extent and the bins reach the host) and summed over the ranks. */
static pbfcl_status reduce_histogram(pbfcl_dist *d, histogram *g)
{
    size_t m = pbfcl_sim_count(d->sim);
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    cl_uint *mine = malloc(BINS * sizeof *mine);
    unsigned long long *wide = calloc(BINS, sizeof *wide);
    float lo = INFINITY, hi = -INFINITY;
    pbfcl_status st = mine && wide ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_exchange_extent(&d->xchg, v.pos_buf, m, &lo, &hi);
    double ext[2] = {-(double)lo, hi};    /* the largest -c and c: -lo and hi */
    int failed = st != PBFCL_OK, any = 0; /* the collectives go on: a failure ends every rank */
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, d->comm);
    double all[2];
    MPI_Allreduce(ext, all, 2, MPI_DOUBLE, MPI_MAX, d->comm);
    g->lo = -all[0];
    g->width = (all[1] - g->lo) / BINS;
    if (!(g->width > 0))
        g->width = 1e-6; /* every particle at one coordinate */
    if (!any)            /* the bins of float (c - lo) * (1 / width), as the host's double bin_of */
        st = pbfcl_exchange_histogram(&d->xchg, v.pos_buf, m, (float)g->lo, (float)(1.0 / g->width),
                                      BINS, mine);
    for (size_t b = 0; st == PBFCL_OK && b < BINS; b++)
        wide[b] = mine[b];
    failed = st != PBFCL_OK;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, d->comm);
    memset(g->count, 0, sizeof g->count);
    MPI_Allreduce(wide ? (void *)wide : MPI_IN_PLACE, g->count, BINS, MPI_UNSIGNED_LONG_LONG,
                  MPI_SUM, d->comm);
    free(mine);
    free(wide);
    return any ? (st != PBFCL_OK ? st : PBFCL_ERR_SIMULATION) : PBFCL_OK;
}

/* Cuts at the bin edges nearest the quantiles k/K of the histogram (edges[r]: the cut's
 * bin edge; a bin's particles stay together: a layer of particles at one coordinate cannot be
 * split by a cut along the axis); an inner slab thinner than h is widened from the left (the
 * last slab reaches the wall, so it always fits). */
static void plan_cuts(const histogram *g, const unsigned long long *cum, size_t n, int ranks,
                      double h, double *cuts, int *edges)
{
    cuts[0] = -INFINITY;
    cuts[ranks] = INFINITY;
    edges[0] = 0;
    edges[ranks] = BINS;
    int e = 0;
    for (int r = 1; r < ranks; r++) {
        double target = (double)n * r / ranks;
        while (e < BINS && (double)cum[e] < target)
            e++;
        if (e > 0 && target - (double)cum[e - 1] < (double)cum[e] - target)
            e--; /* the nearer edge */
        cuts[r] = g->lo + e * g->width;
        edges[r] = e;
        if (r >= 2 && cuts[r] < cuts[r - 1] + h) {
            cuts[r] = cuts[r - 1] + h;
            edges[r] = bin_of(g, cuts[r]);
        }
    }
}

/* The layout's bounds to the device exchange, which classifies the next migration by them. */
static pbfcl_status write_bounds(pbfcl_dist *d)
{
    size_t bytes = 3 * (size_t)d->size * sizeof(float);
    float *b = malloc(bytes);
    if (!b)
        return PBFCL_ERR_OUT_OF_MEMORY;
    dist_device_bounds(d, b);
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    cl_int err =
        clEnqueueWriteBuffer(v.cl->queue, d->xchg.bounds_buf, CL_TRUE, 0, bytes, b, 0, NULL, NULL);
    free(b);
    PBFCL_CL_CHECK(err);
    return PBFCL_OK;
}

/* Plans the cuts from the whole distribution; writes them if every rank has room for its
 * particles and ghosts under them (each rank checks its own), else warns and keeps the slabs. */
static pbfcl_status rebalance(pbfcl_dist *d, unsigned long long most)
{
    histogram *g = malloc(sizeof *g);
    unsigned long long *cum = malloc((BINS + 1) * sizeof *cum);
    double *cuts = malloc((size_t)(d->size + 1) * sizeof *cuts);
    int oom = !g || !cum || !cuts, any = 0;
    MPI_Allreduce(&oom, &any, 1, MPI_INT, MPI_MAX, d->comm);
    pbfcl_status st = any ? PBFCL_ERR_OUT_OF_MEMORY : reduce_histogram(d, g);
    if (st != PBFCL_OK) {
        free(g), free(cum), free(cuts);
        return st;
    }
    cum[0] = 0;
    for (int b = 0; b < BINS; b++)
        cum[b + 1] = cum[b] + g->count[b];
    double h = pbfcl_sim_params(d->sim)->h * 1.000001; /* inner slabs at least h wide */
    int *edges = malloc((size_t)(d->size + 1) * sizeof *edges);
    if (!edges)
        pbfcl_dist_abort(d->comm, 1, "out of host memory for the rebalancing's plan");
    plan_cuts(g, cum, d->n_global, d->size, h, cuts, edges);
    unsigned long long planned = 0; /* the most any rank owns under the cuts */
    for (int r = 0; r < d->size; r++)
        if (below_edge(cum, edges[r + 1]) - below_edge(cum, edges[r]) > planned)
            planned = below_edge(cum, edges[r + 1]) - below_edge(cum, edges[r]);
    free(edges);
    /* this rank's particles and ghosts: every bin reaching within the halo of its slab */
    int lo = cuts[d->rank] == -INFINITY ? 0 : bin_of(g, cuts[d->rank] - d->halo);
    int hi = cuts[d->rank + 1] == INFINITY ? BINS - 1 : bin_of(g, cuts[d->rank + 1] + d->halo);
    unsigned long long need = cum[hi + 1] - cum[lo], room = pbfcl_sim_capacity(d->sim);
    int short_of_room = need > room, refused = 0;
    MPI_Allreduce(&short_of_room, &refused, 1, MPI_INT, MPI_MAX, d->comm);
    d->balance.before_max = most;
    if (refused) {
        if (short_of_room)
            pbfcl_warnf("rank %d: rebalancing refused: under the new cuts it would hold about "
                        "%llu particles and ghosts, beyond its room for %llu (--rank-capacity); "
                        "the slabs stay as they are (tried again in %d frames): give a larger "
                        "--rank-capacity, or leave it out",
                        d->rank, need, room, REFUSED_WAIT);
        d->balance.refusals++;
        d->balance_wait = REFUSED_WAIT;
    } else if (planned >= most) { /* the slabs at the best cuts are no better */
        d->balance_wait = REFUSED_WAIT;
    } else {
        /* a threshold the slabs cannot meet (a layer of particles holds more than its share):
         * the best cuts now, and no new plan for a while */
        if ((double)planned > d->balance.threshold * (double)d->n_global / d->size)
            d->balance_wait = REFUSED_WAIT;
        memcpy(d->layout.cuts, cuts, (size_t)(d->size + 1) * sizeof *cuts);
        d->balance.rebalances++;
        d->balance.planned_max = planned;
        d->balance.last_frame = d->balance.frame;
        st = write_bounds(d);
    }
    free(g), free(cum), free(cuts);
    return st;
}

pbfcl_status dist_rebalance_due(pbfcl_dist *d)
{
    d->balance.frame++;
    if (d->balance.threshold == 0.0 || d->size < 2)
        return PBFCL_OK;
    if (d->balance_wait > 0) {
        d->balance_wait--;
        return PBFCL_OK;
    }
    unsigned long long mine = pbfcl_sim_count(d->sim), most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, d->comm);
    d->balance.checks++;
    double mean = (double)d->n_global / d->size;
    if ((double)most <= d->balance.threshold * mean)
        return PBFCL_OK;
    return rebalance(d, most);
}
