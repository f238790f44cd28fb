/* Morton (Z-order) codes of integer cell coordinates, shared by the host (C11) and the
 * kernels (OpenCL C 1.2): 10 bits per axis interleaved x, y, z with x in the lowest bit,
 * so a code has at most 30 bits and the codes of a 2^b grid are below 2^(3b). */
#ifndef PBFCL_MORTON_H
#define PBFCL_MORTON_H

#ifndef __OPENCL_VERSION__
#include "pbfcl_shared.h"
#endif

/* Bits per axis of a Morton code (cells per axis at most 1 << PBFCL_MORTON_AXIS_BITS). */
#define PBFCL_MORTON_AXIS_BITS 10

/* Spreads the low 10 bits of v so that bit k moves to bit 3k. */
static inline pbfcl_uint pbfcl_morton_spread(pbfcl_uint v)
{
    v &= 0x3ffu;
    v = (v | (v << 16)) & 0x030000ffu;
    v = (v | (v << 8)) & 0x0300f00fu;
    v = (v | (v << 4)) & 0x030c30c3u;
    v = (v | (v << 2)) & 0x09249249u;
    return v;
}

/* The inverse of pbfcl_morton_spread: gathers bits 0, 3, 6, ... into the low 10 bits. */
static inline pbfcl_uint pbfcl_morton_compact(pbfcl_uint v)
{
    v &= 0x09249249u;
    v = (v | (v >> 2)) & 0x030c30c3u;
    v = (v | (v >> 4)) & 0x0300f00fu;
    v = (v | (v >> 8)) & 0x030000ffu;
    v = (v | (v >> 16)) & 0x3ffu;
    return v;
}

/* The Morton code of cell (x, y, z), each below 1024. */
static inline pbfcl_uint pbfcl_morton_code(pbfcl_uint x, pbfcl_uint y, pbfcl_uint z)
{
    return pbfcl_morton_spread(x) | (pbfcl_morton_spread(y) << 1) | (pbfcl_morton_spread(z) << 2);
}

#endif
