/* A timed step's pbfcl_timers as a dict. The stages are read by name through the library's
 * stage table (stage_values, the one function that knows how), so a change of how the API
 * names its stages touches only that function. */
#include "pbfcl_py.h"

/* Each stage's ms into d by its name. */
static int stage_values(const pbfcl_timers *t, PyObject *d)
{
    for (int i = 0; i < pbfcl_timer_count(); i++) {
        PyObject *ms = PyFloat_FromDouble(pbfcl_timer_value(t, i));
        int rc = ms ? PyDict_SetItemString(d, pbfcl_timer_name(i), ms) : -1;
        Py_XDECREF(ms);
        if (rc < 0)
            return -1;
    }
    return 0;
}

PyObject *pbfcl_py_timers_dict(const pbfcl_timers *t)
{
    PyObject *d = PyDict_New();
    if (!d || stage_values(t, d) < 0) {
        Py_XDECREF(d);
        return NULL;
    }
    PyObject *total = PyFloat_FromDouble(t->total), *substeps = PyLong_FromLong(t->substeps),
             *kernels = PyLong_FromLong(t->kernels);
    int rc = total && substeps && kernels && PyDict_SetItemString(d, "total", total) == 0 &&
                     PyDict_SetItemString(d, "substeps", substeps) == 0 &&
                     PyDict_SetItemString(d, "kernels", kernels) == 0
                 ? 0
                 : -1;
    Py_XDECREF(total);
    Py_XDECREF(substeps);
    Py_XDECREF(kernels);
    if (rc < 0)
        Py_CLEAR(d);
    return d;
}
