/* The emitters and drains of a scene: their checks, the layers a nozzle emits and when, and
 * the drain test. The solver is fed by the caller (pbfcl_scene_setup_flow, host/lib). */
#include "scene/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Two unit vectors perpendicular to v and to each other. */
static void disc_basis(const float v[3], double u[3], double w[3])
{
    double len = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
    double n[3] = {v[0] / len, v[1] / len, v[2] / len};
    double a[3] = {0, 0, 0};
    a[fabs(n[0]) < 0.9 ? 0 : 1] = 1.0; /* an axis not along n */
    double d = a[0] * n[0] + a[1] * n[1] + a[2] * n[2];
    double ul = 0.0;
    for (int k = 0; k < 3; k++) {
        u[k] = a[k] - d * n[k];
        ul += u[k] * u[k];
    }
    for (int k = 0; k < 3; k++)
        u[k] /= sqrt(ul);
    w[0] = n[1] * u[2] - n[2] * u[1];
    w[1] = n[2] * u[0] - n[0] * u[2];
    w[2] = n[0] * u[1] - n[1] * u[0];
}

size_t pbfcl_scene_emitter_layer(const pbfcl_scene *s, int e, float *out)
{
    const pbfcl_emitter *m = &s->emitters[e];
    double u[3], w[3], spacing = 2.0 * s->particle_radius, reach = m->radius / spacing;
    disc_basis(m->velocity, u, w);
    long long span = (long long)floor(reach);
    size_t n = 0;
    for (long long a = -span; a <= span; a++)
        for (long long b = -span; b <= span; b++) {
            if ((double)(a * a + b * b) > reach * reach * (1.0 + 1e-6))
                continue;
            if (out)
                for (int k = 0; k < 3; k++)
                    out[3 * n + k] = (float)(spacing * ((double)a * u[k] + (double)b * w[k]));
            n++;
        }
    return n;
}

long long pbfcl_scene_emitted_by(const pbfcl_scene *s, int e, double t)
{
    const pbfcl_emitter *m = &s->emitters[e];
    long long layer = (long long)pbfcl_scene_emitter_layer(s, e, NULL);
    double due = floor((double)m->rate * t / (double)layer + 1e-9) * (double)layer;
    return due < (double)m->count ? (long long)due : m->count;
}

pbfcl_status pbfcl_scene_emit(const pbfcl_scene *s, int e, long long from, long long due, double t,
                              float *pos, float *vel)
{
    const pbfcl_emitter *m = &s->emitters[e];
    size_t layer = pbfcl_scene_emitter_layer(s, e, NULL);
    float *offset = malloc(layer * 3 * sizeof *offset + 12);
    if (!offset)
        return PBFCL_ERR_OUT_OF_MEMORY;
    pbfcl_scene_emitter_layer(s, e, offset);
    for (long long j = from; j < due; j++) {
        long long l = j / (long long)layer;
        size_t i = (size_t)(j - from);
        double since = t - (double)(l + 1) * (double)layer / m->rate;
        for (int a = 0; a < 3; a++) {
            pos[3 * i + a] = (float)(m->center[a] + offset[3 * (j % (long long)layer) + a] +
                                     m->velocity[a] * since);
            vel[3 * i + a] = m->velocity[a];
        }
    }
    free(offset);
    return PBFCL_OK;
}

bool pbfcl_scene_in_drain(const pbfcl_scene *s, const float p[3])
{
    for (int d = 0; d < s->drain_count; d++) {
        const pbfcl_fluid_shape *f = &s->drains[d];
        if (p[0] >= f->min[0] && p[0] <= f->max[0] && p[1] >= f->min[1] && p[1] <= f->max[1] &&
            p[2] >= f->min[2] && p[2] <= f->max[2])
            return true;
    }
    return false;
}

size_t pbfcl_scene_capacity(const pbfcl_scene *s)
{
    size_t n = pbfcl_scene_count(s);
    for (int e = 0; e < s->emitter_count; e++)
        n += (size_t)s->emitters[e].count;
    for (int c = 0; c < s->cloth_count; c++) /* room to split each of a tearing cloth's once */
        if (s->cloths[c].tear > 0.0f)
            n += pbfcl_scene_cloth_walk(s, c, NULL);
    return n;
}

