/* The read side of the collision shapes (pbfcl.h, "colliders"): ids by index after a shape is
 * destroyed, each kind's info, and each kind's surface (pbfcl_shape_get_surface) as a closed,
 * consistently outward triangle mesh whose volume is the shape's (exact for a box and a
 * convex hull, within the tessellation's error for a sphere and a capsule), with its vertices
 * on the shape; a mesh's triangles come back over its distinct corners; too little room, bad
 * segments and a destroyed id are refused. */
#include "each_device.h"
#include "pbfcl.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979

static char device[32]; /* the device under test, as pbfcl_context_desc wants it */

static pbfcl_solver *open_solver(pbfcl_context **ctx)
{
    *ctx = test_open_context(device);
    pbfcl_solver_desc d;
    pbfcl_solver_desc_defaults(&d);
    d.capacity = 16;
    d.scene.particle_radius = 0.01f;
    for (int a = 0; a < 3; a++) {
        d.scene.domain_min[a] = 0.0f;
        d.scene.domain_max[a] = 1.0f;
    }
    pbfcl_solver *s = NULL;
    ck_assert_int_eq(pbfcl_solver_create(*ctx, &d, &s), PBFCL_OK);
    return s;
}

/* A surface read whole. */
typedef struct surface {
    float *v;
    unsigned *t;
    size_t nv, nt;
} surface;

static surface read_surface(pbfcl_solver *s, int id, int segments)
{
    surface m = {0};
    ck_assert_int_eq(pbfcl_shape_get_surface(s, id, segments, NULL, &m.nv, NULL, &m.nt), PBFCL_OK);
    ck_assert_uint_gt(m.nt, 0);
    m.v = malloc(3 * m.nv * sizeof *m.v);
    m.t = malloc(3 * m.nt * sizeof *m.t);
    size_t nv = m.nv, nt = m.nt;
    ck_assert_int_eq(pbfcl_shape_get_surface(s, id, segments, m.v, &nv, m.t, &nt), PBFCL_OK);
    ck_assert_uint_eq(nv, m.nv);
    ck_assert_uint_eq(nt, m.nt);
    return m;
}

