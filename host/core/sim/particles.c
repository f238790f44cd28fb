/* The solver-neutral particle passes (particles.h, cl/sim/particles.cl): stats reduced per
 * work-group on the device and summed on the host, bounds merged with atomic_max, and the
 * render copy scattered into the caller's order by particle id. */
#include "sim/particles.h"

#include "pbfcl_shared.h"
#include "runtime/programs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest work-group size tried (a power of two; the device may allow less). */
#define PARTICLES_WG_MAX 256u

/* Sets kernel argument idx to the value v (an lvalue). */
#define PARTICLES_ARG(kernel, idx, v)                                                              \
    PBFCL_CL_CHECK(clSetKernelArg((kernel), (idx), sizeof(v), &(v)))

void pbfcl_particles_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    size_t wg = 1; /* the largest power of two the device allows, up to PARTICLES_WG_MAX */
    while (wg * 2 <= dev->max_wg && wg * 2 <= PARTICLES_WG_MAX)
        wg *= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
}

unsigned long long pbfcl_particles_bytes_needed(size_t capacity)
{
    return (unsigned long long)capacity * PBFCL_STATS_FIELDS * sizeof(float) + 3 * sizeof(cl_uint);
}

static pbfcl_status build_kernels(pbfcl_particles *p)
{
    pbfcl_build_config cfg;
    pbfcl_particles_build_config(&p->cl->dev, &cfg);
    p->wg = cfg.wg_size;
    if (p->wg < PBFCL_STATS_FIELDS) { /* each of the first PBFCL_STATS_FIELDS items writes one */
        pbfcl_errorf("%s allows work-groups of at most %zu items; the particle statistics need "
                     "at least 16",
                     p->cl->dev.device_name, p->cl->dev.max_wg);
        return PBFCL_ERR_DEVICE_LIMIT;
    }
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_PARTICLES);
    PBFCL_TRY(pbfcl_cl_build(p->cl, desc->files, desc->nfiles, options, &p->program));
    static const char *const names[] = {"particles_stats",          "particles_bounds",
                                        "particles_copy_positions", "particles_slots",
                                        "particles_gather_rows",    "particles_scatter_rows",
                                        "particles_fill_rows",      "particles_gather_column",
                                        "particles_append_column",  "particles_scatter_column"};
    cl_kernel *slots[] = {
        &p->stats,        &p->bounds,    &p->copy_positions, &p->slots,         &p->gather_rows,
        &p->scatter_rows, &p->fill_rows, &p->gather_column,  &p->append_column, &p->scatter_column};
    size_t local[] = {PBFCL_STATS_FIELDS * p->wg * sizeof(float),
                      3 * p->wg * sizeof(float),
                      0,
                      0,
                      0,
                      0,
                      0,
                      0,
                      0,
                      0};
    for (int k = 0; k < 10; k++) {
        PBFCL_TRY(pbfcl_cl_kernel(p->program, names[k], slots[k]));
        PBFCL_TRY(pbfcl_cl_check_launch(p->cl, *slots[k], names[k], p->wg, local[k]));
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_particles_create(pbfcl_particles *p, pbfcl_cl *cl, size_t capacity)
{
    memset(p, 0, sizeof *p);
    p->cl = cl;
    p->capacity = capacity;
    pbfcl_status st = build_kernels(p);
    size_t groups = (capacity + p->wg - 1) / (p->wg ? p->wg : 1);
    if (st == PBFCL_OK)
        st = pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE,
                             (groups ? groups : 1) * PBFCL_STATS_FIELDS * sizeof(float),
                             "stats partials", &p->partial_buf);
    if (st == PBFCL_OK)
        st = pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), "substep bounds",
                             &p->bounds_buf);
    if (st != PBFCL_OK)
        pbfcl_particles_destroy(p);
    return st;
}

