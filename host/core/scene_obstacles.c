/* The obstacles of a scene: the checks of their shapes and of their sampling on the particle
 * lattice (each holds a particle, none shares one with a body). Their particles are static
 * (PBFCL_PHASE_STATIC): boundary particles of infinite mass. */
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char axis_names[3] = {'x', 'y', 'z'};

bool pbfcl_scene_obstacle_moves(const pbfcl_scene *s, int o)
{
    const pbfcl_obstacle_motion *m = &s->obstacle_motion[o];
    for (int k = 0; k < 3; k++)
        if (m->velocity[k] != 0.0f || m->angular_velocity[k] != 0.0f)
            return true;
    return false;
}

void pbfcl_scene_obstacle_center(const pbfcl_scene *s, int o, float c[3])
{
    float lo[3], hi[3];
    pbfcl_scene_shape_bounds(&s->obstacles[o], lo, hi);
    for (int k = 0; k < 3; k++)
        c[k] = 0.5f * (lo[k] + hi[k]);
}

/* Checks that obstacle i's motion values are finite, until is not negative and given only
 * for a moving obstacle (and required for one with a velocity); the norms of its velocity
 * and angular velocity into v and w. */
static bool check_motion_values(const pbfcl_scene *s, int i, double *v, double *w)
{
    const pbfcl_obstacle_motion *m = &s->obstacle_motion[i];
    const char *names[2] = {"velocity", "angular_velocity"};
    const float *vecs[2] = {m->velocity, m->angular_velocity};
    double norm[2] = {0.0, 0.0};
    for (int q = 0; q < 2; q++)
        for (int k = 0; k < 3; k++) {
            if (!isfinite(vecs[q][k])) {
                pbfcl_errorf("scene '%s': obstacles[%d].%s[%d] is not a finite number", s->name, i,
                             names[q], k);
                return false;
            }
            norm[q] += (double)vecs[q][k] * vecs[q][k];
        }
    *v = sqrt(norm[0]);
    *w = sqrt(norm[1]);
    if (!(m->until >= 0.0f) || !isfinite(m->until)) {
        pbfcl_errorf("scene '%s': obstacles[%d].until must be a time above 0 s (got %g)", s->name,
                     i, m->until);
        return false;
    }
    if (m->until > 0.0f && *v == 0.0 && *w == 0.0) {
        pbfcl_errorf("scene '%s': obstacles[%d].until is given but the obstacle does not move; "
                     "give a velocity or an angular_velocity, or remove until",
                     s->name, i);
        return false;
    }
    if (*v > 0.0 && m->until == 0.0f) {
        pbfcl_errorf("scene '%s': obstacles[%d].velocity would carry it out of the domain; give "
                     "obstacles[%d].until, the time in s at which it stops",
                     s->name, i, i);
        return false;
    }
    return true;
}

/* Checks that moving obstacle i stays in the domain and below the blow-up speed: its bounds
 * (turning: the cube around the sphere it turns in) at the start and where it stops. */
static bool check_motion(const pbfcl_scene *s, int i)
{
    double v, w;
    if (!check_motion_values(s, i, &v, &w))
        return false;
    if (v == 0.0 && w == 0.0)
        return true;
    const pbfcl_obstacle_motion *m = &s->obstacle_motion[i];
    float lo[3], hi[3], c[3];
    pbfcl_scene_shape_bounds(&s->obstacles[i], lo, hi);
    pbfcl_scene_obstacle_center(s, i, c);
    double reach = 0.0;
    for (int k = 0; k < 3; k++)
        reach += 0.25 * ((double)hi[k] - lo[k]) * ((double)hi[k] - lo[k]);
    reach = sqrt(reach);
    for (int end = 0; end < 2; end++) {
        double t = end ? m->until : 0.0;
        for (int k = 0; k < 3; k++) {
            double shift = m->velocity[k] * t;
            double a = (w > 0.0 ? c[k] - reach : lo[k]) + shift;
            double b = (w > 0.0 ? c[k] + reach : hi[k]) + shift;
            double tol = 1e-6 * ((double)s->domain_max[k] - s->domain_min[k]);
            if (a < s->domain_min[k] - tol || b > s->domain_max[k] + tol) {
                pbfcl_errorf("scene '%s': obstacles[%d] leaves the domain: at t = %g s %s spans "
                             "%g..%g along %c, outside the domain %g..%g; make it slower, stop it "
                             "sooner (until) or make the domain larger",
                             s->name, i, t, w > 0.0 ? "the sphere it turns in" : "it", a, b,
                             axis_names[k], s->domain_min[k], s->domain_max[k]);
                return false;
            }
        }
    }
    double speed = v + w * reach, limit = pbfcl_scene_max_speed(s);
    if (speed >= limit) {
        pbfcl_errorf("scene '%s': obstacles[%d] moves its particles at up to %g m/s, at or above "
                     "the blow-up limit %g m/s (solver.max_speed); slow it or raise "
                     "solver.max_speed",
                     s->name, i, speed, limit);
        return false;
    }
    return true;
}

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
        if (!pbfcl_scene_check_shape(s, key, &s->obstacles[i]) || !check_motion(s, i))
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
