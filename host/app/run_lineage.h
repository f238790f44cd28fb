/* Which run wrote the frames of an export folder: the folder lists (in PBFCL_LINEAGE_NAME,
 * run_paths.h) the checksum of every checkpoint the runs that wrote its frames saved, so a
 * run resumed from one of them may replace the frames after the checkpoint's step (its own
 * run's), and a run resumed from any other checkpoint is refused there unless --force. */
#ifndef PBFCL_RUN_LINEAGE_H
#define PBFCL_RUN_LINEAGE_H

#include "pbfcl.h"

#include <stdbool.h>

/* True if the export folder dir lists the checkpoint file checkpoint. */
bool run_lineage_lists(const char *dir, const char *checkpoint);

/* Starts a new list in dir (a run that starts from step 0). */
void run_lineage_reset(const char *dir);

/* Adds the checkpoint file just written to dir's list. */
pbfcl_status run_lineage_add(const char *dir, const char *checkpoint);

#endif
