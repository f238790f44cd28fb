/* The common particle core's own state, shared by the files of sim/ (sim.c: creation, the
 * frame loop and access; sim_buffers.c: the per-particle buffer tables; sim_state.c:
 * checkpoints; attachments.c: the registry of the attachments, the bodies and the paths;
 * constants.c: the constants every method's kernels read). No file outside sim/
 * includes it: a method works through solver_method.h. */
#ifndef PBFCL_SIM_INTERNAL_H
#define PBFCL_SIM_INTERNAL_H

#include "bodies/kinematic.h"
#include "bodies/shape_match.h"
#include "sim/particles.h"
#include "sim/sim.h"
#include "sim/solver_method.h"

/* The most attachments the registry (attachments.c) may hold. */
#define SIM_MAX_ATTACHMENTS 8

struct pbfcl_sim {
    const pbfcl_solver_method *method; /* the method that moves the particles */
    pbfcl_cl *cl;
    pbfcl_scene scene;
    size_t n;        /* active particles */
    size_t capacity; /* particles the buffers hold */
    pbfcl_constants params;
    pbfcl_grid grid;
    pbfcl_particles particles; /* stats, bounds, copy_positions (cl/sim/particles.cl) */
    size_t wg;
    cl_float4 gravity, push_origin, push_dir, push; /* the forces' arguments; push.w = radius */
    cl_mem params_buf;                              /* pbfcl_constants, __constant */
    cl_mem pos_buf, pred_buf, vel_buf;              /* float4 per particle */
    cl_mem pos_tmp_buf, pred_tmp_buf, vel_tmp_buf;  /* reorder targets */
    cl_mem density_buf;                             /* float */
    void *method_state;                             /* what the method's create made, or NULL */
    cl_mem id_buf, id_tmp_buf;       /* uint: each particle's persistent id, carried by reorder */
    cl_mem phase_buf, phase_tmp_buf; /* uint: PBFCL_SIM_PHASE_FLUID or body + 1 */
    cl_mem inv_mass_buf, inv_mass_tmp_buf; /* float: m_fluid / m, the relative inverse mass */
    size_t statics; /* particles of inverse mass 0 (obstacles'; phase PBFCL_SIM_PHASE_STATIC) */
    size_t solid_groups;         /* particles of solid phases without a body (cloth, ropes) */
    unsigned char *self_collide; /* per solid group: its phase has the self-collide flag */
    size_t self_collide_groups;  /* entries of self_collide */
    /* the state of sim_attachments[k] (attachments.c: the bodies, shape_match.h; the paths,
     * kinematic.h), NULL until its first use */
    void *attached[SIM_MAX_ATTACHMENTS];
    cl_mem accel_max_buf; /* sph: 1 uint, max |a| of the last frame's steps (float bits) */
    /* the id-to-slot map (particles.slot_buf, particles.h) holds the particles' order now: set
     * by the sort's reorder_solids (which writes it) and body_slots, cleared by every other
     * reorder, change of ids (new, appended, renumbered or loaded) or of bodies, and at the
     * start of a step; body_slots and the next substep's body_predict then launch no
     * particles_slots (15.9 us each with 1.128M particles on an H200) */
    int slots_current;
    int substeps;           /* substeps of the last frame (params.dt = dt / substeps) */
    int substep;            /* the substep running now (0 .. substeps - 1) */
    float wall_scale;       /* pbfcl_pbf_wall_scale of params */
    pbfcl_sim_sync_fn sync; /* the layer that splits the simulation over devices, or NULL */
    void *sync_ctx;
    bool sync_pending;          /* an exchange in flight (pbfcl_sim_sync_started) */
    pbfcl_sim_lists sync_lists; /* its lists */
    cl_mem records_buf;         /* pbfcl_sim_records_append: the appended records, packed */
    size_t records_cap;         /* bytes of records_buf */
};

/* The common per-particle buffers (sim_buffers.c) and the method's (its table), each row
 * once: allocation, the byte estimate, creation and appending, the reorder, the checkpoint's
 * sections and destroy all follow from them. */
