/* A scene's cloths, ropes and inflatables applied to a solver through the public calls: the
 * pinned particles made static (or, held by a body, kept free), the others put into solid group
 * c (cloth, rope or inflatable c) with the mass the scene gives, every one's constraints and
 * triangles set at once, then the inflatables' volumes, then the pinned particles of those with
 * "attach" attached to their collider or body. */
#include "api_internal.h"
#include "scene/cloth_cook.h"

#include <stdbool.h>
#include <stdlib.h>

/* The index of cloth c's first particle: the fill puts the cloths last, in order. */
static size_t cloth_first(const pbfcl_scene *sc, int c, size_t n)
{
    size_t first = n;
    for (int k = sc->cloth_count - 1; k >= c; k--)
        first -= pbfcl_scene_cloth_walk(sc, k, NULL);
    return first;
}

pbfcl_status pbfcl_api_scene_pin_cloths(const pbfcl_scene *sc, int *phases, size_t n)
{
    for (int c = 0; c < sc->cloth_count; c++) {
        pbfcl_cloth_cook k;
        PBFCL_TRY(pbfcl_scene_cloth_cook(sc, c, &k));
        size_t first = cloth_first(sc, c, n);
        bool held = sc->cloths[c].attach == PBFCL_CLOTH_ATTACH_BODY; /* free, held by a body */
        for (size_t i = 0; i < k.particles; i++)
            if (k.pinned[i] && !held)
                phases[first + i] = PBFCL_PHASE_STATIC;
        pbfcl_cook_free(&k);
    }
    return PBFCL_OK;
}

/* Appends cloth c's free particles to the groups and its constraints and triangles, their
 * indices offset to the cloth's first particle. */
static void append_cloth(const pbfcl_scene *sc, int c, const pbfcl_cloth_cook *k, size_t first,
                         pbfcl_cloth_cook *all, unsigned *ids, unsigned *group, float *w,
                         size_t *grouped)
{
    float inv_mass = (float)((double)k->particles / sc->cloths[c].mass);
    bool held = sc->cloths[c].attach == PBFCL_CLOTH_ATTACH_BODY; /* its pinned ones move too */
    for (size_t i = 0; i < k->particles; i++)
        if (!k->pinned[i] || held) {
            ids[*grouped] = (unsigned)(first + i);
            group[*grouped] = (unsigned)c;
            w[(*grouped)++] = inv_mass;
        }
    for (size_t e = 0; e < k->constraints; e++, all->constraints++) {
        all->pair[2 * all->constraints] = (unsigned)first + k->pair[2 * e];
        all->pair[2 * all->constraints + 1] = (unsigned)first + k->pair[2 * e + 1];
        all->rest[all->constraints] = k->rest[e];
        all->compliance[all->constraints] = k->compliance[e];
        all->tether[all->constraints] = k->tether[e];
    }
    for (size_t t = 0; t < 3 * k->triangles; t++)
        all->tri[3 * all->triangles + t] = (unsigned)first + k->tri[t];
    all->triangles += k->triangles;
}

/* Room in all for cloth constraints and triangles of every cloth. */
static pbfcl_status reserve(const pbfcl_scene *sc, pbfcl_cloth_cook *all)
{
    size_t cons = 0, tris = 0;
    for (int c = 0; c < sc->cloth_count; c++) {
        pbfcl_cloth_cook k;
        PBFCL_TRY(pbfcl_scene_cloth_cook(sc, c, &k));
        cons += k.constraints;
        tris += k.triangles;
        pbfcl_cook_free(&k);
    }
    all->pair = malloc((2 * cons + 1) * sizeof *all->pair);
    all->rest = malloc((cons + 1) * sizeof *all->rest);
    all->compliance = malloc((cons + 1) * sizeof *all->compliance);
    all->tether = malloc(cons + 1);
    all->tri = malloc((3 * tris + 1) * sizeof *all->tri);
    return all->pair && all->rest && all->compliance && all->tether && all->tri
               ? PBFCL_OK
               : PBFCL_ERR_OUT_OF_MEMORY;
}

/* Sets the scene's inflatables on solver: each one's cooked mesh (its triangles offset to its
 * first particle), rest volume, pressure and compliance. */
