/* Names and messages for pbfcl and OpenCL error codes, and the reporting helpers. */
#include "runtime/pbfcl_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *pbfcl_status_name(pbfcl_status s)
{
    switch (s) {
#define PBFCL_NAME_(name, msg)                                                                     \
    case name:                                                                                     \
        return #name;
        PBFCL_ERRORS(PBFCL_NAME_)
#undef PBFCL_NAME_
    }
    return "PBFCL_ERR_UNKNOWN";
}

const char *pbfcl_status_message(pbfcl_status s)
{
    switch (s) {
#define PBFCL_MSG_(name, msg)                                                                      \
    case name:                                                                                     \
        return msg;
        PBFCL_ERRORS(PBFCL_MSG_)
#undef PBFCL_MSG_
    }
    return "unknown error";
}

#define PBFCL_CL_ERRORS(X)                                                                         \
    X(CL_SUCCESS)                                                                                  \
    X(CL_DEVICE_NOT_FOUND)                                                                         \
    X(CL_DEVICE_NOT_AVAILABLE)                                                                     \
    X(CL_COMPILER_NOT_AVAILABLE)                                                                   \
    X(CL_MEM_OBJECT_ALLOCATION_FAILURE)                                                            \
    X(CL_OUT_OF_RESOURCES)                                                                         \
    X(CL_OUT_OF_HOST_MEMORY)                                                                       \
    X(CL_PROFILING_INFO_NOT_AVAILABLE)                                                             \
    X(CL_MEM_COPY_OVERLAP)                                                                         \
    X(CL_IMAGE_FORMAT_MISMATCH)                                                                    \
    X(CL_IMAGE_FORMAT_NOT_SUPPORTED)                                                               \
    X(CL_BUILD_PROGRAM_FAILURE)                                                                    \
    X(CL_MAP_FAILURE)                                                                              \
    X(CL_MISALIGNED_SUB_BUFFER_OFFSET)                                                             \
    X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)                                                \
    X(CL_COMPILE_PROGRAM_FAILURE)                                                                  \
    X(CL_LINKER_NOT_AVAILABLE)                                                                     \
    X(CL_LINK_PROGRAM_FAILURE)                                                                     \
    X(CL_DEVICE_PARTITION_FAILED)                                                                  \
    X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)                                                            \
    X(CL_INVALID_VALUE)                                                                            \
    X(CL_INVALID_DEVICE_TYPE)                                                                      \
    X(CL_INVALID_PLATFORM)                                                                         \
    X(CL_INVALID_DEVICE)                                                                           \
    X(CL_INVALID_CONTEXT)                                                                          \
    X(CL_INVALID_QUEUE_PROPERTIES)                                                                 \
    X(CL_INVALID_COMMAND_QUEUE)                                                                    \
    X(CL_INVALID_HOST_PTR)                                                                         \
    X(CL_INVALID_MEM_OBJECT)                                                                       \
    X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)                                                          \
    X(CL_INVALID_IMAGE_SIZE)                                                                       \
    X(CL_INVALID_SAMPLER)                                                                          \
    X(CL_INVALID_BINARY)                                                                           \
    X(CL_INVALID_BUILD_OPTIONS)                                                                    \
    X(CL_INVALID_PROGRAM)                                                                          \
    X(CL_INVALID_PROGRAM_EXECUTABLE)                                                               \
    X(CL_INVALID_KERNEL_NAME)                                                                      \
    X(CL_INVALID_KERNEL_DEFINITION)                                                                \
    X(CL_INVALID_KERNEL)                                                                           \
    X(CL_INVALID_ARG_INDEX)                                                                        \
    X(CL_INVALID_ARG_VALUE)                                                                        \
    X(CL_INVALID_ARG_SIZE)                                                                         \
    X(CL_INVALID_KERNEL_ARGS)                                                                      \
    X(CL_INVALID_WORK_DIMENSION)                                                                   \
    X(CL_INVALID_WORK_GROUP_SIZE)                                                                  \
    X(CL_INVALID_WORK_ITEM_SIZE)                                                                   \
    X(CL_INVALID_GLOBAL_OFFSET)                                                                    \
    X(CL_INVALID_EVENT_WAIT_LIST)                                                                  \
    X(CL_INVALID_EVENT)                                                                            \
    X(CL_INVALID_OPERATION)                                                                        \
    X(CL_INVALID_GL_OBJECT)                                                                        \
    X(CL_INVALID_BUFFER_SIZE)                                                                      \
    X(CL_INVALID_MIP_LEVEL)                                                                        \
    X(CL_INVALID_GLOBAL_WORK_SIZE)                                                                 \
    X(CL_INVALID_PROPERTY)                                                                         \
    X(CL_INVALID_IMAGE_DESCRIPTOR)                                                                 \
    X(CL_INVALID_COMPILER_OPTIONS)                                                                 \
    X(CL_INVALID_LINKER_OPTIONS)                                                                   \
    X(CL_INVALID_DEVICE_PARTITION_COUNT)

const char *pbfcl_cl_error_name(cl_int err)
{
    switch (err) {
#define PBFCL_CLNAME_(code)                                                                        \
    case code:                                                                                     \
        return #code;
        PBFCL_CL_ERRORS(PBFCL_CLNAME_)
#undef PBFCL_CLNAME_
    case -1000:
        return "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR";
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    return "CL_UNKNOWN_ERROR";
}

/* The process-wide log sink (pbfcl_set_log). */
static pbfcl_log_fn log_fn;
static void *log_user;
static pbfcl_log_level log_max = PBFCL_LOG_WARNING;

void pbfcl_set_log(pbfcl_log_fn fn, void *user, pbfcl_log_level max_level)
{
    log_fn = fn;
    log_user = user;
    log_max = max_level;
}

void pbfcl_log(pbfcl_log_level level, const char *message)
{
    if (level > log_max)
        return;
    if (log_fn) {
        log_fn(level, message, log_user);
        return;
    }
    static const char *const prefix[] = {"pbfcl: error: ", "pbfcl: warning: ", ""};
    fprintf(stderr, "%s%s\n", prefix[level], message);
}

static void vlogf(pbfcl_log_level level, const char *fmt, va_list ap)
{
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    pbfcl_log(level, buf);
}

void pbfcl_report_cl(cl_int err, const char *call, const char *file, int line)
{
    pbfcl_errorf("%s:%d: %s failed: %s (%d)", file, line, call, pbfcl_cl_error_name(err), (int)err);
}

void pbfcl_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlogf(PBFCL_LOG_ERROR, fmt, ap);
    va_end(ap);
}

void pbfcl_warnf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlogf(PBFCL_LOG_WARNING, fmt, ap);
    va_end(ap);
}

void pbfcl_infof(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlogf(PBFCL_LOG_INFO, fmt, ap);
    va_end(ap);
}

void pbfcl_msg_addf(pbfcl_msg *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return;
    if (m->len + (size_t)need + 1 > m->cap) {
        size_t cap = (m->len + (size_t)need + 1) * 2;
        char *grown = realloc(m->text, cap);
        if (!grown)
            return;
        m->text = grown;
        m->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(m->text + m->len, m->cap - m->len, fmt, ap);
    va_end(ap);
    m->len += (size_t)need;
}

void pbfcl_msg_log(pbfcl_msg *m, pbfcl_log_level level)
{
    while (m->len > 0 && m->text[m->len - 1] == '\n')
        m->text[--m->len] = '\0';
    pbfcl_log(level, m->text ? m->text : "");
    free(m->text);
    m->text = NULL;
    m->len = m->cap = 0;
}
