/* The Position Based Fluids solver kernels (Macklin & Mueller 2013), one per stage of seed
 * 001's outline: predict, lambda, delta, collide, update, and omega, the vorticity force and
 * the viscosity in one pass (vorticity_viscosity). apply_delta needs no kernel: delta and
 * collide write x* + dx, which the host adopts as x* (host/core/sim/sim.c). The statistics, the bounds
 * and the copy for rendering are solver-neutral (cl/sim/particles.cl). */
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -D"
#endif
#ifndef MAX_NEIGHBORS
#error "MAX_NEIGHBORS (neighbour list capacity) must be defined with -D"
#endif

typedef __constant const pbfcl_pbf_params *pbf_params;

/* The largest position correction one solver iteration may apply to a particle, in units of
 * the particle radius r (for the density and the collision corrections each). The density
 * constraint is linearised around x*: a correction of more than a fraction of the spacing 2r
 * leaves the range where that linearisation holds, and under strong compression (a tall
 * column the Jacobi iterations cannot hold, neighbours piled up) lambda_i + lambda_j summed
 * over dozens of neighbours reaches many h and flings particles across the box. Limiting the
 * step keeps the iteration a descent on the constraint; it is never reached at rest or in a
 * well-resolved flow (there corrections are a few % of r), see docs/PERFORMANCE.md. */
#define PBF_MAX_CORRECTION 0.5f

/* A stage over a list of slots (built a second time with -D PBFCL_SLOT_LIST, the host's
 * pbf_lists.c): lambda, delta and collide take three more arguments, slots, first and count,
 * and work-item k computes the particle at slots[first + k] (k < count), with the same code and
 * the same sums as a launch over every particle, which computes particle k (k < n). A split's
 * overlap runs them over the interior while the ghosts' values travel, then over the boundary
 * (docs/DISTRIBUTED.md, "Overlap"). */
#ifdef PBFCL_SLOT_LIST
#define PBF_LIST_PARAMS , __global const uint *slots, uint slot_first, uint slot_count
#define PBF_LIST_ARGS , slots, slot_first, slot_count
#define PBF_ITEM(i, n)                                                                             \
    uint i = get_global_id(0);                                                                     \
    if (i >= slot_count)                                                                           \
        return;                                                                                    \
    i = slots[slot_first + i]
#else
#define PBF_LIST_PARAMS
#define PBF_LIST_ARGS
#define PBF_ITEM(i, n)                                                                             \
    uint i = get_global_id(0);                                                                     \
    if (i >= (n))                                                                                  \
    return
#endif

/* v scaled to length at most max_len. */
static float4 pbf_limit(float4 v, float max_len)
{
    float len2 = dot(v, v);
    return len2 > max_len * max_len ? v * (max_len * rsqrt(len2)) : v;
}

/* Poly6 with its constants in registers: coef * (h2 - r2)^3 for r2 < h2, else 0. */
static float pbf_poly6_k(float coef, float h2, float r2)
{
    float d = h2 - r2;
    return r2 < h2 ? coef * d * d * d : 0.0f;
}

/* The gradient of Spiky at d = x_i - x_j (|d| = r) with its constant coef = -45 / (pi h^6)
 * (times a volume, if wanted) in a register; zero outside h and at r = 0. */
static float4 pbf_spiky_grad_k(float coef, float h, float4 d, float r)
{
    float t = h - r;
    float f = (r < h && r > 0.0f) ? coef * t * t / r : 0.0f;
    return f * d;
}

static float4 pbf_box_min(pbf_params p)
{
    return (float4)(p->box_min[0] + p->radius, p->box_min[1] + p->radius, p->box_min[2] + p->radius,
                    0.0f);
}

static float4 pbf_box_max(pbf_params p)
{
    return (float4)(p->box_max[0] - p->radius, p->box_max[1] - p->radius, p->box_max[2] - p->radius,
                    0.0f);
}

/* The density of the fluid at rest that a wall stands for, in units of rho0, for a particle
 * at distance d from the wall plane: the Poly6 density of a half-space of fluid beyond the
 * plane, rho0 (pi K / 4) int_d^h (h^2 - z^2)^4 dz with K = 315 / (64 pi h^9) (the disc of
 * fluid at depth z contributes rho0 pi K (h^2 - z^2)^4 / 4), times wall_scale: the continuum
 * is calibrated on the host so that a particle of the rest lattice touching the wall gets
 * the density of one inside the lattice (pbfcl_pbf_wall_scale). *dphi is -d(phi)/dd >= 0.
 * Without it a particle within h of a wall misses the neighbours beyond it: the wall layer is
 * under-dense, the compression-only constraint gives it no support, and the layers above
 * sink onto it and push it along the wall (docs/PERFORMANCE.md, "Known limits"). */
static float pbf_wall_phi(pbf_params p, float wall_scale, float d, float *dphi)
{
    const float h = p->h, h2 = p->h2, h4 = h2 * h2, h8 = h4 * h4;
    float c = wall_scale * p->poly6 * (0.25f * M_PI_F);
    d = clamp(d, 0.0f, h);
    float t = h2 - d * d, d2 = d * d;
    *dphi = c * (t * t) * (t * t);
    /* F(z) = h^8 z - 4/3 h^6 z^3 + 6/5 h^4 z^5 - 4/7 h^2 z^7 + z^9 / 9; F(h) = 128/315 h^9 */
    float fd = d * (h8 + d2 * (-4.0f / 3.0f * h4 * h2 +
                               d2 * (1.2f * h4 + d2 * (-4.0f / 7.0f * h2 + d2 / 9.0f))));
    return c * fmax(128.0f / 315.0f * h8 * h - fd, 0.0f);
}

/* The wall density of x (units of rho0) and its gradient, the boundary part of grad C_i.
 * The six walls of the box: phi_a = phi(x_a - lo_a) + phi(hi_a - x_a) is the fraction of the
 * kernel's mass beyond the walls of axis a; at edges and corners the fluid beyond several
 * walls counts once, as 1 - prod_a (1 - phi_a) (exact for a kernel separable in the axes,
 * the sum of the planes counts the fluid beyond an edge twice). */
static float pbf_wall_density(pbf_params p, float wall_scale, float4 x, float4 *grad)
{
    float xs[3] = {x.x, x.y, x.z}, f[3], g[3];
    for (int a = 0; a < 3; a++) {
        float g_lo, g_hi;
        float lo = pbf_wall_phi(p, wall_scale, xs[a] - p->box_min[a], &g_lo);
        float hi = pbf_wall_phi(p, wall_scale, p->box_max[a] - xs[a], &g_hi);
        f[a] = 1.0f - (lo + hi);
        g[a] = g_hi - g_lo; /* d(phi_a) / dx_a */
    }
    *grad = (float4)(g[0] * f[1] * f[2], g[1] * f[0] * f[2], g[2] * f[0] * f[1], 0.0f);
    return 1.0f - f[0] * f[1] * f[2];
}

/* The collision shapes' part of the density (cl/colliders/colliders.cl): each contact plane of
 * particle i (the narrow phase keeps those within 3r, or h if less, of a shape's surface less its
 * margin: the half-space beyond 3r holds 0.25 % of the kernel's mass at h = 4r) stands
 * for a wall, the half-space of fluid at rest beyond the plane through the shape's surface plus
 * its margin, at distance d = dot(n, x) + w + r (w holds -r - margin). The planes combine as the
 * walls' axes do, F = prod_k (1 - phi(d_k)) the fraction of the kernel's mass not beyond any, so
 * that a container's inner corner (two shapes, or two faces of a mesh) counts its fluid once.
 * Two planes of one shape whose normals are within 60 degrees of each other are one surface
 * (the faces of a finely cut wall, the edge contact of the triangle beside the one beneath):
 * only the nearer counts. The approximation: each plane is a half-space, so beside a convex
 * shape's edge or corner (the nearest point an edge, the shape a wedge inside that half-space)
 * the fluid beyond is over-counted, by at most the wedge's missing part. pbf_shape_factor returns
 * F and *grad its gradient, sum_k dphi_k n_k F / (1 - phi_k) (1 - phi_k >= 1 - phi(0), about
 * one half). pbf_shape_plane: plane k's phi, -dphi/dd and normal, given its shape (all 0 for
 * an empty slot). */
