/* The environment the pbfcl program reads (the library reads none): PBFCL_DEVICE,
 * PBFCL_KERNEL_DIR and PBFCL_TRACE_BUILDS, passed on to the library as arguments. */
#ifndef PBFCL_APP_ENV_H
#define PBFCL_APP_ENV_H

#include "clrt.h"
#include "pbfcl.h"

/* The program's own messages, in the library's stderr format ("pbfcl: error: ..."). */
void app_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* $PBFCL_DEVICE, or NULL when unset or empty: the device when --device is not given. */
const char *app_env_device(void);

/* A context description: device (NULL: $PBFCL_DEVICE, else the library's choice), the kernel
 * override directory $PBFCL_KERNEL_DIR and build tracing ($PBFCL_TRACE_BUILDS, which also lets
 * the INFO messages through to stderr). */
void app_context_desc(pbfcl_context_desc *d, const char *device);

/* Opens a core OpenCL context the same way (for the developer commands that use the core's
 * internals: bench-sort, kernel-builds). */
pbfcl_status app_cl_open(pbfcl_cl *cl, const char *device);

/* Applies $PBFCL_KERNEL_DIR and $PBFCL_TRACE_BUILDS to an opened core context. */
pbfcl_status app_cl_configure(pbfcl_cl *cl);

#endif
