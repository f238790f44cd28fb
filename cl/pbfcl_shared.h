/* Definitions shared by the host (C11) and the kernels (OpenCL C 1.2).
 * The host includes this file; the runtime prepends it to every kernel program.
 * Structs passed to kernels use only 4-byte scalars, with explicit padding, and their
 * sizes are checked with _Static_assert on the host. */
#ifndef PBFCL_SHARED_H
#define PBFCL_SHARED_H

#ifdef __OPENCL_VERSION__
typedef uint pbfcl_uint;
#else
#include <stdint.h>
typedef uint32_t pbfcl_uint;
#endif

/* The uniform grid the Morton codes index: cells_per_axis = 1 << grid_bits. */
typedef struct pbfcl_grid_params {
    float origin[4];      /* x, y, z of the grid's lower corner; w unused */
    float cell_size;      /* cell edge length, at least the neighbour radius */
    float inv_cell_size;  /* 1 / cell_size */
    pbfcl_uint grid_bits; /* log2(cells per axis), 1..10 */
    pbfcl_uint pad0;
} pbfcl_grid_params;

/* The empty-cell marker of the cell range table and the cell id of no particle. */
#define PBFCL_EMPTY 0xffffffffu

#ifndef __OPENCL_VERSION__
_Static_assert(sizeof(pbfcl_grid_params) == 32, "pbfcl_grid_params layout");
#endif

#endif
