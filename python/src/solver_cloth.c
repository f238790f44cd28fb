/* Cloth and ropes on a solver, by particle index (row k is particle k, as in solver_arrays.c):
 * distance constraints and their tensions, solid groups with their inverse masses, triangles
 * and attachments to shapes and bodies (pbfcl_solver_set_distances, _set_groups,
 * _set_triangles, _set_attachments and their getters), and inflatables
 * (pbfcl_solver_set_inflatables, _get_inflatables, _get_inflatable_volumes). */
#include "pbfcl_py.h"

#include <string.h>

/* A float32 column of n values: obj an array (n,), or one number for all, or None for dflt; a
 * new reference, or NULL with an exception naming what. */
static PyArrayObject *float_column(PyObject *obj, npy_intp n, float dflt, const char *what,
                                   const char *per)
{
    int scalar = !obj || obj == Py_None || PyFloat_Check(obj) || PyLong_Check(obj) ||
                 (PyArray_IsScalar(obj, Number));
    if (!scalar)
        return pbfcl_py_input_per(obj, NPY_FLOAT32, n, 0, what, per);
    double v = dflt;
    if (obj && obj != Py_None && (v = PyFloat_AsDouble(obj)) == -1.0 && PyErr_Occurred())
        return NULL;
    npy_intp dims[1] = {n};
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    for (npy_intp i = 0; a && i < n; i++)
        ((float *)PyArray_DATA(a))[i] = (float)v;
    return a;
}

/* Tether flags: None (none), one flag for all (a bool or int), or a bool or integer array (n,)
 * whose nonzero entries are tethers; floats are refused. */
static PyArrayObject *flag_column(PyObject *obj, npy_intp n, const char *what)
{
    npy_intp dims[1] = {n};
    if (obj == Py_None || PyBool_Check(obj) || PyLong_Check(obj) || PyArray_IsScalar(obj, Bool) ||
        PyArray_IsScalar(obj, Integer)) {
        int on = obj != Py_None && PyObject_IsTrue(obj);
        PyArrayObject *a = (PyArrayObject *)PyArray_ZEROS(1, dims, NPY_BOOL, 0);
        for (npy_intp i = 0; a && on && i < n; i++)
            ((npy_bool *)PyArray_DATA(a))[i] = 1;
        return a;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(obj);
    if (!a)
        return NULL;
    int type = PyArray_TYPE(a);
    if (PyArray_SIZE(a) > 0 && !PyTypeNum_ISBOOL(type) && !PyTypeNum_ISINTEGER(type)) {
        PyErr_Format(PyExc_TypeError, "%s must be booleans (a bool array), not %s", what,
                     PyArray_DESCR(a)->typeobj->tp_name);
        Py_DECREF(a);
        return NULL;
    }
    PyArrayObject *b = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)a, NPY_BOOL, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    Py_DECREF(a);
    if (b && (PyArray_NDIM(b) != 1 || PyArray_DIM(b, 0) != n)) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%ld,), one per constraint", what,
                     (long)n);
        Py_CLEAR(b);
    }
    return b;
}

/* Index rows (n, cols) of uint32 (cols 0: (n,)); an empty sequence is no rows. */
static PyArrayObject *index_rows(PyObject *obj, int cols, const char *what)
{
    return pbfcl_py_input_per(obj, NPY_UINT32, -1, cols, what, NULL);
}

static PyObject *set_distances(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"pairs", "rest", "compliance", "tether", NULL};
    PyObject *pairs_obj, *rest_obj, *comp_obj = Py_None, *tether_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OO:set_distances", kwlist, &pairs_obj,
                                     &rest_obj, &comp_obj, &tether_obj))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h)
        return NULL;
    PyArrayObject *pairs = index_rows(pairs_obj, 2, "pairs"), *rest = NULL, *comp = NULL,
                  *tether = NULL;
    npy_intp n = pairs ? PyArray_DIM(pairs, 0) : 0;
    if (pairs)
        rest = pbfcl_py_input_per(rest_obj, NPY_FLOAT32, n, 0, "rest", "constraint");
    if (rest)
        comp = float_column(comp_obj, n, 0.0f, "compliance", "constraint");
    if (comp)
        tether = flag_column(tether_obj, n, "tether");
    int rc = -1;
    if (tether)
        rc = PBFCL_PY_CALL(pbfcl_solver_set_distances(
            h, PyArray_DATA(pairs), PyArray_DATA(rest), PyArray_DATA(comp),
            (const unsigned char *)PyArray_DATA(tether), (size_t)n));
    Py_XDECREF(pairs);
    Py_XDECREF(rest);
    Py_XDECREF(comp);
    Py_XDECREF(tether);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static npy_intp distance_count(pbfcl_py_solver *self)
{
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    size_t n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_distance_count(h, &n)) < 0)
        return -1;
    return (npy_intp)n;
}

