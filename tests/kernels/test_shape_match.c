/* Tests of shape matching (cl/bodies/shape_match.cl) against a plain C reference in double
 * precision at awkward body sizes (2, wg - 1, wg, wg + 1, primes, one body of 100 000), all bodies
 * in one launch: the slots, the segmented reduction, the polar decomposition and the goal
 * projection (centre of mass, A_pq and its rotation by Higham's iteration R = (R + R^-T) / 2, not
 * the kernels' method); the rigid prediction from the particles' momentum (omega = I^-1 L, rotated
 * by Rodrigues' formula) and the velocity of the body's motion; the friction of the bodies'
 * contacts with other solids (Coulomb's law for each body as a whole: held, sliding, none); bad
 * bodies refused; the projection split over two devices (pbfcl_shape_match_split: each sums the
 * particles it owns, shape_match_totals, the two added) against the same reference. */
#include "bodies/shape_match.h"
#include "pbfcl_shared.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rotation matrix (row-major) of the quaternion (x, y, z, w). */
static void quat_to_matrix(const double q[4], double m[9])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                   2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                   2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
    memcpy(m, r, sizeof r);
}

static double det3(const double m[9])
{
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
           m[2] * (m[3] * m[7] - m[4] * m[6]);
}

/* The orthogonal factor of the polar decomposition of a nonsingular m (row-major), by
 * Higham's Newton iteration X = (X + X^-T) / 2. */
static void polar_reference(const double a[9], double r[9])
{
    double x[9];
    memcpy(x, a, sizeof x);
    for (int it = 0; it < 100; it++) {
        double d = det3(x), cof[9]; /* X^-T = cofactor(X) / det */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
                cof[3 * i + j] = x[3 * i1 + j1] * x[3 * i2 + j2] - x[3 * i1 + j2] * x[3 * i2 + j1];
            }
        double change = 0.0;
        for (int k = 0; k < 9; k++) {
            double next = 0.5 * (x[k] + cof[k] / d);
            change += fabs(next - x[k]);
            x[k] = next;
        }
        if (change < 1e-15)
            break;
    }
    memcpy(r, x, sizeof x);
}

typedef struct sm_case {
    size_t bodies, entries, n;
    unsigned *entry_id, *entry_body, *slot_of; /* slot_of[id]: where the particle lies */
    float *rest, *pred4;                       /* rest xyz per entry; x* float4 per slot */
    float *stiffness;
} sm_case;

/* Bodies of the given sizes: random rest shapes, each moved by a random rotation (up to 2
 * rad) and translation and deformed by noise of 5 % of its size; extra fluid particles; the
 * particles in a random order of slots. */
static void make_case(sm_case *c, const size_t *sizes, size_t bodies, size_t fluid, uint64_t *rng)
{
    memset(c, 0, sizeof *c);
    c->bodies = bodies;
    for (size_t b = 0; b < bodies; b++)
        c->entries += sizes[b];
    c->n = c->entries + fluid;
    c->entry_id = malloc(c->entries * 4);
    c->entry_body = malloc(c->entries * 4);
    c->slot_of = malloc(c->n * 4);
    c->rest = malloc(c->entries * 12);
    c->pred4 = malloc(c->n * 16);
    c->stiffness = malloc(bodies * 4);
    for (size_t i = 0; i < c->n; i++)
        c->slot_of[i] = (unsigned)i;
    test_shuffle(c->slot_of, c->n, rng);
    for (size_t i = 0; i < c->n; i++)
        for (int a = 0; a < 4; a++)
            c->pred4[4 * i + a] = a < 3 ? test_randf(rng, 0.0f, 1.0f) : 0.0f;
    size_t e = 0;
    for (size_t b = 0; b < bodies; b++) {
        double axis[3], len = 0.0, angle = test_randf(rng, 0.0f, 2.0f), q[4], m[9];
        for (int a = 0; a < 3; a++) {
            axis[a] = test_randf(rng, -1.0f, 1.0f);
            len += axis[a] * axis[a];
        }
        len = sqrt(len);
        for (int a = 0; a < 3; a++)
            q[a] = sin(angle / 2) * axis[a] / len;
        q[3] = cos(angle / 2);
        quat_to_matrix(q, m);
        float size = test_randf(rng, 0.05f, 0.3f), t[3];
        for (int a = 0; a < 3; a++)
            t[a] = test_randf(rng, 0.2f, 0.8f);
        c->stiffness[b] = 1.0f;
        for (size_t k = 0; k < sizes[b]; k++, e++) {
            c->entry_id[e] = (unsigned)e; /* ids 0..entries-1 are the bodies' */
            c->entry_body[e] = (unsigned)b;
            float *r = c->rest + 3 * e, *x = c->pred4 + 4 * c->slot_of[e];
            for (int a = 0; a < 3; a++)
                r[a] = test_randf(rng, 0.3f, 0.7f) * size;
            for (int a = 0; a < 3; a++)
                x[a] = (float)(t[a] + m[3 * a] * r[0] + m[3 * a + 1] * r[1] + m[3 * a + 2] * r[2] +
                               0.05 * size * test_randf(rng, -1.0f, 1.0f));
        }
    }
}

