/* The pbfcl._pbfcl extension module: its functions (devices, version, parameters, phases) and types
 * (Context, Solver, Params), over the public C API of include/pbfcl.h. */
#define PBFCL_PY_IMPORT_ARRAY
#include "pbfcl_py.h"

static PyObject *py_devices(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    int n = pbfcl_device_count();
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        char name[512];
        if (PBFCL_PY_CALL(pbfcl_device_name(i, name, sizeof name)) < 0) {
            Py_CLEAR(list);
            break;
        }
        PyObject *s = PyUnicode_FromString(name);
        if (!s || PyList_Append(list, s) < 0)
            Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

static PyObject *py_find_device(PyObject *module, PyObject *arg)
{
    (void)module;
    PyObject *spec = PyObject_Str(arg);
    int index = -1;
    int rc = spec ? PBFCL_PY_CALL(pbfcl_device_find(PyUnicode_AsUTF8(spec), &index)) : -1;
    Py_XDECREF(spec);
    return rc < 0 ? NULL : PyLong_FromLong(index);
}

static PyObject *py_version(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyUnicode_FromString(pbfcl_version_string());
}

static PyObject *py_scene_is_file(PyObject *module, PyObject *arg)
{
    (void)module;
    const char *name = PyUnicode_AsUTF8(arg);
    return name ? PyBool_FromLong(pbfcl_scene_is_file(name)) : NULL;
}

static PyObject *py_phase_solid_group(PyObject *module, PyObject *arg)
{
    (void)module;
    long g = PyLong_AsLong(arg);
    if (g == -1 && PyErr_Occurred())
        return NULL;
    if (g < 0 || g >= PBFCL_SOLVER_MAX_GROUPS)
        return PyErr_Format(PyExc_ValueError, "group %ld is out of range: it must be 0 to %d", g,
                            PBFCL_SOLVER_MAX_GROUPS - 1);
    return PyLong_FromLong(PBFCL_PHASE_SOLID_GROUP(g));
}

static PyMethodDef module_methods[] = {
    {"devices", py_devices, METH_NOARGS,
     "devices() -> list[str]\n\nEvery OpenCL device's 'platform / device (type)' name; its "
     "index is what Context(device=...) accepts. Empty without an OpenCL driver."},
    {"find_device", py_find_device, METH_O,
     "find_device(spec) -> int\n\nThe index of the device that Context(device=spec) would open "
     "(pbfcl.Error naming the devices present if none matches)."},
    {"version", py_version, METH_NOARGS,
     "version() -> str\n\nThe library's version, 'major.minor.patch'."},
    {"parameters", pbfcl_py_parameters, METH_NOARGS,
     "parameters() -> dict\n\nEvery parameter Solver.params has, by name: the solver's (flag, "
     "default, min, max, range, unit, help, integer) and the scene's (help, range)."},
    {"phase_solid_group", py_phase_solid_group, METH_O,
     "phase_solid_group(g) -> int\n\nThe phase a particle of solid group g (a cloth or rope, "
     "Solver.set_groups) reads as in Solver.get_particle_phases()."},
    {"scene_is_file", py_scene_is_file, METH_O,
     "scene_is_file(name) -> bool\n\nWhether name is a scene file (holds a '/' or ends in "
     "'.json') rather than a built-in scene's name."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pbfcl._pbfcl",
    .m_doc = "The pbfcl C API for Python (use the package pbfcl, which adds scenes as dicts "
             "and checkpoint files).",
    .m_size = -1,
    .m_methods = module_methods,
};

static int add_type(PyObject *m, PyTypeObject *type, const char *name)
{
    if (PyType_Ready(type) < 0)
        return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__pbfcl(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (pbfcl_py_errors_init(m) < 0 || pbfcl_py_solver_type_prepare() < 0 ||
        add_type(m, &pbfcl_py_ContextType, "Context") < 0 ||
        add_type(m, &pbfcl_py_SolverType, "Solver") < 0 ||
        add_type(m, &pbfcl_py_ParamsType, "Params") < 0 ||
        PyModule_AddIntConstant(m, "PHASE_FLUID", PBFCL_PHASE_FLUID) < 0 ||
        PyModule_AddIntConstant(m, "PHASE_STATIC", PBFCL_PHASE_STATIC) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SHAPES", PBFCL_MAX_SHAPES) < 0 ||
        PyModule_AddIntConstant(m, "ATTACH_SHAPE", PBFCL_ATTACH_SHAPE) < 0 ||
        PyModule_AddIntConstant(m, "ATTACH_BODY", PBFCL_ATTACH_BODY) < 0 ||
        PyModule_AddIntConstant(m, "MAX_GROUPS", PBFCL_SOLVER_MAX_GROUPS) < 0 ||
        PyModule_AddIntConstant(m, "HEADER_VERSION", PBFCL_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
