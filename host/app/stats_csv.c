/* The `pbfcl run --stats` CSV: one header line, one row per step with the columns of
 * PBFCL_STATS_CSV_HEADER, written as a row file (row_file.h), so the file only ever holds
 * whole rows. */
#include "stats_csv.h"

#include <errno.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

pbfcl_status pbfcl_stats_csv_check(const char *path, bool replace)
{
    struct stat st;
    if (path[0] == '\0') {
        pbfcl_errorf("the statistics file name is empty");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            pbfcl_errorf("statistics file '%s' exists and is not a regular file; give a new "
                         "file name",
                         path);
            return PBFCL_ERR_IO;
        }
        if (!replace) {
            pbfcl_errorf("statistics file '%s' already exists; give a new name, remove it, or "
                         "pass --force to replace it",
                         path);
            return PBFCL_ERR_IO;
        }
        if (access(path, W_OK) != 0) {
            pbfcl_errorf("cannot replace statistics file '%s': %s", path, strerror(errno));
            return PBFCL_ERR_IO;
        }
        return PBFCL_OK;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    const char *d = dirname(dir);
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode) || access(d, W_OK | X_OK) != 0) {
        pbfcl_errorf("cannot create statistics file '%s': directory '%s': %s", path, d,
                     errno ? strerror(errno) : "not a directory");
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

static const pbfcl_row_file_kind stats_kind = {
    "statistics file", "rows", PBFCL_STATS_CSV_HEADER "\n",
    "; give a new name, remove it, or pass --force to replace it"};

pbfcl_status pbfcl_stats_csv_open(pbfcl_stats_csv *c, const char *path, bool replace)
{
    return pbfcl_row_file_open(&c->file, &stats_kind, path, replace);
}

pbfcl_status pbfcl_stats_csv_row(pbfcl_stats_csv *c, long long step, double time,
                                 const pbfcl_stats *s)
{
    char line[512];
    int len = snprintf(line, sizeof line, "%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%u,%u,%u\n", step,
                       time, s->kinetic_energy, s->density_error_avg, s->density_error_max,
                       s->max_speed, s->neighbours_avg, s->neighbours_max, s->outside, s->nan);
    if (len < 0 || (size_t)len >= sizeof line)
        return PBFCL_ERR_IO;
    return pbfcl_row_file_append(&c->file, line, (size_t)len);
}

pbfcl_status pbfcl_stats_csv_close(pbfcl_stats_csv *c, int remove_file)
{
    return pbfcl_row_file_close(&c->file, remove_file != 0);
}
