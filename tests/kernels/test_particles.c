/* Reference tests of the solver-neutral particle passes (cl/sim/particles.cl, host/core/
 * particles.c) on plain buffers, no solver: stats, bounds and copy_positions against plain C
 * references at n = 1, the work-group size - 1, + 0 and + 1, and a prime, with walls, mass and
 * rest density given directly (any solver's), non-finite and outside particles included, and
 * the render copy through a shuffled id order; gather_rows and scatter_rows (what a split
 * simulation exchanges) against a C copy at 0, 1, wg - 1, wg, wg + 1 and a prime rows of 1, 3
 * and 32 words, at shuffled slots, nothing written past the rows; gather_column,
 * scatter_column and append_column (a split simulation's records, packed) and fill_rows (appended
 * particles' initial values) the same way, at 0, 1, wg - 1, wg, wg + 1 and 1009 rows from rows 0
 * and 7. */
#include "pbfcl_shared.h"
#include "sim/particles.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host state of a test: float4 positions and velocities, densities, neighbour counts,
 * a shuffled id per slot, and phases and relative inverse masses (about 60 % fluid, 30 % of
 * three bodies of masses 0.25 to 4 times the fluid's, 10 % static: inverse mass 0), which the
 * stats read when given them (bodies). */
typedef struct host_state {
    size_t n;
    float *pos, *vel, *density, *inv_mass;
    cl_uint *count, *id, *phase;
    bool bodies;
} host_state;

static const pbfcl_particles_material material = {
    {-0.49f, -0.24f, -0.99f}, {0.49f, 0.74f, 0.99f}, 0.0025f, 997.0f};

static void make_state(host_state *h, size_t n, uint64_t seed)
{
    h->n = n;
    h->pos = malloc(n * 16), h->vel = malloc(n * 16), h->density = malloc(n * 4);
    h->count = malloc(n * 4), h->id = malloc(n * 4);
    h->phase = malloc(n * 4), h->inv_mass = malloc(n * 4), h->bodies = false;
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) { /* some beyond the walls (the box is 1 cm larger) */
            float lo = material.wall_lo[a] - 0.01f, hi = material.wall_hi[a] + 0.01f;
            h->pos[4 * i + a] = test_randf(&seed, lo, hi);
            h->vel[4 * i + a] = test_randf(&seed, -3.0f, 3.0f);
        }
        h->pos[4 * i + 3] = 7.0f; /* w is not a coordinate: ignored */
        h->vel[4 * i + 3] = 9.0f;
        h->density[i] = test_randf(&seed, 900.0f, 1100.0f); /* below rest counts 0 */
        h->count[i] = test_rand(&seed) % 60;
        h->id[i] = (cl_uint)i;
        unsigned kind = test_rand(&seed) % 10;
        h->phase[i] = kind < 6   ? PBFCL_PHASE_FLUID_WORD
                      : kind < 9 ? 1u + kind % 3
                                 : PBFCL_PHASE_STATIC_WORD;
        h->inv_mass[i] = kind < 6 ? 1.0f : kind < 9 ? test_randf(&seed, 0.25f, 4.0f) : 0.0f;
    }
    test_shuffle(h->id, n, &seed); /* slot i holds particle id[i] */
    if (n > 2)
        h->vel[4 * (n / 2) + 1] = NAN; /* one non-finite particle */
}

static void free_state(host_state *h)
{
    free(h->pos), free(h->vel), free(h->density), free(h->count), free(h->id);
    free(h->phase), free(h->inv_mass);
}

