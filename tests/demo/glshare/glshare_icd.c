/* A test OpenCL ICD that offers cl_khr_gl_sharing on top of PoCL, so that the demo's CL/GL
 * sharing path runs under Xvfb (Mesa llvmpipe), where no real driver shares buffers. Never
 * installed: tests register it with OCL_ICD_VENDORS=<dir holding its .icd file> and also
 * LD_PRELOAD it, so that it sees the application's glFinish calls.
 *
 * It dlopens PoCL and hands out PoCL's own objects with their dispatch pointer turned to a
 * copy of PoCL's table in which the GL entry points are added and a few others wrapped, so
 * every other call goes straight to PoCL. The platform, devices, contexts, queues, programs,
 * kernels and GL buffers carry the copy (the calls the rules need go through them); events
 * and other buffers keep PoCL's. A buffer made by clCreateFromGLBuffer is a CL
 * buffer of the GL buffer's size (a sub-buffer of one with a guard area after it); acquire
 * copies the GL buffer into it (glGetBufferSubData) and leaves NaNs in the GL buffer, as its
 * contents are undefined for GL while OpenCL owns it; release copies back (glBufferSubData)
 * when the application calls clFinish, as an application without cl_khr_gl_event must.
 *
 * Rules checked, each a "violation" (stderr, counted, an error returned to the caller):
 * use of the buffer (a kernel argument, a read, write, copy, fill or map) while not acquired;
 * acquire without a glFinish since the buffer was created or last released; acquire while
 * acquired, or while the last release still waits for clFinish; release without acquire;
 * a GL buffer resized after clCreateFromGLBuffer; a kernel that wrote past the buffer's end;
 * a GL context other than the one the CL context was created with; freeing an acquired buffer.
 * At exit it prints "pbfcl-glshare: summary: ..." with the counts.
 *
 * PBFCL_GLSHARE_FAIL makes a driver failure happen, for the demo's fallbacks: "context"
 * (clCreateContext with GL properties fails), "device" (the GL context is on another
 * device), "buffer" (clCreateFromGLBuffer fails), "acquire" or "release" (those fail).
 * PBFCL_GLSHARE_TARGET names the PoCL library (default: the one /etc/OpenCL/vendors/pocl.icd
 * names). */
#define _GNU_SOURCE
#undef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl_icd.h>
#include <GL/gl.h>
#include <GL/glx.h>

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLSHARE_API __attribute__((visibility("default")))

#define MAX_OBJECTS 64
#define MAX_CONTEXTS 16
#define MAX_KERNEL_ARGS 256
#define GUARD_BYTES 4096 /* after each GL buffer's CL copy, to catch writes past its end */
#define GUARD_BYTE 0xA5

#ifndef GL_BUFFER_SIZE
#define GL_BUFFER_SIZE 0x8764
#endif
#ifndef GL_COPY_READ_BUFFER
#define GL_COPY_READ_BUFFER 0x8F36
#endif

typedef void (*gl_bind_buffer_fn)(GLenum, GLuint);
typedef void (*gl_buffer_sub_data_fn)(GLenum, GLintptr, GLsizeiptr, const void *);
typedef void (*gl_get_buffer_sub_data_fn)(GLenum, GLintptr, GLsizeiptr, void *);
typedef void (*gl_get_buffer_parameteriv_fn)(GLenum, GLenum, GLint *);
typedef GLboolean (*gl_is_buffer_fn)(GLuint);
typedef void (*gl_finish_fn)(void);
typedef cl_int(CL_API_CALL *get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);

/* A CL context made with GL properties. */
typedef struct gl_context {
    cl_context context;
    void *glx; /* the GL context: a GLXContext, or an EGLContext */
} gl_context;

/* A buffer made by clCreateFromGLBuffer. */
typedef struct gl_object {
    cl_mem mem;    /* the sub-buffer the application holds */
    cl_mem parent; /* size + GUARD_BYTES */
    const gl_context *ctx;
    GLuint vbo;
    size_t size;
    int refs;
    bool acquired;
    cl_command_queue releasing;  /* released; the copy to GL waits for clFinish on this queue */
    unsigned long finishes_seen; /* glFinish count at creation or at the last completed release */
    unsigned char *host;         /* size + GUARD_BYTES */
} gl_object;

typedef struct kernel_arg {
    cl_kernel kernel;
    cl_uint index;
    gl_object *obj;
} kernel_arg;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const cl_icd_dispatch *pocl; /* PoCL's table */
static cl_icd_dispatch table;       /* the one our objects carry */
static cl_platform_id platform;     /* PoCL's (only) platform, adopted */
static get_platforms_fn pocl_get_platforms;
static gl_context contexts[MAX_CONTEXTS];
static gl_object objects[MAX_OBJECTS];
static kernel_arg kernel_args[MAX_KERNEL_ARGS];
static unsigned long gl_finishes, n_contexts, n_buffers, n_acquires, n_releases, n_violations;
static bool used;
/* stands for a device other than PoCL's (PBFCL_GLSHARE_FAIL=device); only compared */
static struct {
    cl_icd_dispatch *dispatch;
} other_device = {&table};

static struct {
    gl_bind_buffer_fn bind;
    gl_buffer_sub_data_fn sub_data;
    gl_get_buffer_sub_data_fn get_sub_data;
    gl_get_buffer_parameteriv_fn parameteriv;
    gl_is_buffer_fn is_buffer;
} gl;

static void fill_table(cl_icd_dispatch *t);

