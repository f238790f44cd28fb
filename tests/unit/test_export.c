/* Output files of `pbfcl run`: PLY frames written and parsed back (header text and every
 * float, across the writer's chunk size), frame names, the export directory check, and the
 * statistics CSV header and rows. */
#include "body_csv.h"
#include "export_ply.h"
#include "export_vtk.h"
#include "pbfcl.h"
#include "shape_csv.h"
#include "stats_csv.h"
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[64];

/* A fresh temporary directory for one test. */
static const char *make_tmp_dir(void)
{
    strcpy(tmp_root, "/tmp/pbfcl_export_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp_root));
    return tmp_root;
}

/* Number of entries in dir (without . and ..). */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void remove_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Reads a whole file; *len its size. */
static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    buf[size] = '\0';
    *len = (size_t)size;
    return buf;
}

static uint32_t le_u32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static float le_float(const unsigned char *b)
{
    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Writes n random particles, parses the file back as a PLY reader would, compares. */
static void ply_round_trip(size_t n, bool with_vel, bool with_density, bool with_ids,
                           bool with_phases)
{
    const char *dir = make_tmp_dir();
    uint64_t rng = 1234 + n;
    float *pos = malloc((n * 3 + 1) * sizeof *pos), *vel = malloc((n * 3 + 1) * sizeof *vel);
    float *dens = malloc((n + 1) * sizeof *dens);
    unsigned *ids = malloc((n + 1) * sizeof *ids);
    int *phases = malloc((n + 1) * sizeof *phases);
    for (size_t i = 0; i < 3 * n; i++) {
        pos[i] = test_randf(&rng, -2.0f, 2.0f);
        vel[i] = test_randf(&rng, -10.0f, 10.0f);
    }
    for (size_t i = 0; i < n; i++) {
        dens[i] = test_randf(&rng, 900.0f, 1100.0f);
        ids[i] = (unsigned)(n - 1 - i) * 7u + 3u;
        phases[i] = (int)(i % 5); /* fluid, bodies 0 to 3 */
    }
    char path[256];
    ck_assert_int_eq(pbfcl_ply_frame_path(path, sizeof path, dir, 42), PBFCL_OK);
    pbfcl_frame f = {n,
                     pos,
                     with_vel ? vel : NULL,
                     with_density ? dens : NULL,
                     with_ids ? ids : NULL,
                     with_phases ? phases : NULL,
                     42,
                     0.7,
                     false};
    ck_assert_int_eq(pbfcl_ply_write(path, &f), PBFCL_OK);
    ck_assert_int_eq(count_entries(dir), 1); /* no temporary file left behind */
    struct stat st;
    mode_t mask = umask(022);
    umask(mask);
    ck_assert_int_eq(stat(path, &st), 0); /* created as fopen would: 0666 less the umask */
    ck_assert_uint_eq(st.st_mode & 0777, 0666 & ~mask);
    size_t len;
    unsigned char *buf = read_all(path, &len);
    char expect[1024];
    snprintf(expect, sizeof expect,
             "ply\nformat binary_little_endian 1.0\ncomment written by pbfcl %s\n"
             "comment step 42 time 0.7 s, y up\n"
             "element vertex %zu\nproperty float x\nproperty float y\nproperty float z\n"
             "property float vx\nproperty float vy\nproperty float vz\n"
             "property float density\nproperty uint id\nproperty uint phase\n"
             "property int body\nend_header\n",
             pbfcl_version_string(), n);
    size_t hlen = strlen(expect);
    ck_assert_uint_ge(len, hlen);
    ck_assert_int_eq(memcmp(buf, expect, hlen), 0);
    ck_assert_uint_eq(len, hlen + n * 10 * 4);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *rec = buf + hlen + i * 40;
        for (int k = 0; k < 3; k++) {
            ck_assert_float_eq(le_float(rec + 4 * k), pos[3 * i + k]);
            ck_assert_float_eq(le_float(rec + 12 + 4 * k), with_vel ? vel[3 * i + k] : 0.0f);
        }
        ck_assert_float_eq(le_float(rec + 24), with_density ? dens[i] : 0.0f);
        ck_assert_uint_eq(le_u32(rec + 28), with_ids ? ids[i] : (unsigned)i);
        ck_assert_uint_eq(le_u32(rec + 32), with_phases ? (unsigned)(i % 5) : 0u);
        ck_assert_int_eq((int32_t)le_u32(rec + 36), with_phases ? (int)(i % 5) - 1 : -1);
    }
    free(buf);
    free(pos);
    free(vel);
    free(dens);
    free(ids);
    free(phases);
    remove_tree(dir);
}