static float pbf_shape_plane(pbf_params p, float wall_scale, float4 x, uint i, int k, int shape,
                             __global const float4 *contact_plane, float *dphi, float4 *n)
{
    *n = (float4)(0.0f);
    *dphi = 0.0f;
    if (shape < 0) /* an empty slot: its plane is not read */
        return 0.0f;
    float4 pl = contact_plane[PBFCL_COLLIDER_CONTACTS * i + k];
    *n = (float4)(pl.xyz, 0.0f);
    return pbf_wall_phi(p, wall_scale, dot(pl.xyz, x.xyz) + pl.w + p->radius, dphi);
}

/* The planes of a particle at x that count, each read and its phi computed once (the lambda
 * and the delta passes run four times a substep; comparing each plane with the others from
 * global memory cost a third of their time at 1M particles): plane k's normal n_k (w 0), and
 * in component k of phi and dphi its phi and -dphi/dd, both 0 for an empty slot and for a
 * plane that doesn't count. Vectors and named members rather than private arrays (Oclgrind
 * 21.10's uninitialised-value check crashed on those). Which of two planes is nearer depends
 * on x, which moves each iteration, so the choice is made here and not once in the narrow
 * phase. */
#if PBFCL_COLLIDER_CONTACTS != 4
#error "pbf_shape_load reads four contact planes a particle"
#endif
typedef struct pbf_shape_set {
    float4 n0, n1, n2, n3;
    float4 phi, dphi;
} pbf_shape_set;

/* Whether plane j (phi pj, normal nj, shape sj) hides plane k of phi pk > 0: one shape, within
 * 60 degrees, and nearer (or as near and before it, j_first). */
static bool pbf_shape_hides(float pj, float4 nj, int sj, float pk, float4 nk, int sk, bool j_first)
{
    return sj == sk && dot(nj, nk) > 0.5f && (pj > pk || (pj == pk && j_first));
}

static void pbf_shape_load(pbf_params p, float wall_scale, float4 x, uint i,
                           __global const float4 *contact_plane, __global const int *contact_shape,
                           pbf_shape_set *set)
{
    set->n0 = set->n1 = set->n2 = set->n3 = (float4)(0.0f);
    set->phi = set->dphi = (float4)(0.0f);
    if (contact_shape[PBFCL_COLLIDER_CONTACTS * i] < 0) /* no planes: one int read */
        return;
    int4 s = vload4(i, contact_shape); /* the four slots' shapes in one read */
    int s0 = s.x, s1 = s.y, s2 = s.z, s3 = s.w;
    float d0, d1, d2, d3;
    __global const float4 *pl = contact_plane;
    float f0 = pbf_shape_plane(p, wall_scale, x, i, 0, s0, pl, &d0, &set->n0);
    float f1 = pbf_shape_plane(p, wall_scale, x, i, 1, s1, pl, &d1, &set->n1);
    float f2 = pbf_shape_plane(p, wall_scale, x, i, 2, s2, pl, &d2, &set->n2);
    float f3 = pbf_shape_plane(p, wall_scale, x, i, 3, s3, pl, &d3, &set->n3);
    float4 n0 = set->n0, n1 = set->n1, n2 = set->n2, n3 = set->n3;
    bool k0 = f0 > 0.0f && !pbf_shape_hides(f1, n1, s1, f0, n0, s0, false) &&
              !pbf_shape_hides(f2, n2, s2, f0, n0, s0, false) &&
              !pbf_shape_hides(f3, n3, s3, f0, n0, s0, false);
    bool k1 = f1 > 0.0f && !pbf_shape_hides(f0, n0, s0, f1, n1, s1, true) &&
              !pbf_shape_hides(f2, n2, s2, f1, n1, s1, false) &&
              !pbf_shape_hides(f3, n3, s3, f1, n1, s1, false);
    bool k2 = f2 > 0.0f && !pbf_shape_hides(f0, n0, s0, f2, n2, s2, true) &&
              !pbf_shape_hides(f1, n1, s1, f2, n2, s2, true) &&
              !pbf_shape_hides(f3, n3, s3, f2, n2, s2, false);
    bool k3 = f3 > 0.0f && !pbf_shape_hides(f0, n0, s0, f3, n3, s3, true) &&
              !pbf_shape_hides(f1, n1, s1, f3, n3, s3, true) &&
              !pbf_shape_hides(f2, n2, s2, f3, n3, s3, true);
    set->phi = (float4)(k0 ? f0 : 0.0f, k1 ? f1 : 0.0f, k2 ? f2 : 0.0f, k3 ? f3 : 0.0f);
    set->dphi = (float4)(k0 ? d0 : 0.0f, k1 ? d1 : 0.0f, k2 ? d2 : 0.0f, k3 ? d3 : 0.0f);
}

/* Plane k's phi, -dphi/dd and normal in set. */
static float pbf_shape_at(const pbf_shape_set *set, int k, float *dphi, float4 *n)
{
    *n = k == 0 ? set->n0 : k == 1 ? set->n1 : k == 2 ? set->n2 : set->n3;
    *dphi = k == 0 ? set->dphi.x : k == 1 ? set->dphi.y : k == 2 ? set->dphi.z : set->dphi.w;
    return k == 0 ? set->phi.x : k == 1 ? set->phi.y : k == 2 ? set->phi.z : set->phi.w;
}

static float pbf_shape_factor(const pbf_shape_set *set, float4 *grad)
{
    float f = 1.0f;
    *grad = (float4)(0.0f);
    for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++) {
        float dphi;
        float4 n;
        float phi = pbf_shape_at(set, k, &dphi, &n);
        if (phi > 0.0f) {
            /* d(prod f) = sum_k (d f_k) prod_(j != k) f_j, d(1 - phi(d_k)) / dx = dphi n */
            *grad = *grad * (1.0f - phi) + f * dphi * n;
            f *= 1.0f - phi;
        }
    }
    return f;
}

/* With bodies, predict, delta and collide write the particle's phase (cl/common/pbfcl_shared.h: a
 * group and flags, below 2^24) into x*.w and q.w (as a float, exact; shape_match_predict keeps
 * it and kinematic_path writes the same), so that collide finds a neighbour's phase in the
 * float4 it reads anyway instead of a gather of phase[j] per neighbour (at 1M particles on an
 * H200 the bodies' collide took 177 us against the fluid's 100), and neighbours_solids a
 * solid's own phase in the positions it searches. Nothing else reads the w: lambda, the walls,
 * shape matching and update use xyz. */
static float pbf_phase_tag(uint bodies, __global const uint *phase, uint i)
{
    return bodies ? (float)phase[i] : 0.0f;
}

static uint pbf_q_phase(float4 q)
{
    return (uint)q.w;
}

/* Whether a phase is a solid's (a body's or a static particle: no fluid flag). */
static bool pbf_is_solid(uint phase)
{
    return (phase & PBFCL_PHASE_FLUID_BIT) == 0u;
}

/* The body of a solid's phase (its group - 1: body b is group b + 1); for the fluid's group 0
 * 0xffffffff and for the static group one at least the body count, so that a test b < matched
 * is a shape-matched body's. */
static uint pbf_body_of(uint phase)
{
    return (phase & PBFCL_PHASE_GROUP_BITS) - 1u;
}

/* predict: v += (gravity + vorticity force + push) dt; x* = x + v dt; then confine to the box:
 * x* and x are clamped to the walls (less r) and the velocity into a wall is removed. v.w (the
 * particle's V |omega| for the next vorticity_viscosity, see there) is kept.
 * push: xyz the push acceleration, w its radius around the ray push_origin + t push_dir.
 * With bodies, a static particle (an obstacle's: inverse mass 0) stays where it is at rest. */