static bool check_emitter(const pbfcl_scene *s, int e)
{
    const pbfcl_emitter *m = &s->emitters[e];
    double v2 = 0.0, r = s->particle_radius;
    for (int k = 0; k < 3; k++) {
        if (!isfinite(m->center[k]) || !isfinite(m->velocity[k]))
            return pbfcl_scene_error(s, "emitters[%d].%s[%d] is not a finite number", e,
                                     isfinite(m->center[k]) ? "velocity" : "center", k);
        v2 += (double)m->velocity[k] * m->velocity[k];
        float lo = s->domain_min[k] + (float)r, hi = s->domain_max[k] - (float)r;
        if (m->center[k] - m->radius < lo || m->center[k] + m->radius > hi)
            return pbfcl_scene_error(
                s,
                "emitters[%d]: the nozzle (center %g, radius %g along %c) reaches "
                "outside the domain less the particle radius (%g..%g); move it "
                "inside or make it smaller",
                e, m->center[k], m->radius, "xyz"[k], lo, hi);
    }
    double speed = sqrt(v2), limit = pbfcl_scene_max_speed(s);
    if (!(speed > 0.0) || speed >= limit)
        return pbfcl_scene_error(
            s,
            "emitters[%d].velocity is %g m/s; give a speed above 0 and below the "
            "blow-up limit %g m/s (solver.max_speed)",
            e, speed, limit);
    if (!(m->radius >= 0.0f) || !isfinite(m->radius))
        return pbfcl_scene_error(s, "emitters[%d].radius must be a number >= 0 (got %g)", e,
                                 m->radius);
    size_t layer = pbfcl_scene_emitter_layer(s, e, NULL);
    double most = (double)layer * speed / (2.0 * r);
    if (!(m->rate > 0.0f) || m->rate > most * (1.0 + 1e-6))
        return pbfcl_scene_error(s,
                                 "emitters[%d].rate is %g particles/s; the nozzle (%zu particles a "
                                 "layer at spacing %g m) holds at most %g at %g m/s, so its layers "
                                 "do not overlap: give a rate above 0 and at most that, a larger "
                                 "radius or a higher speed",
                                 e, m->rate, layer, 2.0 * r, most, speed);
    if (m->count < 1 || m->count > (long long)PBFCL_SCENE_MAX_PARTICLES)
        return pbfcl_scene_error(s, "emitters[%d].count must be from 1 to %llu (got %lld)", e,
                                 PBFCL_SCENE_MAX_PARTICLES, m->count);
    return true;
}

bool pbfcl_scene_check_flow(const pbfcl_scene *s)
{
    if (s->emitter_count < 0 || s->emitter_count > PBFCL_MAX_EMITTERS || s->drain_count < 0 ||
        s->drain_count > PBFCL_MAX_DRAINS)
        return pbfcl_scene_error(s, "a scene has 0 to %d emitters and 0 to %d drains",
                                 PBFCL_MAX_EMITTERS, PBFCL_MAX_DRAINS);
    for (int e = 0; e < s->emitter_count; e++)
        if (!check_emitter(s, e))
            return false;
    for (int d = 0; d < s->drain_count; d++) {
        char where[32];
        snprintf(where, sizeof where, "drains[%d].box", d);
        if (s->drains[d].kind != PBFCL_SHAPE_BOX)
            return pbfcl_scene_error(s, "%s: a drain is a box", where);
        if (!pbfcl_scene_check_shape(s, where, &s->drains[d]))
            return false;
    }
    double total = (double)pbfcl_scene_capacity(s);
    if (total > (double)PBFCL_SCENE_MAX_PARTICLES)
        return pbfcl_scene_error(s,
                                 "the fill and the emitters' counts make %.0f particles, more than "
                                 "%llu; emit fewer",
                                 total, PBFCL_SCENE_MAX_PARTICLES);
    return true;
}
