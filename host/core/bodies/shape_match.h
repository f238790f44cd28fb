/* Shape matching of rigid and soft bodies (Mueller et al. 2005, as in Macklin et al. 2014):
 * the bodies' entries and rest shapes on the device and the four stages of cl/bodies/shape_match.cl
 * that pull each body's particles towards their goal positions. */
#ifndef PBFCL_SHAPE_MATCH_H
#define PBFCL_SHAPE_MATCH_H

#include "bodies/attachment.h"
#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "runtime/profile.h"

/* The fewest particles of a body: one particle has no shape to match. */
#define PBFCL_SHAPE_MATCH_MIN_PARTICLES 2

/* A split simulation's sum over its devices of every body's sums (host/dist/dist_bodies.c):
 * totals holds bodies x PBFCL_SHAPE_MATCH_ROWS x 4 floats, this device's share of each body's
 * sums, replaced by the whole simulation's, the same on every device. */
typedef pbfcl_status (*pbfcl_shape_match_combine_fn)(void *ctx, float *totals, size_t bodies);

typedef struct pbfcl_shape_match {
    pbfcl_cl *cl;
    cl_program program;
    cl_kernel reduce, finish, goal, momentum, spin, predict, velocity, totals;
    size_t wg;       /* of every kernel (reduce's local memory and the partial sums' groups) */
    size_t capacity; /* particles (ids below it) */
    size_t bodies, entries;
    unsigned *entry_id;        /* host copy: the persistent id of each entry (for remapping) */
    cl_mem slot_buf;           /* borrowed: the particles' id-to-slot map (sim/particles.h) */
    cl_mem entry_id_buf;       /* uint per entry: the particle's persistent id */
    cl_mem entry_body_buf;     /* uint per entry: its body (entries sorted by body) */
    cl_mem rest_buf;           /* float4 per entry: rest offset from the rest centre; w = m / M */
    cl_mem body_range_buf;     /* uint2 per body: first entry, one past the last */
    cl_mem body_com_buf;       /* float4 per body: centre of mass, w = 0 */
    cl_mem body_rot_buf;       /* 4 float4 per body: quaternion (x, y, z, w), rows of R */
    cl_mem body_stiffness_buf; /* float per body */
    cl_mem body_inertia_buf; /* 2 float4 per body: rest inertia per unit mass, diagonal; xy xz yz */
    cl_mem body_motion_buf;  /* 4 float4 per body: v_c, omega, centre and rotation at the start */
    cl_mem partial_buf;      /* 10 float4 per work-group: head and tail sums (5 rows each) */
    cl_mem sums_buf;         /* 5 float4 per body: sums of bodies within one work-group */
    cl_mem static_buf;       /* 2 float4 per slot (capacity): a body particle's contacts with other
                              * solids from pbf_collide (its body's shares of their slides, their
                              * number in w; of how far they closed) */
    cl_float4 wall_lo, wall_hi; /* the walls the bodies are kept inside (none until set) */
    /* split over devices (pbfcl_shape_match_split; none: every particle here and owned) */
    cl_mem here_buf;    /* borrowed: uint per id, PBFCL_EMPTY if not on this device, else below
                         * owned if owned here (cl/bodies/shape_match.cl) */
    cl_uint owned;      /* the bound of here_buf's owned entries */
    cl_mem totals_buf;  /* 5 float4 per body: the sums whole, combined over the devices */
    float *totals_host; /* host copy of totals_buf */
    pbfcl_shape_match_combine_fn combine;
    void *combine_ctx;
} pbfcl_shape_match;

/* The build options of cl/bodies/shape_match.cl on a device (`pbfcl kernel-builds`): a power-of-two
 * work-group size up to 256 whose local memory (84 bytes per item) fits the device. */
void pbfcl_shape_match_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg);

/* Builds the kernels for particles with ids below capacity; no bodies yet. slot_buf (uint per
 * id: its current slot) is the particles' id-to-slot map, which its owner keeps current before
 * every stage here and releases after destroy. */
pbfcl_status pbfcl_shape_match_create(pbfcl_shape_match *sm, pbfcl_cl *cl, size_t capacity,
                                      cl_mem slot_buf);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_shape_match_destroy(pbfcl_shape_match *sm);

/* The bodies shape matching holds (the phases' groups 1 .. that count, which the kernels call
 * matched), 0 without its state (sm NULL). */
static inline size_t pbfcl_shape_match_count(const pbfcl_shape_match *sm)
{
    return sm ? sm->bodies : 0;
}

/* Replaces the bodies: entries sorted by body (entry_body non-decreasing, every body 0 ..
 * bodies - 1 with at least PBFCL_SHAPE_MATCH_MIN_PARTICLES entries), each naming a particle
 * by id with its rest position (xyz triples; the rest shape, also the body's pose now: the
 * rotation starts at identity) and each body's stiffness in (0, 1]. Particles of a body have
 * equal masses. bodies = 0 removes them all. */
