/* pbfcl: Position Based Fluids on OpenCL, the public C API (the only header a program that
 * embeds pbfcl includes). A context holds an OpenCL device, context and queue, either pbfcl's
 * own or the caller's; a solver simulates up to `capacity` particles on one context. Particle
 * data goes in and out in the caller's order: particle k is the k-th entry of the caller's
 * arrays, whatever order the solver keeps internally. See docs/API.md. */
#ifndef PBFCL_H
#define PBFCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version and symbols ------------------------------------------------------------------ */

#define PBFCL_VERSION_MAJOR 0
#define PBFCL_VERSION_MINOR 3
#define PBFCL_VERSION_PATCH 0
/* The version this header describes, as one number: major * 10000 + minor * 100 + patch. */
#define PBFCL_VERSION                                                                              \
    (PBFCL_VERSION_MAJOR * 10000 + PBFCL_VERSION_MINOR * 100 + PBFCL_VERSION_PATCH)

/* PBFCL_API marks the exported functions; define PBFCL_STATIC when linking the static library
 * on Windows. */
#if defined(_WIN32) && !defined(PBFCL_STATIC)
#ifdef PBFCL_BUILDING_LIBRARY
#define PBFCL_API __declspec(dllexport)
#else
#define PBFCL_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define PBFCL_API __attribute__((visibility("default")))
#else
#define PBFCL_API
#endif

/* The version of the library linked at run time (PBFCL_VERSION's encoding). */
PBFCL_API int pbfcl_version(void);

/* The same as "major.minor.patch". */
PBFCL_API const char *pbfcl_version_string(void);

/* ---- status codes ------------------------------------------------------------------------- */

/* Every status with its one-line message, listed once. */
#define PBFCL_STATUS_LIST(X)                                                                       \
    X(PBFCL_OK, "no error")                                                                        \
    X(PBFCL_ERR_OPENCL, "an OpenCL call failed")                                                   \
    X(PBFCL_ERR_NO_DEVICE, "no OpenCL device found")                                               \
    X(PBFCL_ERR_BAD_DEVICE, "the requested OpenCL device does not exist")                          \
    X(PBFCL_ERR_KERNEL_FILE, "a kernel source file could not be read")                             \
    X(PBFCL_ERR_BUILD, "an OpenCL program failed to build")                                        \
    X(PBFCL_ERR_DEVICE_LIMIT, "the work does not fit the device's limits")                         \
    X(PBFCL_ERR_OUT_OF_MEMORY, "not enough memory")                                                \
    X(PBFCL_ERR_BAD_ARGUMENT, "an argument or parameter is invalid")                               \
    X(PBFCL_ERR_IO, "a file could not be read or written")                                         \
    X(PBFCL_ERR_SIMULATION, "the simulation became unstable")                                      \
    X(PBFCL_ERR_UNSUPPORTED, "the feature is not available in this build or on this system")       \
    X(PBFCL_ERR_INVALID_HANDLE, "the handle is NULL, destroyed or of another kind")                \
    X(PBFCL_ERR_CAPACITY, "the particle count exceeds the solver's capacity")                      \
    X(PBFCL_ERR_BUFFER_SIZE, "a buffer is smaller than the data it must hold")                     \
    X(PBFCL_ERR_VERSION, "the program was built against another major version of pbfcl")

typedef enum pbfcl_status {
#define PBFCL_STATUS_ENUM_(name, msg) name,
    PBFCL_STATUS_LIST(PBFCL_STATUS_ENUM_)
#undef PBFCL_STATUS_ENUM_
} pbfcl_status;

/* The symbolic name of a status, e.g. "PBFCL_ERR_BUILD". */
PBFCL_API const char *pbfcl_status_name(pbfcl_status s);

/* The one-line message of a status; the log callback gets the details (which argument,
 * which call, which file). */
PBFCL_API const char *pbfcl_status_message(pbfcl_status s);

/* The symbolic name of an OpenCL error code, e.g. "CL_INVALID_WORK_GROUP_SIZE" (for programs
 * that make OpenCL calls of their own on the context's objects). */
PBFCL_API const char *pbfcl_cl_error_name(cl_int err);

/* ---- logging ------------------------------------------------------------------------------ */

typedef enum pbfcl_log_level {
    PBFCL_LOG_ERROR,   /* a call failed; the message says why and what to change */
    PBFCL_LOG_WARNING, /* the call succeeded but something deserves attention */
    PBFCL_LOG_INFO     /* progress (builds traced, devices chosen) */
} pbfcl_log_level;

/* Receives each message (one line or a few, no trailing newline). */
typedef void (*pbfcl_log_fn)(pbfcl_log_level level, const char *message, void *user);

/* Sets where every message of the library goes, process-wide (NULL: stderr, the default,
 * prefixed "pbfcl: error: " or "pbfcl: warning: "); messages above max_level are dropped. */
PBFCL_API void pbfcl_set_log(pbfcl_log_fn fn, void *user, pbfcl_log_level max_level);

/* ---- parameters --------------------------------------------------------------------------- */

/* The world: the box the particles live in and the fluid's material (SI units). */
typedef struct pbfcl_scene_params {
    float domain_min[3], domain_max[3]; /* the box, m */
    float gravity[3];                   /* m/s^2 */
    float particle_radius;              /* r, m; particles at rest are spaced 2r */
    float rest_density;                 /* kg/m^3 */
} pbfcl_scene_params;

/* Range flags of a solver parameter: the lower or upper bound is excluded; a whole number. */
#define PBFCL_PARAM_LO_OPEN 1
#define PBFCL_PARAM_HI_OPEN 2
#define PBFCL_PARAM_WHOLE 4
/* The value is an index into a list of names (PBFCL_METHOD_LIST for solver.method): files and
 * the command line give the name, the struct holds the index. */
#define PBFCL_PARAM_NAMED 8

/* The particle methods a solver runs (solver.method, `--solver`), listed once: enum value,
 * name, description. */
#define PBFCL_METHOD_LIST(X)                                                                       \
    X(PBFCL_METHOD_PBF, "pbf", "Position Based Fluids (Macklin & Mueller 2013)")                   \
    X(PBFCL_METHOD_SPH, "sph",                                                                     \
      "weakly compressible SPH (Becker & Teschner 2007) with velocity Verlet")

typedef enum pbfcl_method {
#define PBFCL_METHOD_ENUM_(id, name, what) id,
    PBFCL_METHOD_LIST(PBFCL_METHOD_ENUM_)
#undef PBFCL_METHOD_ENUM_
        PBFCL_METHOD_COUNT
} pbfcl_method;

/* The name of method m ("pbf", "sph"); NULL if there is none. */
PBFCL_API const char *pbfcl_method_name(int m);

/* The method named name; -1 if none is. */
PBFCL_API int pbfcl_method_from_name(const char *name);

/* Every solver parameter, declared once: C type, name (the struct field and the JSON key under
 * "solver"), command-line flag, default, accepted range lo..hi with PBFCL_PARAM_* flags, unit,
 * one-line help. The struct below, the defaults, the JSON and command-line parsers, the one
 * validator, the help texts and the check of docs/SCENES.md are all made from this list. */