static void say(const char *kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pbfcl-glshare: %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Reports a broken rule; returns err for the caller to return. */
static cl_int violation(cl_int err, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    n_violations++;
    say("violation", "%s", msg);
    return err;
}

/* True (after saying so) when PBFCL_GLSHARE_FAIL names what. */
static bool inject(const char *what)
{
    const char *f = getenv("PBFCL_GLSHARE_FAIL");
    if (!f || strcmp(f, what) != 0)
        return false;
    say("injected failure", "%s (PBFCL_GLSHARE_FAIL=%s)", what, f);
    return true;
}

static void adopt(void *obj)
{
    if (obj)
        *(cl_icd_dispatch **)obj = &table;
}

/* ---- glFinish, seen because the layer is LD_PRELOADed ------------------------------- */

GLSHARE_API void glFinish(void)
{
    static gl_finish_fn real;
    if (!real)
        real = (gl_finish_fn)dlsym(RTLD_NEXT, "glFinish");
    if (real)
        real();
    pthread_mutex_lock(&lock);
    gl_finishes++;
    pthread_mutex_unlock(&lock);
}

static bool sees_gl_finish(void)
{
    return dlsym(RTLD_DEFAULT, "glFinish") == (void *)glFinish;
}

static bool load_gl(void)
{
    if (gl.bind)
        return true;
#define GLSHARE_GL(field, type, name)                                                              \
    gl.field = (type)glXGetProcAddressARB((const GLubyte *)name);                                  \
    if (!gl.field)                                                                                 \
        return false;
    GLSHARE_GL(bind, gl_bind_buffer_fn, "glBindBuffer")
    GLSHARE_GL(sub_data, gl_buffer_sub_data_fn, "glBufferSubData")
    GLSHARE_GL(get_sub_data, gl_get_buffer_sub_data_fn, "glGetBufferSubData")
    GLSHARE_GL(parameteriv, gl_get_buffer_parameteriv_fn, "glGetBufferParameteriv")
    GLSHARE_GL(is_buffer, gl_is_buffer_fn, "glIsBuffer")
#undef GLSHARE_GL
    return true;
}

/* The size of GL buffer vbo, or -1 if it is not a buffer. Leaves GL's bindings as they were:
 * it works through GL_COPY_READ_BUFFER, which the demo never binds. */
static long gl_buffer_size(GLuint vbo)
{
    if (!vbo || !gl.is_buffer(vbo))
        return -1;
    GLint old = 0, size = 0;
    glGetIntegerv(GL_COPY_READ_BUFFER, &old);
    gl.bind(GL_COPY_READ_BUFFER, vbo);
    gl.parameteriv(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &size);
    gl.bind(GL_COPY_READ_BUFFER, (GLuint)old);
    return size;
}

static void gl_copy(GLuint vbo, size_t size, void *host, bool to_gl)
{
    GLint old = 0;
    glGetIntegerv(GL_COPY_READ_BUFFER, &old);
    gl.bind(GL_COPY_READ_BUFFER, vbo);
    if (to_gl)
        gl.sub_data(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)size, host);
    else
        gl.get_sub_data(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)size, host);
    gl.bind(GL_COPY_READ_BUFFER, (GLuint)old);
}

/* ---- tables ----------------------------------------------------------------------- */

static gl_context *find_context(cl_context c)
{
    for (int i = 0; i < MAX_CONTEXTS; i++)
        if (contexts[i].context && contexts[i].context == c)
            return &contexts[i];
    return NULL;
}

static gl_object *find_object(cl_mem m)
{
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (objects[i].mem && objects[i].mem == m)
            return &objects[i];
    return NULL;
}

static void forget_kernel_args(cl_kernel k, const gl_object *o)
{
    for (int i = 0; i < MAX_KERNEL_ARGS; i++)
        if (kernel_args[i].kernel && (kernel_args[i].kernel == k || kernel_args[i].obj == o))
            memset(&kernel_args[i], 0, sizeof kernel_args[i]);
}

/* A GL buffer handed to a command must be acquired. */
static cl_int check_use(cl_mem m, const char *call)
{
    gl_object *o = find_object(m);
    if (o && !o->acquired)
        return violation(CL_INVALID_OPERATION,
                         "%s uses the buffer of GL buffer %u, which is not acquired "
                         "(clEnqueueAcquireGLObjects first)",
                         call, o->vbo);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL gl_context_info(const cl_context_properties *props,
                                          cl_gl_context_info what, size_t size, void *value,
                                          size_t *size_ret);
static cl_mem CL_API_CALL create_from_gl_buffer(cl_context c, cl_mem_flags flags, GLuint vbo,
                                                cl_int *err_ret);
static cl_int CL_API_CALL acquire_gl_objects(cl_command_queue q, cl_uint n, const cl_mem *mems,
                                             cl_uint nwait, const cl_event *wait, cl_event *ev);
static cl_int CL_API_CALL release_gl_objects(cl_command_queue q, cl_uint n, const cl_mem *mems,
                                             cl_uint nwait, const cl_event *wait, cl_event *ev);

/* ---- platform, device, context ------------------------------------------------------ */

static bool init(void)
{
    if (pocl)
        return true;
    char path[1024] = "";
    const char *target = getenv("PBFCL_GLSHARE_TARGET");
    if (target && *target) {
        snprintf(path, sizeof path, "%s", target);
    } else {
        FILE *f = fopen("/etc/OpenCL/vendors/pocl.icd", "r");
        if (f) {
            if (!fgets(path, sizeof path, f))
                path[0] = '\0';
            fclose(f);
        }
        path[strcspn(path, "\r\n")] = '\0';
    }
    void *lib = path[0] ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!lib) {
        say("error", "cannot load PoCL (%s): %s; set PBFCL_GLSHARE_TARGET", path[0] ? path : "?",
            dlerror());
        return false;
    }
    /* ICDs hand out clIcdGetPlatformIDsKHR through clGetExtensionFunctionAddress (PoCL
     * exports no symbol of that name), as the ICD loaders ask for it */
    typedef void *(CL_API_CALL * get_address_fn)(const char *);
    get_address_fn get_address = (get_address_fn)dlsym(lib, "clGetExtensionFunctionAddress");
    pocl_get_platforms = (get_platforms_fn)dlsym(lib, "clIcdGetPlatformIDsKHR");
    if (!pocl_get_platforms && get_address)
        pocl_get_platforms = (get_platforms_fn)get_address("clIcdGetPlatformIDsKHR");
    cl_uint n = 0;
    if (!pocl_get_platforms || pocl_get_platforms(1, &platform, &n) != CL_SUCCESS || n == 0) {
        say("error", "%s offers no OpenCL platform", path);
        return false;
    }
    pocl = *(const cl_icd_dispatch **)platform;
    table = *pocl;
    fill_table(&table);
    adopt(platform);
    used = true;
    return true;
}

