/* The public API of the diffuse particles (spray, foam and bubbles): turning them on and off,
 * reading them, and the stage that pbfcl_solver_step runs after the fluid's step while they are
 * on (host/core/diffuse.c). */
#include "api_internal.h"
#include "diffuse/diffuse.h"
#include "sim/sim.h"
#include "sim/solver_method.h"

#include <stdlib.h>

void pbfcl_api_diffuse_free(pbfcl_api_diffuse *a)
{
    if (a->set) {
        pbfcl_diffuse_destroy(a->set);
        free(a->set);
    }
    a->set = NULL;
    a->frame = 0;
}

pbfcl_status pbfcl_api_diffuse_step(pbfcl_api_diffuse *a, pbfcl_sim *sim, const pbfcl_scene *scene,
                                    pbfcl_profile *prof)
{
    if (!a->set)
        return PBFCL_OK;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    float g[3] = {v.gravity.s[0], v.gravity.s[1], v.gravity.s[2]};
    pbfcl_diffuse_params_from_scene(scene, scene->solver.dt, g, a->frame++, a->set->capacity,
                                    &a->set->params);
    pbfcl_diffuse_fluid f = {
        .n = v.n,
        .pos_buf = v.pos_buf,
        .vel_buf = v.vel_buf,
        .neighbor_count_buf = v.grid->neighbor_count_buf,
        .neighbor_buf = v.grid->neighbor_buf,
        .grid_params_buf = v.grid->params_buf,
        .cell_start_buf = v.grid->cell_start_buf,
        .cell_end_buf = v.grid->cell_end_buf,
    };
    return pbfcl_diffuse_update(a->set, &f, prof);
}

pbfcl_status pbfcl_solver_set_diffuse(pbfcl_solver *s, size_t capacity)
{
    pbfcl_sim *sim;
    const pbfcl_scene *scene;
    pbfcl_api_diffuse *a = pbfcl_api_solver_diffuse("pbfcl_solver_set_diffuse", s, &sim, &scene);
    if (!a)
        return PBFCL_ERR_INVALID_HANDLE;
    pbfcl_api_diffuse_free(a);
    if (capacity == 0)
        return PBFCL_OK;
    pbfcl_diffuse *d = calloc(1, sizeof *d);
    if (!d) {
        pbfcl_errorf("pbfcl_solver_set_diffuse: out of host memory");
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    pbfcl_status st = pbfcl_diffuse_create(d, v.cl, capacity, pbfcl_sim_capacity(sim));
    if (st != PBFCL_OK) {
        free(d);
        return st;
    }
    a->set = d;
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_diffuse_count(const pbfcl_solver *s, size_t *count,
                                        unsigned long long *dropped)
{
    pbfcl_sim *sim;
    const pbfcl_scene *scene;
    pbfcl_api_diffuse *a = pbfcl_api_solver_diffuse("pbfcl_solver_diffuse_count", s, &sim, &scene);
    if (!a)
        return PBFCL_ERR_INVALID_HANDLE;
    if (count)
        *count = a->set ? a->set->count : 0;
    if (dropped)
        *dropped = a->set ? a->set->dropped : 0;
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_get_diffuse(pbfcl_solver *s, float *pos4, float *vel4, size_t count)
{
    pbfcl_sim *sim;
    const pbfcl_scene *scene;
    pbfcl_api_diffuse *a = pbfcl_api_solver_diffuse("pbfcl_solver_get_diffuse", s, &sim, &scene);
    if (!a)
        return PBFCL_ERR_INVALID_HANDLE;
    size_t have = a->set ? a->set->count : 0;
    if (count != have) {
        pbfcl_errorf("pbfcl_solver_get_diffuse: count is %zu but the solver has %zu diffuse "
                     "particles (pbfcl_solver_diffuse_count)",
                     count, have);
        return PBFCL_ERR_BUFFER_SIZE;
    }
    return have ? pbfcl_diffuse_read(a->set, pos4, vel4) : PBFCL_OK;
}
