/* The list of checkpoints in an export folder (run_lineage.h): one line per checkpoint, its
 * last 8 bytes (the FNV-1a checksum of the rest, host/app/checkpoint.h) in hex. */
#include "run_lineage.h"
#include "run_paths.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The checkpoint's checksum in hex (17 bytes), or false if it cannot be read. */
static bool checkpoint_tag(const char *checkpoint, char tag[17])
{
    unsigned char sum[8];
    FILE *f = fopen(checkpoint, "rb");
    bool ok = f && fseek(f, -8, SEEK_END) == 0 && fread(sum, 1, 8, f) == 8;
    if (f)
        fclose(f);
    for (int k = 0; ok && k < 8; k++)
        snprintf(tag + 2 * k, 3, "%02x", sum[k]);
    return ok;
}

static void list_path(const char *dir, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, PBFCL_LINEAGE_NAME);
}

bool run_lineage_lists(const char *dir, const char *checkpoint)
{
    char tag[17], path[4200], line[64];
    list_path(dir, path, sizeof path);
    FILE *f = checkpoint_tag(checkpoint, tag) ? fopen(path, "r") : NULL;
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = !strncmp(line, tag, 16) && line[16] == '\n';
    if (f)
        fclose(f);
    return found;
}

void run_lineage_reset(const char *dir)
{
    char path[4200];
    list_path(dir, path, sizeof path);
    remove(path);
}

pbfcl_status run_lineage_add(const char *dir, const char *checkpoint)
{
    char tag[17], path[4200];
    list_path(dir, path, sizeof path);
    FILE *f = checkpoint_tag(checkpoint, tag) ? fopen(path, "a") : NULL;
    bool ok = f && fprintf(f, "%s\n", tag) == 17;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        pbfcl_errorf("cannot add checkpoint '%s' to '%s': %s", checkpoint, path, strerror(errno));
        return PBFCL_ERR_IO;
    }
    return PBFCL_OK;
}