#define PBFCL_SOLVER_PARAM_LIST(X)                                                                 \
    X(int, method, "--solver", 0, 0, PBFCL_METHOD_COUNT - 1, PBFCL_PARAM_NAMED, "",                \
      "the particle method: pbf or sph (weakly compressible SPH, velocity Verlet)")                \
    X(float, dt, "--dt", 1.0 / 60.0, 0, 1, PBFCL_PARAM_LO_OPEN, "s", "frame time step")            \
    X(int, substeps, "--substeps", 3, 1, 1000, 0, "",                                              \
      "the least substeps per frame (more where the fastest particle would move over h/2)")        \
    X(int, iterations, "--iterations", 4, 0, 1000, 0, "",                                          \
      "density solver iterations per substep (0: no density correction, a diagnostic)")            \
    X(int, stabilization_iterations, "--stabilization", 1, 0, 1000, 0, "",                         \
      "collision stabilisation passes per solver iteration")                                       \
    X(int, contact_interval, "--contact-interval", 1, 1, 1000, 0, "",                              \
      "collision passes after every N-th solver iteration and the last")                           \
    X(float, chebyshev_rho, "--chebyshev", 0, 0, 0.999, 0, "",                                     \
      "spectral radius estimate of the Chebyshev acceleration (0: plain Jacobi)")                  \
    X(float, cfl, "--cfl", 0.5, 0, 2, PBFCL_PARAM_LO_OPEN, "",                                     \
      "a particle moves at most cfl * h per substep (a body's at most 0.5 h)")                     \
    X(int, multilevel, "--multilevel", 0, 0, 1000, 0, "",                                          \
      "pbf: the first N solver iterations end with a multilevel coarse correction (0: off)")       \
    X(float, multilevel_limit, "--multilevel-limit", 1, 0, 100, 0, "%",                            \
      "pbf: the later iterations end with one too after a substep leaving more mean compression")  \
    X(float, h_ratio, "--h-ratio", 4, 2, 4.4721, PBFCL_PARAM_LO_OPEN, "",                          \
      "kernel radius h = h_ratio * particle radius")                                               \
    X(float, relaxation, "--relaxation", 0.1, 0, 1e12, PBFCL_PARAM_LO_OPEN, "",                    \
      "constraint relaxation epsilon (divided by h^2)")                                            \
    X(float, scorr_k, "--scorr-k", 0.001, 0, 1e6, 0, "",                                           \
      "tensile correction strength k (times h^2)")                                                 \
    X(float, scorr_n, "--scorr-n", 4, 1, 16, PBFCL_PARAM_WHOLE, "", "tensile correction exponent") \
    X(float, scorr_dq, "--scorr-dq", 0.2, 0, 1, PBFCL_PARAM_LO_OPEN | PBFCL_PARAM_HI_OPEN, "",     \
      "tensile correction delta q, a fraction of h")                                               \
    X(float, contact_slop, "--contact-slop", 0.2, 0, 1, 0, "",                                     \
      "overlap (a fraction of 2r) that contacts resolve by moving x* alone")                       \
    X(float, friction_static, "--friction-static", 0.5, 0, 10, 0, "",                              \
      "static friction coefficient of contacts with a body's particle")                            \
    X(float, friction_dynamic, "--friction-dynamic", 0.3, 0, 10, 0, "",                            \
      "dynamic friction coefficient of contacts with a body's particle")                           \
    X(float, vorticity, "--vorticity", 0.01, 0, 1e6, 0, "m/s",                                     \
      "vorticity confinement epsilon (0: off)")                                                    \
    X(float, viscosity, "--viscosity", 0.05, 0, 1, 0, "", "XSPH viscosity c per substep (0: off)") \
    X(float, wind_x, "--wind-x", 0, -1000, 1000, 0, "m/s",                                         \
      "cloth: the wind's x component (drag and lift act on a triangle's velocity relative to it)") \
    X(float, wind_y, "--wind-y", 0, -1000, 1000, 0, "m/s", "cloth: the wind's y component")        \
    X(float, wind_z, "--wind-z", 0, -1000, 1000, 0, "m/s", "cloth: the wind's z component")        \
    X(float, drag, "--drag", 0, 0, 1e4, 0, "kg/m^3",                                               \
      "cloth: drag per triangle: drag * area facing the flow * v^2 against v, v relative to wind") \
    X(float, lift, "--lift", 0, 0, 1e4, 0, "kg/m^3",                                               \
      "cloth: lift per triangle: lift * area facing the flow * sin(angle) * v^2 across v")         \
    X(float, max_speed, "--max-speed", 50, 0, 1e9, 0, "m/s",                                       \
      "blow-up guard: faster particles mean the run blew up (0: derived from box and gravity)")    \
    X(float, speed_of_sound, "--speed-of-sound", 0, 0, 1e6, 0, "m/s",                              \
      "sph: speed of sound c of the Tait equation (0: 10 sqrt(2 g H), H the box height)")          \
    X(float, artificial_viscosity, "--artificial-viscosity", 0.5, 0, 10, 0, "",                    \
      "sph: Monaghan's artificial viscosity alpha")                                                \
    X(float, sph_cfl, "--sph-cfl", 0.2, 0, 1, PBFCL_PARAM_LO_OPEN, "",                             \
      "sph: the CFL number: sound at c plus the top speed crosses sph_cfl * h per step")           \
    X(int, sph_max_steps, "--sph-max-steps", 2000, 1, 1000000, 0, "",                              \
      "sph: the most velocity Verlet steps per frame (a dt needing more is refused)")              \
    X(float, diffuse_ta_min, "--diffuse-ta-min", 2, 0, 1e6, 0, "m/s",                              \
      "diffuse: trapped-air potential v_diff where emission starts (Phi's lower threshold)")       \
    X(float, diffuse_ta_max, "--diffuse-ta-max", 8, 0, 1e6, 0, "m/s",                              \
      "diffuse: trapped-air potential v_diff of full emission (Phi's upper threshold)")            \
    X(float, diffuse_wc_min, "--diffuse-wc-min", 0.5, 0, 1e6, 0, "",                               \
      "diffuse: wave-crest curvature where emission starts")                                       \
    X(float, diffuse_wc_max, "--diffuse-wc-max", 2, 0, 1e6, 0, "",                                 \
      "diffuse: wave-crest curvature of full emission")                                            \
    X(float, diffuse_ke_min, "--diffuse-ke-min", 0.5, 0, 1e6, 0, "J/kg",                           \
      "diffuse: kinetic energy per unit mass below which a fluid particle emits nothing")          \
    X(float, diffuse_ke_max, "--diffuse-ke-max", 5, 0, 1e6, 0, "J/kg",                             \
      "diffuse: kinetic energy per unit mass of full emission")                                    \
    X(float, diffuse_k_ta, "--diffuse-k-ta", 40, 0, 1e6, 0, "1/s",                                 \
      "diffuse: particles a fluid particle emits per second at full trapped-air potential")        \
    X(float, diffuse_k_wc, "--diffuse-k-wc", 40, 0, 1e6, 0, "1/s",                                 \
      "diffuse: particles a fluid particle emits per second at full wave-crest potential")         \
    X(float, diffuse_lifetime, "--diffuse-lifetime", 2, 0, 1000, PBFCL_PARAM_LO_OPEN, "s",         \
      "diffuse: the life of a new diffuse particle; foam loses it, spray and bubbles keep it")     \
    X(float, diffuse_buoyancy, "--diffuse-buoyancy", 0.5, 0, 100, 0, "",                           \
      "diffuse: a bubble's buoyancy k_b, a multiple of -g")                                        \
    X(float, diffuse_drag, "--diffuse-drag", 20, 0, 1e6, 0, "1/s",                                 \
      "diffuse: a bubble's drag k_d towards the fluid velocity (rise speed k_b |g| / k_d)")        \
    X(int, diffuse_spray_neighbours, "--diffuse-spray-neighbours", 6, 0, 1000, 0, "",              \
      "diffuse: a diffuse particle with fewer fluid neighbours is spray")                          \
    X(int, diffuse_bubble_neighbours, "--diffuse-bubble-neighbours", 20, 0, 1000, 0, "",           \
      "diffuse: one with more (and not spray) is a bubble; between the two, foam")

/* Former spellings of solver parameters, still accepted as scene-file keys and command-line
 * flags so that older scene files and scripts keep working: X(key, flag, current key). */
#define PBFCL_SOLVER_PARAM_FORMER_LIST(X)                                                          \
    X("diffuse_spray_neighbors", "--diffuse-spray-neighbors", "diffuse_spray_neighbours")          \
    X("diffuse_bubble_neighbors", "--diffuse-bubble-neighbors", "diffuse_bubble_neighbours")

/* How the solver advances (SI units): one field per entry of PBFCL_SOLVER_PARAM_LIST. */
typedef struct pbfcl_solver_params {
#define PBFCL_PARAM_FIELD_(type, name, flag, def, lo, hi, flags, unit, help) type name;
    PBFCL_SOLVER_PARAM_LIST(PBFCL_PARAM_FIELD_)
#undef PBFCL_PARAM_FIELD_
} pbfcl_solver_params;

