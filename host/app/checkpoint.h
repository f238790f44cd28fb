/* Checkpoints of `pbfcl run`: the whole state of a simulation at a step in one binary file,
 * written whole through a temporary file and a rename, and verified when read.
 *
 * Format (all integers little-endian):
 *   "PBFCLCKP" | u32 format version | char[16] pbfcl version | u64 particles | i64 step |
 *   f64 time | u32 scene bytes | the scene | sections... | "end" section |
 *   u64 FNV-1a checksum of every byte before it
 * where a section is u32 name length | name | u64 bytes | data (pbfcl_sim_state_save). */
#ifndef PBFCL_CHECKPOINT_H
#define PBFCL_CHECKPOINT_H

#include "sim.h"

#define PBFCL_CHECKPOINT_MAGIC "PBFCLCKP"
#define PBFCL_CHECKPOINT_FORMAT 1u

/* What a checkpoint's header says. */
typedef struct pbfcl_checkpoint_info {
    unsigned format;
    char version[16]; /* pbfcl's version that wrote it */
    size_t n;         /* particles */
    long long step;   /* the step it holds the state after */
    double time;      /* simulated time, s */
    pbfcl_scene scene;
} pbfcl_checkpoint_info;

/* A checkpoint read into memory and verified. */
typedef struct pbfcl_checkpoint pbfcl_checkpoint;

/* Writes the state of sim after step (simulated time) to path; the file appears whole or
 * not at all. */
pbfcl_status pbfcl_checkpoint_write(const char *path, pbfcl_sim *sim, long long step, double time);

/* Reads and verifies path (magic, format version, size, checksum, sections); on failure says
 * what is wrong with the file. */
pbfcl_status pbfcl_checkpoint_read(const char *path, pbfcl_checkpoint **out,
                                   pbfcl_checkpoint_info *info);

/* The saved positions (xyz triples of n particles), to create the simulation to restore. */
pbfcl_status pbfcl_checkpoint_positions(const pbfcl_checkpoint *c, float *pos3);

/* Restores the saved state into sim (created with the checkpoint's scene and positions). */
pbfcl_status pbfcl_checkpoint_restore(pbfcl_checkpoint *c, pbfcl_sim *sim);

/* Frees a read checkpoint; accepts NULL. */
void pbfcl_checkpoint_free(pbfcl_checkpoint *c);

#endif
