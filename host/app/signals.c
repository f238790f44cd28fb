/* The signals that end a run: recorded by the handler, acted on by the run after its current
 * step (signals.h). */
#define _POSIX_C_SOURCE 200809L
#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define STOP_COUNT (sizeof stop_signals / sizeof stop_signals[0])

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
    if (sig == SIGPIPE) { /* every write to the closed pipe raises it again: never fatal */
        if (!caught)
            caught = sig;
        return;
    }
    if (caught && caught != SIGPIPE) { /* a second signal: stop now */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    caught = sig;
}

void pbfcl_signals_install(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* a write in progress completes */
    sigset_t unblock;
    sigemptyset(&unblock);
    for (size_t k = 0; k < STOP_COUNT; k++) {
        int sig = stop_signals[k];
        if (sig == SIGHUP && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* nohup: the run is meant to outlive the terminal */
        sigaction(sig, &sa, NULL);
        sigaddset(&unblock, sig);
    }
    sigprocmask(SIG_UNBLOCK, &unblock, NULL); /* a signal pending since the start arrives now */
}

int pbfcl_signals_caught(void)
{
    return caught;
}

void pbfcl_signals_check_pipe(FILE *f)
{
    if (ferror(f) && errno == EPIPE && !caught)
        caught = SIGPIPE;
}

const char *pbfcl_signals_name(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    case SIGPIPE:
        return "SIGPIPE";
    default:
        return "a signal";
    }
}

void pbfcl_signals_restore(void)
{
    for (size_t k = 0; k < STOP_COUNT; k++) {
        struct sigaction old;
        int sig = stop_signals[k];
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == on_signal) /* SIGPIPE: EPIPE */
            signal(sig, sig == SIGPIPE ? SIG_IGN : SIG_DFL); /* for main's last flush */
    }
}
