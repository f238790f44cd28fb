/* Triangle meshes: the OBJ reader against hand-worked files (and bad ones, named by file and
 * line), the closed-surface and volume checks, and mesh shapes sampled on the lattice against
 * the lattice points each shape holds by its closed form (half-spaces of a convex solid, a
 * union of boxes), computed here without the product's ray test. */
#include "scene/obj_mesh.h"
#include "scene/scene.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- the OBJ reader ------------------------------------------------------------------- */

/* Every statement the reader meets: comments, blank lines, vt/vn/o/g/s/usemtl/mtllib/l (all
 * ignored), CRLF line ends, tabs, vertices with a weight, faces as i, i/t, i//n, i/t/n and
 * negative indices, and a quad and a pentagon split into fans (a, b, c), (a, c, d), ... */
static const char hand_obj[] = "# a hand-worked file\n"
                               "mtllib x.mtl\r\n"
                               "o thing\n"
                               "v 0 0 0\n"               /* 1 */
                               "v 1 0 0 1.0\n"           /* 2, with a weight */
                               "\tv 1 1 0\n"             /* 3 */
                               "v 0 1 0\r\n"             /* 4 */
                               "vt 0.5 0.5\n"            /* line 8 */
                               "vn 0 0 1\n"              /* 9 */
                               "\n"                      /* 10 */
                               "g side\n"                /* 11 */
                               "s off\n"                 /* 12 */
                               "usemtl red\n"            /* 13 */
                               "f 1/1/1 2/1/1 3/1/1\n"   /* 14: one triangle */
                               "f 1//1 3//1 4//1\r\n"    /* 15 */
                               "f -4 -3 -2 -1\n"         /* 16: the quad 1 2 3 4 */
                               "v 0.5 2 0\n"             /* 5, line 17 */
                               "f 1/1 2/1 3/1 5/1 4/1\n" /* 18: a pentagon */
                               "l 1 2\n"                 /* 19 */
                               "f 2 3 5\n";              /* 20 */

START_TEST(obj_reads_hand_worked_file)
{
    pbfcl_obj m;
    ck_assert_int_eq(pbfcl_obj_parse("hand.obj", hand_obj, &m), PBFCL_OK);
    ck_assert_int_eq(m.vertex_count, 5);
    const float want_v[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0.5f, 2, 0};
    for (int k = 0; k < 15; k++)
        ck_assert_float_eq(m.vertices[k], want_v[k]);
    /* 1 + 1 + 2 (the quad) + 3 (the pentagon) + 1 */
    const int want_t[][3] = {{0, 1, 2}, {0, 2, 3}, {0, 1, 2}, {0, 2, 3},
                             {0, 1, 2}, {0, 2, 4}, {0, 4, 3}, {1, 2, 4}};
    const int want_line[] = {14, 15, 16, 16, 18, 18, 18, 20};
    ck_assert_int_eq(m.triangle_count, 8);
    for (int t = 0; t < 8; t++) {
        for (int j = 0; j < 3; j++)
            ck_assert_int_eq(m.triangles[3 * t + j], want_t[t][j]);
        ck_assert_int_eq(m.lines[t], want_line[t]);
    }
    pbfcl_obj_free(&m);
    pbfcl_obj_free(&m); /* twice: a freed mesh is zeroed */
}
END_TEST

