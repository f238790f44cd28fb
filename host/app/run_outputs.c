/* The output files of `pbfcl run` (run_outputs.h): checks before the run, creation once it
 * has started, frames with their collection, statistics rows and checkpoints. */
#include "run_outputs.h"
#include "atomic_file.h"
#include "checkpoint.h"
#include "run_lineage.h"
#include "run_paths.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Calls fn on every frame file (and the collection) of dir; returns how many there are. */
static size_t for_each_frame(const char *dir,
                             void (*fn)(run_outputs *o, const char *name, long long step,
                                        pbfcl_export_format f),
                             run_outputs *o, char *first, size_t first_size)
{
    DIR *d = opendir(dir);
    size_t count = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        pbfcl_export_format f = PBFCL_FORMAT_PLY;
        long long step = run_frame_step(e->d_name, &f);
        if (step < 0 && strcmp(e->d_name, PBFCL_PVD_NAME) != 0)
            continue;
        if (count++ == 0 && first)
            snprintf(first, first_size, "%s", e->d_name);
        if (fn)
            fn(o, e->d_name, step, f);
    }
    closedir(d);
    return count;
}

static pbfcl_status check_checkpoint_path(const run_outputs *o)
{
    return run_outputs_check_checkpoint(o->checkpoint_path, o->force);
}

pbfcl_status run_outputs_check_checkpoint(const char *path, bool force)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        char magic[8] = {0};
        FILE *f = S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
        bool is_checkpoint =
            f && fread(magic, 1, 8, f) == 8 && memcmp(magic, PBFCL_CHECKPOINT_MAGIC, 8) == 0;
        if (f)
            fclose(f);
        if (!S_ISREG(st.st_mode) || (!is_checkpoint && !force)) {
            pbfcl_errorf("--checkpoint '%s' exists and is not a pbfcl checkpoint; give another "
                         "file name%s",
                         path, S_ISREG(st.st_mode) ? " or --force to replace it" : "");
            return PBFCL_ERR_IO;
        }
        bool read_only = !(st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) || access(path, W_OK);
        if (read_only && !force) {
            pbfcl_errorf("--checkpoint '%s' exists and is read-only; give another file name, "
                         "make it writable, or --force to replace it",
                         path);
            return PBFCL_ERR_IO;
        }
    }
    pbfcl_atomic_file probe; /* can a file be created beside it? */
    PBFCL_TRY(pbfcl_atomic_open(&probe, path, "checkpoint"));
    pbfcl_atomic_abort(&probe);
    return PBFCL_OK;
}

/* The first of the motion files (bodies.csv, shapes.csv) that dir holds, or NULL. */
static const char *held_csv(const char *dir)
{
    static const char *const names[2] = {PBFCL_BODY_CSV_NAME, PBFCL_SHAPE_CSV_NAME};
    for (int i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (access(path, F_OK) == 0)
            return names[i];
    }
    return NULL;
}

/* A resumed run's export folder: frames (or bodies.csv, shapes.csv) there must be of the run that
 * wrote the checkpoint, or --force; then those after the checkpoint's step are replaced. */
static pbfcl_status check_resume_folder(const run_outputs *o, size_t frames, const char *first)
{
    const char *csv = held_csv(o->export_dir);
    bool held = frames > 0 || csv;
    if (!held || o->force || run_lineage_lists(o->export_dir, o->resume_path))
        return PBFCL_OK;
    pbfcl_errorf("export directory '%s' holds %s of a run other than the one that wrote "
                 "checkpoint '%s'; give an empty or new directory, or --force to replace the "
                 "frames after the checkpoint's step %lld",
                 o->export_dir, frames > 0 ? first : csv, o->resume_path, o->resume_step);
    pbfcl_export_dir_undo();
    return PBFCL_ERR_IO;
}

