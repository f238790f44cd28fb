/* pbfcl.Solver: a solver (pbfcl_solver) on a Context, made empty or from a scene (a built-in
 * name or a JSON file, through pbfcl_scene_setup), stepped with its emitters and drains, with
 * its statistics and timers. Particle arrays: solver_arrays.c; checkpoints: solver_state.c. */
#include "pbfcl_py.h"

#include <string.h>

pbfcl_solver *pbfcl_py_solver_handle(pbfcl_py_solver *self)
{
    if (!self->handle || !self->context || !self->context->handle) {
        pbfcl_py_destroyed("solver");
        return NULL;
    }
    return self->handle;
}

npy_intp pbfcl_py_solver_count(pbfcl_py_solver *self)
{
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    size_t n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_count(h, &n)) < 0)
        return -1;
    return (npy_intp)n;
}

/* The overrides of params (a dict of parameter names) applied to the two structs. */
static int apply_overrides(PyObject *params, pbfcl_scene_params *scene, pbfcl_solver_params *solver)
{
    if (!params || params == Py_None)
        return 0;
    if (!PyDict_Check(params)) {
        PyErr_Format(PyExc_TypeError, "params must be a dict of parameter names, not %s",
                     Py_TYPE(params)->tp_name);
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(params, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "params' keys must be parameter names (str)");
            return -1;
        }
        if (pbfcl_py_param_assign(scene, solver, PyUnicode_AsUTF8(key), value) < 0)
            return -1;
    }
    return 0;
}

/* The scene loaded, overridden, sized and filled; *desc its parameters and capacity. */
static int load_scene(pbfcl_py_solver *self, const char *scene, long long particles,
                      PyObject *params, pbfcl_solver_desc *desc, float **pos, size_t *n)
{
    if (PBFCL_PY_CALL(pbfcl_scene_setup_load(scene, &self->setup)) < 0 ||
        PBFCL_PY_CALL(pbfcl_scene_setup_get_params(self->setup, &desc->scene, &desc->solver)) < 0)
        return -1;
    if (apply_overrides(params, &desc->scene, &desc->solver) < 0 ||
        PBFCL_PY_CALL(pbfcl_scene_setup_set_params(self->setup, &desc->scene, &desc->solver)) < 0)
        return -1;
    if (particles >= 0 && params && params != Py_None &&
        PyDict_GetItemString(params, "particle_radius")) {
        PyErr_SetString(PyExc_ValueError, "particles and particle_radius both set the particle "
                                          "size; give only one");
        return -1;
    }
    if (particles >= 0 &&
        PBFCL_PY_CALL(pbfcl_scene_setup_set_particle_count(self->setup, (size_t)particles)) < 0)
        return -1;
    int emitters = 0, drains = 0;
    size_t need = 0;
    if (PBFCL_PY_CALL(pbfcl_scene_setup_get_params(self->setup, &desc->scene, &desc->solver)) < 0 ||
        PBFCL_PY_CALL(pbfcl_scene_setup_flow_count(self->setup, &emitters, &drains)) < 0 ||
        PBFCL_PY_CALL(pbfcl_scene_setup_capacity(self->setup, &need)) < 0 ||
        PBFCL_PY_CALL(pbfcl_scene_setup_fill(self->setup, pos, n)) < 0)
        return -1;
    self->flow = emitters > 0 || drains > 0;
    if (need < *n)
        need = *n;
    if (desc->capacity && desc->capacity < need) {
        PyErr_Format(PyExc_ValueError,
                     "capacity %zu is too small: the scene '%s' needs room for %zu particles",
                     desc->capacity, scene, need);
        return -1;
    }
    if (!desc->capacity)
        desc->capacity = need;
    return 0;
}