static void free_case(sm_case *c)
{
    free(c->entry_id);
    free(c->entry_body);
    free(c->slot_of);
    free(c->rest);
    free(c->pred4);
    free(c->stiffness);
}

/* The reference goals of body b (entries first..end-1) into goal (xyz per entry). */
static void reference_goals(const sm_case *c, size_t first, size_t end, double *goal)
{
    double rc[3] = {0, 0, 0}, xc[3] = {0, 0, 0}, a[9] = {0}, r[9];
    size_t count = end - first;
    for (size_t e = first; e < end; e++)
        for (int k = 0; k < 3; k++) {
            rc[k] += c->rest[3 * e + k] / (double)count;
            xc[k] += c->pred4[4 * c->slot_of[c->entry_id[e]] + k] / (double)count;
        }
    for (size_t e = first; e < end; e++) /* A_pq = sum (x - c)(r - rc)^T (equal masses) */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a[3 * i + j] += (c->pred4[4 * c->slot_of[c->entry_id[e]] + i] - xc[i]) *
                                (c->rest[3 * e + j] - rc[j]);
    if (count == 2) { /* A has rank 1: any R that turns the rest axis onto the current one,
                         and the goals are the centre +- the rest half-length along it */
        for (size_t e = first; e < end; e++) {
            const float *x = c->pred4 + 4 * c->slot_of[c->entry_id[e]];
            double d[3] = {x[0] - xc[0], x[1] - xc[1], x[2] - xc[2]}, len = 0.0, half = 0.0;
            for (int k = 0; k < 3; k++) {
                len += d[k] * d[k];
                half += (c->rest[3 * e + k] - rc[k]) * (c->rest[3 * e + k] - rc[k]);
            }
            for (int k = 0; k < 3; k++)
                goal[3 * (e - first) + k] = xc[k] + d[k] * sqrt(half / len);
        }
        return;
    }
    polar_reference(a, r);
    for (size_t e = first; e < end; e++)
        for (int i = 0; i < 3; i++) {
            double g = xc[i];
            for (int j = 0; j < 3; j++)
                g += r[3 * i + j] * (c->rest[3 * e + j] - rc[j]);
            goal[3 * (e - first) + i] = g;
        }
}

/* The friction coefficients of the contact cases. */
#define MU_S 0.5
#define MU_K 0.3

/* Contacts of the case's body particles with other solids, as pbf_collide leaves them (2
 * float4 per slot: the sum of the contacts' slides and their number; how far they closed): per
 * body a slide s_b and a closing a_b of 1 mm, each body particle on 0 to 3 contacts, each
 * sliding s_b plus 10 % noise. Body b % 3 == 0 has none, 1 slides 0.2 a_b (held: static), 2
 * slides 2 a_b (dynamic). */
static float *make_contacts(const sm_case *c, uint64_t *rng)
{
    float *k = calloc(c->n * 8, sizeof *k);
    for (size_t e = 0; e < c->entries; e++) {
        unsigned b = c->entry_body[e], contacts = b % 3 == 0 ? 0 : test_rand(rng) % 4;
        float *out = k + 8 * c->slot_of[c->entry_id[e]], a = 1e-3f;
        float slide[3] = {(b % 3 == 1 ? 0.2f : 2.0f) * a, 0.5f * a * (float)(b % 2), 0.0f};
        for (unsigned q = 0; q < contacts; q++) {
            for (int x = 0; x < 3; x++)
                out[x] += slide[x] * (1.0f + test_randf(rng, -0.1f, 0.1f));
            out[3] += 1.0f;
            out[4] += a * (1.0f + test_randf(rng, -0.1f, 0.1f));
        }
    }
    return k;
}

