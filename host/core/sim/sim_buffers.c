/* The per-particle buffers: the core's table (sim_buffers[]) and the method's, each row once,
 * and what follows from them: allocation, the byte estimate, the initial values of new
 * particles, the reorder and release. */
#include "sim/sim_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SIM_BUF(f) offsetof(struct pbfcl_sim, f)

/* Every common per-particle buffer, once. */
const pbfcl_particle_buffer sim_buffers[] = {
    {"positions", 16, SIM_BUF(pos_buf), SIM_BUF(pos_tmp_buf), PBFCL_INIT_POSITION, PBFCL_SORT_CARRY,
     PBFCL_SAVED, false},
    {"predicted_positions", 16, SIM_BUF(pred_buf), SIM_BUF(pred_tmp_buf), PBFCL_INIT_POSITION,
     PBFCL_SORT_CARRY, PBFCL_SAVED, true},
    {"velocities", 16, SIM_BUF(vel_buf), SIM_BUF(vel_tmp_buf), PBFCL_INIT_VELOCITY,
     PBFCL_SORT_CARRY, PBFCL_SAVED, false},
    {"ids", 4, SIM_BUF(id_buf), SIM_BUF(id_tmp_buf), PBFCL_INIT_ID, PBFCL_SORT_CARRY, PBFCL_SAVED,
     false},
    {"phases", 4, SIM_BUF(phase_buf), SIM_BUF(phase_tmp_buf), PBFCL_INIT_FLUID_PHASE,
     PBFCL_SORT_SOLIDS, PBFCL_SAVED, false},
    {"inverse_masses", 4, SIM_BUF(inv_mass_buf), SIM_BUF(inv_mass_tmp_buf), PBFCL_INIT_ONE,
     PBFCL_SORT_SOLIDS, PBFCL_SAVED, false},
    {"densities", 4, SIM_BUF(density_buf), PBFCL_NOT_REORDERED, PBFCL_INIT_REST_DENSITY,
     PBFCL_SORT_CARRY, PBFCL_SAVED, false},
};

const size_t sim_buffer_count = sizeof sim_buffers / sizeof sim_buffers[0];

cl_mem *sim_table_buf(void *base, const pbfcl_particle_buffer *d, bool tmp)
{
    return (cl_mem *)((char *)base + (tmp ? d->reorder_tmp : d->offset));
}

bool sim_buffer_used(const pbfcl_sim *sim, const pbfcl_particle_buffer *d)
{
    return !d->predicted || sim->method->predicts;
}

static bool reordered(const pbfcl_particle_buffer *d)
{
    return d->reorder_tmp != PBFCL_NOT_REORDERED;
}

bool sim_method_table(const pbfcl_solver_method *m, pbfcl_sim *sim, int t, pbfcl_buffer_table *out)
{
    return m->buffer_table && m->buffer_table(sim, t, out);
}

unsigned long long sim_buffers_bytes(const pbfcl_solver_method *m)
{
    unsigned long long per_particle = 0;
    for (size_t b = 0; b < sim_buffer_count; b++)
        if (!sim_buffers[b].predicted || m->predicts)
            per_particle += sim_buffers[b].elem * (reordered(&sim_buffers[b]) ? 2 : 1);
    pbfcl_buffer_table tab; /* the method's own */
    for (int t = 0; sim_method_table(m, NULL, t, &tab); t++)
        for (int b = 0; b < tab.count; b++)
            per_particle += tab.rows[b].elem * (reordered(&tab.rows[b]) ? 2 : 1);
    return per_particle;
}

pbfcl_status sim_buffers_alloc(pbfcl_sim *sim)
{
    pbfcl_cl *cl = sim->cl;
    for (int pass = 0; pass < 2; pass++) /* the buffers, then the reorder targets */
        for (size_t b = 0; b < sim_buffer_count; b++) {
            const pbfcl_particle_buffer *d = &sim_buffers[b];
            if ((!pass || reordered(d)) && sim_buffer_used(sim, d))
                PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sim->capacity * d->elem, d->name,
                                          sim_table_buf(sim, d, pass)));
        }
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof(pbfcl_constants), "solver parameters",
                              &sim->params_buf));
    return pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, sizeof(cl_uint), "largest acceleration",
                           &sim->accel_max_buf);
}

