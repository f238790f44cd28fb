/* Scenes: the domain, gravity, particle size, fluid blocks and solver settings of a
 * simulation; built-in scenes, JSON scene files, and the lattice that fills the fluid. */
#ifndef PBFCL_SCENE_H
#define PBFCL_SCENE_H

#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

#define PBFCL_MAX_FLUID_SHAPES 32

typedef enum pbfcl_shape_kind {
    PBFCL_SHAPE_BOX,
    PBFCL_SHAPE_SPHERE,
    PBFCL_SHAPE_CAPSULE,
    PBFCL_SHAPE_MESH
} pbfcl_shape_kind;

/* One block of fluid: an axis-aligned box or a sphere (an obstacle may also be a capsule or a
 * closed triangle mesh). */
typedef struct pbfcl_fluid_shape {
    pbfcl_shape_kind kind;
    float min[3], max[3]; /* box; a mesh's bounds */
    float center[3];      /* sphere */
    float radius;         /* sphere, capsule */
    float a[3], b[3];     /* capsule: the ends of its axis */
    int mesh_first;       /* mesh: its triangles in the scene's pbfcl_scene_meshes */
    int mesh_count;
} pbfcl_fluid_shape;

/* The most vertices and triangles of all the meshes of a scene together. */
#define PBFCL_MAX_MESH_VERTICES 2048
#define PBFCL_MAX_MESH_TRIANGLES 4096

/* The triangle meshes of a scene's shapes, in scene coordinates (scaled, rotated and moved
 * as the scene file says); a shape of kind PBFCL_SHAPE_MESH uses triangles [mesh_first,
 * mesh_first + mesh_count). Held in the scene, so a scene is copied with its meshes. */
typedef struct pbfcl_scene_meshes {
    int vertex_count, triangle_count;
    float vertices[PBFCL_MAX_MESH_VERTICES][3];
    int triangles[PBFCL_MAX_MESH_TRIANGLES][3];
} pbfcl_scene_meshes;

/* The largest kernel radius ratio h / r: the rest lattice (spacing 2r) then has 32 neighbours
 * within h, two thirds of the solver's neighbour lists (64, host/core/sim/sim.c); at 2 sqrt(5)
 * the next shell adds 24. */
#define PBFCL_MAX_H_RATIO 4.4721

#define PBFCL_MAX_BODIES 256
#define PBFCL_MAX_OBSTACLES 64

/* The range of a body's density, kg/m^3, and the fewest particles that sample a body (shape
 * matching needs a rest shape with volume). */
#define PBFCL_BODY_DENSITY_MIN 0.1f
#define PBFCL_BODY_DENSITY_MAX 1e5f
#define PBFCL_BODY_MIN_PARTICLES 4

/* One rigid or soft body at the start: a box or a sphere sampled on the fluid's lattice. */
#define PBFCL_MAX_EMITTERS 16
#define PBFCL_MAX_DRAINS 16

/* A nozzle: a disc of radius `radius` at `center`, facing `velocity`, that emits fluid
 * particles in layers (the lattice points of the disc, spacing 2r) at `rate` particles/s,
 * `count` of them in all. */
typedef struct pbfcl_emitter {
    float center[3], radius, velocity[3], rate;
    long long count;
} pbfcl_emitter;

typedef struct pbfcl_body_shape {
    pbfcl_fluid_shape shape;
    float density;   /* kg/m^3 */
    float stiffness; /* (0, 1]: 1 rigid, below 1 soft */
    float velocity[3];
} pbfcl_body_shape;

#define PBFCL_MAX_PATH_KEYS 32

/* One key of a keyframed path: at `time` the obstacle's centre has moved by `position` from
 * where it started and the obstacle has turned about it by the rotation vector `rotation`
 * (axis times angle) from its starting pose. Between keys both are interpolated linearly. */
typedef struct pbfcl_path_key {
    float time;        /* s, above 0 */
    float position[3]; /* m */
    float rotation[3]; /* rad */
} pbfcl_path_key;