/* The friction move of the body of entries first..end-1 (Coulomb for the whole body, from the
 * sums of its contacts): -S / n while |S| < mu_s A, else -min(mu_k A / |S|, 1) S / n; branch[0..2]
 * counts the bodies without contacts, held, sliding. */
static void reference_friction(const sm_case *c, const float *contacts, size_t first, size_t end,
                               double move[3], int branch[3])
{
    double sum[3] = {0, 0, 0}, n = 0.0, closed = 0.0, len = 0.0;
    for (size_t e = first; e < end; e++) {
        const float *k = contacts + 8 * c->slot_of[c->entry_id[e]];
        for (int a = 0; a < 3; a++)
            sum[a] += k[a];
        n += k[3];
        closed += k[4];
    }
    for (int a = 0; a < 3; a++) {
        len += sum[a] * sum[a];
        move[a] = 0.0;
    }
    len = sqrt(len);
    if (n == 0.0 || len == 0.0) {
        branch[0]++;
        return;
    }
    bool held = len < MU_S * fmax(closed, 0.0);
    double part = held ? 1.0 : fmin(MU_K * fmax(closed, 0.0) / len, 1.0);
    branch[held ? 1 : 2]++;
    for (int a = 0; a < 3; a++)
        move[a] = -part * sum[a] / n;
}

/* Body b's entries (from first, returned: the end) and their goals (with the friction's move
 * where contacts is not NULL) into goal, 3 doubles an entry. */
static size_t reference_body(const sm_case *c, const float *contacts, size_t b, size_t first,
                             double *goal, int branch[3])
{
    size_t end = first;
    while (end < c->entries && c->entry_body[end] == b)
        end++;
    reference_goals(c, first, end, goal);
    double move[3] = {0, 0, 0};
    if (contacts)
        reference_friction(c, contacts, first, end, move, branch);
    for (size_t e = first; e < end; e++)
        for (int a = 0; a < 3; a++)
            goal[3 * (e - first) + a] += move[a];
    return end;
}

/* Shape matching for ids below capacity with an id-to-slot map of its own (a simulation's
 * particles own theirs), and its release. */
static void sm_open(pbfcl_shape_match *sm, pbfcl_cl *cl, size_t capacity)
{
    cl_mem slot_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, capacity * 4, "slots", &slot_buf),
                     PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_match_create(sm, cl, capacity, slot_buf), PBFCL_OK);
}

static void sm_close(pbfcl_shape_match *sm)
{
    cl_mem slot_buf = sm->slot_buf;
    pbfcl_shape_match_destroy(sm);
    pbfcl_cl_release_buffer(&slot_buf);
}

/* The id-to-slot map of the case (which the particles' slots pass keeps in a simulation,
 * tests/kernels/test_particles.c) into the one shape matching reads. */
static void write_slots(pbfcl_shape_match *sm, const sm_case *c)
{
    ck_assert_int_eq(clEnqueueWriteBuffer(sm->cl->queue, sm->slot_buf, CL_TRUE, 0, c->n * 4,
                                          c->slot_of, 0, NULL, NULL),
                     CL_SUCCESS);
}

/* Runs one projection of the case on the device and compares every particle with
 * the reference: body particles at their goals (moved by their body's friction if contacts
 * is given) within 2e-5 m (bodies up to 0.3 m), fluid particles untouched. */