static PyObject *get_distances(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    npy_intp n = distance_count(self);
    if (n < 0)
        return NULL;
    npy_intp dims[2] = {n, 2};
    PyArrayObject *pairs = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_UINT32);
    PyArrayObject *rest = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyArrayObject *comp = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyArrayObject *tether = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (pairs && rest && comp && tether &&
        (n == 0 || PBFCL_PY_CALL(pbfcl_solver_get_distances(
                       self->handle, PyArray_DATA(pairs), PyArray_DATA(rest), PyArray_DATA(comp),
                       (unsigned char *)PyArray_DATA(tether), (size_t)n)) == 0))
        return Py_BuildValue("NNNN", pairs, rest, comp, tether);
    Py_XDECREF(pairs);
    Py_XDECREF(rest);
    Py_XDECREF(comp);
    Py_XDECREF(tether);
    return NULL;
}

static PyObject *get_distance_forces(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"out", NULL};
    PyObject *out = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:get_distance_forces", kwlist, &out))
        return NULL;
    npy_intp n = distance_count(self);
    if (n < 0)
        return NULL;
    PyArrayObject *a = pbfcl_py_output(out, NPY_FLOAT32, n, 0, "distance forces");
    if (!a)
        return NULL;
    if (n > 0 && PBFCL_PY_CALL(pbfcl_solver_get_distance_forces(self->handle, PyArray_DATA(a),
                                                                (size_t)n)) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

/* groups as uint32 (n,): an array, or one group for all. */
static PyArrayObject *group_column(PyObject *obj, npy_intp n)
{
    if (!PyLong_Check(obj) && !PyArray_IsScalar(obj, Integer))
        return pbfcl_py_input_per(obj, NPY_UINT32, n, 0, "groups", "particle named");
    long long g = PyLong_AsLongLong(obj);
    if (g == -1 && PyErr_Occurred())
        return NULL;
    if (g < 0 || g >= PBFCL_SOLVER_MAX_GROUPS) {
        PyErr_Format(PyExc_ValueError, "group %lld is out of range: it must be 0 to %d", g,
                     PBFCL_SOLVER_MAX_GROUPS - 1);
        return NULL;
    }
    npy_intp dims[1] = {n};
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT32);
    for (npy_intp i = 0; a && i < n; i++)
        ((npy_uint32 *)PyArray_DATA(a))[i] = (npy_uint32)g;
    return a;
}

static PyObject *set_groups(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ids", "groups", "inverse_masses", NULL};
    PyObject *ids_obj, *groups_obj, *w_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO:set_groups", kwlist, &ids_obj, &groups_obj,
                                     &w_obj))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h)
        return NULL;
    PyArrayObject *ids = index_rows(ids_obj, 0, "ids"), *groups = NULL, *w = NULL;
    npy_intp n = ids ? PyArray_DIM(ids, 0) : 0;
    if (ids)
        groups = group_column(groups_obj, n);
    if (groups)
        w = float_column(w_obj, n, 0.0f, "inverse_masses", "particle named");
    int rc = -1;
    if (w)
        rc = PBFCL_PY_CALL(pbfcl_solver_set_groups(h, PyArray_DATA(ids), PyArray_DATA(groups),
                                                   PyArray_DATA(w), (size_t)n));
    Py_XDECREF(ids);
    Py_XDECREF(groups);
    Py_XDECREF(w);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *set_triangles(pbfcl_py_solver *self, PyObject *arg)
{
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h)
        return NULL;
    PyArrayObject *tri = index_rows(arg, 3, "triangles");
    if (!tri)
        return NULL;
    int rc = PBFCL_PY_CALL(
        pbfcl_solver_set_triangles(h, PyArray_DATA(tri), (size_t)PyArray_DIM(tri, 0)));
    Py_DECREF(tri);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static npy_intp triangle_count(pbfcl_py_solver *self)
{
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    size_t n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_triangle_count(h, &n)) < 0)
        return -1;
    return (npy_intp)n;
}

