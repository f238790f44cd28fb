/* Scene setups of the public API (pbfcl_scene_setup_*): a built-in or JSON scene held by a
 * checked handle, adjusted through the public parameter structs, then filled. */
#include "api_internal.h"
#include "pbf/pbf_colliders.h"
#include "sim/state_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pbfcl_scene_setup {
    pbfcl_scene scene;
    long long emitted[PBFCL_MAX_EMITTERS]; /* particles each emitter has emitted */
};

#define CHECK_SETUP(func, s)                                                                       \
    do {                                                                                           \
        if (!(s) || !pbfcl_api_live_find((s), HANDLE_SCENE, false))                                \
            return pbfcl_api_bad_handle(func, "scene setup", (s));                                 \
    } while (0)

pbfcl_status pbfcl_scene_setup_load(const char *name_or_file, pbfcl_scene_setup **out)
{
    if (!out || !name_or_file || !*name_or_file) {
        pbfcl_errorf("pbfcl_scene_setup_load: %s",
                     !out ? "out is NULL" : "name_or_file is NULL or empty");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *out = NULL;
    pbfcl_scene_setup *s = calloc(1, sizeof *s);
    if (!s)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = pbfcl_scene_parse(name_or_file, &s->scene); /* checked as it is changed */
    if (st == PBFCL_OK && !pbfcl_api_live_add(s, HANDLE_SCENE))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st != PBFCL_OK) {
        free(s);
        return st;
    }
    *out = s;
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_destroy(pbfcl_scene_setup *s)
{
    if (!s)
        return PBFCL_OK;
    if (!pbfcl_api_live_find(s, HANDLE_SCENE, true))
        return pbfcl_api_bad_handle("pbfcl_scene_setup_destroy", "scene setup", s);
    free(s);
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_name(const pbfcl_scene_setup *s, char *buf, size_t size)
{
    CHECK_SETUP("pbfcl_scene_setup_name", s);
    CHECK_ARG("pbfcl_scene_setup_name", buf && size > 0, "buf is NULL or size is 0");
    snprintf(buf, size, "%s", s->scene.name);
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_get_params(const pbfcl_scene_setup *s, pbfcl_scene_params *scene,
                                          pbfcl_solver_params *solver)
{
    CHECK_SETUP("pbfcl_scene_setup_get_params", s);
    pbfcl_api_params_from_scene(&s->scene, scene, solver);
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_set_params(pbfcl_scene_setup *s, const pbfcl_scene_params *scene,
                                          const pbfcl_solver_params *solver)
{
    CHECK_SETUP("pbfcl_scene_setup_set_params", s);
    CHECK_ARG("pbfcl_scene_setup_set_params", scene && solver, "scene and solver must not be NULL");
    pbfcl_scene next = s->scene; /* keeps the name, the fluid shapes and the bodies */
    memcpy(next.domain_min, scene->domain_min, sizeof next.domain_min);
    memcpy(next.domain_max, scene->domain_max, sizeof next.domain_max);
    memcpy(next.gravity, scene->gravity, sizeof next.gravity);
    next.particle_radius = scene->particle_radius;
    next.rest_density = scene->rest_density;
    next.solver = *solver;
    PBFCL_TRY(pbfcl_scene_validate_layout(&next)); /* the radius is checked when filled */
    s->scene = next;
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_set_particle_count(pbfcl_scene_setup *s, size_t target)
{
    CHECK_SETUP("pbfcl_scene_setup_set_particle_count", s);
    pbfcl_scene next = s->scene; /* its own radius is replaced, so it is not checked */
    PBFCL_TRY(pbfcl_scene_validate_layout(&next));
    PBFCL_TRY(pbfcl_scene_set_particle_count(&next, target));
    PBFCL_TRY(pbfcl_scene_validate(&next));
    s->scene = next;
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_fill(const pbfcl_scene_setup *s, float **positions, size_t *count)
{
    CHECK_SETUP("pbfcl_scene_setup_fill", s);
    CHECK_ARG("pbfcl_scene_setup_fill", positions && count, "positions and count must not be NULL");
    PBFCL_TRY(pbfcl_scene_validate(&s->scene));
    return pbfcl_scene_fill(&s->scene, positions, count);
}

const pbfcl_scene *pbfcl_api_setup_scene(const pbfcl_scene_setup *s)
{
    return s && pbfcl_api_live_find(s, HANDLE_SCENE, false) ? &s->scene : NULL;
}

pbfcl_status pbfcl_scene_setup_body_count(const pbfcl_scene_setup *s, int *count)
{
    CHECK_SETUP("pbfcl_scene_setup_body_count", s);
    CHECK_ARG("pbfcl_scene_setup_body_count", count, "count is NULL");
    *count = s->scene.body_count;
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_obstacle_count(const pbfcl_scene_setup *s, int *count)
{
    CHECK_SETUP("pbfcl_scene_setup_obstacle_count", s);
    CHECK_ARG("pbfcl_scene_setup_obstacle_count", count, "count is NULL");
    *count = s->scene.obstacle_count;
    return PBFCL_OK;
}

/* Sets the initial velocity of every body particle (phases[i] = b + 1) to body b's; fluid and
 * static particles (PBFCL_PHASE_STATIC) keep theirs. */
static pbfcl_status set_body_velocities(const pbfcl_scene *sc, pbfcl_solver *solver,
                                        const int *phases, size_t n)
{
    float *v = malloc(n * 3 * sizeof *v);
    if (!v)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = pbfcl_solver_get_velocities(solver, v, n);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (phases[i] > 0 && phases[i] <= sc->body_count)
            memcpy(v + 3 * i, sc->bodies[phases[i] - 1].velocity, 3 * sizeof *v);
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_velocities(solver, v, n);
    free(v);
    return st;
}

/* The paths of the moving obstacles: each one's particles (after the fluid's and the bodies',
 * obstacle by obstacle, from index first: their ids) with their offsets from its centre, and
 * the pinned particles of the cloths and ropes attached to it (of the n particles). */
static pbfcl_status set_obstacle_paths(const pbfcl_scene *sc, pbfcl_solver *solver, size_t first,
                                       size_t n)
{
    size_t total = 0;
    for (int o = 0; o < sc->obstacle_count; o++)
        total += pbfcl_scene_obstacle_walk(sc, o, NULL) +
                 pbfcl_api_scene_cloth_path(sc, o, n, (float[3]){0}, NULL, NULL);
    pbfcl_kinematic_path path[PBFCL_MAX_OBSTACLES];
    unsigned *id = malloc((total + 1) * sizeof *id), *which = malloc((total + 1) * sizeof *which);
    float *pos = malloc((total + 1) * 3 * sizeof *pos);
    pbfcl_status st = id && which && pos ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    size_t paths = 0, entries = 0, held = 0; /* held: the cloths' entries so far */
    for (int o = 0; st == PBFCL_OK && o < sc->obstacle_count; o++) {
        size_t c = pbfcl_scene_obstacle_walk(sc, o, pos + 3 * entries);
        if (pbfcl_scene_obstacle_moves(sc, o)) {
            const pbfcl_obstacle_motion *m = &sc->obstacle_motion[o];
            pbfcl_kinematic_path *p = &path[paths];
            pbfcl_scene_obstacle_center(sc, o, p->center);
            memcpy(p->velocity, m->velocity, sizeof p->velocity);
            memcpy(p->angular_velocity, m->angular_velocity, sizeof p->angular_velocity);
            p->stop = m->until > 0.0f ? m->until : INFINITY;
            p->key_count = m->key_count;
            p->repeat = m->repeat;
            memcpy(p->keys, m->keys, sizeof p->keys);
            for (size_t e = entries; e < entries + c; e++) {
                id[e] = (unsigned)(first + e - held);
                which[e] = (unsigned)paths;
                for (int k = 0; k < 3; k++)
                    pos[3 * e + k] -= p->center[k];
            }
            entries += c; /* then the pinned particles of the cloths attached to it */
            size_t k =
                pbfcl_api_scene_cloth_path(sc, o, n, p->center, id + entries, pos + 3 * entries);
            for (size_t e = entries; e < entries + k; e++)
                which[e] = (unsigned)paths;
            entries += k;
            held += k;
            paths++;
        } else { /* a still obstacle: its particles are passed over (a cloth on it is static) */
            first += c;
        }
    }
    if (st == PBFCL_OK)
        st = pbfcl_api_set_paths(solver, paths, path, entries, id, which, pos);
    free(id);
    free(which);
    free(pos);
    return st;
}

/* q turned by the rotation vector w t (q' = exp(w t / 2) q). */
static void turn_by(float q[4], const float w[3], double t)
{
    double a[3] = {w[0] * t, w[1] * t, w[2] * t},
           ang = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    if (ang == 0.0)
        return;
    double s = sin(ang / 2) / ang, r[4] = {a[0] * s, a[1] * s, a[2] * s, cos(ang / 2)};
    double p[4] = {q[0], q[1], q[2], q[3]};
    if (p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0)
        p[3] = 1; /* none */
    q[0] = (float)(r[3] * p[0] + r[0] * p[3] + r[1] * p[2] - r[2] * p[1]);
    q[1] = (float)(r[3] * p[1] - r[0] * p[2] + r[1] * p[3] + r[2] * p[0]);
    q[2] = (float)(r[3] * p[2] + r[0] * p[1] - r[1] * p[0] + r[2] * p[3]);
    q[3] = (float)(r[3] * p[3] - r[0] * p[0] - r[1] * p[1] - r[2] * p[2]);
}

/* Triangles [first, first + count) of the scene's meshes as their own vertices (shared as
 * there) and triangles, into *v and *t (free both). */
static pbfcl_status inline_mesh(const pbfcl_scene *sc, int first, int count, float **v,
                                unsigned **t, size_t *nv)
{
    int *map = malloc((size_t)sc->meshes.vertex_count * sizeof *map + 4);
    *v = malloc((size_t)count * 9 * sizeof **v + 4);
    *t = malloc((size_t)count * 3 * sizeof **t + 4);
    *nv = 0;
    if (!map || !*v || !*t) {
        free(map);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (int k = 0; k < sc->meshes.vertex_count; k++)
        map[k] = -1;
    for (int i = 0; i < count; i++)
        for (int j = 0; j < 3; j++) {
            int at = sc->meshes.triangles[first + i][j];
            if (map[at] < 0) {
                map[at] = (int)(*nv)++;
                memcpy(*v + 3 * map[at], sc->meshes.vertices[at], 3 * sizeof(float));
            }
            (*t)[3 * i + j] = (unsigned)map[at];
        }
    free(map);
    return PBFCL_OK;
}

/* The description of collider c (named name) where its motion has carried it by time; its
 * inline triangles (no file) into *v and *t (freed by the caller). */
static pbfcl_status collider_desc(const pbfcl_scene *sc, const pbfcl_scene_collider *c,
                                  const char *name, double time, pbfcl_shape_desc *d, float **v,
                                  unsigned **t)
{
    *d = (pbfcl_shape_desc){.type = (pbfcl_shape_type)c->type,
                            .name = name,
                            .radius = c->radius,
                            .half_length = c->half_length,
                            .obj_path = c->file[0] ? c->file : NULL,
                            .scale = c->scale,
                            .two_sided = c->two_sided,
                            .friction = c->friction,
                            .static_friction = c->static_friction,
                            .margin = c->margin,
                            .sdf_resolution = c->resolution,
                            .until = c->until};
    memcpy(d->half_extents, c->half_extents, sizeof d->half_extents);
    memcpy(d->position, c->position, sizeof d->position);
    memcpy(d->rotation, c->rotation, sizeof d->rotation);
    memcpy(d->velocity, c->velocity, sizeof d->velocity);
    memcpy(d->angular_velocity, c->angular_velocity, sizeof d->angular_velocity);
    double moved = c->until > 0.0f ? fmin(time, c->until) : time;
    for (int k = 0; k < 3; k++) /* where its velocities have carried it by time */
        d->position[k] += (float)(c->velocity[k] * moved);
    turn_by(d->rotation, c->angular_velocity, moved);
    if (c->until > 0.0f && time >= c->until) { /* stopped */
        memset(d->velocity, 0, sizeof d->velocity);
        memset(d->angular_velocity, 0, sizeof d->angular_velocity);
        d->until = 0.0f;
    } else if (c->until > 0.0f)
        d->until = (float)(c->until - time);
    *v = NULL;
    *t = NULL;
    if (c->file[0] || c->type < PBFCL_SHAPE_KIND_CONVEX)
        return PBFCL_OK;
    size_t nv;
    PBFCL_TRY(inline_mesh(sc, c->mesh_first, c->mesh_count, v, t, &nv));
    if (c->type == PBFCL_SHAPE_KIND_CONVEX) {
        d->points = *v;
        d->point_count = nv;
    } else {
        d->vertices = *v;
        d->vertex_count = nv;
        d->triangles = *t;
        d->triangle_count = (size_t)c->mesh_count;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_apply_colliders(const pbfcl_scene_setup *s, pbfcl_solver *solver,
                                               double time)
{
    CHECK_SETUP("pbfcl_scene_setup_apply_colliders", s);
    CHECK_ARG("pbfcl_scene_setup_apply_colliders", isfinite(time) && time >= 0.0,
              "time must be finite and 0 or more");
    const pbfcl_scene *sc = &s->scene;
    for (int i = 0; i < sc->collider_count; i++) {
        char name[32];
        snprintf(name, sizeof name, "colliders[%d]", i);
        pbfcl_shape_desc d;
        float *v;
        unsigned *t;
        PBFCL_TRY(collider_desc(sc, &sc->colliders[i], name, time, &d, &v, &t));
        int id;
        pbfcl_status st = pbfcl_shape_create(solver, &d, &id);
        free(v);
        free(t);
        PBFCL_TRY(st);
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_api_scene_add_colliders(const pbfcl_scene *sc, struct pbfcl_sim *sim)
{
    pbfcl_colliders *c = sc->solver.method == PBFCL_METHOD_PBF ? pbfcl_pbf_colliders(sim) : NULL;
    for (int i = 0; i < sc->collider_count; i++) {
        char name[32];
        snprintf(name, sizeof name, "colliders[%d]", i);
        if (!c) {
            pbfcl_errorf("%s: shapes collide with the particles of method pbf only: set "
                         "solver.method to pbf",
                         name);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        pbfcl_shape_desc d;
        float *v;
        unsigned *t;
        PBFCL_TRY(collider_desc(sc, &sc->colliders[i], name, 0.0, &d, &v, &t));
        int id;
        pbfcl_status st = pbfcl_colliders_add(c, &d, &id);
        free(v);
        free(t);
        PBFCL_TRY(st);
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_apply_bodies(const pbfcl_scene_setup *s, pbfcl_solver *solver)
{
    const char *f = "pbfcl_scene_setup_apply_bodies";
    CHECK_SETUP(f, s);
    const pbfcl_scene *sc = &s->scene;
    size_t n = 0;
    PBFCL_TRY(pbfcl_solver_count(solver, &n));
    PBFCL_TRY(pbfcl_scene_setup_apply_colliders(s, solver, 0.0));
    if (sc->body_count == 0 && sc->obstacle_count == 0 && sc->cloth_count == 0)
        return PBFCL_OK;
    size_t filled = pbfcl_scene_count(sc);
    if (n != filled) {
        pbfcl_errorf("%s: the solver holds %zu particles but the scene fills %zu; add exactly "
                     "pbfcl_scene_setup_fill's particles to an empty solver first",
                     f, n, filled);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    int *phases = malloc(n * sizeof *phases);
    if (!phases)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = pbfcl_scene_phases(sc, phases, n);
    if (st == PBFCL_OK)
        st = pbfcl_api_scene_pin_cloths(sc, phases, n);
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_phases(solver, phases, n);
    for (int b = 0; st == PBFCL_OK && b < sc->body_count; b++)
        st = pbfcl_solver_set_body(solver, b, sc->bodies[b].stiffness, sc->bodies[b].density);
    if (st == PBFCL_OK)
        st = set_body_velocities(sc, solver, phases, n);
    size_t first = 0; /* the first obstacle particle */
    while (first < n && phases[first] != PBFCL_PHASE_STATIC)
        first++;
    if (st == PBFCL_OK)
        st = set_obstacle_paths(sc, solver, first, n);
    if (st == PBFCL_OK)
        st = pbfcl_api_scene_apply_cloths(sc, solver, n);
    free(phases);
    return st;
}

pbfcl_status pbfcl_scene_setup_capacity(const pbfcl_scene_setup *s, size_t *capacity)
{
    CHECK_SETUP("pbfcl_scene_setup_capacity", s);
    CHECK_ARG("pbfcl_scene_setup_capacity", capacity, "capacity is NULL");
    PBFCL_TRY(pbfcl_scene_validate(&s->scene));
    *capacity = pbfcl_scene_capacity(&s->scene);
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_flow_count(const pbfcl_scene_setup *s, int *emitters, int *drains)
{
    CHECK_SETUP("pbfcl_scene_setup_flow_count", s);
    if (emitters)
        *emitters = s->scene.emitter_count;
    if (drains)
        *drains = s->scene.drain_count;
    return PBFCL_OK;
}

/* Removes the fluid particles inside the drains; their indices (ascending) into removed if
 * not NULL, their number into *count. */
static pbfcl_status drain(const pbfcl_scene *sc, pbfcl_solver *solver, size_t *removed,
                          size_t *count)
{
    size_t n = 0, k = 0;
    *count = 0;
    PBFCL_TRY(pbfcl_solver_count(solver, &n));
    if (sc->drain_count == 0 || n == 0)
        return PBFCL_OK;
    float *pos = malloc(n * 3 * sizeof *pos);
    int *phases = malloc(n * sizeof *phases);
    size_t *list = malloc(n * sizeof *list);
    pbfcl_status st = pos && phases && list ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_solver_get_positions(solver, pos, n);
    if (st == PBFCL_OK)
        st = pbfcl_solver_get_phases(solver, phases, n);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (phases[i] == PBFCL_PHASE_FLUID && pbfcl_scene_in_drain(sc, pos + 3 * i))
            list[k++] = i;
    if (st == PBFCL_OK && k > 0)
        st = pbfcl_solver_remove(solver, list, k);
    if (st == PBFCL_OK) {
        if (removed)
            memcpy(removed, list, k * sizeof *list);
        *count = k;
    }
    free(pos);
    free(phases);
    free(list);
    return st;
}

/* Adds the particles emitter e owes at time t (pbfcl_scene_emit). */
static pbfcl_status emit(pbfcl_scene_setup *s, int e, pbfcl_solver *solver, double t, size_t *added)
{
    const pbfcl_scene *sc = &s->scene;
    long long due = pbfcl_scene_emitted_by(sc, e, t), from = s->emitted[e];
    if (due <= from)
        return PBFCL_OK;
    size_t k = (size_t)(due - from);
    float *pos = malloc(k * 3 * sizeof *pos), *vel = malloc(k * 3 * sizeof *vel);
    pbfcl_status st =
        pos && vel ? pbfcl_scene_emit(sc, e, from, due, t, pos, vel) : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_solver_add(solver, pos, vel, k);
    if (st == PBFCL_OK) {
        s->emitted[e] = due;
        *added += k;
    }
    free(pos);
    free(vel);
    return st;
}

pbfcl_status pbfcl_scene_setup_flow(pbfcl_scene_setup *s, pbfcl_solver *solver, double time,
                                    size_t *removed, size_t *removed_count, size_t *added)
{
    CHECK_SETUP("pbfcl_scene_setup_flow", s);
    if (!removed_count || !added || !(time >= 0.0)) {
        pbfcl_errorf("pbfcl_scene_setup_flow: %s",
                     !(time >= 0.0) ? "time must be 0 or more"
                                    : "removed_count and added must not be NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *added = 0;
    PBFCL_TRY(drain(&s->scene, solver, removed, removed_count));
    for (int e = 0; e < s->scene.emitter_count; e++)
        PBFCL_TRY(emit(s, e, solver, time, added));
    return PBFCL_OK;
}

/* ---- state: the scene and its emitters' progress, for checkpoints --------------------------- */

pbfcl_status pbfcl_scene_setup_save_state(const pbfcl_scene_setup *s, pbfcl_state_write_fn write,
                                          void *user)
{
    CHECK_SETUP("pbfcl_scene_setup_save_state", s);
    CHECK_ARG("pbfcl_scene_setup_save_state", write, "write is NULL");
    PBFCL_TRY(write(user, "scene", &s->scene, sizeof s->scene));
    return write(user, "emitted", s->emitted, sizeof s->emitted);
}

/* Checks that the emitted counts fit the scene's emitters. */
static pbfcl_status check_emitted(const pbfcl_scene_setup *s)
{
    for (int e = 0; e < PBFCL_MAX_EMITTERS; e++) {
        long long most = e < s->scene.emitter_count ? s->scene.emitters[e].count : 0;
        if (s->emitted[e] < 0 || s->emitted[e] > most) {
            pbfcl_errorf("pbfcl_scene_setup_load_state: emitter %d of scene '%s' has emitted %lld "
                         "particles of its %lld; the state is damaged (save it again)",
                         e, s->scene.name, s->emitted[e], most);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_scene_setup_load_state(pbfcl_state_read_fn read, void *user,
                                          pbfcl_scene_setup **out)
{
    if (!read || !out) {
        pbfcl_errorf("pbfcl_scene_setup_load_state: %s is NULL", !read ? "read" : "out");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *out = NULL;
    pbfcl_scene_setup *s = calloc(1, sizeof *s);
    if (!s)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = read(user, "scene", &s->scene, sizeof s->scene);
    if (st == PBFCL_OK)
        st = pbfcl_state_check_scene(&s->scene, sizeof s->scene); /* before it is read as one */
    if (st == PBFCL_OK) {
        s->scene.name[sizeof s->scene.name - 1] = '\0';
        st = pbfcl_scene_validate(&s->scene);
    }
    if (st == PBFCL_OK)
        st = read(user, "emitted", s->emitted, sizeof s->emitted);
    if (st == PBFCL_OK)
        st = check_emitted(s);
    if (st == PBFCL_OK && !pbfcl_api_live_add(s, HANDLE_SCENE))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st != PBFCL_OK) {
        free(s);
        return st;
    }
    *out = s;
    return PBFCL_OK;
}
