/* Each rank's device: entry (local rank mod count) of a --device list "A,B,..." (each entry as
 * one --device, docs/DISTRIBUTED.md), or without one the (local rank mod count)-th GPU of the
 * machine, or its first device when it has no GPU. The local rank is the rank among those
 * of the same machine. */
#include "dist_run.h"

#include "runtime/pbfcl_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dist_local_rank(MPI_Comm comm)
{
    MPI_Comm local;
    int rank = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &rank);
    MPI_Comm_free(&local);
    return rank;
}

/* Entry k (mod their count) of the comma-separated list into out. */
static void list_entry(const char *list, int k, char *out, size_t size)
{
    int count = 1;
    for (const char *c = list; *c; c++)
        count += *c == ',';
    k %= count;
    const char *start = list;
    while (k-- > 0)
        start = strchr(start, ',') + 1;
    size_t len = strcspn(start, ",");
    snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), start);
}

/* Without a --device: the local rank's GPU, or the first device. */
static pbfcl_status pick_default(int local, pbfcl_device_info *out)
{
    pbfcl_device_info *devs = NULL;
    int count = 0, gpus = 0;
    PBFCL_TRY(pbfcl_cl_enumerate(&devs, &count));
    if (count == 0) {
        free(devs);
        pbfcl_errorf("no OpenCL device found");
        return PBFCL_ERR_NO_DEVICE;
    }
    for (int d = 0; d < count; d++)
        gpus += devs[d].type == CL_DEVICE_TYPE_GPU;
    int want = gpus ? local % gpus : 0, seen = 0;
    *out = devs[0];
    for (int d = 0; gpus && d < count; d++)
        if (devs[d].type == CL_DEVICE_TYPE_GPU && seen++ == want)
            *out = devs[d];
    free(devs);
    return PBFCL_OK;
}

pbfcl_status dist_open_device(MPI_Comm comm, const char *spec, pbfcl_cl *cl)
{
    int local = dist_local_rank(comm);
    pbfcl_device_info dev;
    if (!spec || !*spec)
        spec = getenv("PBFCL_DEVICE");
    if (spec && *spec) {
        char one[256];
        list_entry(spec, local, one, sizeof one);
        PBFCL_TRY(pbfcl_cl_select(one, &dev));
    } else {
        PBFCL_TRY(pick_default(local, &dev));
    }
    return pbfcl_cl_create(cl, &dev, NULL);
}
