/* Run-time data files (shaders in shaders/, kernels in an override folder): finding their
 * folder beside the executable, in its installed share/pbfcl/, in the working directory or the
 * source tree, and reading them whole. */
#ifndef PBFCL_DATA_FILES_H
#define PBFCL_DATA_FILES_H

#include "runtime/pbfcl_error.h"

#include <stddef.h>

/* Where to look for one kind of data folder. */
typedef struct pbfcl_data_dir_spec {
    const char *what;       /* e.g. "kernel", for messages */
    const char *env_var;    /* e.g. "PBFCL_SHADER_DIR", named in messages */
    const char *env_value;  /* its value, read by the program (the library reads no
                               environment): if set, the only place tried */
    const char *subdir;     /* e.g. "cl": tried beside the executable and in ./ */
    const char *probe_file; /* a file the folder must hold, e.g. "pbfcl_shared.h" */
    const char *source_dir; /* the source tree's folder, tried last ("" for none) */
} pbfcl_data_dir_spec;

/* Finds the folder; on failure logs every path tried and how to point at it. */
pbfcl_status pbfcl_find_data_dir(const pbfcl_data_dir_spec *spec, char *dir, size_t size);

/* Reads a whole file into a malloc'ed, NUL-terminated string (free it); NULL with errno set on
 * failure. len_out may be NULL. */
char *pbfcl_read_text_file(const char *path, size_t *len_out);

#endif