__kernel void pbf_predict(pbf_params p, uint n, __global float4 *pos, __global float4 *pred,
                          __global float4 *vel, __global const float4 *vort_force, float4 gravity,
                          float4 push_origin, float4 push_dir, float4 push, uint bodies,
                          __global const float *inv_mass, __global const uint *phase)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float4 x = pos[i];
    if (bodies && inv_mass[i] == 0.0f) {
        x = (float4)(x.xyz, 0.0f);
        pred[i] = (float4)(x.xyz, pbf_phase_tag(bodies, phase, i));
        vel[i] = (float4)(0.0f);
        return;
    }
    float4 acc = gravity + vort_force[i];
    if (push.w > 0.0f) {
        float4 rel = x - push_origin;
        rel = (float4)(rel.xyz, 0.0f);
        float t = dot(rel, push_dir);
        float4 off = rel - t * push_dir;
        if (t >= 0.0f && dot(off, off) < push.w * push.w)
            acc += (float4)(push.x, push.y, push.z, 0.0f);
    }
    float4 v = vel[i] + acc * p->dt;
    v = (float4)(v.xyz, 0.0f);
    float4 xp = x + v * p->dt;
    float4 lo = pbf_box_min(p), hi = pbf_box_max(p);
    int4 below = isless(xp, lo), above = isgreater(xp, hi);
    v = select(v, (float4)(0.0f),
               (below & isless(v, (float4)(0.0f))) | (above & isgreater(v, (float4)(0.0f))));
    xp = clamp(xp, lo, hi);
    x = clamp(x, lo, hi);
    xp = (float4)(xp.xyz, pbf_phase_tag(bodies, phase, i));
    x = (float4)(x.xyz, 0.0f);
    pos[i] = x;
    pred[i] = xp;
    vstore3(v.xyz, 0, (__global float *)(vel + i)); /* xyz: v.w stays */
}

/* The moved flags' bits (delta sets them, lambda clears them): a fluid particle, or a solid,
 * moved half the contact skin since the neighbour search. */
#define PBF_MOVED_FLUID 1u
#define PBF_MOVED_SOLID 2u

/* The moved flags are kept per region of the grid (PBFCL_MOVED_LEVEL: 4^3 cells, some 500
 * particles at h = 4r), so that a move makes only the particles near it read their whole lists
 * (a dam break of 1M particles on an H200 read them in most collide passes: a single flag for
 * all particles was set by any one of them). */
#define PBF_MOVED_SHIFT (3u * PBFCL_MOVED_LEVEL)

/* lambda: SPH density (Poly6) of x* plus the walls' (pbf_wall_density), constraint
 * C = max(0, rho / rho0 - 1) (compression only) and lambda = -C / (sum |grad C|^2 + epsilon)
 * with Spiky gradients; the walls' gradient is part of grad_i C (walls do not move). The
 * particles of bodies count in a fluid particle's density as fluid of their volume (Macklin
 * et al. 2014, section 7.1) and have no constraint of their own (lambda 0): a solid's density
 * is the rest density (its volume m / rho0, which vorticity_viscosity reads) and its list,
 * which holds no particle of its own phase (cl/grid/neighbours.cl), is not read.
 * Written as (x*_i, lambda_i): delta reads a neighbour's position and lambda in one float4.
 * With record (the first lambda after a neighbour search), x* is also kept in search and the
 * first particle of each region of the grid (PBFCL_MOVED_LEVEL; cell_id: the cells at the
 * search, sorted, so a region's particles are a run) clears its moved flag (2 us a substep at 1M
 * particles on an H200; each particle of the region storing it, 3.6): delta sets a region's flag
 * when a particle beside it has moved half the contact skin away from there, and collide then reads
 * the whole lists there instead of their near part. A region that holds no particle keeps what it
 * had; no one reads it, and a flag left set only sends its next particles to their whole lists. (A
 * loop over all regions would give each work-item regions / n of them: a serial loop for an
 * emitter's first particles in a large grid.) */
static inline void pbf_lambda_body(pbf_params p, uint n, __global const float4 *pred,
                                   __global const uint *neighbor_count,
                                   __global const uint *neighbors, __global float4 *lambda,
                                   __global float *density, float wall_scale,
                                   __global float4 *search, __global uint *moved, uint record,
                                   uint bodies, __global const uint *phase,
                                   __global const uint *cell_id, uint shapes,
                                   __global const float4 *contact_plane,
                                   __global const int *contact_shape PBF_LIST_PARAMS)
{
    PBF_ITEM(i, n);
    float4 xi = pred[i];
    if (record) {
        search[i] = xi;
        uint region = cell_id[i] >> PBF_MOVED_SHIFT; /* its particles are a run of the order */
        if (i == 0u || cell_id[i - 1u] >> PBF_MOVED_SHIFT != region)
            moved[region] = 0u;
    }
    bool solid = bodies && pbf_is_solid(phase[i]);
    uint count = solid ? 0u : min(neighbor_count[i], (uint)MAX_NEIGHBORS);
    const float h = p->h, h2 = p->h2, poly6 = p->poly6, spiky = p->spiky_grad * p->volume;
    float w_sum = 0.0f;
    float4 grad_i = (float4)(0.0f);
    float sum_grad2 = 0.0f;
    for (uint k = 0; k < count; k++) {
        float4 d = xi - pred[neighbors[k * n + i]];
        d = (float4)(d.xyz, 0.0f);
        float r2 = dot(d, d);
        w_sum += pbf_poly6_k(poly6, h2, r2);
        float4 g = pbf_spiky_grad_k(spiky, h, d, sqrt(r2));
        grad_i += g;
        sum_grad2 += dot(g, g);
    }
    float4 grad_wall;
    float rho_wall = pbf_wall_density(p, wall_scale, xi, &grad_wall);
    if (shapes) { /* the shapes as walls: 1 - (1 - rho_wall) F */
        float4 grad_f;
        pbf_shape_set set;
        pbf_shape_load(p, wall_scale, xi, i, contact_plane, contact_shape, &set);
        float f = pbf_shape_factor(&set, &grad_f);
        grad_wall = grad_wall * f - (1.0f - rho_wall) * grad_f;
        rho_wall = 1.0f - (1.0f - rho_wall) * f;
    }
    float rho = p->self_density + p->mass * w_sum + p->rest_density * rho_wall;
    float c = fmax(rho * p->inv_rest_density - 1.0f, 0.0f);
    grad_i += grad_wall;
    sum_grad2 += dot(grad_i, grad_i);
    if (solid) { /* no density constraint of its own */
        c = 0.0f;
        rho = p->rest_density;
    }
    lambda[i] = (float4)(xi.xyz, -c / (sum_grad2 + p->epsilon));
    density[i] = rho;
}

/* pbf_lambda without the shapes' terms, compiled out so that a fluid without collision shapes
 * pays nothing for them (their reads and registers cost 25 % of a lambda at 1M on an H100);
 * pbf_lambda_shapes with them (the host launches it while the solver has shapes). */
__kernel void pbf_lambda(pbf_params p, uint n, __global const float4 *pred,
                         __global const uint *neighbor_count, __global const uint *neighbors,
                         __global float4 *lambda, __global float *density, float wall_scale,
                         __global float4 *search, __global uint *moved, uint record, uint bodies,
                         __global const uint *phase, __global const uint *cell_id, uint shapes,
                         __global const float4 *contact_plane,
                         __global const int *contact_shape PBF_LIST_PARAMS)
{
    pbf_lambda_body(p, n, pred, neighbor_count, neighbors, lambda, density, wall_scale, search,
                    moved, record, bodies, phase, cell_id, 0u, contact_plane,
                    contact_shape PBF_LIST_ARGS);
}

