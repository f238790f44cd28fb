/* VTK XML frames (.vtu: points, velocity, density, id, phase, body) and collections (.pvd); the
 * layout is VTK's "raw appended" format: the XML header gives each array's offset into the block
 * after <AppendedData>, where each array is an 8-byte byte count followed by its little-endian
 * values. */
#include "export_vtk.h"
#include "atomic_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VTU_CHUNK 4096 /* values per write */

/* The appended arrays in order, with their bytes per particle. */
enum {
    VTU_POINTS,
    VTU_VELOCITY,
    VTU_DENSITY,
    VTU_ID,
    VTU_PHASE,
    VTU_BODY,
    VTU_CONN,
    VTU_OFFSETS,
    VTU_TYPES,
    VTU_N
};
static const size_t vtu_bytes[VTU_N] = {12, 12, 4, 4, 4, 4, 4, 4, 1};

static bool write_header(FILE *file, const pbfcl_frame *f)
{
    uint64_t off[VTU_N], at = 0;
    for (int a = 0; a < VTU_N; a++) {
        off[a] = at;
        at += 8 + vtu_bytes[a] * f->n;
    }
    return fprintf(file,
                   "<?xml version=\"1.0\"?>\n"
                   "<!-- written by pbfcl %s: step %lld, time %.9g s, %s up -->\n"
                   "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" "
                   "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
                   "  <UnstructuredGrid>\n"
                   "    <FieldData>\n"
                   "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" "
                   "format=\"ascii\">%.17g</DataArray>\n"
                   "    </FieldData>\n"
                   "    <Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">\n"
                   "      <Points>\n"
                   "        <DataArray type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\" "
                   "format=\"appended\" offset=\"%llu\"/>\n"
                   "      </Points>\n"
                   "      <PointData Scalars=\"density\" Vectors=\"velocity\">\n"
                   "        <DataArray type=\"Float32\" Name=\"velocity\" "
                   "NumberOfComponents=\"3\" format=\"appended\" offset=\"%llu\"/>\n"
                   "        <DataArray type=\"Float32\" Name=\"density\" format=\"appended\" "
                   "offset=\"%llu\"/>\n"
                   "        <DataArray type=\"UInt32\" Name=\"id\" format=\"appended\" "
                   "offset=\"%llu\"/>\n"
                   "        <DataArray type=\"UInt32\" Name=\"phase\" format=\"appended\" "
                   "offset=\"%llu\"/>\n"
                   "        <DataArray type=\"Int32\" Name=\"body\" format=\"appended\" "
                   "offset=\"%llu\"/>\n"
                   "      </PointData>\n"
                   "      <Cells>\n"
                   "        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"appended\" "
                   "offset=\"%llu\"/>\n"
                   "        <DataArray type=\"Int32\" Name=\"offsets\" format=\"appended\" "
                   "offset=\"%llu\"/>\n"
                   "        <DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" "
                   "offset=\"%llu\"/>\n"
                   "      </Cells>\n"
                   "    </Piece>\n"
                   "  </UnstructuredGrid>\n"
                   "  <AppendedData encoding=\"raw\">\n_",
                   pbfcl_version_string(), f->step, f->time, f->z_up ? "z" : "y", f->time, f->n,
                   f->n, (unsigned long long)off[VTU_POINTS], (unsigned long long)off[VTU_VELOCITY],
                   (unsigned long long)off[VTU_DENSITY], (unsigned long long)off[VTU_ID],
                   (unsigned long long)off[VTU_PHASE], (unsigned long long)off[VTU_BODY],
                   (unsigned long long)off[VTU_CONN], (unsigned long long)off[VTU_OFFSETS],
                   (unsigned long long)off[VTU_TYPES]) > 0;
}