static void check_case(pbfcl_shape_match *sm, const sm_case *c, const float *contacts,
                       const char *what)
{
    pbfcl_cl *cl = sm->cl;
    cl_mem pred_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, c->n * 16, "x*", &pred_buf), PBFCL_OK);
    ck_assert_int_eq(
        clEnqueueWriteBuffer(cl->queue, pred_buf, CL_TRUE, 0, c->n * 16, c->pred4, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(pbfcl_shape_match_set_bodies(sm, c->bodies, c->entries, c->entry_id,
                                                  c->entry_body, c->rest, c->stiffness),
                     PBFCL_OK);
    write_slots(sm, c);
    if (contacts) /* the slots of the case: collide wrote them per slot */
        ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, sm->static_buf, CL_TRUE, 0, c->n * 32,
                                              contacts, 0, NULL, NULL),
                         CL_SUCCESS);
    ck_assert_int_eq(pbfcl_shape_match_project(sm, pred_buf, contacts ? sm->static_buf : NULL,
                                               (float)MU_S, (float)MU_K, NULL, PBFCL_STAGE_SOLVE),
                     PBFCL_OK);
    float *out = malloc(c->n * 16);
    ck_assert_int_eq(
        clEnqueueReadBuffer(cl->queue, pred_buf, CL_TRUE, 0, c->n * 16, out, 0, NULL, NULL),
        CL_SUCCESS);
    double *goal = malloc(c->entries * 3 * sizeof *goal), worst = 0.0;
    size_t first = 0;
    int branch[3] = {0, 0, 0};
    for (size_t b = 0; b < c->bodies; b++) {
        size_t end = reference_body(c, contacts, b, first, goal, branch);
        for (size_t e = first; e < end; e++) {
            const float *x = out + 4 * c->slot_of[c->entry_id[e]];
            for (int a = 0; a < 3; a++) {
                double err = fabs(x[a] - goal[3 * (e - first) + a]);
                worst = fmax(worst, err);
                expect(err <= 2e-5,
                       "%s: body %zu (%zu particles) entry %zu axis %d: %.7f, "
                       "reference %.7f",
                       what, b, end - first, e, a, x[a], goal[3 * (e - first) + a]);
            }
        }
        first = end;
    }
    for (size_t i = c->entries; i < c->n; i++) /* fluid */
        expect(memcmp(out + 4 * c->slot_of[i], c->pred4 + 4 * c->slot_of[i], 16) == 0,
               "%s: fluid particle %zu moved", what, i);
    fprintf(stderr, "    %s: %zu bodies, %zu entries, largest error %.2g m\n", what, c->bodies,
            c->entries, worst);
    if (contacts) {
        fprintf(stderr, "      friction: %d bodies without contacts, %d held, %d sliding\n",
                branch[0], branch[1], branch[2]);
        ck_assert(branch[0] > 0 && branch[1] > 0 && branch[2] > 0);
    }
    free(goal);
    free(out);
    pbfcl_cl_release_buffer(&pred_buf);
}

static void run_reference(pbfcl_cl *cl)
{
    size_t big = test_small() ? 300 : 100000;
    pbfcl_shape_match sm;
    sm_open(&sm, cl, big + 4000);
    size_t wg = sm.wg;
    uint64_t rng = 13;
    size_t sizes[] = {4, wg - 1, wg, wg + 1, 2, 8, 101, 2 * wg + 3, 5, test_small() ? 61 : 1009};
    sm_case c;
    make_case(&c, sizes, sizeof sizes / sizeof sizes[0], 37, &rng);
    check_case(&sm, &c, NULL, "mixed sizes");
    float *contacts = make_contacts(&c, &rng);
    check_case(&sm, &c, contacts, "mixed sizes, contacts with friction");
    free(contacts);
    free_case(&c);
    size_t one[] = {big};
    make_case(&c, one, 1, 1, &rng);
    check_case(&sm, &c, NULL, "one large body");
    free_case(&c);
    size_t many[64];
    for (size_t b = 0; b < 64; b++)
        many[b] = 8;
    make_case(&c, many, 64, 0, &rng);
    check_case(&sm, &c, NULL, "64 bodies of 8");
    contacts = make_contacts(&c, &rng);
    check_case(&sm, &c, contacts, "64 bodies of 8, contacts with friction");
    free(contacts);
    free_case(&c);
    sm_close(&sm);
}

START_TEST(test_shape_match_reference)
{
    test_each_device(run_reference);
}
END_TEST

/* Rodrigues: v rotated by the rotation vector w. */
static void rotate_by(const double w[3], const double v[3], double out[3])
{
    double a = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (a == 0.0) {
        memcpy(out, v, 3 * sizeof *out);
        return;
    }
    double k[3] = {w[0] / a, w[1] / a, w[2] / a}, kv = k[0] * v[0] + k[1] * v[1] + k[2] * v[2];
    double kxv[3] = {k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2],
                     k[0] * v[1] - k[1] * v[0]};
    for (int i = 0; i < 3; i++)
        out[i] = v[i] * cos(a) + kxv[i] * sin(a) + k[i] * kv * (1.0 - cos(a));
}

/* x solving the symmetric 3x3 system m x = y (Cramer). */
static void solve3(const double m[9], const double y[3], double x[3])
{
    double d = det3(m);
    for (int c = 0; c < 3; c++) {
        double t[9];
        memcpy(t, m, sizeof t);
        for (int r = 0; r < 3; r++)
            t[3 * r + c] = y[r];
        x[c] = det3(t) / d;
    }
}