START_TEST(ply_round_trip_sizes)
{
    static const size_t sizes[] = {0, 1, 7, 4095, 4096, 4097, 10001};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        ply_round_trip(sizes[k], true, true, true, true);
    ply_round_trip(5, false, true, true, true);
    ply_round_trip(5, true, false, true, true);
    ply_round_trip(5, true, true, false, true);
    ply_round_trip(5, true, true, true, false);
}
END_TEST

/* --up z writes (x, -z, y) for positions and velocities alike (a rotation, so handedness and
 * lengths are kept), and says so in the header. */
START_TEST(ply_z_up)
{
    const char *dir = make_tmp_dir();
    float pos[3] = {1, 2, 3}, vel[3] = {4, 5, 6}, dens = 1000;
    char path[256];
    snprintf(path, sizeof path, "%s/z.ply", dir);
    pbfcl_frame f = {1, pos, vel, &dens, NULL, NULL, 0, 0.0, true};
    ck_assert_int_eq(pbfcl_ply_write(path, &f), PBFCL_OK);
    size_t len;
    unsigned char *buf = read_all(path, &len);
    ck_assert_ptr_nonnull(strstr((char *)buf, ", z up\n"));
    const unsigned char *rec = buf + len - 40;
    float want[6] = {1, -3, 2, 4, -6, 5};
    for (int k = 0; k < 6; k++)
        ck_assert_float_eq(le_float(rec + 4 * k), want[k]);
    free(buf);
    remove_tree(dir);
}
END_TEST

START_TEST(ply_frame_names)
{
    char path[64];
    ck_assert_int_eq(pbfcl_ply_frame_path(path, sizeof path, "out", 0), PBFCL_OK);
    ck_assert_str_eq(path, "out/frame_00000.ply");
    ck_assert_int_eq(pbfcl_ply_frame_path(path, sizeof path, "a/b", 1234), PBFCL_OK);
    ck_assert_str_eq(path, "a/b/frame_01234.ply");
    ck_assert_int_eq(pbfcl_ply_frame_path(path, sizeof path, "d", 123456), PBFCL_OK);
    ck_assert_str_eq(path, "d/frame_123456.ply");
    ck_assert_int_ne(pbfcl_ply_frame_path(path, 10, "long/directory", 1), PBFCL_OK);
    ck_assert_int_eq(pbfcl_frame_path(path, sizeof path, "d", 7, PBFCL_FORMAT_VTK), PBFCL_OK);
    ck_assert_str_eq(path, "d/frame_00007.vtu");
}
END_TEST

/* A write that cannot happen fails with PBFCL_ERR_IO and leaves nothing behind. */
START_TEST(ply_write_failure)
{
    const char *dir = make_tmp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/missing/frame_00000.ply", dir);
    float p[3] = {0, 0, 0};
    pbfcl_frame f = {1, p, NULL, NULL, NULL, NULL, 0, 0.0, false};
    ck_assert_int_eq(pbfcl_ply_write(path, &f), PBFCL_ERR_IO);
    ck_assert_int_eq(count_entries(dir), 0);
    remove_tree(dir);
}
END_TEST

/* Runs fn in a child process whose files may grow to at most limit bytes (a full disk, for
 * the writes: they fail with EFBIG), and returns its exit status. */
static int with_file_limit(rlim_t limit, int (*fn)(const char *dir), const char *dir)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {limit, limit};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(99);
        _exit(fn(dir));
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status), "the child did not exit normally");
    return WEXITSTATUS(status);
}

