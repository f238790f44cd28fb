/* The collision shapes of a split simulation (docs/DISTRIBUTED.md, "Collision shapes"): every
 * rank holds every shape of the scene and moves it by the same velocities, so the poses agree;
 * each collides its own particles and its ghosts (whose planes and projections come out as
 * their owners' from the same x and x*) but counts only its own in the force on a shape, which
 * pbfcl_dist_shape_contacts sums over the ranks. */
#include "dist_internal.h"

#include "api_internal.h"
#include "pbf/pbf_colliders.h"

pbfcl_status dist_shapes_add(pbfcl_dist *d, const pbfcl_scene *scene)
{
    if (scene->collider_count == 0)
        return PBFCL_OK;
    return pbfcl_api_scene_add_colliders(scene, d->sim);
}

void dist_shapes_release(pbfcl_dist *d)
{
    pbfcl_cl_release_buffer(&d->none_buf);
    d->none_cap = 0;
}

/* Rows of words filled with word for count ghosts, scattered to the ghosts' slots of buf. */
static pbfcl_status clear_rows(pbfcl_dist *d, const pbfcl_sim_view *v, cl_mem buf, size_t elem,
                               cl_uint word, size_t count)
{
    size_t bytes = count * elem;
    if (!d->none_buf || bytes > d->none_cap) {
        pbfcl_cl_release_buffer(&d->none_buf);
        d->none_cap = bytes + bytes / 2 + 256;
        PBFCL_TRY(pbfcl_cl_buffer(v->cl, CL_MEM_READ_WRITE, d->none_cap, "the ghosts' shape rows",
                                  &d->none_buf));
    }
    PBFCL_CL_CHECK(clEnqueueFillBuffer(v->cl->queue, d->none_buf, &word, sizeof word, 0, bytes, 0,
                                       NULL, NULL));
    return pbfcl_particles_scatter_column(v->particles, d->none_buf, elem / 4, 0, elem / 4,
                                          d->ghost_slots_buf, count, buf);
}

pbfcl_status dist_shapes_clear_ghosts(pbfcl_dist *d, const cl_mem *bufs, const size_t *elem,
                                      int count)
{
    size_t g = d->ghost.count;
    if (g == 0 || count != 2)
        return PBFCL_OK;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    dist_part(d, PBFCL_DIST_PART_VALUES);
    PBFCL_TRY(clear_rows(d, &v, bufs[0], elem[0], 0xffffffffu, g)); /* contacts: -1, none */
    PBFCL_TRY(clear_rows(d, &v, bufs[1], elem[1], 0u, g));          /* inside: 0, none */
    PBFCL_CL_CHECK(clFinish(v.cl->queue)); /* the rows' buffer is filled anew next time */
    return PBFCL_OK;
}

pbfcl_status pbfcl_dist_shape_contacts(pbfcl_dist *d, int id, float force[3], unsigned *contacts,
                                       unsigned *inside)
{
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    float f[3] = {0, 0, 0};
    unsigned c = 0, in = 0;
    pbfcl_status st = pbfcl_colliders_read(pbfcl_pbf_colliders(d->sim), v.cl, id, f, &c, &in);
    int failed = st != PBFCL_OK, any = 0; /* the same id on every rank: the same verdict */
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, d->comm);
    if (any)
        return st != PBFCL_OK ? st : PBFCL_ERR_BAD_ARGUMENT;
    double mine[5] = {f[0], f[1], f[2], c, in}, sum[5];
    MPI_Allreduce(mine, sum, 5, MPI_DOUBLE, MPI_SUM, d->comm);
    for (int k = 0; force && k < 3; k++)
        force[k] = (float)sum[k];
    if (contacts)
        *contacts = (unsigned)sum[3];
    if (inside)
        *inside = (unsigned)sum[4];
    return PBFCL_OK;
}
