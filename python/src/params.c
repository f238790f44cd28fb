/* Solver parameters as attributes (pbfcl.Params), read from the library's parameter table
 * (pbfcl_solver_param: name, range, unit, help) and the scene-level settings (box, gravity,
 * radius, density); every value is checked against its range before the solver gets it. */
#include "pbfcl_py.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PyObject_HEAD pbfcl_py_solver *solver; /* a strong reference */
} params_object;

/* The scene-level settings: key, 3 components or 1. */
static const struct {
    const char *name;
    int vec3;
    const char *help;
} scene_keys[] = {
    {"domain_min", 1, "the box's lower corner, m (x, y, z)"},
    {"domain_max", 1, "the box's upper corner, m (x, y, z)"},
    {"gravity", 1, "gravity, m/s^2 (x, y, z)"},
    {"particle_radius", 0, "particle radius r, m; particles at rest are spaced 2r"},
    {"rest_density", 0, "the fluid's rest density, kg/m^3"},
};
#define SCENE_KEYS ((int)(sizeof scene_keys / sizeof scene_keys[0]))

static const pbfcl_param_info *find_param(const char *name)
{
    for (int i = 0; i < pbfcl_solver_param_count(); i++)
        if (strcmp(pbfcl_solver_param(i)->name, name) == 0)
            return pbfcl_solver_param(i);
    return NULL;
}

static float *scene_field(pbfcl_scene_params *p, const char *name)
{
    if (!strcmp(name, "domain_min"))
        return p->domain_min;
    if (!strcmp(name, "domain_max"))
        return p->domain_max;
    if (!strcmp(name, "gravity"))
        return p->gravity;
    if (!strcmp(name, "particle_radius"))
        return &p->particle_radius;
    if (!strcmp(name, "rest_density"))
        return &p->rest_density;
    return NULL;
}

static int scene_is_vec3(const char *name)
{
    for (int k = 0; k < SCENE_KEYS; k++)
        if (!strcmp(scene_keys[k].name, name))
            return scene_keys[k].vec3;
    return 0;
}

/* A finite real number from value (not a bool or a string); -1 with TypeError / ValueError. */
static int finite_number(PyObject *value, const char *name, double *out)
{
    if (PyBool_Check(value) || PyUnicode_Check(value) || !PyNumber_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be a number, not %s", name, Py_TYPE(value)->tp_name);
        return -1;
    }
    *out = PyFloat_AsDouble(value);
    if (*out == -1.0 && PyErr_Occurred())
        return -1;
    if (!isfinite(*out)) {
        PyErr_Format(PyExc_ValueError, "%s must be a finite number (got %R)", name, value);
        return -1;
    }
    return 0;
}

/* The method by name ("pbf", "sph") or index. */
static int assign_method(pbfcl_solver_params *solver, const pbfcl_param_info *info, PyObject *value)
{
    int m = -1;
    if (PyUnicode_Check(value))
        m = pbfcl_method_from_name(PyUnicode_AsUTF8(value));
    else if (PyLong_Check(value) && !PyBool_Check(value))
        m = (int)PyLong_AsLong(value);
    if (m < 0 || m >= PBFCL_METHOD_COUNT) {
        PyErr_Format(PyExc_ValueError, "%s must be 'pbf' or 'sph' (got %R)", info->name, value);
        return -1;
    }
    pbfcl_param_set(solver, info, m);
    return 0;
}

static int assign_solver(pbfcl_solver_params *solver, const pbfcl_param_info *info, PyObject *value)
{
    if (info->flags & PBFCL_PARAM_NAMED)
        return assign_method(solver, info, value);
    double v;
    if (finite_number(value, info->name, &v) < 0)
        return -1;
    char range[128];
    pbfcl_param_range_text(info, range, sizeof range);
    if ((info->is_int && v != floor(v)) || !pbfcl_param_in_range(info, v)) {
        PyErr_Format(PyExc_ValueError, "%s = %R is out of range: it must be %s%s%s", info->name,
                     value, range, info->unit[0] ? ", in " : "", info->unit);
        return -1;
    }
    pbfcl_param_set(solver, info, v);
    return 0;
}

/* One number of a scene setting, checked against pbfcl_scene_range where it has one. */
static int scene_number(PyObject *item, const char *name, float *out)
{
    double v;
    if (finite_number(item, name, &v) < 0)
        return -1;
    const pbfcl_setting_range *r = pbfcl_scene_range(name);
    if (r && !pbfcl_range_holds(r, v)) {
        char range[128];
        pbfcl_range_text(r, range, sizeof range);
        PyErr_Format(PyExc_ValueError, "%s = %R is out of range: it must be %s", name, item, range);
        return -1;
    }
    *out = (float)v;
    return 0;
}