void pbfcl_particles_destroy(pbfcl_particles *p)
{
    if (!p)
        return;
    pbfcl_cl_release_buffer(&p->partial_buf);
    pbfcl_cl_release_buffer(&p->bounds_buf);
    pbfcl_cl_release_buffer(&p->slot_buf);
    cl_kernel kernels[] = {p->stats,         p->bounds,        p->copy_positions, p->slots,
                           p->gather_rows,   p->scatter_rows,  p->fill_rows,      p->gather_column,
                           p->append_column, p->scatter_column};
    for (int k = 0; k < 10; k++)
        if (kernels[k])
            clReleaseKernel(kernels[k]);
    if (p->program)
        clReleaseProgram(p->program);
    memset(p, 0, sizeof *p);
}

/* Adds one work-group row of partial stats into the totals. */
static void stats_add(pbfcl_stats *o, const float *row, double *finite, double *fluid)
{
    o->kinetic_energy += row[PBFCL_STATS_KINETIC];
    o->density_error_avg += row[PBFCL_STATS_DENSITY_SUM];
    o->density_error_max = fmax(o->density_error_max, row[PBFCL_STATS_DENSITY_MAX]);
    o->max_speed = fmax(o->max_speed, row[PBFCL_STATS_SPEED_MAX]);
    o->neighbours_avg += row[PBFCL_STATS_NEIGHBOR_SUM];
    if (row[PBFCL_STATS_NEIGHBOR_MAX] > (float)o->neighbours_max)
        o->neighbours_max = (unsigned)row[PBFCL_STATS_NEIGHBOR_MAX];
    o->outside += (unsigned)row[PBFCL_STATS_OUTSIDE];
    o->nan += (unsigned)row[PBFCL_STATS_NAN];
    for (int a = 0; a < 3; a++)
        o->momentum[a] += row[PBFCL_STATS_MOMENTUM + a];
    *finite += row[PBFCL_STATS_FINITE];
    *fluid += row[PBFCL_STATS_FLUID];
}

