/* Stage names and the collection of profiling-event times per stage. */
#include "runtime/profile.h"

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

/* Waits for events [0, count), adds their times into ms[] and their kernels' totals and
 * releases them. Returns CL_SUCCESS or the first error. */
static cl_int read_events(pbfcl_profile *p, int count, double *ms)
{
    cl_int first = CL_SUCCESS;
    if (count > 0)
        first = clWaitForEvents((cl_uint)count, p->events);
    for (int i = 0; i < count; i++) {
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
    return first;
}

void pbfcl_profile_add(pbfcl_profile *p, pbfcl_stage stage, cl_event ev, cl_kernel kernel)
{
    if (p->count >= PBFCL_PROFILE_MAX_EVENTS) {
        /* the oldest half: the device still has the newer half queued while we wait */
        int half = PBFCL_PROFILE_MAX_EVENTS / 2, rest = p->count - half;
        cl_int err = read_events(p, half, p->flushed_ms);
        if (p->flush_error == CL_SUCCESS)
            p->flush_error = err;
        memmove(p->events, p->events + half, (size_t)rest * sizeof *p->events);
        memmove(p->kernel, p->kernel + half, (size_t)rest * sizeof *p->kernel);
        memmove(p->stage, p->stage + half, (size_t)rest * sizeof *p->stage);
        p->count = rest;
        p->flushed += half;
    }
    p->events[p->count] = ev;
    p->kernel[p->count] = kernel;
    p->stage[p->count] = (unsigned char)stage;
    p->count++;
}

cl_int pbfcl_profile_collect(pbfcl_profile *p, double *ms)
{
    cl_int first = read_events(p, p->count, ms);
    for (int s = 0; s < PBFCL_STAGE_COUNT; s++)
        ms[s] += p->flushed_ms[s];
    if (p->flush_error != CL_SUCCESS)
        first = p->flush_error;
    memset(p->flushed_ms, 0, sizeof p->flushed_ms);
    p->flush_error = CL_SUCCESS;
    p->flushed = 0;
    p->count = 0;
    return first;
}

void pbfcl_profile_discard(pbfcl_profile *p)
{
    for (int i = 0; i < p->count; i++)
        clReleaseEvent(p->events[i]);
    memset(p->flushed_ms, 0, sizeof p->flushed_ms);
    p->flush_error = CL_SUCCESS;
    p->flushed = 0;
    p->count = 0;
}
