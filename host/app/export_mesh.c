/* Mesh files (export_mesh.h): PLY with faces and edges, VTK XML PolyData in the raw appended
 * layout of the particles' .vtu frames (export_vtk.c), and OBJ surfaces. */
#include "export_mesh.h"
#include "atomic_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The segments of the ropes (consecutive points of each line). */
static size_t rope_segments(const pbfcl_solver_mesh *m)
{
    return m->line_count ? m->line_start[m->line_count] - m->line_count : 0;
}

/* Vertex v's position (z_up turned) into out. */
static void vertex_position(const pbfcl_mesh_frame *f, size_t v, const float *src, float *out)
{
    unsigned p = f->mesh->vert[v];
    for (int k = 0; k < 3; k++)
        out[k] = src ? src[3 * (size_t)p + k] : 0.0f;
    if (f->z_up)
        pbfcl_frame_to_z_up(out);
}

static const char ply_head[] = "ply\n"
                               "format binary_little_endian 1.0\n"
                               "comment written by pbfcl %s\n"
                               "comment step %lld time %.9g s, %s up\n"
                               "comment the cloth and rope particles of frame %lld (id: theirs "
                               "there)\n"
                               "element vertex %zu\n"
                               "property float x\n"
                               "property float y\n"
                               "property float z\n"
                               "property uint id\n"
                               "element face %zu\n"
                               "property list uchar int vertex_indices\n";

static bool ply_stream(FILE *file, const pbfcl_mesh_frame *f)
{
    const pbfcl_solver_mesh *m = f->mesh;
    size_t edges = rope_segments(m);
    bool ok = fprintf(file, ply_head, pbfcl_version_string(), f->step, f->time, f->z_up ? "z" : "y",
                      f->step, m->vert_count, m->tri_count) > 0;
    if (ok && edges)
        ok = fprintf(file, "element edge %zu\nproperty int vertex1\nproperty int vertex2\n",
                     edges) > 0;
    ok = ok && fprintf(file, "end_header\n") > 0;
    for (size_t v = 0; ok && v < m->vert_count; v++) {
        uint32_t rec[4];
        float p[3];
        vertex_position(f, v, f->pos3, p);
        memcpy(rec, p, sizeof p);
        rec[3] = f->ids ? f->ids[m->vert[v]] : m->vert[v];
        ok = pbfcl_write_le32(file, rec, 4);
    }
    for (size_t t = 0; ok && t < m->tri_count; t++) {
        uint32_t idx[3];
        for (int k = 0; k < 3; k++)
            idx[k] = m->vert_of[m->tri[3 * t + k]];
        ok = fputc(3, file) != EOF && pbfcl_write_le32(file, idx, 3);
    }
    for (size_t l = 0; ok && l < m->line_count; l++)
        for (size_t p = m->line_start[l]; ok && p + 1 < m->line_start[l + 1]; p++) {
            uint32_t e[2] = {m->vert_of[m->line_pts[p]], m->vert_of[m->line_pts[p + 1]]};
            ok = pbfcl_write_le32(file, e, 2);
        }
    return ok;
}

/* Writes through a temporary file with stream; what names the file in messages. */
static pbfcl_status write_whole(const char *path, const char *what, const pbfcl_mesh_frame *f,
                                bool (*stream)(FILE *, const pbfcl_mesh_frame *))
{
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, what));
    if (!stream(a.file, f)) {
        int saved = errno;
        pbfcl_atomic_abort(&a);
        pbfcl_errorf("cannot write %s '%s': %s", what, path, strerror(saved ? saved : EIO));
        return PBFCL_ERR_IO;
    }
    return pbfcl_atomic_commit(&a);
}

pbfcl_status pbfcl_mesh_ply_write(const char *path, const pbfcl_mesh_frame *f)
{
    return write_whole(path, "PLY mesh", f, ply_stream);
}

/* The appended arrays of a .vtp, in order. */
enum {
    VTP_POINTS,
    VTP_VELOCITY,
    VTP_ID,
    VTP_LINE_CONN,
    VTP_LINE_OFF,
    VTP_POLY_CONN,
    VTP_POLY_OFF,
    VTP_N
};

/* The 32-bit values of array a. */
static size_t vtp_count(const pbfcl_solver_mesh *m, int a)
{
    size_t points = m->line_count ? m->line_start[m->line_count] : 0;
    size_t counts[VTP_N] = {3 * m->vert_count, 3 * m->vert_count, m->vert_count, points,
                            m->line_count,     3 * m->tri_count,  m->tri_count};
    return counts[a];
}

static void vtp_values(const pbfcl_mesh_frame *f, int a, uint32_t *out)
{
    const pbfcl_solver_mesh *m = f->mesh;
    size_t n = vtp_count(m, a);
    for (size_t i = 0; i < n; i++) {
        if (a == VTP_POINTS || a == VTP_VELOCITY) {
            if (i % 3 == 0)
                vertex_position(f, i / 3, a == VTP_POINTS ? f->pos3 : f->vel3, (float *)out + i);
        } else if (a == VTP_ID) {
            out[i] = f->ids ? f->ids[m->vert[i]] : m->vert[i];
        } else if (a == VTP_LINE_CONN) {
            out[i] = m->vert_of[m->line_pts[i]];
        } else if (a == VTP_LINE_OFF) {
            out[i] = (uint32_t)m->line_start[i + 1];
        } else if (a == VTP_POLY_CONN) {
            out[i] = m->vert_of[m->tri[i]];
        } else {
            out[i] = (uint32_t)(3 * (i + 1));
        }
    }
}

