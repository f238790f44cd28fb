/* Stage names and the collection of profiling-event times per stage. */
#include "profile.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *pbfcl_stage_name(pbfcl_stage stage)
{
    switch (stage) {
#define PBFCL_STAGE_NAME_(id, name)                                                                \
    case id:                                                                                       \
        return name;
        PBFCL_STAGES(PBFCL_STAGE_NAME_)
#undef PBFCL_STAGE_NAME_
    case PBFCL_STAGE_COUNT:
        break;
    }
    return "unknown";
}

void pbfcl_profile_add(pbfcl_profile *p, pbfcl_stage stage, cl_event ev, cl_kernel kernel)
{
    if (p->count >= PBFCL_PROFILE_MAX_EVENTS) {
        clReleaseEvent(ev);
        p->dropped++;
        return;
    }
    p->events[p->count] = ev;
    p->kernel[p->count] = kernel;
    p->stage[p->count] = (unsigned char)stage;
    p->count++;
}

/* Adds ms to the total of the kernel (NULL: "copy"), a new entry, named once, if it has none
 * yet. */
static void add_kernel_time(pbfcl_profile *p, cl_kernel kernel, double ms)
{
    int k = 0;
    while (k < p->kernel_count && p->kernels[k].kernel != kernel)
        k++;
    if (k == PBFCL_PROFILE_MAX_KERNELS)
        return;
    if (k == p->kernel_count) {
        pbfcl_kernel_time *t = &p->kernels[k];
        t->kernel = kernel;
        strcpy(t->name, "copy");
        if (kernel && clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof t->name, t->name,
                                      NULL) != CL_SUCCESS)
            strcpy(t->name, "(unnamed kernel)");
        p->kernel_count++;
    }
    p->kernels[k].ms += ms;
    p->kernels[k].launches++;
}

cl_int pbfcl_profile_collect(pbfcl_profile *p, double *ms)
{
    cl_int first = CL_SUCCESS;
    if (p->count > 0)
        first = clWaitForEvents((cl_uint)p->count, p->events);
    for (int i = 0; i < p->count; i++) {
        cl_ulong t0 = 0, t1 = 0;
        cl_int e0 =
            clGetEventProfilingInfo(p->events[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        cl_int e1 =
            clGetEventProfilingInfo(p->events[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        if (first == CL_SUCCESS && e0 != CL_SUCCESS)
            first = e0;
        if (first == CL_SUCCESS && e1 != CL_SUCCESS)
            first = e1;
        if (e0 == CL_SUCCESS && e1 == CL_SUCCESS && t1 >= t0) {
            ms[p->stage[i]] += (double)(t1 - t0) * 1e-6;
            add_kernel_time(p, p->kernel[i], (double)(t1 - t0) * 1e-6);
        }
        clReleaseEvent(p->events[i]);
    }
    p->count = 0;
    return first;
}

void pbfcl_profile_discard(pbfcl_profile *p)
{
    for (int i = 0; i < p->count; i++)
        clReleaseEvent(p->events[i]);
    p->count = 0;
}
