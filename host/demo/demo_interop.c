/* CL/GL interop: a pbfcl context created against the current GL context, a vertex buffer
 * wrapped with clCreateFromGLBuffer and acquired/released around each copy, and the host
 * copy (device buffer -> pinned memory -> glBufferSubData) used everywhere else. The solver
 * is reached through the public API only. */
#include "demo_interop.h"
#include "app_env.h"
#include "demo_glctx.h"
#include "runtime/pbfcl_error.h"

#include <CL/cl_gl.h>
#include <stdlib.h>
#include <string.h>

/* The device a context runs on, as the sharing checks need it. */
typedef struct cl_target {
    cl_platform_id platform;
    cl_device_id device;
    char name[256];
    bool gl_sharing; /* cl_khr_gl_sharing offered */
} cl_target;

/* True if device offers the OpenCL extension ext. */
static bool device_has(cl_device_id device, const char *ext)
{
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &bytes) != CL_SUCCESS || !bytes)
        return false;
    char *list = malloc(bytes + 1);
    bool has =
        list && clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, bytes, list, NULL) == CL_SUCCESS;
    if (has) {
        list[bytes] = '\0';
        has = strstr(list, ext) != NULL;
    }
    free(list);
    return has;
}

static void describe_target(pbfcl_context *ctx, cl_target *t)
{
    memset(t, 0, sizeof *t);
    pbfcl_context_cl(ctx, NULL, &t->device, NULL);
    clGetDeviceInfo(t->device, CL_DEVICE_PLATFORM, sizeof t->platform, &t->platform, NULL);
    clGetDeviceInfo(t->device, CL_DEVICE_NAME, sizeof t->name - 1, t->name, NULL);
    t->gl_sharing = device_has(t->device, "cl_khr_gl_sharing");
}

/* props (room for 16) = CL_CONTEXT_PLATFORM of t, then the GL properties gl. */
static void with_platform(const cl_target *t, const cl_context_properties *gl,
                          cl_context_properties *props)
{
    int n = 0;
    props[n++] = CL_CONTEXT_PLATFORM;
    props[n++] = (cl_context_properties)t->platform;
    for (int i = 0; gl[i] && n < 14; i += 2) {
        props[n++] = gl[i];
        props[n++] = gl[i + 1];
    }
    props[n] = 0;
}

/* What the driver says of the GL context's device (clGetGLContextInfoKHR). */
typedef enum gl_device { GL_DEVICE_UNKNOWN, GL_DEVICE_SAME, GL_DEVICE_OTHER } gl_device;

/* Whether the GL context runs on t's device, as far as the driver can say. */
static gl_device gl_context_device(const cl_target *t, const cl_context_properties *gl)
{
    clGetGLContextInfoKHR_fn query =
        (clGetGLContextInfoKHR_fn)clGetExtensionFunctionAddressForPlatform(t->platform,
                                                                           "clGetGLContextInfoKHR");
    if (!query)
        return GL_DEVICE_UNKNOWN;
    cl_context_properties props[16];
    with_platform(t, gl, props);
    cl_device_id devices[16];
    size_t bytes = 0;
    if (query(props, CL_DEVICES_FOR_GL_CONTEXT_KHR, sizeof devices, devices, &bytes) != CL_SUCCESS)
        return GL_DEVICE_UNKNOWN;
    for (size_t i = 0; i < bytes / sizeof devices[0] && i < 16; i++)
        if (devices[i] == t->device)
            return GL_DEVICE_SAME;
    return GL_DEVICE_OTHER;
}

/* True when OpenGL renders in software (Mesa's llvmpipe/softpipe, e.g. under Xvfb): no
 * OpenCL device can share its buffers unless its driver says it shares this GL context. */
static bool gl_is_software(void)
{
    const char *r = (const char *)glGetString(GL_RENDERER);
    return r && (strstr(r, "llvmpipe") || strstr(r, "softpipe") || strstr(r, "swrast"));
}

/* Creates and releases a context with the GL properties, so that a driver refusing them
 * gives one warning with its error rather than an error from pbfcl_context_create. */
static cl_int try_gl_context(const cl_target *t, const cl_context_properties *gl)
{
    cl_context_properties props[16];
    with_platform(t, gl, props);
    cl_int err = CL_SUCCESS;
    cl_context c = clCreateContext(props, 1, &t->device, NULL, NULL, &err);
    if (c)
        clReleaseContext(c);
    return c ? CL_SUCCESS : err != CL_SUCCESS ? err : CL_INVALID_CONTEXT;
}

