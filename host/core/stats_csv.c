/* The `pbfcl run --stats` CSV: one header line, one row per step with the columns of
 * PBFCL_STATS_CSV_HEADER, each row flushed so that a run stopped early leaves whole rows. */
#include "stats_csv.h"

#include <errno.h>
#include <string.h>

pbfcl_status pbfcl_stats_csv_open(pbfcl_stats_csv *c, const char *path)
{
    memset(c, 0, sizeof *c);
    if (snprintf(c->path, sizeof c->path, "%s", path) >= (int)sizeof c->path) {
        pbfcl_errorf("statistics file name too long: '%s'", path);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    c->file = fopen(path, "w");
    if (!c->file) {
        pbfcl_errorf("cannot create statistics file '%s': %s", path, strerror(errno));
        return PBFCL_ERR_IO;
    }
    if (fprintf(c->file, "%s\n", PBFCL_STATS_CSV_HEADER) < 0 || fflush(c->file) != 0) {
        pbfcl_errorf("cannot write statistics file '%s': %s", path, strerror(errno));
        fclose(c->file);
        c->file = NULL;
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_stats_csv_row(pbfcl_stats_csv *c, long long step, double time,
                                 const pbfcl_sim_stats *s)
{
    int len = fprintf(c->file, "%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%u,%u,%u\n", step, time,
                      s->kinetic_energy, s->density_error_avg, s->density_error_max, s->max_speed,
                      s->neighbors_avg, s->neighbors_max, s->outside, s->nan);
    if (len < 0 || fflush(c->file) != 0) {
        pbfcl_errorf("cannot write statistics file '%s': %s", c->path, strerror(errno));
        return PBFCL_ERR_IO;
    }
    c->rows++;
    return PBFCL_OK;
}

pbfcl_status pbfcl_stats_csv_close(pbfcl_stats_csv *c, int remove_file)
{
    pbfcl_status st = PBFCL_OK;
    if (c->file && fclose(c->file) != 0) {
        pbfcl_errorf("cannot write statistics file '%s': %s", c->path, strerror(errno));
        st = PBFCL_ERR_IO;
    }
    if (c->file && remove_file)
        remove(c->path);
    c->file = NULL;
    return st;
}
