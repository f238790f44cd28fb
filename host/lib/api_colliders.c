/* The public API of the collision shapes (pbfcl.h, "colliders"): create, move, destroy, and
 * the contacts and force on a shape, over the core's set (colliders/colliders.h) that PBF
 * keeps (pbf/pbf_colliders.h). */
#include "api_internal.h"
#include "pbf/attach.h"
#include "pbf/pbf_colliders.h"
#include "sim/solver_method.h"

/* The shapes of a live solver handle running PBF; NULL (logged as func's) otherwise. */
static pbfcl_colliders *colliders_of(const char *func, const pbfcl_solver *s, pbfcl_cl **cl)
{
    pbfcl_sim *sim;
    const pbfcl_scene *scene;
    if (!pbfcl_api_solver_diffuse(func, s, &sim, &scene))
        return NULL;
    if (scene->solver.method != PBFCL_METHOD_PBF) {
        pbfcl_errorf("%s: shapes collide with the particles of method pbf only, and this solver "
                     "runs %s: set solver.method to pbf",
                     func, pbfcl_method_name(scene->solver.method));
        return NULL;
    }
    if (cl) {
        pbfcl_sim_view v;
        pbfcl_sim_view_get(sim, &v);
        *cl = v.cl;
    }
    return pbfcl_pbf_colliders(sim);
}

pbfcl_status pbfcl_shape_create(pbfcl_solver *s, const pbfcl_shape_desc *desc, int *id)
{
    pbfcl_colliders *c = colliders_of("pbfcl_shape_create", s, NULL);
    if (!c)
        return PBFCL_ERR_BAD_ARGUMENT;
    if (!desc || !id) {
        pbfcl_errorf("pbfcl_shape_create: desc and id must not be NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return pbfcl_colliders_add(c, desc, id);
}

pbfcl_status pbfcl_shape_set_motion(pbfcl_solver *s, int id, const float position[3],
                                    const float rotation[4], const float velocity[3],
                                    const float angular_velocity[3])
{
    pbfcl_colliders *c = colliders_of("pbfcl_shape_set_motion", s, NULL);
    if (!c)
        return PBFCL_ERR_BAD_ARGUMENT;
    return pbfcl_colliders_set_motion(c, id, position, rotation, velocity, angular_velocity);
}

pbfcl_status pbfcl_shape_get_pose(const pbfcl_solver *s, int id, float position[3],
                                  float rotation[4])
{
    pbfcl_colliders *c = colliders_of("pbfcl_shape_get_pose", s, NULL);
    if (!c)
        return PBFCL_ERR_BAD_ARGUMENT;
    return pbfcl_colliders_get_pose(c, id, position, rotation);
}

pbfcl_status pbfcl_shape_destroy(pbfcl_solver *s, int id)
{
    pbfcl_colliders *c = colliders_of("pbfcl_shape_destroy", s, NULL);
    if (!c)
        return PBFCL_ERR_BAD_ARGUMENT;
    PBFCL_TRY(pbfcl_colliders_remove(c, id));
    pbfcl_sim *sim;
    const pbfcl_scene *scene;
    pbfcl_api_solver_diffuse("pbfcl_shape_destroy", s, &sim, &scene);
    return pbfcl_pbf_attach_shape_removed(sim, id); /* its particles stay where they are, static */
}

pbfcl_status pbfcl_shape_count(const pbfcl_solver *s, int *count)
{
    pbfcl_colliders *c = colliders_of("pbfcl_shape_count", s, NULL);
    if (!c || !count)
        return PBFCL_ERR_BAD_ARGUMENT;
    *count = pbfcl_colliders_count(c);
    return PBFCL_OK;
}

pbfcl_status pbfcl_shape_contacts(pbfcl_solver *s, int id, float force[3], unsigned *contacts,
                                  unsigned *inside)
{
    pbfcl_cl *cl;
    pbfcl_colliders *c = colliders_of("pbfcl_shape_contacts", s, &cl);
    if (!c)
        return PBFCL_ERR_BAD_ARGUMENT;
    return pbfcl_colliders_read(c, cl, id, force, contacts, inside);
}
