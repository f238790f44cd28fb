/* A solver's particle data as NumPy arrays in the caller's order (row k is particle k, the
 * persistent id that adding and removing keep as pbfcl_solver_add / _remove say): positions,
 * velocities, densities, phases; bodies' poses; spray, foam and bubbles. */
#include "pbfcl_py.h"

typedef pbfcl_status (*get_fn)(pbfcl_solver *, void *, size_t);
typedef pbfcl_status (*set_fn)(pbfcl_solver *, const void *, size_t);

/* The active particles' field into out (or a new array). */
static PyObject *read_field(pbfcl_py_solver *self, PyObject *out, get_fn get, int typenum, int cols,
                            const char *what)
{
    npy_intp n = pbfcl_py_solver_count(self);
    if (n < 0)
        return NULL;
    PyArrayObject *a = pbfcl_py_output(out, typenum, n, cols, what);
    if (!a)
        return NULL;
    if (PBFCL_PY_CALL(get(self->handle, PyArray_DATA(a), (size_t)n)) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

static int write_field(pbfcl_py_solver *self, PyObject *value, set_fn set, int typenum, int cols,
                       const char *what)
{
    npy_intp n = pbfcl_py_solver_count(self);
    if (n < 0)
        return -1;
    if (!value) {
        PyErr_Format(PyExc_AttributeError, "%s cannot be deleted", what);
        return -1;
    }
    PyArrayObject *a = pbfcl_py_input(value, typenum, n, cols, what);
    if (!a)
        return -1;
    int rc = PBFCL_PY_CALL(set(self->handle, PyArray_DATA(a), (size_t)n));
    Py_DECREF(a);
    return rc;
}

/* The API's getters and setters with untyped arrays (the type is checked by typenum). */
#define ADAPT_GET(name, type)                                                                      \
    static pbfcl_status api_get_##name(pbfcl_solver *s, void *p, size_t n)                         \
    {                                                                                              \
        return pbfcl_solver_get_##name(s, (type *)p, n);                                           \
    }
#define ADAPT_SET(name, type)                                                                      \
    static pbfcl_status api_set_##name(pbfcl_solver *s, const void *p, size_t n)                   \
    {                                                                                              \
        return pbfcl_solver_set_##name(s, (const type *)p, n);                                     \
    }
ADAPT_GET(positions, float)
ADAPT_GET(velocities, float)
ADAPT_GET(densities, float)
ADAPT_GET(phases, int)
ADAPT_GET(particle_phases, int)
ADAPT_GET(inverse_masses, float)
ADAPT_SET(positions, float)
ADAPT_SET(velocities, float)
ADAPT_SET(phases, int)
ADAPT_SET(particle_phases, int)
ADAPT_SET(inverse_masses, float)

#define READ_FIELD(name, getter, typenum, cols)                                                    \
    static PyObject *get_##name(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)             \
    {                                                                                              \
        static char *kwlist[] = {"out", NULL};                                                     \
        PyObject *out = Py_None;                                                                   \
        if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:get_" #name, kwlist, &out))               \
            return NULL;                                                                           \
        return read_field(self, out, getter, typenum, cols, #name);                                \
    }                                                                                              \
    static PyObject *prop_##name(pbfcl_py_solver *self, void *closure)                             \
    {                                                                                              \
        (void)closure;                                                                             \
        return read_field(self, NULL, getter, typenum, cols, #name);                               \
    }

#define FIELD(name, getter, setter, typenum, cols)                                                 \
    READ_FIELD(name, getter, typenum, cols)                                                        \
    static int put_##name(pbfcl_py_solver *self, PyObject *value, void *closure)                   \
    {                                                                                              \
        (void)closure;                                                                             \
        return write_field(self, value, setter, typenum, cols, #name);                             \
    }                                                                                              \
    static PyObject *set_##name(pbfcl_py_solver *self, PyObject *value)                            \
    {                                                                                              \
        if (put_##name(self, value, NULL) < 0)                                                     \
            return NULL;                                                                           \
        Py_RETURN_NONE;                                                                            \
    }

FIELD(positions, api_get_positions, api_set_positions, NPY_FLOAT32, 3)
FIELD(velocities, api_get_velocities, api_set_velocities, NPY_FLOAT32, 3)
FIELD(phases, api_get_phases, api_set_phases, NPY_INT32, 0)
FIELD(particle_phases, api_get_particle_phases, api_set_particle_phases, NPY_INT32, 0)
FIELD(inverse_masses, api_get_inverse_masses, api_set_inverse_masses, NPY_FLOAT32, 0)
READ_FIELD(densities, api_get_densities, NPY_FLOAT32, 0)

static PyObject *solver_add(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"positions", "velocities", NULL};
    PyObject *pos_obj, *vel_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:add", kwlist, &pos_obj, &vel_obj))
        return NULL;
    npy_intp before = pbfcl_py_solver_count(self);
    if (before < 0)
        return NULL;
    PyArrayObject *pos = pbfcl_py_input(pos_obj, NPY_FLOAT32, -1, 3, "positions");
    PyArrayObject *vel = NULL;
    if (pos && vel_obj != Py_None)
        vel = pbfcl_py_input(vel_obj, NPY_FLOAT32, PyArray_DIM(pos, 0), 3, "velocities");
    int rc = -1;
    if (pos && (vel || vel_obj == Py_None))
        rc = PBFCL_PY_CALL(pbfcl_solver_add(self->handle, PyArray_DATA(pos),
                                            vel ? PyArray_DATA(vel) : NULL,
                                            (size_t)PyArray_DIM(pos, 0)));
    npy_intp added = pos ? PyArray_DIM(pos, 0) : 0;
    Py_XDECREF(pos);
    Py_XDECREF(vel);
    if (rc < 0)
        return NULL;
    return PyObject_CallFunction((PyObject *)&PyRange_Type, "nn", (Py_ssize_t)before,
                                 (Py_ssize_t)(before + added));
}

/* indices as size_t, each checked against the count n; NULL with an exception. */
static size_t *index_list(PyObject *obj, npy_intp n, npy_intp *len)
{
    if (PyArray_Check(obj) && !PyTypeNum_ISINTEGER(PyArray_TYPE((PyArrayObject *)obj))) {
        PyErr_SetString(PyExc_TypeError, "indices must be integers (an integer array)");
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(
        obj, NPY_INT64, 0, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    if (!a)
        return NULL;
    *len = PyArray_SIZE(a);
    const npy_int64 *v = PyArray_DATA(a);
    size_t *ids = PyMem_Malloc((*len ? *len : 1) * sizeof *ids);
    for (npy_intp i = 0; ids && i < *len; i++) {
        if (v[i] < 0 || v[i] >= n) {
            PyErr_Format(PyExc_IndexError, "index %lld is out of range: there are %ld particles",
                         (long long)v[i], (long)n);
            PyMem_Free(ids);
            ids = NULL;
            break;
        }
        ids[i] = (size_t)v[i];
    }
    if (!ids && !PyErr_Occurred())
        PyErr_NoMemory();
    Py_DECREF(a);
    return ids;
}

static PyObject *solver_remove(pbfcl_py_solver *self, PyObject *indices)
{
    npy_intp n = pbfcl_py_solver_count(self), len = 0;
    if (n < 0)
        return NULL;
    if (PyFloat_Check(indices) || PyUnicode_Check(indices)) {
        PyErr_SetString(PyExc_TypeError, "indices must be integers (an integer array)");
        return NULL;
    }
    size_t *ids = index_list(indices, n, &len);
    if (!ids)
        return NULL;
    int rc = PBFCL_PY_CALL(pbfcl_solver_remove(self->handle, ids, (size_t)len));
    PyMem_Free(ids);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *solver_compute_densities(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h || PBFCL_PY_CALL(pbfcl_solver_compute_densities(h)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *solver_body_count(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    int n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_body_count(h, &n)) < 0)
        return NULL;
    return PyLong_FromLong(n);
}

static PyObject *solver_get_bodies(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    int n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_body_count(h, &n)) < 0)
        return NULL;
    PyArrayObject *com = pbfcl_py_output(NULL, NPY_FLOAT32, n, 3, "com");
    PyArrayObject *quat = com ? pbfcl_py_output(NULL, NPY_FLOAT32, n, 4, "quat") : NULL;
    if (quat && (n == 0 || PBFCL_PY_CALL(pbfcl_solver_get_bodies(h, PyArray_DATA(com),
                                                                 PyArray_DATA(quat), n)) == 0))
        return Py_BuildValue("NN", com, quat);
    Py_XDECREF(com);
    Py_XDECREF(quat);
    return NULL;
}

static PyObject *solver_set_body(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"body", "stiffness", "density", NULL};
    int body;
    float stiffness, density;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iff:set_body", kwlist, &body, &stiffness,
                                     &density))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h || PBFCL_PY_CALL(pbfcl_solver_set_body(h, body, stiffness, density)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *solver_set_diffuse(pbfcl_py_solver *self, PyObject *arg)
{
    Py_ssize_t capacity = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (capacity == -1 && PyErr_Occurred())
        return NULL;
    if (capacity < 0)
        return PyErr_Format(PyExc_ValueError, "capacity must be >= 0 (0 turns them off)");
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h || PBFCL_PY_CALL(pbfcl_solver_set_diffuse(h, (size_t)capacity)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *solver_get_diffuse(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    size_t n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_diffuse_count(h, &n, NULL)) < 0)
        return NULL;
    PyArrayObject *pos = pbfcl_py_output(NULL, NPY_FLOAT32, (npy_intp)n, 4, "diffuse positions");
    PyArrayObject *vel =
        pos ? pbfcl_py_output(NULL, NPY_FLOAT32, (npy_intp)n, 4, "velocities") : NULL;
    if (vel && (n == 0 || PBFCL_PY_CALL(pbfcl_solver_get_diffuse(h, PyArray_DATA(pos),
                                                                 PyArray_DATA(vel), n)) == 0))
        return Py_BuildValue("NN", pos, vel);
    Py_XDECREF(pos);
    Py_XDECREF(vel);
    return NULL;
}

#define KW METH_VARARGS | METH_KEYWORDS
#define CAST(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pbfcl_py_array_methods[] = {
    {"get_positions", CAST(get_positions), KW,
     "get_positions(out=None) -> ndarray\n\nThe positions, float32 (count, 3), row k particle "
     "k; read into out (float32, C-contiguous, that shape) without a copy when given."},
    {"get_velocities", CAST(get_velocities), KW,
     "get_velocities(out=None) -> ndarray\n\nThe velocities, float32 (count, 3); out as in "
     "get_positions."},
    {"get_densities", CAST(get_densities), KW,
     "get_densities(out=None) -> ndarray\n\nThe SPH densities, float32 (count,), kg/m^3."},
    {"get_phases", CAST(get_phases), KW,
     "get_phases(out=None) -> ndarray\n\nThe phases, int32 (count,): 0 fluid, b + 1 body b, "
     "-1 static."},
    {"set_positions", (PyCFunction)set_positions, METH_O,
     "set_positions(a)\n\nOverwrites every active particle's position: float32 (count, 3) (a "
     "smaller float type, another memory order or a list is converted; float64 is refused)."},
    {"set_velocities", (PyCFunction)set_velocities, METH_O,
     "set_velocities(a)\n\nOverwrites every velocity, as set_positions."},
    {"set_phases", (PyCFunction)set_phases, METH_O,
     "set_phases(a)\n\nSets every phase (int32 (count,); wider integers whose values fit are "
     "converted): 0 fluid, b + 1 body b (rigid, its rest shape the positions now), -1 "
     "static. Replaces every body and static particle."},
    {"get_particle_phases", CAST(get_particle_phases), KW,
     "get_particle_phases(out=None) -> ndarray\n\nThe phases in the encoding of groups and flags "
     "(FleX's; pbfcl_make_phase in docs/API.md), int32 (count,): a cloth's or rope's particle "
     "reads pbfcl.phase_solid_group(g) here."},
    {"set_particle_phases", (PyCFunction)set_particle_phases, METH_O,
     "set_particle_phases(a)\n\nSets every phase in that encoding (int32 (count,)), with the "
     "effect of set_phases."},
    {"get_inverse_masses", CAST(get_inverse_masses), KW,
     "get_inverse_masses(out=None) -> ndarray\n\nThe inverse masses, float32 (count,), 1/kg: "
     "0 for a static particle."},
    {"set_inverse_masses", (PyCFunction)set_inverse_masses, METH_O,
     "set_inverse_masses(a)\n\nSets every inverse mass (float32 (count,), 1/kg). A cloth's or "
     "rope's particle takes any finite value above 0; a fluid particle only its own, a static "
     "one 0, a body's one value per body (it sets the body's density). To hold a cloth's "
     "particle in place, make it static (set_phases) and move it with set_positions."},
    {"add", CAST(solver_add), KW,
     "add(positions, velocities=None) -> range\n\nAppends particles (float32 (N, 3)); returns "
     "their indices, count_before .. count_before + N - 1."},
    {"remove", (PyCFunction)solver_remove, METH_O,
     "remove(indices)\n\nRemoves the listed particles; the others keep their order and close "
     "the gaps (particle k becomes k minus the removed ones below k)."},
    {"compute_densities", (PyCFunction)solver_compute_densities, METH_NOARGS,
     "compute_densities()\n\nComputes the densities of the current positions."},
    {"get_bodies", (PyCFunction)solver_get_bodies, METH_NOARGS,
     "get_bodies() -> (com, quat)\n\nEach body's pose as of the last step: centre of mass "
     "float32 (B, 3) and rotation from its rest pose as quaternions (x, y, z, w), (B, 4)."},
    {"set_body", CAST(solver_set_body), KW,
     "set_body(body, stiffness, density)\n\nBody's stiffness in (0, 1] (1 rigid) and density "
     "in kg/m^3."},
    {"set_diffuse", (PyCFunction)solver_set_diffuse, METH_O,
     "set_diffuse(capacity)\n\nSpray, foam and bubbles on with room for capacity of them (0: "
     "off)."},
    {"get_diffuse", (PyCFunction)solver_get_diffuse, METH_NOARGS,
     "get_diffuse() -> (pos4, vel4)\n\nThe diffuse particles, float32 (D, 4) each: (x, y, z, "
     "type + life fraction) and (vx, vy, vz, life s); type 0 spray, 1 foam, 2 bubble."},
    {NULL, NULL, 0, NULL}};

PyGetSetDef pbfcl_py_array_getset[] = {
    {"positions", (getter)prop_positions, (setter)put_positions,
     "Positions, float32 (count, 3): a new array on each read; assigning sets them.", NULL},
    {"velocities", (getter)prop_velocities, (setter)put_velocities,
     "Velocities, float32 (count, 3): a new array on each read; assigning sets them.", NULL},
    {"densities", (getter)prop_densities, NULL, "Densities, float32 (count,), kg/m^3.", NULL},
    {"phases", (getter)prop_phases, (setter)put_phases,
     "Phases, int32 (count,): 0 fluid, b + 1 body b, -1 static.", NULL},
    {"particle_phases", (getter)prop_particle_phases, (setter)put_particle_phases,
     "Phases in the encoding of groups and flags, int32 (count,) (get_particle_phases).", NULL},
    {"inverse_masses", (getter)prop_inverse_masses, (setter)put_inverse_masses,
     "Inverse masses, float32 (count,), 1/kg: a new array on each read; assigning sets them.",
     NULL},
    {"body_count", (getter)solver_body_count, NULL, "The number of bodies.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};
