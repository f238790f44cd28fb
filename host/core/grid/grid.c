/* Neighbour search on the Morton-ordered uniform grid: buffers and kernels of the grid
 * module and the host wrappers of its stages (hash, sort, reorder, cells, neighbours).
 * The cell-table clearing scheme is described at pbfcl_grid_clear_cells and in
 * docs/ALGORITHM.md, "Cell ranges". */
#include "grid/grid.h"
#include "runtime/build_options.h"
#include "runtime/programs.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Preferred work-group size; lowered to what the device and kernels allow. */
#define GRID_WG_PREFERRED 256

/* Work-group size of the neighbours kernel (its local list stage is sized for it): 64 was
 * fastest on an H200 at 1M and 4M particles (32 and 128 are 4-5 % slower). */
#define GRID_NB_WG 64

static pbfcl_status check_params(const pbfcl_grid_params *p, size_t capacity,
                                 unsigned max_neighbors)
{
    if (p->grid_bits < 1 || p->grid_bits > 10) {
        pbfcl_errorf("grid bits %u is out of range; use 1..10 (cells per axis = 2^bits)",
                     p->grid_bits);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!(p->cell_size > 0.0f) || !isfinite(p->cell_size)) {
        pbfcl_errorf("grid cell size %g is not a positive finite number", (double)p->cell_size);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (max_neighbors < 1) {
        pbfcl_errorf("max neighbours is 0; the neighbour lists need at least 1 entry");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if ((unsigned long long)capacity * max_neighbors > UINT_MAX) {
        pbfcl_errorf("%zu particles x %u neighbours exceed the 2^32 entries a neighbour list "
                     "index can address; use fewer particles or a smaller max neighbours",
                     capacity, max_neighbors);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

unsigned long long pbfcl_grid_bytes_needed(size_t capacity, unsigned max_neighbors,
                                           unsigned grid_bits)
{
    const unsigned long long own = 5, sort = 4; /* uints per particle, lists aside */
    return capacity * 4ull * (own + sort + max_neighbors) + (8ull << (3 * grid_bits)) +
           4ull * pbfcl_grid_moved_regions(grid_bits);
}

size_t pbfcl_grid_moved_regions(unsigned grid_bits)
{
    unsigned level = grid_bits > PBFCL_MOVED_LEVEL ? grid_bits - PBFCL_MOVED_LEVEL : 0;
    return (size_t)1 << (3 * level);
}

/* Checks that the cell tables and per-particle buffers fit before allocating anything. */
static pbfcl_status check_grid_memory(const pbfcl_grid *g)
{
    unsigned long long cells = 1ull << (3 * g->params.grid_bits);
    unsigned long long table = cells * sizeof(pbfcl_uint);
    unsigned long long lists = (unsigned long long)g->capacity * g->max_neighbors * 4;
    unsigned long long total =
        pbfcl_grid_bytes_needed(g->capacity, g->max_neighbors, g->params.grid_bits);
    char what[160];
    snprintf(what, sizeof what,
             "the neighbour grid (grid bits %u: 2 cell tables of %llu bytes, %llu bytes in all)",
             g->params.grid_bits, table, total);
    return pbfcl_cl_check_memory(g->cl, total, table > lists ? table : lists, what);
}

void pbfcl_grid_build_config(const pbfcl_device_info *dev, unsigned grid_bits,
                             unsigned max_neighbors, pbfcl_build_config *cfg)
{
    size_t wg = dev->max_wg < GRID_WG_PREFERRED ? dev->max_wg : GRID_WG_PREFERRED;
    memset(cfg, 0, sizeof *cfg);
    cfg->wg_size = (unsigned)wg;
    cfg->grid_bits = grid_bits;
    cfg->max_neighbors = max_neighbors;
    cfg->nb_wg_size = (unsigned)(wg < GRID_NB_WG ? wg : GRID_NB_WG);
}

static pbfcl_status build_kernels(pbfcl_grid *g)
{
    pbfcl_build_config cfg;
    pbfcl_grid_build_config(&g->cl->dev, g->params.grid_bits, g->max_neighbors, &cfg);
    size_t wg = cfg.wg_size, nb_wg = cfg.nb_wg_size;
    char options[512];
    if (pbfcl_build_options(&cfg, options, sizeof options) < 0) {
        pbfcl_errorf("grid kernel build options do not fit in %zu bytes", sizeof options);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_GRID);
    PBFCL_TRY(pbfcl_cl_build(g->cl, desc->files, desc->nfiles, options, &g->program));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "hash", &g->hash));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "reorder", &g->reorder));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "reorder_uint", &g->reorder_uint));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "reorder_solids", &g->reorder_solids));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "cells_clear", &g->cells_clear));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "cells", &g->cells));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "neighbours", &g->neighbours));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "neighbours_solids", &g->neighbours_solids));
    PBFCL_TRY(pbfcl_cl_kernel(g->program, "cells_init", &g->cells_init));
    cl_kernel all[] = {g->hash,       g->reorder,     g->reorder_uint,   g->cells,
                       g->cells_init, g->cells_clear, g->reorder_solids, g->neighbours_solids};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        size_t max = pbfcl_cl_kernel_max_wg(g->cl, all[k]);
        wg = max < wg ? max : wg;
    }
    g->wg = wg;
    size_t nb_max = pbfcl_cl_kernel_max_wg(g->cl, g->neighbours);
    g->nb_wg = nb_max < nb_wg ? nb_max : nb_wg;
    return PBFCL_OK;
}

