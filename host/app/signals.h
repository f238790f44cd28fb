/* Stopping a run cleanly on Ctrl-C (SIGINT) or SIGTERM: the handler only records the signal;
 * the run checks it after each step, then writes its checkpoint, closes its files and prints
 * its summary. A second signal ends the program at once. */
#ifndef PBFCL_SIGNALS_H
#define PBFCL_SIGNALS_H

/* Installs the handlers for SIGINT and SIGTERM. */
void pbfcl_signals_install(void);

/* The signal that asked the run to stop (SIGINT or SIGTERM), or 0. */
int pbfcl_signals_caught(void);

/* Restores the default handlers. */
void pbfcl_signals_restore(void);

#endif
