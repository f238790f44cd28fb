/* Diffuse particles (spray, foam, bubbles) on the device: the kernels of cl/diffuse/diffuse.cl,
 * their buffers, and the stage that runs them once per frame (diffuse.h). */
#include "diffuse/diffuse.h"

#include "runtime/programs.h"

#include <string.h>

#define DIFFUSE_WG_MAX 256u

#define DIFFUSE_ARG(k, i, v) PBFCL_CL_CHECK(clSetKernelArg((k), (i), sizeof(v), &(v)))

static pbfcl_status diffuse_wait_params(pbfcl_diffuse *d);

void pbfcl_diffuse_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg)
{
    size_t wg = 1; /* the largest power of two the device allows, up to DIFFUSE_WG_MAX */
    while (wg * 2 <= dev->max_wg && wg * 2 <= DIFFUSE_WG_MAX)
        wg *= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
}

unsigned long long pbfcl_diffuse_bytes_needed(size_t capacity, size_t fluid_capacity)
{
    unsigned long long c = capacity, f = fluid_capacity;
    return 4 * c * 16 + 2 * f * 16 + 2 * (c + f) * 4 + sizeof(pbfcl_diffuse_params) + 4;
}

static pbfcl_status diffuse_build(pbfcl_diffuse *d)
{
    pbfcl_build_config cfg;
    pbfcl_diffuse_build_config(&d->cl->dev, &cfg);
    d->wg = cfg.wg_size;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0)
        return PBFCL_ERR_BAD_ARGUMENT;
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_DIFFUSE);
    PBFCL_TRY(pbfcl_cl_build(d->cl, desc->files, desc->nfiles, options, &d->program));
    static const char *const names[] = {"diffuse_normals", "diffuse_potentials", "diffuse_advect",
                                        "diffuse_compact"};
    cl_kernel *slots[] = {&d->normals, &d->potentials, &d->advect, &d->compact};
    for (int k = 0; k < 4; k++) {
        PBFCL_TRY(pbfcl_cl_kernel(d->program, names[k], slots[k]));
        PBFCL_TRY(pbfcl_cl_check_launch(d->cl, *slots[k], names[k], d->wg, 0));
    }
    return PBFCL_OK;
}

static pbfcl_status diffuse_buffers(pbfcl_diffuse *d)
{
    pbfcl_cl *cl = d->cl;
    size_t c = d->capacity, f = d->fluid_capacity ? d->fluid_capacity : 1;
    const cl_mem_flags rw = CL_MEM_READ_WRITE;
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, sizeof d->params, "diffuse constants",
                              &d->params_buf));
    for (int k = 0; k < 2; k++) {
        PBFCL_TRY(pbfcl_cl_buffer(cl, rw, c * 16, "diffuse positions", &d->pos_buf[k]));
        PBFCL_TRY(pbfcl_cl_buffer(cl, rw, c * 16, "diffuse velocities", &d->vel_buf[k]));
    }
    PBFCL_TRY(pbfcl_cl_buffer(cl, rw, f * 16, "diffuse fluid normals", &d->normal_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, rw, f * 16, "diffuse potentials", &d->potential_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, rw, (c + f) * 4, "diffuse flags", &d->flags_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, rw, (c + f) * 4, "diffuse offsets", &d->offset_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, rw, 4, "diffuse total", &d->total_buf));
    return pbfcl_scan_create(&d->scan, cl, c + f);
}