static int assign_scene(pbfcl_scene_params *scene, const char *name, PyObject *value)
{
    float *field = scene_field(scene, name);
    if (!scene_is_vec3(name))
        return scene_number(value, name, field);
    PyObject *seq = PySequence_Check(value) ? PySequence_Fast(value, name) : NULL;
    if (!seq || PySequence_Fast_GET_SIZE(seq) != 3) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be three numbers (x, y, z), got %R", name, value);
        return -1;
    }
    float v[3];
    for (int k = 0; k < 3; k++)
        if (scene_number(PySequence_Fast_GET_ITEM(seq, k), name, &v[k]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    Py_DECREF(seq);
    memcpy(field, v, sizeof v);
    return 0;
}

int pbfcl_py_param_assign(pbfcl_scene_params *scene, pbfcl_solver_params *solver, const char *name,
                          PyObject *value)
{
    if (!value) {
        PyErr_Format(PyExc_AttributeError, "parameter '%s' cannot be deleted", name);
        return -1;
    }
    const pbfcl_param_info *info = find_param(name);
    if (info)
        return assign_solver(solver, info, value);
    if (scene_field(scene, name))
        return assign_scene(scene, name, value);
    PyErr_Format(PyExc_AttributeError, "unknown parameter '%s' (pbfcl.parameters() lists them all)",
                 name);
    return -1;
}

/* The float32 v as the shortest decimal that reads back as it (0.05, not 0.0500000007). */
static PyObject *float32_value(float v)
{
    char text[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, (double)v);
        if (strtof(text, NULL) == v)
            break;
    }
    return PyFloat_FromDouble(strtod(text, NULL));
}

/* The value of parameter name in the structs: int, float, the method's name or a 3-tuple. */
static PyObject *param_value(const pbfcl_scene_params *scene, const pbfcl_solver_params *solver,
                             const char *name)
{
    const pbfcl_param_info *info = find_param(name);
    if (info) {
        double v = pbfcl_param_get(solver, info);
        if (info->flags & PBFCL_PARAM_NAMED)
            return PyUnicode_FromString(pbfcl_method_name((int)v));
        return info->is_int ? PyLong_FromDouble(v) : float32_value((float)v);
    }
    float *f = scene_field((pbfcl_scene_params *)scene, name);
    if (!f)
        return NULL;
    if (scene_is_vec3(name))
        return Py_BuildValue("(NNN)", float32_value(f[0]), float32_value(f[1]),
                             float32_value(f[2]));
    return float32_value(*f);
}

static PyObject *params_getattro(params_object *self, PyObject *attr)
{
    const char *name = PyUnicode_AsUTF8(attr);
    if (!name)
        return NULL;
    if (name[0] == '_' || (!find_param(name) && !scene_field(&(pbfcl_scene_params){0}, name)))
        return PyObject_GenericGetAttr((PyObject *)self, attr);
    pbfcl_solver *h = pbfcl_py_solver_handle(self->solver);
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_get_params(h, &scene, &solver)) < 0)
        return NULL;
    return param_value(&scene, &solver, name);
}

static int params_setattro(params_object *self, PyObject *attr, PyObject *value)
{
    const char *name = PyUnicode_AsUTF8(attr);
    if (!name)
        return -1;
    pbfcl_solver *h = pbfcl_py_solver_handle(self->solver);
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_get_params(h, &scene, &solver)) < 0)
        return -1;
    if (pbfcl_py_param_assign(&scene, &solver, name, value) < 0)
        return -1;
    return PBFCL_PY_CALL(pbfcl_solver_set_params(h, &scene, &solver));
}

/* Every parameter name: the solver's, then the scene's. */
static PyObject *param_names(void)
{
    PyObject *names = PyList_New(0);
    for (int i = 0; names && i < pbfcl_solver_param_count() + SCENE_KEYS; i++) {
        const char *n = i < pbfcl_solver_param_count()
                            ? pbfcl_solver_param(i)->name
                            : scene_keys[i - pbfcl_solver_param_count()].name;
        PyObject *s = PyUnicode_FromString(n);
        if (!s || PyList_Append(names, s) < 0) {
            Py_XDECREF(s);
            Py_CLEAR(names);
            break;
        }
        Py_DECREF(s);
    }
    return names;
}

static PyObject *params_as_dict(params_object *self, PyObject *unused)
{
    (void)unused;
    pbfcl_solver *h = pbfcl_py_solver_handle(self->solver);
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_get_params(h, &scene, &solver)) < 0)
        return NULL;
    PyObject *names = param_names(), *d = PyDict_New();
    for (Py_ssize_t i = 0; names && d && i < PyList_GET_SIZE(names); i++) {
        PyObject *key = PyList_GET_ITEM(names, i);
        PyObject *v = param_value(&scene, &solver, PyUnicode_AsUTF8(key));
        if (!v || PyDict_SetItem(d, key, v) < 0) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    Py_XDECREF(names);
    return d;
}