/* One solver parameter as the list declares it (for parsers, GUIs and documentation). */
typedef struct pbfcl_param_info {
    const char *name; /* field and JSON key */
    const char *flag; /* command-line flag */
    int is_int;       /* int field, else float */
    double def, lo, hi;
    int flags; /* PBFCL_PARAM_* */
    const char *unit, *help;
    size_t offset; /* of the field in pbfcl_solver_params */
} pbfcl_param_info;

/* The number of solver parameters, and the description of parameter i (NULL past the end). */
PBFCL_API int pbfcl_solver_param_count(void);
PBFCL_API const pbfcl_param_info *pbfcl_solver_param(int i);

/* The one validator of the solver parameters: PBFCL_ERR_BAD_ARGUMENT with a message naming the
 * parameter ("solver.NAME must be ...") when one is outside its range. */
PBFCL_API pbfcl_status pbfcl_solver_params_check(const pbfcl_solver_params *p);

/* Nonzero if v is in parameter info's accepted range (0 for a NULL info, logged). */
PBFCL_API int pbfcl_param_in_range(const pbfcl_param_info *info, double v);

/* Writes info's range, e.g. "a number > 0 and <= 1"; returns snprintf's count (-1, logged,
 * for a NULL info, or a NULL buf with a size). */
PBFCL_API int pbfcl_param_range_text(const pbfcl_param_info *info, char *buf, size_t size);

/* The value of parameter info in p, and setting it (rounded for the integer ones); a NULL p
 * or info is logged and gives 0 / changes nothing. */
PBFCL_API double pbfcl_param_get(const pbfcl_solver_params *p, const pbfcl_param_info *info);
PBFCL_API void pbfcl_param_set(pbfcl_solver_params *p, const pbfcl_param_info *info, double v);

/* The accepted range of one scene-level setting, shared by scene files (validation) and
 * command lines (option parsing), so that both accept exactly the same values. */
typedef struct pbfcl_setting_range {
    const char *key; /* as in scene files: "particle_radius", "rest_density", "gravity"; and
                        "particles", the particle count a scene may be filled with */
    double lo, hi;
    int lo_open, hi_open; /* lo (hi) itself excluded */
    int integer;          /* whole numbers only */
} pbfcl_setting_range;

/* The range of a scene-level setting by its key; NULL if there is none (or key is NULL). */
PBFCL_API const pbfcl_setting_range *pbfcl_scene_range(const char *key);

/* Nonzero if v is inside the range r (0 for a NULL r). */
PBFCL_API int pbfcl_range_holds(const pbfcl_setting_range *r, double v);

/* Writes r as text, e.g. "a number > 0 and <= 1". */
PBFCL_API void pbfcl_range_text(const pbfcl_setting_range *r, char *buf, size_t size);

/* A unit box, gravity -9.81 m/s^2 along y, r = 1 cm, water. */
PBFCL_API void pbfcl_scene_params_defaults(pbfcl_scene_params *p);

/* The solver settings the physics tests validate (dt 1/60 s, 3 substeps, 4 iterations, ...). */
PBFCL_API void pbfcl_solver_params_defaults(pbfcl_solver_params *p);

/* Loads a built-in scene (dam-break, double-dam-break, drop) or a JSON scene file, applies
 * target_particles (0: the scene's own radius), and fills its fluid on the rest lattice:
 * *positions is malloc'ed (x y z triples; free it with pbfcl_free) and *count its length. A
 * scene with bodies, emitters or drains is refused (use a pbfcl_scene_setup). */
PBFCL_API pbfcl_status pbfcl_load_scene(const char *name_or_file, size_t target_particles,
                                        pbfcl_scene_params *scene, pbfcl_solver_params *solver,
                                        float **positions, size_t *count);

/* Nonzero if name_or_file names a scene file (it holds a '/' or ends in ".json"), zero if it
 * is a built-in scene's name. */
PBFCL_API int pbfcl_scene_is_file(const char *name_or_file);

/* The built-in scenes' names in a NULL-terminated list (static: do not free), in the order
 * --scene lists them. */
PBFCL_API const char *const *pbfcl_scene_builtin_names(void);

/* Frees memory the library allocated for the caller (pbfcl_load_scene's positions). */
PBFCL_API void pbfcl_free(void *p);

/* A scene as a file or a built-in name describes it: box, material, solver settings and the
 * shapes of fluid at the start; for programs that adjust it before filling it. */
typedef struct pbfcl_scene_setup pbfcl_scene_setup; /* opaque */

/* Loads a built-in scene or a JSON scene file (docs/SCENES.md); its layout is checked when
 * its parameters are set, and all of it (the particle radius too) when it is filled. */
PBFCL_API pbfcl_status pbfcl_scene_setup_load(const char *name_or_file, pbfcl_scene_setup **out);

/* Destroys it; NULL is accepted. */
PBFCL_API pbfcl_status pbfcl_scene_setup_destroy(pbfcl_scene_setup *s);

/* Its name into buf. */
PBFCL_API pbfcl_status pbfcl_scene_setup_name(const pbfcl_scene_setup *s, char *buf, size_t size);

/* Its parameters; either pointer may be NULL. */
PBFCL_API pbfcl_status pbfcl_scene_setup_get_params(const pbfcl_scene_setup *s,
                                                    pbfcl_scene_params *scene,
                                                    pbfcl_solver_params *solver);

/* Replaces its parameters; the layout is validated (fluid inside the box, solver ranges, ...)
 * and a refused change leaves it as it was. */
PBFCL_API pbfcl_status pbfcl_scene_setup_set_params(pbfcl_scene_setup *s,
                                                    const pbfcl_scene_params *scene,
                                                    const pbfcl_solver_params *solver);

/* Sets the particle radius so that filling gives about target particles. */
PBFCL_API pbfcl_status pbfcl_scene_setup_set_particle_count(pbfcl_scene_setup *s, size_t target);

/* Fills its fluid, then its bodies (body 0's particles, body 1's, ...), then its obstacles'
 * static particles on the rest lattice (spacing 2r): *positions (xyz triples; pbfcl_free it)
 * and *count. */
PBFCL_API pbfcl_status pbfcl_scene_setup_fill(const pbfcl_scene_setup *s, float **positions,
                                              size_t *count);

/* The number of bodies the scene has (docs/SCENES.md, "bodies"). */
PBFCL_API pbfcl_status pbfcl_scene_setup_body_count(const pbfcl_scene_setup *s, int *count);

/* The number of obstacles the scene has (docs/SCENES.md, "obstacles"). */
PBFCL_API pbfcl_status pbfcl_scene_setup_obstacle_count(const pbfcl_scene_setup *s, int *count);

/* The particles a solver of the scene needs room for (pbfcl_solver_desc.capacity): those of
 * pbfcl_scene_setup_fill and every emitter's count. */
PBFCL_API pbfcl_status pbfcl_scene_setup_capacity(const pbfcl_scene_setup *s, size_t *capacity);

/* The number of emitters and drains the scene has; either pointer may be NULL. */
PBFCL_API pbfcl_status pbfcl_scene_setup_flow_count(const pbfcl_scene_setup *s, int *emitters,
                                                    int *drains);

/* ---- context ------------------------------------------------------------------------------ */

typedef struct pbfcl_context pbfcl_context; /* opaque */

/* What a context runs on. A zeroed struct (or pbfcl_context_desc_defaults) means: pbfcl's
 * own context on the first GPU, else the first device, with the built-in kernels. */
typedef struct pbfcl_context_desc {
    const char *device; /* index from pbfcl_device_name, or part of a platform or device name */
    /* The caller's own OpenCL objects (all three, or none): pbfcl retains and uses them and
     * never creates its own. Timers need a queue with CL_QUEUE_PROFILING_ENABLE. */
    cl_context cl_context;
    cl_device_id cl_device;
    cl_command_queue cl_queue;
    /* Extra properties (zero-terminated) for the context pbfcl creates, e.g. GL sharing. */
    const cl_context_properties *cl_properties;
    /* A folder holding the .cl files to build instead of the built-in ones (kernel
     * development): a copy of pbfcl's cl/, with its folders or flat; NULL or "": the kernels
     * built into the library. */
    const char *kernel_dir;
    int trace_builds; /* nonzero: log every program build (INFO) with its options */
} pbfcl_context_desc;