/* The solver of scene on the context, holding the scene's particles and bodies. */
static int create_from_scene(pbfcl_py_solver *self, const char *scene, long long particles,
                             PyObject *params, pbfcl_solver_desc *desc)
{
    float *pos = NULL;
    size_t n = 0;
    int rc = load_scene(self, scene, particles, params, desc, &pos, &n);
    if (rc == 0)
        rc = PBFCL_PY_CALL(pbfcl_solver_create(self->context->handle, desc, &self->handle));
    if (rc == 0)
        rc = PBFCL_PY_CALL(pbfcl_solver_add(self->handle, pos, NULL, n));
    if (rc == 0)
        rc = PBFCL_PY_CALL(pbfcl_scene_setup_apply_bodies(self->setup, self->handle));
    if (rc == 0) /* the first frame's real density, as `pbfcl run` reads it */
        rc = PBFCL_PY_CALL(pbfcl_solver_compute_densities(self->handle));
    pbfcl_free(pos);
    return rc;
}

static int solver_init(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"context", "scene", "particles", "capacity", "params", NULL};
    PyObject *context, *params = NULL;
    const char *scene = NULL;
    long long particles = -1, capacity = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|z$LLO:Solver", kwlist, &pbfcl_py_ContextType,
                                     &context, &scene, &particles, &capacity, &params))
        return -1;
    if (self->context) {
        PyErr_SetString(PyExc_RuntimeError, "Solver.__init__ called twice");
        return -1;
    }
    Py_INCREF(context);
    self->context = (pbfcl_py_context *)context;
    if (!self->context->handle)
        return pbfcl_py_destroyed("context");
    if (capacity < 0 || (particles < -1) || (!scene && particles >= 0)) {
        PyErr_SetString(PyExc_ValueError, capacity < 0     ? "capacity must be >= 0"
                                          : particles < -1 ? "particles must be >= 0"
                                                           : "particles needs a scene to fill");
        return -1;
    }
    pbfcl_solver_desc desc;
    pbfcl_solver_desc_defaults(&desc);
    desc.capacity = (size_t)capacity;
    if (scene)
        return create_from_scene(self, scene, particles, params, &desc);
    if (capacity == 0) {
        PyErr_SetString(PyExc_ValueError, "an empty solver (no scene) needs a capacity > 0");
        return -1;
    }
    if (apply_overrides(params, &desc.scene, &desc.solver) < 0)
        return -1;
    return PBFCL_PY_CALL(pbfcl_solver_create(self->context->handle, &desc, &self->handle));
}

static PyObject *solver_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    pbfcl_py_solver *self = (pbfcl_py_solver *)PyType_GenericNew(type, args, kwds);
    if (self) {
        Py_INCREF(Py_None);
        self->timers = Py_None;
    }
    return (PyObject *)self;
}

/* Destroys the handle if its context still lives (a destroyed context took it along). */
static void release(pbfcl_py_solver *self)
{
    if (self->handle && self->context && self->context->handle)
        pbfcl_solver_destroy(self->handle);
    self->handle = NULL;
    pbfcl_scene_setup_destroy(self->setup);
    self->setup = NULL;
}

static PyObject *solver_destroy(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    release(self);
    Py_RETURN_NONE;
}