/* A frame larger than the disk has room for: the write fails, the earlier file of that name
 * is kept unchanged and no temporary file is left. Fails if frames are written in place. */
static int write_big_frames(const char *dir)
{
    size_t n = 100000; /* 3.2 MB per frame */
    float *pos = calloc(3 * n, sizeof *pos);
    char path[256];
    int failures = 0;
    pbfcl_frame f = {n, pos, NULL, NULL, NULL, NULL, 1, 0.0, false};
    snprintf(path, sizeof path, "%s/frame_00001.ply", dir);
    failures += pbfcl_ply_write(path, &f) == PBFCL_ERR_IO;
    snprintf(path, sizeof path, "%s/frame_00001.vtu", dir);
    failures += pbfcl_vtu_write(path, &f) == PBFCL_ERR_IO;
    free(pos);
    return failures;
}

START_TEST(frames_whole_on_full_disk)
{
    const char *dir = make_tmp_dir();
    static const char *const names[] = {"frame_00001.ply", "frame_00001.vtu"};
    char path[256];
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        FILE *f = fopen(path, "w");
        fputs("old frame\n", f);
        fclose(f);
    }
    ck_assert_int_eq(with_file_limit(100000, write_big_frames, dir), 2);
    ck_assert_int_eq(count_entries(dir), 2); /* no temporary file left */
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        size_t len;
        char *text = (char *)read_all(path, &len);
        ck_assert_str_eq(text, "old frame\n");
        free(text);
    }
    remove_tree(dir);
}
END_TEST

/* Parses the VTK XML header that pbfcl writes: the offset of the named array. */
static long long vtu_offset(const char *xml, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "Name=\"%s\"", name);
    const char *p = strstr(xml, key);
    ck_assert_msg(p != NULL, "no array %s", name);
    p = strstr(p, "offset=\"");
    ck_assert_ptr_nonnull(p);
    return atoll(p + 8);
}

/* A .vtu read back by its own description: every array at its offset with its byte count,
 * points and velocity as 3 components, one vertex cell per particle. (A real VTK reader
 * checks the same files in test_vtk_reader.) */
START_TEST(vtu_round_trip)
{
    const char *dir = make_tmp_dir();
    size_t n = 5000;
    uint64_t rng = 77;
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *dens = malloc(n * 4);
    unsigned *ids = malloc(n * 4);
    int *phases = malloc(n * sizeof *phases);
    for (size_t i = 0; i < 3 * n; i++) {
        pos[i] = test_randf(&rng, -1, 1);
        vel[i] = test_randf(&rng, -5, 5);
    }
    for (size_t i = 0; i < n; i++) {
        dens[i] = test_randf(&rng, 500, 1500);
        ids[i] = (unsigned)((i * 7919) % n);
        phases[i] = (int)(i % 3); /* fluid, bodies 0 and 1 */
    }
    char path[256];
    snprintf(path, sizeof path, "%s/f.vtu", dir);
    pbfcl_frame f = {n, pos, vel, dens, ids, phases, 3, 0.05, false};
    ck_assert_int_eq(pbfcl_vtu_write(path, &f), PBFCL_OK);
    size_t len;
    unsigned char *buf = read_all(path, &len);
    const char *xml = (const char *)buf;
    ck_assert_ptr_nonnull(strstr(xml, "NumberOfPoints=\"5000\" NumberOfCells=\"5000\""));
    ck_assert_ptr_nonnull(strstr(xml, "Name=\"velocity\" NumberOfComponents=\"3\""));
    const unsigned char *data = (const unsigned char *)strstr(xml, "encoding=\"raw\">\n_");
    ck_assert_ptr_nonnull(data);
    data += strlen("encoding=\"raw\">\n_");
    static const char *const names[] = {"Points", "velocity",     "density", "id",   "phase",
                                        "body",   "connectivity", "offsets", "types"};
    static const size_t bytes[] = {12, 12, 4, 4, 4, 4, 4, 4, 1};
    for (int a = 0; a < 9; a++) {
        const unsigned char *arr = data + vtu_offset(xml, names[a]);
        ck_assert_uint_eq(le_u32(arr), n * bytes[a]);
        ck_assert_uint_eq(le_u32(arr + 4), 0);
        arr += 8;
        for (size_t i = 0; i < n; i++) {
            if (a == 0 || a == 1)
                for (int k = 0; k < 3; k++)
                    ck_assert_float_eq(le_float(arr + 12 * i + 4 * k), (a ? vel : pos)[3 * i + k]);
            else if (a == 2)
                ck_assert_float_eq(le_float(arr + 4 * i), dens[i]);
            else if (a == 3)
                ck_assert_uint_eq(le_u32(arr + 4 * i), ids[i]);
            else if (a == 4)
                ck_assert_uint_eq(le_u32(arr + 4 * i), i % 3);
            else if (a == 5)
                ck_assert_int_eq((int32_t)le_u32(arr + 4 * i), (int)(i % 3) - 1);
            else if (a == 6 || a == 7)
                ck_assert_uint_eq(le_u32(arr + 4 * i), a == 6 ? i : i + 1);
            else
                ck_assert_uint_eq(arr[i], 1); /* VTK_VERTEX */
        }
    }
    ck_assert_ptr_nonnull(strstr((const char *)buf + len - 40, "</AppendedData>\n</VTKFile>\n"));
    free(buf);
    free(pos);
    free(vel);
    free(dens);
    free(ids);
    free(phases);
    remove_tree(dir);
}
END_TEST

