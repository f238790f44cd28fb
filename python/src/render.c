/* Solver.render(): the demo's renderer drawing the solver's particles with no display (EGL,
 * host/demo/demo_offscreen.h) into NumPy arrays. One renderer serves the process, made on the
 * first call; without an EGL display the call raises pbfcl.Error saying what to install. */
#include "pbfcl_py.h"

#ifdef PBFCL_PY_RENDER
#include "demo_offscreen.h"

#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

static pbfcl_offscreen *renderer; /* the process's, made on the first render() */

/* The shaders the build put beside the module (pbfcl/shaders), or NULL when there are none
 * there (the renderer then looks where the demo does: $PBFCL_SHADER_DIR, the source tree). */
static const char *package_shaders(char *dir, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)package_shaders, &info) || !info.dli_fname)
        return NULL;
    snprintf(dir, size, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return NULL;
    snprintf(slash, size - (size_t)(slash - dir), "/shaders");
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/particle.vert", dir);
    return access(probe, R_OK) == 0 ? dir : NULL;
}

/* obj as 3 numbers into v (None leaves v as it is); -1 with ValueError naming the argument. */
static int vec3(PyObject *obj, const char *name, float v[3])
{
    if (!obj || obj == Py_None)
        return 0;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_FLOAT64, 0, 1, NPY_ARRAY_CARRAY);
    if (!a || PyArray_SIZE(a) != 3 || PyArray_NDIM(a) != 1) {
        Py_XDECREF(a);
        PyErr_Format(PyExc_ValueError, "%s must be 3 numbers (x, y, z) in m", name);
        return -1;
    }
    const double *d = (const double *)PyArray_DATA(a);
    for (int k = 0; k < 3; k++)
        v[k] = (float)d[k];
    Py_DECREF(a);
    return 0;
}

static int size_arg(Py_ssize_t value, const char *name, int *out)
{
    if (value < 1 || value > PBFCL_OFFSCREEN_MAX_SIZE) {
        PyErr_Format(PyExc_ValueError, "%s = %zd is out of range: it must be 1 to %d pixels", name,
                     value, PBFCL_OFFSCREEN_MAX_SIZE);
        return -1;
    }
    *out = (int)value;
    return 0;
}

/* The camera from render()'s arguments; -1 with an exception. */
static int parse_camera(pbfcl_solver *s, PyObject *args, PyObject *kwargs,
                        pbfcl_offscreen_camera *c, int *want_depth)
{
    static char *kwlist[] = {"eye",    "target", "up",    "fov", "width",
                             "height", "mode",   "depth", NULL};
    PyObject *eye = Py_None, *target = Py_None, *up = Py_None;
    double fov = 45.0;
    Py_ssize_t width = 256, height = 256;
    const char *mode = "fluid";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOdnnsp", kwlist, &eye, &target, &up, &fov,
                                     &width, &height, &mode, want_depth))
        return -1;
    memset(c, 0, sizeof *c);
    c->up[1] = 1.0f;
    c->fov = (float)fov;
    if (strcmp(mode, "fluid") != 0 && strcmp(mode, "spheres") != 0) {
        PyErr_Format(PyExc_ValueError, "mode = '%s' is unknown: it must be 'fluid' or 'spheres'",
                     mode);
        return -1;
    }
    c->spheres = strcmp(mode, "spheres") == 0;
    if (size_arg(width, "width", &c->width) < 0 || size_arg(height, "height", &c->height) < 0)
        return -1;
    if ((eye == Py_None || target == Py_None) &&
        PBFCL_PY_CALL(pbfcl_offscreen_fit(s, c->eye, c->target)) < 0)
        return -1;
    if (vec3(eye, "eye", c->eye) < 0 || vec3(target, "target", c->target) < 0 ||
        vec3(up, "up", c->up) < 0)
        return -1;
    return PBFCL_PY_CALL(pbfcl_offscreen_check_camera(c));
}

static PyObject *solver_render(pbfcl_py_solver *self, PyObject *args, PyObject *kwargs)
{
    pbfcl_solver *s = pbfcl_py_solver_handle(self);
    pbfcl_offscreen_camera c;
    int want_depth = 0;
    if (!s || parse_camera(s, args, kwargs, &c, &want_depth) < 0)
        return NULL;
    char dir[PATH_MAX];
    if (!renderer &&
        PBFCL_PY_CALL(pbfcl_offscreen_create(&renderer, package_shaders(dir, sizeof dir))) < 0)
        return NULL;
    npy_intp rgb_dims[3] = {c.height, c.width, 3};
    PyObject *rgb = PyArray_SimpleNew(3, rgb_dims, NPY_UINT8);
    PyObject *depth = want_depth && rgb ? PyArray_SimpleNew(2, rgb_dims, NPY_FLOAT32) : NULL;
    if (!rgb || (want_depth && !depth)) {
        Py_XDECREF(rgb);
        return NULL;
    }
    float *z = depth ? (float *)PyArray_DATA((PyArrayObject *)depth) : NULL;
    if (PBFCL_PY_CALL(
            pbfcl_offscreen_render(renderer, s, &c, PyArray_DATA((PyArrayObject *)rgb), z)) < 0) {
        Py_DECREF(rgb);
        Py_XDECREF(depth);
        return NULL;
    }
    if (!depth)
        return rgb;
    PyObject *pair = PyTuple_Pack(2, rgb, depth);
    Py_DECREF(rgb);
    Py_DECREF(depth);
    return pair;
}

#else

static PyObject *solver_render(pbfcl_py_solver *self, PyObject *args, PyObject *kwargs)
{
    (void)self, (void)args, (void)kwargs;
    PyErr_SetString(pbfcl_py_Error,
                    "this pbfcl module was built without rendering: it needs the demo's "
                    "renderer (SDL2 and GLEW development files) and EGL (Debian: libegl-dev) "
                    "when it is built; install them (tools/install-deps --demo) and rebuild");
    return NULL;
}

#endif

PyMethodDef pbfcl_py_render_methods[] = {
    {"render", (PyCFunction)(void (*)(void))solver_render, METH_VARARGS | METH_KEYWORDS,
     "render(eye=None, target=None, up=(0, 1, 0), fov=45.0, width=256, height=256, "
     "mode='fluid', depth=False) -> numpy.ndarray | tuple[numpy.ndarray, numpy.ndarray]\n\n"
     "The particles as the demo draws them, with no display (EGL): the fluid surface (mode "
     "'fluid') or lit spheres coloured by speed ('spheres'), bodies and obstacles in their "
     "colours, floor and box. The camera looks from eye to target (m; None for either: the "
     "demo's opening view) with up the image's up and fov the vertical field of view in "
     "degrees. Returns the colour as uint8 (height, width, 3), top row first; with "
     "depth=True, (rgb, depth), depth float32 (height, width): the distance in m from the "
     "eye's plane along the view direction, inf where nothing was drawn. A bad argument "
     "raises ValueError naming it; no EGL display raises pbfcl.Error saying what to install."},
    {NULL, NULL, 0, NULL}};
