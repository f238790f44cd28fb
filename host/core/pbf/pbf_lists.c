/* PBF's stages over slot lists (a split simulation's overlap, docs/DISTRIBUTED.md, "Overlap"):
 * while the ghosts' values of an exchange travel (pbfcl_sim_sync_lists), lambda, delta and
 * collide run over the interior's list, then, once they have arrived (pbfcl_sim_sync_wait),
 * over the boundary's. Their kernels are PBF's program built a second time with -D
 * PBFCL_SLOT_LIST (cl/pbf/pbf.cl: the same source, each item the particle at its list entry),
 * at the first such stage: a simulation that is never split never builds it. */
#include "pbf/constraint.h"

#include "runtime/programs.h"

#include <string.h>

pbfcl_status pbf_list_kernel(const pbfcl_sim_view *v, pbf_state *ps, const char *name,
                             cl_kernel *out)
{
    if (*out)
        return PBFCL_OK;
    if (!ps->list_program) {
        pbfcl_build_config cfg;
        pbfcl_sim_kernel_config(&v->cl->dev, &cfg);
        static const char define[] = " -D PBFCL_SLOT_LIST";
        char options[512 + sizeof define];
        if (pbfcl_build_options(&cfg, options, 512) < 0)
            return PBFCL_ERR_BAD_ARGUMENT;
        strcat(options, define);
        const pbfcl_program_desc *desc = pbfcl_program(PBFCL_PROGRAM_PBF);
        PBFCL_TRY(pbfcl_cl_build(v->cl, desc->files, desc->nfiles, options, &ps->list_program));
    }
    return pbf_kernel(v, ps->list_program, name, out);
}

/* Launches the kernels k[0..count-1] (their arguments before args set) over count slots of
 * slots_buf from first. */
static pbfcl_status launch_list(const pbfcl_sim_view *v, cl_kernel *k, int kernels, cl_uint args,
                                cl_mem slots_buf, size_t first, size_t count, pbfcl_profile *prof,
                                pbfcl_stage stage)
{
    if (count == 0)
        return PBFCL_OK;
    cl_uint ufirst = (cl_uint)first, ucount = (cl_uint)count;
    size_t global = (count + v->wg - 1) / v->wg * v->wg, wg = v->wg;
    for (int e = 0; e < kernels; e++) {
        PBF_ARG(k[e], args, slots_buf);
        PBF_ARG(k[e], args + 1, ufirst);
        PBF_ARG(k[e], args + 2, ucount);
        cl_event ev = NULL; /* not pbfcl_cl_launch: the exchange in flight is not owed yet */
        PBFCL_CL_CHECK(clEnqueueNDRangeKernel(v->cl->queue, k[e], 1, NULL, &global, &wg, 0, NULL,
                                              prof ? &ev : NULL));
        if (prof)
            pbfcl_profile_add(prof, stage, ev, k[e]);
    }
    return PBFCL_OK;
}

pbfcl_status pbf_launch_lists(pbfcl_sim *sim, const pbfcl_sim_view *v, cl_kernel *k, int kernels,
                              cl_uint args, const pbfcl_sim_lists *l, pbfcl_profile *prof,
                              pbfcl_stage stage)
{
    PBFCL_TRY(launch_list(v, k, kernels, args, l->slots_buf, l->interior_first, l->interior_count,
                          prof, stage));
    PBFCL_TRY(pbfcl_sim_sync_wait(sim)); /* the ghosts' values arrive, written to their slots */
    return launch_list(v, k, kernels, args, l->slots_buf, l->boundary_first, l->boundary_count,
                       prof, stage);
}