START_TEST(pvd_lists_frames_with_times)
{
    const char *dir = make_tmp_dir();
    pbfcl_pvd_entry e[2] = {{"frame_00000.vtu", 0.0}, {"frame_00002.vtu", 0.03125}};
    char path[256];
    snprintf(path, sizeof path, "%s/frames.pvd", dir);
    ck_assert_int_eq(pbfcl_pvd_write(path, e, 2), PBFCL_OK);
    size_t len;
    char *text = (char *)read_all(path, &len);
    ck_assert_ptr_nonnull(strstr(text, "<VTKFile type=\"Collection\""));
    ck_assert_ptr_nonnull(
        strstr(text, "timestep=\"0\" group=\"\" part=\"0\" file=\"frame_00000.vtu\""));
    ck_assert_ptr_nonnull(
        strstr(text, "timestep=\"0.03125\" group=\"\" part=\"0\" file=\"frame_00002.vtu\""));
    free(text);
    remove_tree(dir);
}
END_TEST

START_TEST(export_dir_checks)
{
    const char *dir = make_tmp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/new/nested/frames", dir);
    ck_assert_int_eq(pbfcl_export_dir_prepare(path), PBFCL_OK);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_int_eq(count_entries(path), 0);                   /* the write probe is removed */
    ck_assert_int_eq(pbfcl_export_dir_prepare(path), PBFCL_OK); /* existing is fine */
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *f = fopen(path, "w");
    fclose(f);
    ck_assert_int_eq(pbfcl_export_dir_prepare(path), PBFCL_ERR_IO); /* not a directory */
    snprintf(path, sizeof path, "%s/file/sub", dir);
    ck_assert_int_eq(pbfcl_export_dir_prepare(path), PBFCL_ERR_IO); /* parent is a file */
    ck_assert_int_eq(pbfcl_export_dir_prepare(""), PBFCL_ERR_BAD_ARGUMENT);
    remove_tree(dir);
}
END_TEST

/* A run that fails before its first step removes the directories it created for its frames
 * (only those, and only while empty). Fails if the tree is left behind. */
START_TEST(export_dir_undo_removes_created)
{
    const char *dir = make_tmp_dir();
    char path[256], kept[256];
    snprintf(kept, sizeof kept, "%s/kept", dir);
    ck_assert_int_eq(mkdir(kept, 0777), 0);
    snprintf(path, sizeof path, "%s/kept/new/nested", dir);
    ck_assert_int_eq(pbfcl_export_dir_prepare(path), PBFCL_OK);
    pbfcl_export_dir_undo();
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/kept/new", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_int_eq(access(kept, F_OK), 0); /* it existed before: kept */
    remove_tree(dir);
}
END_TEST

