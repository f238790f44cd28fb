/* pbfcl's error codes and the checking macros used around every OpenCL call.
 * One X-macro table names each pbfcl error and gives its message; OpenCL codes
 * are reported by name (CL_INVALID_WORK_GROUP_SIZE, not -54). */
#ifndef PBFCL_ERROR_H
#define PBFCL_ERROR_H

#include "pbfcl.h"

#include <CL/cl.h>
#include <stddef.h>

/* The status codes and their messages are public (include/pbfcl.h, PBFCL_STATUS_LIST); the
 * core uses the same table. */
#define PBFCL_ERRORS(X) PBFCL_STATUS_LIST(X)

/* pbfcl_cl_error_name, the name of an OpenCL error code, is public (include/pbfcl.h). */

/* Every message of the core goes through pbfcl_log: to the callback set with pbfcl_set_log,
 * or to stderr as "pbfcl: error: ..." / "pbfcl: warning: ..." when none is set. */
void pbfcl_log(pbfcl_log_level level, const char *message);

/* Logs "file:line: call failed: CL_NAME (code)" as an error. */
void pbfcl_report_cl(cl_int err, const char *call, const char *file, int line);

/* Logs a formatted error message. */
void pbfcl_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logs a formatted warning. */
void pbfcl_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logs a formatted informational message. */
void pbfcl_infof(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growing text buffer for messages of several lines (a device list, a build log), logged
 * as one message. */
typedef struct pbfcl_msg {
    char *text;
    size_t len, cap;
} pbfcl_msg;

/* Appends formatted text (allocation failures drop text, never the message). */
void pbfcl_msg_addf(pbfcl_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs the text at level and frees it. */
void pbfcl_msg_log(pbfcl_msg *m, pbfcl_log_level level);

/* Runs an OpenCL call; on failure reports it and returns PBFCL_ERR_OPENCL. */
#define PBFCL_CL_CHECK(call)                                                                       \
    do {                                                                                           \
        cl_int pbfcl_err_ = (call);                                                                \
        if (pbfcl_err_ != CL_SUCCESS) {                                                            \
            pbfcl_report_cl(pbfcl_err_, #call, __FILE__, __LINE__);                                \
            return PBFCL_ERR_OPENCL;                                                               \
        }                                                                                          \
    } while (0)

/* Runs an OpenCL call; on failure reports it, sets status and jumps to label. */
#define PBFCL_CL_TRY(status, call, label)                                                          \
    do {                                                                                           \
        cl_int pbfcl_err_ = (call);                                                                \
        if (pbfcl_err_ != CL_SUCCESS) {                                                            \
            pbfcl_report_cl(pbfcl_err_, #call, __FILE__, __LINE__);                                \
            (status) = PBFCL_ERR_OPENCL;                                                           \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

/* Checks the error out-parameter of a clCreate* call (err_var holds the code). */
#define PBFCL_CL_CREATED(err_var, what)                                                            \
    do {                                                                                           \
        if ((err_var) != CL_SUCCESS) {                                                             \
            pbfcl_report_cl((err_var), what, __FILE__, __LINE__);                                  \
            return PBFCL_ERR_OPENCL;                                                               \
        }                                                                                          \
    } while (0)

/* Propagates a non-OK pbfcl_status to the caller. */
#define PBFCL_TRY(expr)                                                                            \
    do {                                                                                           \
        pbfcl_status pbfcl_s_ = (expr);                                                            \
        if (pbfcl_s_ != PBFCL_OK)                                                                  \
            return pbfcl_s_;                                                                       \
    } while (0)

#endif
