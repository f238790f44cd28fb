/* Stopping a run cleanly on any signal that ends it: Ctrl-C (SIGINT), SIGTERM, a closed
 * terminal (SIGHUP) and a closed pipe (SIGPIPE, or EPIPE on standard output). The handler
 * only records the signal; the run checks it after each step (and once before the first),
 * then writes its checkpoint, closes its files and prints its summary. A second signal ends
 * the program at once, except SIGPIPE (every later write to the closed pipe raises it). */
#ifndef PBFCL_SIGNALS_H
#define PBFCL_SIGNALS_H

#include <stdio.h>

/* Installs the handlers and unblocks those signals (a parent may have blocked them); a
 * SIGHUP the parent set to be ignored (nohup) stays ignored. */
void pbfcl_signals_install(void);

/* The signal that asked the run to stop, or 0. */
int pbfcl_signals_caught(void);

/* Records SIGPIPE if the last write to f failed with EPIPE (the reader has gone). */
void pbfcl_signals_check_pipe(FILE *f);

/* The signal's name ("SIGINT", "SIGHUP", ...). */
const char *pbfcl_signals_name(int sig);

/* Restores the default handlers; SIGPIPE is ignored instead, so that writing what is left
 * of standard output to a closed pipe is an error main reports, not the end of the program. */
void pbfcl_signals_restore(void);

#endif
