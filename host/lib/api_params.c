/* The public scene parameters: their defaults (the core's, scene_defaults.c) and the
 * conversion of both parameter structs to and from the core's scene. */
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
    if (solver)
        *solver = in->solver; /* the same struct */
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
    out->solver = *solver;
}

void pbfcl_scene_params_defaults(pbfcl_scene_params *p)
{
    if (!p)
        return;
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    pbfcl_api_params_from_scene(&s, p, NULL);
}