/* shapes.csv names each kind of shape as a scene file's colliders[].type does, the SDF too (it
 * read "unknown"), and a value outside the kinds "unknown". */
START_TEST(shape_type_names)
{
    static const struct {
        int type;
        const char *name;
    } kinds[] = {{PBFCL_SHAPE_KIND_SPHERE, "sphere"},   {PBFCL_SHAPE_KIND_CAPSULE, "capsule"},
                 {PBFCL_SHAPE_KIND_BOX, "box"},         {PBFCL_SHAPE_KIND_CONVEX, "convex"},
                 {PBFCL_SHAPE_KIND_MESH, "mesh"},       {PBFCL_SHAPE_KIND_SDF, "sdf"},
                 {PBFCL_SHAPE_KIND_SDF + 1, "unknown"}, {-1, "unknown"}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        ck_assert_str_eq(pbfcl_shape_type_name(kinds[k].type), kinds[k].name);
}
END_TEST

START_TEST(stats_csv_header_and_rows)
{
    ck_assert_str_eq(PBFCL_STATS_CSV_HEADER,
                     "step,time,kinetic_energy,density_error_avg,density_error_max,max_speed,"
                     "neighbors_avg,neighbors_max,outside,nan");
    const char *dir = make_tmp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    pbfcl_stats_csv c;
    ck_assert_int_eq(pbfcl_stats_csv_open(&c, path, false), PBFCL_OK);
    pbfcl_stats s;
    memset(&s, 0, sizeof s);
    for (int step = 1; step <= 3; step++) {
        s.kinetic_energy = 0.5 * step;
        s.density_error_avg = 0.25 * step;
        s.density_error_max = 2.0 * step;
        s.max_speed = 1.5 * step;
        s.neighbours_avg = 30.125;
        s.neighbours_max = 40u + (unsigned)step;
        s.outside = (unsigned)step - 1;
        s.nan = 0;
        ck_assert_int_eq(pbfcl_stats_csv_row(&c, step, step / 60.0, &s), PBFCL_OK);
    }
    ck_assert_int_eq(pbfcl_stats_csv_close(&c, 0), PBFCL_OK);
    size_t len;
    char *text = (char *)read_all(path, &len);
    char *line = strtok(text, "\n");
    ck_assert_str_eq(line, PBFCL_STATS_CSV_HEADER);
    for (int step = 1; step <= 3; step++) {
        line = strtok(NULL, "\n");
        ck_assert_ptr_nonnull(line);
        long long st;
        double t, ke, da, dm, ms, na;
        unsigned nm, out, nan;
        ck_assert_int_eq(sscanf(line, "%lld,%lf,%lf,%lf,%lf,%lf,%lf,%u,%u,%u", &st, &t, &ke, &da,
                                &dm, &ms, &na, &nm, &out, &nan),
                         10);
        ck_assert_int_eq(st, step);
        ck_assert(test_close(t, step / 60.0, 1e-12, 1e-8));
        ck_assert(test_close(ke, 0.5 * step, 1e-12, 1e-8));
        ck_assert(test_close(dm, 2.0 * step, 1e-12, 1e-8));
        ck_assert(test_close(na, 30.125, 1e-12, 1e-8));
        ck_assert_uint_eq(nm, 40u + (unsigned)step);
        ck_assert_uint_eq(out, (unsigned)step - 1);
    }
    ck_assert_ptr_null(strtok(NULL, "\n"));
    free(text);
    /* an existing file is refused (and kept) unless replace; closing with remove_file
     * deletes it; a file in a missing directory cannot be opened */
    ck_assert_int_eq(pbfcl_stats_csv_check(path, false), PBFCL_ERR_IO);
    ck_assert_int_eq(pbfcl_stats_csv_open(&c, path, false), PBFCL_ERR_IO);
    text = (char *)read_all(path, &len);
    ck_assert_int_eq(
        strncmp(text, PBFCL_STATS_CSV_HEADER "\n1,", strlen(PBFCL_STATS_CSV_HEADER) + 3), 0);
    free(text);
    ck_assert_int_eq(pbfcl_stats_csv_check(path, true), PBFCL_OK);
    ck_assert_int_eq(pbfcl_stats_csv_open(&c, path, true), PBFCL_OK);
    ck_assert_int_eq(pbfcl_stats_csv_close(&c, 1), PBFCL_OK);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/missing/stats.csv", dir);
    ck_assert_int_eq(pbfcl_stats_csv_check(path, false), PBFCL_ERR_IO);
    ck_assert_int_eq(pbfcl_stats_csv_open(&c, path, false), PBFCL_ERR_IO);
    ck_assert_int_eq(pbfcl_stats_csv_check(dir, true), PBFCL_ERR_IO); /* a directory */
    remove_tree(dir);
}
END_TEST

/* Writes rows until the disk is full; exits 0 if a write failed as it should. */
static int fill_stats(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    pbfcl_stats_csv c;
    if (pbfcl_stats_csv_open(&c, path, false) != PBFCL_OK)
        return 2;
    pbfcl_stats s;
    memset(&s, 0, sizeof s);
    s.kinetic_energy = 1.0 / 3.0;
    for (long long step = 1; step < 100000; step++)
        if (pbfcl_stats_csv_row(&c, step, step / 60.0, &s) != PBFCL_OK)
            return pbfcl_stats_csv_close(&c, 0) == PBFCL_OK ? 0 : 3;
    return 4;
}

/* On a full disk the statistics file keeps whole rows only (the half-written row is cut off
 * again). Fails if rows are written with buffered stdio or not cut back. */
START_TEST(stats_whole_rows_on_full_disk)
{
    const char *dir = make_tmp_dir();
    ck_assert_int_eq(with_file_limit(1000, fill_stats, dir), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    size_t len;
    char *text = (char *)read_all(path, &len);
    ck_assert_uint_gt(len, strlen(PBFCL_STATS_CSV_HEADER) + 1);
    ck_assert_uint_le(len, 1000);
    ck_assert_msg(text[len - 1] == '\n', "the file ends in half a row: ...%s", text + len - 20);
    long long rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), rows++)
        if (rows > 0) {
            long long st;
            double t, ke, da, dm, ms, na;
            unsigned nm, out, nan;
            ck_assert_int_eq(sscanf(line, "%lld,%lf,%lf,%lf,%lf,%lf,%lf,%u,%u,%u", &st, &t, &ke,
                                    &da, &dm, &ms, &na, &nm, &out, &nan),
                             10);
            ck_assert_int_eq(st, rows);
        }
    ck_assert_int_ge(rows, 2);
    free(text);
    remove_tree(dir);
}
END_TEST

