/* A scene's cloths and ropes: their checks, their particles in the fill (after the
 * obstacles') and their constraints through the cloth cooker (cloth_cook.h). */
#include "runtime/pbfcl_error.h"
#include "scene/cloth_cook.h"
#include "scene/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "cloth[i]", "rope[i]" or "inflatable[i]". */
static void cloth_key(const pbfcl_cloth_shape *c, char *key, size_t size)
{
    snprintf(key, size, "%s[%d]",
             c->inflatable ? "inflatable"
             : c->rope     ? "rope"
                           : "cloth",
             c->index);
}

int pbfcl_inflatable_subdivisions(const pbfcl_scene *s, const pbfcl_cloth_shape *c)
{
    if (c->subdivisions >= 0)
        return c->subdivisions;
    int k = 0; /* an icosahedron's edge is 1.0515 R; each subdivision about halves it */
    while (k < PBFCL_COOK_MAX_SUBDIVISIONS &&
           1.0515 * c->shape.radius / (double)(1 << k) > 2.2 * s->particle_radius)
        k++;
    return k;
}

/* An inflatable's shell: a sphere's or the mesh's (its vertices that triangles use, in their
 * order in the scene's meshes), cooked and checked (inflatable.h's errors name key). */
static pbfcl_status cook_inflatable(const pbfcl_scene *s, const pbfcl_cloth_shape *c,
                                    const char *key, pbfcl_cloth_cook *out)
{
    if (c->shape.kind == PBFCL_SHAPE_SPHERE)
        return pbfcl_cook_sphere(key, c->shape.center, c->shape.radius,
                                 pbfcl_inflatable_subdivisions(s, c), c->stretch, c->bend, out);
    const pbfcl_scene_meshes *m = &s->meshes;
    size_t nt = (size_t)c->shape.mesh_count, nv = 0;
    unsigned *local = malloc((size_t)m->vertex_count * sizeof *local + 1);
    unsigned *tri = malloc(3 * nt * sizeof *tri + 1);
    float *pos = malloc(3 * 3 * nt * sizeof *pos + 1);
    pbfcl_status st = local && tri && pos ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (int v = 0; st == PBFCL_OK && v < m->vertex_count; v++)
        local[v] = UINT32_MAX;
    for (size_t t = 0; st == PBFCL_OK && t < nt; t++)
        for (int j = 0; j < 3; j++) {
            int g = m->triangles[c->shape.mesh_first + (int)t][j];
            if (local[g] == UINT32_MAX) {
                memcpy(pos + 3 * nv, m->vertices[g], 3 * sizeof *pos);
                local[g] = (unsigned)nv++;
            }
            tri[3 * t + j] = local[g];
        }
    if (st == PBFCL_OK)
        st = pbfcl_cook_inflatable(key, pos, nv, tri, nt, c->stretch, c->bend, out);
    free(local);
    free(tri);
    free(pos);
    return st;
}

/* The number of particles of c. */
static size_t cloth_points(const pbfcl_scene *s, const pbfcl_cloth_shape *c)
{
    if (c->inflatable) {
        pbfcl_cloth_cook k;
        char key[32];
        cloth_key(c, key, sizeof key);
        size_t n = cook_inflatable(s, c, key, &k) == PBFCL_OK ? k.particles : 0;
        pbfcl_cook_free(&k);
        return n;
    }
    return c->rope ? (size_t)c->res[0] : (size_t)c->res[0] * (size_t)c->res[1];
}

/* Point (i, j) of c into p. */
static void cloth_point(const pbfcl_cloth_shape *c, int i, int j, float p[3])
{
    double a = (double)i / (c->res[0] - 1), b = c->rope ? 0.0 : (double)j / (c->res[1] - 1);
    for (int k = 0; k < 3; k++)
        p[k] = (float)(c->corner[k] + a * c->u[k] + b * c->v[k]);
}