PBFCL_API void pbfcl_context_desc_defaults(pbfcl_context_desc *d);

/* Opens a context. header_version must be PBFCL_VERSION (the header the caller was built
 * with): another major version is refused with PBFCL_ERR_VERSION. */
PBFCL_API pbfcl_status pbfcl_context_create(int header_version, const pbfcl_context_desc *desc,
                                            pbfcl_context **out);

/* Destroys the context and any solver still on it (their handles become invalid). NULL is
 * accepted; a destroyed handle gives PBFCL_ERR_INVALID_HANDLE. */
PBFCL_API pbfcl_status pbfcl_context_destroy(pbfcl_context *ctx);

/* The OpenCL objects the context uses (still owned by the context). */
PBFCL_API pbfcl_status pbfcl_context_cl(const pbfcl_context *ctx, cl_context *context,
                                        cl_device_id *device, cl_command_queue *queue);

/* The device's "platform / device" name into buf. */
PBFCL_API pbfcl_status pbfcl_context_device_name(const pbfcl_context *ctx, char *buf, size_t size);

/* Number of OpenCL devices present (0 when there is no OpenCL driver). */
PBFCL_API int pbfcl_device_count(void);

/* The name ("platform / device (type)") of device index into buf. */
PBFCL_API pbfcl_status pbfcl_device_name(int index, char *buf, size_t size);

/* Prints every OpenCL platform and device to f, each with the index that
 * pbfcl_context_desc.device accepts and its properties (`pbfcl devices`). */
PBFCL_API pbfcl_status pbfcl_devices_print(FILE *f);

/* The device a pbfcl_context_desc.device of spec chooses, without opening it: its index (index
 * may be NULL, to check spec only). An unknown spec gives PBFCL_ERR_BAD_DEVICE and logs the
 * devices present. */
PBFCL_API pbfcl_status pbfcl_device_find(const char *spec, int *index);

/* ---- solver ------------------------------------------------------------------------------- */

typedef struct pbfcl_solver pbfcl_solver; /* opaque */

/* A solver: capacity is the most particles it will hold (buffers are allocated once). */
typedef struct pbfcl_solver_desc {
    size_t capacity;
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
} pbfcl_solver_desc;

/* Capacity 0 (must be set), the defaults of both parameter structs. */
PBFCL_API void pbfcl_solver_desc_defaults(pbfcl_solver_desc *d);

/* Checks, without a device, that a solver of desc can be made: its parameters, the grid over
 * its box and its capacity; PBFCL_ERR_BAD_ARGUMENT with a message saying what to change. */
PBFCL_API pbfcl_status pbfcl_solver_desc_check(const pbfcl_solver_desc *desc);

/* Creates a solver with no particles; builds its kernels and checks device memory. */
PBFCL_API pbfcl_status pbfcl_solver_create(pbfcl_context *ctx, const pbfcl_solver_desc *desc,
                                           pbfcl_solver **out);

/* Destroys the solver. NULL is accepted; a destroyed handle gives PBFCL_ERR_INVALID_HANDLE. */
PBFCL_API pbfcl_status pbfcl_solver_destroy(pbfcl_solver *s);

/* Replaces the parameters between steps; every one may change (a new box or kernel radius
 * rebuilds the grid; a new gravity alone costs nothing). Either pointer may be NULL to keep
 * that struct as it is. Rejected values leave the old ones in place. */
PBFCL_API pbfcl_status pbfcl_solver_set_params(pbfcl_solver *s, const pbfcl_scene_params *scene,
                                               const pbfcl_solver_params *solver);

/* The parameters in use; either pointer may be NULL. */
PBFCL_API pbfcl_status pbfcl_solver_get_params(const pbfcl_solver *s, pbfcl_scene_params *scene,
                                               pbfcl_solver_params *solver);

/* ---- particles (the caller's order) ------------------------------------------------------- */

/* Particle phases as FleX has them (NvFlex.h, NvFlexMakePhase; the same bits): a group (bits
 * 0-19) and flags (bits 20-23). Two particles of one group interact only when the group has
 * PBFCL_PHASE_FLAG_SELF_COLLIDE; PBFCL_PHASE_FLAG_FLUID makes a particle fluid (it takes part
 * in the density constraint). pbfcl gives the groups these meanings (docs/API.md, "Phases"):
 *   the fluid: group 0 with the fluid and self-collide flags, pbfcl_make_phase(0,
 *     PBFCL_PHASE_FLAG_FLUID | PBFCL_PHASE_FLAG_SELF_COLLIDE), the only fluid phase;
 *   body b (b = 0, 1, ...): group b + 1, with or without self-collide (without, as FleX's
 *     rigid bodies, its particles do not collide with each other);
 *   static particles (an obstacle's boundary particles: they never move, keep the fluid and
 *     the bodies out and count in the fluid's density): group PBFCL_PHASE_GROUP_STATIC, no
 *     flags (they do not collide with each other).
 * PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER (FleX: ignore same-group contacts of particles closer
 * than 2r in the rest pose) is reserved: refused as not supported yet. */
#define PBFCL_PHASE_GROUP_MASK 0x000fffff
#define PBFCL_PHASE_FLAG_SELF_COLLIDE (1 << 20)
#define PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER (1 << 21)
#define PBFCL_PHASE_FLAG_FLUID (1 << 22)
#define PBFCL_PHASE_FLAGS_MASK 0x00f00000 /* bit 23 is unused, as in FleX */
#define PBFCL_PHASE_GROUP_STATIC PBFCL_PHASE_GROUP_MASK

/* A phase: group (0 .. PBFCL_PHASE_GROUP_MASK) and flags (PBFCL_PHASE_FLAG_*, or-ed); a group
 * out of range or an unknown flag is logged and gives PBFCL_PHASE_INVALID, which every setter
 * refuses (FleX masks them silently). */
PBFCL_API int pbfcl_make_phase(int group, int flags);
#define PBFCL_PHASE_INVALID (-1)

/* The short phase numbers of pbfcl_solver_set_phases (API 0.2, kept): fluid, a particle of
 * body b, or a static particle; pbfcl_make_phase(0, fluid | self-collide), (b + 1, 0) and
 * (PBFCL_PHASE_GROUP_STATIC, 0) in the encoding above. */
#define PBFCL_PHASE_FLUID 0
#define PBFCL_PHASE_BODY(b) ((b) + 1)
#define PBFCL_PHASE_STATIC (-1)

/* The active particle count. */
PBFCL_API pbfcl_status pbfcl_solver_count(const pbfcl_solver *s, size_t *count);

/* The capacity given at creation. */
PBFCL_API pbfcl_status pbfcl_solver_capacity(const pbfcl_solver *s, size_t *capacity);

/* Appends count particles (an emitter): positions xyz triples, velocities xyz triples or NULL
 * for zero; they become the particles count_before .. count_before + count - 1. A position
 * outside the box (domain_min to domain_max) or not finite is refused (PBFCL_ERR_BAD_ARGUMENT,
 * naming the particle's index and the box; none is added); one within r of a face is moved to
 * the walls (the box less r) by the next step. */
PBFCL_API pbfcl_status pbfcl_solver_add(pbfcl_solver *s, const float *positions,
                                        const float *velocities, size_t count);

/* Removes the listed particles (a drain); the others keep their order and close the gaps,
 * as in erasing from the caller's array: particle k becomes k minus the removed ones below k.
 * Particles of a body are refused (make them fluid first). */
PBFCL_API pbfcl_status pbfcl_solver_remove(pbfcl_solver *s, const size_t *particles, size_t count);

/* Overwrites the positions / velocities (xyz triples) of all `count` active particles;
 * count must equal the active count. Positions are refused as pbfcl_solver_add's are (outside
 * the box or not finite: PBFCL_ERR_BAD_ARGUMENT, nothing changed). */
PBFCL_API pbfcl_status pbfcl_solver_set_positions(pbfcl_solver *s, const float *xyz, size_t count);
PBFCL_API pbfcl_status pbfcl_solver_set_velocities(pbfcl_solver *s, const float *xyz, size_t count);

/* Reads the positions / velocities (xyz triples) / densities (kg/m^3) of the active
 * particles into arrays of `count` entries; count must equal the active count. */