/* How an obstacle moves (kinematic), in one of two ways. With rates: at time t (t' = min(t,
 * until)) each of its particles is at c + velocity t' + R(angular_velocity t') (x0 - c), c the
 * centre of the obstacle's bounds and x0 where the particle started; until 0: it never stops.
 * With keys (key_count > 0, rates all zero): from an implicit key at time 0 (no displacement,
 * no rotation) through keys[0..key_count) at increasing times, it is at c + p(t) + R(r(t))
 * (x0 - c), p and r interpolated linearly between the keys; after the last key it stays there,
 * or with repeat the path starts again (the last key must then be the starting pose). All
 * zero: it never moves. */
typedef struct pbfcl_obstacle_motion {
    float velocity[3];         /* m/s */
    float angular_velocity[3]; /* rad/s, about c */
    float until;               /* s; 0: never */
    pbfcl_path_key keys[PBFCL_MAX_PATH_KEYS];
    int key_count;
    bool repeat;
} pbfcl_obstacle_motion;

/* One cloth (a rectangular grid: corner + i / (nu - 1) u + j / (nv - 1) v, particle i + nu j)
 * or rope (res[0] points from corner to corner + u) at the start, held by distance constraints
 * (scene_cloth.c, cloth_cook.h); its particles follow the obstacles' in the fill. */
#define PBFCL_MAX_CLOTHS 16
/* The most particles of one cloth or rope (2048 x 2048): about 7 constraints each, 17 bytes a
 * constraint cooked, so the cooker's arrays stay near 0.5 GB. */
#define PBFCL_CLOTH_MAX_POINTS 4194304
enum { /* the pinned particles: bits of pbfcl_cloth_shape.pin */
       PBFCL_PIN_CORNER00 =
           1, /* a cloth's corners (i, j) = (0, 0), (nu - 1, 0), ...; a rope's start */
       PBFCL_PIN_CORNER10 = 2, /* a rope's end */
       PBFCL_PIN_CORNER01 = 4,
       PBFCL_PIN_CORNER11 = 8,
       PBFCL_PIN_EDGE_U0 = 16, /* the edge along u at j = 0 */
       PBFCL_PIN_EDGE_U1 = 32, /* the edge along u at j = nv - 1 */
       PBFCL_PIN_EDGE_V0 = 64, /* the edge along v at i = 0 */
       PBFCL_PIN_EDGE_V1 = 128 /* the edge along v at i = nu - 1 */
};
enum { /* what holds a cloth's or rope's pinned particles: pbfcl_cloth_shape.attach */
       PBFCL_CLOTH_ATTACH_WORLD = 0,    /* nothing: they are static */
       PBFCL_CLOTH_ATTACH_COLLIDER = 1, /* a collider: static, moved with it */
       PBFCL_CLOTH_ATTACH_BODY = 2,    /* a body: free, held to it (pbfcl_solver_set_attachments) */
       PBFCL_CLOTH_ATTACH_OBSTACLE = 3 /* an obstacle: static, on its path if it moves */
};
typedef struct pbfcl_cloth_shape {
    bool rope;
    bool inflatable; /* a closed mesh holding a volume of gas: the shape below, no pins */
    int index;       /* among the scene's cloths or ropes (for messages) */
    float corner[3], u[3], v[3]; /* m */
    int res[2];                  /* particles along u and v (a rope: res[0]) */
    unsigned pin;                /* PBFCL_PIN_* bits */
    float stretch, bend;         /* compliance, m/N (0: rigid) */
    float mass;                  /* kg, the whole cloth or rope's */
    bool tethers;                /* tethers from the free particles to each anchor */
    float tear; /* a cloth's stretch edges tear beyond this strain (0: never; cloth_tear.h) */
    bool self_collide;          /* a cloth's particles collide with each other */
    pbfcl_fluid_shape shape;    /* inflatable: a sphere (center, radius) or a mesh */
    int subdivisions;           /* inflatable sphere: of an icosahedron, 0 to 6; -1: auto */
    float pressure, compliance; /* inflatable: of its gas (inflatable.h), m^3/Pa */
    int attach;                 /* PBFCL_CLOTH_ATTACH_*: what holds the pinned particles */
    int attach_index;           /* the scene's collider, body or obstacle that holds them */
} pbfcl_cloth_shape;

