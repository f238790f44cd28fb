/* Solver-neutral passes over the particle state (cl/sim/particles.cl), used by every method
 * behind solver_method.h: stats (the step statistics), bounds (what the adaptive substeps
 * read), copy_positions (the render hook, in the caller's particle order), slots (the
 * id-to-slot map every module that names particles by id reads), and gather_rows and
 * scatter_rows (rows of a per-particle buffer at a list of slots, packed and unpacked: what a
 * simulation split over devices exchanges, host/dist/), gather_column, append_column and
 * scatter_column (the same into and out of a column of packed records), and fill_rows (initial
 * values). */
#ifndef PBFCL_PARTICLES_H
#define PBFCL_PARTICLES_H

#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "pbfcl.h"

/* The program, its kernels and the buffers of its reductions. */
typedef struct pbfcl_particles {
    pbfcl_cl *cl;
    cl_program program;
    cl_kernel stats, bounds, copy_positions, slots, gather_rows, scatter_rows;
    cl_kernel fill_rows, gather_column, append_column, scatter_column;
    size_t wg;          /* work-group size of every kernel (a power of two, >= 16) */
    size_t capacity;    /* particles */
    cl_mem partial_buf; /* stats: PBFCL_STATS_FIELDS floats per work-group */
    cl_mem bounds_buf;  /* bounds: 3 uints */
    cl_mem slot_buf;    /* slots: uint per id (capacity), its slot; made at the first use */
} pbfcl_particles;

/* The state the passes read: n particles in the solver's order. */
typedef struct pbfcl_particle_state {
    size_t n;
    cl_mem pos_buf, vel_buf;   /* float4 (x, y, z, unused w) */
    cl_mem density_buf;        /* float, kg/m^3 (stats) */
    cl_mem neighbor_count_buf; /* uint (stats) */
    cl_mem id_buf;             /* uint: each slot's particle id, 0..n-1 (copy_positions) */
    cl_mem phase_buf;          /* uint phase (0 fluid) and float relative inverse mass, or */
    cl_mem inv_mass_buf;       /* both NULL: every particle fluid of the material's mass (stats) */
} pbfcl_particle_state;

/* What stats measures against: the walls the solver holds particles to (a particle beyond
 * them is counted outside), the particle mass (kg) and the rest density (kg/m^3). */
typedef struct pbfcl_particles_material {
    float wall_lo[3], wall_hi[3];
    float mass, rest_density;
} pbfcl_particles_material;

/* The build options of the program on a device with these limits (`kernel-builds`). */
void pbfcl_particles_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg);

/* Builds the kernels and allocates the reduction buffers for up to capacity particles. */
pbfcl_status pbfcl_particles_create(pbfcl_particles *p, pbfcl_cl *cl, size_t capacity);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_particles_destroy(pbfcl_particles *p);

/* Bytes of device memory the passes need for capacity particles. */
unsigned long long pbfcl_particles_bytes_needed(size_t capacity);

/* stats: the statistics of the state (kinetic energy, density error, speed, neighbours,
 * outside, nan, momentum); the fields a solver knows itself (neighbor_overflow, substeps,
 * unstable) are left 0. Blocks until read. */
pbfcl_status pbfcl_particles_stats(pbfcl_particles *p, const pbfcl_particle_state *s,
                                   const pbfcl_particles_material *m, pbfcl_stats *out);

/* bounds: enqueues the reduction of the state's fastest speed (where the state has phases, a
 * solid body's particle, a shape-matched body's of groups 1 .. matched or a static one, counted
 * solid_scale times) and its reach along down (a unit vector, or zero) from the centre of the
 * box box_lo..box_hi into bounds_buf; events under PBFCL_STAGE_OTHER in prof if not NULL. */
pbfcl_status pbfcl_particles_bounds(pbfcl_particles *p, const pbfcl_particle_state *s,
                                    const float box_lo[3], const float box_hi[3],
                                    const float down[3], unsigned matched, float solid_scale,
                                    pbfcl_profile *prof);

/* Reads the last bounds (blocking): out[0] = max |v| (a solid body's counted solid_scale times),
 * out[1] and out[2] = the reach down and up along gravity from the box centre, plus the box
 * diagonal D. */