PBFCL_API pbfcl_status pbfcl_solver_get_positions(pbfcl_solver *s, float *xyz, size_t count);
PBFCL_API pbfcl_status pbfcl_solver_get_velocities(pbfcl_solver *s, float *xyz, size_t count);
PBFCL_API pbfcl_status pbfcl_solver_get_densities(pbfcl_solver *s, float *density, size_t count);

/* Per-particle phases: PBFCL_PHASE_FLUID, PBFCL_PHASE_BODY(b) or PBFCL_PHASE_STATIC. Setting
 * them replaces every body and every static particle: the particles of phase
 * PBFCL_PHASE_BODY(b) form body b (numbered 0 .. B - 1 without gaps, at least 2 particles
 * each), a rigid body (stiffness 1) of the fluid's density whose rest shape is their positions
 * now; shape matching (docs/ALGORITHM.md) keeps that shape. Particles of one body do not
 * collide with each other. Static particles stay where they are now (inverse mass 0). Bodies
 * and static particles must lie inside the walls (the box less the particle radius). */
PBFCL_API pbfcl_status pbfcl_solver_set_phases(pbfcl_solver *s, const int *phases, size_t count);
PBFCL_API pbfcl_status pbfcl_solver_get_phases(const pbfcl_solver *s, int *phases, size_t count);

/* Per-particle phases in the encoding of pbfcl_make_phase (the groups' meanings above), with
 * the same effect as pbfcl_solver_set_phases: groups 1 .. B form bodies 0 .. B - 1. A group's
 * particles share one phase (its flags). Refused, with the particle and the value named: an
 * unknown flag, PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER (not supported yet), a fluid phase other
 * than the fluid's, group 0 without the fluid flag, flags on the static group, a body group
 * beyond the particle count. get gives what was set (pbfcl_solver_set_phases' numbers
 * converted). */
PBFCL_API pbfcl_status pbfcl_solver_set_particle_phases(pbfcl_solver *s, const int *phases,
                                                        size_t count);
PBFCL_API pbfcl_status pbfcl_solver_get_particle_phases(const pbfcl_solver *s, int *phases,
                                                        size_t count);

/* Per-particle inverse masses, 1/kg (FleX's w): a fluid particle's is 1 / m with m =
 * rest_density V, a static particle's 0, a body's particles' 1 / (its density V). V is a
 * particle's volume, the one that puts the rest lattice (spacing 2r) at the rest density:
 * (2r)^3 / 1.0098 at the default h_ratio 4 ((2r)^3 over Poly6's sum on that lattice); read the
 * fluid's back with pbfcl_solver_get_inverse_masses.
 * Setting them changes the bodies' masses (as pbfcl_solver_set_body's density does); refused,
 * with the particle and the value named: a negative, NaN or infinite value, a fluid particle's
 * other than 1 / m (within 1e-5 relative), a static particle's other than 0, 0 for a body's
 * particle, or two different values within one body (its particles are of one mass). */
PBFCL_API pbfcl_status pbfcl_solver_set_inverse_masses(pbfcl_solver *s, const float *inv_mass,
                                                       size_t count);
PBFCL_API pbfcl_status pbfcl_solver_get_inverse_masses(pbfcl_solver *s, float *inv_mass,
                                                       size_t count);

/* The number of bodies (set by pbfcl_solver_set_phases). */
PBFCL_API pbfcl_status pbfcl_solver_body_count(const pbfcl_solver *s, int *count);

/* Sets body b's stiffness, in (0, 1] (1: rigid; below 1 a soft body: the fraction of the way to
 * its rest shape per solver iteration), and density in kg/m^3 (0.1 to 1e5; its particles'
 * mass is density * V, V a fluid particle's volume (pbfcl_solver_set_inverse_masses): a
 * body of the fluid's rest density floats in it; the mass weights the contacts). */
PBFCL_API pbfcl_status pbfcl_solver_set_body(pbfcl_solver *s, int body, float stiffness,
                                             float density);

/* Reads each body's pose from its rest pose, as of the last step: com (xyz triples, the
 * centre of mass) and quat (x, y, z, w, the rotation); either may be NULL; count must equal
 * the body count. */
PBFCL_API pbfcl_status pbfcl_solver_get_bodies(pbfcl_solver *s, float *com, float *quat, int count);

/* Makes the scene's collision shapes (its "colliders", docs/SCENES.md) in solver with
 * pbfcl_shape_create, each where its velocities have carried it by time (s; 0: the start); a
 * shape refused names colliders[i]. A saved state holds the shapes: a resume needs no call. */
PBFCL_API pbfcl_status pbfcl_scene_setup_apply_colliders(const pbfcl_scene_setup *s,
                                                         pbfcl_solver *solver, double time);

/* Gives a solver the scene's collision shapes (pbfcl_scene_setup_apply_colliders at time 0;
 * a shape refused names colliders[i]), bodies and obstacles: solver must hold exactly the particles
 * of pbfcl_scene_setup_fill, in its order (pbfcl_solver_add of them into an empty solver); their
 * phases (PBFCL_PHASE_STATIC for the obstacles' particles), each body's stiffness and
 * density, and the bodies' initial velocities (the fluid's are left as they are) are set. A
 * scene without bodies or obstacles leaves the solver unchanged. */
PBFCL_API pbfcl_status pbfcl_scene_setup_apply_bodies(const pbfcl_scene_setup *s,
                                                      pbfcl_solver *solver);

/* Runs the scene's drains and emitters on solver at simulated time `time` (s; call it after
 * each step with the time reached): the fluid particles inside a drain are removed (their
 * indices before the removal, ascending, into removed if not NULL, which then has room for the
 * active count; their number into *removed_count), then each emitter appends the particles
 * due by then (*added; they are the last ones). The setup keeps what each emitter emitted. */
PBFCL_API pbfcl_status pbfcl_scene_setup_flow(pbfcl_scene_setup *s, pbfcl_solver *solver,
                                              double time, size_t *removed, size_t *removed_count,
                                              size_t *added);

/* Computes the SPH density of the current positions (pbfcl_solver_get_densities reads it);
 * before the first step the densities are otherwise the rest density, a placeholder. */
PBFCL_API pbfcl_status pbfcl_solver_compute_densities(pbfcl_solver *s);

/* ---- cloth and ropes: distance constraints, solid groups, triangles ---------------------- */

/* Distance constraints (XPBD, docs/ALGORITHM.md) between particles named by index (the
 * caller's order): constraint c joins particles pair[2c] and pair[2c + 1] (two different
 * indices below the particle count) at rest length rest[c] (m, finite, >= 0) with compliance
 * compliance[c] (m/N, finite, >= 0; 0 is rigid); tether[c] != 0 (tether may be NULL: none)
 * makes it act only when stretched. count 0 removes them all. Refused, with the constraint and
 * the fix named, the old constraints kept: a particle joined to itself, an index out of range,
 * a NaN, infinite or negative rest length or compliance. get copies them (any array may be
 * NULL) into arrays of count entries, count the number set (pbfcl_solver_distance_count).
 * Removing particles renumbers them as the particles and drops those with a removed one. */
PBFCL_API pbfcl_status pbfcl_solver_set_distances(pbfcl_solver *s, const unsigned *pair,
                                                  const float *rest, const float *compliance,
                                                  const unsigned char *tether, size_t count);
PBFCL_API pbfcl_status pbfcl_solver_distance_count(pbfcl_solver *s, size_t *count);
PBFCL_API pbfcl_status pbfcl_solver_get_distances(pbfcl_solver *s, unsigned *pair, float *rest,
                                                  float *compliance, unsigned char *tether,
                                                  size_t count);

/* Each distance constraint's tension in the last substep (N; positive when it pulls its two
 * particles together), count the number of constraints. */
PBFCL_API pbfcl_status pbfcl_solver_get_distance_forces(pbfcl_solver *s, float *force,
                                                        size_t count);