static bool check_numbers(const pbfcl_scene *s, const pbfcl_cloth_shape *c, const char *key)
{
    int need = c->inflatable ? 0 : c->rope ? 1 : 2;
    int side = PBFCL_CLOTH_MAX_POINTS / (c->rope ? 1 : 2); /* the other side at least 2 */
    for (int d = 0; d < need; d++)
        if (c->res[d] < 2 || c->res[d] > side)
            return pbfcl_scene_error(s, "%s.%s is %d; give 2 to %d", key,
                                     c->rope ? "points" : "resolution", c->res[d], side);
    if (need == 2 && (long long)c->res[0] * c->res[1] > PBFCL_CLOTH_MAX_POINTS)
        return pbfcl_scene_error(s,
                                 "%s.resolution %d x %d is %lld particles, beyond the %d a cloth "
                                 "may have; make it coarser or split it into several cloths",
                                 key, c->res[0], c->res[1], (long long)c->res[0] * c->res[1],
                                 PBFCL_CLOTH_MAX_POINTS);
    if (!(c->stretch >= 0.0f) || isinf(c->stretch) || !(c->bend >= 0.0f) || isinf(c->bend))
        return pbfcl_scene_error(s,
                                 "%s: compliance %g (stretch) or %g (bend) is not a finite "
                                 "number, 0 or above (m/N; 0 is rigid)",
                                 key, c->stretch, c->bend);
    if (!(c->mass > 0.0f) || isinf(c->mass))
        return pbfcl_scene_error(s, "%s.mass is %g; give the mass in kg, above 0", key, c->mass);
    if (!(c->tear >= 0.0f) || isinf(c->tear))
        return pbfcl_scene_error(s,
                                 "%s.tear is %g; give the strain beyond which its edges tear, "
                                 "a finite number above 0 (0 or none: never)",
                                 key, c->tear);
    if (c->tear > 0.0f && c->tethers)
        return pbfcl_scene_error(s,
                                 "%s has tear and tethers: tethers would hold its torn pieces "
                                 "to the pins; drop one of them",
                                 key);
    if (c->inflatable && (!(c->pressure > 0.0f) || isinf(c->pressure)))
        return pbfcl_scene_error(s,
                                 "%s.pressure is %g; give a finite number above 0 (1: it holds "
                                 "its rest volume)",
                                 key, c->pressure);
    if (c->inflatable && (!(c->compliance >= 0.0f) || isinf(c->compliance)))
        return pbfcl_scene_error(s,
                                 "%s.compliance is %g; give a finite number, 0 or above "
                                 "(m^3/Pa; 0 keeps the volume)",
                                 key, c->compliance);
    return true;
}

/* Every vertex of inflatable c inside the domain less the particle radius, its mesh closed. */
static bool check_inflatable(const pbfcl_scene *s, const pbfcl_cloth_shape *c, const char *key)
{
    pbfcl_cloth_cook k;
    if (cook_inflatable(s, c, key, &k) != PBFCL_OK)
        return pbfcl_scene_error(s, "%s: its shape was refused (above)", key);
    double r = s->particle_radius;
    bool ok = true;
    for (size_t i = 0; ok && i < k.particles; i++)
        for (int a = 0; ok && a < 3; a++) {
            float p = k.pos[3 * i + a];
            if (!isfinite(p) || p < s->domain_min[a] + r || p > s->domain_max[a] - r)
                ok = pbfcl_scene_error(s,
                                       "%s: vertex %zu reaches %g along %c, outside the domain "
                                       "less the particle radius (%g..%g); move it inside or "
                                       "make it smaller",
                                       key, i, p, "xyz"[a], s -> domain_min[a] + r,
                                       s -> domain_max[a] - r);
        }
    pbfcl_cook_free(&k);
    return ok;
}

/* Every point of c inside the domain less the particle radius. */
static bool check_inside(const pbfcl_scene *s, const pbfcl_cloth_shape *c, const char *key)
{
    if (c->inflatable)
        return check_inflatable(s, c, key);
    double r = s->particle_radius;
    for (int j = 0; j < (c->rope ? 1 : 2); j++)
        for (int i = 0; i < 2; i++) { /* the corners suffice: the shape is convex */
            float p[3];
            cloth_point(c, i * (c->res[0] - 1), j * (c->res[1] - 1), p);
            for (int k = 0; k < 3; k++)
                if (!isfinite(p[k]) || p[k] < s->domain_min[k] + r || p[k] > s->domain_max[k] - r)
                    return pbfcl_scene_error(
                        s,
                        "%s reaches %g along %c, outside the domain less the particle radius "
                        "(%g..%g); move it inside or make it smaller",
                        key, p[k], "xyz"[k], s -> domain_min[k] + r, s -> domain_max[k] - r);
        }
    return true;
}

