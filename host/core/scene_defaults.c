/* The documented defaults of a scene: the solver settings (SI units, the values the physics
 * tests validate), gravity, rest density, and an empty unit box. */
#include "scene.h"

#include <string.h>

void pbfcl_scene_defaults(pbfcl_scene *s)
{
    memset(s, 0, sizeof *s);
    strcpy(s->name, "default");
    for (int a = 0; a < 3; a++) {
        s->domain_min[a] = 0.0f;
        s->domain_max[a] = 1.0f;
    }
    s->gravity[1] = -9.81f;
    s->particle_radius = 0.01f; /* m; particles are spaced 2r */
    s->rest_density = 1000.0f;  /* kg/m^3, water */
    s->fluid_count = 0;
    pbfcl_solver_settings *v = &s->solver;
    v->dt = 1.0f / 60.0f;            /* one frame */
    v->substeps = 3;                 /* substep 1/180 s: keeps a resting block below 1 % */
    v->iterations = 4;               /* density solver iterations per substep */
    v->stabilization_iterations = 1; /* collision passes per solver iteration */
    v->contact_interval = 1;         /* collision passes after every iteration (seed 001) */
    v->chebyshev_rho = 0.0f;         /* plain Jacobi iterations (0.95: accelerated) */
    v->cfl = 0.5f;                   /* at most h / 2 per substep (1 when accelerated) */
    v->h_ratio = 4.0f;               /* h = 4r: 26 neighbours at rest */
    v->relaxation = 0.1f;   /* epsilon = relaxation / h^2 (the rest-state sum of |grad C|^2 is
                               about 1.5 / h^2, so this softens lambda by about 6 %) */
    v->scorr_k = 0.001f;    /* s_corr strength k, in units of h^2 (lambda's units) */
    v->scorr_n = 4.0f;      /* s_corr exponent n */
    v->scorr_dq = 0.2f;     /* delta q = 0.2 h */
    v->contact_slop = 0.2f; /* contacts move x only for pairs closer than 0.8 * 2r */
    v->vorticity = 0.01f;   /* vorticity confinement epsilon, m/s: f = epsilon (N x omega) */
    v->viscosity = 0.05f;   /* XSPH c: about a 5 % blend per substep at these substeps */
    v->max_speed = 50.0f;   /* m/s: faster particles mean the simulation blew up */
}