/* A bad file and two parts of its message (the first names the file and line). */
static const struct {
    const char *text, *part1, *part2;
} bad_objs[] = {
    {"v 0 0 0\nv 1 0 x\n", "bad.obj:2:", "'x' is not a number"},
    {"v 0 0 0\nv 1 0\n", "bad.obj:2:", "this one has 2 numbers"},
    {"v 0 0 0\n\nv 1 0 1e39\n", "bad.obj:3:", "not a finite single-precision"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "bad.obj:4:", "refers to vertex 0"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\nv 1 1 1\n", "bad.obj:4:", "3 vertices are defined"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", "bad.obj:4:", "refers to vertex -4"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\n# two\nf 1 2\n", "bad.obj:5:", "at least 3 vertices"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -3\n", "bad.obj:4:", "uses vertex 1 twice"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/a 2 3\n", "bad.obj:4:", "'1/a' is not a face vertex"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3.5\n", "bad.obj:4:", "'3.5' is not a face vertex"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 # c\n", "bad.obj:4:", "'#' is not a face vertex"},
    {"v 0 0 0\nv 1 0 0\nv 0 1 0\n", "bad.obj:", "has no faces"},
    {"", "bad.obj:", "has no faces"},
};

START_TEST(obj_bad_files_named)
{
    pbfcl_obj m;
    const char *path = test_temp_write("bad.obj", bad_objs[_i].text);
    test_capture_begin();
    pbfcl_status st = pbfcl_obj_load(path, &m);
    const char *msg = test_capture_end();
    remove(path);
    test_temp_remove();
    ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_null(m.vertices);
    ck_assert_contains(msg, bad_objs[_i].part1);
    ck_assert_contains(msg, bad_objs[_i].part2);
}
END_TEST

START_TEST(obj_missing_or_not_a_file)
{
    pbfcl_obj m;
    test_capture_begin();
    pbfcl_status st = pbfcl_obj_load("/nonexistent/x.obj", &m);
    const char *msg = test_capture_end();
    ck_assert_int_eq(st, PBFCL_ERR_IO);
    ck_assert_contains(msg, "cannot open OBJ file '/nonexistent/x.obj'");
    test_capture_begin();
    st = pbfcl_obj_load("/tmp", &m);
    msg = test_capture_end();
    ck_assert_int_eq(st, PBFCL_ERR_IO);
    ck_assert_contains(msg, "is a directory");
}
END_TEST

/* A NUL byte inside an OBJ file (the text would end there, and the faces after it would be
 * lost) is an error naming the line, not a shorter mesh. */
START_TEST(obj_nul_byte_named)
{
    static const char text[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 \0 # cut\nv 0 0 1\n";
    const char *path = test_temp_write("nul.obj", "");
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
    fclose(f);
    pbfcl_obj m;
    test_capture_begin();
    pbfcl_status st = pbfcl_obj_load(path, &m);
    const char *msg = test_capture_end();
    test_temp_remove();
    ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_ptr_null(m.vertices);
    ck_assert_contains(msg, "nul.obj': line 4, column 9 (byte 32) is a NUL byte");
}
END_TEST

/* --- closed surfaces and volumes ----------------------------------------------------- */

/* The unit cube, outward faces, as quads (12 triangles). */
#define CUBE_V "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
#define CUBE_F_NO_TOP "f 1 4 3 2\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n"
#define CUBE_TOP "f 5 6 7 8\n"

START_TEST(obj_closed_and_volume)
{
    pbfcl_obj m;
    pbfcl_obj_edge_fault e;
    ck_assert_int_eq(pbfcl_obj_parse("cube.obj", CUBE_V CUBE_F_NO_TOP CUBE_TOP, &m), PBFCL_OK);
    ck_assert(pbfcl_obj_closed(&m, &e));
    ck_assert(test_close(pbfcl_obj_volume(&m), 1.0, 0.0, 1e-12));
    pbfcl_obj_free(&m);
    /* inside out: every face reversed, the volume -1 */
    ck_assert_int_eq(pbfcl_obj_parse("cube.obj",
                                     CUBE_V "f 2 3 4 1\nf 5 6 2 1\nf 6 7 3 2\nf 7 8 4 3\nf 8 5 1 "
                                            "4\nf 8 7 6 5\n",
                                     &m),
                     PBFCL_OK);
    ck_assert(pbfcl_obj_closed(&m, &e));
    ck_assert(test_close(pbfcl_obj_volume(&m), -1.0, 0.0, 1e-12));
    pbfcl_obj_free(&m);
    /* no top: the top's 4 edges (between vertices 5-6, 6-7, 7-8, 8-5) have one face each; the
     * first of them in vertex order is 5-6, from the face on line 10 */
    ck_assert_int_eq(pbfcl_obj_parse("open.obj", CUBE_V CUBE_F_NO_TOP, &m), PBFCL_OK);
    ck_assert(!pbfcl_obj_closed(&m, &e));
    ck_assert_int_eq(e.a, 4);
    ck_assert_int_eq(e.b, 5);
    ck_assert_int_eq(e.faces, 1);
    ck_assert_int_eq(e.line, 10);
    ck_assert(!e.same_way);
    pbfcl_obj_free(&m);
    /* the top reversed: its edges meet the sides' running the same way */
    ck_assert_int_eq(pbfcl_obj_parse("flip.obj", CUBE_V CUBE_F_NO_TOP "f 8 7 6 5\n", &m), PBFCL_OK);
    ck_assert(!pbfcl_obj_closed(&m, &e));
    ck_assert(e.same_way);
    ck_assert_int_eq(e.faces, 2);
    pbfcl_obj_free(&m);
    /* the top twice: 3 faces at its edges */
    ck_assert_int_eq(pbfcl_obj_parse("extra.obj", CUBE_V CUBE_F_NO_TOP CUBE_TOP CUBE_TOP, &m),
                     PBFCL_OK);
    ck_assert(!pbfcl_obj_closed(&m, &e));
    ck_assert_int_eq(e.faces, 3);
    pbfcl_obj_free(&m);
    /* the top with its own copies of vertices 5-8 (as exporters write split normals): the
     * copies are at the same positions, so the surface is closed */
    ck_assert_int_eq(pbfcl_obj_parse("split.obj",
                                     CUBE_V CUBE_F_NO_TOP
                                     "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\nf 9 10 11 12\n",
                                     &m),
                     PBFCL_OK);
    ck_assert(pbfcl_obj_closed(&m, &e));
    pbfcl_obj_free(&m);
    /* the tetrahedron (0,0,0), (1,0,0), (0,1,0), (0,0,1): volume 1/6 */
    ck_assert_int_eq(
        pbfcl_obj_parse("tet.obj",
                        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
                        &m),
        PBFCL_OK);
    ck_assert(pbfcl_obj_closed(&m, &e));
    ck_assert(test_close(pbfcl_obj_volume(&m), 1.0 / 6.0, 0.0, 1e-12));
    pbfcl_obj_free(&m);
}
END_TEST

/* --- sampling against closed forms ----------------------------------------------------- */

/* A scene: the domain [0, 1]^3, r = 0.05 (lattice centres 0.05, 0.15, ..., 0.95), fluid
 * everywhere, and one obstacle (or body) from mesh.obj. */
#define MESH_SCENE(shape)                                                                          \
    "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": 0.05, \"fluid\": "    \
    "[{\"min\": [0,0,0], \"max\": [1,1,1]}], " shape "}"
#define MESH_OBSTACLE(placement)                                                                   \
    MESH_SCENE("\"obstacles\": [{\"mesh\": {\"file\": \"mesh.obj\"" placement "}}]")

/* A convex solid as half-spaces n . p <= d (unit n), or a union of boxes. */
typedef struct solid {
    int planes;
    double n[96][3], d[96];
    int boxes;
    double lo[2][3], hi[2][3];
} solid;

/* The signed distance-like margin of p: max over planes of n . p - d (convex), or the
 * negated depth in the union of boxes (max over axes of the distance outside each box's
 * slab, least over the boxes). <= 0 inside; for a point outside near one face, its distance. */
static double margin(const solid *s, const double p[3])
{
    if (s->planes) {
        double m = -INFINITY;
        for (int i = 0; i < s->planes; i++)
            m = fmax(m, s->n[i][0] * p[0] + s->n[i][1] * p[1] + s->n[i][2] * p[2] - s->d[i]);
        return m;
    }
    double best = INFINITY;
    for (int b = 0; b < s->boxes; b++) {
        double m = -INFINITY;
        for (int k = 0; k < 3; k++)
            m = fmax(m, fmax(s->lo[b][k] - p[k], p[k] - s->hi[b][k]));
        best = fmin(best, m);
    }
    return best;
}

/* Adds the plane through a, b, c (outward normal by the right-hand rule). */
static void add_plane(solid *s, const double a[3], const double b[3], const double c[3])
{
    double u[3], v[3], n[3];
    for (int k = 0; k < 3; k++) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
    }
    n[0] = u[1] * v[2] - u[2] * v[1];
    n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; k++)
        s->n[s->planes][k] = n[k] / len;
    s->d[s->planes] = (n[0] * a[0] + n[1] * a[1] + n[2] * a[2]) / len;
    s->planes++;
}

