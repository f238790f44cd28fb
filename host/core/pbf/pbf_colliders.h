/* The collision shapes of a PBF simulation (pbf/colliders.c, colliders/colliders.h). */
#ifndef PBFCL_PBF_COLLIDERS_H
#define PBFCL_PBF_COLLIDERS_H

#include "colliders/colliders.h"
#include "sim/sim.h"

/* The shapes of sim, which PBF moves (a simulation of another method has none: do not call). */
pbfcl_colliders *pbfcl_pbf_colliders(pbfcl_sim *sim);

#endif
