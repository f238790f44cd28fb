/* The program's environment variables, read here and passed to the library (app_env.h). */
#include "app_env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void app_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("pbfcl: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *app_env_device(void)
{
    const char *d = getenv("PBFCL_DEVICE");
    return d && *d ? d : NULL;
}

bool app_trace_builds(void)
{
    const char *t = getenv("PBFCL_TRACE_BUILDS");
    bool on = t && *t && *t != '0';
    if (on)
        pbfcl_set_log(NULL, NULL, PBFCL_LOG_INFO);
    return on;
}

void app_context_desc(pbfcl_context_desc *d, const char *device)
{
    pbfcl_context_desc_defaults(d);
    d->device = device ? device : app_env_device();
    d->kernel_dir = getenv("PBFCL_KERNEL_DIR");
    d->trace_builds = app_trace_builds();
}