GLSHARE_API cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num, cl_platform_id *platforms,
                                                      cl_uint *num_ret)
{
    pthread_mutex_lock(&lock);
    bool ok = init();
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CL_PLATFORM_NOT_FOUND_KHR;
    if (getenv("GLSHARE_DBG"))
        fprintf(stderr, "DBG getplat %u %p %p\n", num, (void *)platforms, (void *)num_ret);
    if ((num == 0 && platforms) || (!platforms && !num_ret))
        return CL_INVALID_VALUE;
    if (platforms)
        platforms[0] = platform;
    if (num_ret)
        *num_ret = 1;
    return CL_SUCCESS;
}

/* Appends " cl_khr_gl_sharing" to an extension string query's answer. */
static cl_int add_extension(cl_int err, size_t pocl_size, char *scratch, size_t size, void *value,
                            size_t *size_ret)
{
    static const char ext[] = " cl_khr_gl_sharing";
    if (err != CL_SUCCESS)
        return err;
    size_t need = pocl_size + sizeof ext - 1;
    if (size_ret)
        *size_ret = need;
    if (value) {
        if (size < need)
            return CL_INVALID_VALUE;
        memcpy(value, scratch, pocl_size);
        strcpy((char *)value + strlen(scratch), ext);
    }
    return CL_SUCCESS;
}

static cl_int CL_API_CALL get_platform_info(cl_platform_id p, cl_platform_info what, size_t size,
                                            void *value, size_t *size_ret)
{
    if (getenv("GLSHARE_DBG"))
        fprintf(stderr, "DBG platform info %x size %zu\n", what, size);
    if (what != CL_PLATFORM_EXTENSIONS)
        return pocl->clGetPlatformInfo(p, what, size, value, size_ret);
    char scratch[8192];
    size_t got = 0;
    cl_int err = pocl->clGetPlatformInfo(p, what, sizeof scratch, scratch, &got);
    return add_extension(err, got, scratch, size, value, size_ret);
}

static cl_int CL_API_CALL get_device_ids(cl_platform_id p, cl_device_type type, cl_uint num,
                                         cl_device_id *devices, cl_uint *num_ret)
{
    cl_uint n = 0;
    cl_int err = pocl->clGetDeviceIDs(p, type, num, devices, &n);
    for (cl_uint i = 0; err == CL_SUCCESS && devices && i < n && i < num; i++)
        adopt(devices[i]);
    if (num_ret)
        *num_ret = n;
    return err;
}

static cl_int CL_API_CALL get_device_info(cl_device_id d, cl_device_info what, size_t size,
                                          void *value, size_t *size_ret)
{
    if (what != CL_DEVICE_EXTENSIONS)
        return pocl->clGetDeviceInfo(d, what, size, value, size_ret);
    char scratch[8192];
    size_t got = 0;
    cl_int err = pocl->clGetDeviceInfo(d, what, sizeof scratch, scratch, &got);
    return add_extension(err, got, scratch, size, value, size_ret);
}

static bool is_gl_property(cl_context_properties p)
{
    return p == CL_GL_CONTEXT_KHR || p == CL_GLX_DISPLAY_KHR || p == CL_EGL_DISPLAY_KHR ||
           p == CL_WGL_HDC_KHR || p == CL_CGL_SHAREGROUP_KHR;
}

/* The current GL context, GLX's or else EGL's (from the libEGL the application loaded, as
 * SDL's offscreen and Wayland drivers do), and in *display the display it is current on and
 * in *display_property the property that must name that display. NULL if there is none. */
static void *current_gl_context(void **display, cl_context_properties *display_property)
{
    typedef void *(*egl_get_fn)(void);
    *display = glXGetCurrentDisplay();
    *display_property = CL_GLX_DISPLAY_KHR;
    void *ctx = glXGetCurrentContext();
    if (ctx)
        return ctx;
    *display = NULL;
    *display_property = CL_EGL_DISPLAY_KHR;
    void *egl = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!egl)
        return NULL;
    egl_get_fn get_context = (egl_get_fn)dlsym(egl, "eglGetCurrentContext");
    egl_get_fn get_display = (egl_get_fn)dlsym(egl, "eglGetCurrentDisplay");
    ctx = get_context && get_display ? get_context() : NULL;
    *display = ctx ? get_display() : NULL;
    dlclose(egl);
    return ctx;
}

static void *gl_current(void)
{
    void *display;
    cl_context_properties property;
    return current_gl_context(&display, &property);
}

