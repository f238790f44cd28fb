/* Diffuse particles (spray, foam and bubbles; Ihmsen et al., CGI 2012), shared by the host
 * (C11) and the kernels (OpenCL C 1.2): their constants, the clamp function Phi, the types,
 * and the integer hash that gives each emission its random numbers, so that a run is
 * reproducible and the tests can draw the same numbers on the host. */
#ifndef PBFCL_DIFFUSE_H
#define PBFCL_DIFFUSE_H

#ifndef __OPENCL_VERSION__
#include "pbfcl_shared.h"
#endif

/* The types, stored in a diffuse particle's position w (type + the fraction of its life left,
 * below 1, for a renderer's fade). */
#define PBFCL_DIFFUSE_SPRAY 0u
#define PBFCL_DIFFUSE_FOAM 1u
#define PBFCL_DIFFUSE_BUBBLE 2u

/* A fluid particle is at the surface, where a wave crest can form, when its neighbours lie
 * mostly on one side: |sum of x_ij/|x_ij| W| >= PBFCL_DIFFUSE_SURFACE * sum of W (0 inside a
 * uniform fluid, 0.5 and more in the top layer of the rest lattice, 1 for a lone pair). */
#define PBFCL_DIFFUSE_SURFACE 0.25f

/* A wave crest needs the particle to move along its normal: v/|v| . n >= this (Ihmsen's 0.6). */
#define PBFCL_DIFFUSE_CREST_ALIGN 0.6f

/* The most diffuse particles one fluid particle emits in one update (n_d is far below it at
 * any sensible rate); it keeps the sum of the emission counts within 32 bits. */
#define PBFCL_DIFFUSE_MAX_EMIT 64u

/* The constants of one diffuse update (one frame), __constant in the kernels. */
typedef struct pbfcl_diffuse_params {
    float box_min[4];        /* the box, m; a diffuse particle leaving it is removed */
    float box_max[4];        /* upper corner, m */
    float gravity[4];        /* m/s^2 */
    float dt;                /* the frame's time step, s */
    float h;                 /* kernel radius, m (the fluid's) */
    float radius;            /* particle radius r, m: the emission cylinder's radius */
    float lifetime;          /* s, of a new diffuse particle; foam loses it */
    float ta_min, ta_max;    /* trapped air: Phi's thresholds of v_diff, m/s */
    float wc_min, wc_max;    /* wave crest: Phi's thresholds of the curvature, dimensionless */
    float ke_min, ke_max;    /* kinetic energy per unit mass: Phi's thresholds, J/kg */
    float k_ta, k_wc;        /* emission rates per fluid particle at potential 1, 1/s */
    float buoyancy;          /* k_b: a bubble's buoyancy, a multiple of -g */
    float drag;              /* k_d: a bubble's drag towards the fluid velocity, 1/s */
    pbfcl_uint spray_below;  /* fewer fluid neighbours than this: spray */
    pbfcl_uint bubble_above; /* more than this (and not spray): a bubble; else foam */
    pbfcl_uint capacity;     /* diffuse particles the buffers hold */
    pbfcl_uint frame;        /* the update's number: seeds the hash */
} pbfcl_diffuse_params;

#ifndef __OPENCL_VERSION__
_Static_assert(sizeof(pbfcl_diffuse_params) == 120, "pbfcl_diffuse_params layout");
#endif

/* Ihmsen's clamp: 0 below lo, 1 above hi, linear between (a step at lo when hi <= lo). */
static inline float pbfcl_diffuse_phi(float v, float lo, float hi)
{
    if (hi <= lo)
        return v >= lo ? 1.0f : 0.0f;
    return (fmin(v, hi) - fmin(v, lo)) / (hi - lo);
}

/* An integer hash with good avalanche (Wellons' "lowbias32"). */
static inline pbfcl_uint pbfcl_diffuse_hash(pbfcl_uint x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* The k-th random number in [0, 1) of fluid particle i in update frame: a float of 24 bits. */
static inline float pbfcl_diffuse_random(pbfcl_uint frame, pbfcl_uint i, pbfcl_uint k)
{
    pbfcl_uint h = pbfcl_diffuse_hash(i ^ pbfcl_diffuse_hash(frame * 0x9e3779b9u + k));
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

#endif
