/* pbfcl's error codes and the checking macros used around every OpenCL call.
 * One X-macro table names each pbfcl error and gives its message; OpenCL codes
 * are reported by name (CL_INVALID_WORK_GROUP_SIZE, not -54). */
#ifndef PBFCL_ERROR_H
#define PBFCL_ERROR_H

#include <CL/cl.h>

#define PBFCL_ERRORS(X)                                                                            \
    X(PBFCL_OK, "no error")                                                                        \
    X(PBFCL_ERR_OPENCL, "an OpenCL call failed")                                                   \
    X(PBFCL_ERR_NO_DEVICE, "no OpenCL device found")                                               \
    X(PBFCL_ERR_BAD_DEVICE, "the requested OpenCL device does not exist")                          \
    X(PBFCL_ERR_KERNEL_FILE, "a kernel source file could not be read")                             \
    X(PBFCL_ERR_BUILD, "an OpenCL program failed to build")                                        \
    X(PBFCL_ERR_DEVICE_LIMIT, "the work does not fit the device's limits")                         \
    X(PBFCL_ERR_OUT_OF_MEMORY, "not enough memory")                                                \
    X(PBFCL_ERR_BAD_ARGUMENT, "an argument or parameter is invalid")                               \
    X(PBFCL_ERR_IO, "a file could not be read or written")                                         \
    X(PBFCL_ERR_SIMULATION, "the simulation became unstable")                                      \
    X(PBFCL_ERR_UNSUPPORTED, "the feature is not available in this build or on this system")

typedef enum pbfcl_status {
#define PBFCL_ENUM_(name, msg) name,
    PBFCL_ERRORS(PBFCL_ENUM_)
#undef PBFCL_ENUM_
} pbfcl_status;

/* The symbolic name of a pbfcl status, e.g. "PBFCL_ERR_BUILD". */
const char *pbfcl_status_name(pbfcl_status s);

/* The one-line message of a pbfcl status. */
const char *pbfcl_status_message(pbfcl_status s);

/* The symbolic name of an OpenCL error code, e.g. "CL_OUT_OF_RESOURCES". */
const char *pbfcl_cl_error_name(cl_int err);

/* Prints "file:line: call failed: CL_NAME (code)" to stderr. */
void pbfcl_report_cl(cl_int err, const char *call, const char *file, int line);

/* Prints a formatted error message to stderr, prefixed with "pbfcl: error: ". */
void pbfcl_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a formatted warning to stderr, prefixed with "pbfcl: warning: ". */
void pbfcl_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
