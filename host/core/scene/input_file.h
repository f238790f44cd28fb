/* Reading an input file whole (scene files, OBJ meshes): only regular files (a FIFO or a
 * directory is refused without blocking), up to a size limit, NUL-terminated. */
#ifndef PBFCL_INPUT_FILE_H
#define PBFCL_INPUT_FILE_H

#include "runtime/pbfcl_error.h"

#include <stddef.h>

/* Reads the file at path into *out (malloc'ed, NUL-terminated; free it); a NUL byte in the
 * file is an error naming the line (PBFCL_ERR_BAD_ARGUMENT). what names the kind
 * of file in messages ("scene file"), hint says what to give instead of a file that is not a
 * regular one, and max_bytes is the largest size read (a larger file is an error). A NUL byte
 * in the file is an error naming its line and column (the text would end there). */
pbfcl_status pbfcl_read_input_file(const char *path, const char *what, const char *hint,
                                   size_t max_bytes, char **out);

#endif
