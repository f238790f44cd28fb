/* The bodies of a scene: the checks of their shapes, densities, stiffnesses and velocities,
 * of their sampling on the particle lattice (enough particles, none shared by two bodies),
 * and the phase of each particle the fill makes. */
#include "scene/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The body's shape as its key names it: "bodies[i].box", ".mesh" or "bodies[i]" (+ ".sphere...").
 */
static void shape_key(int i, const pbfcl_body_shape *b, char *key, size_t size)
{
    snprintf(key, size, "bodies[%d]%s", i,
             b->shape.kind == PBFCL_SHAPE_BOX    ? ".box"
             : b->shape.kind == PBFCL_SHAPE_MESH ? ".mesh"
                                                 : "");
}

static bool check_body(const pbfcl_scene *s, int i)
{
    const pbfcl_body_shape *b = &s->bodies[i];
    char key[48];
    shape_key(i, b, key, sizeof key);
    if (!pbfcl_scene_check_shape(s, key, &b->shape))
        return false;
    if (!(b->density >= PBFCL_BODY_DENSITY_MIN && b->density <= PBFCL_BODY_DENSITY_MAX)) {
        pbfcl_errorf("scene '%s': bodies[%d].density must be from %g to %g kg/m^3 (got %g)",
                     s->name, i, PBFCL_BODY_DENSITY_MIN, PBFCL_BODY_DENSITY_MAX, b->density);
        return false;
    }
    if (!(b->stiffness > 0.0f && b->stiffness <= 1.0f)) {
        pbfcl_errorf("scene '%s': bodies[%d].stiffness must be above 0 and at most 1 (1: rigid, "
                     "below 1: soft; got %g)",
                     s->name, i, b->stiffness);
        return false;
    }
    double v2 = 0.0, limit = pbfcl_scene_max_speed(s);
    for (int k = 0; k < 3; k++) {
        if (!isfinite(b->velocity[k])) {
            pbfcl_errorf("scene '%s': bodies[%d].velocity[%d] is not a finite number", s->name, i,
                         k);
            return false;
        }
        v2 += (double)b->velocity[k] * b->velocity[k];
    }
    if (sqrt(v2) >= limit) {
        pbfcl_errorf("scene '%s': bodies[%d].velocity is %g m/s, at or above the blow-up limit "
                     "%g m/s (solver.max_speed); give a slower body or raise solver.max_speed",
                     s->name, i, sqrt(v2), limit);
        return false;
    }
    return true;
}

bool pbfcl_scene_check_bodies(const pbfcl_scene *s)
{
    if (s->body_count < 0 || s->body_count > PBFCL_MAX_BODIES) {
        pbfcl_errorf("scene '%s': the scene may have 0 to %d bodies (has %d)", s->name,
                     PBFCL_MAX_BODIES, s->body_count);
        return false;
    }
    if (s->body_count > 0 && s->solver.method != PBFCL_METHOD_PBF) { /* shape matching is pbf's */
        pbfcl_errorf("scene '%s': bodies need solver.method pbf (the scene sets %s); remove "
                     "\"bodies\" or the method",
                     s->name, pbfcl_method_name(s->solver.method));
        return false;
    }
    for (int i = 0; i < s->body_count; i++)
        if (!check_body(s, i))
            return false;
    return true;
}

/* Whether the bounds of bodies i and j meet (within tol): only then can they share a point. */
static bool bounds_meet(const pbfcl_scene *s, int i, int j, double tol)
{
    float lo_i[3], hi_i[3], lo_j[3], hi_j[3];
    pbfcl_scene_shape_bounds(&s->bodies[i].shape, lo_i, hi_i);
    pbfcl_scene_shape_bounds(&s->bodies[j].shape, lo_j, hi_j);
    for (int k = 0; k < 3; k++)
        if (lo_i[k] > hi_j[k] + tol || lo_j[k] > hi_i[k] + tol)
            return false;
    return true;
}

/* Reports the first lattice point of body i that an earlier body also holds. */
static bool check_shared(const pbfcl_scene *s, int i, const float *p, size_t n)
{
    double tol = 1e-4 * 2.0 * s->particle_radius;
    for (int j = 0; j < i; j++) {
        if (!bounds_meet(s, i, j, 2.0 * tol))
            continue;
        for (size_t e = 0; e < n; e++) {
            double q[3] = {p[3 * e], p[3 * e + 1], p[3 * e + 2]};
            if (pbfcl_scene_inside(s, &s->bodies[j].shape, q, tol)) {
                pbfcl_errorf("scene '%s': bodies[%d] and bodies[%d] overlap (both hold the "
                             "particle at %g, %g, %g); move them apart or make them smaller",
                             s->name, j, i, q[0], q[1], q[2]);
                return false;
            }
        }
    }
    return true;
}

bool pbfcl_scene_check_body_sampling(const pbfcl_scene *s)
{
    for (int i = 0; i < s->body_count; i++) {
        size_t n = pbfcl_scene_body_walk(s, i, NULL);
        if (n < PBFCL_BODY_MIN_PARTICLES) {
            pbfcl_errorf("scene '%s': bodies[%d] holds %zu particle%s at particle_radius %g m; a "
                         "body needs at least %d: make it larger or the particles smaller",
                         s->name, i, n, n == 1 ? "" : "s", s->particle_radius,
                         PBFCL_BODY_MIN_PARTICLES);
            return false;
        }
        float *p = malloc(n * 3 * sizeof *p);
        if (!p) {
            pbfcl_errorf("out of host memory for body %d's %zu particles", i, n);
            return false;
        }
        pbfcl_scene_body_walk(s, i, p);
        bool ok = check_shared(s, i, p, n);
        free(p);
        if (!ok)
            return false;
    }
    return true;
}

pbfcl_status pbfcl_scene_phases(const pbfcl_scene *s, int *phases, size_t n)
{
    size_t total = pbfcl_scene_count(s), end = total;
    if (n != total) {
        pbfcl_errorf("scene '%s': %zu particles given, but the scene fills %zu", s->name, n, total);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int c = 0; c < s->cloth_count; c++) /* the cloths and ropes last: fluid until grouped */
        end -= pbfcl_scene_cloth_walk(s, c, NULL);
    for (size_t e = end; e < total; e++)
        phases[e] = PBFCL_PHASE_FLUID;
    for (int o = s->obstacle_count - 1; o >= 0; o--) { /* then the obstacles, in order */
        size_t c = pbfcl_scene_obstacle_walk(s, o, NULL);
        for (size_t e = end - c; e < end; e++)
            phases[e] = PBFCL_PHASE_STATIC;
        end -= c;
    }
    for (int b = s->body_count - 1; b >= 0; b--) { /* then the bodies, in order */
        size_t c = pbfcl_scene_body_walk(s, b, NULL);
        for (size_t e = end - c; e < end; e++)
            phases[e] = PBFCL_PHASE_BODY(b);
        end -= c;
    }
    for (size_t e = 0; e < end; e++)
        phases[e] = PBFCL_PHASE_FLUID;
    return PBFCL_OK;
}