/* Solid groups (a cloth, a rope: particles held by distance constraints, not shape matching):
 * particle ids[k] joins group group[k] (0 .. PBFCL_SOLVER_MAX_GROUPS - 1) with inverse mass
 * inv_mass[k] (1/kg, finite, > 0); every particle of a group not named returns to the fluid.
 * A group's particles collide with the fluid, bodies, static particles and other groups, not
 * with each other, and count in the fluid's density as fluid of their volume (as bodies'
 * particles do) with no density constraint of their own. Pin a particle by making it static
 * (pbfcl_solver_set_phases) first: setting phases clears the groups, and a static or body
 * particle is refused here, as are an index out of range or named twice, a group out of range
 * and a NaN, infinite, zero or negative inverse mass. pbfcl_solver_get_inverse_masses reports
 * a group particle's inverse mass (and pbfcl_solver_set_inverse_masses takes any finite value
 * above 0 for it); its phase reads as PBFCL_PHASE_SOLID_GROUP(g). count 0 removes every
 * group (its particles become fluid). */
#define PBFCL_SOLVER_MAX_GROUPS 65536
/* The phase a particle of solid group g reads as (pbfcl_solver_get_particle_phases; the phase
 * calls refuse it: groups are set here) and a saved state holds. */
#define PBFCL_PHASE_SOLID_GROUP(g) (PBFCL_PHASE_GROUP_STATIC - 1 - (g))
PBFCL_API pbfcl_status pbfcl_solver_set_groups(pbfcl_solver *s, const unsigned *ids,
                                               const unsigned *group, const float *inv_mass,
                                               size_t count);

/* Triangles over the particles (three indices each, for rendering and export, and the
 * surfaces the wind acts on: solver.wind_x/y/z, drag and lift, method pbf): count triangles,
 * each three different indices below the particle count; refused naming the triangle. Removing
 * particles clears them; a saved state holds them. get copies count (the number set,
 * pbfcl_solver_triangle_count) triangles. */
PBFCL_API pbfcl_status pbfcl_solver_set_triangles(pbfcl_solver *s, const unsigned *tri,
                                                  size_t count);
PBFCL_API pbfcl_status pbfcl_solver_triangle_count(const pbfcl_solver *s, size_t *count);

/* Self-collision of solid groups (FleX's self-collide flag on a cloth's phase): group g's
 * particles collide with each other where on[g] != 0 (a cloth folded onto itself keeps its
 * layers apart), as with other phases: pairs closer than 2r are pushed apart, so sample such a
 * cloth at 2r or more (no rest-distance filter yet). groups flags (count 0: none); applies to
 * the groups' particles now and later. pbfcl_solver_get_particle_phases keeps reporting
 * PBFCL_PHASE_SOLID_GROUP(g). Refused: on NULL with groups, more than PBFCL_SOLVER_MAX_GROUPS. */
PBFCL_API pbfcl_status pbfcl_solver_set_self_collide(pbfcl_solver *s, const unsigned char *on,
                                                     size_t groups);

/* Tearing (as FleX's NvFlexExtTearClothMesh; method pbf): after each pbfcl_solver_step, on the
 * host, a stretch edge (a distance constraint between two particles of one triangle) of solid
 * group g strained beyond max_strain[g] (|x_a - x_b| / rest - 1; 0: the group never tears)
 * splits a vertex: a new particle (the next index, a copy of it in its group, the two sharing
 * its mass) takes the triangles beyond the plane through it across the edge, and the edges and
 * bends around are made anew (docs/ALGORITHM.md, "Tearing"). At most 64 splits a step, and
 * none once the capacity is full. groups limits (count 0: no tearing); a saved state holds
 * them. Refused, naming the group: a limit negative, NaN or infinite. */
PBFCL_API pbfcl_status pbfcl_solver_set_tearing(pbfcl_solver *s, const float *max_strain,
                                                size_t groups);
PBFCL_API pbfcl_status pbfcl_solver_get_triangles(const pbfcl_solver *s, unsigned *tri,
                                                  size_t count);

/* ---- attachments: particles held by collision shapes and bodies ------------------------- */

/* What a particle is attached to (pbfcl_solver_set_attachments' kind). */
#define PBFCL_ATTACH_SHAPE 0 /* a collision shape, by its id (pbfcl_shape_create) */
#define PBFCL_ATTACH_BODY 1  /* a body, by its index (pbfcl_solver_body_count) */

/* Attachments (method pbf), as FleX's users hang cloth on rigid bodies and kinematic shapes:
 * particle particle[k] is held by target[k] of kind kind[k] at point[3k..3k+2] (m) of the
 * target's frame. To a shape: the particle must be static (pinned: pbfcl_solver_set_phases);
 * every substep it is put at that point of the shape's pose, so it moves with the shape and
 * drags what hangs from it with the shape's velocity; compliance is not used. To a body: the
 * particle must be of a solid group (pbfcl_solver_set_groups); the point is from the body's
 * centre of mass in its rest orientation (pbfcl_solver_get_bodies' pose carries it to the
 * world), and a distance constraint of compliance[k] (m/N, >= 0; 0 rigid; compliance NULL:
 * all 0) holds the particle at the point's distance from the body's particle nearest to it at
 * rest, so that each pulls the other (a point 2r from that particle, where the cloth would
 * touch the body, keeps the two from pushing each other apart). count 0 removes them all. Refused,
 * naming the attachment, the particle and the fix, the old ones kept: a particle out of range,
 * attached twice or of the wrong kind, an unknown kind, shape or body, a point or compliance not
 * finite, a negative compliance. Setting phases removes them; removing particles renumbers them and
 * drops those of a removed particle; destroying a shape drops its attachments (their particles
 * stay, static); a saved state holds them. get copies them (any array may be NULL) into arrays of
 * count entries, count the number set (pbfcl_solver_attachment_count). */
PBFCL_API pbfcl_status pbfcl_solver_set_attachments(pbfcl_solver *s, const unsigned *particle,
                                                    const int *kind, const int *target,
                                                    const float *point, const float *compliance,
                                                    size_t count);
PBFCL_API pbfcl_status pbfcl_solver_attachment_count(pbfcl_solver *s, size_t *count);
PBFCL_API pbfcl_status pbfcl_solver_get_attachments(pbfcl_solver *s, unsigned *particle, int *kind,
                                                    int *target, float *point, float *compliance,
                                                    size_t count);

/* ---- inflatables: closed meshes holding a volume of gas --------------------------------- */

/* Inflatables (FleX's; docs/ALGORITHM.md, "Inflatables"), method pbf only: inflatable k is the
 * next tri_count[k] triangles of tri (3 particle indices each, the caller's order,
 * counter-clockwise seen from outside), a closed manifold mesh (every edge in two triangles
 * wound alike; at least 4), no particle in two inflatables. rest_volume[k] (m^3, finite, > 0)
 * is the volume it encloses at rest, pressure[k] (finite, > 0) the multiple of it that its gas
 * holds when nothing presses on it, compliance[k] (m^3/Pa, finite, >= 0) its gas' compliance
 * there: 0 holds the volume exactly; otherwise the gas is at the ambient pressure
 * pressure * rest_volume / compliance when unloaded and follows Boyle's law (pressure times
 * volume constant) when pressed. Its shell is whatever holds the particles together (distance
 * constraints: a cloth of the mesh). count 0 removes them. Refused, naming the inflatable, the
 * triangle and the fix, the old ones kept: an index out of range or repeated in a triangle, a
 * particle in two inflatables, an open or non-manifold mesh, a bad number. Removing particles
 * renumbers them and drops one that lost a vertex. get copies them (any array may be NULL) into
 * arrays of count inflatables and their triangles, count the number set
 * (pbfcl_solver_inflatable_count). */
PBFCL_API pbfcl_status pbfcl_solver_set_inflatables(pbfcl_solver *s, const unsigned *tri_count,
                                                    const unsigned *tri, const float *rest_volume,
                                                    const float *pressure, const float *compliance,
                                                    size_t count);
PBFCL_API pbfcl_status pbfcl_solver_inflatable_count(pbfcl_solver *s, size_t *count,
                                                     size_t *triangles);
PBFCL_API pbfcl_status pbfcl_solver_get_inflatables(pbfcl_solver *s, unsigned *tri_count,
                                                    unsigned *tri, float *rest_volume,
                                                    float *pressure, float *compliance,
                                                    size_t count);

/* Each inflatable's volume (m^3) and its gas' pressure above the ambient one (Pa), as the last
 * substep's last solver iteration measured them; either array may be NULL. */
