/* The public parameter structs: their defaults (the core's, scene_defaults.c) and their
 * conversion to and from the core's scene. */
#include "api_internal.h"

#include <string.h>

void pbfcl_api_params_from_scene(const pbfcl_scene *in, pbfcl_scene_params *scene,
                                 pbfcl_solver_params *solver)
{
    if (scene) {
        memset(scene, 0, sizeof *scene);
        memcpy(scene->domain_min, in->domain_min, sizeof scene->domain_min);
        memcpy(scene->domain_max, in->domain_max, sizeof scene->domain_max);
        memcpy(scene->gravity, in->gravity, sizeof scene->gravity);
        scene->particle_radius = in->particle_radius;
        scene->rest_density = in->rest_density;
    }
    if (solver) {
        const pbfcl_solver_settings *v = &in->solver;
        *solver = (pbfcl_solver_params){
            .dt = v->dt,
            .substeps = v->substeps,
            .iterations = v->iterations,
            .stabilization_iterations = v->stabilization_iterations,
            .h_ratio = v->h_ratio,
            .relaxation = v->relaxation,
            .scorr_k = v->scorr_k,
            .scorr_n = v->scorr_n,
            .scorr_dq = v->scorr_dq,
            .contact_slop = v->contact_slop,
            .vorticity = v->vorticity,
            .viscosity = v->viscosity,
            .max_speed = v->max_speed,
        };
    }
}

void pbfcl_api_scene_from_params(const pbfcl_scene_params *scene, const pbfcl_solver_params *solver,
                                 pbfcl_scene *out)
{
    pbfcl_scene_defaults(out);
    strcpy(out->name, "api");
    memcpy(out->domain_min, scene->domain_min, sizeof out->domain_min);
    memcpy(out->domain_max, scene->domain_max, sizeof out->domain_max);
    memcpy(out->gravity, scene->gravity, sizeof out->gravity);
    out->particle_radius = scene->particle_radius;
    out->rest_density = scene->rest_density;
    out->solver = (pbfcl_solver_settings){
        .dt = solver->dt,
        .substeps = solver->substeps,
        .iterations = solver->iterations,
        .stabilization_iterations = solver->stabilization_iterations,
        .h_ratio = solver->h_ratio,
        .relaxation = solver->relaxation,
        .scorr_k = solver->scorr_k,
        .scorr_n = solver->scorr_n,
        .scorr_dq = solver->scorr_dq,
        .contact_slop = solver->contact_slop,
        .vorticity = solver->vorticity,
        .viscosity = solver->viscosity,
        .max_speed = solver->max_speed,
    };
}

void pbfcl_scene_params_defaults(pbfcl_scene_params *p)
{
    if (!p)
        return;
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    pbfcl_api_params_from_scene(&s, p, NULL);
}

void pbfcl_solver_params_defaults(pbfcl_solver_params *p)
{
    if (!p)
        return;
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    pbfcl_api_params_from_scene(&s, NULL, p);
}
