/* Collision shapes on a solver (pbfcl_shape_*): spheres, capsules, boxes, convex hulls,
 * triangle meshes and signed distance fields of closed meshes with a pose (position, rotation
 * quaternion) and velocities, made, moved, read and destroyed by id, with the force the particles
 * exert on each. */
#include "pbfcl_py.h"

#include <string.h>

static const struct {
    const char *name;
    pbfcl_shape_type type;
} kinds[] = {{"sphere", PBFCL_SHAPE_KIND_SPHERE}, {"capsule", PBFCL_SHAPE_KIND_CAPSULE},
             {"box", PBFCL_SHAPE_KIND_BOX},       {"convex", PBFCL_SHAPE_KIND_CONVEX},
             {"mesh", PBFCL_SHAPE_KIND_MESH},     {"sdf", PBFCL_SHAPE_KIND_SDF}};

/* obj as n finite numbers into v (None leaves v as it is, *given 0); -1 with ValueError. */
static int small_vector(PyObject *obj, int n, const char *name, const char *unit, float *v,
                        int *given)
{
    if (given)
        *given = 0;
    if (!obj || obj == Py_None)
        return 0;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_FLOAT64, 0, 1, NPY_ARRAY_CARRAY);
    int ok = a && PyArray_NDIM(a) == 1 && PyArray_SIZE(a) == n;
    for (int k = 0; ok && k < n; k++) {
        double d = ((const double *)PyArray_DATA(a))[k];
        ok = Py_IS_FINITE(d);
        v[k] = (float)d;
    }
    Py_XDECREF(a);
    if (!ok) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be %d finite numbers%s", name, n, unit);
        return -1;
    }
    if (given)
        *given = 1;
    return 0;
}

static int shape_kind(const char *name, pbfcl_shape_type *type)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].name, name)) {
            *type = kinds[i].type;
            return 0;
        }
    PyErr_Format(PyExc_ValueError,
                 "unknown shape kind '%s': give 'sphere', 'capsule', 'box', 'convex' or 'mesh'",
                 name);
    return -1;
}

/* The arrays a shape desc points into, kept alive until the shape is made. */
typedef struct {
    PyArrayObject *points, *vertices, *triangles;
    PyObject *path; /* bytes */
} shape_arrays;

static void shape_arrays_free(shape_arrays *a)
{
    Py_XDECREF(a->points);
    Py_XDECREF(a->vertices);
    Py_XDECREF(a->triangles);
    Py_XDECREF(a->path);
}

/* The points, vertices, triangles and OBJ file of desc from their arguments; 0 or -1. */
static int shape_geometry(pbfcl_shape_desc *d, shape_arrays *a, PyObject *points,
                          PyObject *vertices, PyObject *triangles, PyObject *obj)
{
    if (points != Py_None) {
        if (!(a->points = pbfcl_py_input_per(points, NPY_FLOAT32, -1, 3, "points", NULL)))
            return -1;
        d->points = PyArray_DATA(a->points);
        d->point_count = (size_t)PyArray_DIM(a->points, 0);
    }
    if (vertices != Py_None) {
        if (!(a->vertices = pbfcl_py_input_per(vertices, NPY_FLOAT32, -1, 3, "vertices", NULL)))
            return -1;
        d->vertices = PyArray_DATA(a->vertices);
        d->vertex_count = (size_t)PyArray_DIM(a->vertices, 0);
    }
    if (triangles != Py_None) {
        if (!(a->triangles = pbfcl_py_input_per(triangles, NPY_UINT32, -1, 3, "triangles", NULL)))
            return -1;
        d->triangles = PyArray_DATA(a->triangles);
        d->triangle_count = (size_t)PyArray_DIM(a->triangles, 0);
    }
    if (obj != Py_None) {
        if (!PyUnicode_FSConverter(obj, &a->path))
            return -1;
        d->obj_path = PyBytes_AS_STRING(a->path);
    }
    return 0;
}

