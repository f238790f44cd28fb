/* A file of whole rows after one header line: each append goes out with one write(2), and an
 * append that cannot be written whole is cut back with ftruncate, so the file only ever holds
 * whole rows. The statistics CSV and the body motion CSV are written through it. */
#ifndef PBFCL_ROW_FILE_H
#define PBFCL_ROW_FILE_H

#include "runtime/pbfcl_error.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What a row file holds, for its messages. */
typedef struct pbfcl_row_file_kind {
    const char *what;       /* e.g. "statistics file" */
    const char *units;      /* what one append adds, plural, e.g. "rows" */
    const char *header;     /* the first line, with its newline */
    const char *exists_fix; /* follows "'path' already exists" in the message */
} pbfcl_row_file_kind;

/* An open row file. */
typedef struct pbfcl_row_file {
    const pbfcl_row_file_kind *kind;
    int fd;    /* -1 when closed (a zeroed struct counts as closed: see open) */
    bool open; /* fd is valid */
    char path[4200];
    off_t size;      /* bytes of whole appends written, the header included */
    long long count; /* appends written, the header not included */
} pbfcl_row_file;

/* Creates path and writes the kind's header; an existing file is an error unless replace
 * (then it is truncated). A header that cannot be written leaves no file. Says why if it
 * fails. */
pbfcl_status pbfcl_row_file_open(pbfcl_row_file *f, const pbfcl_row_file_kind *kind,
                                 const char *path, bool replace);
/* Takes over fd, an open file of path whose first keep bytes are whole rows and whose write
 * position is at keep (e.g. a file being continued). */
void pbfcl_row_file_adopt(pbfcl_row_file *f, const pbfcl_row_file_kind *kind, const char *path,
                          int fd, off_t keep);
/* Opens path to continue a run resumed after step: keeps the header and the rows (each led by
 * its step) of steps up to step and cuts off the rest; creates the file if it is missing;
 * refuses a file whose first line is not the kind's header. */
pbfcl_status pbfcl_row_file_resume(pbfcl_row_file *f, const pbfcl_row_file_kind *kind,
                                   const char *path, long long step);
/* Appends len bytes with one write; if they cannot be written whole, cuts the file back to
 * its whole appends and reports the error. */
pbfcl_status pbfcl_row_file_append(pbfcl_row_file *f, const char *buf, size_t len);
/* Closes the file (checking the final write); if remove_file, deletes it. Accepts a zeroed
 * or closed struct. */
pbfcl_status pbfcl_row_file_close(pbfcl_row_file *f, bool remove_file);

#endif
