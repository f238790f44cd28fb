/* The files of `pbfcl run` compared before the run starts (run_paths.h): each path resolved
 * (links followed, "." and ".." removed) as far as it exists, then compared by device and
 * inode, or by the resolved name where it does not exist yet. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "run_paths.h"
#include "body_csv.h"
#include "run_outputs.h"

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
    if (sscanf(name, "frame_%lld.%3s%n", &step, ext, &used) != 2 || name[used] != '\0' || step < 0)
        return -1;
    if (!strcmp(ext, "ply"))
        *format = PBFCL_FORMAT_PLY;
    else if (!strcmp(ext, "vtu"))
        *format = PBFCL_FORMAT_VTK;
    else
        return -1;
    return step;
}

bool run_is_export_name(const char *name)
{
    pbfcl_export_format f;
    return run_frame_step(name, &f) >= 0 || !strcmp(name, PBFCL_PVD_NAME) ||
           !strcmp(name, PBFCL_BODY_CSV_NAME) || !strcmp(name, PBFCL_LINEAGE_NAME);
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

/* One path of the run, resolved. */
typedef struct entry {
    const char *option, *path;
    bool input, exists;
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
static pbfcl_status refuse_same(const entry *a, const entry *b)
{
    if (b->input)
        pbfcl_errorf("%s '%s' is the %s (%s '%s'); give the output another file name", a->option,
                     a->path,
                     strcmp(b->option, "--scene") ? "checkpoint being resumed" : "scene file",
                     b->option, b->path);
    else
        pbfcl_errorf("%s '%s' and %s '%s' are the same file; give each output its own name",
                     a->option, a->path, b->option, b->path);
    return PBFCL_ERR_BAD_ARGUMENT;
}

/* Refuses e if it lies in the export folder under a name the export writes. */
static pbfcl_status check_in_export(const entry *e, const entry *dir)
{
    const char *slash = strrchr(e->resolved, '/');
    size_t parent = slash == e->resolved ? 1 : (size_t)(slash - e->resolved);
    if (strlen(dir->resolved) != parent || strncmp(e->resolved, dir->resolved, parent) != 0 ||
        !run_is_export_name(slash + 1))
        return PBFCL_OK;
    pbfcl_errorf("%s '%s' is a file that --export '%s' writes (frame_NNNNN.ply|vtu, %s, %s); "
                 "give a name outside that folder or another name",
                 e->option, e->path, dir->path, PBFCL_PVD_NAME, PBFCL_BODY_CSV_NAME);
    return PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status run_paths_check(const run_paths *p)
{
    entry e[5] = {{.option = "--stats", .path = p->stats},
                  {.option = "--checkpoint", .path = p->checkpoint},
                  {.option = "--export", .path = p->dir},
                  {.option = "--scene", .path = p->scene, .input = true},
                  {.option = "--resume", .path = p->resume, .input = true}};
    entry *dir = &e[2];
    for (int i = 0; i < 5; i++)
        if (e[i].path) {
            e[i].exists = stat(e[i].path, &e[i].st) == 0;
            resolve(e[i].path, e[i].resolved);
        }
    for (int i = 0; i < 5; i++) {
        if (!e[i].path || e[i].input)
            continue;
        for (int j = i + 1; j < 5; j++) {
            bool continues = i == 1 && j == 4; /* --checkpoint replacing the one resumed */
            if (e[j].path && !continues && same_file(&e[i], &e[j]))
                return refuse_same(&e[i], &e[j]);
        }
    }
    for (int i = 0; dir->path && i < 5; i++)
        if (e[i].path && &e[i] != dir)
            PBFCL_TRY(check_in_export(&e[i], dir));
    return PBFCL_OK;
}