pbfcl_status run_outputs_check(run_outputs *o)
{
    run_paths paths = {o->scene_path, o->resume_path, o->stats_path, o->checkpoint_path,
                       o->export_dir};
    PBFCL_TRY(run_paths_check(&paths));
    if (o->stats_path)
        PBFCL_TRY(pbfcl_stats_csv_check(o->stats_path, o->force));
    if (o->checkpoint_path)
        PBFCL_TRY(check_checkpoint_path(o));
    if (!o->export_dir)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_export_dir_prepare(o->export_dir));
    char first[256] = "";
    size_t count = for_each_frame(o->export_dir, NULL, o, first, sizeof first);
    if (o->resume_step >= 0)
        return check_resume_folder(o, count, first);
    if (count > 0 && !o->force) {
        pbfcl_errorf("export directory '%s' already holds %zu frame file%s of another run (%s); "
                     "give an empty or new directory, or --force to replace them",
                     o->export_dir, count, count == 1 ? "" : "s", first);
        pbfcl_export_dir_undo();
        return PBFCL_ERR_IO;
    }
    const char *held = held_csv(o->export_dir);
    if (!o->force && held) {
        pbfcl_errorf("export directory '%s' already holds %s of another run; give an empty or "
                     "new directory, or --force to replace it",
                     o->export_dir, held);
        pbfcl_export_dir_undo();
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

/* Removes a frame file that the run replaces: with --force every one of another run; when
 * resuming, those after the checkpoint's step (the interrupted run's, which run_outputs_check
 * made sure of, or any with --force). */
static void remove_replaced(run_outputs *o, const char *name, long long step, pbfcl_export_format f)
{
    (void)f;
    bool replace = o->resume_step < 0 ? o->force : step > o->resume_step;
    if (!replace || (step < 0 && o->resume_step >= 0))
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", o->export_dir, name);
    remove(path);
}

/* Adds the kept frames of the resumed run (steps up to the checkpoint's) to the collection. */
static void collect_kept(run_outputs *o, const char *name, long long step, pbfcl_export_format f)
{
    if (step < 0 || f != o->format || f != PBFCL_FORMAT_VTK || step > o->resume_step)
        return;
    if (o->pvd_count == o->pvd_cap) {
        size_t cap = o->pvd_cap ? 2 * o->pvd_cap : 64;
        pbfcl_pvd_entry *p = realloc(o->pvd, cap * sizeof *p);
        if (!p)
            return;
        o->pvd = p;
        o->pvd_cap = cap;
    }
    pbfcl_pvd_entry *e = &o->pvd[o->pvd_count++];
    snprintf(e->file, sizeof e->file, "%s", name); /* a frame's .vtu or a mesh's .vtp */
    e->time = (double)step; /* times in steps until run_outputs_start multiplies by dt */
}

static int by_time(const void *a, const void *b)
{
    const pbfcl_pvd_entry *p = a, *q = b;
    if (p->time != q->time)
        return (p->time > q->time) - (p->time < q->time);
    return strcmp(p->file, q->file); /* the frame (part 0) before its mesh (part 1) */
}

/* Reads the phases and the body count, and opens bodies.csv if there are bodies. */
static pbfcl_status start_bodies(run_outputs *o, pbfcl_solver *solver)
{
    PBFCL_TRY(pbfcl_solver_get_phases(solver, o->phases, o->n));
    PBFCL_TRY(pbfcl_solver_body_count(solver, &o->bodies));
    if (o->bodies == 0)
        return PBFCL_OK;
    o->motion = calloc((size_t)o->bodies, sizeof *o->motion);
    if (!o->motion)
        return PBFCL_ERR_OUT_OF_MEMORY;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", o->export_dir, PBFCL_BODY_CSV_NAME);
    if (o->resume_step >= 0) /* the rows up to the checkpoint's step stay */
        return pbfcl_body_csv_resume(&o->body_csv, path, o->resume_step);
    return pbfcl_body_csv_open(&o->body_csv, path, o->force);
}

/* Writes shape i's surface, in its own frame, to DIR/shape_NN.obj. */
static pbfcl_status write_shape_obj(run_outputs *o, pbfcl_solver *solver, int i)
{
    int id = o->shape_ids[i];
    pbfcl_shape_info info;
    size_t nv = 0, nt = 0;
    PBFCL_TRY(pbfcl_shape_get_info(solver, id, &info));
    PBFCL_TRY(pbfcl_shape_get_surface(solver, id, 32, NULL, &nv, NULL, &nt));
    float *v = malloc((3 * nv + 1) * sizeof *v);
    unsigned *t = malloc((3 * nt + 1) * sizeof *t);
    pbfcl_status st =
        v && t ? pbfcl_shape_get_surface(solver, id, 32, v, &nv, t, &nt) : PBFCL_ERR_OUT_OF_MEMORY;
    char name[64], path[4200], comment[256];
    snprintf(name, sizeof name, PBFCL_SHAPE_OBJ_FORMAT, i);
    snprintf(path, sizeof path, "%s/%s", o->export_dir, name);
    snprintf(comment, sizeof comment,
             "%s, a %s, in its own frame: shapes.csv's rows of shape %d place it (rotation, "
             "then position)",
             info.name, pbfcl_shape_type_name((int)info.type), i);
    if (st == PBFCL_OK)
        st = pbfcl_obj_write(path, v, nv, t, nt, comment, o->z_up);
    free(v);
    free(t);
    return st;
}

/* Reads the collision shapes (method pbf only) and, if there are any, writes their surfaces
 * and opens shapes.csv. */
static pbfcl_status start_shapes(run_outputs *o, pbfcl_solver *solver)
{
    pbfcl_solver_params p;
    PBFCL_TRY(pbfcl_solver_get_params(solver, NULL, &p));
    if (p.method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_shape_count(solver, &o->shapes));
    if (o->shapes == 0)
        return PBFCL_OK;
    o->shape_ids = calloc((size_t)o->shapes, sizeof *o->shape_ids);
    o->shape_motion = calloc((size_t)o->shapes, sizeof *o->shape_motion);
    if (!o->shape_ids || !o->shape_motion)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < o->shapes; i++) {
        PBFCL_TRY(pbfcl_shape_id(solver, i, &o->shape_ids[i]));
        PBFCL_TRY(write_shape_obj(o, solver, i));
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", o->export_dir, PBFCL_SHAPE_CSV_NAME);
    if (o->resume_step >= 0)
        return pbfcl_shape_csv_resume(&o->shape_csv, path, o->resume_step);
    return pbfcl_shape_csv_open(&o->shape_csv, path, o->force);
}

static bool is_named(const char *name, const void *base)
{
    return !strcmp(name, base);
}

static bool is_export_name(const char *name, const void *ctx)
{
    (void)ctx;
    return run_is_export_name(name);
}

/* Removes the temporary files that a killed run left beside the files this run writes. */
static void remove_stale(const run_outputs *o)
{
    if (o->checkpoint_path) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", o->checkpoint_path);
        char *slash = strrchr(dir, '/');
        const char *base = slash ? o->checkpoint_path + (slash - dir) + 1 : o->checkpoint_path;
        if (slash)
            slash[slash == dir ? 1 : 0] = '\0';
        pbfcl_atomic_remove_stale(slash ? dir : ".", is_named, base);
    }
    if (o->export_dir)
        pbfcl_atomic_remove_stale(o->export_dir, is_export_name, NULL);
}

