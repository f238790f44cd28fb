/* A split simulation's saved state, the same whatever the rank count: gathered on rank 0 by id
 * into the sections one device's pbfcl_sim_state_save writes (the particles in id order, the
 * substep bounds reduced over the ranks), and loaded on any number of ranks by loading the
 * whole state on each, planning slabs from its positions and keeping each rank's own. */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"
#include "solver_methods.h"

#include <stdlib.h>
#include <string.h>

void pbfcl_dist_state_free(pbfcl_dist_state *s)
{
    free(s->records);
    memset(s, 0, sizeof *s);
}

/* On rank 0: the got records (with their ids) placed by id into s->records; fails naming an id
 * held twice or by no rank. */
static pbfcl_status place_records(pbfcl_dist *d, size_t got, const unsigned *ids,
                                  const unsigned char *recs, pbfcl_dist_state *s)
{
    size_t n = d->n_global, rec = d->record;
    unsigned char *seen = calloc(n + 1, 1);
    if (!seen || !(s->records = malloc(n * rec + 16))) {
        free(seen);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    pbfcl_status st = PBFCL_OK;
    for (size_t k = 0; st == PBFCL_OK && k < got; k++) {
        if (ids[k] >= n || seen[ids[k]]) {
            pbfcl_errorf("checkpoint: particle id %u is held by two ranks (or is no id of the %zu)",
                         ids[k], n);
            st = PBFCL_ERR_SIMULATION;
            break;
        }
        seen[ids[k]] = 1;
        memcpy(s->records + (size_t)ids[k] * rec, recs + k * rec, rec);
    }
    for (size_t id = 0; st == PBFCL_OK && id < n; id++)
        if (!seen[id]) {
            pbfcl_errorf("checkpoint: particle id %zu is held by no rank: it was lost", id);
            st = PBFCL_ERR_SIMULATION;
        }
    free(seen);
    return st;
}

/* This rank's records and ids (every owned particle), and the maxima of the bounds on rank 0. */
static void read_mine(pbfcl_dist *d, size_t n, unsigned char *recs, unsigned *ids,
                      pbfcl_dist_state *s)
{
    unsigned *slots = malloc(n * 4 + 4);
    float b[3] = {0, 0, 0};
    for (size_t i = 0; slots && i < n; i++)
        slots[i] = (unsigned)i;
    if (!slots || !recs || !ids || dist_records_read(d, slots, n, recs) != PBFCL_OK ||
        (n > 0 && pbfcl_sim_read_ids(d->sim, ids) != PBFCL_OK) ||
        pbfcl_sim_bounds(d->sim, b) != PBFCL_OK)
        pbfcl_dist_abort(d->comm, 1, "reading the particles for a checkpoint failed (see above)");
    free(slots);
    MPI_Reduce(b, s->bounds, 3, MPI_FLOAT, MPI_MAX, 0, d->comm);
}

pbfcl_status pbfcl_dist_state_gather(pbfcl_dist *d, pbfcl_dist_state *s)
{
    memset(s, 0, sizeof *s);
    s->n = d->n_global;
    size_t n = pbfcl_sim_count(d->sim), rec = d->record, got = 0;
    int mine = (int)n;
    MPI_Gather(&mine, 1, MPI_INT, d->rcounts, 1, MPI_INT, 0, d->comm);
    unsigned char *recs = malloc(n * rec + 16), *all_recs = NULL;
    unsigned *ids = malloc(n * 4 + 4), *all_ids = NULL;
    read_mine(d, n, recs, ids, s);
    if (d->rank == 0) {
        for (int r = 0; r < d->size; r++) {
            d->rdispls[r] = (int)got;
            got += (size_t)d->rcounts[r];
        }
        all_recs = malloc(got * rec + 16);
        all_ids = malloc(got * 4 + 4);
        if (!all_recs || !all_ids)
            pbfcl_dist_abort(d->comm, 1, "out of host memory for the checkpoint's particles");
    }
    MPI_Datatype t;
    MPI_Type_contiguous((int)rec, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    MPI_Gatherv(ids, mine, MPI_UNSIGNED, all_ids, d->rcounts, d->rdispls, MPI_UNSIGNED, 0, d->comm);
    MPI_Gatherv(recs, mine, t, all_recs, d->rcounts, d->rdispls, t, 0, d->comm);
    MPI_Type_free(&t);
    pbfcl_status st = d->rank == 0 ? place_records(d, got, all_ids, all_recs, s) : PBFCL_OK;
    int code = (int)st; /* rank 0's verdict for every rank */
    MPI_Bcast(&code, 1, MPI_INT, 0, d->comm);
    free(recs);
    free(ids);
    free(all_recs);
    free(all_ids);
    if (code != PBFCL_OK)
        pbfcl_dist_state_free(s);
    return (pbfcl_status)code;
}

/* The sections of rank 0's own state with the whole simulation's in place of its particles'
 * and bounds. */
typedef struct state_writer {
    pbfcl_dist *d;
    const pbfcl_dist_state *s;
    pbfcl_state_put put;
    void *ctx;
} state_writer;

static pbfcl_status put_whole(void *ctx, const char *name, const void *data, size_t bytes)
{
    state_writer *w = ctx;
    size_t at = 0, elem, n = w->s->n, rec = w->d->record;
    cl_mem buf;
    const char *row;
    for (size_t r = 0; pbfcl_sim_record_row(w->d->sim, r, &buf, &elem, &row); r++, at += elem) {
        if (strcmp(row, name) != 0)
            continue;
        unsigned char *col = malloc(n * elem + 16);
        if (!col)
            return PBFCL_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; i < n; i++)
            memcpy(col + i * elem, w->s->records + i * rec + at, elem);
        pbfcl_status st = w->put(w->ctx, name, col, n * elem);
        free(col);
        return st;
    }
    if (!strcmp(name, "substep_bounds") && bytes == sizeof w->s->bounds)
        return w->put(w->ctx, name, w->s->bounds, bytes); /* float bits, as the device's */
    return w->put(w->ctx, name, data, bytes);
}

pbfcl_status pbfcl_dist_state_save(pbfcl_dist *d, const pbfcl_dist_state *s, pbfcl_state_put put,
                                   void *ctx)
{
    state_writer w = {d, s, put, ctx};
    return pbfcl_sim_state_save(d->sim, put_whole, &w);
}

/* The whole saved state on this rank's device, then only its slab's particles. */
static pbfcl_status load_local(pbfcl_dist *d, pbfcl_cl *cl, const pbfcl_scene *scene,
                               pbfcl_state_get get, void *ctx)
{
    PBFCL_TRY(pbfcl_dist_check_scene(scene));
    size_t n = d->n_global, m = 0;
    float *pos = calloc(3 * n + 3, sizeof *pos), *by_id = malloc((3 * n + 3) * sizeof *by_id);
    unsigned *ids = malloc(4 * n + 4), *keep = malloc(4 * n + 4), *keep_ids = malloc(4 * n + 4);
    pbfcl_status st = pos && by_id && ids && keep && keep_ids ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_sim_create_capacity(&d->sim, cl, scene, n, pos, 0);
    if (st == PBFCL_OK) /* room for the saved particles, as the API's load makes it */
        st = pbfcl_sim_append(d->sim, pos, NULL, n);
    if (st == PBFCL_OK)
        st = pbfcl_sim_state_load(d->sim, get, ctx);
    if (st == PBFCL_OK)
        st = pbfcl_sim_read(d->sim, pos, NULL, NULL);
    if (st == PBFCL_OK)
        st = pbfcl_sim_read_ids(d->sim, ids);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        if (ids[i] >= n) {
            pbfcl_errorf("the saved state gives particle %zu the id %u; ids run to %zu", i, ids[i],
                         n - 1);
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else
            memcpy(by_id + 3 * (size_t)ids[i], pos + 3 * i, 3 * sizeof *pos);
    }
    pbfcl_dist_layout l = {0, 0, NULL};
    if (st == PBFCL_OK) /* the same on every rank: the same bytes were loaded */
        st = pbfcl_dist_plan(scene, pbfcl_sim_params(d->sim)->h, by_id, n, d->size, &l);
    if (st == PBFCL_OK)
        st = dist_setup_layout(d, &l);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (dist_owner(d, pos[3 * i + d->layout.axis]) == d->rank) {
            keep[m] = (unsigned)i;
            keep_ids[m++] = ids[i];
        }
    if (st == PBFCL_OK && m < n)
        st = pbfcl_sim_compact(d->sim, keep, m, keep_ids);
    if (st == PBFCL_OK)
        st = dist_finish_local(d);
    free(l.cuts);
    free(pos);
    free(by_id);
    free(ids);
    free(keep);
    free(keep_ids);
    return st;
}

pbfcl_status pbfcl_dist_create_loaded(pbfcl_dist **out, MPI_Comm comm, pbfcl_cl *cl,
                                      const pbfcl_scene *scene, size_t n, pbfcl_state_get get,
                                      void *ctx)
{
    *out = NULL;
    pbfcl_dist *d = dist_alloc(comm, n);
    if (!d)
        return PBFCL_ERR_OUT_OF_MEMORY;
    return dist_agree(out, d, load_local(d, cl, scene, get, ctx));
}

const pbfcl_dist_layout *pbfcl_dist_layout_of(const pbfcl_dist *d)
{
    return &d->layout;
}
