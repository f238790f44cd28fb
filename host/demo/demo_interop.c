/* CL/GL interop: an OpenCL context created against the current GL context, a vertex buffer
 * wrapped with clCreateFromGLBuffer and acquired/released around each copy, and the host
 * copy (device buffer -> pinned memory -> glBufferSubData) used everywhere else. */
#include "app_env.h"
#include "demo_interop.h"
#include "demo_glctx.h"

#include <CL/cl_gl.h>
#include <stdlib.h>
#include <string.h>

/* props (room for 16) = CL_CONTEXT_PLATFORM of dev, then the GL properties gl. */
static void with_platform(const pbfcl_device_info *dev, const cl_context_properties *gl,
                          cl_context_properties *props)
{
    int n = 0;
    props[n++] = CL_CONTEXT_PLATFORM;
    props[n++] = (cl_context_properties)dev->platform;
    for (int i = 0; gl[i] && n < 14; i += 2) {
        props[n++] = gl[i];
        props[n++] = gl[i + 1];
    }
    props[n] = 0;
}

/* What the driver says of the GL context's device (clGetGLContextInfoKHR). */
typedef enum gl_device { GL_DEVICE_UNKNOWN, GL_DEVICE_SAME, GL_DEVICE_OTHER } gl_device;

/* Whether the GL context runs on dev, as far as the driver can say. */
static gl_device gl_context_device(const pbfcl_device_info *dev, const cl_context_properties *gl)
{
    clGetGLContextInfoKHR_fn query =
        (clGetGLContextInfoKHR_fn)clGetExtensionFunctionAddressForPlatform(dev->platform,
                                                                           "clGetGLContextInfoKHR");
    if (!query)
        return GL_DEVICE_UNKNOWN;
    cl_context_properties props[16];
    with_platform(dev, gl, props);
    cl_device_id devices[16];
    size_t bytes = 0;
    if (query(props, CL_DEVICES_FOR_GL_CONTEXT_KHR, sizeof devices, devices, &bytes) != CL_SUCCESS)
        return GL_DEVICE_UNKNOWN;
    for (size_t i = 0; i < bytes / sizeof devices[0] && i < 16; i++)
        if (devices[i] == dev->device)
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
 * gives one warning with its error rather than an error from pbfcl_cl_create. */
static cl_int try_gl_context(const pbfcl_device_info *dev, const cl_context_properties *gl)
{
    cl_context_properties props[16];
    with_platform(dev, gl, props);
    cl_int err = CL_SUCCESS;
    cl_context c = clCreateContext(props, 1, &dev->device, NULL, NULL, &err);
    if (c)
        clReleaseContext(c);
    return c ? CL_SUCCESS : err != CL_SUCCESS ? err : CL_INVALID_CONTEXT;
}

pbfcl_status pbfcl_demo_interop_open_cl(pbfcl_cl *cl, const char *device_spec, bool want_sharing,
                                        bool *sharing, char *why, size_t why_size)
{
    char reason[256] = "";
    pbfcl_device_info dev;
    *sharing = false;
    memset(cl, 0, sizeof *cl);
    PBFCL_TRY(pbfcl_cl_select(device_spec ? device_spec : app_env_device(), &dev));
    cl_context_properties gl_props[8];
    gl_device on = GL_DEVICE_UNKNOWN;
    cl_int err = CL_SUCCESS;
    if (!want_sharing)
        snprintf(reason, sizeof reason, "--no-gl-sharing");
    else if (!dev.gl_sharing)
        snprintf(reason, sizeof reason, "%s does not offer cl_khr_gl_sharing", dev.device_name);
    else if (pbfcl_demo_gl_context_props(gl_props, 8, reason, sizeof reason) == 0)
        ; /* reason filled in */
    else if ((on = gl_context_device(&dev, gl_props)) == GL_DEVICE_OTHER)
        snprintf(reason, sizeof reason, "the OpenGL context runs on another device than %s",
                 dev.device_name);
    else if (on == GL_DEVICE_UNKNOWN && gl_is_software())
        snprintf(reason, sizeof reason, "OpenGL renders in software (%s)",
                 (const char *)glGetString(GL_RENDERER));
    else if ((err = try_gl_context(&dev, gl_props)) != CL_SUCCESS)
        snprintf(reason, sizeof reason, "clCreateContext with the OpenGL context failed: %s",
                 pbfcl_cl_error_name(err));
    else if (pbfcl_cl_create(cl, &dev, gl_props) != PBFCL_OK)
        snprintf(reason, sizeof reason, "creating a GL-sharing OpenCL context failed");
    else
        *sharing = true;

    if (!*sharing && want_sharing && dev.gl_sharing)
        pbfcl_warnf("CL/GL sharing unavailable (%s); copying positions through the host", reason);
    if (why)
        snprintf(why, why_size, "%s", reason);
    if (!*sharing)
        PBFCL_TRY(pbfcl_cl_create(cl, &dev, NULL));
    pbfcl_status st = app_cl_configure(cl);
    if (st != PBFCL_OK)
        pbfcl_cl_destroy(cl);
    return st;
}

static pbfcl_status create_copy_path(pbfcl_demo_interop *ip)
{
    size_t bytes = (ip->n ? ip->n : 1) * 4 * sizeof(float);
    PBFCL_TRY(
        pbfcl_cl_buffer(ip->cl, CL_MEM_READ_WRITE, bytes, "demo positions", &ip->staging_buf));
    PBFCL_TRY(pbfcl_cl_buffer(ip->cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                              "demo pinned positions", &ip->pinned_buf));
    cl_int err;
    ip->pinned = clEnqueueMapBuffer(ip->cl->queue, ip->pinned_buf, CL_TRUE,
                                    CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        ip->pinned = NULL;
        pbfcl_report_cl(err, "clEnqueueMapBuffer(demo pinned positions)", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_interop_create(pbfcl_demo_interop *ip, pbfcl_cl *cl, bool sharing,
                                       GLuint vbo, size_t n)
{
    memset(ip, 0, sizeof *ip);
    ip->cl = cl;
    ip->vbo = vbo;
    ip->n = n;
    ip->gl_event = cl->dev.gl_event;
    if (sharing) {
        glFinish();
        cl_int err;
        ip->gl_buf = clCreateFromGLBuffer(cl->context, CL_MEM_WRITE_ONLY, vbo, &err);
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

void pbfcl_demo_interop_destroy(pbfcl_demo_interop *ip)
{
    if (!ip)
        return;
    if (ip->pinned && ip->cl && ip->cl->queue) {
        clEnqueueUnmapMemObject(ip->cl->queue, ip->pinned_buf, ip->pinned, 0, NULL, NULL);
        clFinish(ip->cl->queue);
    }
    pbfcl_cl_release_buffer(&ip->pinned_buf);
    pbfcl_cl_release_buffer(&ip->staging_buf);
    pbfcl_cl_release_buffer(&ip->gl_buf);
    memset(ip, 0, sizeof *ip);
}

/* After the driver rejected an acquire or release (err): one warning, then the host copy
 * from now on. */
static pbfcl_status fall_back_to_copy(pbfcl_demo_interop *ip, const char *call, cl_int err)
{
    pbfcl_warnf("%s failed (%s); copying positions through the host", call,
                pbfcl_cl_error_name(err));
    clFinish(ip->cl->queue);
    pbfcl_cl_release_buffer(&ip->gl_buf);
    ip->shared = false;
    return create_copy_path(ip);
}

static pbfcl_status update_shared(pbfcl_demo_interop *ip, pbfcl_sim *sim)
{
    cl_command_queue q = ip->cl->queue;
    if (ip->gl_event)
        glFlush(); /* acquire then waits for GL's pending work itself */
    else
        glFinish();
    cl_int err = clEnqueueAcquireGLObjects(q, 1, &ip->gl_buf, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return fall_back_to_copy(ip, "clEnqueueAcquireGLObjects", err);
    pbfcl_status s = pbfcl_sim_copy_positions(sim, ip->gl_buf);
    err = clEnqueueReleaseGLObjects(q, 1, &ip->gl_buf, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return fall_back_to_copy(ip, "clEnqueueReleaseGLObjects", err);
    if (ip->gl_event)
        PBFCL_CL_CHECK(clFlush(q)); /* GL waits for the release itself */
    else
        PBFCL_CL_CHECK(clFinish(q));
    return s;
}

static pbfcl_status update_copy(pbfcl_demo_interop *ip, pbfcl_sim *sim)
{
    size_t bytes = ip->n * 4 * sizeof(float);
    PBFCL_TRY(pbfcl_sim_copy_positions(sim, ip->staging_buf));
    PBFCL_CL_CHECK(clEnqueueReadBuffer(ip->cl->queue, ip->staging_buf, CL_TRUE, 0, bytes,
                                       ip->pinned, 0, NULL, NULL));
    glBindBuffer(GL_ARRAY_BUFFER, ip->vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, ip->pinned);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_interop_update(pbfcl_demo_interop *ip, pbfcl_sim *sim)
{
    if (ip->n == 0)
        return PBFCL_OK;
    if (ip->shared)
        PBFCL_TRY(update_shared(ip, sim));
    /* not "else": a failed acquire or release has just switched to the copy */
    return ip->shared ? PBFCL_OK : update_copy(ip, sim);
}

const char *pbfcl_demo_interop_path(const pbfcl_demo_interop *ip)
{
    if (ip->shared)
        return ip->gl_event ? "CL/GL sharing (gl_event)" : "CL/GL sharing";
    return "host copy";
}
