/* Output files of `pbfcl run`: PLY frames written and parsed back (header text and every
 * float, across the writer's chunk size), frame names, the export directory check, and the
 * statistics CSV header and rows. */
#include "export_ply.h"
#include "stats_csv.h"
#include "test_util.h"

#include <dirent.h>
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

static float le_float(const unsigned char *b)
{
    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Writes n random particles, parses the file back as a PLY reader would, compares. */
static void ply_round_trip(size_t n, bool with_vel, bool with_density)
{
    const char *dir = make_tmp_dir();
    uint64_t rng = 1234 + n;
    float *pos = malloc((n * 3 + 1) * sizeof *pos), *vel = malloc((n * 3 + 1) * sizeof *vel);
    float *dens = malloc((n + 1) * sizeof *dens);
    for (size_t i = 0; i < 3 * n; i++) {
        pos[i] = test_randf(&rng, -2.0f, 2.0f);
        vel[i] = test_randf(&rng, -10.0f, 10.0f);
    }
    for (size_t i = 0; i < n; i++)
        dens[i] = test_randf(&rng, 900.0f, 1100.0f);
    char path[256];
    ck_assert_int_eq(pbfcl_ply_frame_path(path, sizeof path, dir, 42), PBFCL_OK);
    ck_assert_int_eq(
        pbfcl_ply_write(path, n, pos, with_vel ? vel : NULL, with_density ? dens : NULL), PBFCL_OK);
    ck_assert_int_eq(count_entries(dir), 1); /* no temporary file left behind */
    size_t len;
    unsigned char *buf = read_all(path, &len);
    char expect[512];
    snprintf(expect, sizeof expect,
             "ply\nformat binary_little_endian 1.0\ncomment written by pbfcl\n"
             "element vertex %zu\nproperty float x\nproperty float y\nproperty float z\n"
             "property float vx\nproperty float vy\nproperty float vz\n"
             "property float density\nend_header\n",
             n);
    size_t hlen = strlen(expect);
    ck_assert_uint_ge(len, hlen);
    ck_assert_int_eq(memcmp(buf, expect, hlen), 0);
    ck_assert_uint_eq(len, hlen + n * 7 * 4);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *rec = buf + hlen + i * 28;
        for (int k = 0; k < 3; k++) {
            ck_assert_float_eq(le_float(rec + 4 * k), pos[3 * i + k]);
            ck_assert_float_eq(le_float(rec + 12 + 4 * k), with_vel ? vel[3 * i + k] : 0.0f);
        }
        ck_assert_float_eq(le_float(rec + 24), with_density ? dens[i] : 0.0f);
    }
    free(buf);
    free(pos);
    free(vel);
    free(dens);
    remove_tree(dir);
}

START_TEST(ply_round_trip_sizes)
{
    static const size_t sizes[] = {0, 1, 7, 4095, 4096, 4097, 10001};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        ply_round_trip(sizes[k], true, true);
    ply_round_trip(5, false, true);
    ply_round_trip(5, true, false);
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
}
END_TEST

/* A write that cannot happen fails with PBFCL_ERR_IO and leaves nothing behind. */
START_TEST(ply_write_failure)
{
    const char *dir = make_tmp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/missing/frame_00000.ply", dir);
    float p[3] = {0, 0, 0};
    ck_assert_int_eq(pbfcl_ply_write(path, 1, p, NULL, NULL), PBFCL_ERR_IO);
    ck_assert_int_eq(count_entries(dir), 0);
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

START_TEST(stats_csv_header_and_rows)
{
    ck_assert_str_eq(PBFCL_STATS_CSV_HEADER,
                     "step,time,kinetic_energy,density_error_avg,density_error_max,max_speed,"
                     "neighbors_avg,neighbors_max,outside,nan");
    const char *dir = make_tmp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    pbfcl_stats_csv c;
    ck_assert_int_eq(pbfcl_stats_csv_open(&c, path), PBFCL_OK);
    pbfcl_sim_stats s;
    memset(&s, 0, sizeof s);
    for (int step = 1; step <= 3; step++) {
        s.kinetic_energy = 0.5 * step;
        s.density_error_avg = 0.25 * step;
        s.density_error_max = 2.0 * step;
        s.max_speed = 1.5 * step;
        s.neighbors_avg = 30.125;
        s.neighbors_max = 40u + (unsigned)step;
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
    /* closing with remove_file deletes it; a file in a missing directory cannot be opened */
    ck_assert_int_eq(pbfcl_stats_csv_open(&c, path), PBFCL_OK);
    ck_assert_int_eq(pbfcl_stats_csv_close(&c, 1), PBFCL_OK);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/missing/stats.csv", dir);
    ck_assert_int_eq(pbfcl_stats_csv_open(&c, path), PBFCL_ERR_IO);
    remove_tree(dir);
}
END_TEST

static Suite *export_suite(void)
{
    Suite *s = suite_create("export");
    TCase *t = tcase_create("files");
    tcase_add_test(t, ply_round_trip_sizes);
    tcase_add_test(t, ply_frame_names);
    tcase_add_test(t, ply_write_failure);
    tcase_add_test(t, export_dir_checks);
    tcase_add_test(t, stats_csv_header_and_rows);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return test_run_suite(export_suite(), false);
}
