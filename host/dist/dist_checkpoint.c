/* Checkpoints of `pbfcl run` split over ranks (docs/DISTRIBUTED.md): one file, the format of one
 * device's (checkpoint.h), gathered by id and written by rank 0 alone once every rank's part is
 * in hand, so that a failing rank never leaves half a checkpoint; read by rank 0 and handed to
 * every rank, which checks the public API's sections as pbfcl_solver_load_state does and loads
 * the whole state before keeping its slab (pbfcl_dist_create_loaded): any rank count resumes a
 * checkpoint of any other, one device's included. */
#include "dist.h"
#include "dist_run.h"

#include "runtime/pbfcl_error.h"
#include "sim/state_check.h"
#include "solver_methods.h"

#include "api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per MPI_Bcast of a checkpoint (an int counts them). */
#define DIST_CHUNK (1u << 30)

/* Rank 0's file into *data (malloc'd) and *size; PBFCL_ERR_IO with a message if unreadable. */
static pbfcl_status read_file(const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    long end = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        end = ftell(f);
    if (!f || end < 0 || fseek(f, 0, SEEK_SET) != 0 || !(*data = malloc((size_t)end + 1)) ||
        fread(*data, 1, (size_t)end, f) != (size_t)end) {
        pbfcl_errorf("cannot read checkpoint '%s'%s", path,
                     f ? "" : ": no such file, or not readable");
        if (f)
            fclose(f);
        return PBFCL_ERR_IO;
    }
    fclose(f);
    *size = (size_t)end;
    return PBFCL_OK;
}

pbfcl_status dist_checkpoint_read(MPI_Comm comm, const char *path, pbfcl_checkpoint **c,
                                  pbfcl_checkpoint_info *info)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    unsigned char *data = NULL;
    size_t size = 0;
    int st = rank == 0 ? (int)read_file(path, &data, &size) : PBFCL_OK;
    unsigned long long bytes = size;
    MPI_Bcast(&st, 1, MPI_INT, 0, comm);
    MPI_Bcast(&bytes, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    if (st == PBFCL_OK && rank != 0 && !(data = malloc((size_t)bytes + 1)))
        pbfcl_dist_abort(comm, 1, "out of host memory for the checkpoint");
    for (size_t at = 0; st == PBFCL_OK && at < bytes; at += DIST_CHUNK) {
        size_t part = bytes - at < DIST_CHUNK ? (size_t)(bytes - at) : DIST_CHUNK;
        MPI_Bcast(data + at, (int)part, MPI_BYTE, 0, comm);
    }
    if (st == PBFCL_OK) /* the same bytes, the same verdict on every rank */
        st = (int)pbfcl_checkpoint_parse(path, data, (size_t)bytes, c, info);
    free(data);
    return (pbfcl_status)st;
}

/* Refuses (naming the checkpoint and what to do) a checkpoint's section that a split run
 * cannot take. */