__kernel void pbf_lambda_shapes(pbf_params p, uint n, __global const float4 *pred,
                                __global const uint *neighbor_count, __global const uint *neighbors,
                                __global float4 *lambda, __global float *density, float wall_scale,
                                __global float4 *search, __global uint *moved, uint record,
                                uint bodies, __global const uint *phase,
                                __global const uint *cell_id, uint shapes,
                                __global const float4 *contact_plane,
                                __global const int *contact_shape PBF_LIST_PARAMS)
{
    pbf_lambda_body(p, n, pred, neighbor_count, neighbors, lambda, density, wall_scale, search,
                    moved, record, bodies, phase, cell_id, 1u, contact_plane,
                    contact_shape PBF_LIST_ARGS);
}

/* The gathers over the neighbour lists of delta, collide and vorticity read their
 * neighbours four at a time: the four list entries, then the four neighbours' data, then the
 * arithmetic of each in list order (the same sums as one at a time). One at a time, each
 * iteration waited on its own gather; on an H200 at 1M particles delta went from 146 to 110 us,
 * collide from 109 to 88 and vorticity from 168 to 146 (lambda and omega_viscosity gained
 * nothing and read one at a time); body_contacts from 21.6 to 17.1 with 64 bodies. */
#define PBF_GROUP 4

/* The regions along one axis that hold the cells c - 1 .. c + 1 of it (within 0 .. top): the
 * first and the last. */
static uint2 pbf_region_span(uint c, uint top)
{
    return (uint2)(c > 0u ? c - 1u : 0u, min(c + 1u, top)) >> PBFCL_MOVED_LEVEL;
}

/* delta's report of particle i's move (bit): into the flag of every region that holds one of
 * the 27 cells around its cell at the search (cell, a Morton code of a grid of 2^grid_bits
 * cells per axis): the particles that may list it lie in those cells, and each reads the flag
 * of its own cell's region only (pbf_whole_lists). At most 8 regions, as a region spans at
 * least 2 cells along each axis. */
static void pbf_report_move(__global uint *moved, uint cell, uint grid_bits, uint bit)
{
    uint top = (1u << grid_bits) - 1u;
    uint2 x = pbf_region_span(pbfcl_morton_compact(cell), top);
    uint2 y = pbf_region_span(pbfcl_morton_compact(cell >> 1), top);
    uint2 z = pbf_region_span(pbfcl_morton_compact(cell >> 2), top);
    for (uint cz = z.x; cz <= z.y; cz++)
        for (uint cy = y.x; cy <= y.y; cy++)
            for (uint cx = x.x; cx <= x.y; cx++)
                atomic_or(moved + pbfcl_morton_code(cx, cy, cz), bit);
}

/* Whether particle i may have a solid among its neighbours: a solid, or a fluid particle that a
 * solid listed at the last search (near_solid[i] == stamp, cl/grid/neighbours.cl,
 * neighbours_solids; with symmetric lists exactly those). Only these take the bodies' paths of
 * collide and vorticity_viscosity; for the others they give the fluid's result. */
static bool pbf_near_solid(uint bodies, uint phase_i, __global const uint *near_solid, uint stamp,
                           uint i)
{
    return bodies && (pbf_is_solid(phase_i) || near_solid[i] == stamp);
}

/* Whether collide (or body_contacts) must read particle i's whole list instead of its near part
 * (the neighbours within 2r + skin at the search): after another collide pass (whole_lists),
 * when a fluid particle near i moved half the skin (a pair of any two particles may have closed
 * from beyond it), or when only solids near it did and i may have a solid neighbour (near_i):
 * a pair that closed from beyond the near part moved the skin between its two, so one of them
 * moved half of it, and a pair of two fluid particles needs a fluid particle's move. Near i: in
 * the cells around i's cell at the search (cell_id[i]), whose moves the flag of i's region holds
 * (pbf_report_move). Where only the bodies moved, the fluid away from them keeps its near lists
 * (at 1M particles with 64 bodies on an H200 the bodies tripped the flag in most passes). */
static bool pbf_whole_lists(uint whole_lists, __global const uint *moved,
                            __global const uint *cell_id, uint i, bool near_i)
{
    if (whole_lists)
        return true;
    uint bits = moved[cell_id[i] >> PBF_MOVED_SHIFT];
    return (bits & PBF_MOVED_FLUID) || ((bits & PBF_MOVED_SOLID) && near_i);
}

/* One neighbour's share of delta's sum: (lambda_i + lambda_j + s_corr) grad Spiky(x*_i -
 * x*_j), into *dx; xj = (x*_j, lambda_j). */
static void pbf_delta_term(float4 xi, float li, float4 xj, float h, float h2, float spiky,
                           float poly6_dq, float scorr_k, int scorr_n, float4 *dx)
{
    float4 d = (float4)(xi.xyz - xj.xyz, 0.0f);
    float r2 = dot(d, d);
    float w = pbf_poly6_k(poly6_dq, h2, r2), s = w;
    if (scorr_n == 4) { /* the default, unrolled: the loop cost 7 % of delta on an H200 */
        s *= w;
        s *= w;
        s *= w;
    } else {
        for (int e = 1; e < scorr_n; e++) /* w^n */
            s *= w;
    }
    *dx += (li + xj.w - scorr_k * s) * pbf_spiky_grad_k(spiky, h, d, sqrt(r2));
}

/* delta: dx_i = (m / rho0) sum_j (lambda_i + lambda_j + s_corr) grad Spiky(x*_i - x*_j) with
 * s_corr = -k (Poly6(r) / Poly6(delta q))^n, plus lambda_i times the walls' part of grad C_i
 * (a wall has no constraint of its own, as boundary particles in Akinci et al. 2012).
 * Written as the corrected position q_i = x*_i + dx_i, kept inside the walls: collide works
 * on q (one float4 per neighbour instead of x* and dx), and apply_delta adopts q as x*.
 * With record_step (solver.chebyshev_rho > 0) step holds the density step D taken (q - x*,
 * after the walls); plain Jacobi iterations skip that write. With a Chebyshev weight omega
 * != 1 (host/core/sim/sim.c, pbfcl_sim_chebyshev_weight) the step is D_k = omega dx_k + (omega -
 * 1) D_(k-1), D_(k-1) the last iteration's: Wang 2015's semi-iterative acceleration of the
 * Jacobi iterations, x_(k+1) = omega (x_k + dx_k) + (1 - omega) x_(k-1), applied to the
 * density steps alone, so that the collision passes between them are not extrapolated (a
 * contact would otherwise gain a velocity from the extrapolation). A solid's particle (a body's,
 * a cloth's; lambda 0) moves by the fluid's constraints it takes part in, dx_i = w_i (m / rho0)
 * sum_j (lambda_j + s_corr) grad W over its fluid neighbours j, w_i its relative inverse mass:
 * the fluid's pressure on a body, which shape matching turns into the body's motion (buoyancy,
 * drag), or on a cloth. Its s_corr is the reaction to the one the fluid takes from it (none
 * between two solids), and its step is limited to w_i times the fluid's limit, where the
 * fluid's reaction to it is, so that the pair's momentum is kept. Without the first, the
 * tensile term held the water in a cloth bag off the cloth by a force nothing carried (the
 * pins bore 88 % of its weight); with the fluid's limit on a cloth 11 times lighter than the
 * fluid, a block of fluid hitting it lost 3.9 % of its momentum (test_cloth_fluid). */