/* A pbfcl context on the device spec names, with extra context properties (may be NULL). */
static pbfcl_status open_context(pbfcl_context **ctx, const char *spec,
                                 const cl_context_properties *props)
{
    pbfcl_context_desc desc;
    app_context_desc(&desc, spec);
    desc.cl_properties = props;
    return pbfcl_context_create(PBFCL_VERSION, &desc, ctx);
}

/* Opens a GL-sharing context on plain's device into *shared; false with reason filled in
 * when sharing is not possible. */
static bool open_sharing(pbfcl_context *plain, const char *spec, pbfcl_context **shared,
                         char *reason, size_t size)
{
    cl_target t;
    describe_target(plain, &t);
    cl_context_properties gl_props[8];
    gl_device on = GL_DEVICE_UNKNOWN;
    cl_int err = CL_SUCCESS;
    if (!t.gl_sharing)
        snprintf(reason, size, "%.160s does not offer cl_khr_gl_sharing", t.name);
    else if (pbfcl_demo_gl_context_props(gl_props, 8, reason, size) == 0)
        ; /* reason filled in */
    else if ((on = gl_context_device(&t, gl_props)) == GL_DEVICE_OTHER)
        snprintf(reason, size, "the OpenGL context runs on another device than %.160s", t.name);
    else if (on == GL_DEVICE_UNKNOWN && gl_is_software())
        snprintf(reason, size, "OpenGL renders in software (%s)",
                 (const char *)glGetString(GL_RENDERER));
    else if ((err = try_gl_context(&t, gl_props)) != CL_SUCCESS)
        snprintf(reason, size, "clCreateContext with the OpenGL context failed: %s",
                 pbfcl_cl_error_name(err));
    else if (open_context(shared, spec, gl_props) != PBFCL_OK)
        snprintf(reason, size, "creating a GL-sharing OpenCL context failed");
    else
        return true;
    if (t.gl_sharing)
        pbfcl_warnf("CL/GL sharing unavailable (%s); copying positions through the host", reason);
    return false;
}

pbfcl_status pbfcl_demo_interop_open_cl(pbfcl_context **ctx, const char *device_spec,
                                        bool want_sharing, bool *sharing, char *why,
                                        size_t why_size)
{
    char reason[256] = "";
    pbfcl_context *plain = NULL, *shared = NULL;
    *ctx = NULL;
    *sharing = false;
    PBFCL_TRY(open_context(&plain, device_spec, NULL)); /* the device, chosen as everywhere */
    if (!want_sharing)
        snprintf(reason, sizeof reason, "--no-gl-sharing");
    else if (open_sharing(plain, device_spec, &shared, reason, sizeof reason))
        *sharing = true;
    if (why)
        snprintf(why, why_size, "%s", reason);
    if (*sharing)
        pbfcl_context_destroy(plain);
    *ctx = *sharing ? shared : plain;
    return PBFCL_OK;
}