static cl_mem upload(pbfcl_cl *cl, const void *data, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(cl->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                              (void *)data, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return b;
}

/* stats' reference from the definitions (docs/SCENES.md, the --stats columns). */
static void ref_stats(const host_state *h, pbfcl_stats *r)
{
    memset(r, 0, sizeof *r);
    double finite = 0, fluid_count = 0;
    for (size_t i = 0; i < h->n; i++) {
        const float *x = h->pos + 4 * i, *v = h->vel + 4 * i;
        bool ok = isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]) && isfinite(v[0]) &&
                  isfinite(v[1]) && isfinite(v[2]);
        if (!ok) {
            r->nan++;
            continue;
        }
        bool out = false;
        for (int a = 0; a < 3; a++)
            out |= x[a] < material.wall_lo[a] || x[a] > material.wall_hi[a];
        r->outside += out;
        double u2 = (double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2];
        /* with bodies: a particle of relative inverse mass w weighs m / w (0: an obstacle,
         * no momentum), and only the fluid's particles have a density error */
        bool fluid = !h->bodies || (h->phase[i] & PBFCL_PHASE_FLUID_BIT);
        double w = h->bodies ? h->inv_mass[i] : 1.0;
        double m = w > 0 ? material.mass / w : 0.0;
        double derr = fluid ? fmax((double)h->density[i] / material.rest_density - 1.0, 0.0) : 0;
        r->kinetic_energy += 0.5 * m * u2;
        r->density_error_avg += derr;
        r->density_error_max = fmax(r->density_error_max, 100.0 * derr);
        fluid_count += fluid;
        r->max_speed = fmax(r->max_speed, sqrt(u2));
        r->neighbours_avg += h->count[i];
        if (h->count[i] > r->neighbours_max)
            r->neighbours_max = h->count[i];
        for (int a = 0; a < 3; a++)
            r->momentum[a] += m * v[a];
        finite++;
    }
    if (fluid_count > 0)
        r->density_error_avg *= 100.0 / fluid_count;
    if (finite > 0)
        r->neighbours_avg /= finite;
}

static void check_stats(const host_state *h, const pbfcl_stats *st)
{
    pbfcl_stats r;
    ref_stats(h, &r);
    size_t n = h->n;
    ck_assert_msg(st->nan == r.nan && st->outside == r.outside,
                  "n %zu: nan %u outside %u, reference %u and %u", n, st->nan, st->outside, r.nan,
                  r.outside);
    ck_assert_msg(n < 100 || r.outside > 0, "n %zu: the reference found none outside", n);
    ck_assert_msg(test_close(st->kinetic_energy, r.kinetic_energy, 1e-9, 1e-4),
                  "n %zu: kinetic %.7g, reference %.7g", n, st->kinetic_energy, r.kinetic_energy);
    ck_assert_msg(test_close(st->density_error_avg, r.density_error_avg, 1e-6, 1e-4),
                  "n %zu: density error %.7g, reference %.7g", n, st->density_error_avg,
                  r.density_error_avg);
    ck_assert_msg(test_close(st->density_error_max, r.density_error_max, 1e-5, 1e-5),
                  "n %zu: density error max %.7g, reference %.7g", n, st->density_error_max,
                  r.density_error_max);
    ck_assert_msg(test_close(st->max_speed, r.max_speed, 1e-6, 1e-5),
                  "n %zu: max speed %.7g, reference %.7g", n, st->max_speed, r.max_speed);
    ck_assert_msg(test_close(st->neighbours_avg, r.neighbours_avg, 1e-9, 1e-6) &&
                      st->neighbours_max == r.neighbours_max,
                  "n %zu: neighbours %.7g / %u, reference %.7g / %u", n, st->neighbours_avg,
                  st->neighbours_max, r.neighbours_avg, r.neighbours_max);
    for (int a = 0; a < 3; a++)
        ck_assert_msg(test_close(st->momentum[a], r.momentum[a], 1e-7, 1e-4),
                      "n %zu: momentum[%d] %.7g, reference %.7g", n, a, st->momentum[a],
                      r.momentum[a]);
}

/* bounds' reference: max |v| (non-finite: FLT_MAX) and the reach along down from the centre
 * of the box box_lo..box_hi, clamped to the box diagonal D, plus D. */
/* bounds against the definition: max |v| (where the state has phases, h->bodies, a body's of
 * groups 1 .. matched or a static one times solid_scale), and the reach down and up along down
 * from the box centre plus its diagonal. */