static inline void pbf_delta_body(pbf_params p, uint n, __global const float4 *lambda,
                                  __global const uint *neighbor_count,
                                  __global const uint *neighbors, __global float4 *q_out,
                                  float wall_scale, __global float4 *step, float omega,
                                  uint record_step, __global const float4 *search,
                                  __global uint *moved, float moved_limit2, uint bodies,
                                  __global const uint *phase, __global const float *inv_mass,
                                  __global const uint *cell_id, uint grid_bits, uint shapes,
                                  __global const float4 *contact_plane,
                                  __global const int *contact_shape,
                                  __global float4 *push PBF_LIST_PARAMS)
{
    PBF_ITEM(i, n);
    float4 xi = lambda[i]; /* (x*_i, lambda_i) */
    float li = xi.w;
    uint count = min(neighbor_count[i], (uint)MAX_NEIGHBORS);
    bool solid = bodies && pbf_is_solid(phase[i]);
    const float h = p->h, h2 = p->h2, spiky = p->spiky_grad, scorr_k = p->scorr_k;
    const float poly6_dq = p->poly6 * p->scorr_inv_wdq; /* Poly6(r) / Poly6(delta q) */
    const int scorr_n = (int)p->scorr_n;
    float4 dx = (float4)(0.0f);
    uint k = 0;
    if (solid) /* s_corr only against the fluid: the reaction to the fluid's, none between solids */
        for (; k < count; k++) {
            uint j = neighbors[k * n + i];
            pbf_delta_term(xi, li, lambda[j], h, h2, spiky, poly6_dq,
                           pbf_is_solid(phase[j]) ? 0.0f : scorr_k, scorr_n, &dx);
        }
    for (; k + PBF_GROUP <= count; k += PBF_GROUP) { /* see PBF_GROUP */
        uint j0 = neighbors[k * n + i], j1 = neighbors[(k + 1) * n + i];
        uint j2 = neighbors[(k + 2) * n + i], j3 = neighbors[(k + 3) * n + i];
        float4 x0 = lambda[j0], x1 = lambda[j1], x2 = lambda[j2], x3 = lambda[j3];
        pbf_delta_term(xi, li, x0, h, h2, spiky, poly6_dq, scorr_k, scorr_n, &dx);
        pbf_delta_term(xi, li, x1, h, h2, spiky, poly6_dq, scorr_k, scorr_n, &dx);
        pbf_delta_term(xi, li, x2, h, h2, spiky, poly6_dq, scorr_k, scorr_n, &dx);
        pbf_delta_term(xi, li, x3, h, h2, spiky, poly6_dq, scorr_k, scorr_n, &dx);
    }
    for (; k < count; k++)
        pbf_delta_term(xi, li, lambda[neighbors[k * n + i]], h, h2, spiky, poly6_dq, scorr_k,
                       scorr_n, &dx);
    float4 grad_wall;
    xi.w = 0.0f;
    float rho_wall = pbf_wall_density(p, wall_scale, xi, &grad_wall);
    if (shapes && li != 0.0f) { /* the shapes' part of grad C_i; its move is their push */
        float4 grad_f;
        pbf_shape_set set;
        pbf_shape_load(p, wall_scale, xi, i, contact_plane, contact_shape, &set);
        float f = pbf_shape_factor(&set, &grad_f);
        grad_wall = grad_wall * f - (1.0f - rho_wall) * grad_f;
        for (int k = 0; k < PBFCL_COLLIDER_CONTACTS; k++) { /* plane k's part of grad_f */
            float dphi;
            float4 n;
            float phi = pbf_shape_at(&set, k, &dphi, &n);
            if (phi > 0.0f)
                push[PBFCL_COLLIDER_CONTACTS * i + k] -=
                    (li * (1.0f - rho_wall) * dphi * f / (1.0f - phi)) * n;
        }
    }
    dx = dx * p->volume + li * grad_wall;
    float most = PBF_MAX_CORRECTION * p->radius;
    if (solid) { /* pushed by the fluid's constraints, by its relative inverse mass */
        dx *= inv_mass[i];
        most *= fmax(inv_mass[i], 1.0f); /* where the fluid's reaction is within its limit */
    }
    dx = pbf_limit(dx, most);
    if (omega != 1.0f) /* Chebyshev: D_k = omega dx_k + (omega - 1) D_(k-1) */
        dx = omega * dx + (omega - 1.0f) * (float4)(step[i].xyz, 0.0f);
    float4 q = clamp(xi + dx, pbf_box_min(p), pbf_box_max(p));
    q_out[i] = (float4)(q.xyz, pbf_phase_tag(bodies, phase, i));
    if (record_step) /* the density step D_k taken, walls included (Chebyshev only) */
        step[i] = (float4)(q.xyz - xi.xyz, 0.0f);
    float4 since = (float4)(q.xyz - search[i].xyz, 0.0f); /* moved since the neighbour search */
    if (dot(since, since) > moved_limit2) /* a contact may have come from beyond the near lists */
        pbf_report_move(moved, cell_id[i], grid_bits, solid ? PBF_MOVED_SOLID : PBF_MOVED_FLUID);
}

/* pbf_delta without the shapes' terms (compiled out, as pbf_lambda's) and pbf_delta_shapes with
 * them. */
__kernel void pbf_delta(pbf_params p, uint n, __global const float4 *lambda,
                        __global const uint *neighbor_count, __global const uint *neighbors,
                        __global float4 *q_out, float wall_scale, __global float4 *step,
                        float omega, uint record_step, __global const float4 *search,
                        __global uint *moved, float moved_limit2, uint bodies,
                        __global const uint *phase, __global const float *inv_mass,
                        __global const uint *cell_id, uint grid_bits, uint shapes,
                        __global const float4 *contact_plane, __global const int *contact_shape,
                        __global float4 *push PBF_LIST_PARAMS)
{
    pbf_delta_body(p, n, lambda, neighbor_count, neighbors, q_out, wall_scale, step, omega,
                   record_step, search, moved, moved_limit2, bodies, phase, inv_mass, cell_id,
                   grid_bits, 0u, contact_plane, contact_shape, push PBF_LIST_ARGS);
}

__kernel void pbf_delta_shapes(pbf_params p, uint n, __global const float4 *lambda,
                               __global const uint *neighbor_count, __global const uint *neighbors,
                               __global float4 *q_out, float wall_scale, __global float4 *step,
                               float omega, uint record_step, __global const float4 *search,
                               __global uint *moved, float moved_limit2, uint bodies,
                               __global const uint *phase, __global const float *inv_mass,
                               __global const uint *cell_id, uint grid_bits, uint shapes,
                               __global const float4 *contact_plane,
                               __global const int *contact_shape,
                               __global float4 *push PBF_LIST_PARAMS)
{
    pbf_delta_body(p, n, lambda, neighbor_count, neighbors, q_out, wall_scale, step, omega,
                   record_step, search, moved, moved_limit2, bodies, phase, inv_mass, cell_id,
                   grid_bits, 1u, contact_plane, contact_shape, push PBF_LIST_ARGS);
}

/* The part of the relative displacement rel (of i against j over the substep) that friction
 * undoes in a contact of normal n and penetration overlap (Macklin et al. 2014, section 6.1):
 * all of its tangential part t while |t| < mu_s overlap (static), else t scaled by
 * min(mu_k overlap / |t|, 1) (dynamic). */
static float4 pbf_friction(pbf_params p, float4 rel, float4 n, float overlap)
{
    float4 t = (float4)(rel.xyz - dot(rel.xyz, n.xyz) * n.xyz, 0.0f);
    float len = length(t.xyz);
    if (!(len > 0.0f))
        return (float4)(0.0f);
    if (len < p->friction_static * overlap)
        return t;
    return fmin(p->friction_dynamic * overlap / len, 1.0f) * t;
}

/* The inverse mass of the whole body of a solid particle (phase ph, inverse mass w), in units
 * of a fluid particle's: w / N_b for a particle of body b (group b + 1, b below the
 * shape-matched bodies; N_b particles, all of one mass, body_range[b] its entries), 0 for a
 * static particle or a phase without a shape-matched body. */
static float pbf_body_inv_mass(uint ph, float w, __global const uint2 *body_range, uint bodies)
{
    uint b = pbf_body_of(ph);
    if (b >= bodies) /* fluid, static, or no body to match */
        return 0.0f;
    uint2 range = body_range[b];
    return w / (float)max(range.y - range.x, 1u);
}