/* Checks that the state fits the buffers made for capacity particles. */
static pbfcl_status check_count(const pbfcl_particles *p, const pbfcl_particle_state *s,
                                const char *pass)
{
    if (s->n > p->capacity) {
        pbfcl_errorf("particles %s: %zu particles exceed the capacity of %zu", pass, s->n,
                     p->capacity);
        return PBFCL_ERR_CAPACITY;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_particles_stats(pbfcl_particles *p, const pbfcl_particle_state *s,
                                   const pbfcl_particles_material *m, pbfcl_stats *out)
{
    memset(out, 0, sizeof *out);
    PBFCL_TRY(check_count(p, s, "stats"));
    if (s->n == 0)
        return PBFCL_OK;
    cl_kernel k = p->stats;
    cl_uint n = (cl_uint)s->n;
    cl_float4 lo = {{m->wall_lo[0], m->wall_lo[1], m->wall_lo[2], 0.0f}};
    cl_float4 hi = {{m->wall_hi[0], m->wall_hi[1], m->wall_hi[2], 0.0f}};
    cl_float mass = m->mass, inv_rho0 = 1.0f / m->rest_density;
    PARTICLES_ARG(k, 0, n);
    PARTICLES_ARG(k, 1, lo);
    PARTICLES_ARG(k, 2, hi);
    PARTICLES_ARG(k, 3, mass);
    PARTICLES_ARG(k, 4, inv_rho0);
    PARTICLES_ARG(k, 5, s->pos_buf);
    PARTICLES_ARG(k, 6, s->vel_buf);
    PARTICLES_ARG(k, 7, s->density_buf);
    PARTICLES_ARG(k, 8, s->neighbor_count_buf);
    cl_uint bodies = s->phase_buf && s->inv_mass_buf;
    cl_mem phase = bodies ? s->phase_buf : s->pos_buf; /* never read without bodies */
    cl_mem inv_mass = bodies ? s->inv_mass_buf : s->pos_buf;
    PARTICLES_ARG(k, 9, bodies);
    PARTICLES_ARG(k, 10, phase);
    PARTICLES_ARG(k, 11, inv_mass);
    PARTICLES_ARG(k, 12, p->partial_buf);
    PBFCL_TRY(pbfcl_cl_launch(p->cl, k, s->n, p->wg, NULL, PBFCL_STAGE_OTHER));
    size_t groups = (s->n + p->wg - 1) / p->wg, count = groups * PBFCL_STATS_FIELDS;
    float *rows = malloc(count * sizeof *rows);
    if (!rows)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = clEnqueueReadBuffer(p->cl->queue, p->partial_buf, CL_TRUE, 0, count * sizeof *rows,
                                     rows, 0, NULL, NULL);
    double finite = 0.0, fluid = 0.0;
    for (size_t g = 0; err == CL_SUCCESS && g < groups; g++)
        stats_add(out, rows + g * PBFCL_STATS_FIELDS, &finite, &fluid);
    free(rows);
    PBFCL_CL_CHECK(err);
    if (fluid > 0)
        out->density_error_avg *= 100.0 / fluid;
    if (finite > 0) {
        out->neighbours_avg /= finite;
    }
    out->density_error_max *= 100.0;
    return PBFCL_OK;
}

pbfcl_status pbfcl_particles_bounds(pbfcl_particles *p, const pbfcl_particle_state *s,
                                    const float box_lo[3], const float box_hi[3],
                                    const float down[3], unsigned matched, float solid_scale,
                                    pbfcl_profile *prof)
{
    PBFCL_TRY(check_count(p, s, "bounds"));
    cl_kernel k = p->bounds;
    cl_uint n = (cl_uint)s->n;
    cl_float4 lo = {{box_lo[0], box_lo[1], box_lo[2], 0.0f}};
    cl_float4 hi = {{box_hi[0], box_hi[1], box_hi[2], 0.0f}};
    cl_float4 dn = {{down[0], down[1], down[2], 0.0f}};
    static const cl_uint zeros[3] = {0, 0, 0}; /* static: the write need not block */
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(p->cl->queue, p->bounds_buf, CL_FALSE, 0, sizeof zeros,
                                        zeros, 0, NULL, NULL));
    PARTICLES_ARG(k, 0, n);
    PARTICLES_ARG(k, 1, lo);
    PARTICLES_ARG(k, 2, hi);
    PARTICLES_ARG(k, 3, dn);
    PARTICLES_ARG(k, 4, s->pos_buf);
    PARTICLES_ARG(k, 5, s->vel_buf);
    PARTICLES_ARG(k, 6, p->bounds_buf);
    cl_uint bodies = matched;
    PARTICLES_ARG(k, 7, s->phase_buf);
    PARTICLES_ARG(k, 8, bodies);
    PARTICLES_ARG(k, 9, solid_scale);
    return pbfcl_cl_launch(p->cl, k, s->n, p->wg, prof, PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_particles_read_bounds(pbfcl_particles *p, float out[3])
{
    cl_uint bits[3];
    PBFCL_CL_CHECK(clEnqueueReadBuffer(p->cl->queue, p->bounds_buf, CL_TRUE, 0, sizeof bits, bits,
                                       0, NULL, NULL));
    memcpy(out, bits, sizeof bits); /* the kernel merged float bits as uints */
    return PBFCL_OK;
}

pbfcl_status pbfcl_particles_copy_positions(pbfcl_particles *p, const pbfcl_particle_state *s,
                                            cl_mem dst_buf)
{
    PBFCL_TRY(check_count(p, s, "copy_positions"));
    cl_kernel k = p->copy_positions;
    cl_uint n = (cl_uint)s->n;
    PARTICLES_ARG(k, 0, n);
    PARTICLES_ARG(k, 1, s->pos_buf);
    PARTICLES_ARG(k, 2, s->vel_buf);
    PARTICLES_ARG(k, 3, s->id_buf);
    PARTICLES_ARG(k, 4, dst_buf);
    return pbfcl_cl_launch(p->cl, k, s->n, p->wg, NULL, PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_particles_slot_map(pbfcl_particles *p, cl_mem *out)
{
    if (!p->slot_buf)
        PBFCL_TRY(pbfcl_cl_buffer(p->cl, CL_MEM_READ_WRITE, (p->capacity ? p->capacity : 1) * 4,
                                  "id-to-slot map", &p->slot_buf));
    *out = p->slot_buf;
    return PBFCL_OK;
}

pbfcl_status pbfcl_particles_slots(pbfcl_particles *p, size_t n, cl_mem id_buf, pbfcl_profile *prof,
                                   pbfcl_stage stage)
{
    cl_mem slot_buf;
    PBFCL_TRY(pbfcl_particles_slot_map(p, &slot_buf));
    if (n == 0)
        return PBFCL_OK;
    if (n > p->capacity) {
        pbfcl_errorf("particles slots: %zu particles exceed the capacity of %zu", n, p->capacity);
        return PBFCL_ERR_CAPACITY;
    }
    cl_uint un = (cl_uint)n;
    PARTICLES_ARG(p->slots, 0, un);
    PARTICLES_ARG(p->slots, 1, id_buf);
    PARTICLES_ARG(p->slots, 2, slot_buf);
    return pbfcl_cl_launch(p->cl, p->slots, n, p->wg, prof, stage);
}

pbfcl_status pbfcl_particles_slots_into(pbfcl_particles *p, size_t n, cl_mem id_buf, cl_mem out_buf,
                                        pbfcl_profile *prof, pbfcl_stage stage)
{
    if (n == 0)
        return PBFCL_OK;
    cl_uint un = (cl_uint)n;
    PARTICLES_ARG(p->slots, 0, un);
    PARTICLES_ARG(p->slots, 1, id_buf);
    PARTICLES_ARG(p->slots, 2, out_buf);
    return pbfcl_cl_launch(p->cl, p->slots, n, p->wg, prof, stage);
}

/* Launches k (gather_rows or scatter_rows) from `from` to `to` over count rows of words. */
static pbfcl_status rows_launch(pbfcl_particles *p, cl_kernel k, const char *name, cl_mem from,
                                size_t words, cl_mem slots_buf, size_t count, cl_mem to)
{
    if (count == 0)
        return PBFCL_OK;
    if (words == 0 || count > CL_UINT_MAX || words > CL_UINT_MAX ||
        count * words / words != count) {
        pbfcl_errorf("%s: %zu rows of %zu words are not a launch (1 to %u words a row, at most "
                     "%u rows)",
                     name, count, words, CL_UINT_MAX, CL_UINT_MAX);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cl_uint n = (cl_uint)count, w = (cl_uint)words;
    PARTICLES_ARG(k, 0, n);
    PARTICLES_ARG(k, 1, w);
    PARTICLES_ARG(k, 2, from);
    PARTICLES_ARG(k, 3, slots_buf);
    PARTICLES_ARG(k, 4, to);
    return pbfcl_cl_launch(p->cl, k, count * words, p->wg, NULL, PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_particles_gather_rows(pbfcl_particles *p, cl_mem src_buf, size_t words,
                                         cl_mem slots_buf, size_t count, cl_mem out_buf)
{
    return rows_launch(p, p->gather_rows, "particles gather_rows", src_buf, words, slots_buf, count,
                       out_buf);
}

pbfcl_status pbfcl_particles_scatter_rows(pbfcl_particles *p, cl_mem in_buf, size_t words,
                                          cl_mem slots_buf, size_t count, cl_mem dst_buf)
{
    return rows_launch(p, p->scatter_rows, "particles scatter_rows", in_buf, words, slots_buf,
                       count, dst_buf);
}

/* Checks that count rows of words (at first, in records of stride words at column at) make a
 * launch of 32-bit indices. */
static pbfcl_status check_rows(const char *name, size_t count, size_t words, size_t first,
                               size_t stride, size_t at)
{
    if (words == 0 || at + words > stride || stride > CL_UINT_MAX || first > CL_UINT_MAX ||
        count > CL_UINT_MAX - first || count * stride / stride != count ||
        (first + count) * words / words != first + count) {
        pbfcl_errorf("%s: %zu rows of %zu words from row %zu, in records of %zu words at word "
                     "%zu, are not a launch (1 to %u words a row within its record, at most %u "
                     "rows)",
                     name, count, words, first, stride, at, CL_UINT_MAX, CL_UINT_MAX);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_particles_fill_rows(pbfcl_particles *p, cl_mem dst_buf, size_t words,
                                       size_t first, size_t count, cl_uint value, cl_uint step)
{
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(check_rows("particles fill_rows", count, words, first, words, 0));
    cl_uint f = (cl_uint)first, n = (cl_uint)count, w = (cl_uint)words;
    PARTICLES_ARG(p->fill_rows, 0, f);
    PARTICLES_ARG(p->fill_rows, 1, n);
    PARTICLES_ARG(p->fill_rows, 2, w);
    PARTICLES_ARG(p->fill_rows, 3, value);
    PARTICLES_ARG(p->fill_rows, 4, step);
    PARTICLES_ARG(p->fill_rows, 5, dst_buf);
    return pbfcl_cl_launch(p->cl, p->fill_rows, count * words, p->wg, NULL, PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_particles_gather_column(pbfcl_particles *p, cl_mem src_buf, size_t words,
                                           cl_mem slots_buf, size_t count, size_t stride, size_t at,
                                           cl_mem out_buf)
{
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(check_rows("particles gather_column", count, words, 0, stride, at));
    cl_uint n = (cl_uint)count, w = (cl_uint)words, s = (cl_uint)stride, a = (cl_uint)at;
    cl_kernel k = p->gather_column;
    PARTICLES_ARG(k, 0, n);
    PARTICLES_ARG(k, 1, w);
    PARTICLES_ARG(k, 2, s);
    PARTICLES_ARG(k, 3, a);
    PARTICLES_ARG(k, 4, src_buf);
    PARTICLES_ARG(k, 5, slots_buf);
    PARTICLES_ARG(k, 6, out_buf);
    return pbfcl_cl_launch(p->cl, k, count * words, p->wg, NULL, PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_particles_append_column(pbfcl_particles *p, cl_mem in_buf, size_t stride,
                                           size_t at, size_t words, size_t first, size_t count,
                                           cl_mem dst_buf)
{
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(check_rows("particles append_column", count, words, first, stride, at));
    cl_uint n = (cl_uint)count, w = (cl_uint)words, s = (cl_uint)stride, a = (cl_uint)at;
    cl_uint f = (cl_uint)first;
    cl_kernel k = p->append_column;
    PARTICLES_ARG(k, 0, n);
    PARTICLES_ARG(k, 1, w);
    PARTICLES_ARG(k, 2, s);
    PARTICLES_ARG(k, 3, a);
    PARTICLES_ARG(k, 4, f);
    PARTICLES_ARG(k, 5, in_buf);
    PARTICLES_ARG(k, 6, dst_buf);
    return pbfcl_cl_launch(p->cl, k, count * words, p->wg, NULL, PBFCL_STAGE_OTHER);
}

pbfcl_status pbfcl_particles_scatter_column(pbfcl_particles *p, cl_mem in_buf, size_t stride,
                                            size_t at, size_t words, cl_mem slots_buf, size_t count,
                                            cl_mem dst_buf)
{
    if (count == 0)
        return PBFCL_OK;
    PBFCL_TRY(check_rows("particles scatter_column", count, words, 0, stride, at));
    cl_uint n = (cl_uint)count, w = (cl_uint)words, s = (cl_uint)stride, a = (cl_uint)at;
    cl_kernel k = p->scatter_column;
    PARTICLES_ARG(k, 0, n);
    PARTICLES_ARG(k, 1, w);
    PARTICLES_ARG(k, 2, s);
    PARTICLES_ARG(k, 3, a);
    PARTICLES_ARG(k, 4, in_buf);
    PARTICLES_ARG(k, 5, slots_buf);
    PARTICLES_ARG(k, 6, dst_buf);
    return pbfcl_cl_launch(p->cl, k, count * words, p->wg, NULL, PBFCL_STAGE_OTHER);
}
