/* The built-in scenes of collision shapes (docs/SCENES.md): pour (water poured from a tilting
 * cup into a second cup, both thin two-sided meshes) and mesh-container (a dam break inside a
 * closed mesh tank of finely cut walls, over a ramp that is an SDF). Their meshes are the
 * scene's own (pbfcl_scene_meshes), in each shape's frame. */
#include "scene/scene.h"

#include <string.h>

static void set3(float v[3], float x, float y, float z)
{
    v[0] = x;
    v[1] = y;
    v[2] = z;
}

/* Adds vertex (x, y, z) to the scene's meshes; returns its index. */
static int vertex(pbfcl_scene *s, float x, float y, float z)
{
    set3(s->meshes.vertices[s->meshes.vertex_count], x, y, z);
    return s->meshes.vertex_count++;
}

static void triangle(pbfcl_scene *s, int a, int b, int c)
{
    int *t = s->meshes.triangles[s->meshes.triangle_count++];
    t[0] = a, t[1] = b, t[2] = c;
}

/* The quad a, b, c, d (counter-clockwise from its front) as two triangles. */
static void quad(pbfcl_scene *s, int a, int b, int c, int d)
{
    triangle(s, a, b, c);
    triangle(s, a, c, d);
}

/* A collider of the scene's triangles from first on, at position. */
static pbfcl_scene_collider *mesh_collider(pbfcl_scene *s, int type, int first, float x, float y,
                                           float z)
{
    pbfcl_scene_collider *c = &s->colliders[s->collider_count++];
    memset(c, 0, sizeof *c);
    c->type = type;
    c->mesh_first = first;
    c->mesh_count = s->meshes.triangle_count - first;
    set3(c->position, x, y, z);
    return c;
}

/* An open cup of no thickness: the floor y = y0 and four walls up to y1 around x0..x1, z0..z1
 * (ten triangles facing in; two-sided, so either side holds). */
static void open_cup(pbfcl_scene *s, float x0, float x1, float y0, float y1, float z0, float z1)
{
    int v[8];
    for (int k = 0; k < 8; k++)
        v[k] = vertex(s, k & 1 ? x1 : x0, k & 4 ? y1 : y0, k & 2 ? z1 : z0);
    quad(s, v[0], v[2], v[3], v[1]); /* the floor, facing up */
    quad(s, v[0], v[1], v[5], v[4]); /* z0 */
    quad(s, v[2], v[6], v[7], v[3]); /* z1 */
    quad(s, v[0], v[4], v[6], v[2]); /* x0 */
    quad(s, v[1], v[3], v[7], v[5]); /* x1 */
}

void pbfcl_scene_builtin_pour(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 1.2f, 1.0f, 0.6f);
    s->particle_radius = 0.01f;
    /* cup A, 0.2 x 0.2 x 0.24 m, its frame at the middle of the lip it pours over (x = 0.55,
     * 0.62 m up): it tilts about z at 1.2 rad/s for 1.6 s (110 degrees) */
    int first = s->meshes.triangle_count;
    open_cup(s, -0.2f, 0.0f, -0.2f, 0.0f, -0.12f, 0.12f);
    pbfcl_scene_collider *a = mesh_collider(s, PBFCL_SHAPE_KIND_MESH, first, 0.55f, 0.62f, 0.3f);
    a->two_sided = 1;
    a->angular_velocity[2] = -1.2f;
    a->until = 1.6f;
    a->friction = 0.1f;
    /* cup B on the floor below the lip: 0.6 x 0.29 x 0.5 m, walls up to 0.3 m */
    first = s->meshes.triangle_count;
    open_cup(s, -0.3f, 0.3f, 0.0f, 0.29f, -0.25f, 0.25f);
    pbfcl_scene_collider *b = mesh_collider(s, PBFCL_SHAPE_KIND_MESH, first, 0.75f, 0.01f, 0.3f);
    b->two_sided = 1;
    b->friction = 0.1f;
    pbfcl_fluid_shape *f = &s->fluid[s->fluid_count++]; /* A's water, 0.14 m deep */
    memset(f, 0, sizeof *f);
    f->kind = PBFCL_SHAPE_BOX;
    set3(f->min, 0.36f, 0.43f, 0.19f);
    set3(f->max, 0.54f, 0.57f, 0.41f);
}