static void check_bounds(const host_state *h, const float *b, const float *lo, const float *hi,
                         const float *down, unsigned matched, double solid_scale)
{
    double c[3], diag = 0, vmax = 0, up_max = 0, down_max = 0;
    for (int a = 0; a < 3; a++) {
        c[a] = 0.5 * ((double)lo[a] + hi[a]);
        diag += ((double)hi[a] - lo[a]) * ((double)hi[a] - lo[a]);
    }
    diag = sqrt(diag);
    for (size_t i = 0; i < h->n; i++) {
        const float *x = h->pos + 4 * i, *v = h->vel + 4 * i;
        double s = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
        unsigned group = h->phase[i] & PBFCL_PHASE_GROUP_BITS;
        bool body = group >= 1 && group <= matched, fixed = h->phase[i] == PBFCL_PHASE_STATIC_WORD;
        if (h->bodies && (body || fixed))
            s *= solid_scale;
        vmax = fmax(vmax, isfinite(s) ? s : FLT_MAX);
        double d = 0;
        for (int a = 0; a < 3; a++)
            d += ((double)x[a] - c[a]) * down[a];
        d = fmin(fmax(d, -diag), diag);
        up_max = fmax(up_max, diag + d);
        down_max = fmax(down_max, diag - d);
    }
    ck_assert_msg(test_close(b[0], vmax, 1e-6, 1e-5), "n %zu: bounds |v| %.7g, ref %.7g", h->n,
                  b[0], vmax);
    ck_assert_msg(test_close(b[1], up_max, 1e-6, 1e-5), "n %zu: bounds[1] %.7g, ref %.7g", h->n,
                  b[1], up_max);
    ck_assert_msg(test_close(b[2], down_max, 1e-6, 1e-5), "n %zu: bounds[2] %.7g, ref %.7g", h->n,
                  b[2], down_max);
}

/* copy_positions: entry id[i] = (x, y, z, |v|) of slot i; nothing past n. */
static void check_copy(pbfcl_cl *cl, pbfcl_particles *p, const pbfcl_particle_state *s,
                       const host_state *h)
{
    size_t n = h->n;
    float *out = malloc((n + 1) * 16);
    for (size_t i = 0; i < 4 * (n + 1); i++)
        out[i] = -7.0f;
    cl_mem dst = upload(cl, out, (n + 1) * 16);
    ck_assert_int_eq(pbfcl_particles_copy_positions(p, s, dst), PBFCL_OK);
    ck_assert_int_eq(
        clEnqueueReadBuffer(cl->queue, dst, CL_TRUE, 0, (n + 1) * 16, out, 0, NULL, NULL),
        CL_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        const float *x = h->pos + 4 * i, *v = h->vel + 4 * i, *o = out + 4 * h->id[i];
        double sp = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
        for (int a = 0; a < 3; a++)
            expect(o[a] == x[a], "n %zu: copy of slot %zu (id %u)[%d] = %.7g, x %.7g", n, i,
                   h->id[i], a, o[a], x[a]);
        expect(isfinite(sp) ? test_close(o[3], sp, 1e-6, 1e-5) : !isfinite(o[3]),
               "n %zu: copy |v| of slot %zu = %.7g, reference %.7g", n, i, o[3], sp);
    }
    ck_assert_msg(out[4 * n] == -7.0f, "copy_positions wrote past particle n - 1");
    clReleaseMemObject(dst);
    free(out);
}

/* slots: the map's entry id[i] is i for every slot (the reference: the inverse of the ids),
 * one map made at the first use; more particles than the capacity are refused. */
static void check_slots(pbfcl_cl *cl, pbfcl_particles *p, const pbfcl_particle_state *s,
                        const host_state *h)
{
    size_t n = h->n;
    cl_mem map = NULL;
    ck_assert_int_eq(pbfcl_particles_slot_map(p, &map), PBFCL_OK);
    cl_mem again = NULL;
    ck_assert_int_eq(pbfcl_particles_slot_map(p, &again), PBFCL_OK);
    ck_assert_ptr_eq(map, again); /* one map, made once */
    ck_assert_int_eq(pbfcl_particles_slots(p, n, s->id_buf, NULL, PBFCL_STAGE_OTHER), PBFCL_OK);
    cl_uint *slot = malloc(n * 4);
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, map, CL_TRUE, 0, n * 4, slot, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t i = 0; i < n; i++)
        expect(slot[h->id[i]] == i, "n %zu: slot of id %u is %u, expected %zu", n, h->id[i],
               slot[h->id[i]], i);
    ck_assert_int_eq(pbfcl_particles_slots(p, n + 1, s->id_buf, NULL, PBFCL_STAGE_OTHER),
                     PBFCL_ERR_CAPACITY);
    free(slot);
}

