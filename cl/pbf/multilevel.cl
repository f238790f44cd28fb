/* The multilevel coarse correction of the density constraint (host/core/pbf/multilevel.c):
 * the fluid's compression gathered into a grid of cells of h over the box, the Poisson
 * problem lap(phi) = compression solved there by V-cycles over grids of h, 2h, 4h, ...
 * (weighted Jacobi smoothing, restriction of the residual by the mean of the 8 children,
 * piecewise-constant prolongation), and each particle moved by grad(phi), which spreads the
 * volume a compressed cell must lose over the whole fluid at once, up to the free surface,
 * instead of one h per Jacobi iteration. Cells hold fluid (flag 1: phi solved) or nothing
 * (flag 0: air, phi = 0, the free surface); beyond the grid lie the walls (no flux).
 * Needs pbf.cl (params, the box) before it in the program. A grid's cells are numbered
 * x + nx (y + ny z); the kernels take nx, ny, nz and form dims = (nx, ny, nz, nx ny nz). */

/* The compression of a particle in fixed point: atomic integer sums are exact and in any
 * order the same (OpenCL C 1.2 has no float atomics); 2^16 per unit strain resolves 1.5e-5
 * and a cell of up to 2^15 fully compressed particles cannot overflow. */
#define ML_FIXED 65536.0f

/* The cell of p in a grid of cells of dx from the box's corner, clamped into the grid. */
static uint4 ml_cell(pbf_params p, float4 x, float inv_dx, uint4 dims)
{
    float4 lo = (float4)(p->box_min[0], p->box_min[1], p->box_min[2], 0.0f);
    float4 f = floor((x - lo) * inv_dx);
    float4 top = convert_float4(dims) - 1.0f;
    return convert_uint4(clamp(f, (float4)(0.0f), top));
}

static uint ml_index(uint4 c, uint4 dims)
{
    return c.x + dims.x * (c.y + dims.y * c.z);
}

static uint ml_index3(uint x, uint y, uint z, uint4 dims)
{
    return x + dims.x * (y + dims.y * z);
}

/* Zeroes the compression sums and particle counts of the finest grid. */
__kernel void ml_clear(__global int *sum, /* out: 0 */
                       __global uint *count, /* out: 0 */
                       const uint cells)
{
    uint c = get_global_id(0);
    if (c >= cells)
        return;
    sum[c] = 0;
    count[c] = 0u;
}

/* Each particle's strain rho / rho0 - 1 (signed, within [-1, 1]) at x* as it is now (after
 * the iteration's density and contact corrections: the coarse grids solve what they left; rho
 * as lambda sums it, walls included) into its cell's sum, and its count; a body's particle
 * counts, with no strain. */
__kernel void ml_gather(pbf_params p, uint n, __global const float4 *pred,
                        __global const uint *neighbor_count, __global const uint *neighbors,
                        float wall_scale, uint bodies, __global const uint *phase, float inv_dx,
                        uint nx, uint ny, uint nz, __global int *sum, /* in/out: fixed-point compression */
                        __global uint *count            /* in/out: particles per cell */
)
{
    const uint4 dims = (uint4)(nx, ny, nz, nx * ny * nz);
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float4 xi = pred[i];
    uint c = ml_index(ml_cell(p, xi, inv_dx, dims), dims);
    bool solid = bodies && phase[i] != 0u;
    uint m = solid ? 0u : min(neighbor_count[i], (uint)MAX_NEIGHBORS);
    float w_sum = 0.0f;
    for (uint k = 0; k < m; k++) {
        float4 d = xi - pred[neighbors[k * n + i]];
        w_sum += pbf_poly6_k(p->poly6, p->h2, dot(d.xyz, d.xyz));
    }
    float4 grad_wall;
    float rho = p->self_density + p->mass * w_sum +
                p->rest_density * pbf_wall_density(p, wall_scale, xi, &grad_wall);
    float s = solid ? 0.0f : clamp(rho * p->inv_rest_density - 1.0f, -1.0f, 1.0f);
    atomic_add(sum + c, convert_int_rte(s * ML_FIXED));
    atomic_inc(count + c);
}

/* The finest grid's right-hand side: the cell's summed strain where positive (its particles'
 * ups and downs cancel; a cell that is not compressed as a whole gives off nothing), as a
 * volume per cell volume (scale: the particle volume / the cell volume / ML_FIXED); its flags
 * (fluid where a particle is) and phi = 0. */