static PyObject *get_triangles(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    npy_intp n = triangle_count(self);
    if (n < 0)
        return NULL;
    npy_intp dims[2] = {n, 3};
    PyArrayObject *tri = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_UINT32);
    if (tri && (n == 0 || PBFCL_PY_CALL(pbfcl_solver_get_triangles(self->handle, PyArray_DATA(tri),
                                                                   (size_t)n)) == 0))
        return (PyObject *)tri;
    Py_XDECREF(tri);
    return NULL;
}

static PyObject *prop_distance_count(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    npy_intp n = distance_count(self);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

static PyObject *prop_triangle_count(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    npy_intp n = triangle_count(self);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

/* int32 (n,): an array, or one integer for all. */
static PyArrayObject *int_column(PyObject *obj, npy_intp n, const char *what)
{
    if (!PyLong_Check(obj) && !PyArray_IsScalar(obj, Integer))
        return pbfcl_py_input_per(obj, NPY_INT32, n, 0, what, "attachment");
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred())
        return NULL;
    npy_intp dims[1] = {n};
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT32);
    for (npy_intp i = 0; a && i < n; i++)
        ((npy_int32 *)PyArray_DATA(a))[i] = (npy_int32)v;
    return a;
}

static PyObject *set_attachments(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"particles", "kinds", "targets", "points", "compliance", NULL};
    PyObject *p_obj, *k_obj, *t_obj, *x_obj, *c_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO|O:set_attachments", kwlist, &p_obj, &k_obj,
                                     &t_obj, &x_obj, &c_obj))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h)
        return NULL;
    PyArrayObject *p = index_rows(p_obj, 0, "particles"), *k = NULL, *t = NULL, *x = NULL,
                  *c = NULL;
    npy_intp n = p ? PyArray_DIM(p, 0) : 0;
    if (p)
        k = int_column(k_obj, n, "kinds");
    if (k)
        t = int_column(t_obj, n, "targets");
    if (t)
        x = pbfcl_py_input_per(x_obj, NPY_FLOAT32, n, 3, "points", "attachment");
    if (x)
        c = float_column(c_obj, n, 0.0f, "compliance", "attachment");
    int rc = -1;
    if (c)
        rc = PBFCL_PY_CALL(pbfcl_solver_set_attachments(h, PyArray_DATA(p), PyArray_DATA(k),
                                                        PyArray_DATA(t), PyArray_DATA(x),
                                                        PyArray_DATA(c), (size_t)n));
    Py_XDECREF(p);
    Py_XDECREF(k);
    Py_XDECREF(t);
    Py_XDECREF(x);
    Py_XDECREF(c);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static npy_intp attachment_count(pbfcl_py_solver *self)
{
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    size_t n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_attachment_count(h, &n)) < 0)
        return -1;
    return (npy_intp)n;
}

static PyObject *get_attachments(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    npy_intp n = attachment_count(self);
    if (n < 0)
        return NULL;
    npy_intp dims[2] = {n, 3};
    PyArrayObject *p = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT32);
    PyArrayObject *k = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT32);
    PyArrayObject *t = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT32);
    PyArrayObject *x = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
    PyArrayObject *c = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    if (p && k && t && x && c &&
        (n == 0 || PBFCL_PY_CALL(pbfcl_solver_get_attachments(
                       self->handle, PyArray_DATA(p), PyArray_DATA(k), PyArray_DATA(t),
                       PyArray_DATA(x), PyArray_DATA(c), (size_t)n)) == 0))
        return Py_BuildValue("NNNNN", p, k, t, x, c);
    Py_XDECREF(p);
    Py_XDECREF(k);
    Py_XDECREF(t);
    Py_XDECREF(x);
    Py_XDECREF(c);
    return NULL;
}

