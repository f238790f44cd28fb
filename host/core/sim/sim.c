/* The common particle core: a simulation's creation and release, the frame loop of the method
 * solver.method chooses (solver_method.h: PBF, pbf/, or weakly compressible SPH, sph/), the
 * neighbour search, access to the particles by the API (reading, writing, adding, removing),
 * and the bodies' and paths' stages and settings; stats, bounds and the render copy are the
 * solver-neutral passes of particles.c. The per-particle buffers are sim_buffers.c's,
 * checkpoints sim_state.c's, the attachments' registry (bodies, paths) attachments.c's and the
 * constants constants.c's. */
#include "sim/sim_internal.h"

#include "runtime/build_options.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Largest work-group size tried (a power of two; the device may allow less). */
#define PBFCL_SIM_WG_MAX 256u

void pbfcl_sim_kernel_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    size_t wg = 1; /* the largest power of two the device allows, up to PBFCL_SIM_WG_MAX */
    while (wg * 2 <= dev->max_wg && wg * 2 <= PBFCL_SIM_WG_MAX)
        wg *= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
    cfg->max_neighbors = PBFCL_SIM_MAX_NEIGHBORS;
}

/* The state the solver-neutral passes read; the phases and inverse masses only with bodies or
 * obstacles (the stats then weigh each particle by its own mass). */
static pbfcl_particle_state particle_state(const pbfcl_sim *sim)
{
    bool bodies = sim_has_bodies(sim);
    return (pbfcl_particle_state){sim->n,
                                  sim->pos_buf,
                                  sim->vel_buf,
                                  sim->density_buf,
                                  sim->grid.neighbor_count_buf,
                                  sim->id_buf,
                                  bodies ? sim->phase_buf : NULL,
                                  bodies ? sim->inv_mass_buf : NULL};
}

void pbfcl_sim_walls(const pbfcl_sim *sim, float lo[3], float hi[3])
{
    for (int a = 0; a < 3; a++) {
        lo[a] = sim->params.box_min[a] + sim->params.radius;
        hi[a] = sim->params.box_max[a] - sim->params.radius;
    }
}

/* Enqueues the bounds of the current state (read by choose_substeps). */
static pbfcl_status enqueue_bounds(pbfcl_sim *sim, pbfcl_profile *prof)
{
    float g = (float)sqrt((double)sim->gravity.s[0] * sim->gravity.s[0] +
                          (double)sim->gravity.s[1] * sim->gravity.s[1] +
                          (double)sim->gravity.s[2] * sim->gravity.s[2]);
    float down[3] = {0.0f, 0.0f, 0.0f};
    for (int a = 0; g > 0.0f && a < 3; a++)
        down[a] = sim->gravity.s[a] / g;
    pbfcl_particle_state st = particle_state(sim);
    float solid_scale =
        sim->method->solid_speed_scale ? sim->method->solid_speed_scale(&sim->scene) : 1.0f;
    unsigned matched = (unsigned)pbfcl_shape_match_count(sim_bodies(sim));
    return pbfcl_particles_bounds(&sim->particles, &st, sim->params.box_min, sim->params.box_max,
                                  down, matched, solid_scale, prof);
}

/* The most particles of its scene a simulation holds on its device: its memory at
 * pbfcl_sim_bytes_needed's bytes a particle, the largest buffer it allows (the neighbour
 * lists, 4 * PBFCL_SIM_MAX_NEIGHBORS bytes a particle) and the 2^32 entries the lists' index
 * addresses. */
static unsigned long long device_holds(const pbfcl_sim *sim)
{
    const pbfcl_cl *cl = sim->cl;
    unsigned long long fixed = pbfcl_sim_bytes_needed_with(&sim->scene, sim->method, 0);
    unsigned long long per = pbfcl_sim_bytes_needed_with(&sim->scene, sim->method, 1) - fixed;
    unsigned long long by_memory =
        cl->dev.global_mem > fixed ? (cl->dev.global_mem - fixed) / per : 0;
    unsigned long long by_buffer = cl->dev.max_alloc / (4ull * PBFCL_SIM_MAX_NEIGHBORS);
    unsigned long long most = by_memory < by_buffer ? by_memory : by_buffer;
    return most < UINT32_MAX / PBFCL_SIM_MAX_NEIGHBORS ? most
                                                       : UINT32_MAX / PBFCL_SIM_MAX_NEIGHBORS;
}