pbfcl_status pbfcl_particles_read_bounds(pbfcl_particles *p, float out[3]);

/* The id-to-slot map (slot_buf), made on the first call (modules that need it ask for it
 * when made: a fluid alone does without), into *out. It holds the slots of the last
 * pbfcl_particles_slots, or of a reorder that wrote it (grid.h, reorder_solids). */
pbfcl_status pbfcl_particles_slot_map(pbfcl_particles *p, cl_mem *out);

/* slots: enqueues slot[id[i]] = i for the n particles (id_buf: each slot's id) into the map,
 * made if it was not; events under stage in prof if not NULL. */
pbfcl_status pbfcl_particles_slots(pbfcl_particles *p, size_t n, cl_mem id_buf, pbfcl_profile *prof,
                                   pbfcl_stage stage);

/* slots into out_buf (uint per id, at least the largest id + 1): slot[id[i]] = i for the n
 * particles, every other entry left as it was (a split simulation's presence map,
 * host/dist/dist_bodies.c). */
pbfcl_status pbfcl_particles_slots_into(pbfcl_particles *p, size_t n, cl_mem id_buf, cl_mem out_buf,
                                        pbfcl_profile *prof, pbfcl_stage stage);

/* copy_positions: enqueues dst[id] = (x, y, z, |v|) of every particle: dst holds n float4 in
 * the caller's order. */
pbfcl_status pbfcl_particles_copy_positions(pbfcl_particles *p, const pbfcl_particle_state *s,
                                            cl_mem dst_buf);

/* gather_rows: enqueues out_buf's rows r = 0..count-1 (words 32-bit words each, packed) from
 * the rows at slots slots_buf[r] (count uints) of src_buf. Not profiled (stage other). */
pbfcl_status pbfcl_particles_gather_rows(pbfcl_particles *p, cl_mem src_buf, size_t words,
                                         cl_mem slots_buf, size_t count, cl_mem out_buf);

/* scatter_rows: enqueues the packed rows of in_buf into the rows at slots slots_buf[r] of
 * dst_buf (the slots distinct), the inverse of gather_rows. */
pbfcl_status pbfcl_particles_scatter_rows(pbfcl_particles *p, cl_mem in_buf, size_t words,
                                          cl_mem slots_buf, size_t count, cl_mem dst_buf);

/* fill_rows: enqueues the initial values of dst_buf's rows first..first+count-1 (words 32-bit
 * words each): every word of row j is value + step * j (a constant with step 0, the id with
 * value 0 and step 1). Not profiled. */
pbfcl_status pbfcl_particles_fill_rows(pbfcl_particles *p, cl_mem dst_buf, size_t words,
                                       size_t first, size_t count, cl_uint value, cl_uint step);

/* gather_column: enqueues the rows at slots slots_buf[r] of src_buf (words each) into words
 * at..at+words-1 of record r of out_buf (count records of stride words). Not profiled. */
pbfcl_status pbfcl_particles_gather_column(pbfcl_particles *p, cl_mem src_buf, size_t words,
                                           cl_mem slots_buf, size_t count, size_t stride, size_t at,
                                           cl_mem out_buf);

/* append_column: enqueues words at..at+words-1 of records r = 0..count-1 of in_buf (stride
 * words each) into rows first + r of dst_buf (words each), the inverse for appended rows. */
pbfcl_status pbfcl_particles_append_column(pbfcl_particles *p, cl_mem in_buf, size_t stride,
                                           size_t at, size_t words, size_t first, size_t count,
                                           cl_mem dst_buf);

/* scatter_column: enqueues words at..at+words-1 of records r = 0..count-1 of in_buf (stride
 * words each) into the rows at slots slots_buf[r] of dst_buf (words each, the slots distinct),
 * the inverse of gather_column. Not profiled. */
pbfcl_status pbfcl_particles_scatter_column(pbfcl_particles *p, cl_mem in_buf, size_t stride,
                                            size_t at, size_t words, cl_mem slots_buf, size_t count,
                                            cl_mem dst_buf);

#endif
