/* An attachment: state a simulation carries beside its particles and names them in by id
 * (rigid and soft bodies, shape_match.h; obstacles on paths, kinematic.h), made at its first
 * use. The simulation names none of them where they all take part: it calls the hooks of
 * every attachment registered in sim_attachments[] (sim/attachments.c, one line each) at its
 * destroy, at a checkpoint's save and load, and when a removal renumbers the ids. */
#ifndef PBFCL_ATTACHMENT_H
#define PBFCL_ATTACHMENT_H

#include "runtime/clrt.h"

#include <stdbool.h>
#include <stddef.h>

/* What the simulation hands an attachment it makes. */
typedef struct pbfcl_attach_env {
    pbfcl_cl *cl;
    size_t capacity; /* particles' ids are below it */
    cl_mem slot_buf; /* the particles' id-to-slot map (sim/particles.h), borrowed; made only for
                      * an attachment that uses_slots, else NULL */
} pbfcl_attach_env;

typedef struct pbfcl_attachment {
    const char *name; /* e.g. "bodies" */
    bool uses_slots;  /* its kernels read the id-to-slot map */
    /* Makes its state in *state (its kernels; nothing attached yet); on failure destroy is
     * called with what was made. */
    pbfcl_status (*create)(const pbfcl_attach_env *env, void **state);
    /* Releases what create made; accepts NULL and a half-made state. */
    void (*destroy)(void *state);
    /* Saves its checkpoint sections through put; state NULL (never made) saves them empty,
     * so that every checkpoint holds every attachment's sections. */
    pbfcl_status (*save)(void *state, pbfcl_state_write_fn put, void *ctx);
    /* Whether the saved state holds any of it (the core then makes it before load). */
    pbfcl_status (*saved)(pbfcl_state_read_fn get, void *ctx, bool *any);
    /* Replaces its state by the saved one (empty if the saved state holds none). */
    pbfcl_status (*load)(void *state, pbfcl_state_read_fn get, void *ctx);
    /* After a removal: the particle with id k becomes new_id[k] (none of its own removed). */
    pbfcl_status (*remap_ids)(void *state, const unsigned *new_id);
} pbfcl_attachment;

#endif
