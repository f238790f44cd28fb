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

/* V-cycles per coarse correction started cold: the 3 x 240 x 3 column of tools/column-scaling
 * needs 2 solver iterations for 1 % with one or two (1.05 % at one iteration with two, since
 * phi = 0 lies on the faces to air), 1 with three (0.76 %; 0.58 % with four). */
#define PBFCL_ML_CYCLES 3

/* A warm start: with one correction a substep (solver.multilevel 1), the correction of a
 * frame's later substep starts the finest grid from PBFCL_ML_WARM x the last substep's phi
 * (where a cell is fluid in both) and runs PBFCL_ML_WARM_CYCLES V-cycles instead of
 * PBFCL_ML_CYCLES. Each substep's compression is mostly gravity's |g| dt^2 again, so the last
 * phi is nearly this one's. The frame's first substep starts from 0, so that a frame depends
 * on its state alone (a checkpoint holds no phi). The whole last phi (1) over-corrects: with
 * 2 V-cycles from it 16M's dam break broke (4.9 % mean density error in its first frames);
 * docs/PERFORMANCE.md, "A warm start", has the measurements behind the choice. */
#define PBFCL_ML_WARM 0.75f
#define PBFCL_ML_WARM_CYCLES 1

/* The free surface: phi = 0 on the face between a fluid cell and an air cell, where the fluid
 * cell's particles end, half a cell from its centre, so that the face's term in the fluid cell's
 * Laplacian, (0 - phi) / (dx / 2) / dx, weighs an air neighbour twice a fluid one. At the air
 * cell's centre (weight 1, as before) the fluid stood a cell deeper than it is: its top cells'
 * phi was too large, their particles were pushed up too hard, and 16M's dam break took twice the
 * substeps (docs/PERFORMANCE.md, "The free surface on the face"). */
#define PBFCL_ML_SURFACE_WEIGHT 2.0f

/* The most cells of its largest grid per work-item of ml_group (the one work-group that solves
 * the small grids) that runs at once: more, and one compute unit's sweeps of that grid cost
 * more than the launches they save. */
#define PBFCL_ML_GROUP_CELLS_PER_ITEM 16

/* With the correction on, the part of the fluid's depth H whose free fall the substeps still
 * resolve (pbf_choose_substeps: u >= sqrt(2 g H x this)). The correction holds a column's
 * weight whatever its depth, but not a collapsing column's impacts, which the fine iterations
 * take: on an H200's dam break (2 iterations, cfl 1) with the term dropped, 16M particles' first
 * frames reached 4.25 % density error and 64M's broke (neighbour lists overflowed); at a quarter
 * of the depth (half the free-fall speed) 0.37 and 0.27 %, and 1M's frame is unchanged
 * (docs/PERFORMANCE.md, "One corrected iteration"). */
#define PBFCL_ML_DEPTH_SHARE 0.25

/* Whether solver iteration it of a substep ends with a coarse correction: the first
 * solver.multilevel of its iterations do (with none, none does; iteration 0 also asks whether
 * any does). */
static inline int pbfcl_ml_corrects(const pbfcl_solver_settings *s, int it)
{
    return it < s->multilevel && it < s->iterations;
}

/* Whether the corrections adapt to the compression: the first solver.multilevel iterations
 * leave some after them and solver.multilevel_limit is on (one device: split over several, each
 * would choose alone). */
static inline int pbfcl_ml_adapts(const pbfcl_solver_settings *s)
{
    return s->multilevel > 0 && s->multilevel < s->iterations && s->multilevel_limit > 0.0f;
}

/* Whether a substep's iterations after the first solver.multilevel end with a correction too:
 * the substep before left the fluid's mean compression (max(rho / rho0 - 1, 0) over its
 * particles; below 0: not measured) above solver.multilevel_limit %. A frame's first substep
 * adds none, so that a frame depends on its state alone (as the warm start). */
static inline int pbfcl_ml_adds(const pbfcl_solver_settings *s, double compression)
{
    return compression > 0.01 * s->multilevel_limit;
}

/* The fluid's mean compression, max(rho / rho0 - 1, 0) over its particles as the last density
 * pass left their densities, as ml_compression sums it for pbfcl_ml_adds (waits for it), in at
 * most `groups` work-groups (0: PBFCL_ML_COMPRESSION_GROUPS); -1 without fluid. For the tests. */