/* A header that cannot be written leaves no file (not an empty one). */
static int open_stats(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    pbfcl_stats_csv c;
    return pbfcl_stats_csv_open(&c, path, false) == PBFCL_ERR_IO ? 0 : 1;
}

START_TEST(stats_header_failure_leaves_no_file)
{
    const char *dir = make_tmp_dir();
    ck_assert_int_eq(with_file_limit(10, open_stats, dir), 0);
    ck_assert_int_eq(count_entries(dir), 0);
    remove_tree(dir);
}
END_TEST

/* Body velocities from particles moving rigidly, v_i = V + w x (x_i - c): the mean gives V
 * and I^-1 L gives w exactly, for a 2 x 3 x 4 block (7 fluid particles between its entries)
 * and a second body; for 4 particles on a line along x the spin about x is undefined and
 * comes out 0, the rest of w exact. */
START_TEST(body_velocities_rigid_motion)
{
    const double V[2][3] = {{0.3, -1.2, 0.5}, {-2.0, 0.1, 0.0}};
    const double W[2][3] = {{1.5, -0.7, 2.2}, {0.0, 3.0, -1.0}};
    float pos[3 * 64], vel[3 * 64];
    int phases[64];
    size_t n = 0;
    double c[2][3] = {{0.5 + 0.02 * 0.5, 0.2 + 0.02, 0.1 + 0.02 * 1.5},
                      {0.7 + 0.03 * 1.5, 0.4, 0.3}};
    for (int e = 0; e < 24 + 4; e++) {
        int b = e < 24 ? 0 : 1;
        double x[3];
        if (b == 0) {
            x[0] = 0.5 + 0.02 * (e % 2);
            x[1] = 0.2 + 0.02 * ((e / 2) % 3);
            x[2] = 0.1 + 0.02 * (e / 6);
        } else {
            x[0] = 0.7 + 0.03 * (e - 24);
            x[1] = 0.4;
            x[2] = 0.3;
        }
        for (int k = 0; k < 3; k++) {
            double r[3] = {x[0] - c[b][0], x[1] - c[b][1], x[2] - c[b][2]};
            double wxr[3] = {W[b][1] * r[2] - W[b][2] * r[1], W[b][2] * r[0] - W[b][0] * r[2],
                             W[b][0] * r[1] - W[b][1] * r[0]};
            pos[3 * n + k] = (float)x[k];
            vel[3 * n + k] = (float)(V[b][k] + wxr[k]);
        }
        phases[n++] = b + 1;
        if (e % 4 == 0) { /* a fluid particle moving fast, which must not count */
            for (int k = 0; k < 3; k++) {
                pos[3 * n + k] = 0.9f;
                vel[3 * n + k] = 50.0f;
            }
            phases[n++] = 0;
        }
    }
    pbfcl_body_motion m[2];
    memset(m, 0, sizeof m);
    pbfcl_body_velocities(pos, vel, phases, n, 2, m);
    for (int k = 0; k < 3; k++) {
        ck_assert_msg(fabs(m[0].vel[k] - V[0][k]) < 1e-5, "body 0 v[%d] %g", k, m[0].vel[k]);
        ck_assert_msg(fabs(m[0].omega[k] - W[0][k]) < 1e-3, "body 0 w[%d] %g, expected %g", k,
                      m[0].omega[k], W[0][k]);
        ck_assert_msg(fabs(m[1].vel[k] - V[1][k]) < 1e-5, "body 1 v[%d] %g", k, m[1].vel[k]);
        double want = k == 0 ? 0.0 : W[1][k]; /* the spin about the line is undefined */
        ck_assert_msg(fabs(m[1].omega[k] - want) < 1e-3, "body 1 w[%d] %g, expected %g", k,
                      m[1].omega[k], want);
    }
}
END_TEST

