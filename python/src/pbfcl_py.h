/* What the files of the pbfcl Python module share: its types (Context, Solver, Params), the
 * library's messages turned into exceptions, and the checks of NumPy array arguments. The
 * module uses the public C API (include/pbfcl.h) only. */
#ifndef PBFCL_PY_H
#define PBFCL_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL pbfcl_py_ARRAY_API
#ifndef PBFCL_PY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "pbfcl.h"

/* ---- errors (errors.c) ------------------------------------------------------------------ */

extern PyObject *pbfcl_py_Error;         /* pbfcl.Error(RuntimeError) */
extern PyObject *pbfcl_py_ArgumentError; /* pbfcl.ArgumentError(pbfcl.Error, ValueError) */

/* Makes the exception types and routes the library's log into the module. */
int pbfcl_py_errors_init(PyObject *module);

/* Forgets the messages logged so far (call before a library call). */
void pbfcl_py_log_begin(void);

/* 0 if st is PBFCL_OK (the warnings logged since pbfcl_py_log_begin become Python warnings);
 * else -1 with pbfcl.Error (pbfcl.ArgumentError for a bad argument) raised, carrying the
 * library's messages and the status's name. */
int pbfcl_py_check(pbfcl_status st);

/* A library call: its status checked as above, its messages its own. */
#define PBFCL_PY_CALL(expr) (pbfcl_py_log_begin(), pbfcl_py_check(expr))

/* Raises pbfcl.Error with status PBFCL_ERR_INVALID_HANDLE and what was destroyed; -1. */
int pbfcl_py_destroyed(const char *what);

/* ---- arrays (arrays.c) -------------------------------------------------------------------- */

/* An input array of rows of `cols` values (cols 0: a 1-D array) of type typenum (NPY_FLOAT32 or
 * NPY_INT32) with `rows` rows (-1: any; then an empty input of any shape is no rows),
 * C-contiguous: obj itself when it already is one, else a lossless conversion; a new
 * reference, or NULL with TypeError / ValueError naming what is needed. */
PyArrayObject *pbfcl_py_input(PyObject *obj, int typenum, npy_intp rows, int cols,
                              const char *what);

/* pbfcl_py_input for rows of something else than particles (per: "constraint"; NULL: not
 * said), also for NPY_UINT32 (indices: any integer array or list whose values fit, bool and
 * floats refused). */
PyArrayObject *pbfcl_py_input_per(PyObject *obj, int typenum, npy_intp rows, int cols,
                                  const char *what, const char *per);

/* The array to read into: `out` checked (exactly typenum, rows x cols, C-contiguous, writeable;
 * a new reference) or, when out is None or NULL, a new one; NULL with an exception. */
PyArrayObject *pbfcl_py_output(PyObject *out, int typenum, npy_intp rows, int cols,
                               const char *what);

/* ---- context (context.c) ------------------------------------------------------------------ */

typedef struct pbfcl_py_context {
    PyObject_HEAD pbfcl_context *handle; /* NULL once destroyed */
} pbfcl_py_context;

extern PyTypeObject pbfcl_py_ContextType;

/* ---- solver (solver.c, solver_arrays.c, solver_state.c, solver_cloth.c, solver_shapes.c) -- */

typedef struct pbfcl_py_solver {
    PyObject_HEAD pbfcl_py_context *context; /* a strong reference */
    pbfcl_solver *handle;                    /* NULL once destroyed */
    pbfcl_scene_setup *setup;                /* the scene it was made from, or NULL */
    int flow;                                /* the scene has emitters or drains */
    double time;                             /* simulated time, s: the sum of the steps */
    long long frames;                        /* steps taken */
    PyObject *timers;                        /* the last timed step's dict, or None */
} pbfcl_py_solver;

extern PyTypeObject pbfcl_py_SolverType;
extern PyTypeObject pbfcl_py_ParamsType;

/* The solver's live handle; NULL with pbfcl.Error raised when it or its context was destroyed. */
pbfcl_solver *pbfcl_py_solver_handle(pbfcl_py_solver *self);

/* The active particle count; -1 with an exception. */
npy_intp pbfcl_py_solver_count(pbfcl_py_solver *self);

/* The method tables of the particle arrays and of the checkpoints. */
extern PyMethodDef pbfcl_py_array_methods[];
extern PyGetSetDef pbfcl_py_array_getset[];
extern PyMethodDef pbfcl_py_state_methods[];
extern PyMethodDef pbfcl_py_render_methods[]; /* render.c */
extern PyMethodDef pbfcl_py_cloth_methods[];  /* solver_cloth.c */
extern PyGetSetDef pbfcl_py_cloth_getset[];
extern PyMethodDef pbfcl_py_shape_methods[]; /* solver_shapes.c */
extern PyGetSetDef pbfcl_py_shape_getset[];

/* Gives the Solver type the methods and properties of every solver file. */
int pbfcl_py_solver_type_prepare(void);

/* ---- parameters (params.c) ---------------------------------------------------------------- */

/* A Params object viewing solver's parameters. */
PyObject *pbfcl_py_params_new(pbfcl_py_solver *solver);

/* Sets parameter `name` of scene / solver to value, checked against its range (ValueError with
 * the range, AttributeError for an unknown name); 0 or -1. */
int pbfcl_py_param_assign(pbfcl_scene_params *scene, pbfcl_solver_params *solver, const char *name,
                          PyObject *value);

/* pbfcl.parameters(): every parameter's description, by name. */
PyObject *pbfcl_py_parameters(PyObject *module, PyObject *unused);

/* ---- timers (timers.c) -------------------------------------------------------------------- */

/* The timers of a step as a dict: each stage's ms by its name, total, substeps, kernels. */
PyObject *pbfcl_py_timers_dict(const pbfcl_solver *s, const pbfcl_timers *t);

#endif
