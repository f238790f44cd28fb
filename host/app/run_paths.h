/* The files of `pbfcl run` compared before the run starts: no output is another output, an
 * input (the scene file, the checkpoint resumed) or a file the export folder's frames take,
 * after resolving links. The one exception: --checkpoint may name the checkpoint --resume
 * reads (the run continues it, and the file is replaced whole). */
#ifndef PBFCL_RUN_PATHS_H
#define PBFCL_RUN_PATHS_H

#include "export_ply.h"
#include "pbfcl.h"

#include <stdbool.h>

/* The name of the file in an export folder that lists the checkpoints written by the run
 * whose frames the folder holds (see run_outputs_check). */
#define PBFCL_LINEAGE_NAME ".pbfcl-checkpoints"

/* The paths a run reads and writes (NULL: not given). */
typedef struct run_paths {
    const char *scene, *resume;           /* inputs */
    const char *stats, *checkpoint, *dir; /* outputs; dir: --export */
} run_paths;

/* Refuses (PBFCL_ERR_BAD_ARGUMENT, naming both options and paths) two paths that are the
 * same file (same device and inode where it exists, else the same resolved directory and
 * name), and an output or input inside dir under a name the export writes. */
pbfcl_status run_paths_check(const run_paths *p);

/* The step of a frame file name "frame_NNNNN.ply|vtu" (its format in *format), or -1. */
long long run_frame_step(const char *name, pbfcl_export_format *format);

/* True for the names a run writes into its export folder: frames, the collection,
 * bodies.csv and the list of checkpoints. */
bool run_is_export_name(const char *name);

#endif