pbfcl_status run_outputs_start(run_outputs *o, pbfcl_solver *solver, size_t n, size_t capacity,
                               double dt)
{
    o->n = n;
    o->next_id = (unsigned)n;
    if (capacity < n)
        capacity = n;
    o->ids = malloc((capacity ? capacity : 1) * sizeof *o->ids); /* checkpoints keep them */
    if (!o->ids)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) /* frames list the particles in the caller's order */
        o->ids[i] = (unsigned)i;
    if (o->resume_ids) { /* the ids where the checkpoint left them */
        memcpy(o->ids, o->resume_ids, n * sizeof *o->ids);
        o->next_id = o->resume_next_id;
    }
    if (o->export_dir) {
        o->pos = malloc((capacity ? capacity : 1) * 3 * sizeof *o->pos);
        o->vel = malloc((capacity ? capacity : 1) * 3 * sizeof *o->vel);
        o->density = malloc((capacity ? capacity : 1) * sizeof *o->density);
        o->phases = malloc((capacity ? capacity : 1) * sizeof *o->phases);
        if (!o->pos || !o->vel || !o->density || !o->phases) {
            pbfcl_errorf("out of host memory for the export buffers of %zu particles", n);
            return PBFCL_ERR_OUT_OF_MEMORY;
        }
        for_each_frame(o->export_dir, remove_replaced, o, NULL, 0);
        if (o->resume_step >= 0)
            for_each_frame(o->export_dir, collect_kept, o, NULL, 0);
        for (size_t i = 0; i < o->pvd_count; i++)
            o->pvd[i].time *= dt;
        if (o->pvd_count > 1)
            qsort(o->pvd, o->pvd_count, sizeof *o->pvd, by_time);
        if (o->resume_step < 0) /* a new run: its own list of checkpoints */
            run_lineage_reset(o->export_dir);
        PBFCL_TRY(start_bodies(o, solver));
        PBFCL_TRY(pbfcl_solver_mesh_read(&o->mesh, solver, n));
        PBFCL_TRY(start_shapes(o, solver));
    }
    remove_stale(o);
    if (o->stats_path)
        PBFCL_TRY(pbfcl_stats_csv_open(&o->csv, o->stats_path, o->force));
    return PBFCL_OK;
}

