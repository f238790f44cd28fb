/* Host references shared by the kernel tests of both methods: Poly6 and the walls' density
 * (cl/pbf/pbf.cl, pbf_wall_density) by quadrature, from the kernel's definition. Header-only. */
#ifndef PBFCL_WALL_REF_H
#define PBFCL_WALL_REF_H

#include "sim/sim.h"

#include <math.h>

#define PI 3.14159265358979323846

/* Host reference of Poly6 (the formula of cl/pbf/pbf.cl). */
static inline double ref_poly6(double r, double h)
{
    return r < h ? 315.0 / (64.0 * PI * pow(h, 9)) * pow(h * h - r * r, 3) : 0.0;
}

/* The walls' density at distance d from a wall plane, in units of rho0, by quadrature: the
 * Poly6 mass of the fluid beyond the plane, int_d^h dz int_0^sqrt(h^2 - z^2) 2 pi s W ds
 * (Simpson's rule in both), times the calibration (cl/pbf/pbf.cl, pbf_wall_phi, in closed form). */
static inline double ref_wall_phi(double d, double h, double scale)
{
    if (d >= h)
        return 0.0;
    const int m = 64; /* even */
    double dz = (h - d) / m, sum = 0.0;
    for (int a = 0; a <= m; a++) {
        double z = d + a * dz, smax = sqrt(fmax(h * h - z * z, 0.0)), ds = smax / m, disc = 0.0;
        for (int b = 0; b <= m; b++) {
            double sv = b * ds, wb = (b == 0 || b == m) ? 1 : (b % 2 ? 4 : 2);
            disc += wb * 2.0 * PI * sv * ref_poly6(sqrt(z * z + sv * sv), h);
        }
        double wa = (a == 0 || a == m) ? 1 : (a % 2 ? 4 : 2);
        sum += wa * disc * ds / 3.0;
    }
    return scale * sum * dz / 3.0;
}

/* The walls' density of x (units of rho0) and its gradient by central differences. */
static inline double ref_wall(const pbfcl_pbf_params *p, const float *x, double grad[3])
{
    double scale = pbfcl_pbf_wall_scale(p), e = 1e-6;
    double xs[3] = {x[0], x[1], x[2]};
    double f[3], g[3];
    for (int a = 0; a < 3; a++) {
        double lo = xs[a] - p->box_min[a], hi = p->box_max[a] - xs[a];
        f[a] = 1.0 - ref_wall_phi(lo, p->h, scale) - ref_wall_phi(hi, p->h, scale);
        g[a] = (ref_wall_phi(lo - e, p->h, scale) - ref_wall_phi(lo + e, p->h, scale) +
                ref_wall_phi(hi + e, p->h, scale) - ref_wall_phi(hi - e, p->h, scale)) /
               (2 * e);
    }
    grad[0] = -g[0] * f[1] * f[2];
    grad[1] = -g[1] * f[0] * f[2];
    grad[2] = -g[2] * f[0] * f[1];
    return 1.0 - f[0] * f[1] * f[2];
}

/* The Poly6 density of the rest lattice (spacing 2r) at a particle inside it, in units of
 * rho0 with m = rho0 (2r)^3: the sum over the lattice, from the kernel's definition. */
static inline double ref_lattice_density(double r, double h)
{
    double s = 2.0 * r, sum = 0.0;
    int reach = (int)ceil(h / s);
    for (int i = -reach; i <= reach; i++)
        for (int j = -reach; j <= reach; j++)
            for (int k = -reach; k <= reach; k++)
                sum += ref_poly6(s * sqrt((double)(i * i + j * j + k * k)), h);
    return sum * s * s * s;
}

#endif