void pbfcl_cloth_shape_defaults(pbfcl_cloth_shape *c, bool rope)
{
    memset(c, 0, sizeof *c);
    c->rope = rope;
    c->bend = 1e-3f;
    c->tethers = true;
}

void pbfcl_inflatable_shape_defaults(pbfcl_cloth_shape *c)
{
    pbfcl_cloth_shape_defaults(c, false);
    c->inflatable = true;
    c->shape.kind = PBFCL_SHAPE_SPHERE;
    c->subdivisions = -1; /* as the particle radius asks */
    c->pressure = 1.0f;
}

/* c's attach: a collider, body or obstacle of the scene, pinned particles to hold. */
static bool check_attach(const pbfcl_scene *s, const pbfcl_cloth_shape *c, const char *key)
{
    static const char *const what[] = {NULL, "collider", "body", "obstacle"};
    static const char *const list[] = {NULL, "colliders", "bodies", "obstacles"};
    if (c->attach == PBFCL_CLOTH_ATTACH_WORLD)
        return true;
    if (c->attach < PBFCL_CLOTH_ATTACH_COLLIDER || c->attach > PBFCL_CLOTH_ATTACH_OBSTACLE)
        return pbfcl_scene_error(s, "%s.attach is %d; give a collider, a body or an obstacle", key,
                                 c->attach);
    int have = c->attach == PBFCL_CLOTH_ATTACH_COLLIDER
                   ? s->collider_count
                   : (c->attach == PBFCL_CLOTH_ATTACH_BODY ? s->body_count : s->obstacle_count);
    if (c->attach_index < 0 || c->attach_index >= have)
        return pbfcl_scene_error(s,
                                 "%s.attach names %s %d, but the scene has %d; give an index "
                                 "below %d of \"%s\"",
                                 key, what[c->attach], c->attach_index, have, have,
                                 list[c->attach]);
    if (c->pin == 0)
        return pbfcl_scene_error(s,
                                 "%s.attach holds its pinned particles, and it has none; give "
                                 "\"pin\" too",
                                 key);
    return true;
}

bool pbfcl_scene_check_cloths(const pbfcl_scene *s)
{
    if (s->cloth_count < 0 || s->cloth_count > PBFCL_MAX_CLOTHS)
        return pbfcl_scene_error(s,
                                 "the scene may have 0 to %d cloths, ropes and inflatables "
                                 "together (has %d)",
                                 PBFCL_MAX_CLOTHS, s->cloth_count);
    if (s->cloth_count > 0 && s->solver.method != PBFCL_METHOD_PBF)
        return pbfcl_scene_error(s, "cloths, ropes and inflatables need solver.method pbf; remove "
                                    "\"cloth\", \"rope\" and \"inflatable\" or the method");
    for (int i = 0; i < s->cloth_count; i++) {
        const pbfcl_cloth_shape *c = &s->cloths[i];
        char key[32];
        cloth_key(c, key, sizeof key);
        if (!check_numbers(s, c, key) || !check_inside(s, c, key))
            return false;
        if (!check_attach(s, c, key))
            return false;
    }
    return true;
}

size_t pbfcl_scene_cloth_walk(const pbfcl_scene *s, int c, float *out)
{
    const pbfcl_cloth_shape *cl = &s->cloths[c];
    if (out && cl->inflatable) {
        pbfcl_cloth_cook k;
        char key[32];
        cloth_key(cl, key, sizeof key);
        if (cook_inflatable(s, cl, key, &k) == PBFCL_OK)
            memcpy(out, k.pos, 3 * k.particles * sizeof *out);
        pbfcl_cook_free(&k);
    }
    if (out && !cl->inflatable)
        for (int j = 0; j < (cl->rope ? 1 : cl->res[1]); j++)
            for (int i = 0; i < cl->res[0]; i++)
                cloth_point(cl, i, j, out + 3 * ((size_t)j * cl->res[0] + i));
    return cloth_points(s, cl);
}