pbfcl_status pbfcl_diffuse_create(pbfcl_diffuse *d, pbfcl_cl *cl, size_t capacity,
                                  size_t fluid_capacity)
{
    memset(d, 0, sizeof *d);
    d->cl = cl;
    /* the survivors and every fluid particle's most emissions are summed in 32 bits */
    unsigned long long sum = capacity + (unsigned long long)fluid_capacity * PBFCL_DIFFUSE_MAX_EMIT;
    if (capacity == 0 || sum > UINT32_MAX) {
        pbfcl_errorf("diffuse particles: a capacity of %zu beside %zu fluid particles is out of "
                     "range: it must be at least 1 and the capacity plus %u per fluid particle "
                     "at most %u",
                     capacity, fluid_capacity, PBFCL_DIFFUSE_MAX_EMIT, UINT32_MAX);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    d->capacity = capacity;
    d->fluid_capacity = fluid_capacity;
    unsigned long long bytes = pbfcl_diffuse_bytes_needed(capacity, fluid_capacity);
    pbfcl_status st =
        pbfcl_cl_check_memory(cl, bytes, (capacity + fluid_capacity) * 16ull, "diffuse particles");
    if (st == PBFCL_OK)
        st = diffuse_build(d);
    if (st == PBFCL_OK)
        st = diffuse_buffers(d);
    if (st != PBFCL_OK)
        pbfcl_diffuse_destroy(d);
    return st;
}

void pbfcl_diffuse_destroy(pbfcl_diffuse *d)
{
    if (!d)
        return;
    diffuse_wait_params(d); /* the write reads d->written: finish it before d goes */
    pbfcl_scan_destroy(&d->scan);
    cl_mem *bufs[] = {&d->params_buf, &d->pos_buf[0], &d->pos_buf[1],    &d->vel_buf[0],
                      &d->vel_buf[1], &d->normal_buf, &d->potential_buf, &d->flags_buf,
                      &d->offset_buf, &d->total_buf};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        pbfcl_cl_release_buffer(bufs[k]);
    cl_kernel kernels[] = {d->normals, d->potentials, d->advect, d->compact};
    for (int k = 0; k < 4; k++)
        if (kernels[k])
            clReleaseKernel(kernels[k]);
    if (d->program)
        clReleaseProgram(d->program);
    memset(d, 0, sizeof *d);
}

void pbfcl_diffuse_params_from_scene(const pbfcl_scene *scene, float dt, const float g[3],
                                     unsigned frame, size_t capacity, pbfcl_diffuse_params *out)
{
    const pbfcl_solver_settings *s = &scene->solver;
    memset(out, 0, sizeof *out);
    for (int a = 0; a < 3; a++) {
        out->box_min[a] = scene->domain_min[a];
        out->box_max[a] = scene->domain_max[a];
        out->gravity[a] = g[a];
    }
    out->dt = dt;
    out->radius = scene->particle_radius;
    out->h = s->h_ratio * scene->particle_radius;
    out->lifetime = s->diffuse_lifetime;
    out->ta_min = s->diffuse_ta_min, out->ta_max = s->diffuse_ta_max;
    out->wc_min = s->diffuse_wc_min, out->wc_max = s->diffuse_wc_max;
    out->ke_min = s->diffuse_ke_min, out->ke_max = s->diffuse_ke_max;
    out->k_ta = s->diffuse_k_ta, out->k_wc = s->diffuse_k_wc;
    out->buoyancy = s->diffuse_buoyancy, out->drag = s->diffuse_drag;
    out->spray_below = (pbfcl_uint)s->diffuse_spray_neighbours;
    out->bubble_above = (pbfcl_uint)s->diffuse_bubble_neighbours;
    out->capacity = (pbfcl_uint)capacity;
    out->frame = frame;
}

/* Waits for the last write of the constants (its host copy may be reused after). */
static pbfcl_status diffuse_wait_params(pbfcl_diffuse *d)
{
    if (!d->written_event)
        return PBFCL_OK;
    cl_int err = clWaitForEvents(1, &d->written_event);
    clReleaseEvent(d->written_event);
    d->written_event = NULL;
    PBFCL_CL_CHECK(err);
    return PBFCL_OK;
}

/* Makes params_buf hold d->params before the next kernel: written only when they changed (once
 * per update), without waiting, from a copy kept until the write is done; so the stage does
 * not stall the queue behind the step it follows. */
static pbfcl_status diffuse_write_params(pbfcl_diffuse *d)
{
    d->params.capacity = (pbfcl_uint)d->capacity;
    if (d->written_valid && memcmp(&d->written, &d->params, sizeof d->params) == 0)
        return PBFCL_OK;
    PBFCL_TRY(diffuse_wait_params(d));
    d->written = d->params;
    d->written_valid = false;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(d->cl->queue, d->params_buf, CL_FALSE, 0, sizeof d->written,
                                        &d->written, 0, NULL, &d->written_event));
    d->written_valid = true;
    return PBFCL_OK;
}