/* The face of the box lo..hi on axis a at side (0: lo, 1: hi) cut into n x n quads facing in. */
static void tank_face(pbfcl_scene *s, const float lo[3], const float hi[3], int a, int side, int n)
{
    int u = (a + 1) % 3, w = (a + 2) % 3, base = s->meshes.vertex_count;
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++) {
            float p[3];
            p[a] = side ? hi[a] : lo[a];
            p[u] = lo[u] + (hi[u] - lo[u]) * (float)i / (float)n;
            p[w] = lo[w] + (hi[w] - lo[w]) * (float)j / (float)n;
            vertex(s, p[0], p[1], p[2]);
        }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            int c = base + j * (n + 1) + i; /* (u, w) counter-clockwise faces +a: in at lo */
            if (side)
                quad(s, c, c + n + 1, c + n + 2, c + 1);
            else
                quad(s, c, c + 1, c + n + 2, c + n + 1);
        }
}

void pbfcl_scene_builtin_mesh_container(pbfcl_scene *s)
{
    set3(s->domain_min, 0.0f, 0.0f, 0.0f);
    set3(s->domain_max, 1.6f, 1.0f, 0.6f);
    s->particle_radius = 0.01f;
    /* the tank 0.02 m inside the box, each face cut into 16 x 16 quads (3072 triangles) */
    const float lo[3] = {0.02f, 0.02f, 0.02f}, hi[3] = {1.58f, 0.98f, 0.58f};
    int first = s->meshes.triangle_count;
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++)
            tank_face(s, lo, hi, a, side, 16);
    pbfcl_scene_collider *t = mesh_collider(s, PBFCL_SHAPE_KIND_MESH, first, 0.0f, 0.0f, 0.0f);
    t->two_sided = 1;
    /* the ramp: a closed solid rising from the floor at x = 0.9 to 0.2 m at x = 1.4, across
     * the tank, as a signed distance field, set 2 cm into the tank's floor and side walls. A
     * wedge standing on the floor between the walls put its bottom face and ends in their
     * planes: near the toe, thinner than the field's cells, the field's gradient pointed down
     * (or out through an end), and particles pushed out of the ramp went through the tank's
     * floor (at 1M, 3,000 in 20 frames) and side walls. */
    first = s->meshes.triangle_count;
    static const float profile[4][2] = {{-0.25f, -0.02f},
                                        {0.25f, -0.02f},
                                        {0.25f, 0.2f},
                                        {-0.25f, 0.0f}}; /* (x, y) counter-clockwise: */
    int v[8]; /* the base's front and back, the top at the back, the toe; z = -0.3, then 0.3 */
    for (int k = 0; k < 8; k++)
        v[k] = vertex(s, profile[k % 4][0], profile[k % 4][1], k < 4 ? -0.3f : 0.3f);
    quad(s, v[0], v[3], v[2], v[1]); /* the end at z = -0.3, facing -z */
    quad(s, v[4], v[5], v[6], v[7]); /* z = 0.3 */
    for (int k = 0; k < 4; k++)      /* the base, the back, the slope, the toe's front */
        quad(s, v[k], v[(k + 1) % 4], v[4 + (k + 1) % 4], v[4 + k]);
    pbfcl_scene_collider *r = mesh_collider(s, PBFCL_SHAPE_KIND_SDF, first, 1.15f, 0.02f, 0.3f);
    r->resolution = 40;
    r->friction = 0.1f;
    pbfcl_fluid_shape *f = &s->fluid[s->fluid_count++]; /* the column at the x = 0 end */
    memset(f, 0, sizeof *f);
    f->kind = PBFCL_SHAPE_BOX;
    set3(f->min, 0.03f, 0.03f, 0.03f);
    set3(f->max, 0.5f, 0.6f, 0.57f);
}