static void solver_dealloc(pbfcl_py_solver *self)
{
    release(self);
    Py_XDECREF(self->context);
    Py_XDECREF(self->timers);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Runs the scene's drains and emitters at the time reached. */
static int run_flow(pbfcl_py_solver *self, pbfcl_solver *h)
{
    size_t n = 0, removed = 0, added = 0;
    if (PBFCL_PY_CALL(pbfcl_solver_count(h, &n)) < 0)
        return -1;
    size_t *ids = PyMem_Malloc((n ? n : 1) * sizeof *ids);
    if (!ids) {
        PyErr_NoMemory();
        return -1;
    }
    int rc =
        PBFCL_PY_CALL(pbfcl_scene_setup_flow(self->setup, h, self->time, ids, &removed, &added));
    PyMem_Free(ids);
    return rc;
}

static PyObject *solver_step(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dt", "timed", NULL};
    PyObject *dt_obj = Py_None;
    int timed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|Op:step", kwlist, &dt_obj, &timed))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h)
        return NULL;
    double dt = dt_obj == Py_None ? 0.0 : PyFloat_AsDouble(dt_obj);
    if (dt == -1.0 && PyErr_Occurred())
        return NULL;
    pbfcl_solver_params p;
    pbfcl_timers t;
    if (PBFCL_PY_CALL(pbfcl_solver_step(h, (float)dt, timed ? &t : NULL)) < 0 ||
        PBFCL_PY_CALL(pbfcl_solver_get_params(h, NULL, &p)) < 0)
        return NULL;
    self->frames++;
    self->time += dt > 0 ? dt : (double)p.dt;
    if (self->flow && run_flow(self, h) < 0)
        return NULL;
    if (!timed)
        Py_RETURN_NONE;
    PyObject *d = pbfcl_py_timers_dict(h, &t);
    if (!d)
        return NULL;
    Py_INCREF(d);
    Py_SETREF(self->timers, d);
    return d;
}

static PyObject *solver_stats(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    pbfcl_stats s;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_stats(h, &s)) < 0)
        return NULL;
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:I,s:I,s:I,s:(ddd),s:I,s:i,s:O}", "kinetic_energy",
                         s.kinetic_energy, "density_error_avg", s.density_error_avg,
                         "density_error_max", s.density_error_max, "max_speed", s.max_speed,
                         "neighbours_avg", s.neighbours_avg, "neighbours_max", s.neighbours_max,
                         "outside", s.outside, "nan", s.nan, "momentum", s.momentum[0],
                         s.momentum[1], s.momentum[2], "neighbour_overflow", s.neighbour_overflow,
                         "substeps", s.substeps, "unstable", s.unstable ? Py_True : Py_False);
}

static PyObject *solver_finish(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h || PBFCL_PY_CALL(pbfcl_solver_finish(h)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *solver_get_count(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    npy_intp n = pbfcl_py_solver_count(self);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

static Py_ssize_t solver_len(pbfcl_py_solver *self)
{
    return pbfcl_py_solver_count(self);
}

static PyObject *solver_get_capacity(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    size_t c = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_capacity(h, &c)) < 0)
        return NULL;
    return PyLong_FromSize_t(c);
}

static PyObject *solver_get_params(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    return pbfcl_py_solver_handle(self) ? pbfcl_py_params_new(self) : NULL;
}

static PyObject *solver_get_timers(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->timers);
    return self->timers;
}

static PyObject *solver_get_time(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    return PyFloat_FromDouble(self->time);
}

static PyObject *solver_get_frames(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    return PyLong_FromLongLong(self->frames);
}

static PyObject *solver_get_alive(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle && self->context && self->context->handle);
}

static PyObject *solver_get_context(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    PyObject *c = self->context ? (PyObject *)self->context : Py_None;
    Py_INCREF(c);
    return c;
}

static PyObject *solver_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    Py_INCREF(self);
    return self;
}

static PyObject *solver_exit(pbfcl_py_solver *self, PyObject *args)
{
    (void)args;
    return solver_destroy(self, NULL);
}

