/* The table of OpenCL programs and their kernel files (see programs.h). */
#include "runtime/programs.h"

static const pbfcl_program_desc programs[PBFCL_PROGRAM_COUNT] = {
    [PBFCL_PROGRAM_SCAN] = {"scan", {"pbfcl_shared.h", "scan_local.cl", "scan.cl"}, 3},
    [PBFCL_PROGRAM_RADIX_SORT] = {"radix_sort",
                                  {"pbfcl_shared.h", "scan_local.cl", "radix_sort.cl"},
                                  3},
    [PBFCL_PROGRAM_GRID] = {"grid",
                            {"pbfcl_shared.h", "morton.h", "hash.cl", "reorder.cl", "cells.cl",
                             "neighbours.cl"},
                            6},
    [PBFCL_PROGRAM_PBF] = {"pbf",
                           {"pbfcl_shared.h", "morton.h", "colliders.h", "pbf.cl", "distance.cl",
                            "wind.cl", "inflatable.cl", "attach.cl"},
                           8},
    [PBFCL_PROGRAM_PARTICLES] = {"particles", {"pbfcl_shared.h", "particles.cl"}, 2},
    [PBFCL_PROGRAM_SHAPE_MATCH] = {"shape_match", {"pbfcl_shared.h", "shape_match.cl"}, 2},
    /* sph.cl calls pbf.cl's kernel functions and walls */
    [PBFCL_PROGRAM_SPH] = {"sph",
                           {"pbfcl_shared.h", "morton.h", "colliders.h", "pbf.cl", "sph.cl"},
                           5},
    [PBFCL_PROGRAM_KINEMATIC] = {"kinematic", {"pbfcl_shared.h", "kinematic.cl"}, 2},
    [PBFCL_PROGRAM_DIFFUSE] = {"diffuse",
                               {"pbfcl_shared.h", "morton.h", "diffuse.h", "diffuse.cl"},
                               4},
    /* multilevel.cl uses pbf.cl's params and box */
    [PBFCL_PROGRAM_MULTILEVEL] = {"multilevel",
                                  {"pbfcl_shared.h", "morton.h", "colliders.h", "pbf.cl",
                                   "shape_distance.cl", "multilevel.cl"},
                                  6},
    [PBFCL_PROGRAM_COLLIDERS] =
        {"colliders", {"pbfcl_shared.h", "colliders.h", "shape_distance.cl", "colliders.cl"}, 4},
    /* a simulation split over slabs (sim/exchange.c, host/dist/) */
    [PBFCL_PROGRAM_EXCHANGE] = {"exchange", {"exchange.cl", "regions.cl"}, 2},
};

const pbfcl_program_desc *pbfcl_program(pbfcl_program_id id)
{
    return (id >= 0 && id < PBFCL_PROGRAM_COUNT) ? &programs[id] : 0;
}
