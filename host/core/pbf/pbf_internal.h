/* PBF's own state and the helpers its files share (pbf/ only). */
#ifndef PBFCL_PBF_INTERNAL_H
#define PBFCL_PBF_INTERNAL_H

#include "pbf/pbf.h"

/* The most constraint kinds (constraint.h) the registry may hold. */
#define PBF_MAX_CONSTRAINTS 10

/* What pbf's create makes: its program and kernels, its constraint kinds' states, its
 * per-particle buffers (pbf_buffers[], pbf.c; the constraint kinds own theirs) and the flags
 * its stages pass to each other. */
typedef struct pbf_state {
    cl_program program;
    cl_program list_program; /* the same built with -D PBFCL_SLOT_LIST (pbf_lists.c), or NULL */
    cl_kernel predict, update, vorticity_viscosity;
    void *constraint[PBF_MAX_CONSTRAINTS];     /* of pbf_constraints[k] (constraint.h) */
    cl_mem vort_force_buf, vort_force_tmp_buf; /* float4: vorticity force; reorder target */
    cl_mem q_buf;     /* float4: x* + dx (delta, collide; collide ping-pongs it with its twin) */
    cl_mem omega_buf; /* float4: vorticity */
    int vort_force_stale; /* vort_force_buf may hold a force (zeroed when vorticity is off) */
    int lists_fresh;      /* neighbours ran and no lambda since: lambda records x* */
    int q_from_delta;     /* q_buf was written by delta (collide may read the near lists) */
    /* the bodies' friction with other solids: 1 from the neighbour search to the substep's
     * first collide pass, before which body_contacts measures each contact over the whole
     * substep (how far it slid and closed since x); 2 from then to the projection that applies
     * it; 0 after */
    int body_friction;
    float omega;    /* delta: the Chebyshev weight of this iteration (1: plain Jacobi) */
    int cfl_warned; /* pbf_choose_substeps warned of a cfl above PBFCL_PBF_CFL_SAFE */
} pbf_state;

/* The common view of sim and PBF's state. */
pbf_state *pbf_view(pbfcl_sim *sim, pbfcl_sim_view *v);

/* Sets kernel argument idx to the value v (an lvalue). */
#define PBF_ARG(kernel, idx, v) PBFCL_CL_CHECK(clSetKernelArg((kernel), (idx), sizeof(v), &(v)))

/* Launches k over the particles. */
pbfcl_status pbf_launch(const pbfcl_sim_view *v, cl_kernel k, pbfcl_profile *prof,
                        pbfcl_stage stage);

/* Sets the arguments every neighbour kernel starts with: params, n. */
pbfcl_status pbf_set_head(const pbfcl_sim_view *v, cl_kernel k);

/* The contact skin of the near lists, m. */
float pbf_contact_skin(const pbfcl_sim_view *v);

void pbf_swap(cl_mem *a, cl_mem *b);

/* Stages over slot lists (pbf_lists.c): *out, kernel name of the program built with -D
 * PBFCL_SLOT_LIST (built at the first call), unless *out is made already. */
pbfcl_status pbf_list_kernel(const pbfcl_sim_view *v, pbf_state *ps, const char *name,
                             cl_kernel *out);

/* While an exchange is in flight (l from pbfcl_sim_sync_lists): the list kernels k[0..kernels-1],
 * their first args arguments set as a launch over every particle's, over the interior's list,
 * then, once the ghosts' values are in (pbfcl_sim_sync_wait), over the boundary's. */
pbfcl_status pbf_launch_lists(pbfcl_sim *sim, const pbfcl_sim_view *v, cl_kernel *k, int kernels,
                              cl_uint args, const pbfcl_sim_lists *l, pbfcl_profile *prof,
                              pbfcl_stage stage);

#endif