/* The rigid motion of body b from positions x and velocities v (float4 per slot): centre,
 * centre velocity and angular velocity I^-1 L with I and L about the centre (equal masses). */
static void reference_motion(const sm_case *c, size_t first, size_t end, const float *x4,
                             const float *v4, double cen[3], double vc[3], double w[3])
{
    double n = (double)(end - first), l[3] = {0, 0, 0}, in[9] = {0};
    for (int a = 0; a < 3; a++)
        cen[a] = vc[a] = 0.0;
    for (size_t e = first; e < end; e++)
        for (int a = 0; a < 3; a++) {
            cen[a] += x4[4 * c->slot_of[c->entry_id[e]] + a] / n;
            vc[a] += v4[4 * c->slot_of[c->entry_id[e]] + a] / n;
        }
    for (size_t e = first; e < end; e++) {
        const float *x = x4 + 4 * c->slot_of[c->entry_id[e]],
                    *v = v4 + 4 * c->slot_of[c->entry_id[e]];
        double d[3] = {x[0] - cen[0], x[1] - cen[1], x[2] - cen[2]};
        double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        l[0] += (d[1] * v[2] - d[2] * v[1]) / n;
        l[1] += (d[2] * v[0] - d[0] * v[2]) / n;
        l[2] += (d[0] * v[1] - d[1] * v[0]) / n;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                in[3 * i + j] += ((i == j ? d2 : 0.0) - d[i] * d[j]) / n;
    }
    solve3(in, l, w);
}

/* Writes n float4 to buf. */
static void upload4(pbfcl_cl *cl, cl_mem buf, const float *data, size_t n)
{
    ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, buf, CL_TRUE, 0, n * 16, data, 0, NULL, NULL),
                     CL_SUCCESS);
}

static void download4(pbfcl_cl *cl, cl_mem buf, float *data, size_t n)
{
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, buf, CL_TRUE, 0, n * 16, data, 0, NULL, NULL),
                     CL_SUCCESS);
}

/* The rigid prediction and velocity: bodies at rigid poses (made so by one projection) with
 * velocities of a random rigid motion (up to 3 rad/s) plus noise of 10 %: shape_match_predict
 * moves each particle to c + v_c dt + exp(omega dt) (x - c) with the reference's c, v_c and
 * omega = I^-1 L (within 1e-6 m); after a projection of that rigid prediction,
 * shape_match_velocity gives each particle v_c + omega x (x* - c*) (within 1e-4 m/s). */
