/* Checkpoints as bytes: the named sections of pbfcl_solver_save_state (and of the scene setup,
 * for emitters and drains) in one buffer with a header and a checksum, loaded back through
 * pbfcl_solver_load_state. Layout: "PBFCLPY1", u32 library version, u64 body bytes, u64 FNV-1a
 * of the body; body: per section u32 name bytes, the name, u64 data bytes, the data. */
#include "pbfcl_py.h"

#include <stdint.h>
#include <string.h>

static const char MAGIC[8] = {'P', 'B', 'F', 'C', 'L', 'P', 'Y', '1'};
enum { HEADER = 8 + 4 + 8 + 8 };

typedef struct {
    char *data;
    size_t size, cap;
} growing;

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static pbfcl_status append(growing *g, const void *p, size_t n)
{
    if (g->size + n > g->cap) {
        size_t cap = g->cap ? g->cap : 1 << 16;
        while (cap < g->size + n)
            cap *= 2;
        char *d = PyMem_Realloc(g->data, cap);
        if (!d)
            return PBFCL_ERR_OUT_OF_MEMORY;
        g->data = d;
        g->cap = cap;
    }
    memcpy(g->data + g->size, p, n);
    g->size += n;
    return PBFCL_OK;
}

static pbfcl_status write_section(void *user, const char *name, const void *data, size_t bytes)
{
    growing *g = user;
    uint32_t len = (uint32_t)strlen(name);
    uint64_t size = bytes;
    pbfcl_status st = append(g, &len, sizeof len);
    if (st == PBFCL_OK)
        st = append(g, name, len);
    if (st == PBFCL_OK)
        st = append(g, &size, sizeof size);
    return st == PBFCL_OK ? append(g, data, bytes) : st;
}

static PyObject *solver_save_state(pbfcl_py_solver *self, PyObject *unused)
{
    (void)unused;
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    if (!h)
        return NULL;
    growing g = {0};
    char header[HEADER] = {0};
    double clock[2] = {self->time, (double)self->frames};
    unsigned char has_setup = self->setup != NULL;
    int rc = append(&g, header, HEADER) == PBFCL_OK ? 0 : (PyErr_NoMemory(), -1);
    if (rc == 0)
        rc = PBFCL_PY_CALL(pbfcl_solver_save_state(h, write_section, &g));
    if (rc == 0 && has_setup)
        rc = PBFCL_PY_CALL(pbfcl_scene_setup_save_state(self->setup, write_section, &g));
    if (rc == 0)
        rc = PBFCL_PY_CALL(write_section(&g, "python.clock", clock, sizeof clock));
    if (rc == 0)
        rc = PBFCL_PY_CALL(write_section(&g, "python.setup", &has_setup, 1));
    PyObject *out = NULL;
    if (rc == 0) {
        uint32_t version = (uint32_t)pbfcl_version();
        uint64_t body = g.size - HEADER, sum = fnv1a((unsigned char *)g.data + HEADER, body);
        memcpy(g.data, MAGIC, 8);
        memcpy(g.data + 8, &version, 4);
        memcpy(g.data + 12, &body, 8);
        memcpy(g.data + 20, &sum, 8);
        out = PyBytes_FromStringAndSize(g.data, (Py_ssize_t)g.size);
    }
    PyMem_Free(g.data);
    return out;
}

/* A checked checkpoint's sections, found by name. */
typedef struct {
    const unsigned char *body;
    size_t size;
    char problem[256]; /* why a section could not be given */
} sections;

static const unsigned char *find_section(const sections *s, const char *name, uint64_t *bytes)
{
    size_t at = 0, want = strlen(name);
    while (at + 4 <= s->size) {
        uint32_t len;
        uint64_t size;
        memcpy(&len, s->body + at, 4);
        if (at + 4 + len + 8 > s->size)
            return NULL;
        memcpy(&size, s->body + at + 4 + len, 8);
        const unsigned char *data = s->body + at + 4 + len + 8;
        if (size > s->size - (size_t)(data - s->body))
            return NULL;
        if (len == want && memcmp(s->body + at + 4, name, len) == 0) {
            *bytes = size;
            return data;
        }
        at = (size_t)(data - s->body) + size;
    }
    return NULL;
}