static pbfcl_status check_config(const pbfcl_sim *sim, size_t n)
{
    if (n == 0 || n > UINT32_MAX / PBFCL_SIM_MAX_NEIGHBORS) { /* n: the capacity */
        pbfcl_errorf("a simulation needs 1 to %u particles (got %zu): the neighbour lists' index "
                     "addresses 2^32 entries, %u a particle; change the particle count or radius",
                     UINT32_MAX / PBFCL_SIM_MAX_NEIGHBORS, n, PBFCL_SIM_MAX_NEIGHBORS);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    unsigned long long need = pbfcl_sim_bytes_needed_with(&sim->scene, sim->method, n);
    unsigned long long largest = (unsigned long long)n * 4 * PBFCL_SIM_MAX_NEIGHBORS;
    pbfcl_status st = pbfcl_cl_check_memory(sim->cl, need, largest, "the simulation");
    if (st != PBFCL_OK) {
        unsigned long long fixed = pbfcl_sim_bytes_needed_with(&sim->scene, sim->method, 0);
        pbfcl_errorf("%s holds at most %llu particles of this scene at this radius: %llu bytes a "
                     "particle (the "
                     "neighbour lists %u of them, in one buffer of at most %llu bytes) besides "
                     "%llu bytes of the grid's cell tables (set by the box and the radius)",
                     sim->cl->dev.device_name, device_holds(sim),
                     pbfcl_sim_bytes_needed_with(&sim->scene, sim->method, 1) - fixed,
                     4 * PBFCL_SIM_MAX_NEIGHBORS, (unsigned long long)sim->cl->dev.max_alloc,
                     fixed);
    }
    return st;
}

static pbfcl_status sim_init(pbfcl_sim *sim, const float *positions)
{
    pbfcl_grid_params gp;
    PBFCL_TRY(pbfcl_sim_constants(&sim->scene, sim->method, &sim->params));
    sim->wall_scale = (float)pbfcl_pbf_wall_scale(&sim->params);
    PBFCL_TRY(check_config(sim, sim->capacity));
    PBFCL_TRY(sim_grid_params(&sim->scene, &sim->params, &gp));
    PBFCL_TRY(pbfcl_grid_create(&sim->grid, sim->cl, &gp, sim->capacity, PBFCL_SIM_MAX_NEIGHBORS));
    pbfcl_build_config cfg;
    sim->method->build_config(&sim->cl->dev, &cfg);
    sim->wg = cfg.wg_size;               /* the work-group size of the method's kernels */
    PBFCL_TRY(sim->method->create(sim)); /* the method's kernels and buffers */
    PBFCL_TRY(pbfcl_particles_create(&sim->particles, sim->cl, sim->capacity));
    PBFCL_TRY(sim_buffers_alloc(sim));
    sim->substeps = sim->scene.solver.substeps;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->params_buf, CL_TRUE, 0,
                                        sizeof sim->params, &sim->params, 0, NULL, NULL));
    PBFCL_TRY(sim_upload_particles(sim, 0, sim->n, positions, NULL));
    static const cl_uint zero = 0; /* the max |a| of no step yet */
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->accel_max_buf, CL_TRUE, 0, sizeof zero,
                                        &zero, 0, NULL, NULL));
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_create_with(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                                   const pbfcl_solver_method *method, size_t capacity,
                                   const float *positions, size_t n)
{
    *out = NULL;
    if (n > capacity) {
        pbfcl_errorf("%zu particles do not fit a simulation of capacity %zu", n, capacity);
        return PBFCL_ERR_CAPACITY;
    }
    pbfcl_sim *sim = calloc(1, sizeof *sim);
    if (!sim)
        return PBFCL_ERR_OUT_OF_MEMORY;
    sim->method = method;
    sim->cl = cl;
    sim->scene = *scene;
    sim->n = n;
    sim->capacity = capacity;
    pbfcl_sim_set_gravity(sim, scene->gravity);
    pbfcl_status st = sim_init(sim, positions);
    if (st != PBFCL_OK) {
        pbfcl_sim_destroy(sim);
        return st;
    }
    *out = sim;
    return PBFCL_OK;
}

void pbfcl_sim_destroy(pbfcl_sim *sim)
{
    if (!sim)
        return;
    if (sim->cl && sim->cl->owed_ctx == sim) { /* an exchange left in flight by a failure */
        sim->cl->owed = NULL;
        sim->cl->owed_ctx = NULL;
    }
    if (sim->cl && sim->cl->queue)
        clFinish(sim->cl->queue);
    sim_buffers_release(sim);
    pbfcl_particles_destroy(&sim->particles);
    if (sim->method)
        sim->method->destroy(sim);
    sim_attachments_destroy(sim); /* the bodies, the paths */
    pbfcl_grid_destroy(&sim->grid);
    free(sim->self_collide);
    free(sim);
}

/* ---- the stages ------------------------------------------------------------------------ */

/* Whether the simulation has shape-matched bodies (the body stages then run). */
bool sim_matches_shapes(const pbfcl_sim *sim)
{
    return pbfcl_shape_match_count(sim_bodies(sim)) > 0;
}

/* Whether the simulation has bodies, static particles or solid groups (the kernels then read
 * phases and inverse masses). */
cl_uint sim_has_bodies(const pbfcl_sim *sim)
{
    return sim_matches_shapes(sim) || sim->statics > 0 || sim->solid_groups > 0;
}

/* hash, sort, reorder, cells and neighbour lists of the positions in the buffer whose handle
 * lives at field (x* or x; the reorder swaps the handle, so it is read again), those within
 * near first. */
static pbfcl_status neighbours_of(pbfcl_sim *sim, cl_mem *field, float near, pbfcl_profile *prof)
{
    pbfcl_grid *g = &sim->grid;
    PBFCL_TRY(pbfcl_grid_hash(g, *field, sim->n, prof)); /* Morton cell id */
    PBFCL_TRY(pbfcl_grid_sort(g, sim->n, prof));         /* by cell id */
    PBFCL_TRY(sim_reorder(sim, true, prof));             /* x, x*, v, ids (phases with solids) */
    PBFCL_TRY(pbfcl_grid_cells(g, sim->n, prof));        /* cell starts and ends */
    /* a solid lists no particle of its own phase: x* carries the phases' tags (pbf_predict) */
    bool solids = sim_has_bodies(sim) && field == &sim->pred_buf;
    return pbfcl_grid_neighbours(g, *field, solids, sim->n, sim->params.h, near, prof);
}