static pbfcl_status set_args(cl_kernel k, int count, const size_t *sizes, const void *const *vals);
static pbfcl_status launch(pbfcl_grid *g, cl_kernel k, const char *name, size_t n,
                           pbfcl_profile *prof, pbfcl_stage stage);

/* Allocates the buffers; the cell tables start EMPTY and the overflow counter 0. */
static pbfcl_status create_buffers(pbfcl_grid *g)
{
    pbfcl_cl *cl = g->cl;
    size_t cells = (size_t)1 << (3 * g->params.grid_bits);
    size_t cap = g->capacity;
    PBFCL_TRY(
        pbfcl_cl_buffer(cl, CL_MEM_READ_ONLY, sizeof g->params, "grid params", &g->params_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "cell ids", &g->cell_id_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "sort index", &g->index_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "cell starts", &g->cell_start_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cells * 4, "cell ends", &g->cell_end_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "neighbour counts",
                              &g->neighbor_count_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * g->max_neighbors * 4, "neighbour lists",
                              &g->neighbor_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "near neighbour counts",
                              &g->neighbor_near_buf));
    PBFCL_TRY(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, 4, "neighbour overflow", &g->overflow_buf));
    PBFCL_TRY(
        pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, cap * 4, "near solid stamps", &g->near_solid_buf));
    g->moved_regions = pbfcl_grid_moved_regions(g->params.grid_bits);
    PBFCL_TRY(
        pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, g->moved_regions * 4, "moved flags", &g->moved_buf));
    /* every region moved: the contacts read the whole lists until a search and its first lambda
     * (which clears the flags); a host write, as Oclgrind's uninitialised-value check does not
     * count a clEnqueueFillBuffer */
    pbfcl_uint *all_moved = malloc(g->moved_regions * 4);
    if (!all_moved)
        return PBFCL_ERR_OUT_OF_MEMORY;
    memset(all_moved, 0xff, g->moved_regions * 4);
    cl_int werr = clEnqueueWriteBuffer(cl->queue, g->moved_buf, CL_TRUE, 0, g->moved_regions * 4,
                                       all_moved, 0, NULL, NULL);
    free(all_moved);
    PBFCL_CL_CHECK(werr);
    const pbfcl_uint zero = 0;
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(cl->queue, g->params_buf, CL_TRUE, 0, sizeof g->params,
                                        &g->params, 0, NULL, NULL));
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(cl->queue, g->overflow_buf, CL_TRUE, 0, sizeof zero, &zero,
                                        0, NULL, NULL));
    /* no neighbours before the first search (the stats read the counts at any time) */
    pbfcl_uint *zeros = calloc(cap ? cap : 1, sizeof *zeros);
    if (!zeros)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = clEnqueueWriteBuffer(cl->queue, g->neighbor_count_buf, CL_TRUE, 0, cap * 4, zeros,
                                      0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(cl->queue, g->neighbor_near_buf, CL_TRUE, 0, cap * 4, zeros, 0,
                                   NULL, NULL);
    if (err == CL_SUCCESS) /* cell 0 (in the grid) before the first search: the moved flags */
        err = clEnqueueWriteBuffer(cl->queue, g->cell_id_buf, CL_TRUE, 0, cap * 4, zeros, 0, NULL,
                                   NULL);
    if (err == CL_SUCCESS) /* stamp 0: never a search's */
        err = clEnqueueWriteBuffer(cl->queue, g->near_solid_buf, CL_TRUE, 0, cap * 4, zeros, 0,
                                   NULL, NULL);
    free(zeros);
    PBFCL_CL_CHECK(err);
    /* the buffers only kernels write, zeros from the host: under Oclgrind a buffer number reused
     * from a smaller buffer keeps the old record, and kernel writes past it would read as
     * uninitialised (ALGORITHM.md, "Oclgrind and reused buffers") */
    PBFCL_TRY(pbfcl_cl_write_zeros(cl, g->index_buf, cap * 4));
    PBFCL_TRY(pbfcl_cl_write_zeros(cl, g->neighbor_buf, cap * g->max_neighbors * 4));
    PBFCL_TRY(pbfcl_cl_write_zeros(cl, g->cell_start_buf, cells * 4)); /* cells_init's, below */
    PBFCL_TRY(pbfcl_cl_write_zeros(cl, g->cell_end_buf, cells * 4));
    cl_uint num_cells = (cl_uint)cells;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof num_cells};
    const void *vals[] = {&g->cell_start_buf, &g->cell_end_buf, &num_cells};
    PBFCL_TRY(set_args(g->cells_init, 3, sizes, vals));
    PBFCL_TRY(launch(g, g->cells_init, "cells_init", cells, NULL, PBFCL_STAGE_OTHER));
    PBFCL_CL_CHECK(clFinish(cl->queue));
    return PBFCL_OK;
}