/* The signed volume the triangles enclose (positive when they face outwards). */
static double volume(const surface *m)
{
    double sum = 0.0;
    for (size_t i = 0; i < m->nt; i++) {
        const float *a = m->v + 3 * m->t[3 * i], *b = m->v + 3 * m->t[3 * i + 1];
        const float *c = m->v + 3 * m->t[3 * i + 2];
        sum += (double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
               (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
               (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0]);
    }
    return sum / 6.0;
}

/* Every directed edge (a, b) of a triangle meets (b, a) of exactly one other: closed, and
 * oriented alike (positions compared, so that a hull's faces, which do not share vertices,
 * count too). */
static void assert_closed(const surface *m, const char *what)
{
    for (size_t i = 0; i < m->nt; i++)
        for (int e = 0; e < 3; e++) {
            const float *a = m->v + 3 * m->t[3 * i + e], *b = m->v + 3 * m->t[3 * i + (e + 1) % 3];
            int twins = 0;
            for (size_t j = 0; j < m->nt; j++)
                for (int f = 0; f < 3; f++) {
                    const float *c = m->v + 3 * m->t[3 * j + f];
                    const float *d = m->v + 3 * m->t[3 * j + (f + 1) % 3];
                    bool ca = fabsf(c[0] - b[0]) + fabsf(c[1] - b[1]) + fabsf(c[2] - b[2]) < 1e-5f;
                    bool db = fabsf(d[0] - a[0]) + fabsf(d[1] - a[1]) + fabsf(d[2] - a[2]) < 1e-5f;
                    twins += ca && db;
                }
            ck_assert_msg(twins >= 1, "%s: edge %d of triangle %zu has no reversed twin", what, e,
                          i);
        }
}

static void free_surface(surface *m)
{
    free(m->v);
    free(m->t);
}

START_TEST(test_shape_read)
{
    pbfcl_context *ctx;
    pbfcl_solver *s = open_solver(&ctx);
    /* a wedge (a prism 0.3 x 0.2 high x 0.4 deep): 6 points for the hull, 8 triangles for the
     * mesh */
    float wedge[18] = {0, 0, 0,    0.3f, 0, 0,    0.3f, 0.2f, 0,
                       0, 0, 0.4f, 0.3f, 0, 0.4f, 0.3f, 0.2f, 0.4f};
    unsigned wedge_tri[24] = {0, 2, 1, 3, 4, 5, 0, 1, 4, 0, 4, 3, 1, 2, 5, 1, 5, 4};
    unsigned slope[6] = {2, 0, 3, 2, 3, 5};
    memcpy(wedge_tri + 18, slope, sizeof slope);
    pbfcl_shape_desc d[5] = {
        {.type = PBFCL_SHAPE_KIND_SPHERE, .radius = 0.1f, .velocity = {1, 2, 3}},
        {.type = PBFCL_SHAPE_KIND_CAPSULE, .radius = 0.05f, .half_length = 0.2f},
        {.type = PBFCL_SHAPE_KIND_BOX,
         .half_extents = {0.1f, 0.2f, 0.3f},
         .angular_velocity = {0, 1, 0}},
        {.type = PBFCL_SHAPE_KIND_CONVEX, .points = wedge, .point_count = 6},
        {.type = PBFCL_SHAPE_KIND_MESH,
         .vertices = wedge,
         .vertex_count = 6,
         .triangles = wedge_tri,
         .triangle_count = 8,
         .two_sided = 1,
         .name = "wedge"}};
    int ids[6], first, count;
    ck_assert_int_eq(pbfcl_shape_create(s, &d[0], &first), PBFCL_OK); /* destroyed below */
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(pbfcl_shape_create(s, &d[i], &ids[i]), PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_destroy(s, first), PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_count(s, &count), PBFCL_OK);
    ck_assert_int_eq(count, 5);
    for (int i = 0; i < 5; i++) { /* by index, in the order made, the destroyed one gone */
        int id = -1;
        ck_assert_int_eq(pbfcl_shape_id(s, i, &id), PBFCL_OK);
        ck_assert_int_eq(id, ids[i]);
        pbfcl_shape_info info;
        ck_assert_int_eq(pbfcl_shape_get_info(s, id, &info), PBFCL_OK);
        ck_assert_int_eq(info.type, d[i].type);
    }
    pbfcl_shape_info info;
    ck_assert_int_eq(pbfcl_shape_get_info(s, ids[0], &info), PBFCL_OK);
    ck_assert(info.radius == 0.1f && info.velocity[2] == 3.0f);
    ck_assert_int_eq(pbfcl_shape_get_info(s, ids[1], &info), PBFCL_OK);
    ck_assert(info.radius == 0.05f && info.half_length == 0.2f);
    ck_assert_int_eq(pbfcl_shape_get_info(s, ids[2], &info), PBFCL_OK);
    ck_assert(info.half_extents[2] == 0.3f && info.angular_velocity[1] == 1.0f);
    ck_assert_int_eq(pbfcl_shape_get_info(s, ids[4], &info), PBFCL_OK);
    ck_assert(info.two_sided == 1);
    ck_assert_str_eq(info.name, "shape 'wedge'");

    /* each surface closed and outward, its volume the shape's */
    double prism = 0.5 * 0.3 * 0.2 * 0.4;
    double want[5] = {4.0 / 3.0 * PI * 0.001, PI * 0.0025 * 0.4 + 4.0 / 3.0 * PI * 0.000125,
                      0.2 * 0.4 * 0.6, prism, prism};
    double tol[5] = {0.02, 0.02, 1e-5, 1e-4,
                     1e-5}; /* relative; 32 segments; the hull from float planes */
    for (int i = 0; i < 5; i++) {
        surface m = read_surface(s, ids[i], 32);
        char what[32];
        snprintf(what, sizeof what, "shape kind %d", (int)d[i].type);
        assert_closed(&m, what);
        double vol = volume(&m);
        printf("%s: %zu vertices, %zu triangles, volume %.6g (shape %.6g)\n", what, m.nv, m.nt, vol,
               want[i]);
        ck_assert_msg(fabs(vol - want[i]) <= tol[i] * want[i], "%s: volume %g, expected %g", what,
                      vol, want[i]);
        for (size_t v = 0; i == 0 && v < m.nv; v++) { /* the sphere's vertices on it */
            const float *p = m.v + 3 * v;
            ck_assert_float_eq_tol(sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), 0.1f, 1e-6f);
        }
        if (i == 2)
            ck_assert(m.nv == 8 && m.nt == 12);
        if (i == 4) /* the mesh: its own triangles over its 6 distinct corners */
            ck_assert(m.nv == 6 && m.nt == 8);
        free_surface(&m);
    }

    /* refusals: too little room, bad segments, a destroyed id */
    float v[3];
    unsigned t[3];
    size_t nv = 1, nt = 1;
    test_capture_begin();
    ck_assert_int_eq(pbfcl_shape_get_surface(s, ids[2], 0, v, &nv, t, &nt), PBFCL_ERR_BUFFER_SIZE);
    ck_assert_contains(test_capture_end(), "8 vertices and 12 triangles");
    test_capture_begin();
    ck_assert_int_eq(pbfcl_shape_get_surface(s, ids[0], 3, NULL, &nv, NULL, &nt),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_contains(test_capture_end(), "segments");
    test_capture_begin();
    ck_assert_int_eq(pbfcl_shape_get_info(s, first, &info), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_contains(test_capture_end(), "no such shape");
    test_capture_begin();
    ck_assert_int_eq(pbfcl_shape_id(s, 5, &count), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_contains(test_capture_end(), "index 5");
    ck_assert_int_eq(pbfcl_solver_destroy(s), PBFCL_OK);
    ck_assert_int_eq(pbfcl_context_destroy(ctx), PBFCL_OK);
}
END_TEST

static void add_tests(TCase *tc)
{
    tcase_add_test(tc, test_shape_read);
}

int main(void)
{
    return test_run_on_each_device("api_shape_read", 600, add_tests, device);
}
