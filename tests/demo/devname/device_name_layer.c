/* A test layer that renames every OpenCL device: preloaded (LD_PRELOAD) into a program, it
 * answers clGetDeviceInfo(CL_DEVICE_NAME) with $PBFCL_TEST_DEVICE_NAME and passes every other
 * query to the OpenCL library. It lets the demo's tests show the HUD a device name as long as
 * any machine's (an Intel Xeon's PoCL device is
 * "pthread-skylake-avx512-Intel(R) Xeon(R) Processor") on whatever device the machine has.
 * Never installed. */
#define _GNU_SOURCE
#undef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef cl_int (*device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);

__attribute__((visibility("default"))) cl_int clGetDeviceInfo(cl_device_id device,
                                                              cl_device_info param, size_t size,
                                                              void *value, size_t *size_ret)
{
    static device_info_fn next;
    if (!next)
        next = (device_info_fn)dlsym(RTLD_NEXT, "clGetDeviceInfo");
    const char *name = getenv("PBFCL_TEST_DEVICE_NAME");
    if (!next)
        return CL_INVALID_PLATFORM;
    if (param != CL_DEVICE_NAME || !name)
        return next(device, param, size, value, size_ret);
    cl_int status = next(device, param, 0, NULL, NULL); /* the device itself must be valid */
    if (status != CL_SUCCESS)
        return status;
    size_t needed = strlen(name) + 1;
    if (value && size < needed)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, name, needed);
    if (size_ret)
        *size_ret = needed;
    return CL_SUCCESS;
}