pbfcl_status pbfcl_sim_neighbours_x(pbfcl_sim *sim, pbfcl_profile *prof)
{
    return neighbours_of(sim, &sim->pos_buf, 0.0f, prof); /* no contact part */
}

pbfcl_status pbfcl_sim_neighbours_pred(pbfcl_sim *sim, float near, pbfcl_profile *prof)
{
    return neighbours_of(sim, &sim->pred_buf, near, prof);
}

void pbfcl_sim_view_get(pbfcl_sim *sim, pbfcl_sim_view *v)
{
    v->cl = sim->cl;
    v->grid = &sim->grid;
    v->scene = &sim->scene;
    v->params = &sim->params;
    v->n = sim->n;
    v->capacity = sim->capacity;
    v->wg = sim->wg;
    v->substeps = sim->substeps;
    v->substep = sim->substep;
    v->gravity = sim->gravity;
    v->push_origin = sim->push_origin;
    v->push_dir = sim->push_dir;
    v->push = sim->push;
    v->wall_scale = sim->wall_scale;
    v->params_buf = sim->params_buf;
    v->bounds_buf = sim->particles.bounds_buf;
    v->accel_max_buf = sim->accel_max_buf;
    v->pos_buf = sim->pos_buf;
    v->vel_buf = sim->vel_buf;
    v->density_buf = sim->density_buf;
    v->method_state = &sim->method_state;
    v->pos = &sim->pos_buf;
    v->pos_tmp = &sim->pos_tmp_buf;
    v->pred = sim->method->predicts ? &sim->pred_buf : NULL;
    v->pred_tmp = sim->method->predicts ? &sim->pred_tmp_buf : NULL;
    v->vel = &sim->vel_buf;
    v->vel_tmp = &sim->vel_tmp_buf;
    v->id_buf = sim->id_buf;
    v->phase_buf = sim->phase_buf;
    v->inv_mass_buf = sim->inv_mass_buf;
    v->solids = sim_has_bodies(sim);
    v->bodies = sim_matches_shapes(sim) ? sim_bodies(sim) : NULL;
    v->particles = &sim->particles;
}

pbfcl_status pbfcl_sim_body_slots(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim_matches_shapes(sim) || sim->slots_current) /* the sort's reorder_solids wrote them */
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_particles_slots(&sim->particles, sim->n, sim->id_buf, prof, PBFCL_STAGE_SOLVE));
    sim->slots_current = 1;
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_body_predict(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim_matches_shapes(sim))
        return PBFCL_OK;
    const pbfcl_stage stage = PBFCL_STAGE_PREDICT;
    if (!sim->slots_current) /* else the last substep's, and nothing has moved them since */
        PBFCL_TRY(pbfcl_particles_slots(&sim->particles, sim->n, sim->id_buf, prof, stage));
    return pbfcl_shape_match_predict(sim_bodies(sim), sim->params.dt, sim->pos_buf, sim->vel_buf,
                                     sim->pred_buf, prof, stage);
}

pbfcl_status pbfcl_sim_body_velocity(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (!sim_matches_shapes(sim))
        return PBFCL_OK;
    return pbfcl_shape_match_velocity(sim_bodies(sim), sim->params.dt, sim->pos_buf, sim->vel_buf,
                                      prof, PBFCL_STAGE_OTHER);
}

/* Sets the substep of the parameters to dt / substeps (uploaded when it changes), and the XSPH
 * blend of a substep to the scene's c times its substeps / substeps: XSPH is a blend per
 * application, so with a fixed c the adaptive substeps made the fluid more viscous the finer
 * it was (at 1M, 11 substeps blended 43 % per frame instead of the 14 % of 3). */