__kernel void ml_setup(__global const int *sum, __global const uint *count,
                       __global float *rhs, __global uint *flag, __global float *phi,
                       float scale, const uint cells)
{
    uint c = get_global_id(0);
    if (c >= cells)
        return;
    rhs[c] = (float)max(sum[c], 0) * scale;
    flag[c] = count[c] > 0u ? 1u : 0u;
    phi[c] = 0.0f;
}

/* Sum of phi over the neighbours of cell (x, y, z) inside the grid (air: 0), and how many
 * there are (faces to a wall carry no flux). */
static float ml_neighbours(__global const float *phi, __global const uint *flag, uint i,
                           uint4 dims, float *m)
{
    float s = 0.0f, k = 0.0f;
    uint x = i % dims.x, y = (i / dims.x) % dims.y, z = i / (dims.x * dims.y);
    uint sx = 1u, sy = dims.x, sz = dims.x * dims.y;
    if (x > 0u) { s += flag[i - sx] ? phi[i - sx] : 0.0f; k += 1.0f; }
    if (x + 1u < dims.x) { s += flag[i + sx] ? phi[i + sx] : 0.0f; k += 1.0f; }
    if (y > 0u) { s += flag[i - sy] ? phi[i - sy] : 0.0f; k += 1.0f; }
    if (y + 1u < dims.y) { s += flag[i + sy] ? phi[i + sy] : 0.0f; k += 1.0f; }
    if (z > 0u) { s += flag[i - sz] ? phi[i - sz] : 0.0f; k += 1.0f; }
    if (z + 1u < dims.z) { s += flag[i + sz] ? phi[i + sz] : 0.0f; k += 1.0f; }
    *m = k;
    return s;
}

/* One weighted Jacobi sweep of lap(phi) = rhs, (sum_nb phi_nb - m phi) / dx^2 = rhs. */
__kernel void ml_smooth(__global const float *phi, __global float *phi_out,
                        __global const float *rhs, __global const uint *flag, uint nx, uint ny, uint nz,
                        float dx2, float weight)
{
    const uint4 dims = (uint4)(nx, ny, nz, nx * ny * nz);
    uint c = get_global_id(0);
    if (c >= dims.w)
        return;
    float m, s = ml_neighbours(phi, flag, c, dims, &m);
    float jacobi = m > 0.0f ? (s - rhs[c] * dx2) / m : 0.0f;
    phi_out[c] = flag[c] ? phi[c] + weight * (jacobi - phi[c]) : 0.0f;
}

/* sweeps weighted Jacobi sweeps on the coarsest grid (at most 2 x 2 x 2 cells) by one
 * work-item, the sweeps one after another (tmp holds each sweep's result): one launch where
 * ml_smooth took one per sweep. */
__kernel void ml_coarsest(__global float *phi, __global float *tmp, __global const float *rhs,
                          __global const uint *flag, uint nx, uint ny, uint nz, float dx2,
                          float weight, uint sweeps)
{
    const uint4 dims = (uint4)(nx, ny, nz, nx * ny * nz);
    if (get_global_id(0) != 0u)
        return;
    for (uint s = 0u; s < sweeps; s++) {
        for (uint c = 0u; c < dims.w; c++) {
            float m, sum = ml_neighbours(phi, flag, c, dims, &m);
            float jacobi = m > 0.0f ? (sum - rhs[c] * dx2) / m : 0.0f;
            tmp[c] = flag[c] ? phi[c] + weight * (jacobi - phi[c]) : 0.0f;
        }
        for (uint c = 0u; c < dims.w; c++)
            phi[c] = tmp[c];
    }
}

/* The residual rhs - lap(phi) of the fluid cells (0 in air). */
__kernel void ml_residual(__global const float *phi, __global const float *rhs,
                          __global const uint *flag, uint nx, uint ny, uint nz, float inv_dx2,
                          __global float *res)
{
    const uint4 dims = (uint4)(nx, ny, nz, nx * ny * nz);
    uint c = get_global_id(0);
    if (c >= dims.w)
        return;
    float m, s = ml_neighbours(phi, flag, c, dims, &m);
    res[c] = flag[c] ? rhs[c] - (s - m * phi[c]) * inv_dx2 : 0.0f;
}