pbfcl_status pbfcl_grid_create(pbfcl_grid *g, pbfcl_cl *cl, const pbfcl_grid_params *params,
                               size_t capacity, unsigned max_neighbors)
{
    memset(g, 0, sizeof *g);
    PBFCL_TRY(check_params(params, capacity, max_neighbors));
    g->cl = cl;
    g->params = *params;
    g->params.inv_cell_size = 1.0f / params->cell_size;
    g->params.pad0 = 0;
    g->params.origin[3] = 0.0f;
    g->capacity = capacity;
    g->max_neighbors = max_neighbors;
    pbfcl_status s = check_grid_memory(g);
    if (s == PBFCL_OK)
        s = build_kernels(g);
    if (s == PBFCL_OK)
        s = create_buffers(g);
    if (s == PBFCL_OK)
        s = pbfcl_radix_sort_create(&g->sort, cl, capacity);
    if (s != PBFCL_OK)
        pbfcl_grid_destroy(g);
    return s;
}

void pbfcl_grid_destroy(pbfcl_grid *g)
{
    if (!g)
        return;
    pbfcl_radix_sort_destroy(&g->sort);
    cl_mem *bufs[] = {&g->params_buf,     &g->cell_id_buf,  &g->index_buf,
                      &g->cell_start_buf, &g->cell_end_buf, &g->neighbor_count_buf,
                      &g->neighbor_buf,   &g->overflow_buf, &g->neighbor_near_buf,
                      &g->near_solid_buf, &g->moved_buf};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        pbfcl_cl_release_buffer(bufs[k]);
    cl_kernel *kernels[] = {&g->hash,        &g->reorder,           &g->reorder_uint,
                            &g->cells_clear, &g->neighbours,        &g->cells_init,
                            &g->cells,       &g->neighbours_solids, &g->reorder_solids};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        if (*kernels[k])
            clReleaseKernel(*kernels[k]);
        *kernels[k] = NULL;
    }
    if (g->program)
        clReleaseProgram(g->program);
    g->program = NULL;
}