/* The pair state of collide for particle i: its q, x, phase and inverse mass, whether it is a
 * shape-matched body's (whose friction with other solids its body takes, pbf_body_contacts),
 * the constants, and the sums of the x* correction c, the x correction e and friction f. */
typedef struct pbf_contact {
    float4 qi, xi;
    uint phase_i, matched_i;
    float w_i, min_dist, min_dist2, deep;
    float4 c, e, f;
} pbf_contact;

/* One neighbour j (q_j = qj) of collide's particle: skipped within a group without
 * self-collide (a body's particles, the static ones); closer than 2r, a
 * share of the overlap into c, of the deep overlap x had into e, friction into f (none between
 * a shape-matched body's particle and another solid: pbf_body_contacts). solids is a constant
 * where pbf_contact_sums is inlined: the fluid's path (false: two fluid particles, half the
 * overlap each, no friction) reads no phase and no inverse mass. */
static void pbf_contact_term(pbf_params p, pbf_contact *t, const bool solids, uint j, float4 qj,
                             __global const float4 *pos_in, __global const float *inv_mass)
{
    uint solid_j = 0u;
    if (solids) { /* a body's particles do not collide */
        uint phase_j = pbf_q_phase(qj);
        if (phase_j == t->phase_i && (phase_j & PBFCL_PHASE_SELF_COLLIDE_BIT) == 0u)
            return; /* its own group without self-collide */
        solid_j = pbf_is_solid(phase_j);
    }
    float4 d = t->qi - qj;
    float r2 = dot(d.xyz, d.xyz);
    if (r2 < t->min_dist2 && r2 > 0.0f) {
        /* of the correction: w_i / (w_i + w_j), heavier ones move less; a fluid particle's w is
         * 1, so only a contact with a body's particle reads inv_mass */
        float share = solids ? t->w_i / (t->w_i + (solid_j ? inv_mass[j] : 1.0f)) : 0.5f;
        float r = sqrt(r2), overlap = t->min_dist - r;
        float4 xj = pos_in[j];
        float4 dx = t->xi - xj;
        float overlap_x = t->deep - length(dx.xyz);
        t->c += (share * overlap / r) * d;
        t->e += (share * clamp(overlap_x, 0.0f, overlap) / r) * d;
        /* friction where a body takes part, but not a shape-matched body's on another solid */
        if (solids && (pbf_is_solid(t->phase_i) || solid_j) && !(t->matched_i && solid_j))
            t->f -= share * pbf_friction(p, (t->qi - t->xi) - (qj - xj), d / r, overlap);
    }
}

/* The sums of collide's particle i over the first count entries of its list (solids: the
 * bodies' path, pbf_contact_term; a constant in each call, so that each path compiles alone). */
static void pbf_contact_sums(pbf_params p, pbf_contact *t, const bool solids, uint i, uint n,
                             uint count, __global const uint *neighbors,
                             __global const float4 *q_in, __global const float4 *pos_in,
                             __global const float *inv_mass)
{
    uint k = 0;
    for (; k + PBF_GROUP <= count; k += PBF_GROUP) { /* see PBF_GROUP */
        uint j0 = neighbors[k * n + i], j1 = neighbors[(k + 1) * n + i];
        uint j2 = neighbors[(k + 2) * n + i], j3 = neighbors[(k + 3) * n + i];
        float4 q0 = q_in[j0], q1 = q_in[j1], q2 = q_in[j2], q3 = q_in[j3];
        pbf_contact_term(p, t, solids, j0, q0, pos_in, inv_mass);
        pbf_contact_term(p, t, solids, j1, q1, pos_in, inv_mass);
        pbf_contact_term(p, t, solids, j2, q2, pos_in, inv_mass);
        pbf_contact_term(p, t, solids, j3, q3, pos_in, inv_mass);
    }
    for (; k < count; k++) {
        uint j = neighbors[k * n + i];
        pbf_contact_term(p, t, solids, j, q_in[j], pos_in, inv_mass);
    }
}

/* collide: one stabilisation pass of the contact constraints, updating both x and x* as
 * seed 001's outline asks. On the corrected positions q = x* + dx (from delta or the last
 * pass), particles closer than 2r are pushed apart by half the overlap each and q is kept
 * inside the walls: that correction c moves x*, so the velocity v = (x* - x) / dt into the
 * contact is removed. x moves by the part of c that undoes a deep overlap x already had:
 * half of max(0, (1 - contact_slop) 2r - |x_i - x_j|) along the same normal, never more than
 * c. Such an overlap (an impact the Jacobi iterations of the last substep did not resolve, a
 * push, a bad start) is then removed without a velocity, where moving x* alone flings the
 * pair apart at overlap / dt ("popping"). The slop (default 0.2, pairs closer than 1.6r)
 * leaves the small overlaps of a resting fluid to x* alone: it settles at a slightly
 * compressed spacing, and moving x there lifts its particles every substep for free (a
 * settling block reached 0.16 m/s with no slop; with it, the same as with x* alone). With
 * contact_slop = 1 only x* moves. With bodies (shape matching, host/core/bodies/shape_match.c), pairs
 * of one body are skipped (shape matching holds them) and a pair shares the correction by
 * relative inverse masses w = m_fluid / m (inv_mass): particle i takes w_i / (w_i + w_j), of
 * the push and of the friction (pbf_friction) of a pair where a body's particle takes part,
 * except a body's contacts with other solids: shape matching spreads a particle's correction
 * over its whole body, so a body resting on a slope below its friction angle crept down it
 * (3 cm/s at 15 degrees) when each contact particle undid its own slide. Such a pair (i of a
 * body among the matched ones) gets no friction here: body_contacts gathers it and shape
 * matching applies Coulomb's law to the body as a whole (sm_friction, cl/bodies/shape_match.cl).
 * Rejected: moving x by the whole of c never removes the velocity
 * into a contact (a resting block reached 2.7 m/s within a second); the separate pre-stabilisation
 * pass of Macklin et al. 2014 (section 4.4) removed the overlap left by the unconverged
 * iterations from x every substep and its approach velocity never (0.43 m/s).
 * q and x are double-buffered: q_in and pos_in are read, q_out and pos_out written.
 * Only the near part of each neighbour list is visited (near_count entries: the neighbours
 * within 2r plus a skin at the neighbour search, host/core/sim/sim.c PBFCL_SIM_CONTACT_SKIN)
 * while no particle near it has moved half the skin since the search (the moved flag of its
 * region of the grid, kept by delta; cell_id: each particle's cell at the search): then no pair
 * outside the near part can be closer than 2r. At h = 4r that part is a quarter to a half of
 * the list, and the pass takes half the time. Otherwise, and with whole_lists
 * (q from an earlier collide pass, whose moves delta has not checked), the whole lists; where
 * only solids moved, only for the solids and the fluid beside them (pbf_whole_lists). The
 * fluid away from the solids (pbf_near_solid) takes the fluid's path, which gives the same
 * sums without reading phases or inverse masses. solids is a constant in each call, so that
 * each kernel compiles one path: the fluid's (pbf_collide_fluid) or the bodies' (pbf_collide). */