/* The next coarser grid: fluid where all its children inside the fine grid are, else air
 * (phi = 0: the free surface stays on every grid; with fluid where any child is, a fluid
 * filling a corner of the box left the coarsest grids without air, their Neumann problem
 * drifted, and the jump to phi = 0 at the surface pushed the dam break apart); the mean
 * residual of the 8 children (0 beyond the fine grid) as its right-hand side; phi = 0. */
__kernel void ml_restrict(__global const float *res, __global const uint *flag, uint nx, uint ny, uint nz,
                          __global float *rhs_c, __global uint *flag_c, __global float *phi_c,
                          uint cx, uint cy, uint cz)
{
    const uint4 dims = (uint4)(nx, ny, nz, nx * ny * nz);
    const uint4 dims_c = (uint4)(cx, cy, cz, cx * cy * cz);
    uint c = get_global_id(0);
    if (c >= dims_c.w)
        return;
    uint x = c % dims_c.x, y = (c / dims_c.x) % dims_c.y, z = c / (dims_c.x * dims_c.y);
    float s = 0.0f;
    uint all = 1u;
    for (uint k = 0u; k < 8u; k++) {
        uint fx = 2u * x + (k & 1u), fy = 2u * y + ((k >> 1) & 1u), fz = 2u * z + (k >> 2);
        if (fx < dims.x && fy < dims.y && fz < dims.z) {
            uint i = ml_index3(fx, fy, fz, dims);
            s += res[i];
            all &= flag[i];
        }
    }
    rhs_c[c] = all ? 0.125f * s : 0.0f;
    flag_c[c] = all;
    phi_c[c] = 0.0f;
}

/* The coarse correction added to the fine grid's fluid cells (piecewise constant). */
__kernel void ml_prolong(__global float *phi, __global const uint *flag, uint nx, uint ny, uint nz,
                         __global const float *phi_c, uint cx, uint cy, uint cz)
{
    const uint4 dims = (uint4)(nx, ny, nz, nx * ny * nz);
    const uint4 dims_c = (uint4)(cx, cy, cz, cx * cy * cz);
    uint c = get_global_id(0);
    if (c >= dims.w)
        return;
    uint x = c % dims.x, y = (c / dims.x) % dims.y, z = c / (dims.x * dims.y);
    if (flag[c])
        phi[c] += phi_c[ml_index3(x / 2u, y / 2u, z / 2u, dims_c)];
}

/* phi's gradient along one axis at fraction t of the way through cell i: the faces' gradients
 * (phi_c - phi_below) / dx and (phi_above - phi_c) / dx, 0 at a wall, interpolated. */
static float ml_face_gradient(__global const float *phi, __global const uint *flag, uint i,
                              uint stride, uint c, uint dim, float t, float inv_dx)
{
    float here = phi[i];
    float below = c > 0u ? (here - (flag[i - stride] ? phi[i - stride] : 0.0f)) * inv_dx : 0.0f;
    float above =
        c + 1u < dim ? ((flag[i + stride] ? phi[i + stride] : 0.0f) - here) * inv_dx : 0.0f;
    return mix(below, above, clamp(t, 0.0f, 1.0f));
}

/* Moves each fluid particle by grad(phi) at its place (at most max_move, kept in the box); a
 * body's particles stay. */
__kernel void ml_correct(pbf_params p, uint n, __global float4 *pred, uint bodies,
                         __global const uint *phase, __global const float *phi,
                         __global const uint *flag, float inv_dx, uint nx, uint ny, uint nz, float max_move)
{
    const uint4 dims = (uint4)(nx, ny, nz, nx * ny * nz);
    uint i = get_global_id(0);
    if (i >= n || (bodies && phase[i] != 0u))
        return;
    float4 x = pred[i];
    uint4 c = ml_cell(p, x, inv_dx, dims);
    uint k = ml_index(c, dims);
    float4 lo = (float4)(p->box_min[0], p->box_min[1], p->box_min[2], 0.0f);
    float4 t = (x - lo) * inv_dx - convert_float4(c);
    float4 d = (float4)(ml_face_gradient(phi, flag, k, 1u, c.x, dims.x, t.x, inv_dx),
                        ml_face_gradient(phi, flag, k, dims.x, c.y, dims.y, t.y, inv_dx),
                        ml_face_gradient(phi, flag, k, dims.x * dims.y, c.z, dims.z, t.z, inv_dx),
                        0.0f);
    d = pbf_limit(d, max_move);
    pred[i] = (float4)(clamp(x + d, pbf_box_min(p), pbf_box_max(p)).xyz, x.w);
}