/* Marks the particles c's pin bits name. */
static void mark_pins(const pbfcl_cloth_shape *c, unsigned char *pinned)
{
    int nu = c->res[0], nv = c->rope ? 1 : c->res[1];
    for (int j = 0; j < nv; j++)
        for (int i = 0; i < nu; i++) {
            bool i0 = i == 0, i1 = i == nu - 1, j0 = j == 0, j1 = j == nv - 1;
            unsigned bits =
                (i0 && j0 ? PBFCL_PIN_CORNER00 : 0) | (i1 && j0 ? PBFCL_PIN_CORNER10 : 0) |
                (i0 && j1 ? PBFCL_PIN_CORNER01 : 0) | (i1 && j1 ? PBFCL_PIN_CORNER11 : 0) |
                (j0 ? PBFCL_PIN_EDGE_U0 : 0) | (j1 ? PBFCL_PIN_EDGE_U1 : 0) |
                (i0 ? PBFCL_PIN_EDGE_V0 : 0) | (i1 ? PBFCL_PIN_EDGE_V1 : 0);
            pinned[(size_t)j * nu + i] = (c->pin & bits) != 0;
        }
}

pbfcl_status pbfcl_scene_cloth_cook(const pbfcl_scene *s, int c, pbfcl_cloth_cook *out)
{
    const pbfcl_cloth_shape *cl = &s->cloths[c];
    char key[32];
    cloth_key(cl, key, sizeof key);
    memset(out, 0, sizeof *out);
    if (cl->inflatable) { /* no pins: nothing holds it but its gas and its shell */
        PBFCL_TRY(cook_inflatable(s, cl, key, out));
        return PBFCL_OK;
    }
    size_t n = cloth_points(s, cl);
    float *pos = malloc(3 * n * sizeof *pos);
    unsigned char *pinned = calloc(n, 1);
    pbfcl_status st = pos && pinned ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && cl->rope) {
        pbfcl_scene_cloth_walk(s, c, pos);
        st = pbfcl_cook_rope(key, pos, n, cl->stretch, cl->bend, out);
    } else if (st == PBFCL_OK) {
        st = pbfcl_cook_grid(key, cl->corner, cl->u, cl->v, cl->res[0], cl->res[1], cl->stretch,
                             cl->bend, out);
    }
    if (st == PBFCL_OK) {
        mark_pins(cl, pinned);
        st = pbfcl_cook_pin(out, pinned, cl->tethers);
    }
    if (st != PBFCL_OK)
        pbfcl_cook_free(out);
    free(pos);
    free(pinned);
    return st;
}

/* --- built-in scenes ---------------------------------------------------------------- */

static void set3(float v[3], float x, float y, float z)
{
    v[0] = x;
    v[1] = y;
    v[2] = z;
}

/* A 2 cm deep pool over the floor (the fill needs fluid) of a box of size x * 0.6 * z. */
static void small_box_with_pool(pbfcl_scene *s, float x, float z)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, x, 0.6f, z);
    s->particle_radius = 0.01f;
    pbfcl_fluid_shape *f = &s->fluid[s->fluid_count++];
    memset(f, 0, sizeof *f);
    f->kind = PBFCL_SHAPE_BOX;
    set3(f->min, 0.0f, 0.0f, 0.0f);
    set3(f->max, x, 0.02f, z);
}

static pbfcl_cloth_shape *add_cloth(pbfcl_scene *s, bool rope)
{
    pbfcl_cloth_shape *c = &s->cloths[s->cloth_count++];
    pbfcl_cloth_shape_defaults(c, rope);
    return c;
}

void pbfcl_scene_builtin_cloth_drape(pbfcl_scene *s)
{
    small_box_with_pool(s, 0.6f, 0.6f);
    pbfcl_fluid_shape *o = &s->obstacles[s->obstacle_count++];
    memset(o, 0, sizeof *o);
    o->kind = PBFCL_SHAPE_SPHERE;
    set3(o->center, 0.3f, 0.2f, 0.3f);
    o->radius = 0.1f;
    pbfcl_cloth_shape *c = add_cloth(s, false);
    set3(c->corner, 0.1f, 0.4f, 0.1f);
    set3(c->u, 0.4f, 0.0f, 0.0f);
    set3(c->v, 0.0f, 0.0f, 0.4f);
    c->res[0] = c->res[1] = 21;
    c->mass = 0.2f;
    c->bend = 1e-2f;
    s->solver.iterations = 12; /* draped, its edges stretched 7.7 % on average at 4, 3.9 % at 12 */
}

