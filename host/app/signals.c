/* SIGINT / SIGTERM: recorded by the handler, acted on by the run after its current step. */
#define _POSIX_C_SOURCE 200809L
#include "signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
    if (caught) { /* a second signal: stop now */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    caught = sig;
}

void pbfcl_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* a write in progress completes */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int pbfcl_signals_caught(void)
{
    return caught;
}

void pbfcl_signals_restore(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}