static void check_motion(pbfcl_shape_match *sm, sm_case *c, const char *what, uint64_t *rng)
{
    pbfcl_cl *cl = sm->cl;
    const float dt = 0.01f;
    cl_mem pos_buf, vel_buf, pred_buf;
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, c->n * 16, "x", &pos_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, c->n * 16, "v", &vel_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, c->n * 16, "x*", &pred_buf), PBFCL_OK);
    ck_assert_int_eq(pbfcl_shape_match_set_bodies(sm, c->bodies, c->entries, c->entry_id,
                                                  c->entry_body, c->rest, c->stiffness),
                     PBFCL_OK);
    upload4(cl, pos_buf, c->pred4, c->n);
    write_slots(sm, c);
    ck_assert_int_eq(
        pbfcl_shape_match_project(sm, pos_buf, NULL, 0.0f, 0.0f, NULL, PBFCL_STAGE_SOLVE),
        PBFCL_OK);
    float *x = malloc(c->n * 16), *v = calloc(c->n, 16), *out = malloc(c->n * 16);
    download4(cl, pos_buf, x, c->n); /* rigid poses */
    size_t first = 0;
    for (size_t b = 0; b < c->bodies; b++) { /* a random rigid motion plus noise */
        size_t end = first;
        while (end < c->entries && c->entry_body[end] == b)
            end++;
        float vc[3], w[3], cen[3] = {0, 0, 0};
        for (int a = 0; a < 3; a++) {
            vc[a] = test_randf(rng, -1.0f, 1.0f);
            w[a] = test_randf(rng, -3.0f, 3.0f);
        }
        for (size_t e = first; e < end; e++)
            for (int a = 0; a < 3; a++)
                cen[a] += x[4 * c->slot_of[e] + a] / (float)(end - first);
        for (size_t e = first; e < end; e++) {
            float *xe = x + 4 * c->slot_of[e], *ve = v + 4 * c->slot_of[e];
            float d[3] = {xe[0] - cen[0], xe[1] - cen[1], xe[2] - cen[2]};
            float wxd[3] = {w[1] * d[2] - w[2] * d[1], w[2] * d[0] - w[0] * d[2],
                            w[0] * d[1] - w[1] * d[0]};
            for (int a = 0; a < 3; a++)
                ve[a] = vc[a] + wxd[a] + 0.1f * test_randf(rng, -1.0f, 1.0f);
        }
        first = end;
    }
    upload4(cl, vel_buf, v, c->n);
    upload4(cl, pred_buf, x, c->n);
    ck_assert_int_eq(
        pbfcl_shape_match_predict(sm, dt, pos_buf, vel_buf, pred_buf, NULL, PBFCL_STAGE_PREDICT),
        PBFCL_OK);
    download4(cl, pred_buf, out, c->n);
    double *motion = malloc(c->bodies * 9 * sizeof *motion), worst_x = 0.0, worst_v = 0.0;
    first = 0;
    for (size_t b = 0; b < c->bodies; b++) {
        size_t end = first;
        while (end < c->entries && c->entry_body[end] == b)
            end++;
        double *cen = motion + 9 * b, *vc = cen + 3, *w = cen + 6;
        reference_motion(c, first, end, x, v, cen, vc, w);
        double wdt[3] = {w[0] * dt, w[1] * dt, w[2] * dt};
        for (size_t e = first; e < end; e++) {
            const float *xe = x + 4 * c->slot_of[e], *pe = out + 4 * c->slot_of[e];
            double d[3] = {xe[0] - cen[0], xe[1] - cen[1], xe[2] - cen[2]}, rd[3];
            rotate_by(wdt, d, rd);
            for (int a = 0; a < 3; a++) {
                double ref = cen[a] + vc[a] * dt + rd[a], err = fabs(pe[a] - ref);
                worst_x = fmax(worst_x, err);
                expect(err <= 1e-6, "%s: body %zu entry %zu axis %d: x* %.7f, reference %.7f", what,
                       b, e, a, pe[a], ref);
            }
        }
        first = end;
    }
    ck_assert_int_eq(
        pbfcl_shape_match_project(sm, pred_buf, NULL, 0.0f, 0.0f, NULL, PBFCL_STAGE_SOLVE),
        PBFCL_OK);
    download4(cl, pred_buf, out, c->n);
    upload4(cl, pos_buf, out, c->n); /* update: x = x* */
    ck_assert_int_eq(pbfcl_shape_match_velocity(sm, dt, pos_buf, vel_buf, NULL, PBFCL_STAGE_OTHER),
                     PBFCL_OK);
    download4(cl, vel_buf, v, c->n);
    first = 0;
    for (size_t b = 0; b < c->bodies; b++) {
        size_t end = first;
        while (end < c->entries && c->entry_body[end] == b)
            end++;
        const double *cen = motion + 9 * b, *vc = cen + 3, *w = cen + 6;
        for (size_t e = first; e < end; e++) {
            const float *pe = out + 4 * c->slot_of[e], *ve = v + 4 * c->slot_of[e];
            double d[3] = {pe[0] - cen[0] - vc[0] * dt, pe[1] - cen[1] - vc[1] * dt,
                           pe[2] - cen[2] - vc[2] * dt};
            double ref[3] = {vc[0] + w[1] * d[2] - w[2] * d[1], vc[1] + w[2] * d[0] - w[0] * d[2],
                             vc[2] + w[0] * d[1] - w[1] * d[0]};
            for (int a = 0; a < 3; a++) {
                double err = fabs(ve[a] - ref[a]);
                worst_v = fmax(worst_v, err);
                expect(err <= 1e-4, "%s: body %zu entry %zu axis %d: v %.6f, reference %.6f", what,
                       b, e, a, ve[a], ref[a]);
            }
        }
        first = end;
    }
    fprintf(stderr, "    %s: largest errors %.2g m (x*), %.2g m/s (v)\n", what, worst_x, worst_v);
    free(motion);
    free(x);
    free(v);
    free(out);
    pbfcl_cl_release_buffer(&pos_buf);
    pbfcl_cl_release_buffer(&vel_buf);
    pbfcl_cl_release_buffer(&pred_buf);
}