static PyObject *prop_attachment_count(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    npy_intp n = attachment_count(self);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

/* ---- inflatables ---------------------------------------------------------------------- */

static PyObject *set_inflatables(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"triangle_counts", "triangles",  "rest_volume",
                             "pressure",        "compliance", NULL};
    PyObject *counts_obj, *tri_obj, *rest_obj, *pressure_obj = Py_None, *comp_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|OO:set_inflatables", kwlist, &counts_obj,
                                     &tri_obj, &rest_obj, &pressure_obj, &comp_obj))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h)
        return NULL;
    PyArrayObject *counts = index_rows(counts_obj, 0, "triangle_counts"), *tri = NULL, *rest = NULL,
                  *pressure = NULL, *comp = NULL;
    npy_intp k = counts ? PyArray_DIM(counts, 0) : 0;
    if (counts)
        tri = index_rows(tri_obj, 3, "triangles");
    unsigned long long sum = 0;
    for (npy_intp i = 0; tri && i < k; i++)
        sum += ((const npy_uint32 *)PyArray_DATA(counts))[i];
    if (tri && sum != (unsigned long long)PyArray_DIM(tri, 0)) {
        PyErr_Format(PyExc_ValueError,
                     "triangle_counts add up to %llu triangles, but triangles has %ld rows; give "
                     "each inflatable's count of the triangles, in order",
                     sum, (long)PyArray_DIM(tri, 0));
        Py_CLEAR(tri);
    }
    if (tri)
        rest = float_column(rest_obj, k, 0.0f, "rest_volume", "inflatable");
    if (rest)
        pressure = float_column(pressure_obj, k, 1.0f, "pressure", "inflatable");
    if (pressure)
        comp = float_column(comp_obj, k, 0.0f, "compliance", "inflatable");
    int rc = -1;
    if (comp)
        rc = PBFCL_PY_CALL(pbfcl_solver_set_inflatables(h, PyArray_DATA(counts), PyArray_DATA(tri),
                                                        PyArray_DATA(rest), PyArray_DATA(pressure),
                                                        PyArray_DATA(comp), (size_t)k));
    Py_XDECREF(counts);
    Py_XDECREF(tri);
    Py_XDECREF(rest);
    Py_XDECREF(pressure);
    Py_XDECREF(comp);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* The inflatables' count and their triangles' (-1 with an exception). */
static npy_intp inflatable_count(pbfcl_py_solver *self, npy_intp *triangles)
{
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    size_t n = 0, t = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_inflatable_count(h, &n, &t)) < 0)
        return -1;
    if (triangles)
        *triangles = (npy_intp)t;
    return (npy_intp)n;
}

static PyObject *get_inflatables(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    npy_intp t = 0, k = inflatable_count(self, &t);
    if (k < 0)
        return NULL;
    npy_intp dims[1] = {k}, tdims[2] = {t, 3};
    PyArrayObject *counts = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT32);
    PyArrayObject *tri = (PyArrayObject *)PyArray_SimpleNew(2, tdims, NPY_UINT32);
    PyArrayObject *rest = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyArrayObject *pressure = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyArrayObject *comp = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    if (counts && tri && rest && pressure && comp &&
        (k == 0 || PBFCL_PY_CALL(pbfcl_solver_get_inflatables(
                       self->handle, PyArray_DATA(counts), PyArray_DATA(tri), PyArray_DATA(rest),
                       PyArray_DATA(pressure), PyArray_DATA(comp), (size_t)k)) == 0))
        return Py_BuildValue("NNNNN", counts, tri, rest, pressure, comp);
    Py_XDECREF(counts);
    Py_XDECREF(tri);
    Py_XDECREF(rest);
    Py_XDECREF(pressure);
    Py_XDECREF(comp);
    return NULL;
}

static PyObject *get_inflatable_volumes(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    npy_intp k = inflatable_count(self, NULL);
    if (k < 0)
        return NULL;
    npy_intp dims[1] = {k};
    PyArrayObject *volume = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    PyArrayObject *pressure = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
    if (volume && pressure &&
        (k == 0 ||
         PBFCL_PY_CALL(pbfcl_solver_get_inflatable_volumes(
             self->handle, PyArray_DATA(volume), PyArray_DATA(pressure), (size_t)k)) == 0))
        return Py_BuildValue("NN", volume, pressure);
    Py_XDECREF(volume);
    Py_XDECREF(pressure);
    return NULL;
}

