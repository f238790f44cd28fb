/* What the API implementation shares with the pbfcl program (not part of the public header):
 * the conversion between the public parameter structs and the core's scene. */
#ifndef PBFCL_API_INTERNAL_H
#define PBFCL_API_INTERNAL_H

#include "pbfcl.h"
#include "scene.h"

/* The public parameters of a core scene. */
void pbfcl_api_params_from_scene(const pbfcl_scene *in, pbfcl_scene_params *scene,
                                 pbfcl_solver_params *solver);

/* A core scene (no fluid shapes, named "api") from the public parameters. */
void pbfcl_api_scene_from_params(const pbfcl_scene_params *scene, const pbfcl_solver_params *solver,
                                 pbfcl_scene *out);

#endif
