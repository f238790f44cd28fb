/* The shapes' motion CSV (shape_csv.h), a row file like the body motion CSV. */
#include "shape_csv.h"
#include "export_ply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pbfcl_row_file_kind shape_kind = {
    "shape motion file", "frames", PBFCL_SHAPE_CSV_HEADER "\n",
    " (another run's); remove it or pass --force to replace it"};

pbfcl_status pbfcl_shape_csv_open(pbfcl_shape_csv *c, const char *path, bool replace)
{
    return pbfcl_row_file_open(&c->file, &shape_kind, path, replace);
}

pbfcl_status pbfcl_shape_csv_resume(pbfcl_shape_csv *c, const char *path, long long step)
{
    return pbfcl_row_file_resume(&c->file, &shape_kind, path, step);
}

const char *pbfcl_shape_type_name(int type)
{
    static const char *const names[] = {"sphere", "capsule", "box", "convex", "mesh", "sdf"};
    int count = (int)(sizeof names / sizeof names[0]);
    return type >= 0 && type < count ? names[type] : "unknown";
}

bool pbfcl_is_shape_obj_name(const char *name)
{
    int index = -1, used = 0;
    return sscanf(name, "shape_%d.obj%n", &index, &used) == 1 && index >= 0 && name[used] == '\0' &&
           !strncmp(name, "shape_", 6) && name[6] >= '0' && name[6] <= '9';
}

pbfcl_status pbfcl_shape_csv_frame(pbfcl_shape_csv *c, long long step, double time,
                                   const pbfcl_shape_motion *m, int count, bool z_up)
{
    size_t cap = (size_t)(count > 0 ? count : 1) * 360, len = 0;
    char *text = malloc(cap);
    if (!text)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < count; i++) {
        float p[3], q[4], v[3], w[3];
        memcpy(p, m[i].pos, sizeof p);
        memcpy(q, m[i].quat, sizeof q);
        memcpy(v, m[i].vel, sizeof v);
        memcpy(w, m[i].omega, sizeof w);
        if (z_up) { /* a rotation: vectors and the quaternion's axis turn alike */
            pbfcl_frame_to_z_up(p);
            pbfcl_frame_to_z_up(q);
            pbfcl_frame_to_z_up(v);
            pbfcl_frame_to_z_up(w);
        }
        int l = snprintf(text + len, cap - len,
                         "%lld,%.9g,%d,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,"
                         "%.9g,%.9g\n",
                         step, time, i, pbfcl_shape_type_name(m[i].type), p[0], p[1], p[2], q[0],
                         q[1], q[2], q[3], v[0], v[1], v[2], w[0], w[1], w[2]);
        if (l < 0 || (size_t)l >= cap - len) {
            free(text);
            return PBFCL_ERR_IO;
        }
        len += (size_t)l;
    }
    pbfcl_status st = pbfcl_row_file_append(&c->file, text, len);
    free(text);
    return st;
}

pbfcl_status pbfcl_shape_csv_close(pbfcl_shape_csv *c)
{
    return pbfcl_row_file_close(&c->file, false);
}