/* The 32-bit values of array a for particles first..first+count-1 into out. */
static void vtu_values(const pbfcl_frame *f, int a, size_t first, size_t count, uint32_t *out)
{
    for (size_t i = 0; i < count; i++) {
        size_t p = first + i;
        float v[3];
        if (a == VTU_POINTS || a == VTU_VELOCITY) {
            const float *src = a == VTU_POINTS ? f->pos3 : f->vel3;
            for (int k = 0; k < 3; k++)
                v[k] = src ? src[3 * p + k] : 0.0f;
            if (f->z_up)
                pbfcl_frame_to_z_up(v);
            memcpy(out + 3 * i, v, sizeof v);
        } else if (a == VTU_DENSITY) {
            v[0] = f->density ? f->density[p] : 0.0f;
            memcpy(out + i, v, sizeof(float));
        } else if (a == VTU_ID) {
            out[i] = f->ids ? f->ids[p] : (uint32_t)p;
        } else if (a == VTU_PHASE) {
            out[i] = f->phases ? (uint32_t)f->phases[p] : 0u;
        } else if (a == VTU_BODY) {
            int32_t body = pbfcl_frame_body(f, p);
            memcpy(out + i, &body, sizeof body);
        } else {
            out[i] = (uint32_t)(a == VTU_CONN ? p : p + 1);
        }
    }
}

static bool write_arrays(FILE *file, const pbfcl_frame *f)
{
    uint32_t *chunk = malloc(3 * VTU_CHUNK * sizeof *chunk);
    unsigned char *types = malloc(VTU_CHUNK);
    bool ok = chunk && types;
    if (types)
        memset(types, 1, VTU_CHUNK); /* VTK_VERTEX */
    for (int a = 0; a < VTU_N && ok; a++) {
        uint64_t bytes = vtu_bytes[a] * f->n;
        uint32_t size_words[2] = {(uint32_t)bytes, (uint32_t)(bytes >> 32)};
        ok = pbfcl_write_le32(file, size_words, 2);
        for (size_t first = 0; first < f->n && ok; first += VTU_CHUNK) {
            size_t count = f->n - first < VTU_CHUNK ? f->n - first : VTU_CHUNK;
            if (a == VTU_TYPES) {
                ok = fwrite(types, 1, count, file) == count;
                continue;
            }
            vtu_values(f, a, first, count, chunk);
            ok = pbfcl_write_le32(file, chunk, count * (vtu_bytes[a] / 4));
        }
    }
    free(chunk);
    free(types);
    return ok && fprintf(file, "\n  </AppendedData>\n</VTKFile>\n") > 0;
}

pbfcl_status pbfcl_vtu_write(const char *path, const pbfcl_frame *f)
{
    if (f->n > INT32_MAX) {
        pbfcl_errorf("cannot write '%s': %zu particles is more than a VTK Int32 cell array "
                     "holds; use --format ply",
                     path, f->n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, "VTK frame"));
    if (!write_header(a.file, f) || !write_arrays(a.file, f)) {
        int saved = errno;
        pbfcl_atomic_abort(&a);
        pbfcl_errorf("cannot write VTK frame '%s': %s", path, strerror(saved ? saved : EIO));
        return PBFCL_ERR_IO;
    }
    return pbfcl_atomic_commit(&a);
}

pbfcl_status pbfcl_pvd_write(const char *path, const pbfcl_pvd_entry *entries, size_t count)
{
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, "VTK collection"));
    bool ok = fprintf(a.file, "<?xml version=\"1.0\"?>\n"
                              "<VTKFile type=\"Collection\" version=\"0.1\" "
                              "byte_order=\"LittleEndian\">\n  <Collection>\n") > 0;
    for (size_t i = 0; i < count && ok; i++)
        ok = fprintf(a.file,
                     "    <DataSet timestep=\"%.17g\" group=\"\" part=\"%d\" file=\"%s\"/>\n",
                     entries[i].time, !strncmp(entries[i].file, "mesh_", 5), entries[i].file) > 0;
    ok = ok && fprintf(a.file, "  </Collection>\n</VTKFile>\n") > 0;
    if (!ok) {
        int saved = errno;
        pbfcl_atomic_abort(&a);
        pbfcl_errorf("cannot write VTK collection '%s': %s", path, strerror(saved ? saved : EIO));
        return PBFCL_ERR_IO;
    }
    return pbfcl_atomic_commit(&a);
}
