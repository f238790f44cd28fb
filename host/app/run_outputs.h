/* The files of `pbfcl run`: export frames (PLY or VTK with a .pvd collection), the statistics
 * CSV and checkpoints. Everything is checked before the device is opened; files are created
 * only once the run has started; no existing file is replaced without --force; a run that
 * fails before its first step leaves no directory it created. */
#ifndef PBFCL_RUN_OUTPUTS_H
#define PBFCL_RUN_OUTPUTS_H

#include "body_csv.h"
#include "export_mesh.h"
#include "export_vtk.h"
#include "pbfcl.h"
#include "shape_csv.h"
#include "solver_mesh.h"
#include "stats_csv.h"

/* The name of the VTK collection in the export directory. */
#define PBFCL_PVD_NAME "frames.pvd"

/* What the options ask for, and the open state. */
typedef struct run_outputs {
    const char *export_dir; /* NULL: no frames */
    pbfcl_export_format format;
    bool z_up;
    long long every;
    bool force;                     /* replace existing frames / statistics / other files */
    const char *stats_path;         /* NULL: no statistics */
    const char *checkpoint_path;    /* NULL: no checkpoints */
    long long checkpoint_every;     /* 0: only at the end (and when stopped) */
    const char *scene_path;         /* the scene file (never to be overwritten), or NULL */
    const char *resume_path;        /* the checkpoint resumed, or NULL */
    const char *scene_name;         /* the scene's name, for the checkpoints */
    long long resume_step;          /* the checkpoint's step when resuming, else -1 */
    const unsigned *resume_ids;     /* when resuming: the checkpoint's frame ids, else NULL */
    unsigned resume_next_id;        /* when resuming: the checkpoint's next frame id */
    const pbfcl_scene_setup *setup; /* the scene (with its emitters), for the checkpoints */

    pbfcl_stats_csv csv;
    pbfcl_pvd_entry *pvd;
    size_t pvd_count, pvd_cap;
    float *pos, *vel, *density;
    unsigned *ids;             /* the persistent id of each particle, by the caller's index */
    unsigned next_id;          /* the id of the next emitted particle (never reused) */
    int *phases;               /* the particles' phases (fixed during a run) */
    int bodies;                /* the body count; > 0: bodies.csv beside the frames */
    pbfcl_body_motion *motion; /* per body */
    pbfcl_body_csv body_csv;
    pbfcl_solver_mesh mesh;           /* cloth and ropes: DIR/mesh_NNNNN.ply|vtp per frame */
    bool mesh_stale;                  /* particles came or went since the mesh was read */
    int shapes;                       /* colliders at the start; > 0: shapes.csv, shape_NN.obj */
    int *shape_ids;                   /* their ids, by index */
    pbfcl_shape_motion *shape_motion; /* per shape */
    pbfcl_shape_csv shape_csv;
    size_t n;
    long long frames_written;
} run_outputs;

/* Checks every output before any work: no two outputs, and no output and input, are the same
 * file (run_paths.h); the export directory (created if missing, refused if it holds frames
 * of another run unless force; when resuming, of a run other than the checkpoint's, see
 * run_lineage.h), the statistics file (its directory; an existing file only with force) and
 * the checkpoint file (an existing file only if it is a writable checkpoint, or with force).
 * Says what is wrong and how to fix it. */
pbfcl_status run_outputs_check(run_outputs *o);

/* Starts the outputs once the simulation exists (n particles): allocates the export buffers,
 * reads the phases, the triangles and ropes, removes the frames being replaced and the
 * temporary files a killed run left beside the checkpoint and the frames, creates the
 * statistics file and, for a solver with bodies, the body motion file (DIR/bodies.csv), for one
 * with collision shapes their motion file (DIR/shapes.csv) and surfaces (DIR/shape_NN.obj);
 * when resuming, the rows up to the checkpoint's step are kept and the rest of the interrupted
 * run's are cut off. */
pbfcl_status run_outputs_start(run_outputs *o, pbfcl_solver *solver, size_t n, size_t capacity,
                               double dt);

/* Follows a step's drains and emitters: the particles at the ascending indices removed[0 ..
 * drained - 1] are gone (the rest close up), added new ones (new ids) are at the end. */
void run_outputs_flow(run_outputs *o, const size_t *removed, size_t drained, size_t added);

/* Writes the frame of step (time) if the export asks for it: the particles in the caller's
 * order with their persistent ids (k for the k-th particle of the fill, then one more for each
 * emitted particle), the cloth and ropes as mesh_NNNNN (their vertices the particles of the
 * same ids and positions), a row per body in bodies.csv and per shape in shapes.csv. */
pbfcl_status run_outputs_frame(run_outputs *o, pbfcl_solver *solver, long long step, double time);

/* Appends the statistics row of step. */
pbfcl_status run_outputs_stats(run_outputs *o, long long step, double time, const pbfcl_stats *s);

/* Writes a checkpoint after step if one is due (every K steps), or always if final, and
 * adds it to the export folder's list of checkpoints. */
pbfcl_status run_outputs_checkpoint(run_outputs *o, pbfcl_solver *solver, long long step,
                                    double time, bool final);

/* Closes the statistics file and frees the buffers; started: whether the run got to its first
 * step (if not, the directories the check created are removed again). */
pbfcl_status run_outputs_finish(run_outputs *o, bool started);

/* Checks --checkpoint's path: a file there must be a checkpoint (or force) and writable (or
 * force), and a file can be made beside it; says what to change. */
pbfcl_status run_outputs_check_checkpoint(const char *path, bool force);

#endif
