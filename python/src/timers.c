/* A timed step's timers as a dict: each stage that ran, by the name the library gives it
 * (pbfcl_solver_timer), then the step's total, substeps and kernels. */
#include "pbfcl_py.h"

/* Each stage that ran in the last timed step: its ms into d by its name. */
static int stage_values(const pbfcl_solver *s, PyObject *d)
{
    for (int i = 0; i < pbfcl_solver_timer_count(s); i++) {
        const char *name;
        double value;
        if (PBFCL_PY_CALL(pbfcl_solver_timer(s, i, &name, &value)) < 0)
            return -1;
        PyObject *ms = PyFloat_FromDouble(value);
        int rc = ms ? PyDict_SetItemString(d, name, ms) : -1;
        Py_XDECREF(ms);
        if (rc < 0)
            return -1;
    }
    return 0;
}

PyObject *pbfcl_py_timers_dict(const pbfcl_solver *s, const pbfcl_timers *t)
{
    PyObject *d = PyDict_New();
    if (!d || stage_values(s, d) < 0) {
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
