/* The particle methods by solver.method (solver_methods.h). */
#include "solver_methods.h"
#include "pbf/pbf.h"
#include "sph/sph.h"

const pbfcl_solver_method *pbfcl_solver_method_of(int method)
{
    return method == PBFCL_METHOD_SPH ? pbfcl_solver_sph() : pbfcl_solver_pbf();
}

pbfcl_status pbfcl_sim_create(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                              const float *positions, size_t n)
{
    return pbfcl_sim_create_capacity(out, cl, scene, n, positions, n);
}

pbfcl_status pbfcl_sim_create_capacity(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                                       size_t capacity, const float *positions, size_t n)
{
    const pbfcl_solver_method *m = pbfcl_solver_method_of(scene->solver.method);
    return pbfcl_sim_create_with(out, cl, scene, m, capacity, positions, n);
}

pbfcl_status pbfcl_pbf_params_from_scene(const pbfcl_scene *scene, pbfcl_pbf_params *p)
{
    return pbfcl_sim_constants(scene, pbfcl_solver_method_of(scene->solver.method), p);
}

pbfcl_status pbfcl_sim_check_scene(const pbfcl_scene *scene, size_t n)
{
    return pbfcl_sim_check_scene_with(scene, pbfcl_solver_method_of(scene->solver.method), n);
}

unsigned long long pbfcl_sim_bytes_needed(const pbfcl_scene *scene, size_t n)
{
    return pbfcl_sim_bytes_needed_with(scene, pbfcl_solver_method_of(scene->solver.method), n);
}
