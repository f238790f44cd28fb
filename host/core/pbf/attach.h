/* Attachments of particles (a cloth's, a rope's) to collision shapes and to bodies, as FleX's
 * users make them: a static particle attached to a shape at a point of the shape's frame follows
 * the shape's pose every substep (kinematic; stage attach_shapes of cl/pbf/attach.cl, at the
 * first iteration, once the shapes' table of the substep is up); a moving particle attached to a
 * body is held by a distance constraint (distance.h) to the body's particle nearest to the point
 * at rest, at the distance between them there, so that the body feels the cloth and the cloth
 * follows the body (two-way, through shape matching). Particles are named by persistent id. */
#ifndef PBFCL_PBF_ATTACH_H
#define PBFCL_PBF_ATTACH_H

#include "pbf/pbf.h"

/* What a particle is attached to (pbfcl.h's PBFCL_ATTACH_SHAPE and PBFCL_ATTACH_BODY). */
#define PBFCL_PBF_ATTACH_SHAPE 0
#define PBFCL_PBF_ATTACH_BODY 1

/* Replaces the attachments: attachment k holds particle id particle[k] (below the count, none
 * twice) to target[k] of kind[k] (a shape's id, or a body's index) at point point3[3k..] of its
 * frame (a shape's: its position and rotation; a body's: from its centre of mass, in its rest
 * orientation), with compliance[k] (m/N, finite, >= 0; a body's only; NULL: 0). count 0 removes
 * them. Refused, naming the attachment and the fix, the old ones kept: an unknown kind, shape or
 * body, a particle out of range or twice, a point or compliance not finite. Whether the
 * particle may take part (static for a shape, moving and of no body for a body) is the
 * caller's to check. */
pbfcl_status pbfcl_pbf_set_attachments(pbfcl_sim *sim, size_t count, const unsigned *particle,
                                       const int *kind, const int *target, const float *point3,
                                       const float *compliance);

/* The number of attachments. */
size_t pbfcl_pbf_attachment_count(pbfcl_sim *sim);

/* Copies them as set (any pointer may be NULL); anchor: a body attachment's body particle (a
 * shape's: the particle itself). */
pbfcl_status pbfcl_pbf_get_attachments(pbfcl_sim *sim, unsigned *particle, int *kind, int *target,
                                       float *point3, float *compliance, unsigned *anchor);

/* After a removal that gave each old id its new one (rank; UINT32_MAX: removed): the
 * attachments renumbered, those of a removed particle dropped. */
pbfcl_status pbfcl_pbf_attach_remap(pbfcl_sim *sim, const unsigned *rank);

/* After shape id was destroyed: its attachments dropped (their particles stay where they are,
 * static). */
pbfcl_status pbfcl_pbf_attach_shape_removed(pbfcl_sim *sim, int id);

/* Checkpoints: "attachments" (the count), then "attachment_particles", "attachment_targets"
 * (kind, target), "attachment_points" (point, compliance), "attachment_anchors" and
 * "attachment_lengths" (a body's: the anchor's distance from the point at rest); load after
 * the distance constraints, the bodies and the shapes. */
pbfcl_status pbfcl_pbf_attach_save(pbfcl_sim *sim, pbfcl_state_write_fn put, void *ctx);
pbfcl_status pbfcl_pbf_attach_load(pbfcl_sim *sim, pbfcl_state_read_fn get, void *ctx);

#endif
