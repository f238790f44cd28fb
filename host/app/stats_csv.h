/* The per-step statistics file of `pbfcl run --stats`: a CSV with a fixed header, created
 * once the run has started (never replacing an existing file unless asked), one whole row
 * per step: a row that cannot be written whole is cut off again. */
#ifndef PBFCL_STATS_CSV_H
#define PBFCL_STATS_CSV_H

#include "runtime/pbfcl_error.h"
#include "row_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* The CSV header line, without the newline. */
#define PBFCL_STATS_CSV_HEADER                                                                     \
    "step,time,kinetic_energy,density_error_avg,density_error_max,max_speed,neighbors_avg,"        \
    "neighbors_max,outside,nan"

/* An open statistics file. */
typedef struct pbfcl_stats_csv {
    pbfcl_row_file file;
} pbfcl_stats_csv;

/* Checks, without creating anything, that path could be created: its directory exists and
 * is writable, and it names no existing file unless replace; says why not. */
pbfcl_status pbfcl_stats_csv_check(const char *path, bool replace);

/* Creates path and writes the header; an existing file is an error unless replace (then it
 * is truncated). A header that cannot be written leaves no file. Says why if it fails. */
pbfcl_status pbfcl_stats_csv_open(pbfcl_stats_csv *c, const char *path, bool replace);

/* Appends one row: step index, simulated time (s) and the step's statistics. The row is
 * written with one write; if it cannot be written whole, the file is cut back to its whole
 * rows and the error reported. */
pbfcl_status pbfcl_stats_csv_row(pbfcl_stats_csv *c, long long step, double time,
                                 const pbfcl_stats *s);

/* Closes the file (checking the final write); if remove_file, deletes it. Accepts a zeroed
 * or closed struct. */
pbfcl_status pbfcl_stats_csv_close(pbfcl_stats_csv *c, int remove_file);

#endif