/* The pose, motion and surface arguments of create_shape and set_shape_motion. */
static int shape_pose(pbfcl_shape_desc *d, PyObject *position, PyObject *rotation,
                      PyObject *velocity, PyObject *angular_velocity)
{
    return small_vector(position, 3, "position", " (x, y, z) in m", d->position, NULL) < 0 ||
                   small_vector(rotation, 4, "rotation", " (a quaternion x, y, z, w)", d->rotation,
                                NULL) < 0 ||
                   small_vector(velocity, 3, "velocity", " (m/s)", d->velocity, NULL) < 0 ||
                   small_vector(angular_velocity, 3, "angular_velocity", " (rad/s)",
                                d->angular_velocity, NULL) < 0
               ? -1
               : 0;
}

static PyObject *create_shape(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"kind",
                             "radius",
                             "half_length",
                             "half_extents",
                             "points",
                             "vertices",
                             "triangles",
                             "obj",
                             "scale",
                             "two_sided",
                             "position",
                             "rotation",
                             "velocity",
                             "angular_velocity",
                             "friction",
                             "static_friction",
                             "margin",
                             "name",
                             "sdf_resolution",
                             "until",
                             NULL};
    const char *kind, *name = NULL;
    pbfcl_shape_desc d;
    memset(&d, 0, sizeof d);
    PyObject *half_extents = Py_None, *points = Py_None, *vertices = Py_None, *triangles = Py_None,
             *obj = Py_None, *position = Py_None, *rotation = Py_None, *velocity = Py_None,
             *angular_velocity = Py_None;
    int two_sided = 0;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds, "s|$ffOOOOOfpOOOOfffzif:create_shape", kwlist, &kind, &d.radius,
            &d.half_length, &half_extents, &points, &vertices, &triangles, &obj, &d.scale,
            &two_sided, &position, &rotation, &velocity, &angular_velocity, &d.friction,
            &d.static_friction, &d.margin, &name, &d.sdf_resolution, &d.until))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h || shape_kind(kind, &d.type) < 0)
        return NULL;
    d.two_sided = two_sided;
    d.name = name;
    shape_arrays a = {0};
    int id = -1;
    int rc = small_vector(half_extents, 3, "half_extents", " (m)", d.half_extents, NULL);
    if (rc == 0)
        rc = shape_pose(&d, position, rotation, velocity, angular_velocity);
    if (rc == 0)
        rc = shape_geometry(&d, &a, points, vertices, triangles, obj);
    if (rc == 0)
        rc = PBFCL_PY_CALL(pbfcl_shape_create(h, &d, &id));
    shape_arrays_free(&a);
    return rc < 0 ? NULL : PyLong_FromLong(id);
}