static void check_n(pbfcl_cl *cl, size_t n)
{
    host_state h;
    make_state(&h, n, 77 + n);
    pbfcl_particles p;
    ck_assert_int_eq(pbfcl_particles_create(&p, cl, n), PBFCL_OK);
    pbfcl_particle_state s = {n,
                              upload(cl, h.pos, n * 16),
                              upload(cl, h.vel, n * 16),
                              upload(cl, h.density, n * 4),
                              upload(cl, h.count, n * 4),
                              upload(cl, h.id, n * 4),
                              NULL,
                              NULL};
    pbfcl_stats st;
    ck_assert_int_eq(pbfcl_particles_stats(&p, &s, &material, &st), PBFCL_OK);
    check_stats(&h, &st); /* every particle fluid of the material's mass */
    pbfcl_particle_state with_bodies = s;
    with_bodies.phase_buf = upload(cl, h.phase, n * 4);
    with_bodies.inv_mass_buf = upload(cl, h.inv_mass, n * 4);
    h.bodies = true;
    ck_assert_int_eq(pbfcl_particles_stats(&p, &with_bodies, &material, &st), PBFCL_OK);
    check_stats(&h, &st);
    const float lo[3] = {-0.5f, -0.25f, -1.0f}, hi[3] = {0.5f, 0.75f, 1.0f};
    const float g[3] = {0.6f, -0.78f, 0.16f};
    double len = sqrt(0.6 * 0.6 + 0.78 * 0.78 + 0.16 * 0.16);
    float down[3] = {(float)(g[0] / len), (float)(g[1] / len), (float)(g[2] / len)}, b[3];
    /* with phases, a body's speed (groups 1 .. matched: 1 and 2 of the 3 solid groups) and a
     * static's count solid_scale times; the third group's (a cloth's, say) and the fluid's once.
     * All finite here (a non-finite speed is the largest whatever the scales). */
    if (n > 2)
        h.vel[4 * (n / 2) + 1] = 0.5f;
    with_bodies.vel_buf = upload(cl, h.vel, n * 16);
    const float scales[] = {1.0f, 2.5f, 2.5f};
    const unsigned matched[] = {2, 2, 0};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(
            pbfcl_particles_bounds(&p, &with_bodies, lo, hi, down, matched[k], scales[k], NULL),
            PBFCL_OK);
        ck_assert_int_eq(pbfcl_particles_read_bounds(&p, b), PBFCL_OK);
        check_bounds(&h, b, lo, hi, down, matched[k], scales[k]);
    }
    clReleaseMemObject(with_bodies.vel_buf);
    if (n > 2)
        h.vel[4 * (n / 2) + 1] = NAN;
    h.bodies = false;
    clReleaseMemObject(with_bodies.phase_buf);
    clReleaseMemObject(with_bodies.inv_mass_buf);
    /* without phases every particle is fluid: the scale is not applied */
    ck_assert_int_eq(pbfcl_particles_bounds(&p, &s, lo, hi, down, 2, 2.5f, NULL), PBFCL_OK);
    ck_assert_int_eq(pbfcl_particles_read_bounds(&p, b), PBFCL_OK);
    check_bounds(&h, b, lo, hi, down, 2, 1.0);
    check_copy(cl, &p, &s, &h);
    check_slots(cl, &p, &s, &h);
    /* more particles than the passes were made for: refused, nothing launched */
    pbfcl_particle_state big = s;
    big.n = n + 1;
    ck_assert_int_eq(pbfcl_particles_stats(&p, &big, &material, &st), PBFCL_ERR_CAPACITY);
    cl_mem bufs[] = {s.pos_buf, s.vel_buf, s.density_buf, s.neighbor_count_buf, s.id_buf};
    for (int k = 0; k < 5; k++)
        clReleaseMemObject(bufs[k]);
    pbfcl_particles_destroy(&p);
    pbfcl_particles_destroy(&p); /* destroy twice: a zeroed struct is accepted */
    free_state(&h);
}

static void check_passes(pbfcl_cl *cl)
{
    pbfcl_build_config cfg;
    pbfcl_particles_build_config(&cl->dev, &cfg);
    size_t wg = cfg.wg_size, sizes[] = {1, wg - 1, wg, wg + 1, 1009};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        check_n(cl, sizes[k]);
}

/* Rows of words 32-bit words: gather count of them at distinct shuffled slots of a buffer of
 * rows + 5 rows into a packed buffer, then scatter packed rows back to those slots of another;
 * each against a C copy, the word past the packed rows and the rows at no slot untouched. */