static void run_motion(pbfcl_cl *cl)
{
    size_t big = test_small() ? 300 : 100000;
    pbfcl_shape_match sm;
    sm_open(&sm, cl, big + 4000);
    size_t wg = sm.wg;
    uint64_t rng = 17;
    size_t sizes[] = {4, wg - 1, wg, wg + 1, 8, 101, 2 * wg + 3, 5, test_small() ? 61 : 1009};
    sm_case c;
    make_case(&c, sizes, sizeof sizes / sizeof sizes[0], 37, &rng);
    check_motion(&sm, &c, "mixed sizes", &rng);
    free_case(&c);
    size_t one[] = {big};
    make_case(&c, one, 1, 1, &rng);
    check_motion(&sm, &c, "one large body", &rng);
    free_case(&c);
    sm_close(&sm);
}

START_TEST(test_shape_match_motion_reference)
{
    test_each_device(run_motion);
}
END_TEST

/* A body of 1 particle, a gap in the numbering and a stiffness outside (0, 1] are refused. */
static void run_bad_bodies(pbfcl_cl *cl)
{
    pbfcl_shape_match sm;
    sm_open(&sm, cl, 16);
    unsigned id[4] = {0, 1, 2, 3}, lone[4] = {0, 1, 1, 1}, gap[4] = {0, 0, 2, 2};
    unsigned ok[4] = {0, 0, 1, 1};
    float rest[12] = {0}, k1[3] = {1, 1, 1}, k0[2] = {1, 0};
    ck_assert_int_eq(pbfcl_shape_match_set_bodies(&sm, 2, 4, id, lone, rest, k1),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_shape_match_set_bodies(&sm, 3, 4, id, gap, rest, k1),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_shape_match_set_bodies(&sm, 2, 4, id, ok, rest, k0),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_shape_match_set_bodies(&sm, 2, 4, id, ok, rest, k1), PBFCL_OK);
    sm_close(&sm);
}

START_TEST(test_shape_match_bad_bodies)
{
    test_each_device(run_bad_bodies);
}
END_TEST

/* The split of a case over two devices: device d (0 or 1) owns the particles with id % 3 == d
 * (and those with id % 3 == 2 go to device 1), holds copies (ghosts) of the other's with
 * id % 4 == 0, and not the rest. here: 0 owned (below the bound 1), 1 a ghost, PBFCL_EMPTY
 * absent (the values need not be slots: they only classify). */
static unsigned split_here(unsigned id, int d)
{
    int owner = id % 3 == 0 ? 0 : 1;
    return owner == d ? 0u : id % 4 == 0 ? 1u : PBFCL_EMPTY;
}

/* The sums of device 1, kept by its combine for device 0's, which adds them after its own (the
 * order of the ranks, as host/dist/dist_bodies.c). */
typedef struct split_sums {
    float *other;
    size_t floats;
} split_sums;

static pbfcl_status keep_sums(void *ctx, float *totals, size_t bodies)
{
    split_sums *k = ctx;
    k->floats = bodies * PBFCL_SHAPE_MATCH_ROWS * 4;
    memcpy(k->other, totals, k->floats * sizeof *totals);
    return PBFCL_OK;
}

static pbfcl_status add_sums(void *ctx, float *totals, size_t bodies)
{
    split_sums *k = ctx;
    ck_assert_uint_eq(k->floats, bodies * PBFCL_SHAPE_MATCH_ROWS * 4);
    for (size_t i = 0; i < k->floats; i++)
        totals[i] = (float)((double)totals[i] + k->other[i]);
    return PBFCL_OK;
}

/* One projection of case c split over two devices (two shape matchings with their own x*, both
 * holding every particle's), contacts if given: device 0's particles, owned and ghosts, at the
 * reference goals of the whole bodies within 2e-5 m, the particles it does not hold and the
 * fluid untouched. */
