/* The environment the pbfcl program reads (the library reads none): PBFCL_DEVICE,
 * PBFCL_KERNEL_DIR and PBFCL_TRACE_BUILDS, passed on to the library as arguments. The
 * developer tool (tools/dev) applies the same to the core's own context. */
#ifndef PBFCL_APP_ENV_H
#define PBFCL_APP_ENV_H

#include "pbfcl.h"

#include <stdbool.h>

/* The program's own messages, in the library's stderr format ("pbfcl: error: ..."). */
void app_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* $PBFCL_DEVICE, or NULL when unset or empty: the device when --device is not given. */
const char *app_env_device(void);

/* True when $PBFCL_TRACE_BUILDS asks for the builds to be logged (and lets the library's INFO
 * messages through to stderr). */
bool app_trace_builds(void);

/* A context description: device (NULL: $PBFCL_DEVICE, else the library's choice), the kernel
 * override directory $PBFCL_KERNEL_DIR and build tracing ($PBFCL_TRACE_BUILDS, which also lets
 * the INFO messages through to stderr). */
void app_context_desc(pbfcl_context_desc *d, const char *device);

#endif