/* bodies.csv: the header, one row per body per frame, an existing file refused without
 * replace. */
START_TEST(body_csv_rows)
{
    const char *dir = make_tmp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, PBFCL_BODY_CSV_NAME);
    pbfcl_body_csv c;
    pbfcl_body_motion m[2] = {{{1, 2, 3}, {0, 0, 0, 1}, {4, 5, 6}, {7, 8, 9}},
                              {{0.5f, 0.25f, 0}, {0.6f, 0, 0, 0.8f}, {0, 0, 0}, {0, 0, 1}}};
    ck_assert_int_eq(pbfcl_body_csv_open(&c, path, false), PBFCL_OK);
    ck_assert_int_eq(pbfcl_body_csv_frame(&c, 0, 0.0, m, 2, false), PBFCL_OK);
    ck_assert_int_eq(pbfcl_body_csv_frame(&c, 5, 0.25, m, 2, true), PBFCL_OK);
    ck_assert_int_eq(pbfcl_body_csv_close(&c), PBFCL_OK);
    size_t len;
    unsigned char *buf = read_all(path, &len);
    ck_assert_str_eq((char *)buf, PBFCL_BODY_CSV_HEADER
                     "\n"
                     "0,0,0,1,2,3,0,0,0,1,4,5,6,7,8,9\n"
                     "0,0,1,0.5,0.25,0,0.600000024,0,0,0.800000012,0,0,0,0,0,1\n"
                     "5,0.25,0,1,-3,2,0,-0,0,1,4,-6,5,7,-9,8\n"
                     "5,0.25,1,0.5,-0,0.25,0.600000024,-0,0,0.800000012,0,-0,0,0,-1,0\n");
    free(buf);
    ck_assert_int_eq(pbfcl_body_csv_open(&c, path, false), PBFCL_ERR_IO);
    ck_assert_int_eq(pbfcl_body_csv_open(&c, path, true), PBFCL_OK);
    ck_assert_int_eq(pbfcl_body_csv_close(&c), PBFCL_OK);
    remove_tree(dir);
}
END_TEST