static pbfcl_status check_n(const pbfcl_grid *g, size_t n, const char *stage)
{
    if (n > g->capacity) {
        pbfcl_errorf("grid %s: %zu particles exceed the grid's capacity of %zu; create the grid "
                     "with a larger capacity",
                     stage, n, g->capacity);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

/* Sets kernel arguments in order from a list of (size, pointer) pairs. */
static pbfcl_status set_args(cl_kernel k, int count, const size_t *sizes, const void *const *vals)
{
    for (int a = 0; a < count; a++)
        PBFCL_CL_CHECK(clSetKernelArg(k, (cl_uint)a, sizes[a], vals[a]));
    return PBFCL_OK;
}

/* Checks the launch against the device and runs kernel over n work-items. */
static pbfcl_status launch(pbfcl_grid *g, cl_kernel k, const char *name, size_t n,
                           pbfcl_profile *prof, pbfcl_stage stage)
{
    if (n == 0)
        return PBFCL_OK;
    size_t wg = k == g->neighbours ? g->nb_wg : g->wg;
    PBFCL_TRY(pbfcl_cl_check_launch(g->cl, k, name, wg, 0));
    return pbfcl_cl_launch(g->cl, k, n, wg, prof, stage);
}

/* Cell ranges are cleared lazily, never the whole 8^grid_bits table per step: the table
 * starts EMPTY, pbfcl_grid_cells records n in last_n, and the sorted cell ids it read stay
 * in cell_id_buf until the next pbfcl_grid_hash overwrites them. So the hash first runs
 * this per-particle pass over those ids, which sets exactly the entries the last cells
 * pass wrote back to EMPTY (one writer per cell: the first particle of its run). */
pbfcl_status pbfcl_grid_clear_cells(pbfcl_grid *g, pbfcl_profile *prof)
{
    size_t n = g->last_n;
    if (n == 0)
        return PBFCL_OK;
    cl_uint un = (cl_uint)n;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof un};
    const void *vals[] = {&g->cell_id_buf, &g->cell_start_buf, &g->cell_end_buf, &un};
    PBFCL_TRY(set_args(g->cells_clear, 4, sizes, vals));
    PBFCL_TRY(launch(g, g->cells_clear, "cells_clear", n, prof, PBFCL_STAGE_CELLS));
    g->last_n = 0;
    return PBFCL_OK;
}

pbfcl_status pbfcl_grid_hash(pbfcl_grid *g, cl_mem pos_buf, size_t n, pbfcl_profile *prof)
{
    PBFCL_TRY(check_n(g, n, "hash"));
    PBFCL_TRY(pbfcl_grid_clear_cells(g, prof));
    cl_uint un = (cl_uint)n;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                            sizeof un};
    const void *vals[] = {&g->params_buf, &pos_buf, &g->cell_id_buf, &g->index_buf, &un};
    PBFCL_TRY(set_args(g->hash, 5, sizes, vals));
    return launch(g, g->hash, "hash", n, prof, PBFCL_STAGE_HASH);
}

pbfcl_status pbfcl_grid_sort(pbfcl_grid *g, size_t n, pbfcl_profile *prof)
{
    PBFCL_TRY(check_n(g, n, "sort"));
    return pbfcl_radix_sort_pairs(&g->sort, g->cell_id_buf, g->index_buf, n,
                                  3 * g->params.grid_bits, prof, PBFCL_STAGE_SORT);
}

pbfcl_status pbfcl_grid_reorder(pbfcl_grid *g, cl_mem src_buf, cl_mem dst_buf, size_t n,
                                pbfcl_profile *prof)
{
    PBFCL_TRY(check_n(g, n, "reorder"));
    if (src_buf == dst_buf) {
        pbfcl_errorf("grid reorder: source and destination are the same buffer; reorder into "
                     "a second buffer");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cl_uint un = (cl_uint)n;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof un};
    const void *vals[] = {&g->index_buf, &src_buf, &dst_buf, &un};
    PBFCL_TRY(set_args(g->reorder, 4, sizes, vals));
    return launch(g, g->reorder, "reorder", n, prof, PBFCL_STAGE_REORDER);
}

pbfcl_status pbfcl_grid_reorder_uint(pbfcl_grid *g, cl_mem src_buf, cl_mem dst_buf, size_t n,
                                     pbfcl_profile *prof)
{
    PBFCL_TRY(check_n(g, n, "reorder_uint"));
    if (src_buf == dst_buf) {
        pbfcl_errorf("grid reorder_uint: source and destination are the same buffer; reorder "
                     "into a second buffer");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cl_uint un = (cl_uint)n;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof un};
    const void *vals[] = {&g->index_buf, &src_buf, &dst_buf, &un};
    PBFCL_TRY(set_args(g->reorder_uint, 4, sizes, vals));
    return launch(g, g->reorder_uint, "reorder_uint", n, prof, PBFCL_STAGE_REORDER);
}