static void check_split(pbfcl_cl *cl, const sm_case *c, const float *contacts, const char *what)
{
    pbfcl_shape_match sm[2];
    cl_mem pred[2], here[2];
    split_sums sums = {malloc(c->bodies * PBFCL_SHAPE_MATCH_ROWS * 16), 0};
    unsigned *map = malloc(c->n * 4);
    for (int d = 0; d < 2; d++) {
        sm_open(&sm[d], cl, c->n);
        for (size_t id = 0; id < c->n; id++)
            map[id] = split_here((unsigned)id, d);
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, c->n * 4, "here", &here[d]),
                         PBFCL_OK);
        ck_assert_int_eq(pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, c->n * 16, "x*", &pred[d]),
                         PBFCL_OK);
        ck_assert_int_eq(
            clEnqueueWriteBuffer(cl->queue, here[d], CL_TRUE, 0, c->n * 4, map, 0, NULL, NULL),
            CL_SUCCESS);
        ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, pred[d], CL_TRUE, 0, c->n * 16, c->pred4,
                                              0, NULL, NULL),
                         CL_SUCCESS);
        ck_assert_int_eq(pbfcl_shape_match_set_bodies(&sm[d], c->bodies, c->entries, c->entry_id,
                                                      c->entry_body, c->rest, c->stiffness),
                         PBFCL_OK);
        ck_assert_int_eq(
            pbfcl_shape_match_split(&sm[d], here[d], d == 0 ? add_sums : keep_sums, &sums),
            PBFCL_OK);
        sm[d].owned = 1;
        write_slots(&sm[d], c);
        if (contacts)
            ck_assert_int_eq(clEnqueueWriteBuffer(cl->queue, sm[d].static_buf, CL_TRUE, 0,
                                                  c->n * 32, contacts, 0, NULL, NULL),
                             CL_SUCCESS);
    }
    for (int d = 1; d >= 0; d--) /* device 1's sums first, kept for device 0's */
        ck_assert_int_eq(pbfcl_shape_match_project(&sm[d], pred[d],
                                                   contacts ? sm[d].static_buf : NULL, (float)MU_S,
                                                   (float)MU_K, NULL, PBFCL_STAGE_SOLVE),
                         PBFCL_OK);
    float *out = malloc(c->n * 16);
    ck_assert_int_eq(
        clEnqueueReadBuffer(cl->queue, pred[0], CL_TRUE, 0, c->n * 16, out, 0, NULL, NULL),
        CL_SUCCESS);
    double *goal = malloc(c->entries * 3 * sizeof *goal), worst = 0.0;
    int branch[3] = {0, 0, 0};
    size_t held = 0, first = 0;
    for (size_t b = 0; b < c->bodies; b++) {
        size_t end = reference_body(c, contacts, b, first, goal, branch);
        for (size_t e = first; e < end; e++) {
            unsigned id = c->entry_id[e];
            const float *x = out + 4 * c->slot_of[id];
            bool here0 = split_here(id, 0) != PBFCL_EMPTY;
            held += here0;
            for (int a = 0; a < 3; a++) {
                double want = here0 ? goal[3 * (e - first) + a] : c->pred4[4 * c->slot_of[id] + a];
                double err = fabs(x[a] - want);
                worst = fmax(worst, err);
                expect(err <= 2e-5, "%s: body %zu entry %zu (%s) axis %d: %.7f, reference %.7f",
                       what, b, e, here0 ? "held" : "not held", a, x[a], want);
            }
        }
        first = end;
    }
    for (size_t i = c->entries; i < c->n; i++) /* fluid */
        expect(memcmp(out + 4 * c->slot_of[i], c->pred4 + 4 * c->slot_of[i], 16) == 0,
               "%s: fluid particle %zu moved", what, i);
    fprintf(stderr,
            "    %s, split over two devices: %zu of %zu entries held by device 0, largest "
            "error %.2g m\n",
            what, held, c->entries, worst);
    free(goal);
    free(out);
    free(map);
    free(sums.other);
    for (int d = 0; d < 2; d++) {
        sm_close(&sm[d]);
        pbfcl_cl_release_buffer(&pred[d]);
        pbfcl_cl_release_buffer(&here[d]);
    }
}

static void run_split(pbfcl_cl *cl)
{
    pbfcl_shape_match probe;
    sm_open(&probe, cl, 16);
    size_t wg = probe.wg;
    sm_close(&probe);
    uint64_t rng = 29;
    size_t sizes[] = {4, wg - 1, wg, wg + 1, 2, 8, 101, 2 * wg + 3, 5, 61};
    sm_case c;
    make_case(&c, sizes, sizeof sizes / sizeof sizes[0], 37, &rng);
    check_split(cl, &c, NULL, "mixed sizes");
    float *contacts = make_contacts(&c, &rng);
    check_split(cl, &c, contacts, "mixed sizes, contacts with friction");
    free(contacts);
    free_case(&c);
}

START_TEST(test_shape_match_split_reference)
{
    test_each_device(run_split);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shape_match");
    TCase *tc = tcase_create("shape_match");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_shape_match_reference);
    tcase_add_test(tc, test_shape_match_motion_reference);
    tcase_add_test(tc, test_shape_match_bad_bodies);
    tcase_add_test(tc, test_shape_match_split_reference);
    suite_add_tcase(s, tc);
    return test_run_suite(s, true);
}