static pbfcl_status set_substeps(pbfcl_sim *sim, int substeps)
{
    if (substeps == sim->substeps)
        return PBFCL_OK;
    sim->substeps = substeps;
    sim->params.dt = (float)(sim->scene.solver.dt / substeps);
    sim->params.inv_dt = 1.0f / sim->params.dt;
    sim->params.viscosity =
        (float)(sim->scene.solver.viscosity * sim->scene.solver.substeps / substeps);
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->params_buf, CL_TRUE, 0,
                                        sizeof sim->params, &sim->params, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_step(pbfcl_sim *sim, pbfcl_profile *prof)
{
    if (sim->n == 0 && !sim->sync)
        return PBFCL_OK; /* nothing to move (all particles removed, or none added yet); a
                          * simulation split over devices steps along with the others */
    int substeps;
    PBFCL_TRY(sim->method->choose_substeps(sim, &substeps));
    PBFCL_TRY(set_substeps(sim, substeps));
    sim->slots_current = 0; /* particles or ids may have changed since the last step */
    for (int s = 0; s < substeps; s++) {
        sim->substep = s;
        PBFCL_TRY(sim->method->substep(sim, prof));
        PBFCL_TRY(pbfcl_sim_sync_wait(sim)); /* no exchange in flight past a substep */
        /* submit as we go: the device starts on a substep while the next is enqueued, instead
         * of idling until the frame's last launch (choose_substeps drained the queue) */
        PBFCL_CL_CHECK(clFlush(sim->cl->queue));
    }
    return enqueue_bounds(sim, prof);
}

int pbfcl_sim_substeps(const pbfcl_sim *sim)
{
    return sim->substeps;
}

/* ---- access ---------------------------------------------------------------------------- */

size_t pbfcl_sim_count(const pbfcl_sim *sim)
{
    return sim->n;
}

const pbfcl_scene *pbfcl_sim_scene(const pbfcl_sim *sim)
{
    return &sim->scene;
}

const pbfcl_constants *pbfcl_sim_params(const pbfcl_sim *sim)
{
    return &sim->params;
}

unsigned pbfcl_sim_max_neighbors(const pbfcl_sim *sim)
{
    (void)sim;
    return PBFCL_SIM_MAX_NEIGHBORS;
}

pbfcl_status sim_read_plain(pbfcl_sim *sim, cl_mem buf, size_t bytes, void *out)
{
    if (bytes == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(sim->cl->queue, buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    return PBFCL_OK;
}

/* Reads the xyz of every float4 of buf, packed. */
static pbfcl_status read_float3(pbfcl_sim *sim, cl_mem buf, float *out3)
{
    size_t n = sim->n;
    cl_float4 *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = sim_read_plain(sim, buf, n * sizeof *tmp, tmp);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        memcpy(out3 + 3 * i, tmp[i].s, 3 * sizeof(float));
    free(tmp);
    return st;
}

pbfcl_status pbfcl_sim_read(pbfcl_sim *sim, float *pos3, float *vel3, float *density)
{
    if (pos3)
        PBFCL_TRY(read_float3(sim, sim->pos_buf, pos3));
    if (vel3)
        PBFCL_TRY(read_float3(sim, sim->vel_buf, vel3));
    if (density)
        PBFCL_TRY(sim_read_plain(sim, sim->density_buf, sim->n * 4, density));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_stats_compute(pbfcl_sim *sim, pbfcl_sim_stats *out)
{
    pbfcl_particles_material m;
    pbfcl_sim_walls(sim, m.wall_lo, m.wall_hi);
    m.mass = sim->params.mass;
    m.rest_density = sim->params.rest_density;
    pbfcl_particle_state st = particle_state(sim);
    PBFCL_TRY(pbfcl_particles_stats(&sim->particles, &st, &m, out));
    out->substeps = sim->substeps;
    out->unstable = out->nan > 0 || out->max_speed > pbfcl_scene_max_speed(&sim->scene);
    return pbfcl_grid_read_overflow(&sim->grid, &out->neighbour_overflow);
}

pbfcl_status pbfcl_sim_copy_positions(pbfcl_sim *sim, cl_mem dst_buf)
{
    pbfcl_particle_state st = particle_state(sim);
    return pbfcl_particles_copy_positions(&sim->particles, &st, dst_buf);
}

void pbfcl_sim_set_gravity(pbfcl_sim *sim, const float g[3])
{
    sim->gravity = (cl_float4){{g[0], g[1], g[2], 0.0f}};
    for (int a = 0; a < 3; a++)
        sim->scene.gravity[a] = g[a];
}

void pbfcl_sim_set_push(pbfcl_sim *sim, const float origin[3], const float dir[3],
                        const float push[3], float radius, float strength)
{
    double len = sqrt((double)dir[0] * dir[0] + (double)dir[1] * dir[1] + (double)dir[2] * dir[2]);
    double plen =
        sqrt((double)push[0] * push[0] + (double)push[1] * push[1] + (double)push[2] * push[2]);
    if (strength == 0.0f || radius <= 0.0f || len == 0.0 || plen == 0.0) {
        sim->push = (cl_float4){{0, 0, 0, 0}};
        return;
    }
    double a = strength / plen;
    sim->push_origin = (cl_float4){{origin[0], origin[1], origin[2], 0.0f}};
    sim->push_dir =
        (cl_float4){{(float)(dir[0] / len), (float)(dir[1] / len), (float)(dir[2] / len), 0.0f}};
    sim->push =
        (cl_float4){{(float)(push[0] * a), (float)(push[1] * a), (float)(push[2] * a), radius}};
}

/* ---- particles in and out: ids, adding, removing, writing, changing the scene ---------- */

pbfcl_status pbfcl_sim_read_ids(pbfcl_sim *sim, unsigned *ids)
{
    return sim_read_plain(sim, sim->id_buf, sim->n * 4, ids);
}

pbfcl_status pbfcl_sim_write_ids(pbfcl_sim *sim, size_t first, size_t count, const unsigned *ids)
{
    if (first > sim->n || count > sim->n - first) {
        pbfcl_errorf("pbfcl_sim_write_ids: slots %zu to %zu of %zu particles", first, first + count,
                     sim->n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (count == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, sim->id_buf, CL_TRUE, first * 4, count * 4,
                                        ids, 0, NULL, NULL));
    sim->slots_current = 0; /* the bodies' slots are by id */
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_read_phases(pbfcl_sim *sim, unsigned *phases, float *inv_mass)
{
    if (phases)
        PBFCL_TRY(sim_read_plain(sim, sim->phase_buf, sim->n * 4, phases));
    if (inv_mass)
        PBFCL_TRY(sim_read_plain(sim, sim->inv_mass_buf, sim->n * 4, inv_mass));
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_write_phases(pbfcl_sim *sim, const unsigned *phases, const float *inv_mass)
{
    cl_command_queue q = sim->cl->queue;
    size_t bytes = sim->n * 4;
    if (phases && bytes)
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(q, sim->phase_buf, CL_TRUE, 0, bytes, phases, 0, NULL, NULL));
    if (inv_mass && bytes)
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(q, sim->inv_mass_buf, CL_TRUE, 0, bytes, inv_mass, 0, NULL, NULL));
    return PBFCL_OK;
}

size_t pbfcl_sim_capacity(const pbfcl_sim *sim)
{
    return sim->capacity;
}

pbfcl_status pbfcl_sim_append(pbfcl_sim *sim, const float *pos3, const float *vel3, size_t k)
{
    if (k > sim->capacity - sim->n) {
        pbfcl_errorf("adding %zu particles to %zu exceeds the capacity of %zu", k, sim->n,
                     sim->capacity);
        return PBFCL_ERR_CAPACITY;
    }
    PBFCL_TRY(sim_upload_particles(sim, sim->n, k, pos3, vel3));
    sim->n += k;
    sim->slots_current = 0; /* the new ids have no slots yet */
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_compact(pbfcl_sim *sim, const unsigned *keep_slots, size_t m,
                               const unsigned *new_ids)
{
    if (m > sim->n)
        return PBFCL_ERR_BAD_ARGUMENT;
    cl_command_queue q = sim->cl->queue;
    if (m > 0) {
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(q, sim->grid.index_buf, CL_TRUE, 0, m * 4, keep_slots,
                                            0, NULL, NULL));
        sim->n = m;
        PBFCL_TRY(sim_reorder(sim, false, NULL)); /* gathers every per-particle state buffer */
        PBFCL_CL_CHECK(
            clEnqueueWriteBuffer(q, sim->id_buf, CL_TRUE, 0, m * 4, new_ids, 0, NULL, NULL));
    }
    sim->n = m;
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_compact_device(pbfcl_sim *sim, cl_mem keep_buf, size_t m)
{
    if (m > sim->n)
        return PBFCL_ERR_BAD_ARGUMENT;
    if (m > 0) {
        PBFCL_CL_CHECK(clEnqueueCopyBuffer(sim->cl->queue, keep_buf, sim->grid.index_buf, 0, 0,
                                           m * 4, 0, NULL, NULL));
        sim->n = m;
        PBFCL_TRY(sim_reorder(sim, false, NULL)); /* every per-particle state buffer, ids too */
    }
    sim->n = m;
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_write(pbfcl_sim *sim, const float *pos3, const float *vel3)
{
    size_t n = sim->n;
    if (n == 0)
        return PBFCL_OK;
    cl_float4 *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_command_queue q = sim->cl->queue;
    pbfcl_status st = PBFCL_OK;
    const float *src[] = {pos3, pos3, vel3}; /* x and x* both take the positions */
    cl_mem dst[] = {sim->pos_buf, sim->pred_buf, sim->vel_buf};
    for (int b = 0; b < 3; b++) {
        if (!src[b] || !dst[b]) /* sph has no x* */
            continue;
        sim_pack_float3(src[b], n, tmp);
        PBFCL_CL_TRY(st, clEnqueueWriteBuffer(q, dst[b], CL_TRUE, 0, n * 16, tmp, 0, NULL, NULL),
                     done);
    }
done:
    free(tmp);
    PBFCL_TRY(st);
    return enqueue_bounds(sim, NULL);
}

/* True if the grid built for a and b is the same (origin, cell size, bits). */
static bool same_grid(const pbfcl_grid_params *a, const pbfcl_grid_params *b)
{
    return a->grid_bits == b->grid_bits && a->cell_size == b->cell_size &&
           a->origin[0] == b->origin[0] && a->origin[1] == b->origin[1] &&
           a->origin[2] == b->origin[2];
}

pbfcl_status pbfcl_sim_set_scene(pbfcl_sim *sim, const pbfcl_scene *scene)
{
    pbfcl_constants p;
    pbfcl_grid_params gp;
    if (scene->solver.method != sim->scene.solver.method) { /* its buffers and kernels differ */
        pbfcl_errorf("solver.method cannot change on a running solver (%s to %s); create a new "
                     "solver with solver.method %s",
                     pbfcl_method_name(sim->scene.solver.method),
                     pbfcl_method_name(scene->solver.method),
                     pbfcl_method_name(scene->solver.method));
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_sim_constants(scene, sim->method, &p));
    PBFCL_TRY(sim_grid_params(scene, &p, &gp));
    if (!same_grid(&gp, &sim->grid.params)) { /* a new box or kernel radius: a new grid */
        PBFCL_CL_CHECK(clFinish(sim->cl->queue));
        pbfcl_grid grid;
        memset(&grid, 0, sizeof grid);
        pbfcl_status st =
            pbfcl_grid_create(&grid, sim->cl, &gp, sim->capacity, PBFCL_SIM_MAX_NEIGHBORS);
        if (st != PBFCL_OK) {
            pbfcl_grid_destroy(&grid);
            return st;
        }
        pbfcl_grid_destroy(&sim->grid);
        sim->grid = grid;
    }
    sim->scene = *scene;
    sim->params = p;
    sim->wall_scale = (float)pbfcl_pbf_wall_scale(&sim->params);
    pbfcl_sim_set_gravity(sim, scene->gravity);
    sim->substeps = 0; /* set_substeps uploads the parameters at the next step */
    PBFCL_TRY(set_substeps(sim, scene->solver.substeps));
    return enqueue_bounds(sim, NULL);
}

pbfcl_status pbfcl_sim_bounds(pbfcl_sim *sim, float out[3])
{
    PBFCL_TRY(enqueue_bounds(sim, NULL));
    return pbfcl_particles_read_bounds(&sim->particles, out);
}

/* ---- the current state's density -------------------------------------------------------- */

pbfcl_status pbfcl_sim_compute_density(pbfcl_sim *sim)
{
    return sim->method->compute_density(sim);
}

/* ---- bodies: shape-matched particles (shape_match.c) ------------------------------------ */

/* Gives the particles of the entries (by id, below ids) the phase of their body and its inverse
 * mass, every other particle the fluid's; an entry whose particle is not here is skipped. */
static pbfcl_status write_body_phases(pbfcl_sim *sim, size_t ids_below, size_t entries,
                                      const unsigned *entry_id, const unsigned *entry_body,
                                      const float *body_inv_mass)
{
    size_t n = sim->n;
    unsigned *ids = malloc((n ? n : 1) * sizeof *ids), *phase = malloc((n ? n : 1) * 4);
    unsigned *slot = malloc((ids_below ? ids_below : 1) * sizeof *slot);
    float *w = malloc((n ? n : 1) * sizeof *w);
    pbfcl_status st = ids && phase && slot && w ? sim_read_plain(sim, sim->id_buf, n * 4, ids)
                                                : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t id = 0; st == PBFCL_OK && id < ids_below; id++)
        slot[id] = PBFCL_EMPTY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        if (ids[i] < ids_below)
            slot[ids[i]] = (unsigned)i;
        phase[i] = PBFCL_SIM_PHASE_FLUID;
        w[i] = 1.0f;
    }
    for (size_t e = 0; st == PBFCL_OK && e < entries; e++) {
        if (slot[entry_id[e]] == PBFCL_EMPTY)
            continue; /* on another device (pbfcl_sim_set_bodies_split) */
        phase[slot[entry_id[e]]] = entry_body[e] + 1;
        w[slot[entry_id[e]]] = body_inv_mass[entry_body[e]];
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, phase, w);
    if (st == PBFCL_OK)
        sim->statics = sim->solid_groups = 0;
    free(ids);
    free(phase);
    free(slot);
    free(w);
    return st;
}

/* pbfcl_sim_set_bodies with entry ids below ids_below (sim->n on one device). */
static pbfcl_status set_bodies(pbfcl_sim *sim, size_t ids_below, size_t bodies, size_t entries,
                               const unsigned *entry_id, const unsigned *entry_body,
                               const float *rest3, const float *stiffness, const float *inv_mass)
{
    if (bodies > 0 && sim->scene.solver.method != PBFCL_METHOD_PBF) { /* shape matching is pbf's */
        pbfcl_errorf("bodies need solver.method pbf (this solver runs %s); create the solver with "
                     "solver.method pbf, or keep every particle fluid",
                     pbfcl_method_name(sim->scene.solver.method));
        return PBFCL_ERR_UNSUPPORTED;
    }
    for (size_t e = 0; e < entries; e++)
        if (entry_id[e] >= ids_below) {
            pbfcl_errorf("body particle %zu is particle %u of %zu", e, entry_id[e], ids_below);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    for (size_t b = 0; b < bodies; b++)
        if (!(inv_mass[b] > 0.0f) || !isfinite(inv_mass[b])) {
            pbfcl_errorf("body %zu has relative inverse mass %g; it must be a positive number", b,
                         inv_mass[b]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    pbfcl_shape_match *sm = sim_bodies(sim);
    if (!sm && bodies == 0)
        return PBFCL_OK;
    PBFCL_TRY(sim_attach(sim, &pbfcl_shape_match_attachment, (void **)&sm));
    sim->slots_current = 0; /* a first set makes the slot table, not written yet */
    PBFCL_TRY(
        pbfcl_shape_match_set_bodies(sm, bodies, entries, entry_id, entry_body, rest3, stiffness));
    return write_body_phases(sim, ids_below, entries, entry_id, entry_body, inv_mass);
}

pbfcl_status pbfcl_sim_set_bodies(pbfcl_sim *sim, size_t bodies, size_t entries,
                                  const unsigned *entry_id, const unsigned *entry_body,
                                  const float *rest3, const float *stiffness, const float *inv_mass)
{
    return set_bodies(sim, sim->n, bodies, entries, entry_id, entry_body, rest3, stiffness,
                      inv_mass);
}

pbfcl_status pbfcl_sim_set_bodies_split(pbfcl_sim *sim, size_t bodies, size_t entries,
                                        const unsigned *entry_id, const unsigned *entry_body,
                                        const float *rest3, const float *stiffness,
                                        const float *inv_mass)
{
    return set_bodies(sim, sim->capacity, bodies, entries, entry_id, entry_body, rest3, stiffness,
                      inv_mass);
}

size_t pbfcl_sim_body_count(const pbfcl_sim *sim)
{
    const pbfcl_shape_match *sm = sim_bodies(sim);
    return sm ? sm->bodies : 0;
}

pbfcl_status pbfcl_sim_set_body(pbfcl_sim *sim, size_t b, float stiffness, float inv_mass)
{
    if (b >= pbfcl_sim_body_count(sim) || !(inv_mass > 0.0f) || !isfinite(inv_mass)) {
        pbfcl_errorf("body %zu of %zu with relative inverse mass %g: give an existing body and "
                     "a positive inverse mass",
                     b, pbfcl_sim_body_count(sim), inv_mass);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_shape_match_set_stiffness(sim_bodies(sim), b, stiffness));
    size_t n = sim->n;
    unsigned *phase = malloc(n * sizeof *phase);
    float *w = malloc(n * sizeof *w);
    pbfcl_status st = phase && w ? pbfcl_sim_read_phases(sim, phase, w) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (PBFCL_SIM_PHASE_BODY_OF(phase[i]) == b)
            w[i] = inv_mass;
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, NULL, w);
    free(phase);
    free(w);
    return st;
}

pbfcl_status pbfcl_sim_set_static(pbfcl_sim *sim, size_t count, const unsigned *ids)
{
    if (count > 0 && sim->scene.solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("static particles (obstacles) need solver.method pbf (this solver runs %s)",
                     pbfcl_method_name(sim->scene.solver.method));
        return PBFCL_ERR_UNSUPPORTED;
    }
    size_t n = sim->n;
    unsigned *phase = malloc((n ? n : 1) * sizeof *phase), *id = malloc((n ? n : 1) * 4);
    unsigned char *mark = calloc(n ? n : 1, 1);
    float *w = malloc((n ? n : 1) * sizeof *w);
    pbfcl_status st =
        phase && id && mark && w ? pbfcl_sim_read_phases(sim, phase, w) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; st == PBFCL_OK && k < count; k++) {
        if (ids[k] >= n) {
            pbfcl_errorf("static particle %zu has id %u, beyond the %zu particles", k, ids[k], n);
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else {
            mark[ids[k]] = 1;
        }
    }
    if (st == PBFCL_OK)
        st = sim_read_plain(sim, sim->id_buf, n * 4, id);
    size_t statics = 0;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        if (mark[id[i]]) {
            if (phase[i] != PBFCL_SIM_PHASE_FLUID && phase[i] != PBFCL_SIM_PHASE_STATIC) {
                pbfcl_errorf("particle id %u belongs to body %u and cannot be static", id[i],
                             PBFCL_SIM_PHASE_BODY_OF(phase[i]));
                st = PBFCL_ERR_BAD_ARGUMENT;
                break;
            }
            phase[i] = PBFCL_SIM_PHASE_STATIC;
            w[i] = 0.0f;
            statics++;
        } else if (phase[i] == PBFCL_SIM_PHASE_STATIC) {
            phase[i] = PBFCL_SIM_PHASE_FLUID;
            w[i] = 1.0f;
        }
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, phase, w);
    if (st == PBFCL_OK)
        sim->statics = statics;
    free(phase);
    free(id);
    free(mark);
    free(w);
    return st;
}

size_t pbfcl_sim_static_count(const pbfcl_sim *sim)
{
    return sim->statics;
}

/* The phase of solid group g, with the self-collide flag if the group has it. */
static unsigned group_phase(const pbfcl_sim *sim, unsigned g)
{
    bool self = g < sim->self_collide_groups && sim->self_collide[g];
    return PBFCL_SIM_PHASE_GROUP(g) | (self ? PBFCL_PHASE_SELF_COLLIDE_BIT : 0u);
}

pbfcl_status pbfcl_sim_set_group_self_collide(pbfcl_sim *sim, size_t groups,
                                              const unsigned char *on)
{
    if (groups > PBFCL_SIM_MAX_GROUPS || (groups && !on)) {
        pbfcl_errorf("self-collide of %zu groups: give at most %u flags, not NULL", groups,
                     PBFCL_SIM_MAX_GROUPS);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    unsigned char *copy = malloc(groups + 1);
    if (!copy)
        return PBFCL_ERR_OUT_OF_MEMORY;
    if (groups)
        memcpy(copy, on, groups);
    free(sim->self_collide);
    sim->self_collide = copy;
    sim->self_collide_groups = groups;
    size_t n = sim->n;
    if (sim->solid_groups == 0)
        return PBFCL_OK;
    unsigned *phase = malloc((n ? n : 1) * sizeof *phase);
    float *w = malloc((n ? n : 1) * sizeof *w);
    pbfcl_status st = phase && w ? pbfcl_sim_read_phases(sim, phase, w) : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PBFCL_OK && i < n; i++)
        if (PBFCL_SIM_PHASE_IS_GROUP(phase[i]))
            phase[i] = group_phase(sim, PBFCL_SIM_PHASE_STATIC - 1u -
                                            (phase[i] & ~PBFCL_PHASE_SELF_COLLIDE_BIT));
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, phase, w);
    free(phase);
    free(w);
    return st;
}

/* Gives the particles of mark (by id) group[id]'s phase and inverse mass inv_mass[id], every
 * other particle of a group the fluid's; the count of grouped particles into *grouped. */
static pbfcl_status set_groups(pbfcl_sim *sim, const unsigned *group, const float *inv_mass,
                               const unsigned char *mark, size_t *grouped)
{
    size_t n = sim->n;
    unsigned *phase = malloc((n ? n : 1) * sizeof *phase), *id = malloc((n ? n : 1) * 4);
    float *w = malloc((n ? n : 1) * sizeof *w);
    pbfcl_status st =
        phase && id && w ? pbfcl_sim_read_phases(sim, phase, w) : PBFCL_ERR_OUT_OF_MEMORY;
    if (st == PBFCL_OK)
        st = sim_read_plain(sim, sim->id_buf, n * 4, id);
    for (size_t i = 0; st == PBFCL_OK && i < n; i++) {
        bool was = PBFCL_SIM_PHASE_IS_GROUP(phase[i]);
        if (mark[id[i]] && phase[i] != PBFCL_SIM_PHASE_FLUID && !was) {
            pbfcl_errorf("particle id %u is a body's or static and cannot join a group; give "
                         "groups fluid particles (pinned ones: pbfcl_sim_set_static)",
                         id[i]);
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else if (mark[id[i]]) {
            phase[i] = group_phase(sim, group[id[i]]);
            w[i] = inv_mass[id[i]];
            ++*grouped;
        } else if (was) {
            phase[i] = PBFCL_SIM_PHASE_FLUID;
            w[i] = 1.0f;
        }
    }
    if (st == PBFCL_OK)
        st = pbfcl_sim_write_phases(sim, phase, w);
    free(phase);
    free(id);
    free(w);
    return st;
}

pbfcl_status pbfcl_sim_set_groups(pbfcl_sim *sim, size_t count, const unsigned *ids,
                                  const unsigned *group, const float *inv_mass)
{
    size_t n = sim->n, grouped = 0;
    unsigned *g = calloc(n ? n : 1, sizeof *g);
    float *w = calloc(n ? n : 1, sizeof *w);
    unsigned char *mark = calloc(n ? n : 1, 1);
    pbfcl_status st = g && w && mark ? PBFCL_OK : PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; st == PBFCL_OK && k < count; k++) {
        const char *bad = ids[k] >= n                        ? "an id beyond the particles"
                          : group[k] >= PBFCL_SIM_MAX_GROUPS ? "a group beyond the most groups"
                          : !(inv_mass[k] > 0.0f && isfinite(inv_mass[k]))
                              ? "an inverse mass that is not finite and above 0"
                              : NULL;
        if (bad) {
            pbfcl_errorf("group particle %zu (id %u, group %u, inverse mass %g) has %s: give ids "
                         "below %zu, groups below %u and inverse masses above 0 (pinned "
                         "particles: pbfcl_sim_set_static)",
                         k, ids[k], group[k], (double)inv_mass[k], bad, n, PBFCL_SIM_MAX_GROUPS);
            st = PBFCL_ERR_BAD_ARGUMENT;
        } else {
            mark[ids[k]] = 1;
            g[ids[k]] = group[k];
            w[ids[k]] = inv_mass[k];
        }
    }
    if (st == PBFCL_OK && (count > 0 || sim->solid_groups > 0))
        st = set_groups(sim, g, w, mark, &grouped);
    if (st == PBFCL_OK)
        sim->solid_groups = grouped;
    free(g);
    free(w);
    free(mark);
    return st;
}

pbfcl_status pbfcl_sim_remap_body_ids(pbfcl_sim *sim, const unsigned *new_id)
{
    sim->slots_current = 0;
    return sim_attachments_remap_ids(sim, new_id); /* the bodies', the paths' */
}

pbfcl_status pbfcl_sim_set_paths(pbfcl_sim *sim, size_t paths, const pbfcl_kinematic_path *path,
                                 size_t entries, const unsigned *entry_id,
                                 const unsigned *entry_path, const float *offset3)
{
    for (size_t e = 0; e < entries; e++)
        if (entry_id[e] >= sim->n) {
            pbfcl_errorf("path particle %zu is particle %u of %zu", e, entry_id[e], sim->n);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    pbfcl_kinematic *k = sim_paths(sim);
    if (!k && (paths == 0 || entries == 0))
        return PBFCL_OK;
    PBFCL_TRY(sim_attach(sim, &pbfcl_kinematic_attachment, (void **)&k));
    return pbfcl_kinematic_set(k, paths, path, entries, entry_id, entry_path, offset3);
}

pbfcl_status pbfcl_sim_kinematic(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_kinematic *k = sim_paths(sim);
    if (!k)
        return PBFCL_OK;
    return pbfcl_kinematic_move(k, sim->n, sim->params.dt, sim->phase_buf, sim->id_buf,
                                sim->pred_buf, prof, PBFCL_STAGE_PREDICT);
}

pbfcl_status pbfcl_sim_read_bodies(pbfcl_sim *sim, float *com3, float *quat4)
{
    pbfcl_shape_match *sm = sim_bodies(sim);
    return sm ? pbfcl_shape_match_read(sm, com3, quat4) : PBFCL_OK;
}
