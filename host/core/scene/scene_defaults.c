/* The defaults of a scene: gravity, rest density, particle radius, an empty unit box, and the
 * solver settings of the parameter list (the values the physics tests validate). */
#include "scene/scene.h"

#include <string.h>

void pbfcl_scene_defaults(pbfcl_scene *s)
{
    memset(s, 0, sizeof *s);
    strcpy(s->name, "default");
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = 0.0f;
        s->domain_max[a] = 1.0f;
    }
    s->gravity[1] = -9.81f;
    s->particle_radius = 0.01f; /* m; particles are spaced 2r */
    s->rest_density = 1000.0f;  /* kg/m^3, water */
    s->fluid_count = 0;
    pbfcl_solver_params_defaults(&s->solver); /* PBFCL_SOLVER_PARAM_LIST, include/pbfcl.h */
}
