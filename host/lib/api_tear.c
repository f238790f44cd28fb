/* Tearing of cloth in the API (as FleX's NvFlexExtTearClothMesh): each solid group's limit, and
 * after a step, on the host, the strained edges split by the cloth tearer
 * (scene/cloth_tear.h): the copies added as particles of their source's group, the masses,
 * distance constraints and triangles set anew. */
#include "api_internal.h"
#include "pbf/distance.h"
#include "runtime/pbfcl_error.h"
#include "scene/cloth_tear.h"
#include "sim/sim.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The most vertices split after one step (the rest wait for the next). */
#define TEAR_MAX_SPLITS 64

pbfcl_status pbfcl_solver_set_tearing(pbfcl_solver *s, const float *max_strain, size_t groups)
{
    const char *f = "pbfcl_solver_set_tearing";
    pbfcl_sim *sim;
    size_t n;
    int *phases;
    double fluid_w;
    pbfcl_api_cloth *cloth = pbfcl_api_solver_cloth(f, s, &sim, &n, &phases, &fluid_w);
    if (!cloth)
        return PBFCL_ERR_INVALID_HANDLE;
    if (groups > PBFCL_SOLVER_MAX_GROUPS || (groups && !max_strain)) {
        pbfcl_errorf("%s: %s; give up to PBFCL_SOLVER_MAX_GROUPS limits (or count 0: none)", f,
                     groups ? "max_strain is NULL" : "too many groups");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t g = 0; g < groups; g++)
        if (!(max_strain[g] >= 0.0f) || isinf(max_strain[g])) {
            pbfcl_errorf("%s: group %zu's limit %g is not a finite strain, 0 or above (0: the "
                         "group never tears)",
                         f, g, (double)max_strain[g]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    if (groups && pbfcl_sim_scene(sim)->solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("%s: tearing needs solver.method pbf (cloth)", f);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    float *copy = malloc(groups * sizeof *copy + 1);
    if (!copy)
        return PBFCL_ERR_OUT_OF_MEMORY;
    if (groups)
        memcpy(copy, max_strain, groups * sizeof *copy);
    free(cloth->tear);
    cloth->tear = copy;
    cloth->tear_groups = groups;
    return PBFCL_OK;
}

/* The group of a phase (pbfcl_make_phase's), or -1. */
static long group_of(int phase)
{
    return pbfcl_api_phase_is_group(phase) ? (long)(PBFCL_PHASE_GROUP_STATIC - 1 - phase) : -1;
}

/* The tear tables of the solver's particles, triangles and distance constraints. */
static pbfcl_status read_mesh(pbfcl_solver *s, pbfcl_sim *sim, const pbfcl_api_cloth *cloth,
                              const int *phases, size_t n, pbfcl_tear_mesh *m)
{
    size_t c = pbfcl_api_distance_count(sim), t = cloth->triangles;
    memset(m, 0, sizeof *m);
    m->particles = n;
    m->pos = malloc(3 * n * sizeof *m->pos + 1);
    m->inv_mass = malloc(n * sizeof *m->inv_mass + 1);
    m->max_strain = malloc(n * sizeof *m->max_strain + 1);
    m->source = malloc(n * sizeof *m->source + 1);
    m->triangles = t;
    m->tri = malloc(3 * t * sizeof *m->tri + 1);
    m->constraints = c;
    m->pair = malloc(2 * c * sizeof *m->pair + 1);
    m->rest = malloc(c * sizeof *m->rest + 1);
    m->compliance = malloc(c * sizeof *m->compliance + 1);
    m->tether = malloc(c + 1);
    if (!m->pos || !m->inv_mass || !m->max_strain || !m->source || !m->tri || !m->pair ||
        !m->rest || !m->compliance || !m->tether)
        return PBFCL_ERR_OUT_OF_MEMORY;
    PBFCL_TRY(pbfcl_solver_get_positions(s, m->pos, n));
    PBFCL_TRY(pbfcl_solver_get_inverse_masses(s, m->inv_mass, n));
    for (size_t i = 0; i < n; i++) {
        long g = group_of(phases[i]);
        m->max_strain[i] = g >= 0 && (size_t)g < cloth->tear_groups ? cloth->tear[g] : 0.0f;
        m->source[i] = (unsigned)i;
    }
    if (t)
        memcpy(m->tri, cloth->tri, 3 * t * sizeof *m->tri);
    return c ? pbfcl_pbf_get_distances(sim, m->pair, m->rest, m->compliance, m->tether) : PBFCL_OK;
}

/* The copies n.. of m added (at their sources' places and velocities), every group particle
 * regrouped with m's inverse masses, the constraints and triangles of m set. */
static pbfcl_status write_mesh(pbfcl_solver *s, const pbfcl_tear_mesh *m, const int *phases,
                               size_t n)
{
    size_t k = m->particles - n, all = m->particles, grouped = 0;
    float *vel = malloc(3 * all * sizeof *vel), *w = malloc(all * sizeof *w);
    unsigned *ids = malloc(all * sizeof *ids), *group = malloc(all * sizeof *group);
    pbfcl_status st =
        vel && w && ids && group ? pbfcl_solver_get_velocities(s, vel, n) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = n; i < all; i++)
        memcpy(vel + 3 * i, vel + 3 * m->source[i], 3 * sizeof *vel);
    if (st == PBFCL_OK)
        st = pbfcl_solver_add(s, m->pos + 3 * n, vel + 3 * n, k);
    for (size_t i = 0; st == PBFCL_OK && i < all; i++) {
        long g = group_of(phases[i < n ? i : m->source[i]]);
        if (g < 0)
            continue;
        ids[grouped] = (unsigned)i;
        group[grouped] = (unsigned)g;
        w[grouped++] = m->inv_mass[i];
    }
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_groups(s, ids, group, w, grouped);
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_distances(s, m->pair, m->rest, m->compliance, m->tether,
                                        m->constraints);
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_triangles(s, m->tri, m->triangles);
    free(vel);
    free(w);
    free(ids);
    free(group);
    return st;
}

pbfcl_status pbfcl_api_cloth_tear(pbfcl_solver *s)
{
    pbfcl_sim *sim;
    size_t n, cap = 0;
    int *phases;
    double fluid_w;
    pbfcl_api_cloth *cloth =
        pbfcl_api_solver_cloth("pbfcl_solver_step", s, &sim, &n, &phases, &fluid_w);
    if (!cloth)
        return PBFCL_ERR_INVALID_HANDLE;
    if (cloth->tear_groups == 0 || cloth->triangles == 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_solver_capacity(s, &cap));
    size_t room = cap - n, splits = 0;
    if (room == 0)
        return PBFCL_OK; /* no room for copies: the cloth holds together (documented) */
    pbfcl_tear_mesh m;
    pbfcl_status st = read_mesh(s, sim, cloth, phases, n, &m);
    if (st == PBFCL_OK)
        st = pbfcl_cloth_tear(&m, room < TEAR_MAX_SPLITS ? room : TEAR_MAX_SPLITS, &splits);
    if (st == PBFCL_OK && splits > 0)
        st = write_mesh(s, &m, phases, n);
    pbfcl_tear_mesh_free(&m);
    return st;
}

pbfcl_status pbfcl_api_tear_save(const pbfcl_api_cloth *c, pbfcl_state_write_fn put, void *ctx)
{
    uint64_t count = c->tear_groups;
    PBFCL_TRY(put(ctx, "tear_limits", &count, sizeof count));
    return count ? put(ctx, "tear_limit_values", c->tear, c->tear_groups * sizeof *c->tear)
                 : PBFCL_OK;
}

pbfcl_status pbfcl_api_tear_load(pbfcl_api_cloth *c, pbfcl_state_read_fn get, void *ctx)
{
    uint64_t count;
    PBFCL_TRY(get(ctx, "tear_limits", &count, sizeof count)); /* checked: at most the groups */
    float *tear = malloc((size_t)count * sizeof *tear + 1);
    if (!tear)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st =
        count ? get(ctx, "tear_limit_values", tear, (size_t)count * sizeof *tear) : PBFCL_OK;
    if (st != PBFCL_OK) {
        free(tear);
        return st;
    }
    free(c->tear);
    c->tear = tear;
    c->tear_groups = (size_t)count;
    return PBFCL_OK;
}