static void pbf_collide_at(pbf_params p, uint n, __global const float4 *pos_in,
                           __global const float4 *q_in, __global const uint *near_count,
                           __global const uint *neighbors, __global float4 *q_out,
                           __global float4 *pos_out, __global const uint *neighbor_count,
                           __global const uint *moved, uint whole_lists, const bool solids,
                           uint phase_i, __global const float *inv_mass, uint matched,
                           __global const uint *cell_id, uint i)
{
    pbf_contact t;
    t.qi = q_in[i];
    t.xi = pos_in[i];
    t.phase_i = phase_i;
    t.w_i = solids ? inv_mass[i] : 1.0f;
    t.matched_i = pbf_body_of(t.phase_i) < matched; /* the fluid and the static group are not */
    t.min_dist = p->min_dist;
    t.min_dist2 = t.min_dist * t.min_dist;
    t.deep = t.min_dist * (1.0f - p->contact_slop);
    t.c = t.e = t.f = (float4)(0.0f);
    bool whole = pbf_whole_lists(whole_lists, moved, cell_id, i, solids);
    uint count = min(whole ? neighbor_count[i] : near_count[i], (uint)MAX_NEIGHBORS);
    pbf_contact_sums(p, &t, solids, i, n, count, neighbors, q_in, pos_in, inv_mass);
    float4 qi = t.qi, xi = t.xi, c = t.c, e = t.e, f = t.f;
    float len = length(c.xyz), max_len = PBF_MAX_CORRECTION * p->radius;
    float scale = len > max_len ? max_len / len : 1.0f; /* e is limited with c */
    /* friction (f, per contact at most friction_static times its overlap) is not limited with
     * c: a limit on one side of a pair and not the other would change the pair's momentum */
    float4 q = clamp(qi + scale * c + f, pbf_box_min(p), pbf_box_max(p));
    float4 x = clamp(xi + scale * e, pbf_box_min(p), pbf_box_max(p));
    q_out[i] = (float4)(q.xyz, qi.w); /* the phase's tag delta wrote (0 without bodies) */
    pos_out[i] = (float4)(x.xyz, 0.0f);
}

/* collide's particles beside a solid (pbf_near_solid: the solids, and the fluid particles a
 * solid listed at the last search), on the bodies' path; the host launches it after
 * pbf_collide_fluid where the simulation has bodies or static particles (bodies != 0), with
 * the same arguments, and each particle is written by one of the two. The rest of the
 * particles return after reading their phase and mark: at 1M fluid particles with 64 bodies of
 * 2000 on an H200 the one kernel of both paths took 142-148 us a pass against 119.5 before
 * the phases' decoding, its registers (those of the bodies' path) setting the occupancy of the
 * fluid away from the bodies too. */
__kernel void pbf_collide(pbf_params p, uint n, __global const float4 *pos_in,
                          __global const float4 *q_in, __global const uint *near_count,
                          __global const uint *neighbors, __global float4 *q_out,
                          __global float4 *pos_out, __global const uint *neighbor_count,
                          __global const uint *moved, uint whole_lists, uint bodies,
                          __global const uint *phase, __global const float *inv_mass, uint matched,
                          __global const uint *near_solid, uint stamp,
                          __global const uint *cell_id PBF_LIST_PARAMS)
{
    PBF_ITEM(i, n);
    if (!bodies)
        return;
    uint phase_i = phase[i];
    if (pbf_near_solid(bodies, phase_i, near_solid, stamp, i))
        pbf_collide_at(p, n, pos_in, q_in, near_count, neighbors, q_out, pos_out, neighbor_count,
                       moved, whole_lists, true, phase_i, inv_mass, matched, cell_id, i);
}

/* collide on the fluid's path (no phase, no inverse mass, no friction: two fluid particles
 * share an overlap half and half): every particle where the simulation has no bodies and no
 * static particles (bodies = 0), else those away from the solids (not pbf_near_solid), which
 * pbf_collide leaves to it. Its own kernel, so that the bodies' path, which the compiler
 * drops here, does not set the registers and occupancy of a fluid's collide (at 1M particles
 * on an H200 it cost the fluid's pass 96 -> 112 us). */
__kernel void pbf_collide_fluid(pbf_params p, uint n, __global const float4 *pos_in,
                                __global const float4 *q_in, __global const uint *near_count,
                                __global const uint *neighbors, __global float4 *q_out,
                                __global float4 *pos_out, __global const uint *neighbor_count,
                                __global const uint *moved, uint whole_lists, uint bodies,
                                __global const uint *phase, __global const float *inv_mass,
                                uint matched, __global const uint *near_solid, uint stamp,
                                __global const uint *cell_id PBF_LIST_PARAMS)
{
    PBF_ITEM(i, n);
    if (bodies && pbf_near_solid(bodies, phase[i], near_solid, stamp, i))
        return;
    pbf_collide_at(p, n, pos_in, q_in, near_count, neighbors, q_out, pos_out, neighbor_count,
                   moved, whole_lists, false, PBFCL_PHASE_FLUID_WORD, inv_mass, matched, cell_id,
                   i);
}

/* One neighbour j (q_j = qj) of body_contacts' particle (qi, xi, phase_i, its whole body's
 * inverse mass w_body_i): a contact closer than 2r with another body's or a static particle
 * adds its share of the slide to *slides and of the closing to *closed. */
static void pbf_body_contact_term(float4 qi, float4 xi, uint phase_i, float w_body_i, uint j,
                                  float4 qj, __global const float4 *pos_in,
                                  __global const float *inv_mass, __global const uint2 *body_range,
                                  uint matched, float min_dist2, float4 *slides, float *closed)
{
    uint phase_j = pbf_q_phase(qj);
    float4 d = qi - qj;
    float r2 = dot(d.xyz, d.xyz);
    /* the fluid's and the body's own (with self-collide too: its body's friction is with others) */
    if (!pbf_is_solid(phase_j) || phase_j == phase_i || !(r2 < min_dist2 && r2 > 0.0f))
        return;
    float4 nrm = d / sqrt(r2), rel = (qi - xi) - (qj - pos_in[j]);
    float along = dot(rel.xyz, nrm.xyz); /* -along: how far the pair closed */
    float w_j = pbf_body_inv_mass(phase_j, inv_mass[j], body_range, matched);
    float body_share = w_body_i / (w_body_i + w_j);
    *slides += (float4)(body_share * (rel.xyz - along * nrm.xyz), 1.0f);
    *closed -= body_share * along;
}

/* body_contacts: for each particle of a shape-matched body (entry k of the entries, at slot
 * slot[entry_id[k]]; its phase, group b + 1, in q.w as delta tags it, b below matched), its
 * contacts closer than 2r with the particles of other bodies and static ones (q = x* + dx of the
 * substep's first collide pass, the near or whole neighbour lists as collide reads them), for
 * its body's friction (sm_friction, cl/bodies/shape_match.cl): the sums of the body's share
 * W_i / (W_i + W_j) of each pair's tangential slide over the substep (xyz) and their number
 * (w), and of how far the pairs closed (the second float4's x), into static_out (2 float4 per
 * slot). W: the whole bodies' inverse masses (pbf_body_inv_mass, 0 for a static particle). A
 * contact particle undoing its own slide, as collide does with the fluid's, would be spread
 * over the whole body by the shape matching after it. Stage: the solve, once a substep
 * (host/core/sim/sim.c, pbfcl_sim_collide). */
__kernel void pbf_body_contacts(pbf_params p, uint n, uint entries, __global const uint *entry_id,
                                __global const uint *slot, __global const float4 *pos_in,
                                __global const float4 *q_in, __global const uint *near_count,
                                __global const uint *neighbors, __global const uint *neighbor_count,
                                __global const uint *moved, uint whole_lists,
                                __global const float *inv_mass, __global const uint2 *body_range,
                                uint matched, __global float4 *static_out,
                                __global const uint *cell_id, __global const uint *here)
{
    uint e = get_global_id(0);
    if (e >= entries || here[entry_id[e]] == PBFCL_EMPTY)
        return; /* not on this device (shape_match.cl's here) */
    uint i = slot[entry_id[e]];
    float4 qi = q_in[i], xi = pos_in[i];
    uint phase_i = pbf_q_phase(qi);
    float w_body_i = pbf_body_inv_mass(phase_i, inv_mass[i], body_range, matched);
    bool whole = pbf_whole_lists(whole_lists, moved, cell_id, i, true); /* a solid's */
    uint count = min(whole ? neighbor_count[i] : near_count[i], (uint)MAX_NEIGHBORS);
    float4 slides = (float4)(0.0f);
    float closed = 0.0f, min_dist2 = p->min_dist * p->min_dist;
    uint k = 0;
    for (; k + PBF_GROUP <= count; k += PBF_GROUP) { /* see PBF_GROUP */
        uint j0 = neighbors[k * n + i], j1 = neighbors[(k + 1) * n + i];
        uint j2 = neighbors[(k + 2) * n + i], j3 = neighbors[(k + 3) * n + i];
        float4 q0 = q_in[j0], q1 = q_in[j1], q2 = q_in[j2], q3 = q_in[j3];
        pbf_body_contact_term(qi, xi, phase_i, w_body_i, j0, q0, pos_in, inv_mass, body_range,
                              matched, min_dist2, &slides, &closed);
        pbf_body_contact_term(qi, xi, phase_i, w_body_i, j1, q1, pos_in, inv_mass, body_range,
                              matched, min_dist2, &slides, &closed);
        pbf_body_contact_term(qi, xi, phase_i, w_body_i, j2, q2, pos_in, inv_mass, body_range,
                              matched, min_dist2, &slides, &closed);
        pbf_body_contact_term(qi, xi, phase_i, w_body_i, j3, q3, pos_in, inv_mass, body_range,
                              matched, min_dist2, &slides, &closed);
    }
    for (; k < count; k++) {
        uint j = neighbors[k * n + i];
        pbf_body_contact_term(qi, xi, phase_i, w_body_i, j, q_in[j], pos_in, inv_mass, body_range,
                              matched, min_dist2, &slides, &closed);
    }
    static_out[2u * i] = slides;
    static_out[2u * i + 1u] = (float4)(closed, 0.0f, 0.0f, 0.0f);
}