/* Copies props without the GL ones into out (room for 64); *glx gets CL_GL_CONTEXT_KHR's
 * value (NULL if absent), *glx_display CL_GLX_DISPLAY_KHR's and *egl_display
 * CL_EGL_DISPLAY_KHR's. Returns false if there are too many. */
static bool split_properties(const cl_context_properties *props, cl_context_properties *out,
                             void **glx, void **glx_display, void **egl_display)
{
    int n = 0;
    *glx = *glx_display = *egl_display = NULL;
    for (int i = 0; props && props[i]; i += 2) {
        if (props[i] == CL_GL_CONTEXT_KHR)
            *glx = (void *)props[i + 1];
        if (props[i] == CL_GLX_DISPLAY_KHR)
            *glx_display = (void *)props[i + 1];
        if (props[i] == CL_EGL_DISPLAY_KHR)
            *egl_display = (void *)props[i + 1];
        if (is_gl_property(props[i]))
            continue;
        if (n >= 62)
            return false;
        out[n++] = props[i];
        out[n++] = props[i + 1];
    }
    out[n] = 0;
    return true;
}

/* The checks a driver makes before sharing with GL context glx: it is the current one, and
 * the display property of its window system (GLX or EGL) names the display it is current on. */
static cl_int check_gl_context(void *glx, void *glx_display, void *egl_display)
{
    if (!sees_gl_finish()) {
        say("error", "the layer must be LD_PRELOADed as well as registered as an ICD, so "
                     "that it sees glFinish");
        return CL_INVALID_OPERATION;
    }
    void *display;
    cl_context_properties property;
    void *current = current_gl_context(&display, &property);
    if (glx != current || !load_gl())
        return violation(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                         "CL_GL_CONTEXT_KHR %p is not the current GL context (%p)", glx, current);
    bool glx_side = property == CL_GLX_DISPLAY_KHR;
    void *named = glx_side ? glx_display : egl_display;
    if (named != display || (glx_side ? egl_display : glx_display))
        return violation(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
                         "the GL context is current on %s display %p, but the properties name "
                         "CL_GLX_DISPLAY_KHR %p and CL_EGL_DISPLAY_KHR %p",
                         glx_side ? "GLX" : "EGL", display, glx_display, egl_display);
    return CL_SUCCESS;
}

static cl_context CL_API_CALL create_context(const cl_context_properties *props, cl_uint ndev,
                                             const cl_device_id *devices,
                                             void(CL_CALLBACK *notify)(const char *, const void *,
                                                                       size_t, void *),
                                             void *user, cl_int *err_ret)
{
    cl_context_properties plain[64];
    void *glx, *glx_display, *egl_display;
    cl_int err = split_properties(props, plain, &glx, &glx_display, &egl_display)
                     ? CL_SUCCESS
                     : CL_INVALID_PROPERTY;
    pthread_mutex_lock(&lock);
    if (err == CL_SUCCESS && glx)
        err = inject("context") ? CL_INVALID_OPERATION
                                : check_gl_context(glx, glx_display, egl_display);
    gl_context *slot = NULL;
    for (int i = 0; err == CL_SUCCESS && glx && i < MAX_CONTEXTS && !slot; i++)
        slot = contexts[i].context ? NULL : &contexts[i];
    if (err == CL_SUCCESS && glx && !slot)
        err = CL_OUT_OF_HOST_MEMORY;
    cl_context c = NULL;
    if (err == CL_SUCCESS)
        c = pocl->clCreateContext(plain, ndev, devices, notify, user, &err);
    if (c) {
        adopt(c);
        if (slot) {
            slot->context = c;
            slot->glx = glx;
            n_contexts++;
        }
    }
    pthread_mutex_unlock(&lock);
    if (err_ret)
        *err_ret = err;
    return c;
}

static cl_context CL_API_CALL
create_context_from_type(const cl_context_properties *props, cl_device_type type,
                         void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                         void *user, cl_int *err_ret)
{
    cl_context_properties plain[64];
    void *glx, *glx_display, *egl_display;
    if (!split_properties(props, plain, &glx, &glx_display, &egl_display) ||
        glx) { /* GL sharing only through clCreateContext */
        if (err_ret)
            *err_ret = glx ? CL_INVALID_OPERATION : CL_INVALID_PROPERTY;
        return NULL;
    }
    cl_context c = pocl->clCreateContextFromType(plain, type, notify, user, err_ret);
    adopt(c);
    return c;
}

static cl_int CL_API_CALL release_context(cl_context c)
{
    cl_uint refs = 0;
    pocl->clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    pthread_mutex_lock(&lock);
    gl_context *g = refs == 1 ? find_context(c) : NULL;
    if (g)
        memset(g, 0, sizeof *g);
    pthread_mutex_unlock(&lock);
    return pocl->clReleaseContext(c);
}