void pbfcl_scene_builtin_water_balloon(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 0.6f, 0.8f, 0.6f);
    s->particle_radius = 0.01f;
    pbfcl_fluid_shape *f = &s->fluid[s->fluid_count++];
    memset(f, 0, sizeof *f);
    f->kind = PBFCL_SHAPE_BOX;
    set3(f->min, 0.0f, 0.0f, 0.0f);
    set3(f->max, 0.6f, 0.2f, 0.6f);
    pbfcl_cloth_shape *c = &s->cloths[s->cloth_count++];
    pbfcl_inflatable_shape_defaults(c);
    set3(c->shape.center, 0.3f, 0.55f, 0.3f);
    c->shape.radius = 0.08f;
    /* subdivisions from the particle radius: at 1 cm, 2 (162 particles 2.1 cm apart: a fluid
     * particle, 2 cm across, cannot pass; with 3, 1 cm apart, the neighbour lists overflowed
     * beside the shell) */
    c->mass = 1.0f;
    c->stretch = 1e-5f; /* a rubber shell that gives a little */
    c->bend = 1e-3f;
    /* air at 1 atm: its compliance V / P, (4/3) pi 0.08^3 m^3 / 101325 Pa */
    c->compliance = 2.1e-8f;
    /* Inflated 3 % beyond its rest volume and held by 12 iterations: a slack balloon (pressure
     * 1, gauge pressure about 250 Pa, below the pool's 640 Pa at its bottom) let the water
     * push its bottom cap in, which a shell of rigid edges holds inverted as well as out
     * (4.5 cm inside the mean radius, for good); at 4 iterations the shell gave way to the gas
     * and the water (2.5 cm with pressure 1 at 12, 3.9 cm with 1.03 at 4; 1.3 to 1.5 cm now). */
    c->pressure = 1.03f;
    s->solver.iterations = 12;
}

void pbfcl_scene_builtin_rope_bridge(pbfcl_scene *s)
{
    small_box_with_pool(s, 1.0f, 0.4f);
    pbfcl_cloth_shape *c = add_cloth(s, true);
    set3(c->corner, 0.1f, 0.4f, 0.2f);
    set3(c->u, 0.8f, 0.0f, 0.0f);
    c->res[0] = 41;
    c->mass = 0.1f;
    c->stretch = 2e-3f;
    c->bend = 1e-2f;
    c->pin = PBFCL_PIN_CORNER00 | PBFCL_PIN_CORNER10;
    c->tethers = false;        /* an elastic rope: tethers to both ends would keep it straight */
    s->solver.iterations = 20; /* a long chain: few iterations leave it stretched */
    s->solver.substeps = 4;    /* the cube does not pass through a rope one particle thick */
    pbfcl_body_shape *b = &s->bodies[s->body_count++];
    memset(b, 0, sizeof *b);
    b->shape.kind = PBFCL_SHAPE_BOX;
    set3(b->shape.min, 0.47f, 0.5f, 0.17f);
    set3(b->shape.max, 0.53f, 0.56f, 0.23f);
    b->density = 500.0f;
    b->stiffness = 1.0f;
}

void pbfcl_scene_builtin_flag(pbfcl_scene *s)
{
    small_box_with_pool(s, 0.8f, 0.5f);
    pbfcl_cloth_shape *c = add_cloth(s, false);
    set3(c->corner, 0.15f, 0.3f, 0.1f); /* the pole: x 0.15, z 0.1, y 0.3..0.5 */
    set3(c->u, 0.0f, 0.0f, 0.3f);       /* across the wind at the start */
    set3(c->v, 0.0f, 0.2f, 0.0f);
    c->res[0] = 16;
    c->res[1] = 11;
    c->mass = 0.03f;
    c->bend = 1e-2f;
    c->pin = PBFCL_PIN_EDGE_V0;
    c->tethers = false;        /* as the flag was made and measured (tethers are on by default) */
    s->solver.iterations = 20; /* 16 particles from the pole: 10 stretched its edges 30 % */
    s->solver.substeps = 6;    /* with 20 iterations, 12 % at most */
    s->solver.wind_x = 4.0f;
    s->solver.drag = 0.6f; /* air: 1/2 rho C with rho 1.2 kg/m^3 and C 1 */
    s->solver.lift = 0.3f;
}
