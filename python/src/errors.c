/* The library's log turned into Python exceptions and warnings: errors logged during a call
 * become the message of the exception its status raises, warnings become pbfcl.Warning. */
#include "pbfcl_py.h"

#include <string.h>

PyObject *pbfcl_py_Error;
PyObject *pbfcl_py_ArgumentError;
static PyObject *pbfcl_py_Warning;

/* The messages of the current call (the module holds the GIL around every library call, so
 * one buffer serves). */
static char log_errors[8192];
static char log_warnings[4096];

static void append_line(char *buf, size_t size, const char *message)
{
    size_t used = strlen(buf);
    if (used + 2 >= size)
        return;
    snprintf(buf + used, size - used, "%s%s", used ? "\n" : "", message);
}

static void log_to_buffers(pbfcl_log_level level, const char *message, void *user)
{
    (void)user;
    if (level == PBFCL_LOG_ERROR)
        append_line(log_errors, sizeof log_errors, message);
    else if (level == PBFCL_LOG_WARNING)
        append_line(log_warnings, sizeof log_warnings, message);
}

void pbfcl_py_log_begin(void)
{
    log_errors[0] = '\0';
    log_warnings[0] = '\0';
}

/* Raises type with message and the status's name as its `status` attribute. */
static void raise_with_status(PyObject *type, const char *status, const char *message)
{
    PyObject *exc = PyObject_CallFunction(type, "s", message);
    if (!exc)
        return;
    PyObject *name = PyUnicode_FromString(status);
    if (name && PyObject_SetAttrString(exc, "status", name) == 0)
        PyErr_SetObject(type, exc);
    Py_XDECREF(name);
    Py_DECREF(exc);
}

/* Each warning line as a pbfcl.Warning; -1 if one was turned into an exception. */
static int flush_warnings(void)
{
    char *line = log_warnings;
    while (*line) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (PyErr_WarnEx(pbfcl_py_Warning, line, 1) < 0)
            return -1;
        line = end ? end + 1 : line + strlen(line);
    }
    log_warnings[0] = '\0';
    return 0;
}

int pbfcl_py_check(pbfcl_status st)
{
    if (st == PBFCL_OK)
        return flush_warnings();
    const char *text = log_errors[0] ? log_errors : pbfcl_status_message(st);
    int bad_argument =
        st == PBFCL_ERR_BAD_ARGUMENT || st == PBFCL_ERR_CAPACITY || st == PBFCL_ERR_BUFFER_SIZE;
    raise_with_status(bad_argument ? pbfcl_py_ArgumentError : pbfcl_py_Error, pbfcl_status_name(st),
                      text);
    pbfcl_py_log_begin();
    return -1;
}

int pbfcl_py_destroyed(const char *what)
{
    char message[160];
    snprintf(message, sizeof message,
             "the %s was destroyed (its destroy() or its context's); "
             "make a new one",
             what);
    raise_with_status(pbfcl_py_Error, pbfcl_status_name(PBFCL_ERR_INVALID_HANDLE), message);
    return -1;
}

int pbfcl_py_errors_init(PyObject *module)
{
    pbfcl_py_Error = PyErr_NewExceptionWithDoc(
        "pbfcl.Error",
        "A pbfcl call failed. str(e) is the library's message; e.status is the status's name "
        "(e.g. 'PBFCL_ERR_NO_DEVICE').",
        PyExc_RuntimeError, NULL);
    PyObject *bases = pbfcl_py_Error ? PyTuple_Pack(2, pbfcl_py_Error, PyExc_ValueError) : NULL;
    pbfcl_py_ArgumentError =
        bases ? PyErr_NewExceptionWithDoc("pbfcl.ArgumentError",
                                          "The library refused an argument or parameter (also a "
                                          "ValueError); str(e) says which and what it must be.",
                                          bases, NULL)
              : NULL;
    Py_XDECREF(bases);
    pbfcl_py_Warning = PyErr_NewExceptionWithDoc(
        "pbfcl.Warning", "A warning the library logged (the call succeeded).", PyExc_UserWarning,
        NULL);
    if (!pbfcl_py_ArgumentError || !pbfcl_py_Warning)
        return -1;
    Py_INCREF(pbfcl_py_Error);
    Py_INCREF(pbfcl_py_ArgumentError);
    Py_INCREF(pbfcl_py_Warning);
    if (PyModule_AddObject(module, "Error", pbfcl_py_Error) < 0 ||
        PyModule_AddObject(module, "ArgumentError", pbfcl_py_ArgumentError) < 0 ||
        PyModule_AddObject(module, "Warning", pbfcl_py_Warning) < 0)
        return -1;
    pbfcl_set_log(log_to_buffers, NULL, PBFCL_LOG_WARNING);
    return 0;
}
