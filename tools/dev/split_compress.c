/* Split-and-compress (see split_compress.h): builds cl/dev/split_compress.cl with a work-group
 * size from device queries, sizes split_density's local stage from the device's local memory,
 * and wraps the stages split_count, split_scan (host/core/grid/scan), split_write, split_density
 * and the benchmark's reference list_density. */
#include "split_compress.h"

#include "runtime/programs.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Preferred work-group size (and so the default K): a dam-break cell holds about 8 particles
 * (cells of h = 4r, spacing 2r), served by 8 stripes of 8 work-items each. */
#define SPLIT_WG_PREFERRED 64
/* Most float4 staged per chunk (8 KiB): 27 cells of a fluid at rest hold about 216. */
#define SPLIT_STAGE_PREFERRED 512u

/* Local memory split_density declares itself with work-group size wg: range_start[27],
 * range_off[28], part_rho[wg], part_count[wg]. */
static size_t split_static_local(size_t wg)
{
    return (27 + 28) * sizeof(cl_uint) + wg * (sizeof(cl_float) + sizeof(cl_uint));
}

static void split_config(size_t wg, unsigned grid_bits, pbfcl_build_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
    cfg->grid_bits = grid_bits;
}

/* The work-group size on a device: the preference (or wg_limit) within the device's limit. */
static size_t split_device_wg(const pbfcl_device_info *dev, size_t wg_limit)
{
    size_t wg = wg_limit ? wg_limit : SPLIT_WG_PREFERRED;
    return dev->max_wg < wg ? dev->max_wg : wg;
}

/* The program: the library's shared headers and pbfcl-dev's own kernel file (cl/dev/). */
static const pbfcl_program_desc split_program = {
    "split_compress", {"pbfcl_shared.h", "morton.h", "split_compress.cl"}, 3};

const pbfcl_program_desc *pbfcl_split_compress_program(void)
{
    return &split_program;
}

void pbfcl_split_compress_build_config(const pbfcl_device_info *dev, unsigned grid_bits,
                                       pbfcl_build_config *cfg)
{
    split_config(split_device_wg(dev, 0), grid_bits, cfg);
}

static void split_release_program(pbfcl_split_compress *sc)
{
    cl_kernel *kernels[] = {&sc->split_count, &sc->split_write, &sc->split_density,
                            &sc->list_density};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        if (*kernels[k])
            clReleaseKernel(*kernels[k]);
        *kernels[k] = NULL;
    }
    if (sc->program)
        clReleaseProgram(sc->program);
    sc->program = NULL;
}

static pbfcl_status split_build(pbfcl_split_compress *sc, size_t wg)
{
    pbfcl_build_config cfg;
    split_config(wg, sc->grid_bits, &cfg);
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0) {
        pbfcl_errorf("split-and-compress build options do not fit in %zu bytes", sizeof options);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_cl_build_with(sc->cl, pbfcl_dev_kernels, split_program.files,
                                  split_program.nfiles, options, &sc->program));
    PBFCL_TRY(pbfcl_cl_kernel(sc->program, "split_count", &sc->split_count));
    PBFCL_TRY(pbfcl_cl_kernel(sc->program, "split_write", &sc->split_write));
    PBFCL_TRY(pbfcl_cl_kernel(sc->program, "split_density", &sc->split_density));
    return pbfcl_cl_kernel(sc->program, "list_density", &sc->list_density);
}

/* Builds with the device's work-group size, rebuilding smaller if a built kernel allows less
 * (split_density's WG_SIZE must be its launch size). */
static pbfcl_status split_choose_wg(pbfcl_split_compress *sc, size_t wg_limit)
{
    size_t wg = split_device_wg(&sc->cl->dev, wg_limit);
    for (;;) {
        PBFCL_TRY(split_build(sc, wg));
        size_t kmax = pbfcl_cl_kernel_max_wg(sc->cl, sc->split_density);
        cl_kernel others[] = {sc->split_count, sc->split_write, sc->list_density};
        for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
            size_t m = pbfcl_cl_kernel_max_wg(sc->cl, others[k]);
            kmax = m < kmax ? m : kmax;
        }
        if (wg <= kmax || wg == 1)
            break;
        split_release_program(sc);
        wg = kmax;
    }
    sc->wg = wg;
    return PBFCL_OK;
}

