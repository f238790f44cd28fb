/* Split-and-compress (Goswami et al. 2010, seed 002) on the sorted Morton grid: cells holding
 * more than K particles are split into blocks of at most K, the blocks of the non-empty cells
 * are compacted into one list with the prefix scan, and one work-group per block computes
 * the SPH density of its particles with the 27 neighbouring cells staged in local memory.
 * Stages: split_count, split_scan, split_write, split_density (docs/ALGORITHM.md); each
 * records its events under the profile's neighbours stage (`pbfcl bench-split` times them
 * one by one). Not used by the solver: see docs/PERFORMANCE.md, "Split-and-compress". */
#ifndef PBFCL_SPLIT_COMPRESS_H
#define PBFCL_SPLIT_COMPRESS_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "grid/grid.h"
#include "grid/scan.h"

/* What to build; a zeroed descriptor gives the defaults. */
typedef struct pbfcl_split_compress_desc {
    unsigned grid_bits;   /* GRID_BITS of the grid whose cells are split (1..10) */
    size_t capacity;      /* most particles */
    unsigned block_size;  /* K: most particles per block, 1..wg (0: the work-group size) */
    size_t wg_limit;      /* largest work-group size to use (0: the module's preference) */
    unsigned stage_limit; /* most float4 staged per chunk (0: what local memory allows,
                             up to 512); tests use small ones to reach several chunks */
} pbfcl_split_compress_desc;

typedef struct pbfcl_split_compress {
    pbfcl_cl *cl;
    pbfcl_scan scan;
    cl_program program;
    cl_kernel split_count, split_write, split_density, list_density;
    unsigned grid_bits;
    size_t capacity;
    size_t wg;              /* work-group size of every kernel (split_density: one block) */
    unsigned block_size;    /* K <= wg */
    unsigned stage_size;    /* float4 entries of split_density's local stage */
    size_t density_local;   /* local memory bytes split_density needs (checked at launch) */
    cl_mem blocks_buf;      /* per sorted particle: blocks its cell opens there, else 0 */
    cl_mem offset_buf;      /* per sorted particle: exclusive scan of blocks */
    cl_mem block_list_buf;  /* per block: uint4 (cell id, first sorted index, count, 0) */
    cl_mem block_total_buf; /* one uint: the number of blocks */
} pbfcl_split_compress;

/* The build options pbfcl_split_compress_create uses on a device with these limits (max_wg)
 * for a grid of grid_bits; `pbfcl kernel-builds` lists them. */
void pbfcl_split_compress_build_config(const pbfcl_device_info *dev, unsigned grid_bits,
                                       pbfcl_build_config *cfg);

/* Builds the kernels (and a scan) and allocates the buffers for up to desc->capacity
 * particles; the work-group size and local stage come from device queries. */
pbfcl_status pbfcl_split_compress_create(pbfcl_split_compress *sc, pbfcl_cl *cl,
                                         const pbfcl_split_compress_desc *desc);

/* Releases everything; accepts NULL and a zeroed or half-built struct. */
void pbfcl_split_compress_destroy(pbfcl_split_compress *sc);

/* split_count: per sorted particle, ceil(count / K) at the first particle of each cell, else
 * 0; reads the grid's sorted cell ids and cell ends (after pbfcl_grid_cells over n). */
pbfcl_status pbfcl_split_count(pbfcl_split_compress *sc, const pbfcl_grid *g, size_t n,
                               pbfcl_profile *prof);

/* split_scan: the block offsets, an exclusive prefix sum of split_count's output. */
pbfcl_status pbfcl_split_scan(pbfcl_split_compress *sc, size_t n, pbfcl_profile *prof);

/* split_write: the compact block list (cell, first particle, count <= K), cells in sorted
 * order and each cell's blocks in order, and the number of blocks on the device. */
pbfcl_status pbfcl_split_write(pbfcl_split_compress *sc, const pbfcl_grid *g, size_t n,
                               pbfcl_profile *prof);

/* Reads the number of blocks split_write made (a blocking 4-byte read). */
pbfcl_status pbfcl_split_read_blocks(pbfcl_split_compress *sc, size_t *blocks);

/* split_density: for every particle of the first `blocks` blocks (sorted order, positions in
 * sorted_pos_buf), density[i] = mass sum_j W_poly6(|x_i - x_j|, h) over every j within h,
 * itself included, and neighbor_count[i] = the other particles within h. h must not exceed
 * the grid's cell size. */
pbfcl_status pbfcl_split_density(pbfcl_split_compress *sc, const pbfcl_grid *g,
                                 cl_mem sorted_pos_buf, size_t blocks, float h, float mass,
                                 cl_mem density_buf, cl_mem neighbor_count_buf,
                                 pbfcl_profile *prof);

/* list_density: the same density and neighbour count over the grid's neighbour lists (after
 * pbfcl_grid_neighbours with radius h): the path split_density is compared with. */
pbfcl_status pbfcl_split_list_density(pbfcl_split_compress *sc, const pbfcl_grid *g,
                                      cl_mem sorted_pos_buf, size_t n, float h, float mass,
                                      cl_mem density_buf, cl_mem neighbor_count_buf,
                                      pbfcl_profile *prof);

#endif