static PyObject *set_shape_motion(pbfcl_py_solver *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"id", "position", "rotation", "velocity", "angular_velocity", NULL};
    int id;
    PyObject *position = Py_None, *rotation = Py_None, *velocity = Py_None,
             *angular_velocity = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "i|OOOO:set_shape_motion", kwlist, &id, &position,
                                     &rotation, &velocity, &angular_velocity))
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    float p[3], q[4], v[3], w[3];
    int gp, gq, gv, gw;
    if (!h || small_vector(position, 3, "position", " (x, y, z) in m", p, &gp) < 0 ||
        small_vector(rotation, 4, "rotation", " (a quaternion x, y, z, w)", q, &gq) < 0 ||
        small_vector(velocity, 3, "velocity", " (m/s)", v, &gv) < 0 ||
        small_vector(angular_velocity, 3, "angular_velocity", " (rad/s)", w, &gw) < 0)
        return NULL;
    if (PBFCL_PY_CALL(pbfcl_shape_set_motion(h, id, gp ? p : NULL, gq ? q : NULL, gv ? v : NULL,
                                             gw ? w : NULL)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *get_shape_pose(pbfcl_py_solver *self, PyObject *arg)
{
    int id = (int)PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    npy_intp d3[1] = {3}, d4[1] = {4};
    PyArrayObject *p = h ? (PyArrayObject *)PyArray_SimpleNew(1, d3, NPY_FLOAT32) : NULL;
    PyArrayObject *q = p ? (PyArrayObject *)PyArray_SimpleNew(1, d4, NPY_FLOAT32) : NULL;
    if (q && PBFCL_PY_CALL(pbfcl_shape_get_pose(h, id, PyArray_DATA(p), PyArray_DATA(q))) == 0)
        return Py_BuildValue("NN", p, q);
    Py_XDECREF(p);
    Py_XDECREF(q);
    return NULL;
}

static PyObject *destroy_shape(pbfcl_py_solver *self, PyObject *arg)
{
    int id = (int)PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h || PBFCL_PY_CALL(pbfcl_shape_destroy(h, id)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *shape_contacts(pbfcl_py_solver *self, PyObject *arg)
{
    int id = (int)PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    npy_intp d3[1] = {3};
    unsigned contacts = 0, inside = 0;
    PyArrayObject *f = h ? (PyArrayObject *)PyArray_SimpleNew(1, d3, NPY_FLOAT32) : NULL;
    if (f && PBFCL_PY_CALL(pbfcl_shape_contacts(h, id, PyArray_DATA(f), &contacts, &inside)) == 0)
        return Py_BuildValue("{s:N,s:I,s:I}", "force", f, "contacts", contacts, "inside", inside);
    Py_XDECREF(f);
    return NULL;
}

static PyObject *prop_shape_count(pbfcl_py_solver *self, void *closure)
{
    (void)closure;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    int n = 0;
    if (!h || PBFCL_PY_CALL(pbfcl_shape_count(h, &n)) < 0)
        return NULL;
    return PyLong_FromLong(n);
}

#define KW METH_VARARGS | METH_KEYWORDS
#define CAST(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pbfcl_py_shape_methods[] = {
    {"create_shape", CAST(create_shape), KW,
     "create_shape(kind, *, radius=0, half_length=0, half_extents=None, points=None, "
     "vertices=None, triangles=None, obj=None, scale=0, two_sided=False, position=None, "
     "rotation=None, velocity=None, angular_velocity=None, friction=0, static_friction=0, "
     "margin=0, name=None, sdf_resolution=0, until=0) -> int\n\nAdds a collision shape "
     "(method pbf only; at most pbfcl.MAX_SHAPES) and returns its id. kind: 'sphere' (radius), "
     "'capsule' (radius, half_length along its local x), 'box' (half_extents), 'convex' (the "
     "hull of points, float32 (P, 3), or of obj's vertices), 'mesh' (vertices float32 (V, 3) "
     "and triangles uint32 (T, 3), counter-clockwise from the front, or the OBJ file obj; scale "
     "multiplies its vertices; two_sided collides on both sides), 'sdf' (the signed distance "
     "field of a closed mesh given as for 'mesh', sdf_resolution cells along its longest side, "
     "2 to 128, 0 for 32; an open mesh is refused). position (m) and rotation (quaternion "
     "x, y, z, w; None: none) place it; velocity (m/s) and angular_velocity (rad/s, about "
     "position) move it each substep, for until s (0: for ever). Particles keep radius + margin "
     "from its surface with "
     "Coulomb friction. A shape refused is named with the fix (pbfcl.ArgumentError)."},
    {"set_shape_motion", CAST(set_shape_motion), KW,
     "set_shape_motion(id, position=None, rotation=None, velocity=None, "
     "angular_velocity=None)\n\nMoves shape id to a new pose and velocities; None keeps one as "
     "it is."},
    {"get_shape_pose", (PyCFunction)get_shape_pose, METH_O,
     "get_shape_pose(id) -> (position, rotation)\n\nShape id's pose: float32 (3,) in m and "
     "float32 (4,), the quaternion x, y, z, w."},
    {"destroy_shape", (PyCFunction)destroy_shape, METH_O,
     "destroy_shape(id)\n\nRemoves shape id (ids are never reused)."},
    {"shape_contacts", (PyCFunction)shape_contacts, METH_O,
     "shape_contacts(id) -> dict\n\nShape id's contacts in the last step: force, float32 (3,), "
     "N, what the particles exert on it, the fluid's pressure included (averaged over the step's "
     "substeps); contacts, the "
     "particles its contacts moved in the last substep; inside, the particles found inside it "
     "since shapes were last added or destroyed. Zeros before the first step after such a "
     "change."},
    {NULL, NULL, 0, NULL}};

PyGetSetDef pbfcl_py_shape_getset[] = {
    {"shape_count", (getter)prop_shape_count, NULL, "The number of collision shapes.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};
