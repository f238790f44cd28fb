/* The body motion CSV of `pbfcl run --export` (body_csv.h): the velocities of each body from
 * its particles, and the file, a row file (row_file.h) with one append per frame, so it only
 * ever holds whole frames. */
#include "body_csv.h"
#include "export_ply.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const pbfcl_row_file_kind body_kind = {
    "body motion file", "frames", PBFCL_BODY_CSV_HEADER "\n",
    " (another run's); remove it or pass --force to replace it"};

pbfcl_status pbfcl_body_csv_open(pbfcl_body_csv *c, const char *path, bool replace)
{
    return pbfcl_row_file_open(&c->file, &body_kind, path, replace);
}

pbfcl_status pbfcl_body_csv_resume(pbfcl_body_csv *c, const char *path, long long step)
{
    return pbfcl_row_file_resume(&c->file, &body_kind, path, step);
}

/* One row; returns its length or -1 if it does not fit. */
static int body_row(char *out, size_t size, long long step, double time, int body,
                    const pbfcl_body_motion *m, bool z_up)
{
    float p[3], q[4], v[3], w[3];
    memcpy(p, m->pos, sizeof p);
    memcpy(q, m->quat, sizeof q);
    memcpy(v, m->vel, sizeof v);
    memcpy(w, m->omega, sizeof w);
    if (z_up) { /* the axis change is a rotation: vectors and a quaternion's axis turn alike */
        pbfcl_frame_to_z_up(p);
        pbfcl_frame_to_z_up(q);
        pbfcl_frame_to_z_up(v);
        pbfcl_frame_to_z_up(w);
    }
    int len = snprintf(out, size,
                       "%lld,%.9g,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,"
                       "%.9g\n",
                       step, time, body, p[0], p[1], p[2], q[0], q[1], q[2], q[3], v[0], v[1], v[2],
                       w[0], w[1], w[2]);
    return len < 0 || (size_t)len >= size ? -1 : len;
}

pbfcl_status pbfcl_body_csv_frame(pbfcl_body_csv *c, long long step, double time,
                                  const pbfcl_body_motion *b, int count, bool z_up)
{
    size_t cap = (size_t)(count > 0 ? count : 1) * 320, len = 0;
    char *text = malloc(cap);
    if (!text)
        return PBFCL_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < count; i++) {
        int l = body_row(text + len, cap - len, step, time, i, &b[i], z_up);
        if (l < 0) {
            free(text);
            return PBFCL_ERR_IO;
        }
        len += (size_t)l;
    }
    pbfcl_status st = pbfcl_row_file_append(&c->file, text, len);
    free(text);
    return st;
}

pbfcl_status pbfcl_body_csv_close(pbfcl_body_csv *c)
{
    return pbfcl_row_file_close(&c->file, false);
}

/* Solves the symmetric 3x3 system I w = l; a singular I (particles on a line) is made
 * regular by a small multiple of its trace on the diagonal, which leaves the spin about the
 * line at 0. */
static void solve3(double I[3][3], const double l[3], float w[3])
{
    double tr = I[0][0] + I[1][1] + I[2][2];
    for (int attempt = 0; attempt < 2; attempt++) {
        double a = I[0][0], b = I[0][1], c = I[0][2], d = I[1][1], e = I[1][2], f = I[2][2];
        double det = a * (d * f - e * e) - b * (b * f - c * e) + c * (b * e - c * d);
        if (fabs(det) > 1e-9 * tr * tr * tr && tr > 0.0) {
            double inv[3][3] = {{d * f - e * e, c * e - b * f, b * e - c * d},
                                {c * e - b * f, a * f - c * c, b * c - a * e},
                                {b * e - c * d, b * c - a * e, a * d - b * b}};
            for (int k = 0; k < 3; k++)
                w[k] = (float)((inv[k][0] * l[0] + inv[k][1] * l[1] + inv[k][2] * l[2]) / det);
            return;
        }
        for (int k = 0; k < 3; k++)
            I[k][k] += 1e-6 * tr;
    }
    w[0] = w[1] = w[2] = 0.0f;
}

void pbfcl_body_velocities(const float *pos, const float *vel, const int *phases, size_t n,
                           int count, pbfcl_body_motion *out)
{
    double(*sum)[7] = calloc((size_t)count + 1, sizeof *sum);  /* x y z vx vy vz count */
    double(*acc)[12] = calloc((size_t)count + 1, sizeof *acc); /* I (9), L (3) */
    if (!sum || !acc) {
        free(sum);
        free(acc);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (phases[i] > 0 && phases[i] <= count) {
            double *s = sum[phases[i] - 1];
            for (int k = 0; k < 3; k++) {
                s[k] += pos[3 * i + k];
                s[3 + k] += vel[3 * i + k];
            }
            s[6] += 1.0;
        }
    for (size_t i = 0; i < n; i++)
        if (phases[i] > 0 && phases[i] <= count) {
            const double *s = sum[phases[i] - 1];
            double *a = acc[phases[i] - 1], r[3], u[3];
            for (int k = 0; k < 3; k++) {
                r[k] = pos[3 * i + k] - s[k] / s[6];
                u[k] = vel[3 * i + k] - s[3 + k] / s[6];
            }
            double rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 3; k++)
                    a[3 * j + k] += (j == k ? rr : 0.0) - r[j] * r[k];
            a[9] += r[1] * u[2] - r[2] * u[1];
            a[10] += r[2] * u[0] - r[0] * u[2];
            a[11] += r[0] * u[1] - r[1] * u[0];
        }
    for (int b = 0; b < count; b++) {
        double I[3][3];
        for (int j = 0; j < 9; j++)
            I[j / 3][j % 3] = acc[b][j];
        for (int k = 0; k < 3; k++)
            out[b].vel[k] = sum[b][6] > 0.0 ? (float)(sum[b][3 + k] / sum[b][6]) : 0.0f;
        solve3(I, acc[b] + 9, out[b].omega);
    }
    free(sum);
    free(acc);
}