static pbfcl_status apply_inflatables(const pbfcl_scene *sc, pbfcl_solver *solver, size_t n)
{
    size_t count = 0, tris = 0;
    for (int c = 0; c < sc->cloth_count; c++)
        count += sc->cloths[c].inflatable;
    if (count == 0)
        return PBFCL_OK;
    unsigned *tc = malloc(count * sizeof *tc), *tri = NULL;
    float *rest = malloc(count * sizeof *rest), *pressure = malloc(count * sizeof *pressure);
    float *comp = malloc(count * sizeof *comp);
    pbfcl_status st = tc && rest && pressure && comp ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    size_t k = 0;
    for (int c = 0; st == PBFCL_OK && c < sc->cloth_count; c++) {
        const pbfcl_cloth_shape *shape = &sc->cloths[c];
        if (!shape->inflatable)
            continue;
        pbfcl_cloth_cook cook;
        st = pbfcl_scene_cloth_cook(sc, c, &cook);
        unsigned *grown =
            st == PBFCL_OK ? realloc(tri, 3 * (tris + cook.triangles) * sizeof *tri) : NULL;
        if (st == PBFCL_OK && !grown)
            st = PBFCL_ERR_OUT_OF_MEMORY;
        if (st == PBFCL_OK) {
            tri = grown;
            size_t first = cloth_first(sc, c, n);
            for (size_t t = 0; t < 3 * cook.triangles; t++)
                tri[3 * tris + t] = (unsigned)first + cook.tri[t];
            tris += cook.triangles;
            tc[k] = (unsigned)cook.triangles;
            rest[k] = cook.volume;
            pressure[k] = shape->pressure;
            comp[k++] = shape->compliance;
        }
        pbfcl_cook_free(&cook);
    }
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_inflatables(solver, tc, tri, rest, pressure, comp, count);
    free(tc);
    free(tri);
    free(rest);
    free(pressure);
    free(comp);
    return st;
}

/* Where attachment k of cloth c's pinned particle at x is held: collider a's shape (its id,
 * x in its frame now) or body a (x from its centre of mass, the mean of its particles now). */
static pbfcl_status attach_point(const pbfcl_scene *sc, pbfcl_solver *solver, int c, const float *x,
                                 const float *pos, const int *phases, size_t n, int *target,
                                 float *point)
{
    const pbfcl_cloth_shape *cl = &sc->cloths[c];
    if (cl->attach == PBFCL_CLOTH_ATTACH_BODY) {
        double com[3] = {0, 0, 0}, m = 0;
        for (size_t i = 0; i < n; i++)
            if (phases[i] == PBFCL_PHASE_BODY(cl->attach_index)) {
                for (int a = 0; a < 3; a++)
                    com[a] += pos[3 * i + a];
                m++;
            }
        *target = cl->attach_index;
        for (int a = 0; a < 3; a++)
            point[a] = (float)(x[a] - com[a] / m);
        return PBFCL_OK;
    }
    int shapes;
    float p[3], q[4];
    PBFCL_TRY(pbfcl_shape_count(solver, &shapes)); /* the scene's colliders are the last made */
    PBFCL_TRY(pbfcl_shape_id(solver, shapes - sc->collider_count + cl->attach_index, target));
    PBFCL_TRY(pbfcl_shape_get_pose(solver, *target, p, q));
    double d[3] = {x[0] - p[0], x[1] - p[1], x[2] - p[2]}, u[3] = {-q[0], -q[1], -q[2]};
    double t[3] = {2 * (u[1] * d[2] - u[2] * d[1]), 2 * (u[2] * d[0] - u[0] * d[2]),
                   2 * (u[0] * d[1] - u[1] * d[0])}; /* d turned by the inverse rotation */
    point[0] = (float)(d[0] + q[3] * t[0] + (u[1] * t[2] - u[2] * t[1]));
    point[1] = (float)(d[1] + q[3] * t[1] + (u[2] * t[0] - u[0] * t[2]));
    point[2] = (float)(d[2] + q[3] * t[2] + (u[0] * t[1] - u[1] * t[0]));
    return PBFCL_OK;
}

/* The cloths' "attach": each pinned particle of such a cloth attached where it is now. */
static pbfcl_status apply_attachments(const pbfcl_scene *sc, pbfcl_solver *solver, size_t n)
{
    bool any = false;
    for (int c = 0; c < sc->cloth_count; c++)
        any |= sc->cloths[c].attach == PBFCL_CLOTH_ATTACH_COLLIDER ||
               sc->cloths[c].attach == PBFCL_CLOTH_ATTACH_BODY;
    if (!any)
        return PBFCL_OK;
    unsigned *particle = malloc(n * sizeof *particle);
    int *kind = malloc(n * sizeof *kind), *target = malloc(n * sizeof *target);
    int *phases = malloc(n * sizeof *phases);
    float *point = malloc(3 * n * sizeof *point), *pos = malloc(3 * n * sizeof *pos);
    pbfcl_status st =
        particle && kind && target && phases && point && pos ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_solver_get_positions(solver, pos, n);
    if (st == PBFCL_OK)
        st = pbfcl_solver_get_phases(solver, phases, n);
    size_t count = 0;
    for (int c = 0; st == PBFCL_OK && c < sc->cloth_count; c++) {
        int held_by = sc->cloths[c].attach;
        if (held_by != PBFCL_CLOTH_ATTACH_COLLIDER && held_by != PBFCL_CLOTH_ATTACH_BODY)
            continue; /* the world's, or an obstacle's (on its path: pbfcl_api_scene_cloth_path) */
        pbfcl_cloth_cook k;
        st = pbfcl_scene_cloth_cook(sc, c, &k);
        size_t first = cloth_first(sc, c, n);
        for (size_t i = 0; st == PBFCL_OK && i < k.particles; i++)
            if (k.pinned[i]) {
                particle[count] = (unsigned)(first + i);
                kind[count] = sc->cloths[c].attach == PBFCL_CLOTH_ATTACH_BODY ? PBFCL_ATTACH_BODY
                                                                              : PBFCL_ATTACH_SHAPE;
                st = attach_point(sc, solver, c, pos + 3 * (first + i), pos, phases, n,
                                  target + count, point + 3 * count);
                count++;
            }
        pbfcl_cook_free(&k);
    }
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_attachments(solver, particle, kind, target, point, NULL, count);
    free(particle);
    free(kind);
    free(target);
    free(phases);
    free(point);
    free(pos);
    return st;
}