static cl_int CL_API_CALL gl_context_info(const cl_context_properties *props,
                                          cl_gl_context_info what, size_t size, void *value,
                                          size_t *size_ret)
{
    cl_context_properties plain[64];
    void *glx, *glx_display, *egl_display;
    if (!split_properties(props, plain, &glx, &glx_display, &egl_display) || !glx)
        return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
    if (what != CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR && what != CL_DEVICES_FOR_GL_CONTEXT_KHR)
        return CL_INVALID_VALUE;
    cl_device_id dev = NULL;
    if (inject("device")) {
        dev = (cl_device_id)(void *)&other_device;
    } else {
        cl_int err = get_device_ids(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
        if (err != CL_SUCCESS)
            return err;
    }
    if (size_ret)
        *size_ret = sizeof dev;
    if (value) {
        if (size < sizeof dev)
            return CL_INVALID_VALUE;
        memcpy(value, &dev, sizeof dev);
    }
    return CL_SUCCESS;
}

/* ---- GL buffers --------------------------------------------------------------------- */

static cl_mem create_gl_buffer(cl_context c, cl_mem_flags flags, GLuint vbo, cl_int *err)
{
    gl_context *g = find_context(c);
    if (!g) {
        *err = violation(CL_INVALID_CONTEXT, "clCreateFromGLBuffer on a context made without "
                                             "CL_GL_CONTEXT_KHR");
        return NULL;
    }
    if (g->glx != gl_current()) {
        *err = violation(CL_INVALID_CONTEXT, "clCreateFromGLBuffer with another GL context "
                                             "current than the CL context's");
        return NULL;
    }
    if (flags & ~(cl_mem_flags)(CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)) {
        *err = CL_INVALID_VALUE;
        return NULL;
    }
    long size = gl_buffer_size(vbo);
    if (size <= 0) {
        *err = violation(CL_INVALID_GL_OBJECT, "GL buffer %u %s", vbo,
                         size < 0 ? "does not exist" : "has no data store (glBufferData first)");
        return NULL;
    }
    gl_object *o = NULL;
    for (int i = 0; i < MAX_OBJECTS && !o; i++)
        o = objects[i].mem ? NULL : &objects[i];
    unsigned char *host = malloc((size_t)size + GUARD_BYTES);
    if (!o || !host) {
        free(host);
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    cl_mem parent =
        pocl->clCreateBuffer(c, CL_MEM_READ_WRITE, (size_t)size + GUARD_BYTES, NULL, err);
    if (!parent) {
        free(host);
        return NULL;
    }
    cl_buffer_region region = {0, (size_t)size};
    cl_mem mem = pocl->clCreateSubBuffer(parent, flags ? flags : CL_MEM_READ_WRITE,
                                         CL_BUFFER_CREATE_TYPE_REGION, &region, err);
    if (!mem) {
        pocl->clReleaseMemObject(parent);
        free(host);
        return NULL;
    }
    adopt(mem);
    *o = (gl_object){mem, parent, g, vbo, (size_t)size, 1, false, NULL, gl_finishes, host};
    n_buffers++;
    return mem;
}

static cl_mem CL_API_CALL create_from_gl_buffer(cl_context c, cl_mem_flags flags, GLuint vbo,
                                                cl_int *err_ret)
{
    cl_int err = CL_SUCCESS;
    cl_mem mem = NULL;
    pthread_mutex_lock(&lock);
    if (inject("buffer"))
        err = CL_OUT_OF_RESOURCES;
    else
        mem = create_gl_buffer(c, flags, vbo, &err);
    pthread_mutex_unlock(&lock);
    if (err_ret)
        *err_ret = err;
    return mem;
}

static cl_int CL_API_CALL get_gl_object_info(cl_mem m, cl_gl_object_type *type, GLuint *name)
{
    pthread_mutex_lock(&lock);
    gl_object *o = find_object(m);
    if (o && type)
        *type = CL_GL_OBJECT_BUFFER;
    if (o && name)
        *name = o->vbo;
    pthread_mutex_unlock(&lock);
    return o ? CL_SUCCESS : CL_INVALID_GL_OBJECT;
}

static cl_int CL_API_CALL retain_mem(cl_mem m)
{
    pthread_mutex_lock(&lock);
    gl_object *o = find_object(m);
    if (o)
        o->refs++;
    pthread_mutex_unlock(&lock);
    return pocl->clRetainMemObject(m);
}

static cl_int CL_API_CALL release_mem(cl_mem m)
{
    pthread_mutex_lock(&lock);
    gl_object *o = find_object(m);
    cl_mem parent = NULL;
    if (o && --o->refs == 0) {
        if (o->acquired)
            violation(CL_SUCCESS, "the buffer of GL buffer %u was released while acquired", o->vbo);
        else if (o->releasing)
            violation(CL_SUCCESS,
                      "the buffer of GL buffer %u was released before clFinish "
                      "completed its clEnqueueReleaseGLObjects",
                      o->vbo);
        parent = o->parent;
        free(o->host);
        forget_kernel_args(NULL, o);
        memset(o, 0, sizeof *o);
    }
    pthread_mutex_unlock(&lock);
    cl_int err = pocl->clReleaseMemObject(m);
    if (parent)
        pocl->clReleaseMemObject(parent);
    return err;
}

/* Checks the rules of an acquire of o; returns an error for the caller or CL_SUCCESS. */
static cl_int check_acquire(const gl_object *o)
{
    if (o->acquired)
        return violation(CL_INVALID_OPERATION, "GL buffer %u acquired twice", o->vbo);
    if (o->releasing)
        return violation(CL_INVALID_OPERATION,
                         "GL buffer %u acquired again before clFinish completed its release",
                         o->vbo);
    if (gl_finishes == o->finishes_seen)
        return violation(CL_INVALID_OPERATION,
                         "GL buffer %u acquired without a glFinish since it was created or last "
                         "released (GL may still be using it)",
                         o->vbo);
    if (o->ctx->glx != gl_current())
        return violation(CL_INVALID_OPERATION, "acquire with another GL context current");
    long size = gl_buffer_size(o->vbo);
    if (size != (long)o->size)
        return violation(CL_INVALID_GL_OBJECT,
                         "GL buffer %u is now %ld bytes; it was %zu at clCreateFromGLBuffer",
                         o->vbo, size, o->size);
    return CL_SUCCESS;
}

/* GL -> CL, with the guard area filled; then NaNs in the GL buffer. */
static cl_int acquire_one(cl_command_queue q, gl_object *o)
{
    gl_copy(o->vbo, o->size, o->host, false);
    memset(o->host + o->size, GUARD_BYTE, GUARD_BYTES);
    cl_int err = pocl->clEnqueueWriteBuffer(q, o->parent, CL_TRUE, 0, o->size + GUARD_BYTES,
                                            o->host, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return err;
    float *f = (float *)(void *)o->host;
    for (size_t i = 0; i < o->size / sizeof(float); i++)
        f[i] = nanf("");
    gl_copy(o->vbo, o->size, o->host, true);
    o->acquired = true;
    return CL_SUCCESS;
}

static cl_int marker(cl_command_queue q, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (!ev && nwait == 0)
        return CL_SUCCESS;
    if (!ev)
        return pocl->clWaitForEvents(nwait, wait);
    return pocl->clEnqueueMarkerWithWaitList(q, nwait, wait, ev);
}

static cl_int CL_API_CALL acquire_gl_objects(cl_command_queue q, cl_uint n, const cl_mem *mems,
                                             cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (n == 0 || !mems)
        return CL_INVALID_VALUE;
    if (inject("acquire"))
        return CL_OUT_OF_RESOURCES;
    cl_int err = nwait ? pocl->clWaitForEvents(nwait, wait) : CL_SUCCESS;
    pthread_mutex_lock(&lock);
    for (cl_uint i = 0; i < n && err == CL_SUCCESS; i++) {
        gl_object *o = find_object(mems[i]);
        err = o ? check_acquire(o)
                : violation(CL_INVALID_GL_OBJECT, "clEnqueueAcquireGLObjects of a buffer not "
                                                  "made by clCreateFromGLBuffer");
    }
    for (cl_uint i = 0; i < n && err == CL_SUCCESS; i++)
        err = acquire_one(q, find_object(mems[i]));
    if (err == CL_SUCCESS)
        n_acquires++;
    pthread_mutex_unlock(&lock);
    return err == CL_SUCCESS ? marker(q, 0, NULL, ev) : err;
}

static cl_int CL_API_CALL release_gl_objects(cl_command_queue q, cl_uint n, const cl_mem *mems,
                                             cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (n == 0 || !mems)
        return CL_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    cl_int err = CL_SUCCESS;
    for (cl_uint i = 0; i < n && err == CL_SUCCESS; i++) {
        gl_object *o = find_object(mems[i]);
        if (!o)
            err = violation(CL_INVALID_GL_OBJECT, "clEnqueueReleaseGLObjects of a buffer not "
                                                  "made by clCreateFromGLBuffer");
        else if (!o->acquired)
            err = violation(CL_INVALID_OPERATION, "GL buffer %u released without being acquired",
                            o->vbo);
    }
    if (err == CL_SUCCESS && inject("release")) {
        for (cl_uint i = 0; i < n; i++) /* the driver gave up: the objects are GL's again */
            find_object(mems[i])->acquired = false;
        err = CL_OUT_OF_RESOURCES;
    }
    for (cl_uint i = 0; i < n && err == CL_SUCCESS; i++) {
        gl_object *o = find_object(mems[i]);
        o->acquired = false;
        o->releasing = q;
    }
    if (err == CL_SUCCESS)
        n_releases++;
    pthread_mutex_unlock(&lock);
    return err == CL_SUCCESS ? marker(q, nwait, wait, ev) : err;
}

/* CL -> GL for the buffers released on q, now that q has finished; checks the guard area. */
static cl_int complete_releases(cl_command_queue q)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < MAX_OBJECTS && err == CL_SUCCESS; i++) {
        gl_object *o = &objects[i];
        if (!o->mem || o->releasing != q)
            continue;
        err = pocl->clEnqueueReadBuffer(q, o->parent, CL_TRUE, 0, o->size + GUARD_BYTES, o->host, 0,
                                        NULL, NULL);
        if (err != CL_SUCCESS)
            break;
        size_t bad = 0;
        for (size_t k = 0; k < GUARD_BYTES; k++)
            bad = o->host[o->size + k] != GUARD_BYTE ? k + 1 : bad;
        if (bad)
            err = violation(CL_INVALID_OPERATION,
                            "a command wrote past the end of GL buffer %u (%zu bytes): up to "
                            "%zu bytes beyond it",
                            o->vbo, o->size, bad);
        if (o->ctx->glx != gl_current())
            err = violation(CL_INVALID_OPERATION, "clFinish of a release with another GL "
                                                  "context current");
        else
            gl_copy(o->vbo, o->size, o->host, true);
        o->releasing = NULL;
        o->finishes_seen = gl_finishes;
    }
    return err;
}

static cl_int CL_API_CALL finish(cl_command_queue q)
{
    cl_int err = pocl->clFinish(q);
    pthread_mutex_lock(&lock);
    if (err == CL_SUCCESS)
        err = complete_releases(q);
    pthread_mutex_unlock(&lock);
    return err;
}

/* ---- uses of GL buffers ---------------------------------------------------------------- */

static cl_int CL_API_CALL set_kernel_arg(cl_kernel k, cl_uint index, size_t size, const void *value)
{
    cl_int err = pocl->clSetKernelArg(k, index, size, value);
    if (err != CL_SUCCESS)
        return err;
    pthread_mutex_lock(&lock);
    gl_object *o = size == sizeof(cl_mem) && value ? find_object(*(const cl_mem *)value) : NULL;
    kernel_arg *slot = NULL, *free_slot = NULL;
    for (int i = 0; i < MAX_KERNEL_ARGS; i++) {
        if (kernel_args[i].kernel == k && kernel_args[i].index == index)
            slot = &kernel_args[i];
        else if (!kernel_args[i].kernel && !free_slot)
            free_slot = &kernel_args[i];
    }
    if (!slot && o)
        slot = free_slot;
    if (slot)
        *slot = o ? (kernel_arg){k, index, o} : (kernel_arg){0};
    if (o && !slot)
        err = CL_OUT_OF_HOST_MEMORY;
    pthread_mutex_unlock(&lock);
    return err;
}

static cl_int check_kernel(cl_kernel k, const char *call)
{
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_KERNEL_ARGS && err == CL_SUCCESS; i++)
        if (kernel_args[i].kernel == k)
            err = check_use(kernel_args[i].obj->mem, call);
    pthread_mutex_unlock(&lock);
    return err;
}