/* update: v = (x* - x) / dt, x = x*; x.w = m / rho, the particle's volume at the density of
 * the last lambda, which vorticity_viscosity reads with the position (one float4 per
 * neighbour instead of a position and a density). predict sets x.w back to 0; v.w is kept. */
__kernel void pbf_update(pbf_params p, uint n, __global float4 *pos, __global const float4 *pred,
                         __global float4 *vel, __global const float *density)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float4 xp = pred[i];
    /* xyz only: v.w stays (written as a float4 that read v.w, this kernel crashed Oclgrind
     * 21.10's uninitialised-value checker) */
    vstore3((xp.xyz - pos[i].xyz) * p->inv_dt, 0, (__global float *)(vel + i));
    pos[i] = (float4)(xp.xyz, p->mass / density[i]);
}

/* One neighbour's terms of vorticity_viscosity: V_j (v_j - v_i) x grad_j W into *w, V_j
 * |omega_j| grad_i W (v_j.w, the last substep's) into *eta, and the XSPH blend, share (2 w_i /
 * (w_i + w_j); 1 between fluid particles) times V_ij (v_j - v_i) Poly6, into *dv. */
static void pbf_omega_term(float4 xi, float4 vi, float4 xj, float4 vj, float share, float h,
                           float h2, float poly6, float spiky, float4 *w, float4 *eta, float4 *dv)
{
    float4 d = (float4)(xi.xyz - xj.xyz, 0.0f), u = (float4)(vj.xyz - vi.xyz, 0.0f);
    float r2 = dot(d, d);
    float4 g = pbf_spiky_grad_k(spiky, h, d, sqrt(r2)); /* grad_i W, w = 0 */
    *w += xj.w * cross(u, -g);                          /* cross() leaves w = 0 */
    *eta += vj.w * g;
    float vol = 2.0f * xi.w * xj.w / (xi.w + xj.w);
    *dv += (share * vol * pbf_poly6_k(poly6, h2, r2)) * u;
}

/* vorticity_viscosity: seed 001's omega, f_vorticity and viscosity stages in one pass over the
 * neighbours, of the velocities after update. With V_j = m / rho_j (pos.w, from update):
 *   omega_i = sum_j V_j (v_j - v_i) x grad_j W(x_i - x_j), Spiky (grad_j W = -grad_i W);
 *   the confinement force f_i = epsilon (N x omega_i), N = eta / |eta|, an acceleration
 *   (m/s^2) that the next predict applies, with eta = grad |omega| = sum_j V_j |omega_j|
 *   grad_i W;
 *   v_i += c sum_j V_ij (v_j - v_i) Poly6(x_i - x_j), the symmetric V_ij = 2 m / (rho_i +
 *   rho_j) so that momentum is conserved (into vel_out), after the force: the viscosity the
 *   outline computes after vorticity.
 * eta needs every neighbour's |omega|, which a second pass over the lists gave (pbf_vorticity,
 * 149 us a substep at 1M particles on an H200). Here it is the last substep's: V_j |omega_j|
 * rides in v_j.w, which this pass writes, predict, the sort and update keep, and this pass
 * reads with v_j (no extra load); one substep (a few ms) late in the direction N of a force
 * that is itself a small correction. 1M-particle dam break on an H200: 26.70 -> 25.37 ms per
 * frame (the two passes 150 + 151 us, this one 169 us); its density error and front are unchanged
 * within their spread (docs/PERFORMANCE.md, "One pass for vorticity and viscosity"). The first
 * substep of a run, and one after new velocities are set (v.w = 0), has no confinement.
 * omega.w = V_i |omega_i| too, for reading back. With bodies, pairs of two body particles
 * are skipped (XSPH within a rigid body damped its spin; between bodies it is no friction), a
 * fluid-body pair blends by relative inverse masses, 2 w_i / (w_i + w_j) each, so that m_i
 * dv_i = -m_j dv_j, and a body's particle has no vorticity (no confinement force, V |omega| 0). */
__kernel void pbf_vorticity_viscosity(pbf_params p, uint n, __global const float4 *pos,
                                      __global const float4 *vel,
                                      __global const uint *neighbor_count,
                                      __global const uint *neighbors, __global float4 *omega,
                                      __global float4 *vel_out, uint bodies,
                                      __global const uint *phase, __global const float *inv_mass,
                                      __global float4 *vort_force, __global const uint *near_solid,
                                      uint stamp)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float4 xi = pos[i], vi = vel[i];
    uint phase_i = bodies ? phase[i] : PBFCL_PHASE_FLUID_WORD;
    float w_i = bodies ? inv_mass[i] : 1.0f;
    uint count = min(neighbor_count[i], (uint)MAX_NEIGHBORS);
    const float h = p->h, h2 = p->h2, poly6 = p->poly6, spiky = p->spiky_grad;
    float4 w = (float4)(0.0f), eta = (float4)(0.0f), dv = (float4)(0.0f);
    /* two copies of the loop, the fluid-only one without the bodies' tests (with a run-time
     * test per neighbour this kernel took 191 instead of 148 us at 1M on an H200) */
    if (!pbf_near_solid(bodies, phase_i, near_solid, stamp, i)) { /* no solid neighbour */
        for (uint k = 0; k < count; k++) {
            uint j = neighbors[k * n + i];
            pbf_omega_term(xi, vi, pos[j], vel[j], 1.0f, h, h2, poly6, spiky, &w, &eta, &dv);
        }
    } else {
        for (uint k = 0; k < count; k++) {
            uint j = neighbors[k * n + i];
            if (pbf_is_solid(phase_i | phase[j]))
                continue; /* no viscosity between or within bodies */
            float share = 2.0f * w_i / (w_i + inv_mass[j]); /* 2 w_i / (w_i + w_j) */
            pbf_omega_term(xi, vi, pos[j], vel[j], share, h, h2, poly6, spiky, &w, &eta, &dv);
        }
    }
    if (pbf_is_solid(phase_i)) /* vorticity is the fluid's: a body's takes no confinement */
        w = (float4)(0.0f);
    float strength = xi.w * length(w), len = length(eta); /* V_i |omega_i|, |eta| */
    float4 f = (float4)(0.0f);
    if (len > 1e-20f && p->vorticity > 0.0f)
        f = p->vorticity * cross(eta / len, w); /* cross() leaves w = 0 */
    omega[i] = (float4)(w.xyz, strength);
    vort_force[i] = f;
    float4 v = vi + p->viscosity * dv;
    vel_out[i] = (float4)(v.x, v.y, v.z, strength);
}