/* Solver settings (SI units): the public struct, one field per entry of the parameter list
 * PBFCL_SOLVER_PARAM_LIST (include/pbfcl.h), which gives each one's default, range and unit. */
typedef pbfcl_solver_params pbfcl_solver_settings;

/* The most collision shapes a scene file gives (its "colliders" key). */
#define PBFCL_MAX_SCENE_COLLIDERS 16

/* One collision shape of a scene file (docs/SCENES.md, "Colliders"): the public description's
 * values, a convex hull's, a mesh's or an SDF's vertices read from file (relative to the scene
 * file) or, with no file (the built-in scenes), triangles [mesh_first, mesh_first +
 * mesh_count) of the scene's meshes, in the shape's own frame. */
typedef struct pbfcl_scene_collider {
    int type; /* a pbfcl_shape_type */
    float radius, half_length, half_extents[3], scale;
    int two_sided;
    int resolution; /* sdf: cells along the mesh's longest side (0: the default) */
    float position[3], rotation[4], velocity[3], angular_velocity[3];
    float until; /* s of motion from the start (0: for ever) */
    float friction, static_friction, margin;
    int mesh_first, mesh_count;
    char file[4096];
} pbfcl_scene_collider;

/* A complete scene description. */
typedef struct pbfcl_scene {
    char name[64];
    float domain_min[3], domain_max[3]; /* the box, m */
    float gravity[3];                   /* m/s^2 */
    float particle_radius;              /* r, m; particles are spaced 2r */
    float rest_density;                 /* kg/m^3 */
    pbfcl_fluid_shape fluid[PBFCL_MAX_FLUID_SHAPES];
    int fluid_count;
    pbfcl_body_shape bodies[PBFCL_MAX_BODIES];
    int body_count;
    pbfcl_emitter emitters[PBFCL_MAX_EMITTERS];
    int emitter_count;
    pbfcl_fluid_shape drains[PBFCL_MAX_DRAINS]; /* boxes that remove the fluid entering them */
    int drain_count;
    pbfcl_fluid_shape obstacles[PBFCL_MAX_OBSTACLES]; /* static: sampled as boundary particles */
    pbfcl_obstacle_motion obstacle_motion[PBFCL_MAX_OBSTACLES];
    int obstacle_count;
    pbfcl_cloth_shape cloths[PBFCL_MAX_CLOTHS]; /* cloths and ropes */
    int cloth_count;
    pbfcl_scene_meshes meshes;
    pbfcl_scene_collider colliders[PBFCL_MAX_SCENE_COLLIDERS]; /* shapes, not particles */
    int collider_count;
    pbfcl_solver_settings solver;
} pbfcl_scene;

/* Fills s with the defaults: the parameter list's solver settings, gravity -9.81 m/s^2 along
 * y, rest density 1000, r = 1 cm, a unit box, no fluid. */
void pbfcl_scene_defaults(pbfcl_scene *s);

/* Loads a built-in scene by name (dam-break, double-dam-break, drop, dam-break-bodies, soft-ball,
 * fountain, cloth-drape, rope-bridge, flag) or a JSON
 * scene file (a name ending in .json or containing '/'); an unknown name lists the built-in ones.
 */
pbfcl_status pbfcl_scene_load(const char *name_or_file, pbfcl_scene *out);

/* Rejects values that make no sense (negative radius, zero iterations, fluid outside the
 * domain, ...) with a message naming the parameter; never clamps. */
pbfcl_status pbfcl_scene_validate(const pbfcl_scene *s);

/* The same for the domain, material and solver settings alone (the fluid shapes are not
 * looked at): what a solver fed by the API checks. */
pbfcl_status pbfcl_scene_validate_settings(const pbfcl_scene *s);

/* Sets the particle radius so that filling the scene gives about target particles. */
pbfcl_status pbfcl_scene_set_particle_count(pbfcl_scene *s, size_t target);