static cl_int check_mems(cl_mem a, cl_mem b, const char *call)
{
    pthread_mutex_lock(&lock);
    cl_int err = check_use(a, call);
    if (err == CL_SUCCESS && b)
        err = check_use(b, call);
    pthread_mutex_unlock(&lock);
    return err;
}

static cl_int CL_API_CALL release_kernel(cl_kernel k)
{
    cl_uint refs = 0;
    pocl->clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    if (refs == 1) {
        pthread_mutex_lock(&lock);
        forget_kernel_args(k, NULL);
        pthread_mutex_unlock(&lock);
    }
    return pocl->clReleaseKernel(k);
}

static cl_int CL_API_CALL enqueue_nd_range(cl_command_queue q, cl_kernel k, cl_uint dims,
                                           const size_t *offset, const size_t *global,
                                           const size_t *local, cl_uint nwait, const cl_event *wait,
                                           cl_event *ev)
{
    cl_int err = check_kernel(k, "clEnqueueNDRangeKernel");
    return err != CL_SUCCESS
               ? err
               : pocl->clEnqueueNDRangeKernel(q, k, dims, offset, global, local, nwait, wait, ev);
}

static cl_int CL_API_CALL enqueue_task(cl_command_queue q, cl_kernel k, cl_uint nwait,
                                       const cl_event *wait, cl_event *ev)
{
    cl_int err = check_kernel(k, "clEnqueueTask");
    return err != CL_SUCCESS ? err : pocl->clEnqueueTask(q, k, nwait, wait, ev);
}