static PyMethodDef solver_methods[] = {
    {"step", (PyCFunction)(void (*)(void))solver_step, METH_VARARGS | METH_KEYWORDS,
     "step(dt=None, timed=False) -> dict | None\n\nAdvances one frame of dt seconds (None: the "
     "parameter dt) in at least params.substeps substeps, then runs the scene's drains and "
     "emitters. timed=True times it per stage with OpenCL profiling events (waiting for the "
     "device) and returns the timers: each stage's ms by name, total, substeps, kernels."},
    {"stats", (PyCFunction)solver_stats, METH_NOARGS,
     "stats() -> dict\n\nThe statistics of the current state: kinetic_energy (J), "
     "density_error_avg and _max (%), max_speed (m/s), neighbours_avg, neighbours_max, outside, "
     "nan, momentum (kg m/s), neighbour_overflow, substeps (of the last step), unstable."},
    {"finish", (PyCFunction)solver_finish, METH_NOARGS,
     "finish()\n\nWaits until the device has finished the solver's work."},
    {"destroy", (PyCFunction)solver_destroy, METH_NOARGS,
     "destroy()\n\nReleases the solver; every later call on it raises pbfcl.Error. Calling it "
     "again does nothing."},
    {"__enter__", solver_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)solver_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef solver_getset[] = {
    {"count", (getter)solver_get_count, NULL, "The active particle count (also len(solver)).",
     NULL},
    {"capacity", (getter)solver_get_capacity, NULL, "The most particles the solver holds.", NULL},
    {"params", (getter)solver_get_params, NULL,
     "The parameters as attributes (pbfcl.Params): solver.params.viscosity = 0.1.", NULL},
    {"timers", (getter)solver_get_timers, NULL, "The timers of the last step(timed=True), or None.",
     NULL},
    {"time", (getter)solver_get_time, NULL, "Simulated time, s: the sum of the steps' dt.", NULL},
    {"frames", (getter)solver_get_frames, NULL, "Steps taken.", NULL},
    {"alive", (getter)solver_get_alive, NULL, "False once it or its context was destroyed.", NULL},
    {"context", (getter)solver_get_context, NULL, "The Context it runs on.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PySequenceMethods solver_as_sequence = {.sq_length = (lenfunc)solver_len};

PyTypeObject pbfcl_py_SolverType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbfcl._pbfcl.Solver",
    .tp_basicsize = sizeof(pbfcl_py_solver),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Solver(context, scene=None, *, particles=None, capacity=None, params=None)\n\n"
              "A particle solver on context, made empty (capacity particles) or from a scene "
              "(a built-in name, a JSON file), filled with about `particles` particles "
              "(None: the scene's own radius). params: a dict of parameter overrides applied "
              "before the fill (see pbfcl.parameters()).",
    .tp_new = solver_new,
    .tp_init = (initproc)solver_init,
    .tp_dealloc = (destructor)solver_dealloc,
    .tp_as_sequence = &solver_as_sequence,
    .tp_methods = solver_methods,
    .tp_getset = solver_getset,
};

/* Joins the method tables of the other solver files into the type's (before PyType_Ready). */
int pbfcl_py_solver_type_prepare(void)
{
    static PyMethodDef all[96];
    static PyGetSetDef getset[48];
    int n = 0, g = 0;
    PyMethodDef *tables[] = {solver_methods,         pbfcl_py_array_methods,
                             pbfcl_py_state_methods, pbfcl_py_render_methods,
                             pbfcl_py_cloth_methods, pbfcl_py_shape_methods};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (PyMethodDef *m = tables[t]; m->ml_name; m++) {
            if (n + 1 >= (int)(sizeof all / sizeof all[0])) {
                PyErr_SetString(PyExc_SystemError, "Solver has more methods than its table holds");
                return -1;
            }
            all[n++] = *m;
        }
    PyGetSetDef *gtables[] = {solver_getset, pbfcl_py_array_getset, pbfcl_py_cloth_getset,
                              pbfcl_py_shape_getset};
    for (size_t t = 0; t < sizeof gtables / sizeof gtables[0]; t++)
        for (PyGetSetDef *d = gtables[t]; d->name; d++) {
            if (g + 1 >= (int)(sizeof getset / sizeof getset[0])) {
                PyErr_SetString(PyExc_SystemError, "Solver has more properties than its table "
                                                   "holds");
                return -1;
            }
            getset[g++] = *d;
        }
    pbfcl_py_SolverType.tp_methods = all;
    pbfcl_py_SolverType.tp_getset = getset;
    return 0;
}