/* The icosahedron of radius 0.3 at (0.5, 0.5, 0.5), each face split in 4 and the new vertices
 * pushed out to the sphere (80 faces), as OBJ text and as half-spaces. */
static void icosphere(char *text, size_t size, solid *s)
{
    const double t = (1.0 + sqrt(5.0)) / 2.0;
    double v[42][3] = {{-1, t, 0},  {1, t, 0},  {-1, -t, 0}, {1, -t, 0}, {0, -1, t},  {0, 1, t},
                       {0, -1, -t}, {0, 1, -t}, {t, 0, -1},  {t, 0, 1},  {-t, 0, -1}, {-t, 0, 1}};
    int f[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                    {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                    {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                    {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    int nv = 12, faces[80][3], nf = 0, mid[12][12];
    memset(mid, -1, sizeof mid);
    for (int i = 0; i < 20; i++) {
        int m[3];
        for (int e = 0; e < 3; e++) {
            int a = f[i][e], b = f[i][(e + 1) % 3], lo = a < b ? a : b, hi = a < b ? b : a;
            if (mid[lo][hi] < 0) {
                for (int k = 0; k < 3; k++)
                    v[nv][k] = (v[a][k] + v[b][k]) / 2.0;
                mid[lo][hi] = nv++;
            }
            m[e] = mid[lo][hi];
        }
        int sub[4][3] = {{f[i][0], m[0], m[2]},
                         {f[i][1], m[1], m[0]},
                         {f[i][2], m[2], m[1]},
                         {m[0], m[1], m[2]}};
        memcpy(faces[nf], sub, sizeof sub);
        nf += 4;
    }
    size_t len = 0;
    float fv[42][3];
    for (int i = 0; i < nv; i++) {
        double l = sqrt(v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]);
        for (int k = 0; k < 3; k++)
            fv[i][k] = (float)(0.5 + 0.3 * v[i][k] / l);
        len += (size_t)snprintf(text + len, size - len, "v %.9g %.9g %.9g\n", fv[i][0], fv[i][1],
                                fv[i][2]);
    }
    s->planes = 0;
    for (int i = 0; i < nf; i++) {
        len += (size_t)snprintf(text + len, size - len, "f %d %d %d\n", faces[i][0] + 1,
                                faces[i][1] + 1, faces[i][2] + 1);
        double a[3], b[3], c[3];
        for (int k = 0; k < 3; k++) {
            a[k] = fv[faces[i][0]][k];
            b[k] = fv[faces[i][1]][k];
            c[k] = fv[faces[i][2]][k];
        }
        add_plane(s, a, b, c);
    }
}

/* One case: the OBJ text, the placement keys, the solid it should be. */
typedef struct mesh_case {
    const char *name;
    char obj[8192];
    const char *placement;
    solid s;
} mesh_case;

/* The cube [0.35, 0.65]^3: its faces, edges and corners on lattice points (0.35 .. 0.65, 4
 * per axis), and rays along x through its face diagonals, edges and corners. */
static void case_cube(mesh_case *c)
{
    c->name = "lattice-aligned cube";
    snprintf(c->obj, sizeof c->obj, "%s",
             "v 0.35 0.35 0.35\nv 0.65 0.35 0.35\nv 0.65 0.65 0.35\nv 0.35 0.65 0.35\n"
             "v 0.35 0.35 0.65\nv 0.65 0.35 0.65\nv 0.65 0.65 0.65\nv 0.35 0.65 0.65\n"
             "f 1 4 3\nf 1 3 2\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\n"
             "f 4 1 5\nf 4 5 8\nf 5 6 7\nf 5 7 8\n");
    c->placement = "";
    c->s.boxes = 1;
    for (int k = 0; k < 3; k++) {
        c->s.lo[0][k] = 0.35;
        c->s.hi[0][k] = 0.65;
    }
}

/* A tetrahedron with corners on and off the lattice. */
static void case_tetrahedron(mesh_case *c)
{
    static const double v[4][3] = {
        {0.15, 0.15, 0.15}, {0.9, 0.2, 0.25}, {0.3, 0.85, 0.2}, {0.35, 0.3, 0.88}};
    c->name = "tetrahedron";
    size_t len = 0;
    for (int i = 0; i < 4; i++)
        len += (size_t)snprintf(c->obj + len, sizeof c->obj - len, "v %g %g %g\n", v[i][0], v[i][1],
                                v[i][2]);
    snprintf(c->obj + len, sizeof c->obj - len, "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
    c->placement = "";
    double fv[4][3];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++)
            fv[i][k] = (float)v[i][k];
    add_plane(&c->s, fv[0], fv[2], fv[1]);
    add_plane(&c->s, fv[0], fv[1], fv[3]);
    add_plane(&c->s, fv[0], fv[3], fv[2]);
    add_plane(&c->s, fv[1], fv[2], fv[3]);
}

/* An L-shaped prism (not convex): the boxes [0.1, 0.7] x [0.1, 0.3] and [0.1, 0.3] x
 * [0.1, 0.8], z in [0.2, 0.6], written as one closed surface of 8 + 8 vertices. */
static void case_l_prism(mesh_case *c)
{
    c->name = "L-shaped prism";
    snprintf(c->obj, sizeof c->obj, "%s",
             "v 0.1 0.1 0.2\nv 0.7 0.1 0.2\nv 0.7 0.3 0.2\nv 0.3 0.3 0.2\nv 0.3 0.8 0.2\n"
             "v 0.1 0.8 0.2\n"
             "v 0.1 0.1 0.6\nv 0.7 0.1 0.6\nv 0.7 0.3 0.6\nv 0.3 0.3 0.6\nv 0.3 0.8 0.6\n"
             "v 0.1 0.8 0.6\n"
             "f 1 6 5 4\nf 1 4 3 2\n"             /* the bottom (z = 0.2), facing -z */
             "f 7 8 9 10\nf 7 10 11 12\n"         /* the top */
             "f 1 2 8 7\nf 2 3 9 8\nf 3 4 10 9\n" /* the sides */
             "f 4 5 11 10\nf 5 6 12 11\nf 6 1 7 12\n");
    c->placement = "";
    c->s.boxes = 2;
    const double lo[2][3] = {{0.1, 0.1, 0.2}, {0.1, 0.1, 0.2}};
    const double hi[2][3] = {{0.7, 0.3, 0.6}, {0.3, 0.8, 0.6}};
    memcpy(c->s.lo, lo, sizeof lo);
    memcpy(c->s.hi, hi, sizeof hi);
}

/* The unit cube scaled by (0.5, 0.2, 0.3), turned 30 degrees about z and moved by
 * (0.4, 0.2, 0.3): a box whose faces are 30 degrees off the lattice. */
static void case_placed_box(mesh_case *c)
{
    c->name = "scaled, rotated and moved cube";
    snprintf(c->obj, sizeof c->obj, "%s",
             CUBE_V "f 1 4 3 2\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\nf 5 6 7 8\n");
    c->placement = ", \"scale\": [0.5, 0.2, 0.3], \"rotate\": [0, 0, 30], \"translate\": "
                   "[0.4, 0.2, 0.3]";
    double a = 30.0 * 3.14159265358979323846 / 180.0, cs = cos(a), sn = sin(a);
    /* the box's frame: the origin at the translation, axes e_x = (cos, sin, 0), e_y =
     * (-sin, cos, 0), e_z; it spans [0, 0.5] x [0, 0.2] x [0, 0.3] in that frame */
    double e[3][3] = {{cs, sn, 0}, {-sn, cs, 0}, {0, 0, 1}}, o[3] = {0.4, 0.2, 0.3},
           size[3] = {0.5, 0.2, 0.3};
    for (int k = 0; k < 3; k++) {
        double od = e[k][0] * o[0] + e[k][1] * o[1] + e[k][2] * o[2];
        memcpy(c->s.n[c->s.planes], e[k], sizeof e[k]);
        c->s.d[c->s.planes++] = od + size[k];
        for (int j = 0; j < 3; j++)
            c->s.n[c->s.planes][j] = -e[k][j];
        c->s.d[c->s.planes++] = -od;
    }
}

static void case_icosphere(mesh_case *c)
{
    c->name = "icosphere (80 faces)";
    c->placement = "";
    icosphere(c->obj, sizeof c->obj, &c->s);
}

/* Two closed boxes in one file that overlap, [0.2, 0.6]^3 and [0.4, 0.8] x [0.3, 0.7] x
 * [0.25, 0.65]: the mesh intersects itself, and the overlap (where the ray's crossings wind
 * twice) is inside, as in the union of the boxes. */
static void case_two_boxes(mesh_case *c)
{
    c->name = "two overlapping boxes";
    c->placement = "";
    c->s.boxes = 2;
    const double lo[2][3] = {{0.2, 0.2, 0.2}, {0.4, 0.3, 0.25}};
    const double hi[2][3] = {{0.6, 0.6, 0.6}, {0.8, 0.7, 0.65}};
    memcpy(c->s.lo, lo, sizeof lo);
    memcpy(c->s.hi, hi, sizeof hi);
    size_t len = 0;
    for (int b = 0; b < 2; b++) {
        for (int v = 0; v < 8; v++) /* CUBE_V's order: bit 0 x, bit 1 y (1 2 -> 3 4), 4 z */
            len += (size_t)snprintf(c->obj + len, sizeof c->obj - len, "v %g %g %g\n",
                                    (v & 1) ^ ((v >> 1) & 1) ? hi[b][0] : lo[b][0],
                                    (v & 2) ? hi[b][1] : lo[b][1], (v & 4) ? hi[b][2] : lo[b][2]);
        int o = 8 * b;
        len += (size_t)snprintf(c->obj + len, sizeof c->obj - len,
                                "f %d %d %d %d\nf %d %d %d %d\nf %d %d %d %d\nf %d %d %d %d\n"
                                "f %d %d %d %d\nf %d %d %d %d\n",
                                o + 1, o + 4, o + 3, o + 2, o + 1, o + 2, o + 6, o + 5, o + 2,
                                o + 3, o + 7, o + 6, o + 3, o + 4, o + 8, o + 7, o + 4, o + 1,
                                o + 5, o + 8, o + 5, o + 6, o + 7, o + 8);
    }
}

static void (*const mesh_cases[])(mesh_case *) = {
    case_cube, case_tetrahedron, case_l_prism, case_placed_box, case_icosphere, case_two_boxes};

/* The fill of a scene with the mesh obstacle holds, as static particles, exactly the lattice
 * points the solid holds (margin <= tol, tol 1e-4 spacing as on every shape); no lattice
 * point lies in the band where rounding could decide (tol < |margin| < 1e-3 spacing), so the
 * comparison is exact; the fluid holds every other lattice point once. */
START_TEST(mesh_sampling_matches_closed_form)
{
    static mesh_case c;
    memset(&c, 0, sizeof c);
    mesh_cases[_i](&c);
    char scene[1024];
    snprintf(scene, sizeof scene, MESH_OBSTACLE("%s"), c.placement);
    test_temp_write("mesh.obj", c.obj);
    pbfcl_scene s;
    ck_assert_int_eq(pbfcl_scene_load(test_temp_write("scene.json", scene), &s), PBFCL_OK);
    ck_assert_int_eq(s.obstacles[0].kind, PBFCL_SHAPE_MESH);
    float *p = NULL;
    size_t n = 0;
    ck_assert_int_eq(pbfcl_scene_fill(&s, &p, &n), PBFCL_OK);
    ck_assert_uint_eq(n, 1000u); /* every lattice point once, fluid or static */
    int *phase = malloc(n * sizeof *phase);
    ck_assert_int_eq(pbfcl_scene_phases(&s, phase, n), PBFCL_OK);
    double tol = 1e-4 * 0.1;
    size_t want_inside = 0, statics = 0;
    for (int a = 0; a < 10; a++)
        for (int b = 0; b < 10; b++)
            for (int d = 0; d < 10; d++) {
                double q[3] = {0.05 + 0.1 * a, 0.05 + 0.1 * b, 0.05 + 0.1 * d};
                double m = margin(&c.s, q);
                ck_assert_msg(fabs(m) <= tol || fabs(m) >= 1e-3 * 0.1,
                              "%s: (%g, %g, %g) is %g from the surface: a test point too near "
                              "to call",
                              c.name, q[0], q[1], q[2], m);
                want_inside += m <= tol;
            }
    for (size_t i = 0; i < n; i++) {
        double q[3] = {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
        bool in = margin(&c.s, q) <= tol;
        ck_assert_msg(in == (phase[i] == -1), "%s: particle at (%g, %g, %g) has phase %d, %s",
                      c.name, q[0], q[1], q[2], phase[i],
                      in ? "inside the solid" : "outside the solid");
        statics += phase[i] == -1;
    }
    printf("%s: %zu static particles, %zu lattice points inside by the closed form\n", c.name,
           statics, want_inside);
    ck_assert_uint_eq(statics, want_inside);
    ck_assert_uint_gt(statics, 0);
    free(phase);
    free(p);
    test_temp_remove();
}
END_TEST

/* A body from a mesh: the cube case as bodies[0] holds the cube's 4^3 lattice points, phase 1. */
START_TEST(mesh_body_sampled)
{
    static mesh_case c;
    memset(&c, 0, sizeof c);
    case_cube(&c);
    test_temp_write("mesh.obj", c.obj);
    pbfcl_scene s;
    const char *text =
        MESH_SCENE("\"bodies\": [{\"mesh\": {\"file\": \"mesh.obj\"}, \"density\": 500}]");
    ck_assert_int_eq(pbfcl_scene_load(test_temp_write("scene.json", text), &s), PBFCL_OK);
    test_temp_remove();
    ck_assert_int_eq(s.bodies[0].shape.kind, PBFCL_SHAPE_MESH);
    ck_assert_uint_eq(pbfcl_scene_body_walk(&s, 0, NULL), 64u);
    size_t n = pbfcl_scene_count(&s);
    ck_assert_uint_eq(n, 1000u);
    int *phase = malloc(n * sizeof *phase);
    ck_assert_int_eq(pbfcl_scene_phases(&s, phase, n), PBFCL_OK);
    size_t ones = 0;
    for (size_t i = 0; i < n; i++)
        ones += phase[i] == 1;
    ck_assert_uint_eq(ones, 64u);
    free(phase);
}
END_TEST

/* --- row by row against point by point ------------------------------------------------ */

/* A UV sphere of `segments` x `rings` (2 segments (rings - 1) triangles), centre c, radius
 * rad, as OBJ text (malloc'ed). */
static char *uv_sphere(int segments, int rings, const double c[3], double rad)
{
    size_t size = 64u * (size_t)(segments * rings + 2) * 3, len = 0;
    char *text = malloc(size);
    const double pi = 3.14159265358979323846;
    len += (size_t)snprintf(text + len, size - len, "v %.9g %.9g %.9g\n", c[0], c[1], c[2] + rad);
    for (int i = 1; i < rings; i++)
        for (int j = 0; j < segments; j++) {
            double th = pi * i / rings, ph = 2.0 * pi * j / segments;
            len += (size_t)snprintf(text + len, size - len, "v %.9g %.9g %.9g\n",
                                    c[0] + rad * sin(th) * cos(ph), c[1] + rad * sin(th) * sin(ph),
                                    c[2] + rad * cos(th));
        }
    len += (size_t)snprintf(text + len, size - len, "v %.9g %.9g %.9g\n", c[0], c[1], c[2] - rad);
    int last = segments * (rings - 1) + 2;
#define RING(i, j) (2 + ((i)-1) * segments + (j) % segments)
    for (int j = 0; j < segments; j++)
        len += (size_t)snprintf(text + len, size - len, "f 1 %d %d\n", RING(1, j), RING(1, j + 1));
    for (int i = 1; i < rings - 1; i++)
        for (int j = 0; j < segments; j++)
            len += (size_t)snprintf(text + len, size - len, "f %d %d %d %d\n", RING(i, j),
                                    RING(i + 1, j), RING(i + 1, j + 1), RING(i, j + 1));
    for (int j = 0; j < segments; j++)
        len += (size_t)snprintf(text + len, size - len, "f %d %d %d\n", last,
                                RING(rings - 1, j + 1), RING(rings - 1, j));
#undef RING
    return text;
}

/* The octahedron of radius 0.3 about (0.45, 0.45, 0.45): at r = 0.05 its corners are lattice
 * points and its edges pass through lattice points. */
static const char octahedron[] = "v 0.75 0.45 0.45\nv 0.15 0.45 0.45\nv 0.45 0.75 0.45\n"
                                 "v 0.45 0.15 0.45\nv 0.45 0.45 0.75\nv 0.45 0.45 0.15\n"
                                 "f 1 3 5\nf 3 2 5\nf 2 4 5\nf 4 1 5\n"
                                 "f 3 1 6\nf 2 3 6\nf 4 2 6\nf 1 4 6\n";

/* Awkward radii: the lattice through the cube's and the octahedron's corners (0.05), half of
 * it, one that meets nothing, and a fine one. */
static const double row_radii[] = {0.05, 0.025, 0.0371, 0.0125};
enum { ROW_RADII = sizeof row_radii / sizeof row_radii[0], ROW_MESHES = 9 };

/* Mesh i of the row tests as OBJ text (malloc'ed) and its placement keys. */
static char *row_mesh(int i, const char **placement)
{
    *placement = "";
    if (i == 6)
        return strdup(octahedron);
    if (i == 8) { /* the lattice-aligned cube shrunk by 0.8e-5: at r = 0.05 its faces pass
                   * 0.8 tol from lattice points, which count as inside */
        char *text = malloc(1024);
        double lo = 0.35 + 0.8e-5, hi = 0.65 - 0.8e-5;
        size_t len = 0;
        for (int v = 0; v < 8; v++)
            len += (size_t)snprintf(text + len, 1024 - len, "v %.9g %.9g %.9g\n",
                                    (v & 1) ^ ((v >> 1) & 1) ? hi : lo, (v & 2) ? hi : lo,
                                    (v & 4) ? hi : lo);
        snprintf(text + len, 1024 - len, CUBE_F_NO_TOP CUBE_TOP);
        return text;
    }
    if (i == 7) /* 48 x 43: 4,032 triangles, its poles and equator on lattice rows */
        return uv_sphere(48, 43, (const double[3]){0.45, 0.45, 0.45}, 0.3);
    static mesh_case c;
    memset(&c, 0, sizeof c);
    mesh_cases[i](&c);
    *placement = c.placement;
    return strdup(c.obj);
}

/* The lattice points in obstacle 0 of s by the point test (pbfcl_scene_mesh_inside) at every
 * lattice point of the domain, in the walk's order, into out; returns their count. */
static size_t point_by_point(const pbfcl_scene *s, float *out)
{
    double r = s->particle_radius, spacing = 2.0 * r, tol = 1e-4 * (2.0 * r);
    double origin[3] = {s->domain_min[0] + r, s->domain_min[1] + r, s->domain_min[2] + r};
    long long count[3];
    for (int k = 0; k < 3; k++)
        count[k] = (long long)floor((s->domain_max[k] - r - origin[k]) / spacing + 1e-4) + 1;
    size_t n = 0;
    for (long long a = 0; a < count[0]; a++)
        for (long long b = 0; b < count[1]; b++)
            for (long long c = 0; c < count[2]; c++) {
                double p[3] = {origin[0] + spacing * a, origin[1] + spacing * b,
                               origin[2] + spacing * c};
                if (!pbfcl_scene_mesh_inside(s, &s->obstacles[0], p, tol))
                    continue;
                for (int k = 0; k < 3; k++)
                    out[3 * n + k] = (float)p[k];
                n++;
            }
    return n;
}

/* The row-by-row sampling of a mesh obstacle (what fills a scene) gives exactly the points the
 * point test gives one by one, on every mesh above (lattice-aligned corners and edges, rows
 * through vertices and edges, a self-intersecting mesh, 4,032 triangles, faces within tol of
 * lattice points) at every radius. */
START_TEST(mesh_rows_match_point_test)
{
    int mesh = _i / ROW_RADII;
    double r = row_radii[_i % ROW_RADII];
    const char *placement;
    char *obj = row_mesh(mesh, &placement), scene[1024];
    snprintf(scene, sizeof scene,
             "{\"domain\": {\"min\": [0,0,0], \"max\": [1,1,1]}, \"particle_radius\": %g, "
             "\"fluid\": [{\"min\": [0,0,0], \"max\": [1,1,1]}], \"obstacles\": [{\"mesh\": "
             "{\"file\": \"mesh.obj\"%s}}]}",
             r, placement);
    test_temp_write("mesh.obj", obj);
    free(obj);
    pbfcl_scene s;
    ck_assert_int_eq(pbfcl_scene_load(test_temp_write("scene.json", scene), &s), PBFCL_OK);
    test_temp_remove();
    size_t cap = 3 * 100 * 100 * 100;
    float *rows = malloc(cap * sizeof *rows), *points = malloc(cap * sizeof *points);
    size_t n = pbfcl_scene_obstacle_walk(&s, 0, rows), want = point_by_point(&s, points);
    printf("mesh %d (%d triangles), r = %g: %zu points row by row, %zu point by point\n", mesh,
           s.obstacles[0].mesh_count, r, n, want);
    ck_assert_uint_eq(n, want);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < 3 * n; i++)
        ck_assert_msg(rows[i] == points[i], "mesh %d, r = %g: point %zu differs", mesh, r, i / 3);
    free(rows);
    free(points);
}
END_TEST

/* --- bad meshes in scenes --------------------------------------------------------------- */

#define TET "v 0.2 0.2 0.2\nv 0.8 0.2 0.2\nv 0.2 0.8 0.2\nv 0.2 0.2 0.8\n"

static const struct {
    const char *scene, *obj, *part1, *part2;
} bad_meshes[] = {
    {MESH_OBSTACLE(""), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\n", "scene.json: obstacles[0].mesh.file",
     "is not closed: the edge between its vertices 2 and 3 belongs to 1 face (one on line 5)"},
    {MESH_OBSTACLE(""), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 4 3\n",
     "scene.json: obstacles[0].mesh.file", "not consistently oriented"},
    {MESH_OBSTACLE(""), TET "f 1 2 3\nf 1 3 2\n", "scene.json: obstacles[0].mesh",
     "encloses no volume"},
    {MESH_OBSTACLE(""), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 x\n",
     "mesh.obj:8:", "obstacles[0].mesh.file"},
    {MESH_OBSTACLE(", \"translate\": [0.5, 0, 0]"), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     "obstacles[0].mesh: ", "spans 0.7..1.3 along x, reaching outside the domain 0..1"},
    /* moved so far that rounding flattens it: said to be outside, not to enclose no volume */
    {MESH_OBSTACLE(", \"translate\": [1e9, 0, 0]"), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     "obstacles[0].mesh: ", "spans 1e+09..1e+09 along x, wholly outside the domain 0..1"},
    {MESH_OBSTACLE(", \"scale\": 0"), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     "obstacles[0].mesh.scale", "above 0"},
    {MESH_OBSTACLE(", \"scale\": [1, -1, 1]"), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     "obstacles[0].mesh.scale", "above 0"},
    {MESH_OBSTACLE(", \"scale\": 0.01"), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     "obstacles[0] holds no particle", "make it larger"},
    {MESH_OBSTACLE(", \"rotate\": [0, 90]"), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     "obstacles[0].mesh.rotate", "array of 3 numbers"},
    {MESH_OBSTACLE(", \"scal\": 2"), TET "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     "obstacles[0].mesh.scal", "unknown key"},
    {MESH_SCENE("\"obstacles\": [{\"mesh\": {\"scale\": 2}}]"), TET, "obstacles[0].mesh.file",
     "missing"},
    {MESH_SCENE("\"obstacles\": [{\"mesh\": {\"file\": 3}}]"), TET, "obstacles[0].mesh.file",
     "expected the name of an OBJ file"},
    {MESH_SCENE("\"obstacles\": [{\"mesh\": {\"file\": \"none.obj\"}}]"), TET,
     "cannot open OBJ file", "obstacles[0].mesh.file"},
    {MESH_SCENE("\"obstacles\": [{\"mesh\": {\"file\": \"mesh.obj\"}, \"box\": {\"min\": "
                "[0,0,0], \"max\": [0.1,0.1,0.1]}}]"),
     TET, "obstacles[0]", "give exactly one shape"},
    {MESH_SCENE("\"bodies\": [{\"mesh\": {\"file\": \"mesh.obj\"}, \"density\": 500}]"),
     TET "f 1 3 2\nf 1 2 4\nf 1 4 3\n", "bodies[0].mesh.file", "is not closed"},
};

START_TEST(json_bad_meshes_named)
{
    pbfcl_scene s;
    test_temp_write("mesh.obj", bad_meshes[_i].obj);
    const char *path = test_temp_write("scene.json", bad_meshes[_i].scene);
    test_capture_begin();
    pbfcl_status st = pbfcl_scene_load(path, &s);
    const char *msg = test_capture_end();
    test_temp_remove();
    ck_assert_int_ne(st, PBFCL_OK);
    ck_assert_contains(msg, bad_meshes[_i].part1);
    ck_assert_contains(msg, bad_meshes[_i].part2);
}
END_TEST

/* More triangles than the scene's meshes hold (a 48 x 48 grid on each face of a cube: 6 x
 * 49^2 = 14406 vertices, 6 x 2 x 48^2 = 27648 > PBFCL_MAX_MESH_TRIANGLES) is refused, naming the
 * counts. */
START_TEST(json_mesh_too_large_named)
{
    enum { G = 48 };
    size_t size = 4u << 20, len = 0;
    char *obj = malloc(size);
    int base = 0;
    for (int face = 0; face < 6; face++) { /* each face its own vertices (welded by position) */
        int axis = face / 2, side = face % 2;
        for (int i = 0; i <= G; i++)
            for (int j = 0; j <= G; j++) {
                double q[3];
                q[axis] = side ? 0.7 : 0.3;
                q[(axis + 1) % 3] = 0.3 + 0.4 * i / G;
                q[(axis + 2) % 3] = 0.3 + 0.4 * j / G;
                len +=
                    (size_t)snprintf(obj + len, size - len, "v %.9g %.9g %.9g\n", q[0], q[1], q[2]);
            }
        for (int i = 0; i < G; i++)
            for (int j = 0; j < G; j++) {
                int a = base + i * (G + 1) + j + 1, b = a + G + 1;
                if (side)
                    len += (size_t)snprintf(obj + len, size - len, "f %d %d %d %d\n", a, b, b + 1,
                                            a + 1);
                else
                    len += (size_t)snprintf(obj + len, size - len, "f %d %d %d %d\n", a, a + 1,
                                            b + 1, b);
            }
        base += (G + 1) * (G + 1);
    }
    test_temp_write("mesh.obj", obj);
    free(obj);
    pbfcl_scene s;
    const char *path = test_temp_write("scene.json", MESH_OBSTACLE(""));
    test_capture_begin();
    pbfcl_status st = pbfcl_scene_load(path, &s);
    const char *msg = test_capture_end();
    test_temp_remove();
    ck_assert_int_eq(st, PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_contains(msg, "has 14406 vertices and 27648 triangles");
    ck_assert_contains(msg, "simplify the mesh");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mesh");
    TCase *t = tcase_create("obj");
    tcase_add_test(t, obj_reads_hand_worked_file);
    tcase_add_loop_test(t, obj_bad_files_named, 0, (int)(sizeof bad_objs / sizeof bad_objs[0]));
    tcase_add_test(t, obj_missing_or_not_a_file);
    tcase_add_test(t, obj_nul_byte_named);
    tcase_add_test(t, obj_closed_and_volume);
    suite_add_tcase(s, t);
#ifdef PBFCL_HAVE_JSON
    TCase *j = tcase_create("scene");
    tcase_set_timeout(j, 120);
    tcase_add_loop_test(j, mesh_sampling_matches_closed_form, 0,
                        (int)(sizeof mesh_cases / sizeof mesh_cases[0]));
    tcase_add_test(j, mesh_body_sampled);
    tcase_add_loop_test(j, mesh_rows_match_point_test, 0, ROW_MESHES * ROW_RADII);
    tcase_add_loop_test(j, json_bad_meshes_named, 0,
                        (int)(sizeof bad_meshes / sizeof bad_meshes[0]));
    tcase_add_test(j, json_mesh_too_large_named);
    suite_add_tcase(s, j);
#endif
    return test_run_suite(s, false);
}
