/* Kinematic obstacles: static particles moved along prescribed paths (a constant velocity and
 * angular velocity about a centre until a stop time, or keys of displacement and rotation at
 * given times), by the stage kinematic_path of cl/kinematic.cl. The particles are named by
 * persistent id, as the bodies' are. */
#ifndef PBFCL_KINEMATIC_H
#define PBFCL_KINEMATIC_H

#include "bodies/attachment.h"
#include "runtime/build_options.h"
#include "runtime/clrt.h"
#include "runtime/profile.h"
#include "scene/scene.h"

/* One path. A particle of rest offset d from center is at time t at center + p(t) + R(r(t)) d,
 * R(r) the rotation by |r| about r / |r|. With rates (key_count 0): p = velocity t',
 * r = angular_velocity t', t' = min(t, stop). With keys (rates 0): p and r interpolated linearly
 * from (0, 0) at time 0 through the keys; held after the last key, or with repeat taken at t
 * modulo the last key's time (whose pose must then be the start's). */
typedef struct pbfcl_kinematic_path {
    float center[3], velocity[3], angular_velocity[3]; /* m, m/s, rad/s */
    float stop;                                        /* s; FLT_MAX: never */
    int key_count;                                     /* 0 to PBFCL_MAX_PATH_KEYS */
    bool repeat;
    pbfcl_path_key keys[PBFCL_MAX_PATH_KEYS]; /* times above 0, increasing */
} pbfcl_kinematic_path;

typedef struct pbfcl_kinematic {
    pbfcl_cl *cl;
    cl_program program;
    cl_kernel path;
    size_t wg;
    size_t paths, entries;
    unsigned *entry_id;      /* host copy, sorted: the persistent id of each entry */
    cl_mem entry_id_buf;     /* uint per entry, sorted */
    cl_mem entry_offset_buf; /* float4 per entry: rest offset from its path's centre, w path */
    cl_mem path_buf;         /* 4 float4 per path: (center, stop), (velocity), (angular),
                              * (first key, keys, repeat, period) */
    cl_mem key_buf;          /* 2 float4 per key, each path's start key first: (time, p), (r) */
    size_t keys;             /* keys on the device, the start keys included */
    double time;             /* s since the paths were set */
} pbfcl_kinematic;

/* The build options of cl/bodies/kinematic.cl on a device (`pbfcl-dev kernel-builds`): a
 * power-of-two work-group size up to 256. */
void pbfcl_kinematic_build_config(const pbfcl_device_info *dev, pbfcl_build_config *cfg);

/* Builds the kernel; no paths yet. */
pbfcl_status pbfcl_kinematic_create(pbfcl_kinematic *k, pbfcl_cl *cl);

/* Releases everything; accepts a zeroed or half-built struct. */
void pbfcl_kinematic_destroy(pbfcl_kinematic *k);

/* Replaces the paths and their particles: entry e names a particle by id (ids distinct), its
 * path (below paths) and its rest offset from that path's centre (xyz triples). The clock
 * restarts at 0. paths = 0 (or entries = 0) removes them all. */
pbfcl_status pbfcl_kinematic_set(pbfcl_kinematic *k, size_t paths, const pbfcl_kinematic_path *path,
                                 size_t entries, const unsigned *entry_id,
                                 const unsigned *entry_path, const float *offset3);

/* Renames the particles after a removal: id becomes new_id[id] (none of them removed). */
pbfcl_status pbfcl_kinematic_remap_ids(pbfcl_kinematic *k, const unsigned *new_id);

/* kinematic_path: advances the clock by dt and moves the static particles with an entry (of
 * the n particles: phase and id uint per slot) to their paths' positions then, into pred_buf
 * (float4 per slot). */
pbfcl_status pbfcl_kinematic_move(pbfcl_kinematic *k, size_t n, float dt, cl_mem phase_buf,
                                  cl_mem id_buf, cl_mem pred_buf, pbfcl_profile *prof,
                                  pbfcl_stage stage);

/* Saves the paths (k may be NULL: none) and their clock as named sections through put:
 * "paths" (counts and clock), then their particles, offsets, motions and keys. */
pbfcl_status pbfcl_kinematic_state_save(pbfcl_kinematic *k, pbfcl_state_write_fn put, void *ctx);

/* The number of path particles a saved state holds (from its "paths" section). */
pbfcl_status pbfcl_kinematic_state_count(pbfcl_state_read_fn get, void *ctx, size_t *entries);

/* Replaces the paths and the clock by the ones saved in the sections. */
pbfcl_status pbfcl_kinematic_state_load(pbfcl_kinematic *k, pbfcl_state_read_fn get, void *ctx);

/* The paths as an attachment of a simulation (attachment.h): its state a pbfcl_kinematic. */
extern const pbfcl_attachment pbfcl_kinematic_attachment;

#endif
