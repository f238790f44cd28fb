/* Neighbour search on a uniform grid ordered by Morton (Z-order) codes (seeds 000 and
 * 002): hash each particle to its cell, sort by cell id, reorder particle buffers,
 * find each non-empty cell's range, and list every neighbour within the radius by
 * visiting the 27 surrounding cells through their Morton codes. */
#ifndef PBFCL_GRID_H
#define PBFCL_GRID_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "pbfcl_shared.h"
#include "grid/radix_sort.h"

typedef struct pbfcl_grid {
    pbfcl_cl *cl;
    pbfcl_radix_sort sort;
    cl_program program;
    cl_kernel hash, reorder, cells_clear, cells, neighbours, neighbours_solids;
    cl_kernel reorder_uint;   /* reorder of a uint buffer (particle ids) */
    cl_kernel reorder_solids; /* ids, phases and inverse masses at once, and the bodies' slots */
    cl_kernel cells_init;     /* fills the cell tables with EMPTY once, at creation */
    pbfcl_grid_params params;
    size_t wg;                 /* work-group size of every kernel but neighbours */
    size_t nb_wg;              /* work-group size of neighbours (<= its -DNB_WG_SIZE) */
    size_t capacity;           /* particles */
    unsigned max_neighbors;    /* neighbour list entries per particle */
    cl_mem params_buf;         /* pbfcl_grid_params, __constant in the kernels */
    cl_mem cell_id_buf;        /* per particle: Morton cell id; sorted by pbfcl_grid_sort */
    cl_mem index_buf;          /* per particle: original index; sorted along with cell ids */
    cl_mem cell_start_buf;     /* per cell (1 << 3*grid_bits): first sorted index or EMPTY */
    cl_mem cell_end_buf;       /* per cell: one past the last sorted index */
    cl_mem neighbor_count_buf; /* per particle: number of neighbours listed (<= max) */
    cl_mem neighbor_buf;       /* neighbour k of particle i at [k * n + i] (sorted indices) */
    cl_mem neighbor_near_buf;  /* per particle: the first entries, those within near radius */
    cl_mem overflow_buf;       /* one uint: particles that had more than max neighbours */
    /* per particle (sorted order of the last search with solids): the search's solid_stamp
     * for a fluid particle that a solid lists (a solid may be among its neighbours); anything
     * else for the others (pbfcl_grid_neighbours with solids) */
    cl_mem near_solid_buf;
    cl_uint solid_stamp; /* the last search with solids' number (from 1; 0 marks nothing) */
    /* per region of the grid (pbfcl_grid_moved_regions): the solver's moved flags, bits that a
     * particle near it moved since the search (cl/pbf/pbf.cl, pbf_report_move); all set at
     * creation */
    cl_mem moved_buf;
    size_t moved_regions;
    size_t last_n; /* particles whose cells are in the cell table (to clear) */
} pbfcl_grid;

/* Morton code of integer cell coordinates (each below 1024): bits interleaved x, y, z with
 * x in the lowest bit. */
pbfcl_uint pbfcl_morton_encode(pbfcl_uint x, pbfcl_uint y, pbfcl_uint z);

/* The inverse of pbfcl_morton_encode. */
void pbfcl_morton_decode(pbfcl_uint code, pbfcl_uint *x, pbfcl_uint *y, pbfcl_uint *z);

/* Fills grid params covering [lo, hi] with cells of edge >= cell_size; fails with a message
 * if that needs more than 1024 cells per axis. */
pbfcl_status pbfcl_grid_params_fit(const float lo[3], const float hi[3], float cell_size,
                                   pbfcl_grid_params *out);

/* The build options pbfcl_grid_create uses on a device with these limits (max_wg);
 * `pbfcl kernel-builds` lists them. */
void pbfcl_grid_build_config(const pbfcl_device_info *dev, unsigned grid_bits,
                             unsigned max_neighbors, pbfcl_build_config *cfg);

/* The device memory a grid of capacity particles, max_neighbors list entries each and
 * 2^(3 grid_bits) cells takes: its per-particle buffers (cell ids, sort index, neighbour counts,
 * near counts, near-solid stamps, the lists), the radix sort's ping-pong keys and values, the
 * cell tables and the moved flags (the sort's histogram table is left out: a few words per
 * tile). */
