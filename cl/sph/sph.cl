/* The weakly compressible SPH kernels (Becker & Teschner 2007) of seed 002's phase II, one per
 * stage: density (summation and the Tait equation of state), force (symmetric pressure force,
 * Monaghan's artificial viscosity, gravity, the walls) and the two halves of a velocity Verlet
 * step (integrate). Built after cl/pbf/pbf.cl, whose kernel functions (Poly6, Spiky's gradient)
 * and walls (pbf_wall_density) they share, so that both methods see the same fluid and walls. */
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined with -D"
#endif
#ifndef MAX_NEIGHBORS
#error "MAX_NEIGHBORS (neighbour list capacity) must be defined with -D"
#endif

typedef __constant const pbfcl_sph_params *sph_params;

/* Spiky's integrals over the half-space beyond a wall plane at distance d from x (0 <= d
 * <= h; W = 15 (h - r)^3 / (pi h^6), u = x - x_b, n the plane's normal), with T = h - d:
 *   return  phi = int W                  = T^5 (3 h / 2 - T) / h^6 (1/2 at d = 0),
 *   *m_n    = int u_n^2 (-W'(r) / r)     = phi + d S, S = int over the plane of W
 *                                        = 30 T^4 (h / 4 - T / 5) / h^6,
 * the second by parts along the normal; the moment along the plane, int u_t^2 (-W'(r) / r),
 * is phi itself (by parts along the plane). */
static float sph_wall_spiky(float h, float d, float *m_n)
{
    d = clamp(d, 0.0f, h);
    float t = h - d, t4 = (t * t) * (t * t), ih6 = 1.0f / ((h * h) * (h * h) * (h * h));
    float phi = t4 * t * (1.5f * h - t) * ih6;
    *m_n = phi + d * 30.0f * t4 * (0.25f * h - 0.2f * t) * ih6;
    return phi;
}

/* The walls' share of the pressure gradient. The fluid's sums over its neighbours,
 * g_sum = sum_j V_j (p_j - p_i) grad W_ij and m_sum = diag sum_j V_j (x_i - x_j) (x) (-grad
 * W_ij) (normalised: 1 on the rest lattice), give the pressure gradient along axis a as
 * g_sum_a / m_sum_a; a particle within h of a wall misses the part m_miss = 1 - m_sum_a of the
 * moment that the fluid beyond the wall would give. The walls stand for that fluid, of
 * density rho_w, with the particle's pressure carried on with its gradient (the wall's
 * pressure extrapolated from the fluid, as Adami et al. 2012): their pressure force is then
 * -(rho_w / rho_i^2) m_miss grad p. m_miss is at most the walls' own moment m_w, Spiky's
 * integrals over the box's planes combined as pbf_wall_density combines their density (the
 * fraction f_a = 1 - phi_lo - phi_hi of the kernel left by the walls of axis a; along a the
 * fluid keeps mu_a prod_(b != a) f_b, mu_a = 1 - m_n,lo - m_n,hi): at a free surface the rest
 * of the deficit is air, not wall. grad p divides by at least the fluid's share 1 - m_w, so
 * that a particle with few neighbours does not amplify them. Without this term the side walls
 * carry none of the vertical pressure gradient and the fluid beside them stands at a higher
 * pressure (a column 6 particles wide: 11 % over rho0 g depth at mid-depth). */
static float4 sph_wall_pressure(pbf_params p, float rho_w, float rho_i, float4 g_sum, float4 m_sum,
                                float4 x)
{
    float xs[3] = {x.x, x.y, x.z}, f[3], mu[3];
    for (int a = 0; a < 3; a++) {
        float m_lo, m_hi;
        float lo = sph_wall_spiky(p->h, xs[a] - p->box_min[a], &m_lo);
        float hi = sph_wall_spiky(p->h, p->box_max[a] - xs[a], &m_hi);
        f[a] = 1.0f - (lo + hi);
        mu[a] = 1.0f - (m_lo + m_hi);
    }
    float4 one = (float4)(1.0f);
    float4 m_w =
        one - (float4)(mu[0] * f[1] * f[2], mu[1] * f[0] * f[2], mu[2] * f[0] * f[1], 1.0f);
    float4 m_fl = (float4)(m_sum.xyz, 1.0f);
    float4 grad_p = g_sum / fmax(m_fl, one - m_w);
    float4 m_miss = fmin(fmax(one - m_fl, 0.0f), m_w);
    return -(rho_w / (rho_i * rho_i)) * m_miss * grad_p;
}

