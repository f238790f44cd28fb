/* PBF's stages outside the solver iteration: predict, the neighbour search of x*, update and
 * vorticity with XSPH viscosity; apply_delta; and the readers of its state for the tests. */
#include "pbf/constraint.h"

#include <stdlib.h>
#include <string.h>

pbfcl_status pbfcl_pbf_predict(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    cl_kernel k = ps->predict;
    PBFCL_TRY(pbf_set_head(&v, k));
    PBF_ARG(k, 2, *v.pos);
    PBF_ARG(k, 3, *v.pred);
    PBF_ARG(k, 4, *v.vel);
    PBF_ARG(k, 5, ps->vort_force_buf);
    PBF_ARG(k, 6, v.gravity);
    PBF_ARG(k, 7, v.push_origin);
    PBF_ARG(k, 8, v.push_dir);
    PBF_ARG(k, 9, v.push);
    PBF_ARG(k, 10, v.solids);
    PBF_ARG(k, 11, v.inv_mass_buf);
    PBF_ARG(k, 12, v.phase_buf);
    return pbf_launch(&v, k, prof, PBFCL_STAGE_PREDICT);
}

pbfcl_status pbfcl_pbf_neighbours(pbfcl_sim *sim, pbfcl_profile *prof)
{
    PBFCL_TRY(pbfcl_sim_sync(sim, PBFCL_SYNC_SEARCH, NULL, NULL, 0)); /* split: ghosts anew */
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    float near = v.params->min_dist + pbf_contact_skin(&v);
    near = near < v.params->h ? near : v.params->h;
    ps->lists_fresh = 1;
    ps->body_friction = 1; /* the next collide pass gives the bodies' friction */
    PBFCL_TRY(pbfcl_sim_neighbours_pred(sim, near, prof));
    return pbfcl_sim_sync(sim, PBFCL_SYNC_SORTED, NULL, NULL, 0);
}

