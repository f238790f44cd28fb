/* Checks of NumPy array arguments: what comes in is converted only where no value can change
 * (a smaller float or integer type, another memory order, a list), what is read into must be
 * exactly right, and every refusal says what is needed. */
#include "pbfcl_py.h"

#include <stdio.h>

static const char *type_name(int typenum)
{
    return typenum == NPY_FLOAT32 ? "float32" : "int32";
}

/* "(N, 3)" or "(N,)" with N the rows wanted (or "N"). */
static void shape_text(char *buf, size_t size, npy_intp rows, int cols)
{
    char n[32] = "N";
    if (rows >= 0)
        snprintf(n, sizeof n, "%ld", (long)rows);
    if (cols > 0)
        snprintf(buf, size, "(%s, %d)", n, cols);
    else
        snprintf(buf, size, "(%s,)", n);
}

static int check_shape(PyArrayObject *a, npy_intp rows, int cols, const char *what)
{
    int ndim = cols > 0 ? 2 : 1;
    int ok = PyArray_NDIM(a) == ndim && (rows < 0 || PyArray_DIM(a, 0) == rows) &&
             (cols == 0 || PyArray_DIM(a, 1) == cols);
    if (ok)
        return 0;
    char want[48];
    shape_text(want, sizeof want, rows, cols);
    PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
    PyObject *got = shape ? PyObject_Repr(shape) : NULL;
    Py_XDECREF(shape);
    PyErr_Format(PyExc_ValueError, "%s must have shape %s%s (got %s)", what, want,
                 rows >= 0 ? ", one row per active particle" : "",
                 got ? PyUnicode_AsUTF8(got) : "?");
    Py_XDECREF(got);
    return -1;
}

/* An int64 (or wider unsigned) array into int32 when every value fits; NULL with ValueError. */
static PyArrayObject *narrow_integers(PyArrayObject *a, const char *what)
{
    PyArrayObject *wide = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)a, NPY_INT64, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    if (!wide)
        return NULL;
    const npy_int64 *v = PyArray_DATA(wide);
    for (npy_intp i = 0; i < PyArray_SIZE(wide); i++)
        if (v[i] < NPY_MIN_INT32 || v[i] > NPY_MAX_INT32) {
            PyErr_Format(PyExc_ValueError, "%s: value %lld at flat index %ld does not fit int32",
                         what, (long long)v[i], (long)i);
            Py_DECREF(wide);
            return NULL;
        }
    PyArrayObject *out = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)wide, NPY_INT32, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    Py_DECREF(wide);
    return out;
}

/* obj as an array of typenum when that loses nothing; NULL with TypeError otherwise. */
static PyArrayObject *convert_lossless(PyObject *obj, int typenum, const char *what)
{
    if (!PyArray_Check(obj)) /* a list or other sequence: converted like numpy.asarray */
        return (PyArrayObject *)PyArray_FROMANY(obj, typenum, 0, 0,
                                                NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    PyArrayObject *a = (PyArrayObject *)obj;
    int from = PyArray_TYPE(a);
    if (PyArray_CanCastSafely(from, typenum))
        return (PyArrayObject *)PyArray_FROMANY(obj, typenum, 0, 0, NPY_ARRAY_C_CONTIGUOUS);
    if (typenum == NPY_INT32 && PyTypeNum_ISINTEGER(from) && !PyTypeNum_ISBOOL(from))
        return narrow_integers(a, what);
    PyErr_Format(PyExc_TypeError,
                 "%s must be a %s array (got %s); convert it with a.astype(numpy.%s) if the "
                 "loss of precision is intended",
                 what, type_name(typenum), PyArray_DESCR(a)->typeobj->tp_name, type_name(typenum));
    return NULL;
}

PyArrayObject *pbfcl_py_input(PyObject *obj, int typenum, npy_intp rows, int cols, const char *what)
{
    PyArrayObject *a = convert_lossless(obj, typenum, what);
    if (!a)
        return NULL;
    if (check_shape(a, rows, cols, what) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

PyArrayObject *pbfcl_py_output(PyObject *out, int typenum, npy_intp rows, int cols,
                               const char *what)
{
    if (!out || out == Py_None) {
        npy_intp dims[2] = {rows, cols};
        return (PyArrayObject *)PyArray_SimpleNew(cols > 0 ? 2 : 1, dims, typenum);
    }
    char want[48];
    shape_text(want, sizeof want, rows, cols);
    if (!PyArray_Check(out)) {
        PyErr_Format(PyExc_TypeError, "out for %s must be a numpy array of %s, shape %s (got %s)",
                     what, type_name(typenum), want, Py_TYPE(out)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)out;
    if (PyArray_TYPE(a) != typenum) {
        PyErr_Format(PyExc_TypeError, "out for %s must have dtype %s (got %s)", what,
                     type_name(typenum), PyArray_DESCR(a)->typeobj->tp_name);
        return NULL;
    }
    if (check_shape(a, rows, cols, "out") < 0)
        return NULL;
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a) || !PyArray_ISALIGNED(a)) {
        PyErr_Format(PyExc_ValueError,
                     "out for %s must be C-contiguous, aligned and writeable (make it with "
                     "numpy.empty(%s, numpy.%s))",
                     what, want, type_name(typenum));
        return NULL;
    }
    Py_INCREF(out);
    return a;
}