void sim_buffers_release(pbfcl_sim *sim)
{
    for (size_t b = 0; b < sim_buffer_count; b++) {
        pbfcl_cl_release_buffer(sim_table_buf(sim, &sim_buffers[b], false));
        if (reordered(&sim_buffers[b]))
            pbfcl_cl_release_buffer(sim_table_buf(sim, &sim_buffers[b], true));
    }
    pbfcl_cl_release_buffer(&sim->params_buf);
    pbfcl_cl_release_buffer(&sim->accel_max_buf);
    pbfcl_cl_release_buffer(&sim->records_buf);
}

/* Makes row d's buffers (and its reorder target) in owner, zeros written from the host
 * (pbfcl_cl_write_zeros), as the core's rows get their first values (sim_upload_particles). */
static pbfcl_status make_row(pbfcl_sim *sim, void *owner, const pbfcl_particle_buffer *d)
{
    size_t bytes = sim->capacity * d->elem;
    for (int tmp = 0; tmp < 1 + reordered(d); tmp++) {
        cl_mem *buf = sim_table_buf(owner, d, tmp);
        PBFCL_TRY(pbfcl_cl_buffer(sim->cl, CL_MEM_READ_WRITE, bytes, d->name, buf));
        PBFCL_TRY(pbfcl_cl_write_zeros(sim->cl, *buf, bytes));
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_sim_method_buffers_make(pbfcl_sim *sim)
{
    pbfcl_buffer_table tab;
    for (int t = 0; sim_method_table(sim->method, sim, t, &tab); t++) {
        if (tab.count > 0 && !tab.owner) {
            pbfcl_errorf("%s's buffer table %d (%s, ...) has no owner: the part that declares it "
                         "must make its state before the method makes its buffers",
                         sim->method->name, t, tab.rows[0].name);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        for (int b = 0; b < tab.count; b++)
            PBFCL_TRY(make_row(sim, tab.owner, &tab.rows[b]));
    }
    return PBFCL_OK;
}

void pbfcl_sim_method_buffers_release(pbfcl_sim *sim)
{
    pbfcl_buffer_table tab;
    for (int t = 0; sim_method_table(sim->method, sim, t, &tab); t++)
        for (int b = 0; b < tab.count && tab.owner; b++) {
            pbfcl_cl_release_buffer(sim_table_buf(tab.owner, &tab.rows[b], false));
            if (reordered(&tab.rows[b]))
                pbfcl_cl_release_buffer(sim_table_buf(tab.owner, &tab.rows[b], true));
        }
}

void sim_pack_float3(const float *xyz, size_t n, cl_float4 *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = xyz ? (cl_float4){{xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], 0.0f}}
                     : (cl_float4){{0.0f, 0.0f, 0.0f, 0.0f}};
}

/* Fills tmp (n elements of d->elem bytes) with the initial value of buffer d for particles
 * first..first+n-1. */
static void initial_values(const pbfcl_sim *sim, const pbfcl_particle_buffer *d, size_t first,
                           size_t n, const float *positions, const float *velocities, void *tmp)
{
    float *f1 = tmp;
    cl_uint *u1 = tmp;
    if (d->init == PBFCL_INIT_POSITION || d->init == PBFCL_INIT_VELOCITY) {
        sim_pack_float3(d->init == PBFCL_INIT_POSITION ? positions : velocities, n, tmp);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (d->init == PBFCL_INIT_REST_DENSITY)
            f1[i] = sim->params.rest_density;
        else if (d->init == PBFCL_INIT_ID)
            u1[i] = (cl_uint)(first + i);
        else if (d->init == PBFCL_INIT_ONE)
            f1[i] = 1.0f;
        else if (d->init == PBFCL_INIT_FLUID_PHASE)
            u1[i] = PBFCL_SIM_PHASE_FLUID;
        else
            memset((char *)tmp + i * d->elem, 0, d->elem);
    }
}

/* Writes the initial values of row d (base: the owner of its handles) for particles
 * first..first+n-1, to the reorder target too (ALGORITHM.md, "Oclgrind and reused buffers"). */
static pbfcl_status upload_row(pbfcl_sim *sim, void *base, const pbfcl_particle_buffer *d,
                               size_t first, size_t n, const float *positions,
                               const float *velocities, void *tmp)
{
    if (d->init == PBFCL_INIT_UNSET)
        return PBFCL_OK;
    initial_values(sim, d, first, n, positions, velocities, tmp);
    for (int t = 0; t < 1 + reordered(d); t++)
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(sim->cl->queue, *sim_table_buf(base, d, t), CL_TRUE,
                                            first * d->elem, n * d->elem, tmp, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status sim_upload_particles(pbfcl_sim *sim, size_t first, size_t n, const float *positions,
                                  const float *velocities)
{
    if (n == 0)
        return PBFCL_OK;
    void *tmp = calloc(n, 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = PBFCL_OK;
    for (size_t b = 0; b < sim_buffer_count && st == PBFCL_OK; b++)
        if (sim_buffer_used(sim, &sim_buffers[b]))
            st = upload_row(sim, sim, &sim_buffers[b], first, n, positions, velocities, tmp);
    pbfcl_buffer_table tab;
    for (int t = 0; st == PBFCL_OK && sim_method_table(sim->method, sim, t, &tab); t++)
        for (int b = 0; b < tab.count && st == PBFCL_OK; b++)
            st = upload_row(sim, tab.owner, &tab.rows[b], first, n, positions, velocities, tmp);
    free(tmp);
    return st;
}

/* The value and step of fill_rows (particles.h) that give row d its initial values with no
 * positions or velocities given: the kinds of one word, the ids, and zeros. */
static void initial_pattern(const pbfcl_sim *sim, const pbfcl_particle_buffer *d, cl_uint *value,
                            cl_uint *step)
{
    float one = 1.0f;
    *value = 0;
    *step = d->init == PBFCL_INIT_ID;
    if (d->init == PBFCL_INIT_REST_DENSITY)
        memcpy(value, &sim->params.rest_density, sizeof *value);
    else if (d->init == PBFCL_INIT_ONE)
        memcpy(value, &one, sizeof *value);
    else if (d->init == PBFCL_INIT_FLUID_PHASE)
        *value = PBFCL_SIM_PHASE_FLUID;
}

/* Enqueues the initial values of row d (base: the owner of its handles) for particles
 * first..first+n-1 on the device, as upload_row with no positions or velocities; a saved row
 * (keep_saved) leaves its own buffer to the caller and fills its reorder target alone. */
static pbfcl_status fill_row(pbfcl_sim *sim, void *base, const pbfcl_particle_buffer *d,
                             size_t first, size_t n, bool keep_saved)
{
    if (d->init == PBFCL_INIT_UNSET)
        return PBFCL_OK;
    cl_uint value, step;
    initial_pattern(sim, d, &value, &step);
    for (int t = keep_saved && d->saved == PBFCL_SAVED; t < 1 + reordered(d); t++)
        PBFCL_TRY(pbfcl_particles_fill_rows(&sim->particles, *sim_table_buf(base, d, t),
                                            d->elem / 4, first, n, value, step));
    return PBFCL_OK;
}

pbfcl_status sim_fill_particles(pbfcl_sim *sim, size_t first, size_t n, bool keep_saved)
{
    for (size_t b = 0; b < sim_buffer_count && n > 0; b++)
        if (sim_buffer_used(sim, &sim_buffers[b]))
            PBFCL_TRY(fill_row(sim, sim, &sim_buffers[b], first, n, keep_saved));
    pbfcl_buffer_table tab;
    for (int t = 0; n > 0 && sim_method_table(sim->method, sim, t, &tab); t++)
        for (int b = 0; b < tab.count; b++)
            PBFCL_TRY(fill_row(sim, tab.owner, &tab.rows[b], first, n, keep_saved));
    return PBFCL_OK;
}

static void swap_buf(cl_mem *a, cl_mem *b)
{
    cl_mem t = *a;
    *a = *b;
    *b = t;
}

/* The three words a particle carries with solids, its id, phase and inverse mass: a substep's
 * sort reorders them in one launch (reorder_solid_words). */
static bool is_solid_word(const pbfcl_particle_buffer *d)
{
    return d->offset == SIM_BUF(id_buf) || d->offset == SIM_BUF(phase_buf) ||
           d->offset == SIM_BUF(inv_mass_buf);
}

/* The sort's reorder of the solids' words (is_solid_word, in sim_buffers' order: the ids first)
 * by reorder_solids, which with shape-matched bodies also writes their slots: they are then
 * current. */
static pbfcl_status reorder_solid_words(pbfcl_sim *sim, pbfcl_profile *prof)
{
    cl_mem *src[3], *dst[3], from[3], to[3];
    int k = 0;
    for (size_t b = 0; b < sim_buffer_count; b++)
        if (is_solid_word(&sim_buffers[b])) {
            src[k] = sim_table_buf(sim, &sim_buffers[b], false);
            dst[k] = sim_table_buf(sim, &sim_buffers[b], true);
            from[k] = *src[k];
            to[k] = *dst[k];
            k++;
        }
    cl_mem slot = sim_matches_shapes(sim) ? sim->particles.slot_buf : NULL;
    PBFCL_TRY(pbfcl_grid_reorder_solids(&sim->grid, from, to, slot, sim->n, prof));
    for (k = 0; k < 3; k++)
        swap_buf(src[k], dst[k]);
    sim->slots_current = slot != NULL;
    return PBFCL_OK;
}

/* Reorders row d of a table whose handles live in base (unless the sort leaves it). */
static pbfcl_status reorder_row(pbfcl_sim *sim, void *base, const pbfcl_particle_buffer *d,
                                bool sort, pbfcl_profile *prof)
{
    if (!reordered(d))
        return PBFCL_OK;
    if (sort &&
        (d->sort == PBFCL_SORT_SKIP || (d->sort == PBFCL_SORT_SOLIDS && !sim_has_bodies(sim))))
        return PBFCL_OK;
    cl_mem *src = sim_table_buf(base, d, false), *dst = sim_table_buf(base, d, true);
    if (d->elem == 16)
        PBFCL_TRY(pbfcl_grid_reorder(&sim->grid, *src, *dst, sim->n, prof));
    else /* uint or float: a gather of 4-byte words either way */
        PBFCL_TRY(pbfcl_grid_reorder_uint(&sim->grid, *src, *dst, sim->n, prof));
    swap_buf(src, dst);
    return PBFCL_OK;
}

pbfcl_status sim_reorder(pbfcl_sim *sim, bool sort, pbfcl_profile *prof)
{
    sim->slots_current = 0;
    bool solids = sort && sim_has_bodies(sim);
    for (size_t b = 0; b < sim_buffer_count; b++) {
        const pbfcl_particle_buffer *d = &sim_buffers[b];
        if (!sim_buffer_used(sim, d) || (solids && is_solid_word(d)))
            continue; /* not made, or reorder_solid_words */
        PBFCL_TRY(reorder_row(sim, sim, d, sort, prof));
    }
    pbfcl_buffer_table tab;
    for (int t = 0; sim_method_table(sim->method, sim, t, &tab); t++)
        for (int b = 0; b < tab.count; b++)
            PBFCL_TRY(reorder_row(sim, tab.owner, &tab.rows[b], sort, prof));
    return solids ? reorder_solid_words(sim, prof) : PBFCL_OK;
}
