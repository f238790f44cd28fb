/* The obstacles of a scene: the checks of their shapes and of their sampling on the particle
 * lattice (each holds a particle, none shares one with a body). Their particles are static
 * (PBFCL_PHASE_STATIC): boundary particles of infinite mass. */
#include "scene.h"

#include <stdio.h>
#include <stdlib.h>

/* The obstacle's key: "obstacles[i].box", ".mesh", or "obstacles[i]" (+ ".sphere", ".capsule"). */
static void obstacle_key(int i, const pbfcl_fluid_shape *f, char *key, size_t size)
{
    snprintf(key, size, "obstacles[%d]%s", i,
             f->kind == PBFCL_SHAPE_BOX    ? ".box"
             : f->kind == PBFCL_SHAPE_MESH ? ".mesh"
                                           : "");
}

bool pbfcl_scene_check_obstacles(const pbfcl_scene *s)
{
    if (s->obstacle_count < 0 || s->obstacle_count > PBFCL_MAX_OBSTACLES) {
        pbfcl_errorf("scene '%s': the scene may have 0 to %d obstacles (has %d)", s->name,
                     PBFCL_MAX_OBSTACLES, s->obstacle_count);
        return false;
    }
    if (s->obstacle_count > 0 && s->solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("scene '%s': obstacles need solver.method pbf (the scene sets %s); remove "
                     "\"obstacles\" or the method",
                     s->name, pbfcl_method_name(s->solver.method));
        return false;
    }
    for (int i = 0; i < s->obstacle_count; i++) {
        char key[48];
        obstacle_key(i, &s->obstacles[i], key, sizeof key);
        if (!pbfcl_scene_check_shape(s, key, &s->obstacles[i]))
            return false;
    }
    return true;
}

bool pbfcl_scene_check_obstacle_sampling(const pbfcl_scene *s)
{
    double tol = 1e-4 * 2.0 * s->particle_radius;
    for (int i = 0; i < s->obstacle_count; i++) {
        size_t n = pbfcl_scene_obstacle_walk(s, i, NULL);
        if (n == 0) {
            pbfcl_errorf("scene '%s': obstacles[%d] holds no particle at particle_radius %g m "
                         "(or only ones of earlier obstacles); make it larger or the particles "
                         "smaller",
                         s->name, i, s->particle_radius);
            return false;
        }
        float *p = malloc(n * 3 * sizeof *p);
        if (!p) {
            pbfcl_errorf("out of host memory for obstacle %d's %zu particles", i, n);
            return false;
        }
        pbfcl_scene_obstacle_walk(s, i, p);
        for (size_t e = 0; e < n; e++) {
            double q[3] = {p[3 * e], p[3 * e + 1], p[3 * e + 2]};
            for (int b = 0; b < s->body_count; b++)
                if (pbfcl_scene_inside(s, &s->bodies[b].shape, q, tol)) {
                    pbfcl_errorf("scene '%s': obstacles[%d] overlaps bodies[%d] (both hold the "
                                 "particle at %g, %g, %g); move them apart or make them smaller",
                                 s->name, i, b, q[0], q[1], q[2]);
                    free(p);
                    return false;
                }
        }
        free(p);
    }
    return true;
}
