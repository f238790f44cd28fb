/* The Position Based Fluids simulation: particle buffers on the device and the step of
 * seed 001's outline, stage by stage. */
#ifndef PBFCL_SIM_H
#define PBFCL_SIM_H

#include "clrt.h"
#include "grid.h"
#include "scene.h"

/* Per-step measurements (the columns of `pbfcl run --stats`). */
typedef struct pbfcl_sim_stats {
    double kinetic_energy;    /* J, sum of 0.5 m v^2 */
    double density_error_avg; /* % of rest density, compression only */
    double density_error_max; /* % */
    double max_speed;         /* m/s */
    double neighbors_avg;
    unsigned neighbors_max;
    unsigned outside;   /* particles outside the box */
    unsigned nan;       /* particles with a non-finite position or velocity */
    double momentum[3]; /* total linear momentum, kg m/s */
} pbfcl_sim_stats;

typedef struct pbfcl_sim pbfcl_sim; /* opaque; defined in sim.c */

/* Creates a simulation of n particles at positions (x, y, z triples) with zero velocity on
 * cl's device; checks device memory first. */
pbfcl_status pbfcl_sim_create(pbfcl_sim **out, pbfcl_cl *cl, const pbfcl_scene *scene,
                              const float *positions, size_t n);

/* Releases everything; accepts NULL. */
void pbfcl_sim_destroy(pbfcl_sim *sim);

/* Advances one frame (scene dt, in substeps). Stage events go to prof if not NULL. */
pbfcl_status pbfcl_sim_step(pbfcl_sim *sim, pbfcl_profile *prof);

/* Number of particles. */
size_t pbfcl_sim_count(const pbfcl_sim *sim);

/* The scene the simulation runs (gravity may be changed with pbfcl_sim_set_gravity). */
const pbfcl_scene *pbfcl_sim_scene(const pbfcl_sim *sim);

/* Reads positions and velocities (xyz triples) and densities (kg/m^3) to host arrays of n
 * entries; any pointer may be NULL. Order is the simulation's current (sorted) order. */
pbfcl_status pbfcl_sim_read(pbfcl_sim *sim, float *pos3, float *vel3, float *density);

/* Computes the step statistics on the device (reduced on the host). */
pbfcl_status pbfcl_sim_stats_compute(pbfcl_sim *sim, pbfcl_sim_stats *out);

/* Enqueues a copy of the positions as float4 (x, y, z, speed) into dst_buf (n float4), e.g.
 * a buffer shared with OpenGL. */
pbfcl_status pbfcl_sim_copy_positions(pbfcl_sim *sim, cl_mem dst_buf);

/* Changes gravity (e.g. to tilt or shake the box). */
void pbfcl_sim_set_gravity(pbfcl_sim *sim, const float g[3]);

/* Sets an external push: particles within radius of the ray origin + t * dir get an
 * acceleration of strength along push (m/s^2); strength 0 turns it off. */
void pbfcl_sim_set_push(pbfcl_sim *sim, const float origin[3], const float dir[3],
                        const float push[3], float radius, float strength);

#endif
