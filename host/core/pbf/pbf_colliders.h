/* The collision shapes of a PBF simulation (pbf/colliders.c, colliders/colliders.h). */
#ifndef PBFCL_PBF_COLLIDERS_H
#define PBFCL_PBF_COLLIDERS_H

#include "colliders/colliders.h"
#include "sim/sim.h"

/* The shapes of sim, which PBF moves (a simulation of another method has none: do not call). */
pbfcl_colliders *pbfcl_pbf_colliders(pbfcl_sim *sim);

/* The narrow phase of a substep (its contact planes, colliders_narrow), before its first
 * density projection: the neighbour search ran, so the particles' order and x* are the
 * substep's; then x* out of the planes (pbfcl_colliders_hold, as predict clamps
 * x* to the box's walls). Nothing without shapes. */
pbfcl_status pbfcl_pbf_colliders_narrow(pbfcl_sim *sim, pbfcl_profile *prof);

/* Saves / loads sim's shapes as sections of its state (colliders/colliders_state.h). */
pbfcl_status pbfcl_pbf_colliders_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx);
pbfcl_status pbfcl_pbf_colliders_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx);

#endif