pbfcl_status pbfcl_pbf_apply_delta(pbfcl_sim *sim, pbfcl_profile *prof)
{
    (void)prof; /* no kernel: delta and collide wrote q = x* + dx */
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    pbf_swap(v.pred, &ps->q_buf); /* x* = q; the old x* buffer is free for q */
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_update(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    cl_kernel k = ps->update;
    PBFCL_TRY(pbf_set_head(&v, k));
    PBF_ARG(k, 2, *v.pos);
    PBF_ARG(k, 3, *v.pred);
    PBF_ARG(k, 4, *v.vel);
    PBF_ARG(k, 5, v.density_buf);
    PBFCL_TRY(pbf_launch(&v, k, prof, PBFCL_STAGE_OTHER));
    const cl_mem bufs[] = {*v.pos, *v.vel}; /* vorticity and viscosity read the neighbours' */
    const size_t elem[] = {16, 16};
    return pbfcl_sim_sync(sim, PBFCL_SYNC_UPDATE, bufs, elem, 2);
}

/* Zeroes a vorticity force left from before vorticity was turned off, which must not act on
 * (predict applies it every substep); rare: a blocking write of zeros. */
static pbfcl_status clear_stale_force(const pbfcl_sim_view *v, pbf_state *ps)
{
    if (!ps->vort_force_stale || v->n == 0)
        return PBFCL_OK;
    void *zeros = calloc(v->n, 16);
    if (!zeros)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = clEnqueueWriteBuffer(v->cl->queue, ps->vort_force_buf, CL_TRUE, 0, v->n * 16,
                                      zeros, 0, NULL, NULL);
    free(zeros);
    PBFCL_CL_CHECK(err);
    ps->vort_force_stale = 0;
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_vorticity_viscosity(pbfcl_sim *sim, pbfcl_profile *prof)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    if (v.params->vorticity <= 0.0f && v.params->viscosity <= 0.0f)
        return clear_stale_force(&v, ps);  /* nothing to compute */
    cl_kernel k = ps->vorticity_viscosity; /* omega_i, f_vorticity and XSPH, one pass */
    PBFCL_TRY(pbf_set_head(&v, k));
    PBF_ARG(k, 2, *v.pos);
    PBF_ARG(k, 3, *v.vel);
    PBF_ARG(k, 4, v.grid->neighbor_count_buf);
    PBF_ARG(k, 5, v.grid->neighbor_buf);
    PBF_ARG(k, 6, ps->omega_buf);
    PBF_ARG(k, 7, *v.vel_tmp);
    PBF_ARG(k, 8, v.solids);
    PBF_ARG(k, 9, v.phase_buf);
    PBF_ARG(k, 10, v.inv_mass_buf);
    PBF_ARG(k, 11, ps->vort_force_buf);
    PBF_ARG(k, 12, v.grid->near_solid_buf);
    PBF_ARG(k, 13, v.grid->solid_stamp);
    PBFCL_TRY(pbf_launch(&v, k, prof, PBFCL_STAGE_VORTICITY_VISCOSITY));
    ps->vort_force_stale = 1;
    pbf_swap(v.vel, v.vel_tmp);
    return PBFCL_OK;
}

/* ---- readers for the tests ---------------------------------------------------------------- */

/* Reads components first..first+count-1 of every float4 of buf, packed. */
static pbfcl_status read_components(const pbfcl_sim_view *v, cl_mem buf, int first, int count,
                                    float *out)
{
    size_t n = v->n;
    if (n == 0)
        return PBFCL_OK;
    float *tmp = malloc(n * 16);
    if (!tmp)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = clEnqueueReadBuffer(v->cl->queue, buf, CL_TRUE, 0, n * 16, tmp, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        for (size_t i = 0; i < n; i++)
            memcpy(out + count * i, tmp + 4 * i + first, (size_t)count * sizeof(float));
    free(tmp);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clEnqueueReadBuffer", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

static pbfcl_status read_plain(const pbfcl_sim_view *v, cl_mem buf, size_t bytes, void *out)
{
    if (bytes == 0)
        return PBFCL_OK;
    PBFCL_CL_CHECK(clEnqueueReadBuffer(v->cl->queue, buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_read_vorticity(pbfcl_sim *sim, float *omega3, float *force3, float *strength)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    if (strength) /* V |omega| for the next substep's eta rides in vel.w */
        PBFCL_TRY(read_components(&v, *v.vel, 3, 1, strength));
    if (omega3)
        PBFCL_TRY(read_components(&v, ps->omega_buf, 0, 3, omega3));
    if (force3)
        PBFCL_TRY(read_components(&v, ps->vort_force_buf, 0, 3, force3));
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_read_solver(pbfcl_sim *sim, float *pred3, float *lambda, float *delta3,
                                   unsigned *neighbor_count, unsigned *neighbors)
{
    pbfcl_sim_view v;
    pbf_state *ps = pbf_view(sim, &v);
    size_t n = v.n;
    if (pred3)
        PBFCL_TRY(read_components(&v, *v.pred, 0, 3, pred3));
    if (lambda) /* the lambdas hold (x*, lambda) */
        PBFCL_TRY(read_components(&v, pbf_density_lambdas(ps), 3, 1, lambda));
    if (delta3) { /* dx = q - x* */
        float *x3 = malloc(n * 3 * sizeof *x3);
        pbfcl_status st =
            x3 ? read_components(&v, ps->q_buf, 0, 3, delta3) : PBFCL_ERR_OUT_OF_MEMORY;
        if (st == PBFCL_OK)
            st = read_components(&v, *v.pred, 0, 3, x3);
        for (size_t i = 0; st == PBFCL_OK && i < 3 * n; i++)
            delta3[i] -= x3[i];
        free(x3);
        PBFCL_TRY(st);
    }
    if (neighbor_count)
        PBFCL_TRY(read_plain(&v, v.grid->neighbor_count_buf, n * 4, neighbor_count));
    if (neighbors)
        PBFCL_TRY(read_plain(&v, v.grid->neighbor_buf, n * 4 * PBFCL_SIM_MAX_NEIGHBORS, neighbors));
    return PBFCL_OK;
}

pbfcl_status pbfcl_pbf_read_body_contacts(pbfcl_sim *sim, float *contacts8)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(sim, &v);
    if (!v.bodies)
        return PBFCL_ERR_UNSUPPORTED;
    return read_plain(&v, v.bodies->static_buf, v.n * 32, contacts8);
}
