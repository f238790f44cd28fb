/* The SPH method split over ranks: its sync points are the core's (host/core/sph/sph.c:
 * the search, the densities, x' and v* after the first half, the second force's accelerations);
 * what is left here is the frame's step count, which SPH chooses from the largest acceleration
 * of the last frame besides the bounds every method reduces (dist.c, global_bounds). */
#include "dist_internal.h"

pbfcl_status dist_sph_bounds(pbfcl_dist *d)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    if (!v.accel_max_buf || v.scene->solver.method == PBFCL_METHOD_PBF)
        return PBFCL_OK;
    cl_uint bits; /* float bits of a magnitude: their order as uints is the floats' */
    PBFCL_CL_CHECK(clEnqueueReadBuffer(v.cl->queue, v.accel_max_buf, CL_TRUE, 0, sizeof bits, &bits,
                                       0, NULL, NULL));
    cl_uint most = bits;
    MPI_Allreduce(&bits, &most, 1, MPI_UNSIGNED, MPI_MAX, d->comm);
    PBFCL_CL_CHECK(clEnqueueWriteBuffer(v.cl->queue, v.accel_max_buf, CL_TRUE, 0, sizeof most,
                                        &most, 0, NULL, NULL));
    return PBFCL_OK;
}