static void check_rows_once(pbfcl_cl *cl, pbfcl_particles *p, size_t count, size_t words)
{
    size_t rows = count + 5, seed_n = count * 31 + words;
    uint64_t seed = 1234 + seed_n;
    cl_uint *src = malloc(rows * words * 4), *slots = malloc(rows * 4);
    cl_uint *out = malloc((count * words + 1) * 4), *dst = malloc(rows * words * 4);
    for (size_t i = 0; i < rows * words; i++)
        src[i] = test_rand(&seed);
    for (size_t r = 0; r < rows; r++)
        slots[r] = (cl_uint)r;
    test_shuffle(slots, rows, &seed); /* the first count: distinct slots in no order */
    for (size_t i = 0; i < count * words + 1; i++)
        out[i] = 0xdeadbeefu;
    cl_mem src_buf = upload(cl, src, rows * words * 4), slots_buf = upload(cl, slots, rows * 4);
    cl_mem out_buf = upload(cl, out, (count * words + 1) * 4);
    ck_assert_int_eq(pbfcl_particles_gather_rows(p, src_buf, words, slots_buf, count, out_buf),
                     PBFCL_OK);
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, out_buf, CL_TRUE, 0, (count * words + 1) * 4,
                                         out, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t r = 0; r < count; r++)
        for (size_t w = 0; w < words; w++)
            expect(out[r * words + w] == src[slots[r] * words + w],
                   "gather_rows %zu rows of %zu: word %zu of row %zu (slot %u) is %08x, not %08x",
                   count, words, w, r, slots[r], out[r * words + w], src[slots[r] * words + w]);
    ck_assert_msg(out[count * words] == 0xdeadbeefu, "gather_rows wrote past its %zu rows", count);
    /* scatter: the packed rows (out) to the same slots of a buffer of other words */
    for (size_t i = 0; i < rows * words; i++)
        dst[i] = ~src[i];
    cl_mem dst_buf = upload(cl, dst, rows * words * 4);
    ck_assert_int_eq(pbfcl_particles_scatter_rows(p, out_buf, words, slots_buf, count, dst_buf),
                     PBFCL_OK);
    ck_assert_int_eq(
        clEnqueueReadBuffer(cl->queue, dst_buf, CL_TRUE, 0, rows * words * 4, dst, 0, NULL, NULL),
        CL_SUCCESS);
    for (size_t r = 0; r < rows; r++) /* slots[count..] were not scattered to */
        for (size_t w = 0; w < words; w++) {
            cl_uint want = r < count ? out[r * words + w] : ~src[slots[r] * words + w];
            expect(dst[slots[r] * words + w] == want,
                   "scatter_rows %zu rows of %zu: word %zu of slot %u is %08x, not %08x", count,
                   words, w, slots[r], dst[slots[r] * words + w], want);
        }
    cl_mem bufs[] = {src_buf, slots_buf, out_buf, dst_buf};
    for (int k = 0; k < 4; k++)
        clReleaseMemObject(bufs[k]);
    free(src), free(slots), free(out), free(dst);
}

static void check_rows(pbfcl_cl *cl)
{
    pbfcl_particles p;
    ck_assert_int_eq(pbfcl_particles_create(&p, cl, 16), PBFCL_OK);
    size_t wg = p.wg, counts[] = {0, 1, wg - 1, wg, wg + 1, 1009}, words[] = {1, 3, 32};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
            check_rows_once(cl, &p, counts[c], words[w]);
    /* a row of no words is refused, saying so */
    cl_uint one = 0;
    cl_mem b = upload(cl, &one, 4);
    ck_assert_int_eq(pbfcl_particles_gather_rows(&p, b, 0, b, 1, b), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_particles_scatter_rows(&p, b, 0, b, 1, b), PBFCL_ERR_BAD_ARGUMENT);
    clReleaseMemObject(b);
    pbfcl_particles_destroy(&p);
}

START_TEST(test_particles_rows)
{
    test_each_device(check_rows);
}
END_TEST

/* fill_rows: rows first..first+count-1 of a buffer of first + count + 3 rows of words take
 * value + step * row (every word), against a C fill; the rows around keep their words. */
