/* The files of `pbfcl run` compared before the run starts (run_paths.h): each path resolved
 * (links followed, "." and ".." removed) as far as it exists, then compared by device and
 * inode, or by the resolved name where it does not exist yet. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "run_paths.h"
#include "body_csv.h"
#include "run_outputs.h"
#include "shape_csv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

long long run_frame_step(const char *name, pbfcl_export_format *format)
{
    long long step;
    char ext[8];
    int used = 0;
    bool mesh = !strncmp(name, "mesh_", 5);
    const char *fmt = mesh ? "mesh_%lld.%3s%n" : "frame_%lld.%3s%n";
    if (sscanf(name, fmt, &step, ext, &used) != 2 || name[used] != '\0' || step < 0)
        return -1;
    if (!strcmp(ext, "ply"))
        *format = PBFCL_FORMAT_PLY;
    else if (!strcmp(ext, mesh ? "vtp" : "vtu"))
        *format = PBFCL_FORMAT_VTK;
    else
        return -1;
    return step;
}

bool run_is_export_name(const char *name)
{
    pbfcl_export_format f;
    return run_frame_step(name, &f) >= 0 || !strcmp(name, PBFCL_PVD_NAME) ||
           !strcmp(name, PBFCL_BODY_CSV_NAME) || !strcmp(name, PBFCL_SHAPE_CSV_NAME) ||
           pbfcl_is_shape_obj_name(name) || !strcmp(name, PBFCL_LINEAGE_NAME);
}

/* path resolved into out (PATH_MAX): realpath where it exists, else a link's target (a
 * link to a file not yet there) or its parent resolved the same way with its last name
 * appended ("." dropped, ".." going up); depth bounds a loop of links. */
static void resolve_at(const char *path, char *out, int depth)
{
    char buf[PATH_MAX], link[PATH_MAX];
    struct stat st;
    if (realpath(path, out))
        return;
    snprintf(buf, sizeof buf, "%s", path);
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    char *slash = strrchr(buf, '/');
    const char *base = slash ? slash + 1 : buf;
    ssize_t n = depth > 0 && lstat(buf, &st) == 0 && S_ISLNK(st.st_mode)
                    ? readlink(buf, link, sizeof link - 1)
                    : -1;
    if (n > 0) { /* a dangling link: where it points */
        link[n] = '\0';
        if (link[0] != '/' && slash)
            snprintf(buf + (slash - buf) + 1, sizeof buf - (size_t)(slash - buf) - 1, "%s", link);
        resolve_at(link[0] != '/' && slash ? buf : link, out, depth - 1);
        return;
    }
    if (slash == buf)
        resolve_at("/", out, depth);
    else {
        if (slash)
            *slash = '\0';
        resolve_at(slash ? buf : ".", out, depth);
    }
    char *last = strrchr(out, '/');
    if (!strcmp(base, "..") && last)
        last[last == out ? 1 : 0] = '\0';
    else if (base[0] != '\0' && strcmp(base, ".") != 0)
        snprintf(out + strlen(out), PATH_MAX - strlen(out), "%s%s", strcmp(out, "/") ? "/" : "",
                 base);
}

static void resolve(const char *path, char *out)
{
    resolve_at(path, out, 40);
}

/* One role's path, resolved. */
typedef struct entry {
    const path_role *role;
    bool exists;
    struct stat st;
    char resolved[PATH_MAX];
} entry;

static bool same_file(const entry *a, const entry *b)
{
    if (a->exists && b->exists)
        return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
    return !strcmp(a->resolved, b->resolved);
}

/* Says why a and b (a an output) may not be the same file. */
static pbfcl_status refuse_same(const path_role *a, const path_role *b)
{
    if (b->input)
        pbfcl_errorf("%s '%s' is the %s (%s '%s'); give the output another file name", a->option,
                     a->path, b->input, b->option, b->path);
    else
        pbfcl_errorf("%s '%s' and %s '%s' are the same file; give each output its own name",
                     a->option, a->path, b->option, b->path);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* Refuses e if it lies in the folder dir under a name the folder's files take. */
static pbfcl_status check_in_folder(const entry *e, const entry *dir, const path_folder *folder)
{
    const char *slash = strrchr(e->resolved, '/');
    size_t parent = slash == e->resolved ? 1 : (size_t)(slash - e->resolved);
    if (strlen(dir->resolved) != parent || strncmp(e->resolved, dir->resolved, parent) != 0 ||
        !folder->holds(slash + 1))
        return PBFCL_OK;
    pbfcl_errorf("%s '%s' is a file that %s '%s' writes (%s); give a name outside that folder "
                 "or another name",
                 e->role->option, e->role->path, dir->role->option, dir->role->path, folder->names);
    return PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status paths_check(const path_role *roles, int count, const path_folder *folder)
{
    entry e[8];
    if (count > 8)
        return PBFCL_ERR_BAD_ARGUMENT;
    for (int i = 0; i < count; i++) {
        e[i].role = &roles[i];
        e[i].exists = roles[i].path && stat(roles[i].path, &e[i].st) == 0;
        if (roles[i].path)
            resolve(roles[i].path, e[i].resolved);
    }
    for (int i = 0; i < count; i++) {
        const path_role *a = &roles[i];
        for (int j = 0; a->path && !a->input && j < count; j++) {
            const path_role *b = &roles[j];
            bool allowed = b->input && a->may_be && !strcmp(a->may_be, b->option);
            if (j != i && b->path && (b->input || j > i) && !allowed && same_file(&e[i], &e[j]))
                return refuse_same(a, b);
        }
    }
    int d = folder ? folder->role : -1;
    for (int i = 0; d >= 0 && roles[d].path && i < count; i++)
        if (roles[i].path && i != d)
            PBFCL_TRY(check_in_folder(&e[i], &e[d], folder));
    return PBFCL_OK;
}

static bool holds_export_name(const char *name)
{
    return run_is_export_name(name);
}

pbfcl_status run_paths_check(const run_paths *p)
{
    const path_role roles[] = {
        {"--stats", p->stats, NULL, NULL},
        {"--checkpoint", p->checkpoint, NULL, "--resume"}, /* continuing it */
        {"--export", p->dir, NULL, NULL},
        {"--scene", p->scene, "scene file", NULL},
        {"--resume", p->resume, "checkpoint being resumed", NULL},
    };
    const path_folder frames = {2, holds_export_name,
                                "frame_NNNNN.ply|vtu, mesh_NNNNN.ply|vtp, " PBFCL_PVD_NAME
                                ", " PBFCL_BODY_CSV_NAME ", " PBFCL_SHAPE_CSV_NAME
                                ", shape_NN.obj"};
    return paths_check(roles, 5, &frames);
}