pbfcl_status pbfcl_api_scene_apply_cloths(const pbfcl_scene *sc, pbfcl_solver *solver, size_t n)
{
    if (sc->cloth_count == 0)
        return PBFCL_OK;
    pbfcl_cloth_cook all = {0};
    unsigned *ids = malloc((n + 1) * sizeof *ids), *group = malloc((n + 1) * sizeof *group);
    float *w = malloc((n + 1) * sizeof *w);
    size_t grouped = 0;
    pbfcl_status st = ids && group && w ? reserve(sc, &all) : PBFCL_ERR_OUT_OF_MEMORY;
    for (int c = 0; st == PBFCL_OK && c < sc->cloth_count; c++) {
        pbfcl_cloth_cook k;
        st = pbfcl_scene_cloth_cook(sc, c, &k);
        if (st == PBFCL_OK)
            append_cloth(sc, c, &k, cloth_first(sc, c, n), &all, ids, group, w, &grouped);
        pbfcl_cook_free(&k);
    }
    unsigned char *self = malloc((size_t)sc->cloth_count + 1);
    bool any_self = false;
    for (int c = 0; self && c < sc->cloth_count; c++)
        any_self |= (self[c] = sc->cloths[c].self_collide) != 0; /* group c is cloth c */
    if (st == PBFCL_OK && !self)
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && any_self)
        st = pbfcl_solver_set_self_collide(solver, self, (size_t)sc->cloth_count);
    free(self);
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_groups(solver, ids, group, w, grouped);
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_distances(solver, all.pair, all.rest, all.compliance, all.tether,
                                        all.constraints);
    if (st == PBFCL_OK)
        st = pbfcl_solver_set_triangles(solver, all.tri, all.triangles);
    float *tear = malloc(((size_t)sc->cloth_count + 1) * sizeof *tear);
    bool tearing = false;
    for (int c = 0; tear && c < sc->cloth_count; c++)
        tearing |= (tear[c] = sc->cloths[c].tear) > 0.0f; /* group c is cloth c */
    if (st == PBFCL_OK && !tear)
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && tearing)
        st = pbfcl_solver_set_tearing(solver, tear, (size_t)sc->cloth_count);
    free(tear);
    if (st == PBFCL_OK)
        st = apply_inflatables(sc, solver, n);
    if (st == PBFCL_OK)
        st = apply_attachments(sc, solver, n);
    pbfcl_cook_free(&all);
    free(ids);
    free(group);
    free(w);
    return st;
}

size_t pbfcl_api_scene_cloth_path(const pbfcl_scene *sc, int o, size_t n, const float center[3],
                                  unsigned *id, float *offset3)
{
    size_t count = 0;
    for (int c = 0; c < sc->cloth_count; c++) {
        const pbfcl_cloth_shape *cl = &sc->cloths[c];
        if (cl->attach != PBFCL_CLOTH_ATTACH_OBSTACLE || cl->attach_index != o)
            continue;
        pbfcl_cloth_cook k;
        if (pbfcl_scene_cloth_cook(sc, c, &k) != PBFCL_OK)
            continue; /* checked when the scene was: cannot fail here */
        size_t first = cloth_first(sc, c, n);
        for (size_t i = 0; i < k.particles; i++)
            if (k.pinned[i]) {
                if (id) {
                    id[count] = (unsigned)(first + i);
                    for (int a = 0; a < 3; a++)
                        offset3[3 * count + a] = k.pos[3 * i + a] - center[a];
                }
                count++;
            }
        pbfcl_cook_free(&k);
    }
    return count;
}