/* density: rho_i = m sum_j W(x_i - x_j) (Poly6, the particle itself included) plus the walls'
 * density (pbf_wall_density: the fluid at rest a wall stands for), then the Tait equation
 * p_i = B ((rho_i / rho0)^gamma - 1), clamped at 0 (a free surface has too few neighbours for
 * the summation; a negative pressure there would pull the surface into clumps). Writes rho_i
 * and p_i / rho_i^2, the term of the symmetric pressure force. */
__kernel void sph_density(pbf_params p, sph_params s, uint n, __global const float4 *pos,
                          __global const uint *neighbor_count, __global const uint *neighbors,
                          __global float *density, __global float *pressure, float wall_scale)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float4 xi = (float4)(pos[i].xyz, 0.0f);
    uint count = min(neighbor_count[i], (uint)MAX_NEIGHBORS);
    const float h2 = p->h2, poly6 = p->poly6;
    float w_sum = 0.0f;
    for (uint k = 0; k < count; k++) {
        float4 d = xi - (float4)(pos[neighbors[k * n + i]].xyz, 0.0f);
        w_sum += pbf_poly6_k(poly6, h2, dot(d, d));
    }
    float4 grad_wall;
    float rho_wall = pbf_wall_density(p, wall_scale, xi, &grad_wall);
    float rho = p->self_density + p->mass * w_sum + s->wall_density * rho_wall;
    float pr = s->stiffness * (pow(rho * p->inv_rest_density, s->gamma) - 1.0f);
    density[i] = rho;
    pressure[i] = fmax(pr, 0.0f) / (rho * rho);
}

/* force: the acceleration
 *   a_i = g + push - sum_j m (p_i / rho_i^2 + p_j / rho_j^2 + Pi_ij) grad W(x_i - x_j)
 *         - (p_i / rho_i^2) rho_w grad phi_wall(x_i) + the walls' share of grad p
 * with Spiky's gradient (Mueller et al. 2003), largest at r = 0. Poly6's gradient, zero
 * there, let particles pair up (the pairing instability): a resting column 10 particles wide
 * packed most of its particles into pairs closer than r / 4 within 2 s and sank by 9 % of its
 * height, its mid-depth pressure 15 % under rho0 g depth. Monaghan's artificial viscosity
 * Pi_ij = -nu (v_ij . x_ij) / (|x_ij|^2 + eps) for approaching pairs (v_ij . x_ij < 0),
 * nu = alpha (h / 2) c 2 / (rho_i + rho_j) (Becker & Teschner's, their h the smoothing length
 * h / 2). Both terms are symmetric in i and j, so momentum is conserved pair by pair. grad W
 * is normalised on the rest lattice (times grad_scale = 1 / M, M = sum_j V_j (x_j - x_i)_x
 * dW/dx_i over the lattice): the sums then give the gradient of a linear pressure field
 * exactly there. The walls: pbf_wall_density's continuum of fluid at rest adds rho_w phi to
 * rho_i, and its force is the energy's gradient through it, -(p_i / rho_i^2) rho_w grad phi
 * (Akinci et al. 2012's boundary force); and sph_wall_pressure gives them their share of the
 * pressure gradient, with the fluid's sums g_sum and m_sum gathered in the same loop. */