/* Fills the fluid shapes, then the bodies (body 0's particles, body 1's, ...), then the
 * obstacles on a lattice of spacing 2r: *positions (malloc'ed, x y z triples, free it) and *n.
 * Fluid points inside a body or an obstacle are left out. */
pbfcl_status pbfcl_scene_fill(const pbfcl_scene *s, float **positions, size_t *n);

/* The most particles a scene may be filled with (a larger count is rejected, not clamped):
 * the solver's limit, 2^32 / 64 neighbour-list entries (host/core/sim/sim.c). */
#define PBFCL_SCENE_MAX_PARTICLES 67108863ull

/* The most particle spacings (2r) a domain may span along an axis (lattice indices stay far
 * inside integer range; the solver's grid takes far fewer). */
#define PBFCL_SCENE_MAX_SPACINGS 1e9

/* The ranges of the scene-level settings (pbfcl_scene_range, pbfcl_range_holds,
 * pbfcl_range_text) are public (include/pbfcl.h). */

/* Loads a built-in scene or a scene file like pbfcl_scene_load, without validating it (the
 * caller applies overrides first, then validates). */
pbfcl_status pbfcl_scene_parse(const char *name_or_file, pbfcl_scene *out);

/* Validates everything that does not depend on the particle radius (for a scene whose radius
 * --particles is about to replace). */
pbfcl_status pbfcl_scene_validate_layout(const pbfcl_scene *s);

/* pbfcl_scene_is_file (a name that is a file, not a built-in) is public (include/pbfcl.h). */

/* Parses a JSON scene file into out without validating the values (pbfcl_scene_load_json
 * validates). */
pbfcl_status pbfcl_scene_parse_json(const char *path, pbfcl_scene *out);

/* Parses the NUL-terminated JSON text of a scene file (path names it in messages) without
 * validating the values (the fuzz target's entry point, tests/fuzz/). */
pbfcl_status pbfcl_scene_parse_json_text(const char *path, const char *text, pbfcl_scene *out);

/* pbfcl_scene_builtin_names (the built-in scenes' names) is public (include/pbfcl.h). */

/* Loads and validates a JSON scene file (docs/SCENES.md); errors name the file and the key.
 * Without cJSON in the build it fails with PBFCL_ERR_UNSUPPORTED and says so. */
pbfcl_status pbfcl_scene_load_json(const char *path, pbfcl_scene *out);

/* Counts the particles pbfcl_scene_fill would make, without allocating them. */
size_t pbfcl_scene_count(const pbfcl_scene *s);

/* --- bodies (host/core/scene/scene_bodies.c) --- */

/* Whether lattice point p lies in shape f of scene s (tol: a small margin, m). */
bool pbfcl_scene_inside(const pbfcl_scene *s, const pbfcl_fluid_shape *f, const double p[3],
                        double tol);

/* Checks a fluid or body shape (where names it in messages: "fluid[0]", "bodies[1].box") is
 * finite, not empty and inside the domain. */
bool pbfcl_scene_check_shape(const pbfcl_scene *s, const char *where, const pbfcl_fluid_shape *f);

/* Checks each body's shape, density, stiffness and velocity, and that it lies in the domain
 * (nothing that depends on the particle radius); errors name body[i] and the key. */
bool pbfcl_scene_check_bodies(const pbfcl_scene *s);

/* Checks what depends on the particle radius: each body holds at least
 * PBFCL_BODY_MIN_PARTICLES lattice points and shares none with another body. */
bool pbfcl_scene_check_body_sampling(const pbfcl_scene *s);

/* The lattice points of body b (in the order pbfcl_scene_fill writes them) into out if not
 * NULL (xyz triples); returns their count. */
size_t pbfcl_scene_body_walk(const pbfcl_scene *s, int b, float *out);

/* The axis-aligned bounds of a shape. */
void pbfcl_scene_shape_bounds(const pbfcl_fluid_shape *f, float lo[3], float hi[3]);

/* --- cloths and ropes (host/core/scene/scene_cloth.c) --- */

/* A cloth's or rope's values where a scene file gives none: no pins, stretch compliance 0,
 * bend compliance 1e-3 m/N, tethers on (they act only with a pinned particle); zero shape. */