/* K and the local stage from the descriptor and the device's local memory. */
static pbfcl_status split_choose_sizes(pbfcl_split_compress *sc,
                                       const pbfcl_split_compress_desc *desc)
{
    sc->block_size = desc->block_size ? desc->block_size : (unsigned)sc->wg;
    if (sc->block_size > sc->wg) {
        pbfcl_errorf("split-and-compress block size K = %u exceeds the work-group size %zu on %s "
                     "(one work-group serves one block); use K from 1 to %zu",
                     sc->block_size, sc->wg, sc->cl->dev.device_name, sc->wg);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    size_t fixed = split_static_local(sc->wg), local = (size_t)sc->cl->dev.local_mem;
    size_t fit = local > fixed ? (local - fixed) / sizeof(cl_float4) : 0;
    size_t stage = fit < SPLIT_STAGE_PREFERRED ? fit : SPLIT_STAGE_PREFERRED;
    if (desc->stage_limit && desc->stage_limit < stage)
        stage = desc->stage_limit;
    if (stage < 1) {
        pbfcl_errorf("split_density needs %zu bytes of local memory and one float4 of stage, "
                     "but %s has %zu bytes; use a smaller work-group size",
                     fixed, sc->cl->dev.device_name, local);
        return PBFCL_ERR_DEVICE_LIMIT;
    }
    sc->stage_size = (unsigned)stage;
    sc->density_local = fixed + stage * sizeof(cl_float4);
    return PBFCL_OK;
}

static pbfcl_status split_check_desc(const pbfcl_split_compress_desc *desc)
{
    if (desc->grid_bits < 1 || desc->grid_bits > 10) {
        pbfcl_errorf("split-and-compress: grid bits %u is out of range; use 1..10",
                     desc->grid_bits);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (desc->capacity > (size_t)UINT_MAX - 1024u) {
        pbfcl_errorf("split-and-compress: %zu particles exceed what 32-bit indices address; "
                     "use at most %u",
                     desc->capacity, UINT_MAX - 1024u);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

static pbfcl_status split_create_buffers(pbfcl_split_compress *sc)
{
    pbfcl_cl *cl = sc->cl;
    size_t cap = sc->capacity ? sc->capacity : 1;
    char what[128];
    snprintf(what, sizeof what, "split-and-compress buffers for %zu particles", sc->capacity);
    PBFCL_TRY(pbfcl_cl_check_memory(cl, (unsigned long long)cap * 24, cap * 16, what));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "split blocks", &sc->blocks_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "split offsets", &sc->offset_buf));
    PBFCL_TRY(
        pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 16, "split block list", &sc->block_list_buf));
    return pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 4, "split block total", &sc->block_total_buf);
}

pbfcl_status pbfcl_split_compress_create(pbfcl_split_compress *sc, pbfcl_cl *cl,
                                         const pbfcl_split_compress_desc *desc)
{
    memset(sc, 0, sizeof *sc);
    PBFCL_TRY(split_check_desc(desc));
    sc->cl = cl;
    sc->grid_bits = desc->grid_bits;
    sc->capacity = desc->capacity;
    pbfcl_status s = split_choose_wg(sc, desc->wg_limit);
    if (s == PBFCL_OK)
        s = split_choose_sizes(sc, desc);
    if (s == PBFCL_OK)
        s = split_create_buffers(sc);
    if (s == PBFCL_OK)
        s = pbfcl_scan_create(&sc->scan, cl, sc->capacity ? sc->capacity : 1);
    if (s != PBFCL_OK)
        pbfcl_split_compress_destroy(sc);
    return s;
}