static void check_fill_once(pbfcl_cl *cl, pbfcl_particles *p, size_t first, size_t count,
                            size_t words, cl_uint value, cl_uint step)
{
    size_t rows = first + count + 3;
    cl_uint *dst = malloc(rows * words * 4);
    for (size_t i = 0; i < rows * words; i++)
        dst[i] = 0xdeadbeefu ^ (cl_uint)i;
    cl_mem dst_buf = upload(cl, dst, rows * words * 4);
    ck_assert_int_eq(pbfcl_particles_fill_rows(p, dst_buf, words, first, count, value, step),
                     PBFCL_OK);
    ck_assert_int_eq(
        clEnqueueReadBuffer(cl->queue, dst_buf, CL_TRUE, 0, rows * words * 4, dst, 0, NULL, NULL),
        CL_SUCCESS);
    for (size_t r = 0; r < rows; r++)
        for (size_t w = 0; w < words; w++) {
            bool filled = r >= first && r < first + count;
            cl_uint want =
                filled ? value + step * (cl_uint)r : 0xdeadbeefu ^ (cl_uint)(r * words + w);
            expect(dst[r * words + w] == want,
                   "fill_rows %zu rows of %zu from %zu (%08x + %u a row): word %zu of row %zu is "
                   "%08x, not %08x",
                   count, words, first, value, step, w, r, dst[r * words + w], want);
        }
    clReleaseMemObject(dst_buf);
    free(dst);
}

/* The columns of a record of 8 words: 4 words at 0, 1 at 4 and 3 at 5 (as positions, an id
 * and a row of three): gather_column from count shuffled slots of three buffers of count + 5
 * rows into packed records, then append_column of those records into rows first.. of three
 * buffers of other words; each against a C copy, the word past the records and the rows
 * outside untouched. */
static void check_columns_once(pbfcl_cl *cl, pbfcl_particles *p, size_t count, size_t first)
{
    enum { COLS = 3, STRIDE = 8 };
    static const size_t words[COLS] = {4, 1, 3}, at[COLS] = {0, 4, 5};
    size_t rows = count + 5, dst_rows = first + count + 2;
    uint64_t seed = 4321 + count * 7 + first;
    cl_uint *src[COLS], *dst[COLS], *slots = malloc(rows * 4);
    cl_uint *rec = malloc((count * STRIDE + 1) * 4);
    cl_mem src_buf[COLS], dst_buf[COLS];
    for (size_t r = 0; r < rows; r++)
        slots[r] = (cl_uint)r;
    test_shuffle(slots, rows, &seed);
    for (size_t i = 0; i < count * STRIDE + 1; i++)
        rec[i] = 0xdeadbeefu;
    cl_mem slots_buf = upload(cl, slots, rows * 4),
           rec_buf = upload(cl, rec, (count * STRIDE + 1) * 4);
    for (int c = 0; c < COLS; c++) {
        src[c] = malloc(rows * words[c] * 4);
        for (size_t i = 0; i < rows * words[c]; i++)
            src[c][i] = test_rand(&seed);
        src_buf[c] = upload(cl, src[c], rows * words[c] * 4);
        ck_assert_int_eq(pbfcl_particles_gather_column(p, src_buf[c], words[c], slots_buf, count,
                                                       STRIDE, at[c], rec_buf),
                         PBFCL_OK);
    }
    ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, rec_buf, CL_TRUE, 0, (count * STRIDE + 1) * 4,
                                         rec, 0, NULL, NULL),
                     CL_SUCCESS);
    for (int c = 0; c < COLS; c++)
        for (size_t r = 0; r < count; r++)
            for (size_t w = 0; w < words[c]; w++)
                expect(rec[r * STRIDE + at[c] + w] == src[c][slots[r] * words[c] + w],
                       "gather_column %zu records: word %zu of column %d of record %zu (slot %u) "
                       "is %08x, not %08x",
                       count, w, c, r, slots[r], rec[r * STRIDE + at[c] + w],
                       src[c][slots[r] * words[c] + w]);
    ck_assert_msg(rec[count * STRIDE] == 0xdeadbeefu, "gather_column wrote past %zu records",
                  count);
    for (int c = 0; c < COLS; c++) {
        dst[c] = malloc(dst_rows * words[c] * 4);
        for (size_t i = 0; i < dst_rows * words[c]; i++)
            dst[c][i] = ~(cl_uint)i;
        dst_buf[c] = upload(cl, dst[c], dst_rows * words[c] * 4);
        ck_assert_int_eq(pbfcl_particles_append_column(p, rec_buf, STRIDE, at[c], words[c], first,
                                                       count, dst_buf[c]),
                         PBFCL_OK);
        ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, dst_buf[c], CL_TRUE, 0,
                                             dst_rows * words[c] * 4, dst[c], 0, NULL, NULL),
                         CL_SUCCESS);
        for (size_t r = 0; r < dst_rows; r++)
            for (size_t w = 0; w < words[c]; w++) {
                size_t i = r * words[c] + w;
                bool in = r >= first && r < first + count;
                cl_uint want = in ? rec[(r - first) * STRIDE + at[c] + w] : ~(cl_uint)i;
                expect(dst[c][i] == want,
                       "append_column %zu records from row %zu: word %zu of column %d of row %zu "
                       "is %08x, not %08x",
                       count, first, w, c, r, dst[c][i], want);
            }
    }
    for (int c = 0; c < COLS; c++) { /* scatter_column back into the shuffled slots of src */
        ck_assert_int_eq(pbfcl_particles_fill_rows(p, src_buf[c], words[c], 0, rows, 7, 0),
                         PBFCL_OK);
        ck_assert_int_eq(pbfcl_particles_scatter_column(p, rec_buf, STRIDE, at[c], words[c],
                                                        slots_buf, count, src_buf[c]),
                         PBFCL_OK);
        cl_uint *back = malloc(rows * words[c] * 4);
        ck_assert_int_eq(clEnqueueReadBuffer(cl->queue, src_buf[c], CL_TRUE, 0, rows * words[c] * 4,
                                             back, 0, NULL, NULL),
                         CL_SUCCESS);
        for (size_t r = 0; r < rows; r++) { /* slots[count..] untouched: 7 */
            size_t k = 0;
            while (k < count && slots[k] != r)
                k++;
            for (size_t w = 0; w < words[c]; w++) {
                cl_uint want = k < count ? rec[k * STRIDE + at[c] + w] : 7u;
                expect(back[r * words[c] + w] == want,
                       "scatter_column %zu records: word %zu of column %d of row %zu is %08x, "
                       "not %08x",
                       count, w, c, r, back[r * words[c] + w], want);
            }
        }
        free(back);
    }
    for (int c = 0; c < COLS; c++) {
        clReleaseMemObject(src_buf[c]), clReleaseMemObject(dst_buf[c]);
        free(src[c]), free(dst[c]);
    }
    clReleaseMemObject(slots_buf), clReleaseMemObject(rec_buf);
    free(slots), free(rec);
}

