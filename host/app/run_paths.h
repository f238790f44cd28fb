/* The files of a command compared before it starts: no output is another output, an input
 * or a file its output folder's frames take, after resolving links. For `pbfcl run` the one
 * exception: --checkpoint may name the checkpoint --resume reads (the run continues it, and
 * the file is replaced whole); `pbfcl demo` checks --screenshot and --record the same way. */
#ifndef PBFCL_RUN_PATHS_H
#define PBFCL_RUN_PATHS_H

#include "export_ply.h"
#include "pbfcl.h"

#include <stdbool.h>

/* The name of the file in an export folder that lists the checkpoints written by the run
 * whose frames the folder holds (see run_outputs_check). */
#define PBFCL_LINEAGE_NAME ".pbfcl-checkpoints"

/* One file (or folder) a command reads or writes. */
typedef struct path_role {
    const char *option; /* e.g. "--stats" */
    const char *path;   /* NULL: not given */
    const char *input;  /* for an input, what it is ("scene file"); NULL for an output */
    const char *may_be; /* the option of an input this output may replace, or NULL */
} path_role;

/* A folder output whose files of some names the command writes. */
typedef struct path_folder {
    int role;                        /* its index in the roles; -1: none */
    bool (*holds)(const char *name); /* true for a name the command writes there */
    const char *names;               /* those names, for the message */
} path_folder;

/* Refuses (PBFCL_ERR_BAD_ARGUMENT, naming both options and paths) an output that is the same
 * file as another role (same device and inode where both exist, else the same resolved name;
 * links followed, "." and ".." removed), unless it is the input its may_be names, and a role
 * inside the folder under a name the folder's files take. */
pbfcl_status paths_check(const path_role *roles, int count, const path_folder *folder);

/* The paths a run reads and writes (NULL: not given). */
typedef struct run_paths {
    const char *scene, *resume;           /* inputs */
    const char *stats, *checkpoint, *dir; /* outputs; dir: --export */
} run_paths;

/* paths_check for `pbfcl run`: the export folder's names are run_is_export_name's. */
pbfcl_status run_paths_check(const run_paths *p);

/* The step of a frame file name "frame_NNNNN.ply|vtu" or "mesh_NNNNN.ply|vtp" (its format in
 * *format), or -1. */
long long run_frame_step(const char *name, pbfcl_export_format *format);

/* True for the names a run writes into its export folder: frames and meshes, the collection,
 * bodies.csv, shapes.csv and the shapes' OBJ files, and the list of checkpoints. */
bool run_is_export_name(const char *name);

#endif