/* A device buffer of the interop's context; what names it in a failure. */
static pbfcl_status create_buffer(pbfcl_demo_interop *ip, cl_mem_flags flags, size_t bytes,
                                  const char *what, cl_mem *out)
{
    cl_int err;
    *out = clCreateBuffer(ip->context, flags, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        *out = NULL;
        pbfcl_errorf("clCreateBuffer(%s, %zu bytes) failed: %s", what, bytes,
                     pbfcl_cl_error_name(err));
        return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY
                   ? PBFCL_ERR_OUT_OF_MEMORY
                   : PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

static pbfcl_status create_copy_path(pbfcl_demo_interop *ip)
{
    size_t bytes = (ip->n ? ip->n : 1) * 4 * sizeof(float);
    PBFCL_TRY(create_buffer(ip, CL_MEM_READ_WRITE, bytes, "demo positions", &ip->staging_buf));
    PBFCL_TRY(create_buffer(ip, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                            "demo pinned positions", &ip->pinned_buf));
    cl_int err;
    ip->pinned = clEnqueueMapBuffer(ip->queue, ip->pinned_buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                    0, bytes, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        ip->pinned = NULL;
        pbfcl_report_cl(err, "clEnqueueMapBuffer(demo pinned positions)", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_interop_create(pbfcl_demo_interop *ip, pbfcl_context *ctx, bool sharing,
                                       GLuint vbo, size_t n)
{
    memset(ip, 0, sizeof *ip);
    cl_device_id device = NULL;
    PBFCL_TRY(pbfcl_context_cl(ctx, &ip->context, &device, &ip->queue));
    ip->vbo = vbo;
    ip->n = n;
    ip->gl_event = device_has(device, "cl_khr_gl_event");
    if (sharing) {
        glFinish();
        cl_int err;
        ip->gl_buf = clCreateFromGLBuffer(ip->context, CL_MEM_WRITE_ONLY, vbo, &err);
        if (err == CL_SUCCESS) {
            ip->shared = true;
            return PBFCL_OK;
        }
        ip->gl_buf = NULL;
        pbfcl_warnf("clCreateFromGLBuffer failed (%s); copying positions through the host",
                    pbfcl_cl_error_name(err));
    }
    pbfcl_status s = create_copy_path(ip);
    if (s != PBFCL_OK)
        pbfcl_demo_interop_destroy(ip);
    return s;
}

static void release_buffer(cl_mem *buf)
{
    if (*buf)
        clReleaseMemObject(*buf);
    *buf = NULL;
}

void pbfcl_demo_interop_destroy(pbfcl_demo_interop *ip)
{
    if (!ip)
        return;
    if (ip->pinned && ip->queue) {
        clEnqueueUnmapMemObject(ip->queue, ip->pinned_buf, ip->pinned, 0, NULL, NULL);
        clFinish(ip->queue);
    }
    release_buffer(&ip->pinned_buf);
    release_buffer(&ip->staging_buf);
    release_buffer(&ip->gl_buf);
    memset(ip, 0, sizeof *ip);
}

/* After the driver rejected an acquire or release (err): one warning, then the host copy
 * from now on. */
static pbfcl_status fall_back_to_copy(pbfcl_demo_interop *ip, const char *call, cl_int err)
{
    pbfcl_warnf("%s failed (%s); copying positions through the host", call,
                pbfcl_cl_error_name(err));
    clFinish(ip->queue);
    release_buffer(&ip->gl_buf);
    ip->shared = false;
    return create_copy_path(ip);
}

static pbfcl_status update_shared(pbfcl_demo_interop *ip, pbfcl_solver *solver)
{
    cl_command_queue q = ip->queue;
    if (ip->gl_event)
        glFlush(); /* acquire then waits for GL's pending work itself */
    else
        glFinish();
    cl_int err = clEnqueueAcquireGLObjects(q, 1, &ip->gl_buf, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return fall_back_to_copy(ip, "clEnqueueAcquireGLObjects", err);
    pbfcl_status s = pbfcl_solver_copy_positions(solver, ip->gl_buf);
    err = clEnqueueReleaseGLObjects(q, 1, &ip->gl_buf, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return fall_back_to_copy(ip, "clEnqueueReleaseGLObjects", err);
    if (ip->gl_event)
        PBFCL_CL_CHECK(clFlush(q)); /* GL waits for the release itself */
    else
        PBFCL_CL_CHECK(clFinish(q));
    return s;
}

static pbfcl_status update_copy(pbfcl_demo_interop *ip, pbfcl_solver *solver)
{
    size_t count = 0; /* the active particles, at most the buffer's n */
    PBFCL_TRY(pbfcl_solver_count(solver, &count));
    size_t bytes = (count < ip->n ? count : ip->n) * 4 * sizeof(float);
    if (bytes == 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_solver_copy_positions(solver, ip->staging_buf));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(ip->queue, ip->staging_buf, CL_TRUE, 0, bytes, ip->pinned, 0,
                                       NULL, NULL));
    glBindBuffer(GL_ARRAY_BUFFER, ip->vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, ip->pinned);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_interop_update(pbfcl_demo_interop *ip, pbfcl_solver *solver)
{
    if (ip->n == 0)
        return PBFCL_OK;
    if (ip->shared)
        PBFCL_TRY(update_shared(ip, solver));
    /* not "else": a failed acquire or release has just switched to the copy */
    return ip->shared ? PBFCL_OK : update_copy(ip, solver);
}

const char *pbfcl_demo_interop_path(const pbfcl_demo_interop *ip)
{
    if (ip->shared)
        return ip->gl_event ? "CL/GL sharing (gl_event)" : "CL/GL sharing";
    return "host copy";
}