void pbfcl_cloth_shape_defaults(pbfcl_cloth_shape *c, bool rope);

/* An inflatable's: as a cloth's, and a sphere of subdivisions chosen from the particle radius
 * (-1), pressure 1, compliance 0. */
void pbfcl_inflatable_shape_defaults(pbfcl_cloth_shape *c);

/* The subdivisions of inflatable sphere c: its own, or with -1 the fewest (up to 6) that put
 * its particles at most 2.2 particle radii apart (closer lets no fluid particle through the
 * shell without overfilling the neighbour lists beside it). */
int pbfcl_inflatable_subdivisions(const pbfcl_scene *s, const pbfcl_cloth_shape *c);

/* Checks each cloth's, rope's and inflatable's values and that it lies inside the domain less
 * the particle radius; errors name cloth[i], rope[i] or inflatable[i] and the key. */
bool pbfcl_scene_check_cloths(const pbfcl_scene *s);

/* The particle positions of cloth c (as pbfcl_scene_fill writes them) into out if not NULL;
 * their number. */
size_t pbfcl_scene_cloth_walk(const pbfcl_scene *s, int c, float *out);

/* The particles and constraints of cloth c (pinned, tethers as the scene says). */
struct pbfcl_cloth_cook;
pbfcl_status pbfcl_scene_cloth_cook(const pbfcl_scene *s, int c, struct pbfcl_cloth_cook *out);

/* Built-in scenes: cloth-drape, a 21 x 21 cloth 0.4 m square (0.2 kg) falling from 0.4 m onto
 * a static sphere of radius 0.1 m over a 2 cm pool in a 0.6 m box; rope-bridge, a rope of 41
 * points 0.8 m long pinned at both ends 0.4 m up with a 6 cm cube (500 kg/m^3) dropped on it. */
void pbfcl_scene_builtin_cloth_drape(pbfcl_scene *s);

/* water-balloon: an inflatable sphere of radius 8 cm (642 particles, 1 kg, its gas air at about
 * 1 atm) dropped from 0.55 m into a 0.2 m deep pool in a 0.6 x 0.8 x 0.6 m box. */
void pbfcl_scene_builtin_water_balloon(pbfcl_scene *s);
void pbfcl_scene_builtin_rope_bridge(pbfcl_scene *s);

/* Built-in scene flag: a 0.3 x 0.2 m cloth of 16 x 11 particles (0.03 kg) pinned along one
 * 0.2 m edge (the pole, x 0.15 m, z 0.1 m, 0.3 to 0.5 m up), across a wind of 4 m/s along x
 * (drag 0.6, lift 0.3 kg/m^3) over a 2 cm pool in a 0.8 x 0.6 x 0.5 m box; 20 iterations and
 * 6 substeps. */
void pbfcl_scene_builtin_flag(pbfcl_scene *s);
/* The built-in scenes of collision shapes (scene_colliders.c): pour, mesh-container. */
void pbfcl_scene_builtin_pour(pbfcl_scene *s);
void pbfcl_scene_builtin_mesh_container(pbfcl_scene *s);

/* --- obstacles (host/core/scene/scene_obstacles.c) --- */

/* Checks each obstacle's shape (finite, not degenerate, inside the domain) and the solver
 * method; errors name obstacles[i] and the key. */
bool pbfcl_scene_check_obstacles(const pbfcl_scene *s);

/* Checks what depends on the particle radius: each obstacle holds a lattice point, and none
 * shares one with a body. */
bool pbfcl_scene_check_obstacle_sampling(const pbfcl_scene *s);

/* Whether obstacle o moves (a velocity, an angular velocity or keys). */
bool pbfcl_scene_obstacle_moves(const pbfcl_scene *s, int o);

/* What is wrong with a path's count keys, if anything; the scene's checks and the kinematic
 * paths' each say it in their own words. */