static pbfcl_status read_section(void *user, const char *name, void *data, size_t bytes)
{
    sections *s = user;
    uint64_t size = 0;
    const unsigned char *p = find_section(s, name, &size);
    if (!p || size != bytes) {
        snprintf(s->problem, sizeof s->problem,
                 p ? "section '%s' holds %llu bytes where this solver needs %zu (a state of "
                     "another pbfcl build or solver size?)"
                   : "section '%s' is missing",
                 name, (unsigned long long)size, bytes);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    memcpy(data, p, bytes);
    return PBFCL_OK;
}

/* The header of data checked; s the body. -1 with ValueError. */
static int check_header(const char *data, size_t size, sections *s)
{
    uint32_t version = 0;
    uint64_t body = 0, sum = 0;
    if (size >= HEADER) {
        memcpy(&version, data + 8, 4);
        memcpy(&body, data + 12, 8);
        memcpy(&sum, data + 20, 8);
    }
    const char *bad = NULL;
    if (size < HEADER || memcmp(data, MAGIC, 8) != 0)
        bad = "it is not a pbfcl Python checkpoint (no PBFCLPY1 header)";
    else if (body != size - HEADER)
        bad = "it is cut short or has extra bytes (the length in its header differs)";
    else if (fnv1a((const unsigned char *)data + HEADER, body) != sum)
        bad = "it is corrupt (its checksum does not match)";
    if (bad) {
        PyErr_Format(PyExc_ValueError, "cannot load the state: %s", bad);
        return -1;
    }
    if ((int)version != pbfcl_version()) {
        PyErr_Format(PyExc_ValueError,
                     "cannot load the state: it was saved by pbfcl %d, this is %d (states load "
                     "into the same library build)",
                     (int)version, pbfcl_version());
        return -1;
    }
    s->body = (const unsigned char *)data + HEADER;
    s->size = body;
    return 0;
}

/* The scene setup saved with the state, replacing the solver's. */
static int load_setup(pbfcl_py_solver *self, sections *s)
{
    pbfcl_scene_setup *setup = NULL;
    int emitters = 0, drains = 0;
    if (PBFCL_PY_CALL(pbfcl_scene_setup_load_state(read_section, s, &setup)) < 0)
        return -1;
    if (PBFCL_PY_CALL(pbfcl_scene_setup_flow_count(setup, &emitters, &drains)) < 0) {
        pbfcl_scene_setup_destroy(setup);
        return -1;
    }
    pbfcl_scene_setup_destroy(self->setup);
    self->setup = setup;
    self->flow = emitters > 0 || drains > 0;
    return 0;
}

static PyObject *solver_load_state(pbfcl_py_solver *self, PyObject *arg)
{
    pbfcl_solver *h = pbfcl_py_solver_handle(self);
    Py_buffer buf;
    if (!h || PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    sections s = {0};
    uint64_t bytes = 0;
    double clock[2];
    const unsigned char *has_setup = NULL;
    int rc = check_header(buf.buf, (size_t)buf.len, &s);
    if (rc == 0 && (rc = PBFCL_PY_CALL(pbfcl_solver_load_state(h, read_section, &s))) < 0 &&
        s.problem[0])
        PyErr_Format(pbfcl_py_ArgumentError, "cannot load the state: %s", s.problem);
    if (rc == 0 && (has_setup = find_section(&s, "python.setup", &bytes)) && bytes == 1 &&
        *has_setup)
        rc = load_setup(self, &s);
    if (rc == 0 && read_section(&s, "python.clock", clock, sizeof clock) == PBFCL_OK) {
        self->time = clock[0];
        self->frames = (long long)clock[1];
    }
    PyBuffer_Release(&buf);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyMethodDef pbfcl_py_state_methods[] = {
    {"save_state", (PyCFunction)solver_save_state, METH_NOARGS,
     "save_state() -> bytes\n\nEverything that carries from one step to the next (particles, "
     "parameters, bodies, obstacles' paths, collision shapes, the scene's emitters), with a "
     "checksum. It loads into a solver of the same library build and continues bit for bit "
     "on the same device."},
    {"load_state", (PyCFunction)solver_load_state, METH_O,
     "load_state(data)\n\nRestores a state from save_state() into this solver, which must be "
     "empty or hold the saved particle count and have room for it. A refused state (another "
     "build, cut short, corrupt) raises ValueError; a failure half-way leaves the solver's "
     "state undefined: load again or destroy it."},
    {NULL, NULL, 0, NULL}};