static cl_int CL_API_CALL enqueue_read(cl_command_queue q, cl_mem m, cl_bool block, size_t off,
                                       size_t size, void *p, cl_uint nwait, const cl_event *wait,
                                       cl_event *ev)
{
    cl_int err = check_mems(m, NULL, "clEnqueueReadBuffer");
    return err != CL_SUCCESS
               ? err
               : pocl->clEnqueueReadBuffer(q, m, block, off, size, p, nwait, wait, ev);
}

static cl_int CL_API_CALL enqueue_write(cl_command_queue q, cl_mem m, cl_bool block, size_t off,
                                        size_t size, const void *p, cl_uint nwait,
                                        const cl_event *wait, cl_event *ev)
{
    cl_int err = check_mems(m, NULL, "clEnqueueWriteBuffer");
    return err != CL_SUCCESS
               ? err
               : pocl->clEnqueueWriteBuffer(q, m, block, off, size, p, nwait, wait, ev);
}

static cl_int CL_API_CALL enqueue_copy(cl_command_queue q, cl_mem src, cl_mem dst, size_t so,
                                       size_t dof, size_t size, cl_uint nwait, const cl_event *wait,
                                       cl_event *ev)
{
    cl_int err = check_mems(src, dst, "clEnqueueCopyBuffer");
    return err != CL_SUCCESS
               ? err
               : pocl->clEnqueueCopyBuffer(q, src, dst, so, dof, size, nwait, wait, ev);
}

static cl_int CL_API_CALL enqueue_fill(cl_command_queue q, cl_mem m, const void *pattern,
                                       size_t psize, size_t off, size_t size, cl_uint nwait,
                                       const cl_event *wait, cl_event *ev)
{
    cl_int err = check_mems(m, NULL, "clEnqueueFillBuffer");
    return err != CL_SUCCESS
               ? err
               : pocl->clEnqueueFillBuffer(q, m, pattern, psize, off, size, nwait, wait, ev);
}

static void *CL_API_CALL enqueue_map(cl_command_queue q, cl_mem m, cl_bool block,
                                     cl_map_flags flags, size_t off, size_t size, cl_uint nwait,
                                     const cl_event *wait, cl_event *ev, cl_int *err_ret)
{
    cl_int err = check_mems(m, NULL, "clEnqueueMapBuffer");
    if (err != CL_SUCCESS) {
        if (err_ret)
            *err_ret = err;
        return NULL;
    }
    return pocl->clEnqueueMapBuffer(q, m, block, flags, off, size, nwait, wait, ev, err_ret);
}

/* ---- objects that must carry our table ------------------------------------------------ */

static cl_command_queue CL_API_CALL create_queue(cl_context c, cl_device_id d,
                                                 cl_command_queue_properties props, cl_int *err)
{
    cl_command_queue q = pocl->clCreateCommandQueue(c, d, props, err);
    adopt(q);
    return q;
}

static cl_command_queue CL_API_CALL create_queue_with_properties(cl_context c, cl_device_id d,
                                                                 const cl_queue_properties *p,
                                                                 cl_int *err)
{
    cl_command_queue q = pocl->clCreateCommandQueueWithProperties(c, d, p, err);
    adopt(q);
    return q;
}