typedef enum pbfcl_path_keys_fault {
    PBFCL_PATH_KEYS_OK,
    PBFCL_PATH_KEYS_COUNT,       /* count below 0 or above PBFCL_MAX_PATH_KEYS */
    PBFCL_PATH_KEYS_NO_KEYS,     /* repeat without keys */
    PBFCL_PATH_KEYS_TIME,        /* *key's time not finite or not above the one before (0) */
    PBFCL_PATH_KEYS_VALUE,       /* *key's position or rotation not finite */
    PBFCL_PATH_KEYS_NOT_AT_START /* repeats, but the last key, *key, is not the starting pose:
                                  * displacement within 1 um of 0, whole turns within 1e-4 rad */
} pbfcl_path_keys_fault;

pbfcl_path_keys_fault pbfcl_path_keys_fault_of(const pbfcl_path_key *keys, int count, bool repeat,
                                               int *key);

/* The centre obstacle o moves about: the centre of its bounds at the start. */
void pbfcl_scene_obstacle_center(const pbfcl_scene *s, int o, float c[3]);

/* The lattice points of obstacle o not already in an earlier obstacle (in the order
 * pbfcl_scene_fill writes them) into out if not NULL; returns their count. */
size_t pbfcl_scene_obstacle_walk(const pbfcl_scene *s, int o, float *out);

/* --- meshes (host/core/scene/scene_mesh.c) --- */

/* Whether point p lies in mesh shape f of s or within tol of its surface: inside where the
 * surface winds about p (its crossings with a ray along +x, counted +1 where it faces +x and
 * -1 where it faces -x, do not sum to 0: exact in integer coordinates, with a symbolic
 * perturbation for rays through edges and vertices), so that overlapping closed parts of one
 * mesh give the union of their volumes. Costs one pass over the mesh's triangles. */
bool pbfcl_scene_mesh_inside(const pbfcl_scene *s, const pbfcl_fluid_shape *f, const double p[3],
                             double tol);

/* Checks mesh shape f of s (where names it): its triangles lie in the scene's meshes and its
 * vertices are finite. */
bool pbfcl_scene_check_mesh(const pbfcl_scene *s, const char *where, const pbfcl_fluid_shape *f);

/* --- emitters and drains (host/core/scene/scene_flow.c) --- */

/* Logs the error "scene 'NAME': <message>" (the scene's validation messages) and returns
 * false. */
bool pbfcl_scene_error(const pbfcl_scene *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Checks the emitters and drains (inside the domain, rates the nozzle can hold, ...); errors
 * name emitters[i] or drains[i] and the key. Needs the particle radius. */
bool pbfcl_scene_check_flow(const pbfcl_scene *s);

/* The particles of one layer of emitter e (the disc's lattice points): their offsets from
 * its centre into out (xyz triples) if not NULL; returns their count. */
size_t pbfcl_scene_emitter_layer(const pbfcl_scene *s, int e, float *out);

/* The particles emitter e has emitted by time t: whole layers at its rate, up to its count. */
long long pbfcl_scene_emitted_by(const pbfcl_scene *s, int e, double t);

/* Particles from..due-1 of emitter e's stream at time t into pos and vel (xyz triples, due -
 * from each): particle j of its stream belongs to layer j / L (L a layer's particles), due at
 * (layer + 1) L / rate and moved on since then at the emitter's velocity. */
pbfcl_status pbfcl_scene_emit(const pbfcl_scene *s, int e, long long from, long long due, double t,
                              float *pos, float *vel);

/* Whether point p lies in one of the drains. */
bool pbfcl_scene_in_drain(const pbfcl_scene *s, const float p[3]);

/* The particles a solver for the scene needs room for: the fill and every emitter's count. */
size_t pbfcl_scene_capacity(const pbfcl_scene *s);

/* The phase of each particle pbfcl_scene_fill makes (0 fluid, b + 1 body b, -1 an obstacle's
 * static particle), into phases
 * (n entries, n the fill's count); fails if n is not that count. */
pbfcl_status pbfcl_scene_phases(const pbfcl_scene *s, int *phases, size_t n);

/* The blow-up limit on speed, m/s: solver.max_speed if > 0, else derived from the free-fall
 * speed over the domain diagonal D: 4 * sqrt(2 * max(|g|, 9.81) * D). */
float pbfcl_scene_max_speed(const pbfcl_scene *s);

#endif