static void check_records(pbfcl_cl *cl)
{
    pbfcl_particles p;
    ck_assert_int_eq(pbfcl_particles_create(&p, cl, 16), PBFCL_OK);
    size_t wg = p.wg, counts[] = {0, 1, wg - 1, wg, wg + 1, 1009}, firsts[] = {0, 7};
    static const cl_uint patterns[][2] = {{0, 0}, {0x3f800000u, 0}, {0, 1}, {5, 1}};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t f = 0; f < 2; f++) {
            check_columns_once(cl, &p, counts[c], firsts[f]);
            for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++)
                check_fill_once(cl, &p, firsts[f], counts[c], k % 2 ? 4 : 1, patterns[k][0],
                                patterns[k][1]);
        }
    /* rows of no words, and columns past their records, are refused */
    cl_uint one = 0;
    cl_mem b = upload(cl, &one, 4);
    ck_assert_int_eq(pbfcl_particles_fill_rows(&p, b, 0, 0, 1, 0, 0), PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_particles_gather_column(&p, b, 0, b, 1, 1, 0, b),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_particles_gather_column(&p, b, 4, b, 1, 8, 5, b),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_particles_append_column(&p, b, 8, 5, 4, 0, 1, b),
                     PBFCL_ERR_BAD_ARGUMENT);
    ck_assert_int_eq(pbfcl_particles_scatter_column(&p, b, 8, 5, 4, b, 1, b),
                     PBFCL_ERR_BAD_ARGUMENT);
    clReleaseMemObject(b);
    pbfcl_particles_destroy(&p);
}

START_TEST(test_particles_records)
{
    test_each_device(check_records);
}
END_TEST

START_TEST(test_particles_reference)
{
    test_each_device(check_passes);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("particles");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_test(dev, test_particles_reference);
    tcase_add_test(dev, test_particles_rows);
    tcase_add_test(dev, test_particles_records);
    suite_add_tcase(suite, dev);
    return test_run_suite(suite, true);
}
