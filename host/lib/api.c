/* The public API (include/pbfcl.h) on the simulator core: contexts and solvers as checked
 * handles, particle data translated between the caller's order (by particle id) and the
 * solver's sorted order, steps with per-stage timers. Every entry point checks its arguments
 * and logs what was wrong before returning the status. */
#include "api_internal.h"
#include "runtime/clrt.h"
#include "runtime/profile.h"
#include "bodies/shape_match.h"
#include "sim/sim.h"
#include "solver_methods.h"
#include "sim/state_check.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pbfcl_context {
    pbfcl_cl cl;
};

struct pbfcl_solver {
    pbfcl_context *ctx;
    pbfcl_sim *sim;
    pbfcl_scene scene;         /* the parameters in use */
    int *phases;               /* by particle id, capacity entries (pbfcl_make_phase's) */
    unsigned *ids;             /* scratch: the id of each slot, capacity entries */
    float *scratch;            /* scratch: capacity xyz triples */
    pbfcl_profile *prof;       /* allocated at the first timed step */
    pbfcl_api_timers timers;   /* of the last timed step (api_timers.c) */
    pbfcl_api_diffuse diffuse; /* spray, foam and bubbles; off until set (api_diffuse.c) */
    pbfcl_api_cloth cloth;     /* triangles for rendering (api_cloth.c) */
};

/* ---- live handles: every handle is checked against this list before it is used -------- */

typedef struct live_handle {
    const void *ptr;
    pbfcl_handle_kind kind;
} live_handle;

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static live_handle *live;
static size_t live_count, live_cap;

bool pbfcl_api_live_add(const void *ptr, pbfcl_handle_kind kind)
{
    pthread_mutex_lock(&live_lock);
    bool ok = true;
    if (live_count == live_cap) {
        size_t cap = live_cap ? 2 * live_cap : 16;
        live_handle *grown = realloc(live, cap * sizeof *grown);
        if (grown) {
            live = grown;
            live_cap = cap;
        } else {
            ok = false;
        }
    }
    if (ok)
        live[live_count++] = (live_handle){ptr, kind};
    pthread_mutex_unlock(&live_lock);
    return ok;
}

bool pbfcl_api_live_find(const void *ptr, pbfcl_handle_kind kind, bool remove)
{
    pthread_mutex_lock(&live_lock);
    bool found = false;
    for (size_t i = 0; i < live_count && !found; i++) {
        if (live[i].ptr == ptr && live[i].kind == kind) {
            found = true;
            if (remove)
                live[i] = live[--live_count];
        }
    }
    pthread_mutex_unlock(&live_lock);
    return found;
}

/* Logs why a handle is refused and returns PBFCL_ERR_INVALID_HANDLE. */
pbfcl_status pbfcl_api_bad_handle(const char *func, const char *what, const void *ptr)
{
    if (!ptr)
        pbfcl_errorf("%s: %s is NULL", func, what);
    else
        pbfcl_errorf("%s: %s %p is not a live %s (destroyed already, or never created)", func, what,
                     ptr, what);
    return PBFCL_ERR_INVALID_HANDLE;
}

#define CHECK_CONTEXT(func, ctx)                                                                   \
    do {                                                                                           \
        if (!(ctx) || !pbfcl_api_live_find((ctx), HANDLE_CONTEXT, false))                          \
            return pbfcl_api_bad_handle(func, "context", (ctx));                                   \
    } while (0)

#define CHECK_SOLVER(func, s)                                                                      \
    do {                                                                                           \
        if (!(s) || !pbfcl_api_live_find((s), HANDLE_SOLVER, false))                               \
            return pbfcl_api_bad_handle(func, "solver", (s));                                      \
    } while (0)

/* ---- version ------------------------------------------------------------------------------ */

int pbfcl_version(void)
{
    return PBFCL_VERSION;
}

const char *pbfcl_version_string(void)
{
#define PBFCL_STR2_(x) #x
#define PBFCL_STR_(x) PBFCL_STR2_(x)
    return PBFCL_STR_(PBFCL_VERSION_MAJOR) "." PBFCL_STR_(PBFCL_VERSION_MINOR) "." PBFCL_STR_(
        PBFCL_VERSION_PATCH);
}

void pbfcl_free(void *p)
{
    free(p);
}

/* ---- devices and contexts ----------------------------------------------------------------- */

int pbfcl_device_count(void)
{
    pbfcl_device_info *list = NULL;
    int n = 0;
    if (pbfcl_cl_enumerate(&list, &n) != PBFCL_OK)
        return 0;
    free(list);
    return n;
}

pbfcl_status pbfcl_device_name(int index, char *buf, size_t size)
{
    CHECK_ARG("pbfcl_device_name", buf && size > 0, "buf is NULL or size is 0");
    pbfcl_device_info *list = NULL;
    int n = 0;
    PBFCL_TRY(pbfcl_cl_enumerate(&list, &n));
    if (index < 0 || index >= n) {
        free(list);
        pbfcl_errorf("pbfcl_device_name: index %d is not a device (there are %d)", index, n);
        return PBFCL_ERR_BAD_DEVICE;
    }
    snprintf(buf, size, "%s / %s (%s)", list[index].platform_name, list[index].device_name,
             pbfcl_cl_type_name(list[index].type));
    free(list);
    return PBFCL_OK;
}

pbfcl_status pbfcl_devices_print(FILE *f)
{
    CHECK_ARG("pbfcl_devices_print", f, "f is NULL");
    return pbfcl_cl_print_devices(f);
}

pbfcl_status pbfcl_device_find(const char *spec, int *index)
{
    pbfcl_device_info chosen, *list = NULL;
    int n = 0;
    PBFCL_TRY(pbfcl_cl_select(spec, &chosen));
    PBFCL_TRY(pbfcl_cl_enumerate(&list, &n));
    int found = -1;
    for (int i = 0; i < n && found < 0; i++)
        if (list[i].device == chosen.device)
            found = i;
    free(list);
    if (found < 0) {
        pbfcl_errorf("pbfcl_device_find: device '%s' vanished from the device list",
                     chosen.device_name);
        return PBFCL_ERR_BAD_DEVICE;
    }
    if (index)
        *index = found;
    return PBFCL_OK;
}

void pbfcl_context_desc_defaults(pbfcl_context_desc *d)
{
    if (d)
        memset(d, 0, sizeof *d);
}

/* Opens the caller's OpenCL objects or a device of pbfcl's choosing. */
static pbfcl_status context_open(pbfcl_cl *cl, const pbfcl_context_desc *d)
{
    int given = (d->cl_context != NULL) + (d->cl_device != NULL) + (d->cl_queue != NULL);
    if (given == 3)
        return pbfcl_cl_wrap(cl, d->cl_context, d->cl_device, d->cl_queue);
    CHECK_ARG("pbfcl_context_create", given == 0,
              "desc gives %d of cl_context, cl_device and cl_queue; give all three (to use your "
              "own OpenCL objects) or none",
              given);
    pbfcl_device_info dev;
    PBFCL_TRY(pbfcl_cl_select(d->device, &dev));
    return pbfcl_cl_create(cl, &dev, d->cl_properties);
}