extern const pbfcl_particle_buffer sim_buffers[];
extern const size_t sim_buffer_count;

/* The handle of row d of a table whose handles live in base (the simulation or the method's
 * state), or of its reorder target (tmp). */
cl_mem *sim_table_buf(void *base, const pbfcl_particle_buffer *d, bool tmp);

/* Whether the simulation allocates common row d (x* only for a method that predicts). */
bool sim_buffer_used(const pbfcl_sim *sim, const pbfcl_particle_buffer *d);

/* Table t of method m's buffers (owners from sim, or NULL without one); false past the last. */
bool sim_method_table(const pbfcl_solver_method *m, pbfcl_sim *sim, int t, pbfcl_buffer_table *out);

/* Makes the common buffers and params_buf, accel_max_buf. */
pbfcl_status sim_buffers_alloc(pbfcl_sim *sim);

/* Releases the common buffers. */
void sim_buffers_release(pbfcl_sim *sim);

/* Per-particle bytes of the common and the method's buffers (reorder targets included). */
unsigned long long sim_buffers_bytes(const pbfcl_solver_method *m);

/* Gives particles first..first+n-1 their initial state in every per-particle buffer (common
 * and the method's): positions, velocities (NULL: zero), ids, the rest density, zeros. */
pbfcl_status sim_upload_particles(pbfcl_sim *sim, size_t first, size_t n, const float *positions,
                                  const float *velocities);

/* Enqueues the initial values of particles first..first+n-1 in every per-particle buffer as
 * sim_upload_particles with no positions or velocities, made on the device (fill_rows): no
 * upload. With keep_saved the saved rows' own buffers (the records' rows) are left as they
 * are, their reorder targets filled. */
pbfcl_status sim_fill_particles(pbfcl_sim *sim, size_t first, size_t n, bool keep_saved);

/* reorder: every per-particle buffer that carries state into sorted order; for a substep's
 * sort (sort), those that need it then, the solids' words in one launch. */
pbfcl_status sim_reorder(pbfcl_sim *sim, bool sort, pbfcl_profile *prof);

/* Whether the simulation has shape-matched bodies / bodies or static particles. */
bool sim_matches_shapes(const pbfcl_sim *sim);
cl_uint sim_has_bodies(const pbfcl_sim *sim);

/* Packs n xyz triples into float4 (x, y, z, 0); all zero if xyz is NULL. */
void sim_pack_float3(const float *xyz, size_t n, cl_float4 *out);

/* Blocking read of bytes of buf. */
pbfcl_status sim_read_plain(pbfcl_sim *sim, cl_mem buf, size_t bytes, void *out);

/* The grid over the box with cells of edge h. */
pbfcl_status sim_grid_params(const pbfcl_scene *s, const pbfcl_constants *p,
                             pbfcl_grid_params *out);

/* The attachments (bodies/attachment.h), one line each in sim_attachments[]. */
extern const pbfcl_attachment *const sim_attachments[];
extern const int sim_attachment_count;

/* The state of attachment a, or NULL if the simulation has none yet. */
void *sim_attached(const pbfcl_sim *sim, const pbfcl_attachment *a);

/* The state of attachment a in *state, made at its first use. */
pbfcl_status sim_attach(pbfcl_sim *sim, const pbfcl_attachment *a, void **state);

/* Every attachment's hook: destroy (each state then NULL), save its sections (in the
 * registry's order, those of one never made empty), load (making those the state holds), and
 * the renumbering of the ids after a removal. */
void sim_attachments_destroy(pbfcl_sim *sim);
pbfcl_status sim_attachments_save(pbfcl_sim *sim, pbfcl_state_put put, void *ctx);
pbfcl_status sim_attachments_load(pbfcl_sim *sim, pbfcl_state_get get, void *ctx);
pbfcl_status sim_attachments_remap_ids(pbfcl_sim *sim, const unsigned *new_id);

/* The bodies' and the paths' state (their attachments'), NULL until their first use. */
pbfcl_shape_match *sim_bodies(const pbfcl_sim *sim);
pbfcl_kinematic *sim_paths(const pbfcl_sim *sim);

#endif