pbfcl_status pbfcl_shape_match_set_bodies(pbfcl_shape_match *sm, size_t bodies, size_t entries,
                                          const unsigned *entry_id, const unsigned *entry_body,
                                          const float *rest3, const float *stiffness);

/* Splits the bodies over devices: here_buf (borrowed, uint per id; see shape_match.h's field)
 * says which particles this device holds and owns, and between each reduction and the pose
 * made of it the bodies' sums of this device's particles go through combine, which replaces
 * them with the whole simulation's (the same on every device, so that every device makes the
 * same poses); the entries stay every body's on every device. Kept across set_bodies. */
pbfcl_status pbfcl_shape_match_split(pbfcl_shape_match *sm, cl_mem here_buf,
                                     pbfcl_shape_match_combine_fn combine, void *ctx);

/* Sets the walls lo..hi (the box less the particle radius) that the projection keeps the
 * bodies inside, as the solver's other stages keep every particle; none (the whole float
 * range) until set. */
void pbfcl_shape_match_set_walls(pbfcl_shape_match *sm, const float lo[3], const float hi[3]);

/* Sets body b's stiffness. */
pbfcl_status pbfcl_shape_match_set_stiffness(pbfcl_shape_match *sm, size_t b, float stiffness);

/* Renames the particles after a removal: id becomes new_id[id] (none of them removed). */
pbfcl_status pbfcl_shape_match_remap_ids(pbfcl_shape_match *sm, const unsigned *new_id);

/* shape_match_reduce, shape_match_finish, shape_match_goal: moves the bodies' particles in
 * pred_buf (float4 per slot) towards their goals, each body first moved by the friction of its
 * contacts with other solids in static_buf (pbf_collide's; NULL: none) with the static and
 * dynamic coefficients mu_s and mu_k, and then, as a whole, inside the walls (set_walls); the
 * slots must be current. */
pbfcl_status pbfcl_shape_match_project(pbfcl_shape_match *sm, cl_mem pred_buf, cl_mem static_buf,
                                       float mu_s, float mu_k, pbfcl_profile *prof,
                                       pbfcl_stage stage);

/* shape_match_momentum, shape_match_spin, shape_match_predict: each body's velocity and
 * angular velocity from its particles' x and v (float4 per slot, after the forces), and for a
 * rigid body (stiffness 1) the rigid prediction x* = c + v_c dt + exp(omega dt) (x - c) of its
 * particles into pred_buf. */
pbfcl_status pbfcl_shape_match_predict(pbfcl_shape_match *sm, float dt, cl_mem pos_buf,
                                       cl_mem vel_buf, cl_mem pred_buf, pbfcl_profile *prof,
                                       pbfcl_stage stage);

/* shape_match_velocity: after update, the rigid bodies' particles take the velocity of their
 * body's motion over the substep (from the predict's start pose to the last projection's). */
pbfcl_status pbfcl_shape_match_velocity(pbfcl_shape_match *sm, float dt, cl_mem pos_buf,
                                        cl_mem vel_buf, pbfcl_profile *prof, pbfcl_stage stage);

/* Reads each body's centre of mass (xyz) and rotation (quaternion x, y, z, w) of the last
 * projection: com3 and quat4 hold bodies entries; either may be NULL. */
pbfcl_status pbfcl_shape_match_read(pbfcl_shape_match *sm, float *com3, float *quat4);

/* Reads every entry's particle id (copied from the host), body and rest offset from its body's
 * centre of mass (xyz triples) into arrays of sm->entries entries; any may be NULL. */
pbfcl_status pbfcl_shape_match_read_rest(pbfcl_shape_match *sm, unsigned *id, unsigned *body,
                                         float *rest3);

/* Saves the bodies (sm may be NULL: none) as named sections through put: "bodies" (their
 * counts), then their entries, rest shapes, poses, stiffnesses and motions. */
pbfcl_status pbfcl_shape_match_state_save(pbfcl_shape_match *sm, pbfcl_state_write_fn put,
                                          void *ctx);

/* The number of bodies a saved state holds (from its "bodies" section). */
pbfcl_status pbfcl_shape_match_state_count(pbfcl_state_read_fn get, void *ctx, size_t *bodies);

/* Replaces the bodies by the ones saved in the sections (none if the state has none). */
pbfcl_status pbfcl_shape_match_state_load(pbfcl_shape_match *sm, pbfcl_state_read_fn get,
                                          void *ctx);

/* The bodies as an attachment of a simulation (attachment.h): its state a pbfcl_shape_match. */
extern const pbfcl_attachment pbfcl_shape_match_attachment;

#endif