PBFCL_API pbfcl_status pbfcl_solver_get_inflatable_volumes(pbfcl_solver *s, float *volume,
                                                           float *pressure, size_t count);

/* ---- state: checkpoints and restarts ------------------------------------------------------ */

/* Receives one named section of a solver's state; a non-OK status stops the save. */
typedef pbfcl_status (*pbfcl_state_write_fn)(void *user, const char *name, const void *data,
                                             size_t bytes);
/* Fills exactly bytes bytes of the named section, or fails (e.g. the section is missing). */
typedef pbfcl_status (*pbfcl_state_read_fn)(void *user, const char *name, void *data, size_t bytes);

/* Saves everything that carries from one step to the next (the particle count, the
 * parameters, the phases, the device state in the solver's internal order, the bodies' rest
 * shapes, poses and motions, the obstacles' paths with their clock, the distance constraints,
 * the collision shapes with their poses and velocities, the attachments) as named sections
 * through write, in the order load reads them. The sections are opaque: a state loads into a
 * solver of the same library build, and continues bit for bit on the same device. */
PBFCL_API pbfcl_status pbfcl_solver_save_state(pbfcl_solver *s, pbfcl_state_write_fn write,
                                               void *user);

/* Restores a saved state, parameters included, into a solver whose capacity holds its
 * particles; the solver must be empty (count 0) or hold the saved count. Every field of every
 * section is checked before any of it is used (ids unique and below the count, phases, body
 * and path tables that agree, finite values, positions inside the domain with a margin of one
 * box size): a bad one is refused with PBFCL_ERR_BAD_ARGUMENT and a message naming the
 * section, the field and its index; so is a count that would make a later section larger
 * than the device's memory, before memory is taken for it. read may be asked for a section
 * more than once and in any order. A failed load leaves the solver with an undefined state:
 * load again or destroy it. */
PBFCL_API pbfcl_status pbfcl_solver_load_state(pbfcl_solver *s, pbfcl_state_read_fn read,
                                               void *user);

/* Saves what a scene setup carries through a run (the scene itself, so a checkpoint needs no
 * scene file, and the particles each emitter has emitted) as named sections through write;
 * they do not clash with the solver's, so both can go to one file. */
PBFCL_API pbfcl_status pbfcl_scene_setup_save_state(const pbfcl_scene_setup *s,
                                                    pbfcl_state_write_fn write, void *user);

/* Makes a scene setup from sections saved by pbfcl_scene_setup_save_state (its bytes checked
 * first: booleans, shape kinds, counts and mesh triangles in range; then validated like a
 * loaded scene); destroy it with pbfcl_scene_setup_destroy. */
PBFCL_API pbfcl_status pbfcl_scene_setup_load_state(pbfcl_state_read_fn read, void *user,
                                                    pbfcl_scene_setup **out);

/* ---- stepping, timers, statistics, rendering ---------------------------------------------- */

/* The summary of a timed step (NvFlexTimers' model): device time in ms from OpenCL profiling
 * events. The time of each stage is read by name from the solver (pbfcl_solver_timer), so
 * that a new stage adds a name, not a field. */
typedef struct pbfcl_timers {
    double total; /* ms, the sum of the stages */
    int substeps; /* substeps the step took */
    int kernels;  /* kernel launches timed */
} pbfcl_timers;

/* Advances one frame of dt seconds (dt <= 0: the parameters' dt) in at least the solver's
 * substeps, more where the flow is fast (a CFL condition). If timers is not NULL, the step
 * is timed with OpenCL profiling events, waits for the device, and keeps the time of each
 * stage it ran for pbfcl_solver_timer. */
PBFCL_API pbfcl_status pbfcl_solver_step(pbfcl_solver *s, float dt, pbfcl_timers *timers);

/* Waits until the device has finished the solver's work. */
PBFCL_API pbfcl_status pbfcl_solver_finish(pbfcl_solver *s);

/* The number of stages the last timed step ran (0 before one, or for a bad handle): the
 * stages of the solver's method ("predict", "hash", "sort", ..., "solve" for PBF; "density",
 * "force", "integrate" for SPH), "diffuse" while spray, foam and bubbles are on, "other". */
PBFCL_API int pbfcl_solver_timer_count(const pbfcl_solver *s);

/* Stage i (0 .. pbfcl_solver_timer_count - 1, in the order of the outline) of the last timed
 * step: its name (a static string) and device time in ms; name or ms may be NULL. */
PBFCL_API pbfcl_status pbfcl_solver_timer(const pbfcl_solver *s, int i, const char **name,
                                          double *ms);

/* The device time in ms of the stage called name in the last timed step: 0 for a stage that
 * step did not run; PBFCL_ERR_BAD_ARGUMENT (naming the stages) for a name of no stage. */
PBFCL_API pbfcl_status pbfcl_solver_timer_ms(const pbfcl_solver *s, const char *name, double *ms);

/* Per-device-kernel totals since the solver was created, over the timed steps only. */
PBFCL_API int pbfcl_solver_kernel_times(const pbfcl_solver *s, int index, const char **name,
                                        double *ms, long long *launches);

/* The statistics of the current state (the columns of `pbfcl run --stats`). */
/* With bodies, each particle counts with its own mass (a body's by its density; static and
 * moving obstacles carry no energy or momentum) and the density error is the fluid's. */
typedef struct pbfcl_stats {
    double kinetic_energy;    /* J */
    double density_error_avg; /* % of rest density, compression only, fluid particles */
    double density_error_max; /* % */
    double max_speed;         /* m/s */
    double neighbours_avg;    /* neighbours within h per particle */
    unsigned neighbours_max;
    unsigned outside;            /* particles beyond the walls the solver confines them to */
    unsigned nan;                /* particles with a non-finite position or velocity */
    double momentum[3];          /* kg m/s */
    unsigned neighbour_overflow; /* particles whose neighbour list was cut short (last step) */
    int substeps;                /* substeps of the last step */
    int unstable; /* nonzero if nan > 0 or max_speed exceeds the solver's max_speed (the blow-up
                     guard; a max_speed of 0 means a limit derived from the box and gravity) */
} pbfcl_stats;

PBFCL_API pbfcl_status pbfcl_solver_stats(pbfcl_solver *s, pbfcl_stats *out);

/* The blow-up limit on speed, m/s: max_speed, or when it is 0 a limit derived from the box
 * diagonal D and gravity (4 sqrt(2 max(|g|, 9.81) D)); pbfcl_stats.unstable compares to it. */
PBFCL_API pbfcl_status pbfcl_solver_speed_limit(const pbfcl_solver *s, float *out);

/* The neighbour list capacity per particle. */
PBFCL_API pbfcl_status pbfcl_solver_max_neighbours(const pbfcl_solver *s, unsigned *out);

/* The render hook: enqueues a copy of the active particles as float4 (x, y, z, |v|) into dst,
 * a buffer of the solver's context holding at least count * 16 bytes (e.g. shared with
 * OpenGL, acquired by the caller), in the caller's order: dst[k] is particle k, as in
 * pbfcl_solver_get_positions. It runs on the context's queue after the steps enqueued before
 * it; call pbfcl_solver_finish (or clFinish the queue) before another API reads dst. */
PBFCL_API pbfcl_status pbfcl_solver_copy_positions(pbfcl_solver *s, cl_mem dst);

/* An external push: particles within radius of the ray origin + t dir (t >= 0) accelerate by
 * strength m/s^2 along push; strength 0 turns it off. origin, dir and push must be finite, and
 * while on, dir and push not zero and radius > 0 (else PBFCL_ERR_BAD_ARGUMENT, the push as it
 * was). */
PBFCL_API pbfcl_status pbfcl_solver_set_push(pbfcl_solver *s, const float origin[3],
                                             const float dir[3], const float push[3], float radius,
                                             float strength);

/* ---- colliders: shapes the particles collide with ---------------------------------------- */

