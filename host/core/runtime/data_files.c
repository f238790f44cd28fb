/* Finding and reading run-time data files (see data_files.h). */
#include "runtime/data_files.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA_PATH_MAX 1100

static bool dir_holds(const char *dir, const char *file)
{
    char probe[4 * DATA_PATH_MAX];
    int len = snprintf(probe, sizeof probe, "%s/%s", dir, file);
    return len > 0 && (size_t)len < sizeof probe && access(probe, R_OK) == 0;
}

/* The candidate folders in order; returns how many. */
static int candidates(const pbfcl_data_dir_spec *spec, const char *env, char tried[][DATA_PATH_MAX])
{
    int n = 0;
    if (env && *env) {
        snprintf(tried[n++], DATA_PATH_MAX, "%s", env);
        return n;
    }
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        snprintf(tried[n++], DATA_PATH_MAX, "%s/%s", exe, spec->subdir);
        snprintf(tried[n++], DATA_PATH_MAX, "%s/../share/pbfcl/%s", exe, spec->subdir);
    }
    snprintf(tried[n++], DATA_PATH_MAX, "./%s", spec->subdir);
    if (spec->source_dir && spec->source_dir[0])
        snprintf(tried[n++], DATA_PATH_MAX, "%s", spec->source_dir);
    return n;
}

pbfcl_status pbfcl_find_data_dir(const pbfcl_data_dir_spec *spec, char *dir, size_t size)
{
    char tried[4][DATA_PATH_MAX];
    const char *env = spec->env_value;
    int n = candidates(spec, env, tried);
    for (int i = 0; i < n; i++) {
        if (dir_holds(tried[i], spec->probe_file)) {
            snprintf(dir, size, "%s", tried[i]);
            return PBFCL_OK;
        }
    }
    pbfcl_msg m = {0};
    pbfcl_msg_addf(&m, "cannot find the %s directory (a folder holding %s); tried:\n", spec->what,
                   spec->probe_file);
    for (int i = 0; i < n; i++)
        pbfcl_msg_addf(&m, "  %s%s%s%s\n", tried[i], env && *env ? " (" : "",
                       env && *env ? spec->env_var : "", env && *env ? ")" : "");
    pbfcl_msg_addf(&m, "Set %s to the %s/ folder of the pbfcl source, build or install tree.",
                   spec->env_var, spec->subdir);
    pbfcl_msg_log(&m, PBFCL_LOG_ERROR);
    return PBFCL_ERR_KERNEL_FILE;
}

char *pbfcl_read_text_file(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)len + 1);
        if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    if (buf) {
        buf[len] = '\0';
        if (len_out)
            *len_out = (size_t)len;
    }
    return buf;
}