unsigned long long pbfcl_grid_bytes_needed(size_t capacity, unsigned max_neighbors,
                                           unsigned grid_bits);

/* The regions of 2^PBFCL_MOVED_LEVEL cells along each axis in a grid of 2^grid_bits (at least
 * one): the moved flags' (moved_buf). */
size_t pbfcl_grid_moved_regions(unsigned grid_bits);

/* Builds the kernels and allocates buffers for up to capacity particles, checking device
 * memory first. */
pbfcl_status pbfcl_grid_create(pbfcl_grid *g, pbfcl_cl *cl, const pbfcl_grid_params *params,
                               size_t capacity, unsigned max_neighbors);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_grid_destroy(pbfcl_grid *g);

/* hash: clears the previous cell ranges, then cell_id[i] = Morton code of the cell holding
 * pos[i] (clamped into the grid), index[i] = i. pos_buf holds float4 (x, y, z, unused). */
pbfcl_status pbfcl_grid_hash(pbfcl_grid *g, cl_mem pos_buf, size_t n, pbfcl_profile *prof);

/* sort: sorts (cell_id, index) by cell id over the 3 * grid_bits bits in use. */
pbfcl_status pbfcl_grid_sort(pbfcl_grid *g, size_t n, pbfcl_profile *prof);

/* reorder: dst[i] = src[index[i]] for a float4 buffer. */
pbfcl_status pbfcl_grid_reorder(pbfcl_grid *g, cl_mem src_buf, cl_mem dst_buf, size_t n,
                                pbfcl_profile *prof);

/* reorder_uint: dst[i] = src[index[i]] for a uint buffer (e.g. the particles' ids). */
pbfcl_status pbfcl_grid_reorder_uint(pbfcl_grid *g, cl_mem src_buf, cl_mem dst_buf, size_t n,
                                     pbfcl_profile *prof);

/* The three words a particle carries with solids, reordered by one gather: dst[i] = src[index[i]]
 * for its id, phase and inverse mass (src[0..2] into dst[0..2]); with slot_buf (not NULL) also
 * slot[id] = i for every sorted particle i, the id-to-slot map (sim/particles.h, slots). */
pbfcl_status pbfcl_grid_reorder_solids(pbfcl_grid *g, const cl_mem src[3], const cl_mem dst[3],
                                       cl_mem slot_buf, size_t n, pbfcl_profile *prof);

/* Sets the cell table entries the last pbfcl_grid_cells wrote back to EMPTY, reading the
 * sorted cell ids still in cell_id_buf; pbfcl_grid_hash calls it before overwriting them. */
pbfcl_status pbfcl_grid_clear_cells(pbfcl_grid *g, pbfcl_profile *prof);

/* cells: writes the start and end of every non-empty cell from the sorted cell ids (the
 * entries of the previous call were cleared by pbfcl_grid_hash; fails if they were not). */
pbfcl_status pbfcl_grid_cells(pbfcl_grid *g, size_t n, pbfcl_profile *prof);

/* neighbours: lists for every particle (sorted order, positions in sorted_pos_buf) every
 * other particle within radius (radius <= cell size), up to max_neighbors; those within
 * near_radius (0 <= near_radius <= radius) come first, their number in neighbor_near_buf.
 * With solids, the positions' w hold each particle's phase as a float tag (0 fluid, as
 * cl/pbf/pbf.cl's pbf_phase_tag writes it), and a particle of tag t != 0 (a solid) does not list
 * the other particles of tag t (neighbours_solids, a pass after the search that drops them:
 * up to max_neighbors of every phase are found, and a solid with more counts as an
 * overflow), and the fluid particles a solid lists are marked with a new solid_stamp in
 * near_solid_buf. */
pbfcl_status pbfcl_grid_neighbours(pbfcl_grid *g, cl_mem sorted_pos_buf, bool solids, size_t n,
                                   float radius, float near_radius, pbfcl_profile *prof);

/* Reads and resets the overflow count of the last pbfcl_grid_neighbours calls. */
pbfcl_status pbfcl_grid_read_overflow(pbfcl_grid *g, unsigned *count);

#endif
