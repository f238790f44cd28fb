/* The multilevel coarse correction of the density constraint (multilevel.c): its grids and
 * its one call, for the constraint registry and the tests. */
#ifndef PBFCL_PBF_MULTILEVEL_H
#define PBFCL_PBF_MULTILEVEL_H

#include "pbf/pbf.h"

/* The most grids of the hierarchy (cells of h to 2^(levels-1) h). */
#define PBFCL_ML_MAX_LEVELS 16

/* Weighted Jacobi sweeps before and after the coarse correction on each grid (even: phi ends
 * in its own buffer), sweeps on the coarsest grid, and the smoothing weight (2/3 smooths best
 * in 1-D, 6/7 in 3-D; thin and deep fluids are nearly 1-D at the coarse levels). */
#define PBFCL_ML_PRE_SWEEPS 2
#define PBFCL_ML_POST_SWEEPS 2
#define PBFCL_ML_COARSEST_SWEEPS 16
#define PBFCL_ML_WEIGHT 0.7f

/* V-cycles per coarse correction: with one, the 3 x 240 x 3 column of tools/column-scaling
 * needed 2 solver iterations for 1 % (1 iteration for 120), with two it needs 1 (0.86 %). */
#define PBFCL_ML_CYCLES 2

/* The most a coarse correction moves a particle, in |g| dt^2 (max_move). */
#define PBFCL_ML_SUPPORT 2.0

/* The cells per axis of each grid over the box at cell size h (grid 0: ceil(extent / h) at
 * least 1, each next one half of it rounded up, down to 2 x 2 x 2) and how many grids. */
void pbfcl_ml_grids(const float box_min[3], const float box_max[3], float h, int *levels,
                    unsigned dims[][3]);

/* One coarse correction of x*: the compression of x* (its SPH density, walls included) gathered
 * into the cells of h, PBFCL_ML_CYCLES V-cycles of lap(phi) = compression, x* += grad(phi)
 * (at most PBFCL_ML_SUPPORT |g| dt^2, and 0.5 r). */
pbfcl_status pbfcl_pbf_multilevel(pbfcl_sim *sim, pbfcl_profile *prof);

#endif
