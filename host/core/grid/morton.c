/* Host side of the Morton grid: the plain C Morton encode/decode (the reference the tests
 * use; the bit tricks are shared with the kernels through cl/common/morton.h) and fitting grid
 * parameters to a domain. */
#include "grid/grid.h"
#include "morton.h"

#include <math.h>

pbfcl_uint pbfcl_morton_encode(pbfcl_uint x, pbfcl_uint y, pbfcl_uint z)
{
    return pbfcl_morton_code(x, y, z);
}

void pbfcl_morton_decode(pbfcl_uint code, pbfcl_uint *x, pbfcl_uint *y, pbfcl_uint *z)
{
    *x = pbfcl_morton_compact(code);
    *y = pbfcl_morton_compact(code >> 1);
    *z = pbfcl_morton_compact(code >> 2);
}

pbfcl_status pbfcl_grid_params_fit(const float lo[3], const float hi[3], float cell_size,
                                   pbfcl_grid_params *out)
{
    if (!(cell_size > 0.0f) || !isfinite(cell_size)) {
        pbfcl_errorf("grid cell size %g is not a positive finite number; use the neighbour "
                     "radius h (> 0)",
                     (double)cell_size);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    double cells = 1.0;
    for (int a = 0; a < 3; a++) {
        if (!isfinite(lo[a]) || !isfinite(hi[a]) || !(hi[a] > lo[a])) {
            pbfcl_errorf("grid domain axis %c is [%g, %g]; it needs finite bounds with lo < hi",
                         "xyz"[a], (double)lo[a], (double)hi[a]);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
        double c = ceil(((double)hi[a] - (double)lo[a]) / cell_size);
        cells = c > cells ? c : cells;
    }
    pbfcl_uint bits = 1;
    while (bits <= PBFCL_MORTON_AXIS_BITS && (double)(1u << bits) < cells)
        bits++;
    if (bits > PBFCL_MORTON_AXIS_BITS) {
        pbfcl_errorf("the domain needs %.0f cells of size %g per axis but the Morton grid has at "
                     "most %u; use a smaller domain or a larger particle radius",
                     cells, (double)cell_size, 1u << PBFCL_MORTON_AXIS_BITS);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    *out = (pbfcl_grid_params){.origin = {lo[0], lo[1], lo[2], 0.0f},
                               .cell_size = cell_size,
                               .inv_cell_size = 1.0f / cell_size,
                               .grid_bits = bits};
    return PBFCL_OK;
}
