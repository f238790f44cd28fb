/* The constants every method's kernels read (pbfcl_constants), derived from the scene: the
 * common part here, a method's own fields by its derive; the lattice sums the walls and SPH's
 * mass are calibrated with; the checks of a scene without a device. */
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>

#define PBFCL_PI 3.14159265358979323846

float pbfcl_poly6_at(const pbfcl_constants *p, float r)
{
    float d = p->h2 - r * r;
    return r < p->h ? p->poly6 * d * d * d : 0.0f;
}

/* s^3 times the sum of Poly6 (radius h) over a lattice of spacing s at a point of it: all of
 * the lattice if !half, else only its layers at or above the point's own. */
static double lattice_sum(double s, double h, int half)
{
    double poly6 = 315.0 / (64.0 * PBFCL_PI * pow(h, 9.0)), sum = 0.0;
    int reach = (int)ceil(h / s);
    for (int i = -reach; i <= reach; i++)
        for (int j = half ? 0 : -reach; j <= reach; j++)
            for (int k = -reach; k <= reach; k++) {
                double r2 = s * s * (i * i + j * j + k * k), d = h * h - r2;
                sum += r2 < h * h ? poly6 * d * d * d : 0.0;
            }
    return sum * s * s * s;
}

/* The Poly6 density, in units of rho0, of the rest lattice (spacing 2r) of particles of p's
 * mass at a particle of it (all of it, or its layers at or above the particle's: half). */
static double lattice_density(const pbfcl_constants *p, int half)
{
    double s = p->min_dist;
    return lattice_sum(s, p->h, half) * p->volume / (s * s * s);
}

double pbfcl_particle_volume(const pbfcl_scene *s)
{
    double spacing = 2.0 * s->particle_radius;
    return spacing * spacing * spacing / lattice_sum(spacing, s->solver.h_ratio * spacing / 2.0, 0);
}

/* Neighbours of a particle of the rest lattice (spacing 2r) closer than h = h_ratio * r. */
static unsigned rest_neighbours(float h_ratio)
{
    if (!(h_ratio > 0.0f) || !(h_ratio <= 64.0f))
        return h_ratio > 0.0f ? UINT32_MAX : 0;
    int reach = (int)ceil(h_ratio / 2.0);
    unsigned count = 0;
    for (int i = -reach; i <= reach; i++)
        for (int j = -reach; j <= reach; j++)
            for (int k = -reach; k <= reach; k++) {
                double d = 2.0 * sqrt((double)(i * i + j * j + k * k));
                count += (d > 0.0 && d < h_ratio);
            }
    return count;
}

pbfcl_status pbfcl_sim_constants(const pbfcl_scene *s, const pbfcl_solver_method *m,
                                 pbfcl_constants *p)
{
    const pbfcl_solver_settings *v = &s->solver;
    if (!(s->particle_radius > 0.0f) || !(s->rest_density > 0.0f)) {
        pbfcl_errorf("the solver needs particle_radius > 0 and rest_density > 0 (got r = %g, "
                     "rho0 = %g)",
                     s->particle_radius, s->rest_density);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_solver_params_check(v)); /* the one validator of the solver parameters */
    unsigned rest = rest_neighbours(v->h_ratio);
    if (!(v->h_ratio > 2.0f) || rest > PBFCL_SIM_MAX_NEIGHBORS * 2 / 3) {
        pbfcl_errorf("solver h_ratio %g gives %u neighbours per particle at rest (lattice "
                     "spacing 2r); the kernel radius h = h_ratio * r must reach past the spacing "
                     "(h_ratio > 2) and the neighbour lists (%u entries) need a third of room for "
                     "compression: use an h_ratio above 2 and at most %.3f (default 4)",
                     v->h_ratio, rest, PBFCL_SIM_MAX_NEIGHBORS, PBFCL_MAX_H_RATIO);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    memset(p, 0, sizeof *p);
    for (int a = 0; a < 3; a++) {
        p->box_min[a] = s->domain_min[a];
        p->box_max[a] = s->domain_max[a];
    }
    double r = s->particle_radius, h = v->h_ratio * r, spacing = 2.0 * r;
    p->dt = (float)(v->dt / v->substeps);
    p->inv_dt = 1.0f / p->dt;
    p->h = (float)h;
    p->h2 = (float)(h * h);
    p->rest_density = s->rest_density;
    p->inv_rest_density = 1.0f / s->rest_density;
    p->poly6 = (float)(315.0 / (64.0 * PBFCL_PI * pow(h, 9.0)));
    p->spiky_grad = (float)(-45.0 / (PBFCL_PI * pow(h, 6.0)));
    p->radius = s->particle_radius;
    p->min_dist = (float)spacing;
    double volume = pbfcl_particle_volume(s);
    p->volume = (float)volume;
    p->mass = (float)(s->rest_density * volume);
    p->self_density = (float)(p->mass * p->poly6 * pow(h, 6.0));
    return m->derive ? m->derive(s, p) : PBFCL_OK; /* the method's own fields and conditions */
}

double pbfcl_pbf_lattice_density(const pbfcl_constants *p)
{
    return lattice_density(p, 0);
}

double pbfcl_pbf_wall_scale(const pbfcl_constants *p)
{
    double h = p->h, d = p->radius, h2 = h * h, d2 = d * d;
    double fd = d * (h2 * h2 * h2 * h2 - 4.0 / 3.0 * h2 * h2 * h2 * d2 + 1.2 * h2 * h2 * d2 * d2 -
                     4.0 / 7.0 * h2 * d2 * d2 * d2 + d2 * d2 * d2 * d2 / 9.0);
    double phi = p->poly6 * PBFCL_PI / 4.0 * (128.0 / 315.0 * pow(h, 9.0) - fd);
    return phi > 0.0 ? (lattice_density(p, 0) - lattice_density(p, 1)) / phi : 0.0;
}

pbfcl_status sim_grid_params(const pbfcl_scene *s, const pbfcl_constants *p, pbfcl_grid_params *out)
{
    return pbfcl_grid_params_fit(s->domain_min, s->domain_max, p->h, out);
}

unsigned long long pbfcl_sim_bytes_needed_with(const pbfcl_scene *scene,
                                               const pbfcl_solver_method *m, size_t n)
{
    pbfcl_constants p;
    pbfcl_grid_params g;
    unsigned grid_bits = 0;
    if (pbfcl_sim_constants(scene, m, &p) == PBFCL_OK && sim_grid_params(scene, &p, &g) == PBFCL_OK)
        grid_bits = g.grid_bits;
    return n * sim_buffers_bytes(m) +
           pbfcl_grid_bytes_needed(n, PBFCL_SIM_MAX_NEIGHBORS, grid_bits) +
           pbfcl_particles_bytes_needed(n);
}

/* ---- checks without a device ------------------------------------------------------- */

pbfcl_status pbfcl_sim_check_scene_with(const pbfcl_scene *scene, const pbfcl_solver_method *m,
                                        size_t n)
{
    pbfcl_constants p;
    pbfcl_grid_params g;
    if (n == 0 || n > PBFCL_SIM_MAX_PARTICLES) {
        pbfcl_errorf("a simulation needs 1 to %u particles (got %zu); change the particle count "
                     "or radius",
                     (unsigned)PBFCL_SIM_MAX_PARTICLES, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    PBFCL_TRY(pbfcl_sim_constants(scene, m, &p));
    return sim_grid_params(scene, &p, &g);
}