pbfcl_status pbfcl_pbf_multilevel_compression(pbfcl_sim *sim, size_t groups, double *mean);

/* The most work-groups of ml_compression (each sums its work-items' particles, a stride of the
 * launch apart): enough to read 16M particles' densities at the memory's rate (with 256 the
 * H200 took 110 us a launch there, 12 us at 1M), few enough that their sums (32 KB) are read
 * back without a cost. */
#define PBFCL_ML_COMPRESSION_GROUPS 4096

/* The most a coarse correction moves a particle, in |g| dt^2 (max_move). */
#define PBFCL_ML_SUPPORT 2.0

/* How much farther a correction may move a particle against its own move of the substep, in
 * its cell's compression (the volume the cell must lose per its volume) x the cell's size. A
 * collapsing column's impact needs more than a resting column's 2 |g| dt^2: test_physics' fine
 * column (20 x 107 x 2 particles, a JSON copy of one of its runs) reached 4.33 % density error
 * at impact with the plain limit and 1.69 % with this one (bound 2; the test's three runs
 * 2.10 % median at frame 14, 1.66 % at a reach of 4, which the H200 measured slower at 4M and
 * 16M); a larger move that is not against the particle's motion
 * became its velocity and 16M's splashes took 2.7 times the substeps, and one against the
 * motion but not bounded by the cell's compression broke a deep column's fall (16M's first
 * frames at 3.3 % worst frame); with both, every size of docs/PERFORMANCE.md's dam break held
 * its error ("One corrected iteration"). */
#define PBFCL_ML_REACH 2.0

/* The part of a cell by which the box may pass a whole number of cells and still take that
 * number: a box edge 0.29f to 0.49f at h = 0.04f measures 5.0000005 cells in float, and a sixth
 * cell, empty, stood beyond the wall as air: phi = 0 there made the wall a free surface, the
 * correction pushed the fluid into it, and a tank at rest heaped 28 of 800 particles on its
 * surface (test_grids, test_colliders_fluid_rest_at_shapes). */
#define PBFCL_ML_GRID_SLACK 1e-3

/* The cells per axis of each grid over the box at cell size h (grid 0: ceil(extent / h -
 * PBFCL_ML_GRID_SLACK) at least 1, each next one half of it rounded up, down to 2 x 2 x 2) and
 * how many grids. */
void pbfcl_ml_grids(const float box_min[3], const float box_max[3], float h, int *levels,
                    unsigned dims[][3]);

/* The local memory (bytes) ml_group takes for grids first .. levels - 1 of dims (0 for none). */
size_t pbfcl_ml_group_bytes(int levels, const unsigned dims[][3], int first);

/* The first of the levels grids of dims that ml_group solves in one work-group (levels: none,
 * each grid takes its own launches): the most grids from the coarsest up whose local memory
 * (pbfcl_ml_group_bytes) is at most local_bytes, the largest of them at most
 * PBFCL_ML_GROUP_CELLS_PER_ITEM cells per work-item of the width that runs at once. */
int pbfcl_ml_group_first(int levels, const unsigned dims[][3], size_t local_bytes, size_t width);

/* Caps the local memory ml_group may take in sim's corrections (tests: 0 sends every grid
 * through the per-level launches); the device's own limit still holds. */
pbfcl_status pbfcl_pbf_multilevel_group_limit(pbfcl_sim *sim, size_t local_bytes);

/* One coarse correction of x*: the compression of x* (its SPH density, walls and collision
 * shapes included) gathered into the cells of h, the empty cells a shape closes solid (no flux;
 * ml_solids), PBFCL_ML_CYCLES V-cycles of lap(phi) = compression from phi = 0 (warm:
 * PBFCL_ML_WARM_CYCLES from PBFCL_ML_WARM x the last correction's phi, where its grids are
 * unchanged), phi = 0 on the faces to air (PBFCL_ML_SURFACE_WEIGHT), x* += grad(phi) (at most
 * PBFCL_ML_SUPPORT |g| dt^2, plus against the particle's move x* - x at most PBFCL_ML_REACH x its
 * cell's compression x h), and the pressure on the solid cells' faces added to their shapes' force.
 */
pbfcl_status pbfcl_pbf_multilevel(pbfcl_sim *sim, bool warm, pbfcl_profile *prof);

#endif