pbfcl_status pbfcl_context_create(int header_version, const pbfcl_context_desc *desc,
                                  pbfcl_context **out)
{
    CHECK_ARG("pbfcl_context_create", out, "out is NULL");
    *out = NULL;
    if (header_version / 10000 != PBFCL_VERSION_MAJOR) {
        pbfcl_errorf("pbfcl_context_create: the program was built against pbfcl %d.%d.%d but "
                     "runs with the library %s; rebuild it against this library's "
                     "include/pbfcl.h (major versions differ in their ABI)",
                     header_version / 10000, header_version / 100 % 100, header_version % 100,
                     pbfcl_version_string());
        return PBFCL_ERR_VERSION;
    }
    pbfcl_context_desc defaults;
    if (!desc) {
        pbfcl_context_desc_defaults(&defaults);
        desc = &defaults;
    }
    pbfcl_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = context_open(&ctx->cl, desc);
    if (st == PBFCL_OK)
        st = pbfcl_cl_use_kernel_dir(&ctx->cl, desc->kernel_dir);
    ctx->cl.trace_builds = desc->trace_builds != 0;
    if (st == PBFCL_OK && !pbfcl_api_live_add(ctx, HANDLE_CONTEXT))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st != PBFCL_OK) {
        pbfcl_cl_destroy(&ctx->cl);
        free(ctx);
        return st;
    }
    *out = ctx;
    return PBFCL_OK;
}

static void solver_free(pbfcl_solver *s);

pbfcl_status pbfcl_context_destroy(pbfcl_context *ctx)
{
    if (!ctx)
        return PBFCL_OK;
    if (!pbfcl_api_live_find(ctx, HANDLE_CONTEXT, true))
        return pbfcl_api_bad_handle("pbfcl_context_destroy", "context", ctx);
    for (;;) { /* solvers still on it go with it */
        pbfcl_solver *orphan = NULL;
        pthread_mutex_lock(&live_lock);
        for (size_t i = 0; i < live_count && !orphan; i++)
            if (live[i].kind == HANDLE_SOLVER && ((const pbfcl_solver *)live[i].ptr)->ctx == ctx)
                orphan = (pbfcl_solver *)live[i].ptr;
        pthread_mutex_unlock(&live_lock);
        if (!orphan)
            break;
        pbfcl_warnf("pbfcl_context_destroy: solver %p was still alive; destroyed with its context",
                    (void *)orphan);
        pbfcl_api_live_find(orphan, HANDLE_SOLVER, true);
        solver_free(orphan);
    }
    pbfcl_cl_destroy(&ctx->cl);
    free(ctx);
    return PBFCL_OK;
}

pbfcl_status pbfcl_context_cl(const pbfcl_context *ctx, cl_context *context, cl_device_id *device,
                              cl_command_queue *queue)
{
    CHECK_CONTEXT("pbfcl_context_cl", ctx);
    if (context)
        *context = ctx->cl.context;
    if (device)
        *device = ctx->cl.dev.device;
    if (queue)
        *queue = ctx->cl.queue;
    return PBFCL_OK;
}

pbfcl_cl *pbfcl_api_context_cl(pbfcl_context *ctx)
{
    return ctx && pbfcl_api_live_find(ctx, HANDLE_CONTEXT, false) ? &ctx->cl : NULL;
}

pbfcl_status pbfcl_context_device_name(const pbfcl_context *ctx, char *buf, size_t size)
{
    CHECK_CONTEXT("pbfcl_context_device_name", ctx);
    CHECK_ARG("pbfcl_context_device_name", buf && size > 0, "buf is NULL or size is 0");
    snprintf(buf, size, "%s / %s", ctx->cl.dev.platform_name, ctx->cl.dev.device_name);
    return PBFCL_OK;
}

/* ---- scenes ------------------------------------------------------------------------------- */

pbfcl_status pbfcl_load_scene(const char *name_or_file, size_t target_particles,
                              pbfcl_scene_params *scene, pbfcl_solver_params *solver,
                              float **positions, size_t *count)
{
    CHECK_ARG("pbfcl_load_scene", name_or_file && *name_or_file, "name_or_file is NULL or empty");
    CHECK_ARG("pbfcl_load_scene", scene && solver && positions && count,
              "scene, solver, positions and count must not be NULL");
    *positions = NULL;
    *count = 0;
    pbfcl_scene s;
    PBFCL_TRY(pbfcl_scene_load(name_or_file, &s));
    if (target_particles > 0)
        PBFCL_TRY(pbfcl_scene_set_particle_count(&s, target_particles));
    PBFCL_TRY(pbfcl_scene_validate(&s));
    if (s.body_count > 0 || s.obstacle_count > 0 || s.emitter_count > 0 || s.drain_count > 0) {
        pbfcl_errorf("pbfcl_load_scene: scene '%s' has %s, which positions alone cannot "
                     "describe; load it with pbfcl_scene_setup_load, fill it with "
                     "pbfcl_scene_setup_fill and use pbfcl_scene_setup_apply_bodies and "
                     "pbfcl_scene_setup_flow",
                     s.name,
                     s.body_count > 0       ? "bodies"
                     : s.obstacle_count > 0 ? "obstacles"
                                            : "emitters or drains");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_scene_fill(&s, positions, count));
    pbfcl_api_params_from_scene(&s, scene, solver);
    return PBFCL_OK;
}

/* ---- solvers ------------------------------------------------------------------------------ */

void pbfcl_solver_desc_defaults(pbfcl_solver_desc *d)
{
    if (!d)
        return;
    memset(d, 0, sizeof *d);
    pbfcl_scene_params_defaults(&d->scene);
    pbfcl_solver_params_defaults(&d->solver);
}

static void solver_free(pbfcl_solver *s)
{
    pbfcl_api_diffuse_free(&s->diffuse);
    pbfcl_api_cloth_free(&s->cloth);
    free(s->cloth.tear);
    pbfcl_sim_destroy(s->sim);
    if (s->prof)
        pbfcl_profile_discard(s->prof);
    free(s->prof);
    free(s->phases);
    free(s->ids);
    free(s->scratch);
    free(s);
}

/* The core scene of the parameters, checked as the scene loader checks a file's. */
static pbfcl_status scene_of(const char *func, const pbfcl_scene_params *scene,
                             const pbfcl_solver_params *solver, pbfcl_scene *out)
{
    CHECK_ARG("pbfcl_solver", scene && solver,
              "%s: the scene and solver parameters must not be NULL", func);
    pbfcl_api_scene_from_params(scene, solver, out);
    snprintf(out->name, sizeof out->name, "%s", func); /* messages name the call */
    return pbfcl_scene_validate_settings(out);
}

