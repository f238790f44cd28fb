/* The grid's first stages on the host, from first principles, for the tests that check the
 * stages after them (neighbours, split-and-compress): the Morton cell of a position and the
 * particles sorted by cell. Header-only. */
#ifndef PBFCL_GRID_REF_H
#define PBFCL_GRID_REF_H

#include "grid/grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Positions sorted by cell on the host. */
typedef struct sorted_set {
    size_t n;
    float *pos;      /* sorted positions, float4 */
    pbfcl_uint *ids; /* sorted Morton cell ids */
} sorted_set;

/* The Morton cell id of position p (x, y, z) in the grid gp, clamped into the grid. */
static inline pbfcl_uint reference_cell_id(const float *p, const pbfcl_grid_params *gp)
{
    const float top = (float)((1u << gp->grid_bits) - 1u);
    pbfcl_uint c[3];
    for (int a = 0; a < 3; a++) {
        float f = floorf((p[a] - gp->origin[a]) * gp->inv_cell_size);
        c[a] = (pbfcl_uint)fmaxf(fminf(f, top), 0.0f);
    }
    return pbfcl_morton_encode(c[0], c[1], c[2]);
}

static inline int compare_u64(const void *a, const void *b)
{
    const unsigned long long *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* Sorts n float4 positions by cell id in grid gp (stable: ties by original index); free
 * pos and ids. */
static inline sorted_set sort_on_host(const float *pos, size_t n, const pbfcl_grid_params *gp)
{
    sorted_set s = {n, malloc(n * 16 + 16), malloc(n * 4 + 4)};
    unsigned long long *keys = malloc(n * 8 + 8);
    for (size_t i = 0; i < n; i++)
        keys[i] = (unsigned long long)reference_cell_id(&pos[4 * i], gp) << 32 | i;
    qsort(keys, n, 8, compare_u64);
    for (size_t i = 0; i < n; i++) {
        s.ids[i] = (pbfcl_uint)(keys[i] >> 32);
        memcpy(&s.pos[4 * i], &pos[4 * (keys[i] & 0xffffffffu)], 16);
    }
    free(keys);
    return s;
}

#endif