static pbfcl_status refuse(pbfcl_checkpoint *c, const char *what)
{
    pbfcl_errorf("checkpoint '%s' %s; resume it on one rank (without mpirun, or mpirun -np 1)",
                 pbfcl_checkpoint_path(c), what);
    return PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status dist_checkpoint_check(pbfcl_checkpoint *c, const pbfcl_scene *scene, size_t n)
{
    uint64_t count;
    PBFCL_TRY(pbfcl_checkpoint_section(c, "count", &count, sizeof count));
    if (count != n)
        return refuse(c, "holds another particle count in its state than in its header");
    pbfcl_api_state_params saved, mine;
    memset(&mine, 0, sizeof mine);
    pbfcl_api_params_from_scene(scene, &mine.scene, &mine.solver);
    PBFCL_TRY(pbfcl_checkpoint_section(c, "params", &saved, sizeof saved));
    if (memcmp(&saved, &mine, sizeof mine) != 0)
        return refuse(c, "holds solver parameters that differ from its scene's");
    int *phases = malloc(n * sizeof *phases + 4);
    if (!phases)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = pbfcl_checkpoint_section(c, "particle_phases", phases, n * sizeof *phases);
    bool fluid = true;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        fluid = fluid && pbfcl_sim_phase_upgrade((unsigned)phases[i]) == PBFCL_SIM_PHASE_FLUID;
    free(phases);
    PBFCL_TRY(st);
    if (!fluid)
        return refuse(c, "holds particles of bodies or static ones");
    pbfcl_pbf_params constants;
    PBFCL_TRY(pbfcl_pbf_params_from_scene(scene, &constants));
    pbfcl_state_limits lim = {n,
                              scene->solver.method,
                              {0},
                              {0},
                              &constants,
                              pbfcl_checkpoint_size(c),
                              "the whole checkpoint"};
    memcpy(lim.box_min, scene->domain_min, sizeof lim.box_min);
    memcpy(lim.box_max, scene->domain_max, sizeof lim.box_max);
    PBFCL_TRY(pbfcl_state_check(pbfcl_checkpoint_section, c, &lim)); /* every field */
    unsigned *ids = malloc(n * sizeof *ids + 4), next = 0;
    if (!ids)
        return PBFCL_ERR_OUT_OF_MEMORY;
    st = pbfcl_checkpoint_restore_ids(c, ids, n, n, &next);
    bool identity = st == PBFCL_OK && next == n;
    for (size_t i = 0; identity && i < n; i++)
        identity = ids[i] == i;
    free(ids);
    PBFCL_TRY(st);
    return identity ? PBFCL_OK : refuse(c, "renumbered its particles (emitters or drains)");
}

/* The state's sections as pbfcl_solver_save_state writes them: the public API's, then the
 * simulation's, of the whole simulation gathered on rank 0. */
typedef struct dist_saver {
    pbfcl_dist *d;
    const pbfcl_dist_state *s;
    const pbfcl_scene *scene;
} dist_saver;

static pbfcl_status save_sections(void *ctx, pbfcl_state_write_fn write, void *user)
{
    const dist_saver *v = ctx;
    uint64_t count = v->s->n;
    pbfcl_api_state_params p;
    memset(&p, 0, sizeof p);
    pbfcl_api_params_from_scene(v->scene, &p.scene, &p.solver);
    PBFCL_TRY(write(user, "count", &count, sizeof count));
    PBFCL_TRY(write(user, "params", &p, sizeof p));
    int *phases = malloc(v->s->n * sizeof *phases + 4);
    if (!phases)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < v->s->n; i++) /* a split run is fluid */
        phases[i] = (int)PBFCL_SIM_PHASE_FLUID;
    pbfcl_status st = write(user, "particle_phases", phases, v->s->n * sizeof *phases);
    free(phases);
    PBFCL_TRY(st);
    PBFCL_TRY(pbfcl_dist_state_save(v->d, v->s, write, user));
    pbfcl_api_cloth none; /* a split run has no cloth: no tear limits, as one device's says */
    memset(&none, 0, sizeof none);
    return pbfcl_api_tear_save(&none, write, user);
}

pbfcl_status dist_checkpoint_write(pbfcl_dist *d, MPI_Comm comm, const char *path,
                                   pbfcl_scene_setup *setup, const char *name, long long step,
                                   double time)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    pbfcl_dist_state s;
    PBFCL_TRY(pbfcl_dist_state_gather(d, &s)); /* every rank's part, or no file at all */
    int st = PBFCL_OK;
    if (rank == 0) {
        const pbfcl_scene *scene = pbfcl_api_setup_scene(setup);
        unsigned *ids = malloc(s.n * sizeof *ids + 4);
        for (size_t i = 0; ids && i < s.n; i++)
            ids[i] = (unsigned)i; /* the frames' ids: persistent ids are global */
        pbfcl_scene_params sp;
        pbfcl_solver_params vp;
        pbfcl_api_params_from_scene(scene, &sp, &vp);
        dist_saver v = {d, &s, scene};
        pbfcl_checkpoint_run run = {setup, ids, (unsigned)s.n};
        st = ids ? (int)pbfcl_checkpoint_write_with(path, s.n, &sp, &vp, save_sections, &v, &run,
                                                    name, step, time)
                 : PBFCL_ERR_OUT_OF_MEMORY;
        free(ids);
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, comm);
    pbfcl_dist_state_free(&s);
    return (pbfcl_status)st;
}
