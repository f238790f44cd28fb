/* Inflatables in the API (pbf/inflatable.h): closed meshes over particles by index that hold a
 * volume of gas, their parameters and what they measured in the last substep. Method pbf only;
 * the core refuses bad meshes and numbers naming the inflatable, the triangle and the fix. */
#include "api_internal.h"
#include "pbf/inflatable.h"
#include "runtime/pbfcl_error.h"
#include "sim/sim.h"

/* The simulation of live solver s running PBF, or NULL (logged as func's). */
static pbfcl_sim *pbf_sim(const char *func, pbfcl_solver *s)
{
    pbfcl_sim *sim;
    size_t n;
    int *phases;
    double fluid_w;
    if (!pbfcl_api_solver_cloth(func, s, &sim, &n, &phases, &fluid_w))
        return NULL;
    if (pbfcl_sim_scene(sim)->solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("%s: inflatables need solver.method pbf; make the solver with it", func);
        return NULL;
    }
    return sim;
}

/* Refuses a count other than the number of inflatables. */
static pbfcl_status check_count(const char *func, pbfcl_sim *sim, size_t count)
{
    size_t have = 0;
    pbfcl_pbf_inflatable_count(sim, &have, NULL);
    if (count == have)
        return PBFCL_OK;
    pbfcl_errorf("%s: count is %zu, but there are %zu inflatables: give "
                 "pbfcl_solver_inflatable_count's number",
                 func, count, have);
    return PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status pbfcl_solver_set_inflatables(pbfcl_solver *s, const unsigned *tri_count,
                                          const unsigned *tri, const float *rest_volume,
                                          const float *pressure, const float *compliance,
                                          size_t count)
{
    const char *f = "pbfcl_solver_set_inflatables";
    pbfcl_sim *sim = pbf_sim(f, s);
    if (!sim)
        return s ? PBFCL_ERR_UNSUPPORTED : PBFCL_ERR_INVALID_HANDLE;
    pbfcl_status st =
        pbfcl_pbf_set_inflatables(sim, count, tri_count, tri, rest_volume, pressure, compliance);
    if (st != PBFCL_OK)
        pbfcl_errorf("%s: the inflatables were refused (above); the old ones stay", f);
    return st;
}

pbfcl_status pbfcl_solver_inflatable_count(pbfcl_solver *s, size_t *count, size_t *triangles)
{
    const char *f = "pbfcl_solver_inflatable_count";
    pbfcl_sim *sim = pbf_sim(f, s);
    if (!sim)
        return s ? PBFCL_ERR_UNSUPPORTED : PBFCL_ERR_INVALID_HANDLE;
    pbfcl_pbf_inflatable_count(sim, count, triangles);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_get_inflatables(pbfcl_solver *s, unsigned *tri_count, unsigned *tri,
                                          float *rest_volume, float *pressure, float *compliance,
                                          size_t count)
{
    const char *f = "pbfcl_solver_get_inflatables";
    pbfcl_sim *sim = pbf_sim(f, s);
    if (!sim)
        return s ? PBFCL_ERR_UNSUPPORTED : PBFCL_ERR_INVALID_HANDLE;
    PBFCL_TRY(check_count(f, sim, count));
    return pbfcl_pbf_get_inflatables(sim, tri_count, tri, rest_volume, pressure, compliance);
}

pbfcl_status pbfcl_solver_get_inflatable_volumes(pbfcl_solver *s, float *volume, float *pressure,
                                                 size_t count)
{
    const char *f = "pbfcl_solver_get_inflatable_volumes";
    pbfcl_sim *sim = pbf_sim(f, s);
    if (!sim)
        return s ? PBFCL_ERR_UNSUPPORTED : PBFCL_ERR_INVALID_HANDLE;
    PBFCL_TRY(check_count(f, sim, count));
    return pbfcl_pbf_read_inflatables(sim, volume, pressure);
}
