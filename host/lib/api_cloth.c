/* Cloth and ropes in the API: distance constraints (pbf/distance.h) and solid groups
 * (pbfcl_sim_set_groups) by particle index, each refused input named with its index and the
 * fix, and the triangles a program renders or exports. */
#include "api_internal.h"
#include "pbf/attach.h"
#include "pbf/distance.h"
#include "pbf/wind.h"
#include "pbf/inflatable.h"
#include "runtime/pbfcl_error.h"
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PBFCL_SOLVER_MAX_GROUPS == PBFCL_SIM_MAX_GROUPS, "solid groups");

#define SOLVER(func, s)                                                                            \
    pbfcl_sim *sim;                                                                                \
    size_t n;                                                                                      \
    int *phases;                                                                                   \
    double fluid_w;                                                                                \
    pbfcl_api_cloth *cloth = pbfcl_api_solver_cloth(func, s, &sim, &n, &phases, &fluid_w);         \
    if (!cloth)                                                                                    \
        return PBFCL_ERR_INVALID_HANDLE;                                                           \
    (void)cloth;                                                                                   \
    (void)phases;                                                                                  \
    (void)fluid_w

static pbfcl_status null_arg(const char *func, const char *what)
{
    pbfcl_errorf("%s: %s is NULL; give an array (or count 0)", func, what);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* What is wrong with distance constraint c among n particles, or NULL. */
static const char *distance_fault(const unsigned *pair, const float *rest, const float *compliance,
                                  size_t c, size_t n)
{
    if (pair[2 * c] >= n || pair[2 * c + 1] >= n)
        return "joins a particle beyond the particle count: give indices below it";
    if (pair[2 * c] == pair[2 * c + 1])
        return "joins a particle to itself: give two different particles";
    if (!(rest[c] >= 0.0f) || isinf(rest[c]))
        return "has a rest length that is not a finite number, 0 or above (m)";
    if (!(compliance[c] >= 0.0f) || isinf(compliance[c]))
        return "has a compliance that is not a finite number, 0 or above (m/N; 0 is rigid)";
    return NULL;
}

size_t pbfcl_api_distance_count(pbfcl_sim *sim)
{
    return pbfcl_sim_scene(sim)->solver.method == PBFCL_METHOD_PBF ? pbfcl_pbf_distance_count(sim)
                                                                   : 0;
}

pbfcl_status pbfcl_solver_set_distances(pbfcl_solver *s, const unsigned *pair, const float *rest,
                                        const float *compliance, const unsigned char *tether,
                                        size_t count)
{
    const char *f = "pbfcl_solver_set_distances";
    SOLVER(f, s);
    if (count > 0 && (!pair || !rest || !compliance))
        return null_arg(f, !pair ? "pair" : !rest ? "rest" : "compliance");
    for (size_t c = 0; c < count; c++) {
        const char *fault = distance_fault(pair, rest, compliance, c, n);
        if (fault) {
            pbfcl_errorf("%s: constraint %zu (particles %u and %u of %zu, rest %g, compliance "
                         "%g) %s",
                         f, c, pair[2 * c], pair[2 * c + 1], n, (double)rest[c],
                         (double)compliance[c], fault);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    if (pbfcl_sim_scene(sim)->solver.method != PBFCL_METHOD_PBF) {
        if (count == 0)
            return PBFCL_OK; /* none to remove */
        pbfcl_errorf("%s: distance constraints need solver.method pbf (this solver runs %s); "
                     "create the solver with solver.method pbf",
                     f, pbfcl_method_name(pbfcl_sim_scene(sim)->solver.method));
        return PBFCL_ERR_UNSUPPORTED;
    }
    return pbfcl_pbf_set_distances(sim, count, pair, rest, compliance, tether);
}

pbfcl_status pbfcl_solver_distance_count(pbfcl_solver *s, size_t *count)
{
    SOLVER("pbfcl_solver_distance_count", s);
    if (!count)
        return null_arg("pbfcl_solver_distance_count", "count");
    *count = pbfcl_api_distance_count(sim);
    return PBFCL_OK;
}

/* Refuses a count other than the number of constraints. */
static pbfcl_status check_distance_count(const char *func, pbfcl_sim *sim, size_t count)
{
    size_t have = pbfcl_api_distance_count(sim);
    if (count == have)
        return PBFCL_OK;
    pbfcl_errorf("%s: count is %zu, but there are %zu distance constraints: give "
                 "pbfcl_solver_distance_count's number",
                 func, count, have);
    return PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status pbfcl_solver_get_distances(pbfcl_solver *s, unsigned *pair, float *rest,
                                        float *compliance, unsigned char *tether, size_t count)
{
    const char *f = "pbfcl_solver_get_distances";
    SOLVER(f, s);
    PBFCL_TRY(check_distance_count(f, sim, count));
    return count ? pbfcl_pbf_get_distances(sim, pair, rest, compliance, tether) : PBFCL_OK;
}

pbfcl_status pbfcl_solver_get_distance_forces(pbfcl_solver *s, float *force, size_t count)
{
    const char *f = "pbfcl_solver_get_distance_forces";
    SOLVER(f, s);
    PBFCL_TRY(check_distance_count(f, sim, count));
    if (count && !force)
        return null_arg(f, "force");
    return count ? pbfcl_pbf_read_distance_forces(sim, force) : PBFCL_OK;
}

#define FLUID_PHASE (PBFCL_PHASE_FLAG_FLUID | PBFCL_PHASE_FLAG_SELF_COLLIDE)

/* The phases by index after grouping ids: a group particle not named becomes fluid. */
static void set_group_phases(int *phases, size_t n, const unsigned *ids, const unsigned *group,
                             size_t count)
{
    for (size_t i = 0; i < n; i++)
        if (pbfcl_api_phase_is_group(phases[i]))
            phases[i] = FLUID_PHASE;
    for (size_t k = 0; k < count; k++)
        phases[ids[k]] = PBFCL_PHASE_SOLID_GROUP((int)group[k]);
}

/* What is wrong with group particle k, or NULL; seen marks the particles named before. */
static const char *group_fault(const unsigned *ids, const unsigned *group, const float *inv_mass,
                               size_t k, size_t n, const int *phases, const unsigned char *seen)
{
    if (ids[k] >= n)
        return "is beyond the particle count: give an index below it";
    if (seen[ids[k]])
        return "is named twice: name each particle once";
    if (phases[ids[k]] != FLUID_PHASE && !pbfcl_api_phase_is_group(phases[ids[k]]))
        return "is a body's or static particle: give a fluid particle (pin one by making it "
               "static with pbfcl_solver_set_phases, before the groups)";
    if (group[k] >= PBFCL_SOLVER_MAX_GROUPS)
        return "has a group beyond PBFCL_SOLVER_MAX_GROUPS - 1";
    if (!(inv_mass[k] > 0.0f) || isinf(inv_mass[k]))
        return "has an inverse mass that is not a finite number above 0 (1/kg)";
    return NULL;
}

pbfcl_status pbfcl_solver_set_groups(pbfcl_solver *s, const unsigned *ids, const unsigned *group,
                                     const float *inv_mass, size_t count)
{
    const char *f = "pbfcl_solver_set_groups";
    SOLVER(f, s);
    if (count > 0 && (!ids || !group || !inv_mass))
        return null_arg(f, !ids ? "ids" : !group ? "group" : "inv_mass");
    unsigned char *seen = calloc(n + 1, 1);
    float *w = malloc((count + 1) * sizeof *w);
    pbfcl_status st = seen && w ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; st == PBFCL_OK && k < count; k++) {
        const char *fault = group_fault(ids, group, inv_mass, k, n, phases, seen);
        if (fault) {
            pbfcl_errorf("%s: entry %zu (particle %u, group %u, inverse mass %g 1/kg) %s", f, k,
                         ids[k], group[k], (double)inv_mass[k], fault);
            st = PBFCL_ERR_BAD_ARGUMENT;
            break;
        }
        seen[ids[k]] = 1;
        w[k] = (float)(inv_mass[k] / fluid_w); /* the core's: relative to a fluid particle's */
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_set_groups(sim, count, ids, group, w);
    if (st == PBFCL_OK)
        set_group_phases(phases, n, ids, group, count);
    free(seen);
    free(w);
    return st;
}

pbfcl_status pbfcl_solver_set_self_collide(pbfcl_solver *s, const unsigned char *on, size_t groups)
{
    const char *f = "pbfcl_solver_set_self_collide";
    SOLVER(f, s);
    if (groups > PBFCL_SOLVER_MAX_GROUPS || (groups && !on)) {
        pbfcl_errorf("%s: %s; give up to PBFCL_SOLVER_MAX_GROUPS flags (or count 0: none)", f,
                     groups > PBFCL_SOLVER_MAX_GROUPS ? "too many groups" : "on is NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return pbfcl_sim_set_group_self_collide(sim, groups, on);
}

pbfcl_status pbfcl_solver_set_triangles(pbfcl_solver *s, const unsigned *tri, size_t count)
{
    const char *f = "pbfcl_solver_set_triangles";
    SOLVER(f, s);
    if (count > 0 && !tri)
        return null_arg(f, "tri");
    for (size_t t = 0; t < count; t++) {
        const unsigned *v = tri + 3 * t;
        const char *fault =
            v[0] >= n || v[1] >= n || v[2] >= n
                ? "names a particle beyond the particle count: give indices below it"
            : v[0] == v[1] || v[1] == v[2] || v[0] == v[2]
                ? "is degenerate (a particle named twice): give three different "
                  "particles"
                : NULL;
        if (fault) {
            pbfcl_errorf("%s: triangle %zu (%u %u %u, of %zu particles) %s", f, t, v[0], v[1], v[2],
                         n, fault);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    unsigned *copy = malloc((3 * count + 1) * sizeof *copy);
    if (!copy)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = pbfcl_sim_scene(sim)->solver.method == PBFCL_METHOD_PBF
                          ? pbfcl_pbf_set_triangles(sim, count, tri) /* the wind's */
                          : PBFCL_OK;
    if (st != PBFCL_OK) {
        free(copy);
        return st;
    }
    if (count)
        memcpy(copy, tri, 3 * count * sizeof *copy);
    pbfcl_api_cloth_free(cloth);
    cloth->tri = copy;
    cloth->triangles = count;
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_triangle_count(const pbfcl_solver *s, size_t *count)
{
    SOLVER("pbfcl_solver_triangle_count", s);
    if (!count)
        return null_arg("pbfcl_solver_triangle_count", "count");
    *count = cloth->triangles;
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_get_triangles(const pbfcl_solver *s, unsigned *tri, size_t count)
{
    const char *f = "pbfcl_solver_get_triangles";
    SOLVER(f, s);
    if (count != cloth->triangles) {
        pbfcl_errorf("%s: count is %zu, but there are %zu triangles: give "
                     "pbfcl_solver_triangle_count's number",
                     f, count, cloth->triangles);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (count && !tri)
        return null_arg(f, "tri");
    if (count)
        memcpy(tri, cloth->tri, 3 * count * sizeof *tri);
    return PBFCL_OK;
}

pbfcl_status pbfcl_api_cloth_drop(pbfcl_sim *sim, pbfcl_api_cloth *c)
{
    pbfcl_api_cloth_free(c);
    if (pbfcl_sim_scene(sim)->solver.method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    return pbfcl_pbf_set_triangles(sim, 0, NULL);
}

pbfcl_status pbfcl_api_cloth_loaded(pbfcl_sim *sim, pbfcl_api_cloth *c)
{
    pbfcl_api_cloth_free(c);
    size_t count =
        pbfcl_sim_scene(sim)->solver.method == PBFCL_METHOD_PBF ? pbfcl_pbf_triangle_count(sim) : 0;
    if (count == 0)
        return PBFCL_OK;
    if (!(c->tri = malloc(3 * count * sizeof *c->tri)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_pbf_get_triangles(sim, c->tri);
    c->triangles = count;
    return PBFCL_OK;
}

void pbfcl_api_cloth_free(pbfcl_api_cloth *c)
{
    free(c->tri);
    c->tri = NULL;
    c->triangles = 0;
}

/* The distance constraints renumbered by rank, those with a removed particle dropped. */
static pbfcl_status remap_distances(pbfcl_sim *sim, const unsigned *rank)
{
    size_t count = pbfcl_pbf_distance_count(sim), kept = 0;
    if (count == 0)
        return PBFCL_OK;
    unsigned *pair = malloc(2 * count * sizeof *pair);
    float *rest = malloc(count * sizeof *rest), *comp = malloc(count * sizeof *comp);
    unsigned char *tether = malloc(count);
    pbfcl_status st = pair && rest && comp && tether ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_pbf_get_distances(sim, pair, rest, comp, tether);
    for (size_t c = 0; st == PBFCL_OK && c < count; c++) {
        unsigned a = rank[pair[2 * c]], b = rank[pair[2 * c + 1]];
        if (a == UINT32_MAX || b == UINT32_MAX)
            continue;
        pair[2 * kept] = a;
        pair[2 * kept + 1] = b;
        rest[kept] = rest[c];
        comp[kept] = comp[c];
        tether[kept++] = tether[c];
    }
    if (st == PBFCL_OK)
        st = pbfcl_pbf_set_distances(sim, kept, pair, rest, comp, tether);
    free(pair);
    free(rest);
    free(comp);
    free(tether);
    return st;
}

/* The inflatables renumbered by rank, one with a removed vertex dropped. */
static pbfcl_status remap_inflatables(pbfcl_sim *sim, const unsigned *rank)
{
    size_t count = 0, tris = 0, kept = 0, kept_tris = 0;
    pbfcl_pbf_inflatable_count(sim, &count, &tris);
    if (count == 0)
        return PBFCL_OK;
    unsigned *tc = malloc(count * sizeof *tc), *tri = malloc(3 * tris * sizeof *tri);
    float *rest = malloc(count * sizeof *rest), *pr = malloc(count * sizeof *pr);
    float *comp = malloc(count * sizeof *comp);
    pbfcl_status st = tc && tri && rest && pr && comp ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_pbf_get_inflatables(sim, tc, tri, rest, pr, comp);
    for (size_t k = 0, t0 = 0; st == PBFCL_OK && k < count; t0 += tc[k++]) {
        bool whole = true;
        for (size_t v = 3 * t0; v < 3 * (t0 + tc[k]); v++)
            whole = whole && rank[tri[v]] != UINT32_MAX;
        if (!whole)
            continue;
        for (size_t v = 3 * t0; v < 3 * (t0 + tc[k]); v++)
            tri[3 * kept_tris + (v - 3 * t0)] = rank[tri[v]];
        kept_tris += tc[k];
        tc[kept] = tc[k];
        rest[kept] = rest[k];
        pr[kept] = pr[k];
        comp[kept++] = comp[k];
    }
    if (st == PBFCL_OK)
        st = pbfcl_pbf_set_inflatables(sim, kept, tc, tri, rest, pr, comp);
    free(tc);
    free(tri);
    free(rest);
    free(pr);
    free(comp);
    return st;
}

pbfcl_status pbfcl_api_remap_constraints(pbfcl_sim *sim, const unsigned *rank)
{
    if (pbfcl_sim_scene(sim)->solver.method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    PBFCL_TRY(remap_distances(sim, rank));
    PBFCL_TRY(pbfcl_pbf_attach_remap(sim, rank));
    return remap_inflatables(sim, rank);
}