static PyObject *params_update(params_object *self, PyObject *args, PyObject *kwds)
{
    PyObject *mapping = NULL;
    if (!PyArg_ParseTuple(args, "|O!:update", &PyDict_Type, &mapping))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self->solver);
    pbfcl_scene_params scene;
    pbfcl_solver_params solver;
    if (!h || PBFCL_PY_CALL(pbfcl_solver_get_params(h, &scene, &solver)) < 0)
        return NULL;
    PyObject *sources[2] = {mapping, kwds}, *key, *value;
    for (int k = 0; k < 2; k++) {
        Py_ssize_t pos = 0;
        while (sources[k] && PyDict_Next(sources[k], &pos, &key, &value)) {
            const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
            if (!name)
                return PyErr_Format(PyExc_TypeError, "parameter names must be strings");
            if (pbfcl_py_param_assign(&scene, &solver, name, value) < 0)
                return NULL;
        }
    }
    if (PBFCL_PY_CALL(pbfcl_solver_set_params(h, &scene, &solver)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *params_dir(params_object *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *names = param_names();
    static const char *const methods[] = {"as_dict", "update"};
    for (int k = 0; names && k < 2; k++) {
        PyObject *s = PyUnicode_FromString(methods[k]);
        if (!s || PyList_Append(names, s) < 0)
            Py_CLEAR(names);
        Py_XDECREF(s);
    }
    return names;
}

static PyObject *params_repr(params_object *self)
{
    PyObject *d = params_as_dict(self, NULL);
    if (!d)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("pbfcl.Params(%R)", d);
    Py_DECREF(d);
    return r;
}

static void params_dealloc(params_object *self)
{
    Py_XDECREF(self->solver);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef params_methods[] = {
    {"as_dict", (PyCFunction)params_as_dict, METH_NOARGS,
     "as_dict() -> dict\n\nEvery parameter's value by name."},
    {"update", (PyCFunction)(void (*)(void))params_update, METH_VARARGS | METH_KEYWORDS,
     "update(mapping=None, **values)\n\nSets several parameters at once: all are checked "
     "before any is set, so a refused one leaves every value as it was."},
    {"__dir__", (PyCFunction)params_dir, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

PyTypeObject pbfcl_py_ParamsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbfcl.Params",
    .tp_basicsize = sizeof(params_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A solver's parameters as attributes (solver.params.viscosity = 0.1): the solver "
              "parameters of pbfcl.parameters() (dt, substeps, iterations, viscosity, ...) and "
              "the scene's domain_min, domain_max, gravity, particle_radius, rest_density. A "
              "value outside its range raises ValueError with the range; an unknown name "
              "raises AttributeError. Changes apply from the next step.",
    .tp_dealloc = (destructor)params_dealloc,
    .tp_getattro = (getattrofunc)params_getattro,
    .tp_setattro = (setattrofunc)params_setattro,
    .tp_repr = (reprfunc)params_repr,
    .tp_methods = params_methods,
};

PyObject *pbfcl_py_params_new(pbfcl_py_solver *solver)
{
    params_object *p = PyObject_New(params_object, &pbfcl_py_ParamsType);
    if (!p)
        return NULL;
    Py_INCREF(solver);
    p->solver = solver;
    return (PyObject *)p;
}

/* One parameter's description as a dict. */
static PyObject *param_description(const pbfcl_param_info *info)
{
    char range[128];
    pbfcl_param_range_text(info, range, sizeof range);
    PyObject *def = (info->flags & PBFCL_PARAM_NAMED)
                        ? PyUnicode_FromString(pbfcl_method_name((int)info->def))
                    : info->is_int ? PyLong_FromDouble(info->def)
                                   : PyFloat_FromDouble(info->def);
    if (!def)
        return NULL;
    return Py_BuildValue("{s:s,s:N,s:d,s:d,s:s,s:s,s:s,s:O}", "flag", info->flag, "default", def,
                         "min", info->lo, "max", info->hi, "range", range, "unit", info->unit,
                         "help", info->help, "integer",
                         info->is_int || (info->flags & PBFCL_PARAM_WHOLE) ? Py_True : Py_False);
}

PyObject *pbfcl_py_parameters(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < pbfcl_solver_param_count(); i++) {
        const pbfcl_param_info *info = pbfcl_solver_param(i);
        PyObject *v = param_description(info);
        if (!v || PyDict_SetItemString(d, info->name, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    for (int k = 0; d && k < SCENE_KEYS; k++) {
        const pbfcl_setting_range *r = pbfcl_scene_range(scene_keys[k].name);
        char range[128] = "finite numbers";
        if (r)
            pbfcl_range_text(r, range, sizeof range);
        PyObject *v = Py_BuildValue("{s:s,s:s,s:O}", "help", scene_keys[k].help, "range", range,
                                    "scene", Py_True);
        if (!v || PyDict_SetItemString(d, scene_keys[k].name, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}
