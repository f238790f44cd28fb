/* pbfcl.Context: an OpenCL device, context and queue (pbfcl_context). Destroying it destroys
 * its solvers; their Python objects then raise on every call. */
#include "pbfcl_py.h"

static int context_init(pbfcl_py_context *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"device", "kernel_dir", NULL};
    PyObject *device = Py_None;
    const char *kernel_dir = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|Oz:Context", kwlist, &device, &kernel_dir))
        return -1;
    if (self->handle) {
        PyErr_SetString(PyExc_RuntimeError, "Context.__init__ called twice");
        return -1;
    }
    PyObject *spec = NULL; /* the device as text: an index or part of a name */
    if (device != Py_None) {
        if (!PyLong_Check(device) && !PyUnicode_Check(device)) {
            PyErr_Format(PyExc_TypeError,
                         "device must be an index (int) from pbfcl.devices() or part of a "
                         "platform or device name (str), not %s",
                         Py_TYPE(device)->tp_name);
            return -1;
        }
        if (!(spec = PyObject_Str(device)))
            return -1;
    }
    pbfcl_context_desc desc;
    pbfcl_context_desc_defaults(&desc);
    desc.device = spec ? PyUnicode_AsUTF8(spec) : NULL;
    desc.kernel_dir = kernel_dir;
    int rc = PBFCL_PY_CALL(pbfcl_context_create(PBFCL_VERSION, &desc, &self->handle));
    Py_XDECREF(spec);
    return rc;
}

static PyObject *context_destroy(pbfcl_py_context *self, PyObject *unused)
{
    (void)unused;
    pbfcl_context *h = self->handle;
    self->handle = NULL;
    if (h && PBFCL_PY_CALL(pbfcl_context_destroy(h)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static void context_dealloc(pbfcl_py_context *self)
{
    if (self->handle)
        pbfcl_context_destroy(self->handle);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *context_device_name(pbfcl_py_context *self, void *closure)
{
    (void)closure;
    if (!self->handle) {
        pbfcl_py_destroyed("context");
        return NULL;
    }
    char name[512];
    if (PBFCL_PY_CALL(pbfcl_context_device_name(self->handle, name, sizeof name)) < 0)
        return NULL;
    return PyUnicode_FromString(name);
}

static PyObject *context_cl_handles(pbfcl_py_context *self, void *closure)
{
    (void)closure;
    if (!self->handle) {
        pbfcl_py_destroyed("context");
        return NULL;
    }
    cl_context context;
    cl_device_id device;
    cl_command_queue queue;
    if (PBFCL_PY_CALL(pbfcl_context_cl(self->handle, &context, &device, &queue)) < 0)
        return NULL;
    return Py_BuildValue("(NNN)", PyLong_FromVoidPtr(context), PyLong_FromVoidPtr(device),
                         PyLong_FromVoidPtr(queue));
}

static PyObject *context_alive(pbfcl_py_context *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle != NULL);
}

static PyObject *context_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    Py_INCREF(self);
    return self;
}

static PyObject *context_exit(pbfcl_py_context *self, PyObject *args)
{
    (void)args;
    return context_destroy(self, NULL);
}

static PyMethodDef context_methods[] = {
    {"destroy", (PyCFunction)context_destroy, METH_NOARGS,
     "destroy()\n\nReleases the device context and destroys every solver on it (their objects "
     "raise pbfcl.Error afterwards). Calling it again does nothing."},
    {"__enter__", context_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)context_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef context_getset[] = {
    {"device_name", (getter)context_device_name, NULL, "The device's 'platform / device' name.",
     NULL},
    {"cl_handles", (getter)context_cl_handles, NULL,
     "(context, device, queue): the OpenCL objects the context uses, as integers (the "
     "addresses of cl_context, cl_device_id, cl_command_queue; pbfcl_context_cl), for OpenCL "
     "calls of your own on them (e.g. pyopencl's Context.from_int_ptr, or ctypes). Still owned "
     "by the context: valid until it is destroyed.",
     NULL},
    {"alive", (getter)context_alive, NULL, "False once destroyed.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject pbfcl_py_ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbfcl.Context",
    .tp_basicsize = sizeof(pbfcl_py_context),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Context(device=None, kernel_dir=None)\n\n"
              "An OpenCL device, context and queue. device: an index from pbfcl.devices() or "
              "a case-insensitive part of a platform or device name; None: the first GPU, else "
              "the first device. kernel_dir: a folder of .cl files to build instead of the "
              "built-in kernels (a copy of pbfcl's cl/, with its folders or flat). It keeps the "
              "programs its first solver built: later solvers of the same parameters on it are "
              "made in milliseconds, so make many solvers on one context rather than a context "
              "each. Usable as a context manager (destroyed on exit).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)context_init,
    .tp_dealloc = (destructor)context_dealloc,
    .tp_methods = context_methods,
    .tp_getset = context_getset,
};
