/* The obstacles of a scene: the checks of their shapes and of their sampling on the particle
 * lattice (each holds a particle, none shares one with a body). Their particles are static
 * (PBFCL_PHASE_STATIC): boundary particles of infinite mass. */
#include "scene/scene.h"

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
    return m->key_count > 0;
}

/* Whether a path key is the starting pose (pbfcl_path_keys_fault_of). */
static bool key_is_start(const pbfcl_path_key *k)
{
    double shift = 0.0, angle = 0.0;
    for (int a = 0; a < 3; a++) {
        shift += (double)k->position[a] * k->position[a];
        angle += (double)k->rotation[a] * k->rotation[a];
    }
    const double turn = 2.0 * 3.14159265358979323846;
    angle = sqrt(angle);
    return sqrt(shift) <= 1e-6 && fabs(angle - turn * floor(angle / turn + 0.5)) <= 1e-4;
}

pbfcl_path_keys_fault pbfcl_path_keys_fault_of(const pbfcl_path_key *keys, int count, bool repeat,
                                               int *key)
{
    *key = 0;
    if (count < 0 || count > PBFCL_MAX_PATH_KEYS)
        return PBFCL_PATH_KEYS_COUNT;
    if (count == 0)
        return repeat ? PBFCL_PATH_KEYS_NO_KEYS : PBFCL_PATH_KEYS_OK;
    for (int e = 0; e < count; e++) {
        const pbfcl_path_key *k = &keys[e];
        *key = e;
        if (!(isfinite(k->time) && k->time > (e > 0 ? keys[e - 1].time : 0.0f)))
            return PBFCL_PATH_KEYS_TIME;
        for (int a = 0; a < 3; a++)
            if (!isfinite(k->position[a]) || !isfinite(k->rotation[a]))
                return PBFCL_PATH_KEYS_VALUE;
    }
    return repeat && !key_is_start(&keys[count - 1]) ? PBFCL_PATH_KEYS_NOT_AT_START
                                                     : PBFCL_PATH_KEYS_OK;
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

/* Checks obstacle i's keys: no rates or until beside them, finite values, times above 0 and
 * increasing, and a repeating path's last key at the starting pose. */
static bool check_keys(const pbfcl_scene *s, int i)
{
    const pbfcl_obstacle_motion *m = &s->obstacle_motion[i];
    int e = 0;
    switch (pbfcl_path_keys_fault_of(m->keys, m->key_count, m->repeat, &e)) {
    case PBFCL_PATH_KEYS_OK:
        break;
    case PBFCL_PATH_KEYS_COUNT:
        pbfcl_errorf("scene '%s': obstacles[%d].path has %d keys; give 1 to %d", s->name, i,
                     m->key_count, PBFCL_MAX_PATH_KEYS);
        return false;
    case PBFCL_PATH_KEYS_NO_KEYS:
        pbfcl_errorf("scene '%s': obstacles[%d].path repeats but has no keys", s->name, i);
        return false;
    case PBFCL_PATH_KEYS_TIME:
        pbfcl_errorf("scene '%s': obstacles[%d].path.keys[%d].time is %g s; each key's time "
                     "must be above the one before (the start: 0 s, where the obstacle is as its "
                     "shape gives it), here above %g s",
                     s->name, i, e, m->keys[e].time, e > 0 ? m->keys[e - 1].time : 0.0f);
        return false;
    case PBFCL_PATH_KEYS_VALUE:
        pbfcl_errorf("scene '%s': obstacles[%d].path.keys[%d] has a position or rotation that is "
                     "not a finite number",
                     s->name, i, e);
        return false;
    case PBFCL_PATH_KEYS_NOT_AT_START:
        pbfcl_errorf("scene '%s': obstacles[%d].path repeats, so its last key (keys[%d]) must "
                     "bring it back to the start: position [0, 0, 0] and a rotation of whole "
                     "turns (0 or a multiple of 2 pi rad about one axis); add such a key or set "
                     "repeat to false",
                     s->name, i, e);
        return false;
    }
    if (m->key_count == 0)
        return true;
    for (int k = 0; k < 3; k++)
        if (m->velocity[k] != 0.0f || m->angular_velocity[k] != 0.0f || m->until != 0.0f) {
            pbfcl_errorf("scene '%s': obstacles[%d] has a path and a velocity, angular_velocity or "
                         "until; give the path alone (its keys can move and turn it at constant "
                         "rates) or the rates alone",
                         s->name, i);
            return false;
        }
    return true;
}

/* One pose of a moving obstacle to check: at time t its centre shifted by shift[]. */
typedef struct motion_pose {
    double t, shift[3];
} motion_pose;

/* Checks that moving obstacle i stays in the domain and below the blow-up speed: its bounds
 * (turning: the cube around the sphere it turns in) at each pose (the start and where it
 * stops; with keys, every key: a path between two keys lies within their hull), and its
 * fastest particle (with keys, per segment: |dp| / dt + |dr| / dt times its reach). */
static bool check_motion(const pbfcl_scene *s, int i)
{
    double v, w;
    if (!check_keys(s, i) || !check_motion_values(s, i, &v, &w))
        return false;
    const pbfcl_obstacle_motion *m = &s->obstacle_motion[i];
    if (v == 0.0 && w == 0.0 && m->key_count == 0)
        return true;
    float lo[3], hi[3], c[3];
    pbfcl_scene_shape_bounds(&s->obstacles[i], lo, hi);
    pbfcl_scene_obstacle_center(s, i, c);
    double reach = 0.0;
    for (int k = 0; k < 3; k++)
        reach += 0.25 * ((double)hi[k] - lo[k]) * ((double)hi[k] - lo[k]);
    reach = sqrt(reach);
    motion_pose pose[PBFCL_MAX_PATH_KEYS + 1] = {{0.0, {0.0, 0.0, 0.0}}};
    int poses = 1;
    bool turns = w > 0.0;
    double speed = v + w * reach;
    if (m->key_count == 0) {
        pose[poses].t = m->until;
        for (int k = 0; k < 3; k++)
            pose[poses].shift[k] = (double)m->velocity[k] * m->until;
        poses++;
    }
    for (int e = 0; e < m->key_count; e++, poses++) {
        const pbfcl_path_key *key = &m->keys[e], *prev = e > 0 ? &m->keys[e - 1] : NULL;
        double dp = 0.0, dr = 0.0, span = key->time - (prev ? prev->time : 0.0);
        pose[poses].t = key->time;
        for (int k = 0; k < 3; k++) {
            pose[poses].shift[k] = key->position[k];
            double a = key->position[k] - (prev ? prev->position[k] : 0.0f);
            double b = key->rotation[k] - (prev ? prev->rotation[k] : 0.0f);
            dp += a * a;
            dr += b * b;
            turns = turns || key->rotation[k] != 0.0f;
        }
        speed = fmax(speed, (sqrt(dp) + sqrt(dr) * reach) / span);
    }
    for (int q = 0; q < poses; q++) {
        for (int k = 0; k < 3; k++) {
            double shift = pose[q].shift[k];
            double a = (turns ? c[k] - reach : lo[k]) + shift;
            double b = (turns ? c[k] + reach : hi[k]) + shift;
            double tol = 1e-6 * ((double)s->domain_max[k] - s->domain_min[k]);
            if (a < s->domain_min[k] - tol || b > s->domain_max[k] + tol) {
                pbfcl_errorf("scene '%s': obstacles[%d] leaves the domain: at t = %g s %s spans "
                             "%g..%g along %c, outside the domain %g..%g; %s or make the domain "
                             "larger",
                             s->name, i, pose[q].t, turns ? "the sphere it turns in" : "it", a, b,
                             axis_names[k], s->domain_min[k], s->domain_max[k],
                             m->key_count > 0 ? "change that key's position"
                                              : "make it slower, stop it sooner (until)");
                return false;
            }
        }
    }
    double limit = pbfcl_scene_max_speed(s);
    if (speed >= limit) {
        pbfcl_errorf("scene '%s': obstacles[%d] moves its particles at up to %g m/s, at or above "
                     "the blow-up limit %g m/s (solver.max_speed); slow it%s or raise "
                     "solver.max_speed",
                     s->name, i, speed, limit,
                     m->key_count > 0 ? " (keys further apart in time)" : "");
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