pbfcl_status pbfcl_grid_reorder_solids(pbfcl_grid *g, const cl_mem src[3], const cl_mem dst[3],
                                       cl_mem slot_buf, size_t n, pbfcl_profile *prof)
{
    PBFCL_TRY(check_n(g, n, "reorder_solids"));
    for (int k = 0; k < 3; k++)
        if (src[k] == dst[k]) {
            pbfcl_errorf("grid reorder_solids: source and destination %d are the same buffer; "
                         "reorder into a second buffer",
                         k);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    cl_uint un = (cl_uint)n, write_slots = slot_buf != NULL;
    cl_mem slot = slot_buf ? slot_buf : dst[0]; /* not written without write_slots */
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {m, m, m, m, m, m, m, m, sizeof write_slots, sizeof un};
    const void *vals[] = {&g->index_buf, &src[0], &dst[0], &src[1],      &dst[1],
                          &src[2],       &dst[2], &slot,   &write_slots, &un};
    PBFCL_TRY(set_args(g->reorder_solids, 10, sizes, vals));
    return launch(g, g->reorder_solids, "reorder_solids", n, prof, PBFCL_STAGE_REORDER);
}

pbfcl_status pbfcl_grid_cells(pbfcl_grid *g, size_t n, pbfcl_profile *prof)
{
    PBFCL_TRY(check_n(g, n, "cells"));
    if (g->last_n != 0) {
        pbfcl_errorf("grid cells: the cell table still holds the ranges of the previous step; "
                     "call pbfcl_grid_hash (or pbfcl_grid_clear_cells) before pbfcl_grid_cells");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cl_uint un = (cl_uint)n;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof un};
    const void *vals[] = {&g->cell_id_buf, &g->cell_start_buf, &g->cell_end_buf, &un};
    PBFCL_TRY(set_args(g->cells, 4, sizes, vals));
    PBFCL_TRY(launch(g, g->cells, "cells", n, prof, PBFCL_STAGE_CELLS));
    g->last_n = n;
    return PBFCL_OK;
}

pbfcl_status pbfcl_grid_neighbours(pbfcl_grid *g, cl_mem sorted_pos_buf, bool solids, size_t n,
                                   float radius, float near_radius, pbfcl_profile *prof)
{
    PBFCL_TRY(check_n(g, n, "neighbours"));
    if (!(radius > 0.0f) || radius > g->params.cell_size) {
        pbfcl_errorf("neighbour radius %g must be > 0 and at most the grid cell size %g; "
                     "fit the grid with a cell size of at least the radius",
                     (double)radius, (double)g->params.cell_size);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (!(near_radius >= 0.0f) || near_radius > radius) {
        pbfcl_errorf("near neighbour radius %g must be between 0 and the neighbour radius %g",
                     (double)near_radius, (double)radius);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cl_uint un = (cl_uint)n;
    cl_float r2 = radius * radius, near2 = near_radius * near_radius;
    cl_kernel k = g->neighbours;
    const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                            sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                            sizeof un,      sizeof r2,      sizeof near2};
    const void *vals[] = {&g->params_buf,
                          &sorted_pos_buf,
                          &g->cell_start_buf,
                          &g->cell_end_buf,
                          &g->neighbor_count_buf,
                          &g->neighbor_buf,
                          &g->neighbor_near_buf,
                          &g->overflow_buf,
                          &un,
                          &r2,
                          &near2};
    PBFCL_TRY(set_args(k, 11, sizes, vals));
    PBFCL_TRY(launch(g, k, "neighbours", n, prof, PBFCL_STAGE_NEIGHBOURS));
    if (!solids)
        return PBFCL_OK;
    k = g->neighbours_solids;
    g->solid_stamp = g->solid_stamp == UINT32_MAX ? 1u : g->solid_stamp + 1u;
    cl_uint stamp = g->solid_stamp;
    const size_t solid_sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                                  sizeof un,      sizeof(cl_mem), sizeof stamp};
    const void *solid_vals[] = {&sorted_pos_buf,
                                &g->neighbor_count_buf,
                                &g->neighbor_buf,
                                &g->neighbor_near_buf,
                                &un,
                                &g->near_solid_buf,
                                &stamp};
    PBFCL_TRY(set_args(k, 7, solid_sizes, solid_vals));
    return launch(g, k, "neighbours_solids", n, prof, PBFCL_STAGE_NEIGHBOURS);
}

pbfcl_status pbfcl_grid_read_overflow(pbfcl_grid *g, unsigned *count)
{
    cl_uint v = 0;
    const cl_uint zero = 0;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(g->cl->queue, g->overflow_buf, CL_TRUE, 0, sizeof v, &v, 0,
                                       NULL, NULL));
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(g->cl->queue, g->overflow_buf, CL_TRUE, 0, sizeof zero,
                                        &zero, 0, NULL, NULL));
    *count = v;
    return PBFCL_OK;
}