static pbfcl_status check_fluid(const pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                const char *stage)
{
    if (f->n > d->fluid_capacity) {
        pbfcl_errorf("%s: %zu fluid particles exceed the %zu the diffuse buffers were made for",
                     stage, f->n, d->fluid_capacity);
        return PBFCL_ERR_CAPACITY;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_diffuse_normals(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                   pbfcl_profile *prof)
{
    PBFCL_TRY(check_fluid(d, f, "diffuse_normals"));
    PBFCL_TRY(diffuse_write_params(d));
    cl_kernel k = d->normals;
    cl_uint n = (cl_uint)f->n;
    DIFFUSE_ARG(k, 0, d->params_buf);
    DIFFUSE_ARG(k, 1, f->pos_buf);
    DIFFUSE_ARG(k, 2, f->neighbor_count_buf);
    DIFFUSE_ARG(k, 3, f->neighbor_buf);
    DIFFUSE_ARG(k, 4, d->normal_buf);
    DIFFUSE_ARG(k, 5, n);
    return pbfcl_cl_launch(d->cl, k, f->n, d->wg, prof, PBFCL_STAGE_DIFFUSE);
}

pbfcl_status pbfcl_diffuse_potentials(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                      pbfcl_profile *prof)
{
    PBFCL_TRY(check_fluid(d, f, "diffuse_potentials"));
    PBFCL_TRY(diffuse_write_params(d));
    cl_kernel k = d->potentials;
    cl_uint n = (cl_uint)f->n, offset = (cl_uint)d->count;
    DIFFUSE_ARG(k, 0, d->params_buf);
    DIFFUSE_ARG(k, 1, f->pos_buf);
    DIFFUSE_ARG(k, 2, f->vel_buf);
    DIFFUSE_ARG(k, 3, f->neighbor_count_buf);
    DIFFUSE_ARG(k, 4, f->neighbor_buf);
    DIFFUSE_ARG(k, 5, d->normal_buf);
    DIFFUSE_ARG(k, 6, d->potential_buf);
    DIFFUSE_ARG(k, 7, d->flags_buf);
    DIFFUSE_ARG(k, 8, n);
    DIFFUSE_ARG(k, 9, offset);
    return pbfcl_cl_launch(d->cl, k, f->n, d->wg, prof, PBFCL_STAGE_DIFFUSE);
}

pbfcl_status pbfcl_diffuse_advect(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                  pbfcl_profile *prof)
{
    PBFCL_TRY(diffuse_write_params(d));
    cl_kernel k = d->advect;
    cl_uint count = (cl_uint)d->count;
    DIFFUSE_ARG(k, 0, d->params_buf);
    DIFFUSE_ARG(k, 1, f->grid_params_buf);
    DIFFUSE_ARG(k, 2, f->cell_start_buf);
    DIFFUSE_ARG(k, 3, f->cell_end_buf);
    DIFFUSE_ARG(k, 4, f->pos_buf);
    DIFFUSE_ARG(k, 5, f->vel_buf);
    DIFFUSE_ARG(k, 6, d->pos_buf[d->cur]);
    DIFFUSE_ARG(k, 7, d->vel_buf[d->cur]);
    DIFFUSE_ARG(k, 8, d->flags_buf);
    DIFFUSE_ARG(k, 9, count);
    return pbfcl_cl_launch(d->cl, k, d->count, d->wg, prof, PBFCL_STAGE_DIFFUSE);
}

pbfcl_status pbfcl_diffuse_compact(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                   pbfcl_profile *prof)
{
    PBFCL_TRY(check_fluid(d, f, "diffuse_compact"));
    size_t entries = d->count + f->n;
    if (entries == 0)
        return PBFCL_OK;
    PBFCL_TRY(diffuse_write_params(d));
    PBFCL_TRY(pbfcl_scan_exclusive(&d->scan, d->flags_buf, d->offset_buf, entries, prof,
                                   PBFCL_STAGE_DIFFUSE));
    cl_kernel k = d->compact;
    cl_uint count = (cl_uint)d->count, n = (cl_uint)f->n;
    int next = 1 - d->cur;
    DIFFUSE_ARG(k, 0, d->params_buf);
    DIFFUSE_ARG(k, 1, d->pos_buf[d->cur]);
    DIFFUSE_ARG(k, 2, d->vel_buf[d->cur]);
    DIFFUSE_ARG(k, 3, d->flags_buf);
    DIFFUSE_ARG(k, 4, d->offset_buf);
    DIFFUSE_ARG(k, 5, f->pos_buf);
    DIFFUSE_ARG(k, 6, f->vel_buf);
    DIFFUSE_ARG(k, 7, f->neighbor_count_buf);
    DIFFUSE_ARG(k, 8, d->pos_buf[next]);
    DIFFUSE_ARG(k, 9, d->vel_buf[next]);
    DIFFUSE_ARG(k, 10, d->total_buf);
    DIFFUSE_ARG(k, 11, count);
    DIFFUSE_ARG(k, 12, n);
    PBFCL_TRY(pbfcl_cl_launch(d->cl, k, entries, d->wg, prof, PBFCL_STAGE_DIFFUSE));
    cl_uint total = 0;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(d->cl->queue, d->total_buf, CL_TRUE, 0, sizeof total, &total,
                                       0, NULL, NULL));
    size_t kept = total < d->capacity ? total : d->capacity;
    d->dropped += total - kept;
    d->count = kept;
    d->cur = next;
    return PBFCL_OK;
}

pbfcl_status pbfcl_diffuse_update(pbfcl_diffuse *d, const pbfcl_diffuse_fluid *f,
                                  pbfcl_profile *prof)
{
    PBFCL_TRY(pbfcl_diffuse_normals(d, f, prof));
    PBFCL_TRY(pbfcl_diffuse_potentials(d, f, prof));
    PBFCL_TRY(pbfcl_diffuse_advect(d, f, prof));
    return pbfcl_diffuse_compact(d, f, prof);
}

pbfcl_status pbfcl_diffuse_write(pbfcl_diffuse *d, const float *pos4, const float *vel4,
                                 size_t count)
{
    if (count > d->capacity) {
        pbfcl_errorf("diffuse particles: %zu exceed the capacity of %zu", count, d->capacity);
        return PBFCL_ERR_CAPACITY;
    }
    if (count) {
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(d->cl->queue, d->pos_buf[d->cur], CL_TRUE, 0,
                                            count * 16, pos4, 0, NULL, NULL));
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(d->cl->queue, d->vel_buf[d->cur], CL_TRUE, 0,
                                            count * 16, vel4, 0, NULL, NULL));
    }
    d->count = count;
    return PBFCL_OK;
}

pbfcl_status pbfcl_diffuse_read(pbfcl_diffuse *d, float *pos4, float *vel4)
{
    if (d->count && pos4)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(d->cl->queue, d->pos_buf[d->cur], CL_TRUE, 0,
                                           d->count * 16, pos4, 0, NULL, NULL));
    if (d->count && vel4)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(d->cl->queue, d->vel_buf[d->cur], CL_TRUE, 0,
                                           d->count * 16, vel4, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_diffuse_read_fluid(pbfcl_diffuse *d, size_t n, float *normal4, float *potential4)
{
    if (n && normal4)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(d->cl->queue, d->normal_buf, CL_TRUE, 0, n * 16, normal4,
                                           0, NULL, NULL));
    if (n && potential4)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(d->cl->queue, d->potential_buf, CL_TRUE, 0, n * 16,
                                           potential4, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_diffuse_read_flags(pbfcl_diffuse *d, size_t entries, unsigned *flags)
{
    if (entries)
        PBFCL_CL_CHECK(clEnqueueReadBuffer(d->cl->queue, d->flags_buf, CL_TRUE, 0, entries * 4,
                                           flags, 0, NULL, NULL));
    return PBFCL_OK;
}
