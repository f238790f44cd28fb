/* Output files that appear whole or not at all: the data goes to a temporary file beside the
 * target (same directory, so the rename cannot cross file systems), which is flushed, synced
 * and renamed over the target only when every write succeeded. */
#ifndef PBFCL_ATOMIC_FILE_H
#define PBFCL_ATOMIC_FILE_H

#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stdio.h>

/* An output file being written: write to file, then pbfcl_atomic_commit or _abort. */
typedef struct pbfcl_atomic_file {
    FILE *file;       /* the temporary file; NULL when none is open */
    char path[4096];  /* the target */
    char tmp[4200];   /* the temporary file beside it */
    const char *what; /* e.g. "PLY frame", for messages */
} pbfcl_atomic_file;

/* Creates the temporary file for path (the target is not touched yet); says why if it
 * cannot. what names the kind of file in messages. */
pbfcl_status pbfcl_atomic_open(pbfcl_atomic_file *a, const char *path, const char *what);

/* Flushes, syncs and closes the temporary file and renames it over the target; on any
 * failure removes the temporary file, leaves the target as it was and says why. */
pbfcl_status pbfcl_atomic_commit(pbfcl_atomic_file *a);

/* Closes and removes the temporary file (the target is untouched); accepts a closed one. */
void pbfcl_atomic_abort(pbfcl_atomic_file *a);

/* Removes the temporary files ".NAME.tmpPID.N" that a writer killed before its commit or
 * abort (SIGKILL, a crash, a power cut) left in dir, for the targets NAME that is_target
 * accepts (ctx passed through): only those of a process that no longer runs, never another
 * running writer's. Returns how many it removed. */
int pbfcl_atomic_remove_stale(const char *dir, bool (*is_target)(const char *name, const void *ctx),
                              const void *ctx);

/* Writes count little-endian 32-bit values (floats or uints) from values to f, byte-swapped
 * on big-endian hosts; false on a write error. */
bool pbfcl_write_le32(FILE *f, const void *values, size_t count);

#endif