static PyObject *prop_inflatable_count(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    npy_intp n = inflatable_count(self, NULL);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

#define KW METH_VARARGS | METH_KEYWORDS
#define CAST(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pbfcl_py_cloth_methods[] = {
    {"set_distances", CAST(set_distances), KW,
     "set_distances(pairs, rest, compliance=0.0, tether=None)\n\nReplaces the distance "
     "constraints (XPBD; a cloth's or rope's edges): constraint c joins particles pairs[c] "
     "(uint32 (C, 2); any integer array or list whose values fit) at rest length rest[c] "
     "(float32 (C,), m) with compliance[c] (m/N, 0 rigid; one number for all); tether[c] true "
     "makes it act only when stretched (bool (C,) or one flag). An empty pairs removes them "
     "all. A refused constraint is named (pbfcl.ArgumentError) and the old ones are kept."},
    {"get_distances", (PyCFunction)get_distances, METH_NOARGS,
     "get_distances() -> (pairs, rest, compliance, tether)\n\nThe distance constraints as set: "
     "uint32 (C, 2), float32 (C,), float32 (C,), bool (C,)."},
    {"get_distance_forces", CAST(get_distance_forces), KW,
     "get_distance_forces(out=None) -> ndarray\n\nEach distance constraint's tension in the "
     "last substep, float32 (C,), N (positive when it pulls its particles together)."},
    {"set_groups", CAST(set_groups), KW,
     "set_groups(ids, groups, inverse_masses)\n\nPuts particles ids[k] into solid group "
     "groups[k] (a cloth or rope: held by distance constraints, not colliding with each other, "
     "no density constraint of their own) with inverse mass inverse_masses[k] (1/kg, > 0); groups "
     "and inverse_masses may be one value for all. Every grouped particle not named returns to "
     "the fluid; an empty ids removes every group. Pin a particle by making it static "
     "(set_phases) first: setting phases clears the groups. Its phase then reads "
     "pbfcl.phase_solid_group(g) in get_particle_phases()."},
    {"set_triangles", (PyCFunction)set_triangles, METH_O,
     "set_triangles(triangles)\n\nTriangles over the particles, uint32 (T, 3) (for rendering "
     "and export; no effect on the simulation). Removing particles clears them."},
    {"get_triangles", (PyCFunction)get_triangles, METH_NOARGS,
     "get_triangles() -> ndarray\n\nThe triangles as set, uint32 (T, 3)."},
    {"set_attachments", CAST(set_attachments), KW,
     "set_attachments(particles, kinds, targets, points, compliance=0.0)\n\nReplaces the "
     "attachments (method pbf): particle particles[k] is held by targets[k] of kind kinds[k] "
     "(pbfcl.ATTACH_SHAPE: a shape's id, the particle static, put at the point of the shape's "
     "pose every substep; pbfcl.ATTACH_BODY: a body's index, the particle of a solid group, "
     "held by a distance constraint of compliance[k] m/N to the body's nearest particle) at "
     "points[k] (float32 (A, 3), m, in the target's frame); kinds, targets and compliance may "
     "be one value for all. An empty particles removes them. A refused attachment is named "
     "(pbfcl.ArgumentError) and the old ones are kept."},
    {"get_attachments", (PyCFunction)get_attachments, METH_NOARGS,
     "get_attachments() -> (particles, kinds, targets, points, compliance)\n\nThe "
     "attachments as set: uint32 (A,), int32 (A,), int32 (A,), float32 (A, 3), float32 (A,)."},
    {"set_inflatables", CAST(set_inflatables), KW,
     "set_inflatables(triangle_counts, triangles, rest_volume, pressure=1.0, compliance=0.0)"
     "\n\nReplaces the inflatables (closed meshes holding a volume of gas; method pbf): "
     "inflatable k is the next triangle_counts[k] rows of triangles (uint32 (T, 3), particle "
     "indices, counter-clockwise seen from outside; a closed manifold mesh of 4 or more), "
     "holding rest_volume[k] m^3 at rest, pressure[k] times it when unloaded (> 0), its gas' "
     "compliance[k] m^3/Pa (0 keeps the volume; else Boyle's law p V constant when pressed). "
     "rest_volume, pressure and compliance are float32 (K,) or one number for all. Its shell "
     "is held by distance constraints (set_distances). Empty arrays remove them. A refused "
     "inflatable is named (pbfcl.ArgumentError, the library's message) and the old ones are "
     "kept."},
    {"get_inflatables", (PyCFunction)get_inflatables, METH_NOARGS,
     "get_inflatables() -> (triangle_counts, triangles, rest_volume, pressure, compliance)\n\n"
     "The inflatables as set: uint32 (K,), uint32 (T, 3), float32 (K,) three times."},
    {"get_inflatable_volumes", (PyCFunction)get_inflatable_volumes, METH_NOARGS,
     "get_inflatable_volumes() -> (volume, pressure)\n\nEach inflatable's volume (m^3) and "
     "its gas' pressure above the ambient one (Pa) as the last substep measured them, float32 "
     "(K,) each."},
    {NULL, NULL, 0, NULL}};

PyGetSetDef pbfcl_py_cloth_getset[] = {
    {"distance_count", (getter)prop_distance_count, NULL, "The number of distance constraints.",
     NULL},
    {"triangle_count", (getter)prop_triangle_count, NULL, "The number of triangles.", NULL},
    {"inflatable_count", (getter)prop_inflatable_count, NULL, "The number of inflatables.", NULL},
    {"attachment_count", (getter)prop_attachment_count, NULL, "The number of attachments.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};