/* The kinds of collision shape. */
typedef enum pbfcl_shape_type {
    PBFCL_SHAPE_KIND_SPHERE,  /* radius */
    PBFCL_SHAPE_KIND_CAPSULE, /* radius, half_length: the segment from -half_length to half_length
                            along its local x axis, rounded by radius */
    PBFCL_SHAPE_KIND_BOX,     /* half_extents */
    PBFCL_SHAPE_KIND_CONVEX,  /* the convex hull of points (or of obj_path's vertices), 4 to 128 */
    PBFCL_SHAPE_KIND_MESH,    /* triangles over vertices (or obj_path's), open or closed */
    PBFCL_SHAPE_KIND_SDF      /* the signed distance field of a closed mesh (vertices and
                                 triangles, or obj_path's) on a grid of sdf_resolution cells */
} pbfcl_shape_type;

/* A collision shape (a zeroed struct plus its type and size is a valid one at the origin):
 * particles keep radius + margin from its surface, with Coulomb friction relative to its
 * motion. Velocities move it between steps (each substep advances its pose by them), so a
 * moving shape carries the particles in contact with it. */
typedef struct pbfcl_shape_desc {
    pbfcl_shape_type type;
    const char *name;      /* in messages; NULL: "shape <id>" */
    float radius;          /* sphere, capsule, m */
    float half_length;     /* capsule, m */
    float half_extents[3]; /* box, m */
    const float *points;   /* convex: xyz triples of point_count points */
    size_t point_count;
    const float *vertices; /* mesh: xyz triples of vertex_count vertices */
    size_t vertex_count;
    const unsigned *triangles; /* mesh: 3 vertex indices each, counter-clockwise from the front */
    size_t triangle_count;
    const char *obj_path;      /* mesh or convex: read the vertices (and triangles) from this OBJ */
    float scale;               /* multiplies obj_path's vertices; 0 means 1 */
    int two_sided;             /* mesh: collide on both sides (else only in front) */
    float position[3];         /* m */
    float rotation[4];         /* unit quaternion x, y, z, w (normalised); all zero: none */
    float velocity[3];         /* m/s */
    float angular_velocity[3]; /* rad/s about position */
    float friction;            /* dynamic Coulomb coefficient, >= 0 */
    float static_friction;     /* static Coulomb coefficient, >= 0 */
    float margin;              /* m, >= 0: extra distance kept from the surface */
    int sdf_resolution;        /* sdf: cells along the mesh's longest side, 2 to 128 (0: 32) */
    float until; /* s: the velocities move it this long from its creation, then it stops (0:
                    for ever; new velocities from pbfcl_shape_set_motion move it for ever) */
} pbfcl_shape_desc;

/* The most shapes a solver holds. */
#define PBFCL_MAX_SHAPES 64

/* The finest SDF: cells along its mesh's longest side. */
#define PBFCL_MAX_SDF_RESOLUTION 128

/* Adds a shape (method pbf only); *id names it until destroyed. A shape that is not
 * valid (a size that is not positive, a non-finite pose, a hull of fewer than 4 non-coplanar
 * points, an OBJ that is not a mesh, more than PBFCL_MAX_SHAPES) is refused with
 * PBFCL_ERR_BAD_ARGUMENT (or PBFCL_ERR_IO for an unreadable file) and a message naming the
 * shape and the fix. */
PBFCL_API pbfcl_status pbfcl_shape_create(pbfcl_solver *s, const pbfcl_shape_desc *desc, int *id);

/* Moves shape id to a new pose with new velocities (any pointer NULL: kept as it is; new
 * velocities move it until changed). */
PBFCL_API pbfcl_status pbfcl_shape_set_motion(pbfcl_solver *s, int id, const float position[3],
                                              const float rotation[4], const float velocity[3],
                                              const float angular_velocity[3]);

/* Reads shape id's pose (position xyz, rotation quaternion xyzw; either may be NULL). */
PBFCL_API pbfcl_status pbfcl_shape_get_pose(const pbfcl_solver *s, int id, float position[3],
                                            float rotation[4]);

/* Removes shape id. */
PBFCL_API pbfcl_status pbfcl_shape_destroy(pbfcl_solver *s, int id);

/* The number of shapes. */
PBFCL_API pbfcl_status pbfcl_shape_count(const pbfcl_solver *s, int *count);

/* The id of the index-th shape (0 .. pbfcl_shape_count - 1, in the order they were made). */
PBFCL_API pbfcl_status pbfcl_shape_id(const pbfcl_solver *s, int index, int *id);

/* What a shape is, for drawing and export (pbfcl_shape_get_info). */
typedef struct pbfcl_shape_info {
    pbfcl_shape_type type;
    char name[64];             /* as messages name it: "shape 'NAME'" or "shape <id>" */
    float radius;              /* sphere, capsule, m */
    float half_length;         /* capsule, m (along its local x) */
    float half_extents[3];     /* box, m */
    int two_sided;             /* mesh */
    float velocity[3];         /* m/s */
    float angular_velocity[3]; /* rad/s about its position */
} pbfcl_shape_info;

/* Reads shape id's kind, size and velocities. */
PBFCL_API pbfcl_status pbfcl_shape_get_info(const pbfcl_solver *s, int id, pbfcl_shape_info *info);

/* Shape id's surface in its own frame (pbfcl_shape_get_pose places it in the world) as
 * triangles over vertices, counter-clockwise seen from outside: a sphere or capsule tessellated
 * with `segments` (4 .. 256; 0: 24) around its axis and half as many from pole to pole, a box's
 * 12 triangles over its 8 corners, a convex hull's faces (each a fan), a mesh's triangles over
 * its distinct corners. *vertex_count and *triangle_count give the room in vertices (xyz
 * triples) and triangles (3 indices each) and return the numbers the surface has; with either
 * array NULL only the numbers are returned, and room for fewer is PBFCL_ERR_BUFFER_SIZE. */
PBFCL_API pbfcl_status pbfcl_shape_get_surface(const pbfcl_solver *s, int id, int segments,
                                               float *vertices, size_t *vertex_count,
                                               unsigned *triangles, size_t *triangle_count);

/* Shape id's contacts: the force the particles exert on it in the last substep (N, the fluid's
 * pressure included; an embedding engine pushes its rigid body with it), the particles its
 * contact planes moved then, and the particles found inside it (a sphere, capsule, box, convex
 * hull or SDF) at the start of a substep since shapes were last added or destroyed (placed there
 * by the caller; each is moved out along the distance's gradient). Zeros before the first step
 * after such a change. Any pointer may be NULL. */
PBFCL_API pbfcl_status pbfcl_shape_contacts(pbfcl_solver *s, int id, float force[3],
                                            unsigned *contacts, unsigned *inside);

/* ---- diffuse particles: spray, foam and bubbles ------------------------------------------ */

/* Diffuse particle types (the integer part of a diffuse position's w). */
#define PBFCL_DIFFUSE_TYPE_SPRAY 0
#define PBFCL_DIFFUSE_TYPE_FOAM 1
#define PBFCL_DIFFUSE_TYPE_BUBBLE 2

/* Turns spray, foam and bubbles on with room for capacity of them (Ihmsen et al. 2012; the
 * solver parameters diffuse_*), or off with capacity 0 (their buffers are released). While on,
 * each pbfcl_solver_step ends with the "diffuse" stage: fluid particles with trapped air or at
 * a wave crest, and fast enough, emit them; each is spray, foam or a bubble by its number of
 * fluid neighbours and moves as that type; they never act on the fluid. New ones beyond the
 * capacity are dropped and counted. Turning it on again starts with none. */
PBFCL_API pbfcl_status pbfcl_solver_set_diffuse(pbfcl_solver *s, size_t capacity);

/* The diffuse particles now (0 while off) and the emissions dropped for want of room since they
 * were turned on; either pointer may be NULL. */
PBFCL_API pbfcl_status pbfcl_solver_diffuse_count(const pbfcl_solver *s, size_t *count,
                                                  unsigned long long *dropped);

/* Reads the diffuse particles into arrays of count entries (count must equal
 * pbfcl_solver_diffuse_count's): pos4 as (x, y, z, type + the fraction of its life left, below
 * 1) and vel4 as (vx, vy, vz, life in s); either may be NULL. Their order is the solver's. */
PBFCL_API pbfcl_status pbfcl_solver_get_diffuse(pbfcl_solver *s, float *pos4, float *vel4,
                                                size_t count);

#ifdef __cplusplus
}
#endif

#endif
