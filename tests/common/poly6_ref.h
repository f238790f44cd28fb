/* Host references of Poly6 and of the rest lattice's mass, from the kernel's definition, for
 * tests inside the core and those of the public API alike. Header-only, no pbfcl header. */
#ifndef PBFCL_POLY6_REF_H
#define PBFCL_POLY6_REF_H

#include <math.h>

#define PI 3.14159265358979323846

/* Host reference of Poly6 (the formula of cl/pbf/pbf.cl). */
static inline double ref_poly6(double r, double h)
{
    return r < h ? 315.0 / (64.0 * PI * pow(h, 9)) * pow(h * h - r * r, 3) : 0.0;
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

/* A fluid particle's mass: the one that puts the rest lattice (spacing 2r) at rho0 with Poly6 of
 * radius h, rho0 (2r)^3 / ref_lattice_density. */
static inline double ref_fluid_mass(double rho0, double r, double h)
{
    return rho0 * pow(2.0 * r, 3) / ref_lattice_density(r, h);
}

#endif