static cl_program CL_API_CALL create_program_with_source(cl_context c, cl_uint count,
                                                         const char **strings,
                                                         const size_t *lengths, cl_int *err)
{
    cl_program p = pocl->clCreateProgramWithSource(c, count, strings, lengths, err);
    adopt(p);
    return p;
}

static cl_program CL_API_CALL create_program_with_binary(cl_context c, cl_uint ndev,
                                                         const cl_device_id *devices,
                                                         const size_t *lengths,
                                                         const unsigned char **binaries,
                                                         cl_int *status, cl_int *err)
{
    cl_program p =
        pocl->clCreateProgramWithBinary(c, ndev, devices, lengths, binaries, status, err);
    adopt(p);
    return p;
}

static cl_program CL_API_CALL link_program(cl_context c, cl_uint ndev, const cl_device_id *devices,
                                           const char *options, cl_uint ninputs,
                                           const cl_program *inputs,
                                           void(CL_CALLBACK *notify)(cl_program, void *),
                                           void *user, cl_int *err)
{
    cl_program p =
        pocl->clLinkProgram(c, ndev, devices, options, ninputs, inputs, notify, user, err);
    adopt(p);
    return p;
}

static cl_kernel CL_API_CALL create_kernel(cl_program p, const char *name, cl_int *err)
{
    cl_kernel k = pocl->clCreateKernel(p, name, err);
    adopt(k);
    return k;
}

static cl_int CL_API_CALL create_kernels(cl_program p, cl_uint num, cl_kernel *kernels,
                                         cl_uint *num_ret)
{
    cl_uint n = 0;
    cl_int err = pocl->clCreateKernelsInProgram(p, num, kernels, &n);
    for (cl_uint i = 0; err == CL_SUCCESS && kernels && i < n && i < num; i++)
        adopt(kernels[i]);
    if (num_ret)
        *num_ret = n;
    return err;
}

static cl_kernel CL_API_CALL clone_kernel(cl_kernel k, cl_int *err)
{
    cl_kernel c = pocl->clCloneKernel(k, err);
    adopt(c);
    return c;
}

static void *gl_function(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } fns[] = {
        {"clGetGLContextInfoKHR", (void *)gl_context_info},
        {"clCreateFromGLBuffer", (void *)create_from_gl_buffer},
        {"clEnqueueAcquireGLObjects", (void *)acquire_gl_objects},
        {"clEnqueueReleaseGLObjects", (void *)release_gl_objects},
        {"clGetGLObjectInfo", (void *)get_gl_object_info},
        {"clIcdGetPlatformIDsKHR", (void *)clIcdGetPlatformIDsKHR},
    };
    for (size_t i = 0; name && i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(name, fns[i].name))
            return fns[i].fn;
    return NULL;
}

/* What the ICD loader looks up: clIcdGetPlatformIDsKHR and clGetPlatformInfo too. */
GLSHARE_API void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
    if (name && !strcmp(name, "clGetPlatformInfo"))
        return (void *)get_platform_info;
    void *fn = gl_function(name);
    return fn || !pocl ? fn : pocl->clGetExtensionFunctionAddress(name);
}

static void *CL_API_CALL get_extension_function(cl_platform_id p, const char *name)
{
    void *fn = gl_function(name);
    return fn ? fn : pocl->clGetExtensionFunctionAddressForPlatform(p, name);
}

static void fill_table(cl_icd_dispatch *t)
{
    t->clGetPlatformInfo = get_platform_info;
    t->clGetDeviceIDs = get_device_ids;
    t->clGetDeviceInfo = get_device_info;
    t->clCreateContext = create_context;
    t->clCreateContextFromType = create_context_from_type;
    t->clReleaseContext = release_context;
    t->clCreateCommandQueue = create_queue;
    t->clCreateCommandQueueWithProperties = create_queue_with_properties;
    t->clCreateProgramWithSource = create_program_with_source;
    t->clCreateProgramWithBinary = create_program_with_binary;
    t->clLinkProgram = link_program;
    t->clCreateKernel = create_kernel;
    t->clCreateKernelsInProgram = create_kernels;
    t->clCloneKernel = clone_kernel;
    t->clSetKernelArg = set_kernel_arg;
    t->clReleaseKernel = release_kernel;
    t->clEnqueueNDRangeKernel = enqueue_nd_range;
    t->clEnqueueTask = enqueue_task;
    t->clEnqueueReadBuffer = enqueue_read;
    t->clEnqueueWriteBuffer = enqueue_write;
    t->clEnqueueCopyBuffer = enqueue_copy;
    t->clEnqueueFillBuffer = enqueue_fill;
    t->clEnqueueMapBuffer = enqueue_map;
    t->clRetainMemObject = retain_mem;
    t->clReleaseMemObject = release_mem;
    t->clFinish = finish;
    t->clGetGLContextInfoKHR = gl_context_info;
    t->clCreateFromGLBuffer = create_from_gl_buffer;
    t->clEnqueueAcquireGLObjects = acquire_gl_objects;
    t->clEnqueueReleaseGLObjects = release_gl_objects;
    t->clGetGLObjectInfo = get_gl_object_info;
    t->clGetExtensionFunctionAddress = clGetExtensionFunctionAddress;
    t->clGetExtensionFunctionAddressForPlatform = get_extension_function;
}

__attribute__((destructor)) static void summary(void)
{
    if (used)
        fprintf(stderr,
                "pbfcl-glshare: summary: %lu GL-sharing contexts, %lu GL buffers, %lu acquires, "
                "%lu releases, %lu glFinish calls, %lu violations\n",
                n_contexts, n_buffers, n_acquires, n_releases, gl_finishes, n_violations);
}