void pbfcl_split_compress_destroy(pbfcl_split_compress *sc)
{
    if (!sc)
        return;
    pbfcl_scan_destroy(&sc->scan);
    pbfcl_cl_release_buffer(&sc->blocks_buf);
    pbfcl_cl_release_buffer(&sc->offset_buf);
    pbfcl_cl_release_buffer(&sc->block_list_buf);
    pbfcl_cl_release_buffer(&sc->block_total_buf);
    split_release_program(sc);
}

/* Checks n against the capacity and the grid against the build. */
static pbfcl_status split_check(const pbfcl_split_compress *sc, const pbfcl_grid *g, size_t n,
                                const char *stage)
{
    if (n > sc->capacity || (g && n > g->capacity)) {
        pbfcl_errorf("%s: %zu particles exceed the capacity (split-and-compress %zu, grid %zu); "
                     "create them with a larger capacity",
                     stage, n, sc->capacity, g ? g->capacity : sc->capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (g && g->params.grid_bits != sc->grid_bits) {
        pbfcl_errorf("%s: the grid has %u grid bits but split-and-compress was built for %u; "
                     "create it with the grid's grid_bits",
                     stage, g->params.grid_bits, sc->grid_bits);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* Sets kernel arguments in order from a list of (size, pointer) pairs. */
static pbfcl_status split_set_args(cl_kernel k, int count, const size_t *sizes,
                                   const void *const *vals)
{
    for (int a = 0; a < count; a++)
        PBFCL_CL_CHECK(clSetKernelArg(k, (cl_uint)a, sizes[a], vals[a]));
    return PBFCL_OK;
}

/* Checks the launch against the device and runs k over items work-items. */
static pbfcl_status split_launch(pbfcl_split_compress *sc, cl_kernel k, const char *name,
                                 size_t items, size_t local_bytes, pbfcl_profile *prof)
{
    if (items == 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_cl_check_launch(sc->cl, k, name, sc->wg, local_bytes));
    return pbfcl_cl_launch(sc->cl, k, items, sc->wg, prof, PBFCL_STAGE_NEIGHBOURS);
}

pbfcl_status pbfcl_split_count(pbfcl_split_compress *sc, const pbfcl_grid *g, size_t n,
                               pbfcl_profile *prof)
{
    PBFCL_TRY(split_check(sc, g, n, "split_count"));
    cl_uint un = (cl_uint)n, k = sc->block_size;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof un, sizeof k};
    const void *vals[] = {&g->cell_id_buf, &g->cell_end_buf, &sc->blocks_buf, &un, &k};
    PBFCL_TRY(split_set_args(sc->split_count, 5, sizes, vals));
    return split_launch(sc, sc->split_count, "split_count", n, 0, prof);
}

pbfcl_status pbfcl_split_scan(pbfcl_split_compress *sc, size_t n, pbfcl_profile *prof)
{
    PBFCL_TRY(split_check(sc, NULL, n, "split_scan"));
    return pbfcl_scan_exclusive(&sc->scan, sc->blocks_buf, sc->offset_buf, n, prof,
                                PBFCL_STAGE_NEIGHBOURS);
}

pbfcl_status pbfcl_split_write(pbfcl_split_compress *sc, const pbfcl_grid *g, size_t n,
                               pbfcl_profile *prof)
{
    PBFCL_TRY(split_check(sc, g, n, "split_write"));
    if (n == 0) { /* no work-item to write the total */
        const cl_uint zero = 0;
        PBFCL_CL_CHECK(clEnqueueWriteBuffer(sc->cl->queue, sc->block_total_buf, CL_TRUE, 0,
                                            sizeof zero, &zero, 0, NULL, NULL));
        return PBFCL_OK;
    }
    cl_uint un = (cl_uint)n, k = sc->block_size;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                            sizeof(cl_mem), sizeof(cl_mem), sizeof un,      sizeof k};
    const void *vals[] = {&g->cell_id_buf,
                          &g->cell_end_buf,
                          &sc->blocks_buf,
                          &sc->offset_buf,
                          &sc->block_list_buf,
                          &sc->block_total_buf,
                          &un,
                          &k};
    PBFCL_TRY(split_set_args(sc->split_write, 8, sizes, vals));
    return split_launch(sc, sc->split_write, "split_write", n, 0, prof);
}

pbfcl_status pbfcl_split_read_blocks(pbfcl_split_compress *sc, size_t *blocks)
{
    cl_uint v = 0;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(sc->cl->queue, sc->block_total_buf, CL_TRUE, 0, sizeof v, &v,
                                       0, NULL, NULL));
    *blocks = v;
    return PBFCL_OK;
}

/* coef = m * 315 / (64 pi h^9), in double as the solver's constants; checks h and m. */
static pbfcl_status split_density_coef(const pbfcl_grid *g, float h, float mass, const char *stage,
                                       cl_float *coef)
{
    if (!(h > 0.0f) || h > g->params.cell_size) {
        pbfcl_errorf("%s: kernel radius h = %g must be > 0 and at most the grid cell size %g; "
                     "fit the grid with a cell size of at least h",
                     stage, (double)h, (double)g->params.cell_size);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!(mass > 0.0f) || !isfinite(mass)) {
        pbfcl_errorf("%s: particle mass %g is not a positive finite number", stage, (double)mass);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *coef = (cl_float)(mass * 315.0 / (64.0 * 3.14159265358979323846 * pow(h, 9.0)));
    if (!isfinite(*coef)) {
        pbfcl_errorf("%s: m * 315 / (64 pi h^9) for h = %g overflows a float", stage, (double)h);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_split_density(pbfcl_split_compress *sc, const pbfcl_grid *g,
                                 cl_mem sorted_pos_buf, size_t blocks, float h, float mass,
                                 cl_mem density_buf, cl_mem neighbor_count_buf, pbfcl_profile *prof)
{
    PBFCL_TRY(split_check(sc, g, blocks, "split_density"));
    cl_float coef, h2 = h * h;
    PBFCL_TRY(split_density_coef(g, h, mass, "split_density", &coef));
    cl_uint stage = sc->stage_size;
    const size_t sizes[] = {sizeof(cl_mem),
                            sizeof(cl_mem),
                            sizeof(cl_mem),
                            sizeof(cl_mem),
                            sizeof(cl_mem),
                            sizeof(cl_mem),
                            stage * sizeof(cl_float4),
                            sizeof stage,
                            sizeof h2,
                            sizeof coef};
    const void *vals[] = {&sc->block_list_buf,
                          &sorted_pos_buf,
                          &g->cell_start_buf,
                          &g->cell_end_buf,
                          &density_buf,
                          &neighbor_count_buf,
                          NULL,
                          &stage,
                          &h2,
                          &coef};
    PBFCL_TRY(split_set_args(sc->split_density, 10, sizes, vals));
    return split_launch(sc, sc->split_density, "split_density", blocks * sc->wg, sc->density_local,
                        prof);
}

pbfcl_status pbfcl_split_list_density(pbfcl_split_compress *sc, const pbfcl_grid *g,
                                      cl_mem sorted_pos_buf, size_t n, float h, float mass,
                                      cl_mem density_buf, cl_mem neighbor_count_buf,
                                      pbfcl_profile *prof)
{
    PBFCL_TRY(split_check(sc, g, n, "list_density"));
    cl_float coef, h2 = h * h;
    PBFCL_TRY(split_density_coef(g, h, mass, "list_density", &coef));
    cl_uint un = (cl_uint)n, max = g->max_neighbors;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                            sizeof(cl_mem), sizeof(cl_mem), sizeof un,
                            sizeof max,     sizeof h2,      sizeof coef};
    const void *vals[] = {&sorted_pos_buf,
                          &g->neighbor_count_buf,
                          &g->neighbor_buf,
                          &density_buf,
                          &neighbor_count_buf,
                          &un,
                          &max,
                          &h2,
                          &coef};
    PBFCL_TRY(split_set_args(sc->list_density, 9, sizes, vals));
    return split_launch(sc, sc->list_density, "list_density", n, 0, prof);
}
