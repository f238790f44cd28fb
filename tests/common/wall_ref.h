/* Host references shared by the kernel tests of both methods: the walls' density
 * (cl/pbf/pbf.cl, pbf_wall_density) by quadrature, from the kernel's definition. Header-only. */
#ifndef PBFCL_WALL_REF_H
#define PBFCL_WALL_REF_H

#include "poly6_ref.h"
#include "sim/sim.h"

#include <math.h>

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

#endif