pbfcl_status pbfcl_solver_create(pbfcl_context *ctx, const pbfcl_solver_desc *desc,
                                 pbfcl_solver **out)
{
    CHECK_ARG("pbfcl_solver_create", out, "out is NULL");
    *out = NULL;
    CHECK_CONTEXT("pbfcl_solver_create", ctx);
    CHECK_ARG("pbfcl_solver_create", desc, "desc is NULL (start from pbfcl_solver_desc_defaults)");
    CHECK_ARG("pbfcl_solver_create", desc->capacity >= 1 && desc->capacity <= UINT32_MAX / 64,
              "desc->capacity is %zu; give 1 to %u particles", desc->capacity, UINT32_MAX / 64);
    pbfcl_solver *s = calloc(1, sizeof *s);
    if (!s)
        return PBFCL_ERR_OUT_OF_MEMORY;
    s->ctx = ctx;
    size_t cap = desc->capacity;
    pbfcl_status st = scene_of("pbfcl_solver_create", &desc->scene, &desc->solver, &s->scene);
    if (st == PBFCL_OK &&
        (!(s->phases = calloc(cap, sizeof *s->phases)) || !(s->ids = calloc(cap, sizeof *s->ids)) ||
         !(s->scratch = calloc(3 * cap, sizeof *s->scratch))))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_sim_create_capacity(&s->sim, &ctx->cl, &s->scene, cap, NULL, 0);
    if (st == PBFCL_OK && !pbfcl_api_live_add(s, HANDLE_SOLVER))
        st = PBFCL_ERR_OUT_OF_MEMORY;
    if (st != PBFCL_OK) {
        solver_free(s);
        return st;
    }
    *out = s;
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_destroy(pbfcl_solver *s)
{
    if (!s)
        return PBFCL_OK;
    if (!pbfcl_api_live_find(s, HANDLE_SOLVER, true))
        return pbfcl_api_bad_handle("pbfcl_solver_destroy", "solver", s);
    solver_free(s);
    return PBFCL_OK;
}

/* True if a and b differ in nothing but gravity. */
static bool only_gravity_differs(const pbfcl_scene_params *a, const pbfcl_scene_params *b)
{
    pbfcl_scene_params x = *a;
    memcpy(x.gravity, b->gravity, sizeof x.gravity);
    return memcmp(&x, b, sizeof x) == 0;
}

pbfcl_status pbfcl_solver_set_params(pbfcl_solver *s, const pbfcl_scene_params *scene,
                                     const pbfcl_solver_params *solver)
{
    CHECK_SOLVER("pbfcl_solver_set_params", s);
    pbfcl_scene_params sp;
    pbfcl_solver_params vp;
    pbfcl_api_params_from_scene(&s->scene, &sp, &vp);
    bool same_solver = !solver || memcmp(solver, &vp, sizeof vp) == 0;
    if (scene)
        sp = *scene;
    if (solver)
        vp = *solver;
    pbfcl_scene next;
    PBFCL_TRY(scene_of("pbfcl_solver_set_params", &sp, &vp, &next));
    pbfcl_scene_params current;
    pbfcl_api_params_from_scene(&s->scene, &current, NULL);
    if (same_solver && only_gravity_differs(&current, &sp)) /* e.g. tilting the box each frame */
        pbfcl_sim_set_gravity(s->sim, sp.gravity);
    else
        PBFCL_TRY(pbfcl_sim_set_scene(s->sim, &next));
    memcpy(next.name, s->scene.name, sizeof next.name);
    s->scene = next;
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_get_params(const pbfcl_solver *s, pbfcl_scene_params *scene,
                                     pbfcl_solver_params *solver)
{
    CHECK_SOLVER("pbfcl_solver_get_params", s);
    pbfcl_api_params_from_scene(&s->scene, scene, solver);
    return PBFCL_OK;
}

/* ---- particles ---------------------------------------------------------------------------- */

pbfcl_status pbfcl_solver_count(const pbfcl_solver *s, size_t *count)
{
    CHECK_SOLVER("pbfcl_solver_count", s);
    CHECK_ARG("pbfcl_solver_count", count, "count is NULL");
    *count = pbfcl_sim_count(s->sim);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_capacity(const pbfcl_solver *s, size_t *capacity)
{
    CHECK_SOLVER("pbfcl_solver_capacity", s);
    CHECK_ARG("pbfcl_solver_capacity", capacity, "capacity is NULL");
    *capacity = pbfcl_sim_capacity(s->sim);
    return PBFCL_OK;
}

/* Checks a caller's array of count entries against the active count. */
static pbfcl_status check_array(const char *func, const char *name, const void *data,
                                const pbfcl_solver *s, size_t count)
{
    size_t n = pbfcl_sim_count(s->sim);
    if (!data && count > 0) {
        pbfcl_errorf("%s: %s is NULL", func, name);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (count != n) {
        pbfcl_errorf("%s: count is %zu but the solver has %zu active particles; %s must hold "
                     "one entry per active particle",
                     func, count, n, name);
        return count > pbfcl_sim_capacity(s->sim) ? PBFCL_ERR_CAPACITY : PBFCL_ERR_BUFFER_SIZE;
    }
    return PBFCL_OK;
}

/* Checks that count xyz triples are finite. */
static pbfcl_status check_finite(const char *func, const char *name, const float *xyz, size_t count)
{
    for (size_t i = 0; i < 3 * count; i++)
        if (!isfinite(xyz[i])) {
            pbfcl_errorf("%s: %s[%zu] (particle %zu) is not a finite number", func, name, i, i / 3);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    return PBFCL_OK;
}

/* Refuses a position outside the solver's box (domain_min..domain_max), naming the particle
 * (its index in xyz) and the box: the next step would move it to the nearest wall without a
 * word. A position inside the box but within r of a face is moved to the walls (the box less
 * r) by the next step, as the solver holds every particle. */
static pbfcl_status check_in_box(const pbfcl_solver *s, const char *func, const float *xyz,
                                 size_t count)
{
    const float *lo = s->scene.domain_min, *hi = s->scene.domain_max;
    for (size_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++)
            if (!(xyz[3 * i + a] >= lo[a] && xyz[3 * i + a] <= hi[a])) {
                pbfcl_errorf("%s: particle %zu is at %c = %g, outside the box (%g, %g, %g) to "
                             "(%g, %g, %g); place particles inside the box (domain_min to "
                             "domain_max)",
                             func, i, "xyz"[a], xyz[3 * i + a], lo[0], lo[1], lo[2], hi[0], hi[1],
                             hi[2]);
                return PBFCL_ERR_BAD_ARGUMENT;
            }
    return PBFCL_OK;
}

/* Reads the id of every slot into s->ids and checks them (ids are 0..n-1, once each). */
static pbfcl_status read_ids(pbfcl_solver *s)
{
    size_t n = pbfcl_sim_count(s->sim);
    PBFCL_TRY(pbfcl_sim_read_ids(s->sim, s->ids));
    for (size_t i = 0; i < n; i++)
        if (s->ids[i] >= n) {
            pbfcl_errorf("particle ids are corrupt: slot %zu holds id %u of %zu particles", i,
                         s->ids[i], n);
            return PBFCL_ERR_SIMULATION;
        }
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_add(pbfcl_solver *s, const float *positions, const float *velocities,
                              size_t count)
{
    CHECK_SOLVER("pbfcl_solver_add", s);
    size_t n = pbfcl_sim_count(s->sim), cap = pbfcl_sim_capacity(s->sim);
    if (count > cap - n) {
        pbfcl_errorf("pbfcl_solver_add: %zu particles added to %zu exceed the capacity of %zu",
                     count, n, cap);
        return PBFCL_ERR_CAPACITY;
    }
    if (count == 0)
        return PBFCL_OK;
    CHECK_ARG("pbfcl_solver_add", positions, "positions is NULL");
    PBFCL_TRY(check_finite("pbfcl_solver_add", "positions", positions, count));
    PBFCL_TRY(check_in_box(s, "pbfcl_solver_add", positions, count));
    if (velocities)
        PBFCL_TRY(check_finite("pbfcl_solver_add", "velocities", velocities, count));
    PBFCL_TRY(pbfcl_sim_append(s->sim, positions, velocities, count));
    for (size_t i = n; i < n + count; i++)
        s->phases[i] = (int)PBFCL_SIM_PHASE_FLUID;
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_remove(pbfcl_solver *s, const size_t *particles, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_remove", s);
    size_t n = pbfcl_sim_count(s->sim);
    if (count == 0)
        return PBFCL_OK;
    CHECK_ARG("pbfcl_solver_remove", particles, "particles is NULL");
    CHECK_ARG("pbfcl_solver_remove", count <= n, "count %zu exceeds the %zu active particles",
              count, n);
    unsigned *rank = calloc(n, sizeof *rank); /* new id of each id; UINT32_MAX: removed */
    unsigned *slots = malloc(n * sizeof *slots);
    pbfcl_status st = rank && slots ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; st == PBFCL_OK && k < count; k++) {
        if (particles[k] >= n || rank[particles[k]] == UINT32_MAX) {
            pbfcl_errorf("pbfcl_solver_remove: particles[%zu] = %zu is %s", k, particles[k],
                         particles[k] >= n ? "not an active particle" : "listed twice");
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else if (s->phases[particles[k]] == (int)PBFCL_SIM_PHASE_STATIC) {
            pbfcl_errorf("pbfcl_solver_remove: particles[%zu] = %zu is static (an obstacle's); "
                         "make it fluid first (pbfcl_solver_set_phases)",
                         k, particles[k]);
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else if (PBFCL_SIM_PHASE_IS_GROUP((unsigned)s->phases[particles[k]])) {
            unsigned p = (unsigned)s->phases[particles[k]] & ~PBFCL_PHASE_SELF_COLLIDE_BIT;
            pbfcl_errorf("pbfcl_solver_remove: particles[%zu] = %zu belongs to solid group %u (a "
                         "cloth or a rope); remove the group first (pbfcl_solver_set_groups) "
                         "and its distance constraints",
                         k, particles[k], PBFCL_SIM_PHASE_GROUP(0) - p);
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else if (s->phases[particles[k]] != (int)PBFCL_SIM_PHASE_FLUID) {
            pbfcl_errorf("pbfcl_solver_remove: particles[%zu] = %zu belongs to body %u; make "
                         "its body fluid first (pbfcl_solver_set_phases)",
                         k, particles[k],
                         PBFCL_SIM_PHASE_BODY_OF((unsigned)s->phases[particles[k]]));
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else {
            rank[particles[k]] = UINT32_MAX;
        }
    }
    size_t m = 0;
    for (size_t id = 0; st == PBFCL_OK && id < n; id++)
        if (rank[id] != UINT32_MAX) {
            s->phases[m] = s->phases[id];
            rank[id] = (unsigned)m++;
        }
    if (st == PBFCL_OK)
        st = read_ids(s);
    size_t kept = 0;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (rank[s->ids[i]] != UINT32_MAX) {
            slots[kept] = (unsigned)i;
            s->ids[kept++] = rank[s->ids[i]]; /* ids[kept] <= ids[i]: read before written */
        }
    if (st == PBFCL_OK)
        st = pbfcl_sim_compact(s->sim, slots, m, s->ids);
    if (st == PBFCL_OK) /* the triangles' indices name particles that move */
        st = pbfcl_api_cloth_drop(s->sim, &s->cloth);
    if (st == PBFCL_OK) /* distance constraints and inflatables name particles by index too */
        st = pbfcl_api_remap_constraints(s->sim, rank);
    if (st == PBFCL_OK)
        st = pbfcl_sim_remap_body_ids(s->sim, rank); /* bodies name their particles by id */
    free(rank);
    free(slots);
    return st;
}

/* Sets positions (which == 0) or velocities (1) of every particle from the caller's order. */
static pbfcl_status set_by_id(pbfcl_solver *s, const char *func, const float *xyz, size_t count,
                              int which)
{
    PBFCL_TRY(check_array(func, which ? "velocities" : "positions", xyz, s, count));
    PBFCL_TRY(check_finite(func, which ? "velocities" : "positions", xyz, count));
    if (which == 0)
        PBFCL_TRY(check_in_box(s, func, xyz, count));
    PBFCL_TRY(read_ids(s));
    for (size_t i = 0; i < count; i++)
        memcpy(s->scratch + 3 * i, xyz + 3 * (size_t)s->ids[i], 3 * sizeof(float));
    return pbfcl_sim_write(s->sim, which ? NULL : s->scratch, which ? s->scratch : NULL);
}

pbfcl_status pbfcl_solver_set_positions(pbfcl_solver *s, const float *xyz, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_set_positions", s);
    return set_by_id(s, "pbfcl_solver_set_positions", xyz, count, 0);
}

pbfcl_status pbfcl_solver_set_velocities(pbfcl_solver *s, const float *xyz, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_set_velocities", s);
    return set_by_id(s, "pbfcl_solver_set_velocities", xyz, count, 1);
}

/* Reads positions (0), velocities (1) or densities (2) into the caller's order. */
static pbfcl_status get_by_id(pbfcl_solver *s, const char *func, float *out, size_t count,
                              int which)
{
    static const char *const names[] = {"positions", "velocities", "densities"};
    PBFCL_TRY(check_array(func, names[which], out, s, count));
    PBFCL_TRY(read_ids(s));
    float *t = s->scratch;
    PBFCL_TRY(pbfcl_sim_read(s->sim, which == 0 ? t : NULL, which == 1 ? t : NULL,
                             which == 2 ? t : NULL));
    int width = which == 2 ? 1 : 3;
    for (size_t i = 0; i < count; i++)
        memcpy(out + width * (size_t)s->ids[i], t + width * i, (size_t)width * sizeof(float));
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_get_positions(pbfcl_solver *s, float *xyz, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_get_positions", s);
    return get_by_id(s, "pbfcl_solver_get_positions", xyz, count, 0);
}

pbfcl_status pbfcl_solver_get_velocities(pbfcl_solver *s, float *xyz, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_get_velocities", s);
    return get_by_id(s, "pbfcl_solver_get_velocities", xyz, count, 1);
}

pbfcl_status pbfcl_solver_get_densities(pbfcl_solver *s, float *density, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_get_densities", s);
    return get_by_id(s, "pbfcl_solver_get_densities", density, count, 2);
}

/* Refuses a body's (body -1: a static) particle i (positions pos, xyz) beyond the walls the solver
 * holds particles to (the box less r): predict would clamp it there and bend the body's rest shape.
 */
static pbfcl_status check_inside(const pbfcl_solver *s, int body, size_t i, const float *pos)
{
    float r = s->scene.particle_radius;
    for (int a = 0; a < 3; a++) {
        float lo = s->scene.domain_min[a] + r, hi = s->scene.domain_max[a] - r, x = pos[3 * i + a];
        float tol = 1e-5f * (s->scene.domain_max[a] - s->scene.domain_min[a]);
        if (!(x >= lo - tol && x <= hi + tol)) {
            char what[32] = "a static particle";
            if (body >= 0)
                snprintf(what, sizeof what, "body %d", body);
            pbfcl_errorf("pbfcl_solver_set_phases: %s: particle %zu is at %c = %g, beyond the "
                         "walls (%g to %g, the box less the particle radius); move it inside "
                         "the box",
                         what, i, "xyz"[a], x, lo, hi);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    return PBFCL_OK;
}

/* Writes the phases (by particle id) to the solver's particles, in its order. */
static pbfcl_status write_phases(pbfcl_solver *s, const int *phases, size_t n)
{
    if (n == 0)
        return PBFCL_OK;
    PBFCL_TRY(read_ids(s));
    unsigned *slot_phase = malloc(n * sizeof *slot_phase);
    if (!slot_phase)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++)
        slot_phase[i] = (unsigned)phases[s->ids[i]];
    pbfcl_status st = pbfcl_sim_write_phases(s->sim, slot_phase, NULL);
    free(slot_phase);
    return st;
}

/* The bodies of phases (pbfcl_make_phase's, checked): entries sorted by body (by id within
 * one), their positions now as the rest shapes, rigid and of the fluid's density; then the
 * static particles; then the phases themselves (a body's flags). */
static pbfcl_status set_bodies(pbfcl_solver *s, const int *phases, size_t n, size_t nb,
                               size_t *first)
{
    size_t entries = 0;
    for (size_t b = 0; b < nb; b++) { /* sizes to offsets */
        size_t c = first[b];
        first[b] = entries;
        entries += c;
    }
    unsigned *id = malloc((entries + 1) * sizeof *id), *body = malloc((entries + 1) * 4);
    float *rest = malloc((entries + 1) * 3 * sizeof *rest);
    float *ones = malloc((nb + 1) * sizeof *ones);
    float *pos = malloc((n + 1) * 3 * sizeof *pos);    /* not s->scratch: get_by_id reads into it */
    unsigned *fixed = malloc((n + 1) * sizeof *fixed); /* the static particles' ids */
    pbfcl_status st =
        id && body && rest && ones && pos && fixed ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK && n > 0)
        st = get_by_id(s, "pbfcl_solver_set_phases", pos, n, 0);
    if (st == PBFCL_OK) /* setting phases clears the solid groups (pbfcl.h): a grouped particle */
        st = pbfcl_sim_set_groups(s->sim, 0, NULL, NULL, NULL); /* may become static or a body */
    if (st == PBFCL_OK) /* and the attachments: their bodies and static particles are new */
        st = pbfcl_api_clear_attachments(s->sim);
    size_t statics = 0;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (phases[i] == (int)PBFCL_SIM_PHASE_STATIC) {
            if ((st = check_inside(s, -1, i, pos)) == PBFCL_OK)
                fixed[statics++] = (unsigned)i;
        } else if (phases[i] != (int)PBFCL_SIM_PHASE_FLUID &&
                   (st = check_inside(s, (int)PBFCL_SIM_PHASE_BODY_OF((unsigned)phases[i]), i,
                                      pos)) == PBFCL_OK) {
            size_t b = PBFCL_SIM_PHASE_BODY_OF((unsigned)phases[i]), e = first[b]++;
            id[e] = (unsigned)i;
            body[e] = (unsigned)b;
            memcpy(rest + 3 * e, pos + 3 * i, 3 * sizeof *rest);
        }
    for (size_t b = 0; b < nb; b++)
        ones[b] = 1.0f;
    if (st == PBFCL_OK)
        st = pbfcl_sim_set_bodies(s->sim, nb, entries, id, body, rest, ones, ones);
    if (st == PBFCL_OK)
        st = pbfcl_sim_set_static(s->sim, statics, fixed);
    if (st == PBFCL_OK) /* new phases, no paths: pbfcl_scene_setup_apply_bodies sets them */
        st = pbfcl_sim_set_paths(s->sim, 0, NULL, 0, NULL, NULL, NULL);
    if (st == PBFCL_OK)
        st = write_phases(s, phases, n);
    free(fixed);
    free(id);
    free(body);
    free(rest);
    free(ones);
    free(pos);
    return st;
}

pbfcl_status pbfcl_api_set_paths(pbfcl_solver *s, size_t paths, const pbfcl_kinematic_path *path,
                                 size_t entries, const unsigned *entry_id,
                                 const unsigned *entry_path, const float *offset3)
{
    return pbfcl_sim_set_paths(s->sim, paths, path, entries, entry_id, entry_path, offset3);
}

/* Sets phases (pbfcl_make_phase's) for func: checked, then the bodies, static particles and
 * phases made. */
static pbfcl_status set_phases(pbfcl_solver *s, const char *func, const int *phases, size_t count)
{
    size_t nb = 0, *sizes = calloc(count + 1, sizeof *sizes);
    int *body_phase = malloc((count + 1) * sizeof *body_phase);
    pbfcl_status st = sizes && body_phase ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_api_check_phases(func, phases, count, &nb, sizes, body_phase);
    if (st == PBFCL_OK)
        st = set_bodies(s, phases, count, nb, sizes);
    if (st == PBFCL_OK)
        memcpy(s->phases, phases, count * sizeof *phases);
    free(sizes);
    free(body_phase);
    return st;
}

pbfcl_status pbfcl_solver_set_phases(pbfcl_solver *s, const int *phases, size_t count)
{
    const char *f = "pbfcl_solver_set_phases";
    CHECK_SOLVER("pbfcl_solver_set_phases", s);
    PBFCL_TRY(check_array(f, "phases", phases, s, count));
    int *words = malloc((count + 1) * sizeof *words);
    if (!words)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t i = 0; i < count && st == PBFCL_OK; i++) {
        if (phases[i] < PBFCL_PHASE_STATIC || (phases[i] > 0 && (size_t)phases[i] > count)) {
            pbfcl_errorf("%s: phases[%zu] is %d; give PBFCL_PHASE_FLUID (0), PBFCL_PHASE_BODY(b) "
                         "(b + 1) with b below the particle count, or PBFCL_PHASE_STATIC (-1)",
                         f, i, phases[i]);
            st = PBFCL_ERR_BAD_ARGUMENT;
        }
        words[i] = pbfcl_api_phase_from_short(phases[i]);
    }
    if (st == PBFCL_OK)
        st = set_phases(s, f, words, count);
    free(words);
    return st;
}

pbfcl_status pbfcl_solver_set_particle_phases(pbfcl_solver *s, const int *phases, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_set_particle_phases", s);
    PBFCL_TRY(check_array("pbfcl_solver_set_particle_phases", "phases", phases, s, count));
    return set_phases(s, "pbfcl_solver_set_particle_phases", phases, count);
}

pbfcl_status pbfcl_solver_get_particle_phases(const pbfcl_solver *s, int *phases, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_get_particle_phases", s);
    PBFCL_TRY(check_array("pbfcl_solver_get_particle_phases", "phases", phases, s, count));
    memcpy(phases, s->phases, count * sizeof *phases);
    return PBFCL_OK;
}

/* A fluid particle's inverse mass, 1/kg: 1 / (rest_density V), V a particle's volume. */
static double fluid_inverse_mass(const pbfcl_solver *s)
{
    return 1.0 / (s->scene.rest_density * pbfcl_particle_volume(&s->scene));
}

pbfcl_status pbfcl_solver_set_inverse_masses(pbfcl_solver *s, const float *inv_mass, size_t count)
{
    const char *f = "pbfcl_solver_set_inverse_masses";
    CHECK_SOLVER("pbfcl_solver_set_inverse_masses", s);
    PBFCL_TRY(check_array(f, "inv_mass", inv_mass, s, count));
    double fluid_w = fluid_inverse_mass(s);
    float *body_w = calloc(count + 1, sizeof *body_w), *w = malloc((count + 1) * sizeof *w);
    pbfcl_status st = body_w && w ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = pbfcl_api_check_inverse_masses(f, inv_mass, s->phases, count, fluid_w,
                                            1.0 / (fluid_w * s->scene.rest_density), body_w);
    if (st == PBFCL_OK && count > 0)
        st = read_ids(s);
    for (size_t i = 0; st == PBFCL_OK && i < count; i++) { /* relative: m_fluid / m, by slot */
        unsigned id = s->ids[i], p = (unsigned)s->phases[id];
        w[i] = p == PBFCL_SIM_PHASE_FLUID    ? 1.0f
               : p == PBFCL_SIM_PHASE_STATIC ? 0.0f
                                             : (float)(inv_mass[id] / fluid_w);
    }
    if (st == PBFCL_OK && count > 0)
        st = pbfcl_sim_write_phases(s->sim, NULL, w);
    free(body_w);
    free(w);
    return st;
}

pbfcl_status pbfcl_solver_get_inverse_masses(pbfcl_solver *s, float *inv_mass, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_get_inverse_masses", s);
    PBFCL_TRY(check_array("pbfcl_solver_get_inverse_masses", "inv_mass", inv_mass, s, count));
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(read_ids(s));
    PBFCL_TRY(pbfcl_sim_read_phases(s->sim, NULL, s->scratch));
    double fluid_w = fluid_inverse_mass(s);
    for (size_t i = 0; i < count; i++)
        inv_mass[s->ids[i]] = (float)(s->scratch[i] * fluid_w);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_body_count(const pbfcl_solver *s, int *count)
{
    CHECK_SOLVER("pbfcl_solver_body_count", s);
    CHECK_ARG("pbfcl_solver_body_count", count, "count is NULL");
    *count = (int)pbfcl_sim_body_count(s->sim);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_set_body(pbfcl_solver *s, int body, float stiffness, float density)
{
    CHECK_SOLVER("pbfcl_solver_set_body", s);
    int nb = (int)pbfcl_sim_body_count(s->sim);
    CHECK_ARG("pbfcl_solver_set_body", body >= 0 && body < nb,
              "body %d does not exist (the solver has %d bodies; pbfcl_solver_set_phases makes "
              "them)",
              body, nb);
    CHECK_ARG("pbfcl_solver_set_body", stiffness > 0.0f && stiffness <= 1.0f,
              "body %d: stiffness %g must be above 0 and at most 1 (1: rigid)", body, stiffness);
    CHECK_ARG("pbfcl_solver_set_body", density >= 0.1f && density <= 1e5f,
              "body %d: density %g kg/m^3 must be between 0.1 and 1e5", body, density);
    return pbfcl_sim_set_body(s->sim, (size_t)body, stiffness, s->scene.rest_density / density);
}

pbfcl_status pbfcl_solver_get_bodies(pbfcl_solver *s, float *com, float *quat, int count)
{
    CHECK_SOLVER("pbfcl_solver_get_bodies", s);
    int nb = (int)pbfcl_sim_body_count(s->sim);
    CHECK_ARG("pbfcl_solver_get_bodies", count == nb, "count is %d but the solver has %d bodies",
              count, nb);
    return pbfcl_sim_read_bodies(s->sim, com, quat);
}

pbfcl_status pbfcl_solver_get_phases(const pbfcl_solver *s, int *phases, size_t count)
{
    CHECK_SOLVER("pbfcl_solver_get_phases", s);
    PBFCL_TRY(check_array("pbfcl_solver_get_phases", "phases", phases, s, count));
    for (size_t i = 0; i < count; i++)
        phases[i] = pbfcl_api_phase_to_short(s->phases[i]);
    return PBFCL_OK;
}

/* ---- stepping ----------------------------------------------------------------------------- */

/* The step of dt with the profile collected into timers. */
static pbfcl_status timed_step(pbfcl_solver *s, pbfcl_timers *timers)
{
    if (!s->ctx->cl.profiling) {
        pbfcl_errorf("pbfcl_solver_step: timers need a command queue created with "
                     "CL_QUEUE_PROFILING_ENABLE; the context's queue was not");
        return PBFCL_ERR_UNSUPPORTED;
    }
    if (!s->prof && !(s->prof = calloc(1, sizeof *s->prof)))
        return PBFCL_ERR_OUT_OF_MEMORY;
    memset(timers, 0, sizeof *timers);
    int before = s->prof->count; /* 0: collect empties it */
    pbfcl_status st = pbfcl_sim_step(s->sim, s->prof);
    if (st == PBFCL_OK)
        st = pbfcl_api_diffuse_step(&s->diffuse, s->sim, &s->scene, s->prof);
    if (st == PBFCL_OK)
        st = pbfcl_api_cloth_tear(s);
    if (st == PBFCL_OK)
        st = pbfcl_api_cloth_hold(s);
    timers->kernels = s->prof->count - before + s->prof->flushed;
    cl_int err = pbfcl_api_timers_collect(&s->timers, s->prof, timers);
    PBFCL_TRY(st);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "pbfcl_profile_collect", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    timers->substeps = pbfcl_sim_substeps(s->sim);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_step(pbfcl_solver *s, float dt, pbfcl_timers *timers)
{
    CHECK_SOLVER("pbfcl_solver_step", s);
    CHECK_ARG("pbfcl_solver_step", isfinite(dt) && dt <= 1.0f,
              "dt %g s is not a frame time step (<= 0 for the parameters' dt, else up to 1 s)",
              (double)dt);
    if (dt > 0.0f && dt != s->scene.solver.dt) {
        pbfcl_scene next = s->scene;
        next.solver.dt = dt;
        PBFCL_TRY(pbfcl_sim_set_scene(s->sim, &next));
        s->scene = next;
    }
    if (timers)
        return timed_step(s, timers);
    PBFCL_TRY(pbfcl_sim_step(s->sim, NULL));
    PBFCL_TRY(pbfcl_api_diffuse_step(&s->diffuse, s->sim, &s->scene, NULL));
    PBFCL_TRY(pbfcl_api_cloth_tear(s)); /* host-side, after the step: a read back when on */
    return pbfcl_api_cloth_hold(s);     /* a read back once, at the check's step */
}

pbfcl_api_diffuse *pbfcl_api_solver_diffuse(const char *func, const pbfcl_solver *s,
                                            pbfcl_sim **sim, const pbfcl_scene **scene)
{
    if (!s || !pbfcl_api_live_find(s, HANDLE_SOLVER, false)) {
        pbfcl_api_bad_handle(func, "solver", s);
        return NULL;
    }
    *sim = s->sim;
    *scene = &s->scene;
    return (pbfcl_api_diffuse *)&s->diffuse;
}

pbfcl_api_cloth *pbfcl_api_solver_cloth(const char *func, const pbfcl_solver *s, pbfcl_sim **sim,
                                        size_t *count, int **phases, double *fluid_w)
{
    if (!s || !pbfcl_api_live_find(s, HANDLE_SOLVER, false)) {
        pbfcl_api_bad_handle(func, "solver", s);
        return NULL;
    }
    *sim = s->sim;
    *count = pbfcl_sim_count(s->sim);
    *phases = s->phases;
    *fluid_w = fluid_inverse_mass(s);
    return (pbfcl_api_cloth *)&s->cloth;
}

const pbfcl_api_timers *pbfcl_api_solver_timers(const char *func, const pbfcl_solver *s)
{
    if (!s || !pbfcl_api_live_find(s, HANDLE_SOLVER, false)) {
        pbfcl_api_bad_handle(func, "solver", s);
        return NULL;
    }
    return &s->timers;
}

pbfcl_status pbfcl_solver_finish(pbfcl_solver *s)
{
    CHECK_SOLVER("pbfcl_solver_finish", s);
    PBFCL_CL_CHECK(clFinish(s->ctx->cl.queue));
    return PBFCL_OK;
}

int pbfcl_solver_kernel_times(const pbfcl_solver *s, int index, const char **name, double *ms,
                              long long *launches)
{
    if (!s || !pbfcl_api_live_find(s, HANDLE_SOLVER, false) || !s->prof)
        return 0;
    if (index < 0 || index >= s->prof->kernel_count)
        return s->prof->kernel_count;
    const pbfcl_kernel_time *k = &s->prof->kernels[index];
    if (name)
        *name = k->name;
    if (ms)
        *ms = k->ms;
    if (launches)
        *launches = k->launches;
    return s->prof->kernel_count;
}

pbfcl_status pbfcl_solver_stats(pbfcl_solver *s, pbfcl_stats *out)
{
    CHECK_SOLVER("pbfcl_solver_stats", s);
    CHECK_ARG("pbfcl_solver_stats", out, "out is NULL");
    PBFCL_TRY(pbfcl_sim_stats_compute(s->sim, out)); /* the same struct */
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_speed_limit(const pbfcl_solver *s, float *out)
{
    CHECK_SOLVER("pbfcl_solver_speed_limit", s);
    CHECK_ARG("pbfcl_solver_speed_limit", out, "out is NULL");
    *out = pbfcl_scene_max_speed(&s->scene);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_max_neighbours(const pbfcl_solver *s, unsigned *out)
{
    CHECK_SOLVER("pbfcl_solver_max_neighbours", s);
    CHECK_ARG("pbfcl_solver_max_neighbours", out, "out is NULL");
    *out = pbfcl_sim_max_neighbors(s->sim);
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_copy_positions(pbfcl_solver *s, cl_mem dst)
{
    CHECK_SOLVER("pbfcl_solver_copy_positions", s);
    CHECK_ARG("pbfcl_solver_copy_positions", dst, "dst is NULL");
    cl_context owner = NULL;
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(dst, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(dst, CL_MEM_SIZE, sizeof size, &size, NULL);
    CHECK_ARG("pbfcl_solver_copy_positions", err == CL_SUCCESS, "dst is not a valid cl_mem (%s)",
              pbfcl_cl_error_name(err));
    CHECK_ARG("pbfcl_solver_copy_positions", owner == s->ctx->cl.context,
              "dst belongs to another cl_context than the solver's");
    size_t need = pbfcl_sim_count(s->sim) * 4 * sizeof(float);
    if (size < need) {
        pbfcl_errorf("pbfcl_solver_copy_positions: dst holds %zu bytes; %zu particles need %zu "
                     "(16 bytes each)",
                     size, pbfcl_sim_count(s->sim), need);
        return PBFCL_ERR_BUFFER_SIZE;
    }
    return pbfcl_sim_copy_positions(s->sim, dst);
}

pbfcl_status pbfcl_solver_set_push(pbfcl_solver *s, const float origin[3], const float dir[3],
                                   const float push[3], float radius, float strength)
{
    CHECK_SOLVER("pbfcl_solver_set_push", s);
    CHECK_ARG("pbfcl_solver_set_push", origin && dir && push,
              "origin, dir and push must not be NULL");
    CHECK_ARG("pbfcl_solver_set_push", isfinite(radius) && isfinite(strength),
              "radius and strength must be finite");
    static const char *const names[3] = {"origin", "dir", "push"};
    const float *const vectors[3] = {origin, dir, push};
    for (int k = 0; k < 3; k++) {
        const float *v = vectors[k];
        CHECK_ARG("pbfcl_solver_set_push", isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]),
                  "%s (%g, %g, %g) is not finite", names[k], (double)v[0], (double)v[1],
                  (double)v[2]);
    }
    if (strength != 0.0f) { /* on: a ray, a direction and a reach */
        CHECK_ARG("pbfcl_solver_set_push", dir[0] != 0.0f || dir[1] != 0.0f || dir[2] != 0.0f,
                  "dir is (0, 0, 0); give the ray a direction (or strength 0 to turn the push "
                  "off)");
        CHECK_ARG("pbfcl_solver_set_push", push[0] != 0.0f || push[1] != 0.0f || push[2] != 0.0f,
                  "push is (0, 0, 0); give the push a direction (or strength 0 to turn it off)");
        CHECK_ARG("pbfcl_solver_set_push", radius > 0.0f,
                  "radius %g is not > 0; give the push a reach (or strength 0 to turn it off)",
                  (double)radius);
    }
    pbfcl_sim_set_push(s->sim, origin, dir, push, radius, strength);
    return PBFCL_OK;
}

/* ---- densities, checks, state ------------------------------------------------------------ */

pbfcl_status pbfcl_solver_compute_densities(pbfcl_solver *s)
{
    CHECK_SOLVER("pbfcl_solver_compute_densities", s);
    if (pbfcl_sim_count(s->sim) == 0)
        return PBFCL_OK;
    return pbfcl_sim_compute_density(s->sim);
}

pbfcl_status pbfcl_solver_desc_check(const pbfcl_solver_desc *desc)
{
    CHECK_ARG("pbfcl_solver_desc_check", desc,
              "desc is NULL (start from pbfcl_solver_desc_defaults)");
    pbfcl_scene scene;
    PBFCL_TRY(scene_of("pbfcl_solver_desc_check", &desc->scene, &desc->solver, &scene));
    return pbfcl_sim_check_scene(&scene, desc->capacity);
}

pbfcl_status pbfcl_solver_save_state(pbfcl_solver *s, pbfcl_state_write_fn write, void *user)
{
    CHECK_SOLVER("pbfcl_solver_save_state", s);
    CHECK_ARG("pbfcl_solver_save_state", write, "write is NULL");
    uint64_t count = pbfcl_sim_count(s->sim);
    pbfcl_api_state_params p;
    memset(&p, 0, sizeof p);
    pbfcl_api_params_from_scene(&s->scene, &p.scene, &p.solver);
    PBFCL_TRY(write(user, "count", &count, sizeof count));
    PBFCL_TRY(write(user, "params", &p, sizeof p));
    PBFCL_TRY(write(user, "particle_phases", s->phases, (size_t)count * sizeof *s->phases));
    PBFCL_TRY(pbfcl_sim_state_save(s->sim, write, user));
    return pbfcl_api_tear_save(&s->cloth, write, user);
}

/* Checks that the loaded phases name the loaded bodies and static particles: a state whose
 * sections disagree (pieced together from two states) is refused. A state saved before the
 * phases' flags holds the short numbers: they are converted. */
static pbfcl_status check_loaded_phases(pbfcl_solver *s, size_t count)
{
    size_t statics = 0, bodies = pbfcl_sim_body_count(s->sim), highest = 0;
    for (size_t i = 0; i < count; i++) {
        unsigned p = pbfcl_sim_phase_upgrade((unsigned)s->phases[i]);
        s->phases[i] = (int)p;
        statics += p == PBFCL_SIM_PHASE_STATIC;
        if (p != PBFCL_SIM_PHASE_FLUID && p != PBFCL_SIM_PHASE_STATIC &&
            !pbfcl_api_phase_is_group((int)p) && PBFCL_SIM_PHASE_BODY_OF(p) + 1 > highest)
            highest = PBFCL_SIM_PHASE_BODY_OF(p) + 1;
    }
    if (highest != bodies || statics != pbfcl_sim_static_count(s->sim)) {
        pbfcl_errorf("pbfcl_solver_load_state: the state's phases name %zu bodies and %zu static "
                     "particles, but it holds %zu bodies and %zu static particles (sections of "
                     "different states?); load a state saved whole",
                     highest, statics, bodies, pbfcl_sim_static_count(s->sim));
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_load_state(pbfcl_solver *s, pbfcl_state_read_fn read, void *user)
{
    CHECK_SOLVER("pbfcl_solver_load_state", s);
    CHECK_ARG("pbfcl_solver_load_state", read, "read is NULL");
    uint64_t count;
    size_t n = pbfcl_sim_count(s->sim), cap = pbfcl_sim_capacity(s->sim);
    PBFCL_TRY(read(user, "count", &count, sizeof count));
    if (count > cap || (n != 0 && n != count)) {
        pbfcl_errorf("pbfcl_solver_load_state: the state holds %llu particles; the solver has %zu "
                     "of a capacity of %zu (load into an empty solver with room for them)",
                     (unsigned long long)count, n, cap);
        return count > cap ? PBFCL_ERR_CAPACITY : PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_api_state_params p;
    PBFCL_TRY(read(user, "params", &p, sizeof p));
    PBFCL_TRY(pbfcl_solver_set_params(s, &p.scene, &p.solver));
    pbfcl_pbf_params constants;
    PBFCL_TRY(pbfcl_pbf_params_from_scene(&s->scene, &constants));
    /* every section of a state is loaded onto the device: none can be larger than its memory */
    cl_ulong device_bytes = s->ctx->cl.dev.global_mem;
    pbfcl_state_limits lim = {(size_t)count,
                              s->scene.solver.method,
                              {0},
                              {0},
                              &constants,
                              device_bytes < SIZE_MAX ? (size_t)device_bytes : SIZE_MAX,
                              "the device's memory"};
    memcpy(lim.box_min, s->scene.domain_min, sizeof lim.box_min);
    memcpy(lim.box_max, s->scene.domain_max, sizeof lim.box_max);
    PBFCL_TRY(pbfcl_state_check(read, user, &lim)); /* every field, before any is used */
    if (n == 0 && count > 0) { /* room for the saved particles; their state is loaded below */
        float *zeros = calloc((size_t)count * 3, sizeof *zeros);
        if (!zeros)
            return PBFCL_ERR_OUT_OF_MEMORY;
        pbfcl_status st = pbfcl_sim_append(s->sim, zeros, NULL, (size_t)count);
        free(zeros);
        PBFCL_TRY(st);
    }
    PBFCL_TRY(read(user, "particle_phases", s->phases, (size_t)count * sizeof *s->phases));
    PBFCL_TRY(pbfcl_sim_state_load(s->sim, read, user));
    PBFCL_TRY(pbfcl_api_cloth_loaded(s->sim, &s->cloth));
    PBFCL_TRY(pbfcl_api_tear_load(&s->cloth, read, user));
    return check_loaded_phases(s, (size_t)count);
}