/* Writes frames of three bodies until the disk is full; exits 0 if a write failed as it
 * should. */
static int fill_bodies(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, PBFCL_BODY_CSV_NAME);
    pbfcl_body_csv c;
    if (pbfcl_body_csv_open(&c, path, false) != PBFCL_OK)
        return 2;
    pbfcl_body_motion m[3];
    memset(m, 0, sizeof m);
    for (int b = 0; b < 3; b++)
        m[b].pos[0] = 1.0f / 3.0f + (float)b;
    for (long long step = 1; step < 100000; step++)
        if (pbfcl_body_csv_frame(&c, step, step / 60.0, m, 3, false) != PBFCL_OK)
            return pbfcl_body_csv_close(&c) == PBFCL_OK ? 0 : 3;
    return 4;
}

/* On a full disk bodies.csv keeps whole frames only: every row whole, and each step's three
 * rows all there (the half-written frame is cut off again). Fails if frames are written
 * row by row, with buffered stdio, or not cut back. */
START_TEST(body_whole_frames_on_full_disk)
{
    const char *dir = make_tmp_dir();
    ck_assert_int_eq(with_file_limit(1000, fill_bodies, dir), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, PBFCL_BODY_CSV_NAME);
    size_t len;
    char *text = (char *)read_all(path, &len);
    ck_assert_uint_gt(len, strlen(PBFCL_BODY_CSV_HEADER) + 1);
    ck_assert_uint_le(len, 1000);
    ck_assert_msg(text[len - 1] == '\n', "the file ends in half a row: ...%s", text + len - 20);
    long long rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), rows++)
        if (rows > 0) {
            long long st;
            int body;
            double t, x;
            ck_assert_int_eq(sscanf(line, "%lld,%lf,%d,%lf", &st, &t, &body, &x), 4);
            ck_assert_int_eq(st, (rows - 1) / 3 + 1);
            ck_assert_int_eq(body, (rows - 1) % 3);
        }
    ck_assert_int_ge(rows, 1 + 3);
    ck_assert_int_eq((rows - 1) % 3, 0);
    free(text);
    remove_tree(dir);
}
END_TEST

/* A body file header that cannot be written leaves no file (not an empty one). */
static int open_bodies(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, PBFCL_BODY_CSV_NAME);
    pbfcl_body_csv c;
    return pbfcl_body_csv_open(&c, path, false) == PBFCL_ERR_IO ? 0 : 1;
}

START_TEST(body_header_failure_leaves_no_file)
{
    const char *dir = make_tmp_dir();
    ck_assert_int_eq(with_file_limit(10, open_bodies, dir), 0);
    ck_assert_int_eq(count_entries(dir), 0);
    remove_tree(dir);
}
END_TEST

static Suite *export_suite(void)
{
    Suite *s = suite_create("export");
    TCase *t = tcase_create("files");
    tcase_add_test(t, ply_round_trip_sizes);
    tcase_add_test(t, ply_z_up);
    tcase_add_test(t, frames_whole_on_full_disk);
    tcase_add_test(t, vtu_round_trip);
    tcase_add_test(t, pvd_lists_frames_with_times);
    tcase_add_test(t, export_dir_undo_removes_created);
    tcase_add_test(t, stats_whole_rows_on_full_disk);
    tcase_add_test(t, stats_header_failure_leaves_no_file);
    tcase_add_test(t, ply_frame_names);
    tcase_add_test(t, ply_write_failure);
    tcase_add_test(t, export_dir_checks);
    tcase_add_test(t, stats_csv_header_and_rows);
    tcase_add_test(t, shape_type_names);
    tcase_add_test(t, body_velocities_rigid_motion);
    tcase_add_test(t, body_csv_rows);
    tcase_add_test(t, body_whole_frames_on_full_disk);
    tcase_add_test(t, body_header_failure_leaves_no_file);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return test_run_suite(export_suite(), false);
}
