/* CL/GL interop: an OpenCL context created against the current GL context, a vertex buffer
 * wrapped with clCreateFromGLBuffer and acquired/released around each copy, and the host
 * copy (device buffer -> pinned memory -> glBufferSubData) used everywhere else. */
#include "app_env.h"
#include "demo_interop.h"
#include "demo_glctx.h"

#include <CL/cl_gl.h>
#include <stdlib.h>
#include <string.h>

/* False if the GL context is known to run on another device than dev (then sharing cannot
 * work); true if it matches or the driver cannot say. */
static bool gl_context_on_device(const pbfcl_device_info *dev, const cl_context_properties *gl)
{
    clGetGLContextInfoKHR_fn query =
        (clGetGLContextInfoKHR_fn)clGetExtensionFunctionAddressForPlatform(dev->platform,
                                                                           "clGetGLContextInfoKHR");
    if (!query)
        return true;
    cl_context_properties props[16];
    int n = 0;
    props[n++] = CL_CONTEXT_PLATFORM;
    props[n++] = (cl_context_properties)dev->platform;
    for (int i = 0; gl[i] && n < 14; i += 2) {
        props[n++] = gl[i];
        props[n++] = gl[i + 1];
    }
    props[n] = 0;
    cl_device_id devices[16];
    size_t bytes = 0;
    if (query(props, CL_DEVICES_FOR_GL_CONTEXT_KHR, sizeof devices, devices, &bytes) != CL_SUCCESS)
        return true;
    for (size_t i = 0; i < bytes / sizeof devices[0] && i < 16; i++)
        if (devices[i] == dev->device)
            return true;
    return false;
}

/* True when OpenGL renders in software (Mesa's llvmpipe/softpipe, e.g. under Xvfb): no
 * OpenCL device can share its buffers, so the drivers are not even asked. */
static bool gl_is_software(void)
{
    const char *r = (const char *)glGetString(GL_RENDERER);
    return r && (strstr(r, "llvmpipe") || strstr(r, "softpipe") || strstr(r, "swrast"));
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
    if (!want_sharing)
        snprintf(reason, sizeof reason, "--no-gl-sharing");
    else if (!dev.gl_sharing)
        snprintf(reason, sizeof reason, "%s does not offer cl_khr_gl_sharing", dev.device_name);
    else if (gl_is_software())
        snprintf(reason, sizeof reason, "OpenGL renders in software (%s)",
                 (const char *)glGetString(GL_RENDERER));
    else if (pbfcl_demo_gl_context_props(gl_props, 8, reason, sizeof reason) == 0)
        ; /* reason filled in */
    else if (!gl_context_on_device(&dev, gl_props))
        snprintf(reason, sizeof reason, "the OpenGL context runs on another device than %s",
                 dev.device_name);
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

static pbfcl_status update_shared(pbfcl_demo_interop *ip, pbfcl_sim *sim)
{
    cl_command_queue q = ip->cl->queue;
    if (ip->gl_event)
        glFlush(); /* acquire then waits for GL's pending work itself */
    else
        glFinish();
    PBFCL_CL_CHECK(clEnqueueAcquireGLObjects(q, 1, &ip->gl_buf, 0, NULL, NULL));
    pbfcl_status s = pbfcl_sim_copy_positions(sim, ip->gl_buf);
    PBFCL_CL_CHECK(clEnqueueReleaseGLObjects(q, 1, &ip->gl_buf, 0, NULL, NULL));
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
    return ip->shared ? update_shared(ip, sim) : update_copy(ip, sim);
}

const char *pbfcl_demo_interop_path(const pbfcl_demo_interop *ip)
{
    if (ip->shared)
        return ip->gl_event ? "CL/GL sharing (gl_event)" : "CL/GL sharing";
    return "host copy";
}