static const char vtp_head[] =
    "<?xml version=\"1.0\"?>\n"
    "<!-- written by pbfcl %s: the cloth and rope particles of frame %lld, time %.9g s, %s up "
    "-->\n"
    "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
    "header_type=\"UInt64\">\n"
    "  <PolyData>\n"
    "    <FieldData>\n"
    "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" "
    "format=\"ascii\">%.17g</DataArray>\n"
    "    </FieldData>\n"
    "    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"0\" NumberOfLines=\"%zu\" "
    "NumberOfStrips=\"0\" NumberOfPolys=\"%zu\">\n"
    "      <Points>\n"
    "        <DataArray type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\" "
    "format=\"appended\" offset=\"%llu\"/>\n"
    "      </Points>\n"
    "      <PointData Vectors=\"velocity\">\n"
    "        <DataArray type=\"Float32\" Name=\"velocity\" NumberOfComponents=\"3\" "
    "format=\"appended\" offset=\"%llu\"/>\n"
    "        <DataArray type=\"UInt32\" Name=\"id\" format=\"appended\" offset=\"%llu\"/>\n"
    "      </PointData>\n";

static const char vtp_cells[] =
    "      <%s>\n"
    "        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"appended\" "
    "offset=\"%llu\"/>\n"
    "        <DataArray type=\"Int32\" Name=\"offsets\" format=\"appended\" offset=\"%llu\"/>\n"
    "      </%s>\n";

static bool vtp_stream(FILE *file, const pbfcl_mesh_frame *f)
{
    const pbfcl_solver_mesh *m = f->mesh;
    unsigned long long off[VTP_N], at = 0;
    for (int a = 0; a < VTP_N; a++) {
        off[a] = at;
        at += 8 + 4 * vtp_count(m, a);
    }
    bool ok = fprintf(file, vtp_head, pbfcl_version_string(), f->step, f->time, f->z_up ? "z" : "y",
                      f->time, m->vert_count, m->line_count, m->tri_count, off[VTP_POINTS],
                      off[VTP_VELOCITY], off[VTP_ID]) > 0;
    ok =
        ok && fprintf(file, vtp_cells, "Lines", off[VTP_LINE_CONN], off[VTP_LINE_OFF], "Lines") > 0;
    ok =
        ok && fprintf(file, vtp_cells, "Polys", off[VTP_POLY_CONN], off[VTP_POLY_OFF], "Polys") > 0;
    ok = ok &&
         fprintf(file, "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n_") > 0;
    for (int a = 0; ok && a < VTP_N; a++) {
        size_t n = vtp_count(m, a);
        uint64_t bytes = 4 * (uint64_t)n;
        uint32_t size_words[2] = {(uint32_t)bytes, (uint32_t)(bytes >> 32)};
        uint32_t *values = malloc((n + 1) * sizeof *values);
        ok = values != NULL;
        if (ok)
            vtp_values(f, a, values);
        ok = ok && pbfcl_write_le32(file, size_words, 2) && pbfcl_write_le32(file, values, n);
        free(values);
    }
    return ok && fprintf(file, "\n  </AppendedData>\n</VTKFile>\n") > 0;
}

pbfcl_status pbfcl_mesh_vtp_write(const char *path, const pbfcl_mesh_frame *f)
{
    return write_whole(path, "VTK mesh", f, vtp_stream);
}

pbfcl_status pbfcl_mesh_path(char *buf, size_t size, const char *dir, long long step,
                             pbfcl_export_format format)
{
    const char *ext = format == PBFCL_FORMAT_VTK ? "vtp" : "ply";
    int len = snprintf(buf, size, "%s/mesh_%05lld.%s", dir, step, ext);
    if (len < 0 || (size_t)len >= size) {
        pbfcl_errorf("export path too long: '%s/mesh_%05lld.%s'", dir, step, ext);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_obj_write(const char *path, const float *v, size_t nv, const unsigned *t,
                             size_t nt, const char *comment, bool z_up)
{
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, "OBJ surface"));
    bool ok = fprintf(a.file, "# written by pbfcl %s\n", pbfcl_version_string()) > 0;
    for (const char *line = comment; ok && line && *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        ok = fprintf(a.file, "# %.*s\n", len, line) > 0;
        line = end ? end + 1 : line + len;
    }
    for (size_t i = 0; ok && i < nv; i++) {
        float p[3] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
        if (z_up)
            pbfcl_frame_to_z_up(p);
        ok = fprintf(a.file, "v %.9g %.9g %.9g\n", p[0], p[1], p[2]) > 0;
    }
    for (size_t i = 0; ok && i < nt; i++)
        ok = fprintf(a.file, "f %u %u %u\n", t[3 * i] + 1, t[3 * i + 1] + 1, t[3 * i + 2] + 1) > 0;
    if (!ok) {
        int saved = errno;
        pbfcl_atomic_abort(&a);
        pbfcl_errorf("cannot write OBJ surface '%s': %s", path, strerror(saved ? saved : EIO));
        return PBFCL_ERR_IO;
    }
    return pbfcl_atomic_commit(&a);
}