static pbfcl_status add_to_collection(run_outputs *o, const char *file, double time)
{
    if (o->pvd_count == o->pvd_cap) {
        size_t cap = o->pvd_cap ? 2 * o->pvd_cap : 64;
        pbfcl_pvd_entry *p = realloc(o->pvd, cap * sizeof *p);
        if (!p)
            return PBFCL_ERR_OUT_OF_MEMORY;
        o->pvd = p;
        o->pvd_cap = cap;
    }
    pbfcl_pvd_entry *e = &o->pvd[o->pvd_count++];
    snprintf(e->file, sizeof e->file, "%s", file);
    e->time = time;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", o->export_dir, PBFCL_PVD_NAME);
    return pbfcl_pvd_write(path, o->pvd, o->pvd_count);
}

void run_outputs_flow(run_outputs *o, const size_t *removed, size_t drained, size_t added)
{
    size_t kept = 0, r = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (r < drained && removed[r] == i) {
            r++;
            continue;
        }
        o->ids[kept++] = o->ids[i];
    }
    for (size_t k = 0; k < added; k++)
        o->ids[kept++] = o->next_id++;
    o->n = kept;
    o->mesh_stale = o->mesh_stale || drained > 0 || added > 0;
}

/* The file's name without its folder. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The cloth and ropes of the frame just read into the buffers, as DIR/mesh_NNNNN. */
static pbfcl_status write_mesh(run_outputs *o, pbfcl_solver *solver, long long step, double time)
{
    if (o->mesh_stale) { /* drains clear the triangles; the indices moved */
        PBFCL_TRY(pbfcl_solver_mesh_read(&o->mesh, solver, o->n));
        o->mesh_stale = false;
    }
    if (o->mesh.vert_count == 0)
        return PBFCL_OK;
    char path[4200];
    PBFCL_TRY(pbfcl_mesh_path(path, sizeof path, o->export_dir, step, o->format));
    pbfcl_mesh_frame f = {&o->mesh, o->pos, o->vel, o->ids, step, time, o->z_up};
    if (o->format == PBFCL_FORMAT_PLY)
        return pbfcl_mesh_ply_write(path, &f);
    PBFCL_TRY(pbfcl_mesh_vtp_write(path, &f));
    return add_to_collection(o, base_name(path), time);
}

/* A row per collision shape in shapes.csv: its pose and velocities now. */
static pbfcl_status write_shapes(run_outputs *o, pbfcl_solver *solver, long long step, double time)
{
    if (o->shapes == 0)
        return PBFCL_OK;
    for (int i = 0; i < o->shapes; i++) {
        pbfcl_shape_motion *m = &o->shape_motion[i];
        pbfcl_shape_info info;
        PBFCL_TRY(pbfcl_shape_get_info(solver, o->shape_ids[i], &info));
        PBFCL_TRY(pbfcl_shape_get_pose(solver, o->shape_ids[i], m->pos, m->quat));
        m->type = (int)info.type;
        memcpy(m->vel, info.velocity, sizeof m->vel);
        memcpy(m->omega, info.angular_velocity, sizeof m->omega);
    }
    return pbfcl_shape_csv_frame(&o->shape_csv, step, time, o->shape_motion, o->shapes, o->z_up);
}

