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

/* The regions of the grid that keep the solver's moved flags (cl/pbf/pbf.cl, pbf_report_move):
 * 2^PBFCL_MOVED_LEVEL cells along each axis, a region's index its cells' Morton codes shifted
 * right by 3 PBFCL_MOVED_LEVEL. */
#define PBFCL_MOVED_LEVEL 2u

#ifndef __OPENCL_VERSION__
_Static_assert(sizeof(pbfcl_grid_params) == 32, "pbfcl_grid_params layout");
#endif

/* --- Phases (FleX's encoding, NvFlex.h NvFlexMakePhase; include/pbfcl.h spells the same bits
 * for the API) ------------------------------------------------------------------------------
 * A particle's phase is a group (bits 0-19) and flags (bits 20-23). Two particles of one group
 * interact only when the group has the self-collide flag; the fluid flag makes a particle take
 * part in the density constraint. The fluid is group 0 with both flags (PBFCL_PHASE_FLUID_WORD,
 * the only fluid phase), body b's particles group b + 1, the static particles (inverse mass 0)
 * group PBFCL_PHASE_GROUP_BITS without flags. Every phase is below 2^24, so the kernels' float
 * tag of it (cl/pbf/pbf.cl, pbf_phase_tag) is exact. */
#define PBFCL_PHASE_GROUP_BITS 0x000fffffu
#define PBFCL_PHASE_SELF_COLLIDE_BIT 0x00100000u
#define PBFCL_PHASE_SELF_COLLIDE_FILTER_BIT 0x00200000u
#define PBFCL_PHASE_FLUID_BIT 0x00400000u
#define PBFCL_PHASE_FLUID_WORD (PBFCL_PHASE_FLUID_BIT | PBFCL_PHASE_SELF_COLLIDE_BIT)
#define PBFCL_PHASE_STATIC_WORD PBFCL_PHASE_GROUP_BITS
/* A word no phase equals (its bits 24-31 are set): a skip test against it never skips. */
#define PBFCL_PHASE_NONE 0xffffffffu

/* --- Position Based Fluids solver (cl/pbf/pbf.cl, host/core/sim/sim.c) ---------------------------
 * The solver's constants, derived once from the scene in SI units; __constant in the kernels.
 * Values that change while running (gravity, the push) are kernel arguments instead. */
typedef struct pbfcl_pbf_params {
    float box_min[4];       /* x, y, z of the box's lower corner, m; w unused */
    float box_max[4];       /* upper corner, m */
    float dt;               /* substep, s */
    float inv_dt;           /* 1 / dt */
    float h;                /* kernel radius, m */
    float h2;               /* h * h */
    float mass;             /* rest_density (2r)^3 / L, L the rest lattice's Poly6 sum, kg */
    float rest_density;     /* kg/m^3 */
    float inv_rest_density; /* 1 / rest_density */
    float volume;           /* mass / rest_density, m^3 */
    float poly6;            /* 315 / (64 pi h^9) */
    float spiky_grad;       /* -45 / (pi h^6) */
    float self_density;     /* mass * Poly6(0), the particle's own share of its density */
    float epsilon;          /* lambda relaxation (constraint force mixing), 1/m^2 */
    float scorr_k;          /* tensile term strength, m^2 (the scene's k * h^2) */
    float scorr_inv_wdq;    /* 1 / Poly6(delta q) */
    pbfcl_uint scorr_n;     /* tensile term exponent */
    float radius;           /* particle radius r, m; the collision distance is 2r */
    float min_dist;         /* 2r */
    float vorticity;        /* vorticity confinement epsilon, m/s */
    float viscosity;        /* XSPH c of this substep: the scene's c * its substeps / substeps */
    float contact_slop;     /* overlap (fraction of 2r) contacts resolve by moving x* alone */
    float friction_static;  /* friction coefficients of contacts with a body's particle */
    float friction_dynamic;
} pbfcl_pbf_params;

/* --- Weakly compressible SPH (cl/sph/sph.cl, host/core/sph/sph.c) --------------------------------
 * Its constants beside the common ones of pbfcl_pbf_params (box, dt, h, mass, kernels, r). */
typedef struct pbfcl_sph_params {
    float stiffness;    /* Tait B = rho0 c^2 / gamma, Pa */
    float gamma;        /* Tait exponent (7) */
    float sound_speed;  /* c, m/s */
    float alpha;        /* Monaghan's artificial viscosity alpha */
    float visc_eps;     /* 0.01 (h/2)^2, m^2: keeps the viscosity finite at r = 0 */
    float wall_density; /* rho0: pbf_wall_density's term, in units of rho0, in kg/m^3 */
    float grad_scale; /* 1 / M: the gradient normalised on the rest lattice (host/core/sph/sph.c) */
    pbfcl_uint pad0;
} pbfcl_sph_params;

/* The per-work-group partial sums of the stats kernel, PBFCL_STATS_FIELDS floats each. */
#define PBFCL_STATS_FIELDS 13
#define PBFCL_STATS_KINETIC 0      /* sum 0.5 m v^2 (each particle's own mass) */
#define PBFCL_STATS_DENSITY_SUM 1  /* sum max(0, rho / rho0 - 1) over the fluid's particles */
#define PBFCL_STATS_DENSITY_MAX 2  /* max of the same */
#define PBFCL_STATS_SPEED_MAX 3    /* max |v| */
#define PBFCL_STATS_NEIGHBOR_SUM 4 /* sum of neighbour counts */
#define PBFCL_STATS_NEIGHBOR_MAX 5 /* max neighbour count */
#define PBFCL_STATS_OUTSIDE 6      /* particles beyond the walls the kernels clamp to (box - r) */
#define PBFCL_STATS_NAN 7          /* particles with a non-finite position or velocity */
#define PBFCL_STATS_MOMENTUM 8     /* 8, 9, 10: sum m v */
#define PBFCL_STATS_FINITE 11      /* particles counted in the sums */
#define PBFCL_STATS_FLUID 12       /* of them, fluid particles (the density error's) */

/* --- Shape matching (cl/bodies/shape_match.cl, host/core/bodies/shape_match.c) -------------------
 * The float4 rows of each segmented reduction per entry: three of A_pq and the centre, then
 * the body's contacts with other solids (their slides and number; how far they closed). */
#define PBFCL_SHAPE_MATCH_ROWS 5

/* --- Rotations (cl/bodies/kinematic.cl, cl/pbf/attach.cl) -------------------------------------
 * (x, y, z) rotated in place by the unit quaternion (qx, qy, qz, qw): v + 2 qw (u x v) +
 * 2 u x (u x v), u = (qx, qy, qz). In scalars: Oclgrind 21.10's uninitialised-value check
 * reports a vector built from values that depend on a kernel argument as uninitialised, and
 * crashed on float3 swizzles. */
static inline void pbfcl_quat_rotate(float qx, float qy, float qz, float qw, float *x, float *y,
                                     float *z)
{
    float tx = 2.0f * (qy * *z - qz * *y);
    float ty = 2.0f * (qz * *x - qx * *z);
    float tz = 2.0f * (qx * *y - qy * *x);
    float rx = *x + qw * tx + (qy * tz - qz * ty);
    float ry = *y + qw * ty + (qz * tx - qx * tz);
    float rz = *z + qw * tz + (qx * ty - qy * tx);
    *x = rx;
    *y = ry;
    *z = rz;
}

#ifndef __OPENCL_VERSION__
_Static_assert(sizeof(pbfcl_pbf_params) == 120, "pbfcl_pbf_params layout");
_Static_assert(sizeof(pbfcl_sph_params) == 32, "pbfcl_sph_params layout");
#endif

#endif
