/* Checkpoints of `pbfcl run`: the whole state of a solver at a step in one binary file,
 * written whole through a temporary file and a rename, and verified when read. The state
 * comes from the public API (pbfcl_solver_save_state); the file adds what the run needs to
 * start again: the scene's name and parameters, the step and the simulated time.
 *
 * Format (all integers little-endian):
 *   "PBFCLCKP" | u32 format version | char[16] pbfcl version | u64 particles | i64 step |
 *   f64 time | char[64] scene name | u32 parameter bytes | pbfcl_scene_params |
 *   pbfcl_solver_params | sections... | "end" section | u64 FNV-1a checksum of every byte
 *   before it
 * where a section is u32 name length | name | u64 bytes | data: pbfcl_solver_save_state's
 * (particles, bodies, paths), then pbfcl_scene_setup_save_state's (the scene, the emitters'
 * progress), then the run's ("frame_ids": the persistent id of each particle in the frames,
 * "next_frame_id": the id the next emitted particle gets).
 *
 * Format 5 (pbfcl 0.3) added the section "distances" (the count of distance constraints,
 * followed by "distance_pairs" and "distance_rest" when there are any) and parameters
 * (solver.multilevel): a file of format 4 (pbfcl 0.2) is refused with its format. Format 6
 * added the sections "triangles" (the count of the triangles the wind acts on, followed by
 * "triangle_ids" when there are any), the parameters wind_x, wind_y, wind_z, drag and lift, a
 * cloth's tear in the scene, the collision shapes ("shapes", then "shape_entries",
 * "shape_planes", "shape_triangles" and "shape_forces" when there are any;
 * colliders/colliders_state.h) and a scene collider's resolution: a file of format 5 is refused
 * with its format (its scene section has another size, and a resume made its shapes again only
 * within float rounding). Format 7
 * added the section "inflatables" (their count, followed by "inflatable_triangle_counts",
 * "inflatable_triangles" and "inflatable_params" when there are any) and the scene's
 * inflatables: a file of format 6 is refused with its format. Format 8 added the section
 * "attachments" (their count, followed by "attachment_particles", "attachment_targets",
 * "attachment_points", "attachment_anchors" and "attachment_lengths" when there are any), a
 * cloth's attach in the scene, and the section "tear_limits" (the count of solid groups with a
 * tear limit, followed by "tear_limit_values" when there are any), so that a resumed run tears
 * as the whole one does: a file of format 7 is refused with its format. */
#ifndef PBFCL_CHECKPOINT_H
#define PBFCL_CHECKPOINT_H

#include "pbfcl.h"

#include <stdint.h>

#define PBFCL_CHECKPOINT_MAGIC "PBFCLCKP"
#define PBFCL_CHECKPOINT_FORMAT 8u

/* The checksum: FNV-1a (64 bit) from this start, over every byte before the checksum. */
#define PBFCL_CHECKPOINT_HASH_START 14695981039346656037ull
void pbfcl_checkpoint_hash(uint64_t *h, const void *data, size_t bytes);

/* What a checkpoint's header says. */
typedef struct pbfcl_checkpoint_info {
    unsigned format;
    char version[16]; /* pbfcl's version that wrote it */
    size_t n;         /* particles */
    long long step;   /* the step it holds the state after */
    double time;      /* simulated time, s */
    char name[64];    /* the scene's name */
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
} pbfcl_checkpoint_info;

/* A checkpoint read into memory and verified. */
typedef struct pbfcl_checkpoint pbfcl_checkpoint;

/* What a run keeps beside the solver's state. */
typedef struct pbfcl_checkpoint_run {
    const pbfcl_scene_setup *setup; /* the scene, with its emitters' progress */
    const unsigned *ids;            /* the frames' id of each particle, in the caller's order */
    unsigned next_id;               /* the id of the next emitted particle (never reused) */
} pbfcl_checkpoint_run;

/* Writes the state of solver and of the run (of the scene called name) after step (simulated
 * time) to path; the file appears whole or not at all. */
pbfcl_status pbfcl_checkpoint_write(const char *path, pbfcl_solver *solver,
                                    const pbfcl_checkpoint_run *run, const char *name,
                                    long long step, double time);

/* Writes the state of a solver: its sections (pbfcl_solver_save_state's) through write. */
typedef pbfcl_status (*pbfcl_checkpoint_save_fn)(void *ctx, pbfcl_state_write_fn write, void *user);

/* pbfcl_checkpoint_write for a state that save writes (n particles, the parameters scene and
 * solver): a simulation split over ranks writes one device's file through it. */
pbfcl_status pbfcl_checkpoint_write_with(const char *path, size_t n,
                                         const pbfcl_scene_params *scene,
                                         const pbfcl_solver_params *solver,
                                         pbfcl_checkpoint_save_fn save, void *save_ctx,
                                         const pbfcl_checkpoint_run *run, const char *name,
                                         long long step, double time);

/* Reads and verifies path: the magic, the format and a particle count that the file's size
 * can hold before the rest is read (a 40 GB file of another kind is refused at once), then
 * the checksum, the header's count, step and time, and the sections' names and sizes; on
 * failure says what is wrong with the file. The sections' content is checked by the
 * restore functions below. */
pbfcl_status pbfcl_checkpoint_read(const char *path, pbfcl_checkpoint **out,
                                   pbfcl_checkpoint_info *info);

/* The same for a checkpoint's size bytes in memory (name names it in messages); the data is
 * copied. */
pbfcl_status pbfcl_checkpoint_parse(const char *name, const void *data, size_t size,
                                    pbfcl_checkpoint **out, pbfcl_checkpoint_info *info);

/* The path (or name) of a read checkpoint. */
const char *pbfcl_checkpoint_path(const pbfcl_checkpoint *c);

/* The size of a read checkpoint, bytes: no section of it can hold more. */
size_t pbfcl_checkpoint_size(const pbfcl_checkpoint *c);

/* A pbfcl_state_read_fn over a read checkpoint (ctx): copies section name, which must hold
 * exactly bytes bytes. */
pbfcl_status pbfcl_checkpoint_section(void *ctx, const char *name, void *data, size_t bytes);

/* Restores the saved state into solver (empty, with room for the checkpoint's particles). */
pbfcl_status pbfcl_checkpoint_restore(pbfcl_checkpoint *c, pbfcl_solver *solver);

/* Makes the scene setup saved in the checkpoint (the scene and its emitters' progress), and
 * checks that it is the scene the header names; a difference is named. */
pbfcl_status pbfcl_checkpoint_restore_setup(pbfcl_checkpoint *c, const pbfcl_checkpoint_info *info,
                                            pbfcl_scene_setup **setup);

/* Checks that the restored scene and solver have as many bodies; a difference is named. */
pbfcl_status pbfcl_checkpoint_check_bodies(const pbfcl_checkpoint *c,
                                           const pbfcl_scene_setup *setup,
                                           const pbfcl_solver *solver);

/* Reads the frames' ids of the n particles and the next id, and checks them: the next id n
 * to most (the ids a run of the scene hands out, pbfcl_scene_setup_capacity), every id below
 * it and none twice. */
pbfcl_status pbfcl_checkpoint_restore_ids(pbfcl_checkpoint *c, unsigned *ids, size_t n, size_t most,
                                          unsigned *next_id);

/* Frees a read checkpoint; accepts NULL. */
void pbfcl_checkpoint_free(pbfcl_checkpoint *c);

#endif
