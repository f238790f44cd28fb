/* The per-step statistics file of `pbfcl run --stats`: a CSV with a fixed header, opened
 * (and so checked) before the run and flushed after every row. */
#ifndef PBFCL_STATS_CSV_H
#define PBFCL_STATS_CSV_H

#include "sim.h"

#include <stdio.h>

/* The CSV header line, without the newline. */
#define PBFCL_STATS_CSV_HEADER                                                                     \
    "step,time,kinetic_energy,density_error_avg,density_error_max,max_speed,neighbors_avg,"        \
    "neighbors_max,outside,nan"

/* An open statistics file. */
typedef struct pbfcl_stats_csv {
    FILE *file;
    char path[1024];
    long long rows; /* data rows written */
} pbfcl_stats_csv;

/* Creates (truncates) path and writes the header; says why if it cannot. */
pbfcl_status pbfcl_stats_csv_open(pbfcl_stats_csv *c, const char *path);

/* Appends one row: step index, simulated time (s) and the step's statistics; flushes. */
pbfcl_status pbfcl_stats_csv_row(pbfcl_stats_csv *c, long long step, double time,
                                 const pbfcl_sim_stats *s);

/* Closes the file (checking the final write); if remove_file, deletes it. Accepts a
 * zeroed struct. */
pbfcl_status pbfcl_stats_csv_close(pbfcl_stats_csv *c, int remove_file);

#endif