pbfcl_status run_outputs_frame(run_outputs *o, pbfcl_solver *solver, long long step, double time)
{
    if (!o->export_dir || step % o->every != 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_solver_get_phases(solver, o->phases, o->n)); /* drains and emitters move them */
    char path[4200];
    PBFCL_TRY(pbfcl_frame_path(path, sizeof path, o->export_dir, step, o->format));
    PBFCL_TRY(pbfcl_solver_get_positions(solver, o->pos, o->n));
    PBFCL_TRY(pbfcl_solver_get_velocities(solver, o->vel, o->n));
    PBFCL_TRY(pbfcl_solver_get_densities(solver, o->density, o->n));
    pbfcl_frame f = {o->n, o->pos, o->vel, o->density, o->ids, o->phases, step, time, o->z_up};
    if (o->format == PBFCL_FORMAT_PLY)
        PBFCL_TRY(pbfcl_ply_write(path, &f));
    else {
        PBFCL_TRY(pbfcl_vtu_write(path, &f));
        PBFCL_TRY(add_to_collection(o, base_name(path), time));
    }
    o->frames_written++;
    PBFCL_TRY(write_mesh(o, solver, step, time));
    PBFCL_TRY(write_shapes(o, solver, step, time));
    if (o->bodies == 0)
        return PBFCL_OK;
    float *com = malloc((size_t)o->bodies * 7 * sizeof *com), *quat = com + 3 * o->bodies;
    if (!com)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_status st = pbfcl_solver_get_bodies(solver, com, quat, o->bodies);
    for (int b = 0; st == PBFCL_OK && b < o->bodies; b++) {
        memcpy(o->motion[b].pos, com + 3 * b, sizeof o->motion[b].pos);
        memcpy(o->motion[b].quat, quat + 4 * b, sizeof o->motion[b].quat);
    }
    free(com);
    PBFCL_TRY(st);
    pbfcl_body_velocities(o->pos, o->vel, o->phases, o->n, o->bodies, o->motion);
    return pbfcl_body_csv_frame(&o->body_csv, step, time, o->motion, o->bodies, o->z_up);
}

pbfcl_status run_outputs_stats(run_outputs *o, long long step, double time, const pbfcl_stats *s)
{
    return o->stats_path ? pbfcl_stats_csv_row(&o->csv, step, time, s) : PBFCL_OK;
}

pbfcl_status run_outputs_checkpoint(run_outputs *o, pbfcl_solver *solver, long long step,
                                    double time, bool final)
{
    if (!o->checkpoint_path)
        return PBFCL_OK;
    bool due = final || (o->checkpoint_every > 0 && step % o->checkpoint_every == 0);
    if (!due)
        return PBFCL_OK;
    pbfcl_checkpoint_run run = {o->setup, o->ids, o->next_id};
    PBFCL_TRY(pbfcl_checkpoint_write(o->checkpoint_path, solver, &run, o->scene_name, step, time));
    return o->export_dir ? run_lineage_add(o->export_dir, o->checkpoint_path) : PBFCL_OK;
}

pbfcl_status run_outputs_finish(run_outputs *o, bool started)
{
    pbfcl_status st = pbfcl_stats_csv_close(&o->csv, 0);
    pbfcl_status sb = pbfcl_body_csv_close(&o->body_csv);
    pbfcl_status ss = pbfcl_shape_csv_close(&o->shape_csv);
    st = st != PBFCL_OK ? st : sb != PBFCL_OK ? sb : ss;
    pbfcl_solver_mesh_free(&o->mesh);
    free(o->shape_ids);
    free(o->shape_motion);
    o->shape_ids = NULL;
    o->shape_motion = NULL;
    if (!started && o->export_dir)
        pbfcl_export_dir_undo();
    free(o->pos);
    free(o->vel);
    free(o->density);
    free(o->ids);
    free(o->phases);
    free(o->motion);
    free(o->pvd);
    o->pos = o->vel = o->density = NULL;
    o->ids = NULL;
    o->phases = NULL;
    o->motion = NULL;
    o->pvd = NULL;
    return st;
}
