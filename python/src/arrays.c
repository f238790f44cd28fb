/* Checks of NumPy array arguments: what comes in is converted only where no value can change
 * (a smaller float or integer type, another memory order, a list), what is read into must be
 * exactly right, and every refusal says what is needed. */
#include "pbfcl_py.h"

#include <stdio.h>

static const char *type_name(int typenum)
{
    return typenum == NPY_FLOAT32 ? "float32" : typenum == NPY_UINT32 ? "uint32" : "int32";
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

static int check_shape(PyArrayObject *a, npy_intp rows, int cols, const char *what, const char *per)
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
    PyErr_Format(PyExc_ValueError, "%s must have shape %s%s%s (got %s)", what, want,
                 rows >= 0 && per ? ", one row per " : "", rows >= 0 && per ? per : "",
                 got ? PyUnicode_AsUTF8(got) : "?");
    Py_XDECREF(got);
    return -1;
}

/* An integer array into int32 or uint32 (typenum) when every value fits; NULL with ValueError
 * naming the first that does not. */
static PyArrayObject *narrow_integers(PyArrayObject *a, int typenum, const char *what)
{
    int is_unsigned = PyTypeNum_ISUNSIGNED(PyArray_TYPE(a));
    PyArrayObject *wide =
        (PyArrayObject *)PyArray_FROMANY((PyObject *)a, is_unsigned ? NPY_UINT64 : NPY_INT64, 0, 0,
                                         NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    if (!wide)
        return NULL;
    npy_int64 lo = typenum == NPY_UINT32 ? 0 : NPY_MIN_INT32;
    npy_int64 hi = typenum == NPY_UINT32 ? NPY_MAX_UINT32 : NPY_MAX_INT32;
    const npy_int64 *v = PyArray_DATA(wide);
    const npy_uint64 *u = PyArray_DATA(wide);
    for (npy_intp i = 0; i < PyArray_SIZE(wide); i++)
        if (is_unsigned ? u[i] > (npy_uint64)hi : (v[i] < lo || v[i] > hi)) {
            if (is_unsigned)
                PyErr_Format(PyExc_ValueError, "%s: value %llu at flat index %ld does not fit %s",
                             what, (unsigned long long)u[i], (long)i, type_name(typenum));
            else
                PyErr_Format(PyExc_ValueError, "%s: value %lld at flat index %ld does not fit %s",
                             what, (long long)v[i], (long)i, type_name(typenum));
            Py_DECREF(wide);
            return NULL;
        }
    PyArrayObject *out = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)wide, typenum, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    Py_DECREF(wide);
    return out;
}

static PyArrayObject *convert_lossless(PyObject *obj, int typenum, const char *what);

/* A list of indices as uint32: taken as numpy.asarray takes it, then checked like an array (so
 * -1 or 2.5 is refused rather than wrapped or cut); an empty list gives an empty array. */
static PyArrayObject *uint32_from_sequence(PyObject *obj, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(obj);
    if (!a)
        return NULL;
    PyArrayObject *out =
        PyArray_SIZE(a) == 0
            ? (PyArrayObject *)PyArray_FROMANY((PyObject *)a, NPY_UINT32, 0, 0,
                                               NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST)
            : convert_lossless((PyObject *)a, NPY_UINT32, what);
    Py_DECREF(a);
    return out;
}

/* obj as an array of typenum when that loses nothing; NULL with TypeError otherwise. */
static PyArrayObject *convert_lossless(PyObject *obj, int typenum, const char *what)
{
    if (!PyArray_Check(obj) && typenum == NPY_UINT32) /* indices: checked as their own array */
        return uint32_from_sequence(obj, what);
    if (!PyArray_Check(obj)) /* a list or other sequence: converted like numpy.asarray */
        return (PyArrayObject *)PyArray_FROMANY(obj, typenum, 0, 0,
                                                NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    PyArrayObject *a = (PyArrayObject *)obj;
    int from = PyArray_TYPE(a);
    int indices = typenum == NPY_UINT32;
    if (PyArray_CanCastSafely(from, typenum) && !(indices && PyTypeNum_ISBOOL(from)))
        return (PyArrayObject *)PyArray_FROMANY(obj, typenum, 0, 0, NPY_ARRAY_C_CONTIGUOUS);
    if (typenum != NPY_FLOAT32 && PyTypeNum_ISINTEGER(from) && !PyTypeNum_ISBOOL(from))
        return narrow_integers(a, typenum, what);
    PyErr_Format(PyExc_TypeError,
                 "%s must be a %s array (got %s); convert it with a.astype(numpy.%s) if the "
                 "loss of precision is intended",
                 what, type_name(typenum), PyArray_DESCR(a)->typeobj->tp_name, type_name(typenum));
    return NULL;
}

PyArrayObject *pbfcl_py_input(PyObject *obj, int typenum, npy_intp rows, int cols, const char *what)
{
    return pbfcl_py_input_per(obj, typenum, rows, cols, what, "active particle");
}

PyArrayObject *pbfcl_py_input_per(PyObject *obj, int typenum, npy_intp rows, int cols,
                                  const char *what, const char *per)
{
    PyArrayObject *a = convert_lossless(obj, typenum, what);
    if (!a)
        return NULL;
    if (rows < 0 && PyArray_SIZE(a) == 0) { /* [] or an empty array of any shape: no rows */
        npy_intp dims[2] = {0, cols};
        Py_DECREF(a);
        return (PyArrayObject *)PyArray_SimpleNew(cols > 0 ? 2 : 1, dims, typenum);
    }
    if (check_shape(a, rows, cols, what, per) < 0) {
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
    if (check_shape(a, rows, cols, "out", NULL) < 0)
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