__kernel void sph_force(pbf_params p, sph_params s, uint n, __global const float4 *pos,
                        __global const float4 *vel, __global const float *density,
                        __global const float *pressure, __global const uint *neighbor_count,
                        __global const uint *neighbors, __global float4 *accel, float wall_scale,
                        float4 gravity, float4 push_origin, float4 push_dir, float4 push)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float4 xi = (float4)(pos[i].xyz, 0.0f), vi = (float4)(vel[i].xyz, 0.0f);
    float rho_i = density[i], pi = pressure[i], p_i = pi * rho_i * rho_i;
    uint count = min(neighbor_count[i], (uint)MAX_NEIGHBORS);
    const float h = p->h, eps = s->visc_eps;
    const float grad_coef = p->spiky_grad * p->mass * s->grad_scale;
    const float nu0 = s->alpha * h * s->sound_speed; /* alpha (h / 2) c 2 */
    float4 a = (float4)(0.0f), g_sum = (float4)(0.0f), m_sum = (float4)(0.0f);
    for (uint k = 0; k < count; k++) {
        uint j = neighbors[k * n + i];
        float4 d = xi - (float4)(pos[j].xyz, 0.0f);
        float4 u = vi - (float4)(vel[j].xyz, 0.0f);
        float r2 = dot(d, d), vx = dot(u, d), rho_j = density[j], pj = pressure[j];
        float visc = vx < 0.0f ? -nu0 / (rho_i + rho_j) * vx / (r2 + eps) : 0.0f;
        float4 gw = pbf_spiky_grad_k(grad_coef, h, d, sqrt(r2)); /* m grad W, normalised */
        a -= (pi + pj + visc) * gw;
        g_sum += (pj * rho_j - p_i / rho_j) * gw; /* V_j (p_j - p_i) grad W */
        m_sum -= (gw * d) / rho_j; /* V_j (x_i - x_j)_a^2 (-W' / r), the moment's diagonal */
    }
    float4 grad_wall;
    pbf_wall_density(p, wall_scale, xi, &grad_wall);
    a -= (pi * s->wall_density) * grad_wall;
    a += sph_wall_pressure(p, s->wall_density, rho_i, g_sum, m_sum, xi);
    a += (float4)(gravity.xyz, 0.0f);
    if (push.w > 0.0f) { /* as pbf_predict */
        float4 rel = (float4)(xi.xyz - push_origin.xyz, 0.0f);
        float t = dot(rel, push_dir);
        float4 off = rel - t * push_dir;
        if (t >= 0.0f && dot(off, off) < push.w * push.w)
            a += (float4)(push.xyz, 0.0f);
    }
    accel[i] = (float4)(a.xyz, 0.0f);
}

/* The velocity v without its component into a wall that x touches (x clamped to box +- r). */
static float4 sph_wall_velocity(float4 x, float4 v, float4 lo, float4 hi)
{
    int4 below = islessequal(x, lo), above = isgreaterequal(x, hi);
    return select(v, (float4)(0.0f),
                  (below & isless(v, (float4)(0.0f))) | (above & isgreater(v, (float4)(0.0f))));
}

/* integrate, first half of a velocity Verlet step (Eberly, Game Physics, 9.35):
 * v_half = v + a dt / 2, x' = x + v_half dt (= x + v dt + a dt^2 / 2), and the velocity
 * v* = v + a dt at which the force of x' is evaluated (the force depends on velocities: seed
 * 002's reason for two force evaluations per step). x' is kept inside the walls (box less r)
 * and the velocity into a wall it touches removed. Writes x', v_half and v* (into vel). */
__kernel void sph_verlet_x(pbf_params p, uint n, __global float4 *pos, __global float4 *vel,
                           __global float4 *vel_half, __global const float4 *accel)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    const float dt = p->dt;
    float4 a = (float4)(accel[i].xyz, 0.0f), v = (float4)(vel[i].xyz, 0.0f);
    float4 vh = v + (0.5f * dt) * a;
    float4 x = (float4)(pos[i].xyz, 0.0f) + dt * vh;
    float4 lo = pbf_box_min(p), hi = pbf_box_max(p);
    x = clamp(x, lo, hi);
    vh = sph_wall_velocity(x, vh, lo, hi);
    pos[i] = (float4)(x.xyz, 0.0f);
    vel_half[i] = vh;
    vel[i] = sph_wall_velocity(x, v + dt * a, lo, hi);
}

/* integrate, second half: v = v_half + a' dt / 2 with a' the force of x' and v*, the
 * velocity into a wall removed; the largest |a'| of the frame is merged into accel_max (as
 * the bits of a non-negative float, with atomic_max) for the force condition of the next
 * frame's time step. WG_SIZE must be a power of two. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
sph_verlet_v(pbf_params p, uint n, __global const float4 *pos, __global float4 *vel,
             __global const float4 *vel_half, __global const float4 *accel,
             __global uint *accel_max)
{
    __local float acc[WG_SIZE];
    uint i = get_global_id(0), l = get_local_id(0);
    float a_len = 0.0f;
    if (i < n) {
        float4 a = (float4)(accel[i].xyz, 0.0f);
        float4 v = (float4)(vel_half[i].xyz, 0.0f) + (0.5f * p->dt) * a;
        vel[i] = sph_wall_velocity((float4)(pos[i].xyz, 0.0f), v, pbf_box_min(p), pbf_box_max(p));
        a_len = length(a.xyz);
    }
    acc[l] = isfinite(a_len) ? a_len : MAXFLOAT;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (l < s)
            acc[l] = fmax(acc[l], acc[l + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        atomic_max(accel_max, as_uint(acc[0]));
}
