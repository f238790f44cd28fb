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
 * where a section is u32 name length | name | u64 bytes | data (pbfcl_solver_save_state's). */
#ifndef PBFCL_CHECKPOINT_H
#define PBFCL_CHECKPOINT_H

#include "pbfcl.h"

#define PBFCL_CHECKPOINT_MAGIC "PBFCLCKP"
#define PBFCL_CHECKPOINT_FORMAT 2u

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

/* Writes the state of solver (of the scene called name) after step (simulated time) to
 * path; the file appears whole or not at all. */
pbfcl_status pbfcl_checkpoint_write(const char *path, pbfcl_solver *solver, const char *name,
                                    long long step, double time);

/* Reads and verifies path (magic, format version, size, checksum, sections); on failure says
 * what is wrong with the file. */
pbfcl_status pbfcl_checkpoint_read(const char *path, pbfcl_checkpoint **out,
                                   pbfcl_checkpoint_info *info);

/* Restores the saved state into solver (empty, with room for the checkpoint's particles). */
pbfcl_status pbfcl_checkpoint_restore(pbfcl_checkpoint *c, pbfcl_solver *solver);

/* Frees a read checkpoint; accepts NULL. */
void pbfcl_checkpoint_free(pbfcl_checkpoint *c);

#endif
