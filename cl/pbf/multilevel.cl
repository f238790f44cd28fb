/* The multilevel coarse correction of the density constraint (host/core/pbf/multilevel.c):
 * the fluid's compression gathered into a grid of cells of h over the box, the Poisson
 * problem lap(phi) = compression solved there by V-cycles over grids of h, 2h, 4h, ...
 * (weighted Jacobi smoothing, restriction of the residual by the mean of the 8 children,
 * piecewise-constant prolongation; the small grids all in one work-group, ml_group), and each
 * particle moved by grad(phi), which spreads the
 * volume a compressed cell must lose over the whole fluid at once, up to the free surface,
 * instead of one h per Jacobi iteration. Cells hold fluid (ML_FLUID: phi solved), nothing
 * (ML_AIR: phi = 0 on its faces with fluid cells, the free surface) or a collision shape
 * (ML_SOLID: no flux, as through the walls beyond the grid).
 * Needs pbf.cl (params, the box) and shape_distance.cl before it in the program. A grid's cells are numbered
 * x + nx (y + ny z); the kernels take nx, ny, nz and form dims = (nx, ny, nz, nx ny nz). */

/* The compression of a particle in fixed point: atomic integer sums are exact and in any
 * order the same (OpenCL C 1.2 has no float atomics); 2^16 per unit strain resolves 1.5e-5
 * and a cell of up to 2^15 fully compressed particles cannot overflow. */
#define ML_FIXED 65536.0f

/* A cell's flag: air, fluid, or solid (empty and closed by a collision shape, ml_solids:
 * ML_SOLID + the shape's index on the finest grid, ML_SOLID on the coarser ones). */
#define ML_AIR 0u
#define ML_FLUID 1u
#define ML_SOLID 2u

/* A finest cell's touch word: which sides of the cell its fluid touches a collision shape on.
 * Side f (2a: the -a side, 2a + 1: +a) is the 5-bit field ML_TOUCH_BITS f up: one particle of
 * the cell holding a shape plane that counts in its density (pbf_shape_load), whose normal lies
 * within 60 degrees of the axis pointing away from that side, sets it to 1 on a device; a split
 * simulation adds the devices' words, so a field counts devices (at most 31) and stays apart. */
#define ML_TOUCH_BITS 5u

static uint ml_touch_side(uint touch, uint f)
{
    return (touch >> (ML_TOUCH_BITS * f)) & ((1u << ML_TOUCH_BITS) - 1u);
}

/* The touch word of a particle's shape planes (normals n with their phi > 0; 0 for none). */
static uint ml_touch_of(float4 n, float phi, uint touch)
{
    if (!(phi > 0.0f))
        return touch;
    float na[3] = {n.x, n.y, n.z};
    for (uint a = 0u; a < 3u; a++) {
        if (na[a] > 0.5f) /* the shape lies on the -a side */
            touch |= 1u << (ML_TOUCH_BITS * 2u * a);
        if (na[a] < -0.5f)
            touch |= 1u << (ML_TOUCH_BITS * (2u * a + 1u));
    }
    return touch;
}

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

static uint4 ml_dims(uint nx, uint ny, uint nz)
{
    return (uint4)(nx, ny, nz, nx * ny * nz);
}

static uint ml_index3(uint x, uint y, uint z, uint4 dims)
{
    return x + dims.x * (y + dims.y * z);
}

/* Each particle's strain rho / rho0 - 1 (signed, within [-1, 1]) at x* as it is now (after
 * the iteration's density and contact corrections: the coarse grids solve what they left; rho
 * as lambda sums it, walls included, and with shapes the collision shapes: contact_plane and
 * contact_shape, the narrow phase's) into its cell's sum, and its count; a body's particle
 * counts, with no strain. A particle flagged in ghost (a split simulation's copy of another
 * device's; ghost NULL: none) is its owner's to count. Two kernels, without and with shapes:
 * the shapes' branch, even not taken, cost ml_gather a third of its time on an H200 (80.9 ->
 * 108.2 us a launch at 1M). With shapes, a fluid particle's planes also mark the sides of its
 * cell where its fluid touches a shape (touch, ML_TOUCH_BITS), which ml_solids closes. */
static void ml_gather_particle(pbf_params p, uint n, __global const float4 *pred,
                               __global const uint *neighbor_count, __global const uint *neighbors,
                               float wall_scale, uint bodies, __global const uint *phase,
                               float inv_dx, uint4 dims, __global int *sum, __global uint *count,
                               __global const uchar *ghost, bool shapes,
                               __global const float4 *contact_plane,
                               __global const int *contact_shape, __global uint *touch)
{
    uint i = get_global_id(0);
    if (i >= n || (ghost && ghost[i]))
        return;
    float4 xi = pred[i];
    uint c = ml_index(ml_cell(p, xi, inv_dx, dims), dims);
    bool solid = bodies && pbf_is_solid(phase[i]);
    uint m = solid ? 0u : min(neighbor_count[i], (uint)MAX_NEIGHBORS);
    float w_sum = 0.0f;
    for (uint k = 0; k < m; k++) {
        float4 d = xi - pred[neighbors[k * n + i]];
        w_sum += pbf_poly6_k(p->poly6, p->h2, dot(d.xyz, d.xyz));
    }
    float4 grad_wall, grad_f;
    float rho_wall = pbf_wall_density(p, wall_scale, xi, &grad_wall);
    if (shapes) { /* the shapes as walls, as lambda counts them */
        pbf_shape_set set;
        pbf_shape_load(p, wall_scale, xi, i, contact_plane, contact_shape, &set);
        rho_wall = 1.0f - (1.0f - rho_wall) * pbf_shape_factor(&set, &grad_f);
        uint t = 0u;
        t = ml_touch_of(set.n0, set.phi.x, t);
        t = ml_touch_of(set.n1, set.phi.y, t);
        t = ml_touch_of(set.n2, set.phi.z, t);
        t = ml_touch_of(set.n3, set.phi.w, t);
        if (t != 0u && !solid)
            atomic_or(touch + c, t);
    }
    float rho = p->self_density + p->mass * w_sum + p->rest_density * rho_wall;
    float s = solid ? 0.0f : clamp(rho * p->inv_rest_density - 1.0f, -1.0f, 1.0f);
    atomic_add(sum + c, convert_int_rte(s * ML_FIXED));
    atomic_inc(count + c);
}

__kernel void ml_gather(pbf_params p, uint n, __global const float4 *pred,
                        __global const uint *neighbor_count, __global const uint *neighbors,
                        float wall_scale, uint bodies, __global const uint *phase, float inv_dx,
                        uint nx, uint ny, uint nz, __global int *sum, /* in/out: fixed-point compression */
                        __global uint *count, /* in/out: particles per cell */
                        __global const uchar *ghost)
{
    ml_gather_particle(p, n, pred, neighbor_count, neighbors, wall_scale, bodies, phase, inv_dx,
                       ml_dims(nx, ny, nz), sum, count, ghost, false, NULL, NULL, NULL);
}

__kernel void ml_gather_shapes(pbf_params p, uint n, __global const float4 *pred,
                               __global const uint *neighbor_count,
                               __global const uint *neighbors, float wall_scale, uint bodies,
                               __global const uint *phase, float inv_dx, uint nx, uint ny,
                               uint nz, __global int *sum, __global uint *count,
                               __global const uchar *ghost, __global const float4 *contact_plane,
                               __global const int *contact_shape,
                               __global uint *touch) /* in/out: sides touching a shape */
{
    ml_gather_particle(p, n, pred, neighbor_count, neighbors, wall_scale, bodies, phase, inv_dx,
                       ml_dims(nx, ny, nz), sum, count, ghost, true, contact_plane, contact_shape,
                       touch);
}

/* The finest grid's right-hand side: the cell's summed strain where positive (its particles' ups
 * and downs cancel; a cell that is not compressed as a whole gives off nothing), as a volume per
 * cell volume (scale: the particle volume / the cell volume / ML_FIXED), and in a cell whose fluid
 * touches a shape (touch) that of full particles (the rest lattice's in a cell) if it holds fewer:
 * as if its fluid filled the part of the cell the shape leaves, which its faces, open whole to
 * the solve, let through as a full cell's. Counted as the particles' volume only, a cell that a
 * wall cuts gave off half a full cell's compression through the same faces, and the layers next
 * to a shape stood 1.3 to 3.4 % above the box's walls'. Not capped: at most 4 times its own (so
 * that a corner's one particle, or one splashed on a floor, is not taken 8 times) broke a frame
 * of pour at 1M with the fast solver (3 lists cut short), which the full fill leaves whole
 * (docs/PERFORMANCE.md, "The fluid's touch closes a cell"). Its flags (fluid where a particle is,
 * else air; flags_set: ml_solids set them, with the shapes) and phi: keep x the last correction's
 * phi in a fluid cell (a warm start; keep 0: phi = 0, as in air, which the sweeps leave at 0).
 * The sums, counts and touch words go back to 0 for the next correction's gather (the host zeroes
 * them when it makes them; touch NULL without shapes). A split simulation with collision shapes
 * gives own, this device's counts before the devices' were added, and gets each cell's share of
 * them (ml_shape_push); else both NULL. */
__kernel void ml_setup(__global int *sum, __global uint *count, __global float *rhs,
                       __global uint *flag, __global float *phi, float scale, const uint cells,
                       float keep, __global const uint *own, __global float *share,
                       uint flags_set, __global uint *touch, float full)
{
    uint c = get_global_id(0);
    if (c >= cells)
        return;
    if (share)
        share[c] = count[c] > 0u ? (float)own[c] / (float)count[c] : 0.0f;
    float fill = touch && touch[c] != 0u && count[c] > 0u ? fmax(full / (float)count[c], 1.0f)
                                                           : 1.0f;
    rhs[c] = (float)max(sum[c], 0) * scale * fill;
    if (!flags_set) /* else ml_solids set them */
        flag[c] = count[c] > 0u ? ML_FLUID : ML_AIR;
    phi[c] = keep > 0.0f && count[c] > 0u ? keep * phi[c] : 0.0f;
    sum[c] = 0;
    count[c] = 0u;
    if (touch)
        touch[c] = 0u;
}

/* The grid coarser than one of dims d: half its cells per axis, rounded up. */
static uint4 ml_coarser(uint4 d)
{
    return ml_dims((d.x + 1u) / 2u, (d.y + 1u) / 2u, (d.z + 1u) / 2u);
}

/* The coarse cell above fine cell i (grid dims, coarse grid dims_c). */
static uint ml_parent(uint i, uint4 dims, uint4 dims_c)
{
    uint x = i % dims.x, y = (i / dims.x) % dims.y, z = i / (dims.x * dims.y);
    return ml_index3(x / 2u, y / 2u, z / 2u, dims_c);
}

/* The weight of the face to a neighbour of flag f in a fluid cell's Laplacian: 1 to a fluid cell,
 * surface to air (the host's PBFCL_ML_SURFACE_WEIGHT, 2: phi = 0 on the face; 1: phi = 0 at the
 * air cell's centre, which the kernel tests also run), 0 to a solid one (no flux). */
static float ml_face_weight(uint f, float surface)
{
    return f == ML_FLUID ? 1.0f : (f == ML_AIR ? surface : 0.0f);
}

/* Sum of phi over the neighbours of cell i inside the grid (air, solid: 0), and their weights m
 * (ml_face_weight; faces to a wall or a solid cell carry no flux): one function per address space and flag type
 * (OpenCL C 1.2 has no generic pointers), the same sums in the same order. */
#define ML_NEIGHBOUR(j)                                                                           \
    {                                                                                             \
        s += flag[j] == ML_FLUID ? phi[j] : 0.0f;                                                 \
        k += ml_face_weight(flag[j], surface);                                                    \
    }
#define ML_NEIGHBOURS(name, space, flag_type)                                                     \
    static float name(space const float *phi, space const flag_type *flag, uint i, uint4 dims,  \
                      float surface, float *m)                                                    \
    {                                                                                             \
        float s = 0.0f, k = 0.0f;                                                                 \
        uint x = i % dims.x, y = (i / dims.x) % dims.y, z = i / (dims.x * dims.y);                \
        uint sx = 1u, sy = dims.x, sz = dims.x * dims.y;                                          \
        if (x > 0u)                                                                               \
            ML_NEIGHBOUR(i - sx)                                                                  \
        if (x + 1u < dims.x)                                                                      \
            ML_NEIGHBOUR(i + sx)                                                                  \
        if (y > 0u)                                                                               \
            ML_NEIGHBOUR(i - sy)                                                                  \
        if (y + 1u < dims.y)                                                                      \
            ML_NEIGHBOUR(i + sy)                                                                  \
        if (z > 0u)                                                                               \
            ML_NEIGHBOUR(i - sz)                                                                  \
        if (z + 1u < dims.z)                                                                      \
            ML_NEIGHBOUR(i + sz)                                                                  \
        *m = k;                                                                                   \
        return s;                                                                                 \
    }
ML_NEIGHBOURS(ml_neighbours, __global, uint)
ML_NEIGHBOURS(ml_neighbours_local, __local, uchar)

/* One weighted Jacobi sweep's new phi of a cell: its phi, its neighbours' sum s and count m,
 * its rhs, whether it is fluid (air, solid: 0); lap(phi) = (s - m phi) / dx^2 = rhs. */
static float ml_jacobi(float phi, float s, float m, float rhs, bool fluid, float dx2,
                       float weight)
{
    float jacobi = m > 0.0f ? (s - rhs * dx2) / m : 0.0f;
    return fluid ? phi + weight * (jacobi - phi) : 0.0f;
}

/* The residual rhs - lap(phi) of a cell (0 in air and solid). */
static float ml_residual(float phi, float s, float m, float rhs, bool fluid, float inv_dx2)
{
    return fluid ? rhs - (s - m * phi) * inv_dx2 : 0.0f;
}

/* One weighted Jacobi sweep of lap(phi) = rhs. */
__kernel void ml_smooth(__global const float *phi, __global float *phi_out,
                        __global const float *rhs, __global const uint *flag, uint nx, uint ny,
                        uint nz, float dx2, float weight, float surface)
{
    const uint4 dims = ml_dims(nx, ny, nz);
    uint c = get_global_id(0);
    if (c >= dims.w)
        return;
    float m, s = ml_neighbours(phi, flag, c, dims, surface, &m);
    phi_out[c] = ml_jacobi(phi[c], s, m, rhs[c], flag[c] == ML_FLUID, dx2, weight);
}

/* Sum of the neighbours' phi plus the coarse correction above each fluid one (air, solid: 0), and
 * their weights: ml_neighbours of the grid after ml_prolong would have added it. */
static float ml_neighbours_prolonged(__global const float *phi, __global const uint *flag,
                                     __global const float *phi_c, uint i, uint4 dims,
                                     uint4 dims_c, float surface, float *m)
{
    float s = 0.0f, k = 0.0f;
    uint x = i % dims.x, y = (i / dims.x) % dims.y, z = i / (dims.x * dims.y);
    uint step[3] = {1u, dims.x, dims.x * dims.y};
    uint at[3] = {x, y, z}, size[3] = {dims.x, dims.y, dims.z};
    for (uint a = 0u; a < 3u; a++) {
        if (at[a] > 0u) {
            uint j = i - step[a];
            s += flag[j] == ML_FLUID ? phi[j] + phi_c[ml_parent(j, dims, dims_c)] : 0.0f;
            k += ml_face_weight(flag[j], surface);
        }
        if (at[a] + 1u < size[a]) {
            uint j = i + step[a];
            s += flag[j] == ML_FLUID ? phi[j] + phi_c[ml_parent(j, dims, dims_c)] : 0.0f;
            k += ml_face_weight(flag[j], surface);
        }
    }
    *m = k;
    return s;
}

/* The coarse correction added to the fluid cells (piecewise constant) and the first weighted
 * Jacobi sweep after it, in one launch: what ml_prolong and ml_smooth did in two, the same
 * sums (the prolonged phi of the cell and its neighbours formed as ml_prolong stored them). */
__kernel void ml_prolong_smooth(__global const float *phi, __global float *phi_out,
                                __global const float *rhs, __global const uint *flag, uint nx,
                                uint ny, uint nz, float dx2, float weight,
                                __global const float *phi_c, uint cx, uint cy, uint cz,
                                float surface)
{
    const uint4 dims = ml_dims(nx, ny, nz), dims_c = ml_dims(cx, cy, cz);
    uint c = get_global_id(0);
    if (c >= dims.w)
        return;
    bool fluid = flag[c] == ML_FLUID;
    float here = fluid ? phi[c] + phi_c[ml_parent(c, dims, dims_c)] : phi[c];
    float m, s = ml_neighbours_prolonged(phi, flag, phi_c, c, dims, dims_c, surface, &m);
    phi_out[c] = ml_jacobi(here, s, m, rhs[c], fluid, dx2, weight);
}

/* sweeps weighted Jacobi sweeps on the coarsest grid (at most 2 x 2 x 2 cells) by one
 * work-item, the sweeps one after another (tmp holds each sweep's result): one launch where
 * ml_smooth took one per sweep. Where the small grids do not fit ml_group's local memory. */
__kernel void ml_coarsest(__global float *phi, __global float *tmp, __global const float *rhs,
                          __global const uint *flag, uint nx, uint ny, uint nz, float dx2,
                          float weight, uint sweeps, float surface)
{
    const uint4 dims = ml_dims(nx, ny, nz);
    if (get_global_id(0) != 0u)
        return;
    for (uint s = 0u; s < sweeps; s++) {
        for (uint c = 0u; c < dims.w; c++) {
            float m, sum = ml_neighbours(phi, flag, c, dims, surface, &m);
            tmp[c] = ml_jacobi(phi[c], sum, m, rhs[c], flag[c] == ML_FLUID, dx2, weight);
        }
        for (uint c = 0u; c < dims.w; c++)
            phi[c] = tmp[c];
    }
}

/* Coarse cell c of grid dims_c from the fine grid of dims: the sum of its children's residuals
 * rhs - lap(phi) (0 beyond the fine grid) into *s, and its flag: air where any child is, else
 * fluid where any child is, else solid (a solid child, like one beyond the grid, is wall). */
#define ML_RESTRICT_CELL(name, space, flag_type, neighbours)                                       \
    static uint name(space const float *phi, space const float *rhs, space const flag_type *flag, \
                     uint4 dims, float inv_dx2, uint c, uint4 dims_c, float surface, float *s)    \
    {                                                                                             \
        uint x = c % dims_c.x, y = (c / dims_c.x) % dims_c.y, z = c / (dims_c.x * dims_c.y);      \
        uint any_air = 0u, any_fluid = 0u;                                                        \
        *s = 0.0f;                                                                                \
        for (uint k = 0u; k < 8u; k++) {                                                          \
            uint fx = 2u * x + (k & 1u), fy = 2u * y + ((k >> 1) & 1u), fz = 2u * z + (k >> 2);   \
            if (fx < dims.x && fy < dims.y && fz < dims.z) {                                      \
                uint i = ml_index3(fx, fy, fz, dims);                                             \
                float m, nb = neighbours(phi, flag, i, dims, surface, &m);                        \
                *s += ml_residual(phi[i], nb, m, rhs[i], flag[i] == ML_FLUID, inv_dx2);           \
                any_air |= flag[i] == ML_AIR ? 1u : 0u;                                           \
                any_fluid |= flag[i] == ML_FLUID ? 1u : 0u;                                       \
            }                                                                                     \
        }                                                                                         \
        return any_air ? ML_AIR : (any_fluid ? ML_FLUID : ML_SOLID);                              \
    }
ML_RESTRICT_CELL(ml_restrict_cell, __global, uint, ml_neighbours)
ML_RESTRICT_CELL(ml_restrict_cell_local, __local, uchar, ml_neighbours_local)

/* The next coarser grid: fluid where all its children inside the fine grid are fluid or solid
 * and one is fluid, air where one is air
 * (phi = 0: the free surface stays on every grid; with fluid where any child is, a fluid
 * filling a corner of the box left the coarsest grids without air, their Neumann problem
 * drifted, and the jump to phi = 0 at the surface pushed the dam break apart); the mean
 * residual rhs - lap(phi) of the 8 children (0 beyond the fine grid), formed here from the
 * fine phi and rhs, as its right-hand side; phi = 0. */
__kernel void ml_restrict(__global const float *phi, __global const float *rhs,
                          __global const uint *flag, uint nx, uint ny, uint nz, float inv_dx2,
                          __global float *rhs_c, __global uint *flag_c, __global float *phi_c,
                          uint cx, uint cy, uint cz, float surface)
{
    const uint4 dims = ml_dims(nx, ny, nz), dims_c = ml_dims(cx, cy, cz);
    uint c = get_global_id(0);
    if (c >= dims_c.w)
        return;
    float s;
    uint f = ml_restrict_cell(phi, rhs, flag, dims, inv_dx2, c, dims_c, surface, &s);
    rhs_c[c] = f == ML_FLUID ? 0.125f * s : 0.0f;
    flag_c[c] = f;
    phi_c[c] = 0.0f;
}

/* ---- the small grids in one work-group ------------------------------------------------------
 * ml_group runs the V-cycle's part below one grid (the top: its rhs and flags from the grid
 * above, its phi as it is) in one work-group, all those grids in local memory: the sweeps,
 * restrictions, the coarsest grid's sweeps and the prolongations that took the per-level
 * launches 7 each, with barriers between them. Local memory holds the grids one after the other,
 * top first (phi, rhs, flags: levels cells in all), and one sweep's new phi of the top (tmp). */

/* sweeps weighted Jacobi sweeps of the grid of dims in local memory (tmp: its new phi). */
static void ml_group_sweeps(__local float *phi, __local float *tmp, __local const float *rhs,
                            __local const uchar *flag, uint4 dims, float dx2, float weight,
                            uint sweeps, float surface)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    for (uint s = 0u; s < sweeps; s++) {
        for (uint c = lid; c < dims.w; c += wg) {
            float m, sum = ml_neighbours_local(phi, flag, c, dims, surface, &m);
            tmp[c] = ml_jacobi(phi[c], sum, m, rhs[c], flag[c] == ML_FLUID, dx2, weight);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint c = lid; c < dims.w; c += wg)
            phi[c] = tmp[c];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The grid below the one of dims at local offset off, and its offset. */
static uint4 ml_group_down(uint4 dims, uint *off)
{
    *off += dims.w;
    return ml_coarser(dims);
}

/* The dims and local offset of grid l below the top of dims top. */
static uint4 ml_group_level(uint4 top, uint l, uint *off)
{
    uint4 d = top;
    *off = 0u;
    for (uint k = 0u; k < l; k++)
        d = ml_group_down(d, off);
    return d;
}

/* One V-cycle of the levels grids from the top (cells nx x ny x nz of dx^2 dx2, its phi, rhs
 * and flags in global memory) down to the coarsest and back, in one work-group: pre sweeps on
 * each grid but the coarsest, the residual restricted to the next, coarsest sweeps there, and
 * on the way up the coarse phi added to the fluid cells and post sweeps; the top's phi written
 * back. Each grid below has cells of twice the size (dx^2 4x, 1 / dx^2 a quarter). Local: phi,
 * rhs and flag of all the grids, tmp of the top's cells. */
__kernel void ml_group(__global float *phi_top, /* in/out */
                       __global const float *rhs_top, __global const uint *flag_top, uint nx,
                       uint ny, uint nz, uint levels, float dx2, float inv_dx2, float weight,
                       uint pre, uint post, uint coarsest, __local float *phi, __local float *rhs,
                       __local uchar *flag, __local float *tmp, float surface)
{
    const uint4 top = ml_dims(nx, ny, nz);
    uint lid = get_local_id(0), wg = get_local_size(0);
    for (uint c = lid; c < top.w; c += wg) {
        phi[c] = phi_top[c];
        rhs[c] = rhs_top[c];
        flag[c] = (uchar)min(flag_top[c], ML_SOLID);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint4 d = top;
    uint off = 0u;
    float dx2_l = dx2, inv_dx2_l = inv_dx2;
    for (uint l = 0u; l + 1u < levels; l++) {
        ml_group_sweeps(phi + off, tmp, rhs + off, flag + off, d, dx2_l, weight, pre,
                        surface);
        uint off_c = off;
        uint4 dc = ml_group_down(d, &off_c);
        for (uint c = lid; c < dc.w; c += wg) {
            float s;
            uint f = ml_restrict_cell_local(phi + off, rhs + off, flag + off, d, inv_dx2_l, c,
                                            dc, surface, &s);
            rhs[off_c + c] = f == ML_FLUID ? 0.125f * s : 0.0f;
            flag[off_c + c] = (uchar)f;
            phi[off_c + c] = 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        d = dc;
        off = off_c;
        dx2_l *= 4.0f;
        inv_dx2_l *= 0.25f;
    }
    ml_group_sweeps(phi + off, tmp, rhs + off, flag + off, d, dx2_l, weight, coarsest,
                    surface);
    for (uint l = levels - 1u; l > 0u; l--) {
        uint off_c = off;
        uint4 dc = d;
        d = ml_group_level(top, l - 1u, &off);
        dx2_l *= 0.25f;
        for (uint c = lid; c < d.w; c += wg)
            if (flag[off + c] == ML_FLUID)
                phi[off + c] += phi[off_c + ml_parent(c, d, dc)];
        barrier(CLK_LOCAL_MEM_FENCE);
        ml_group_sweeps(phi + off, tmp, rhs + off, flag + off, d, dx2_l, weight, post,
                        surface);
    }
    for (uint c = lid; c < top.w; c += wg)
        phi_top[c] = phi[c];
}

/* phi's gradient along one axis at fraction t of the way through cell i: the faces' gradients
 * (phi_c - phi_below) / dx and (phi_above - phi_c) / dx (to air: phi = 0 on the face, half a
 * cell away), 0 at a wall or a solid cell, interpolated; but in a cell with fluid below and air
 * above, below and above as gravity's component g along the axis sets them
 * (a free surface's cell), the fluid side's alone. Interpolated there, the steeper face to air
 * lifted a surface cell's upper particles more than its lower ones each substep, the fine
 * iterations, which only push particles apart, never pulled them back, and the top layer of a
 * resting tank crept up until it stood half a layer high along the cell's face
 * (docs/PERFORMANCE.md, "A surface cell moves as one"). */
static float ml_face_gradient(__global const float *phi, __global const uint *flag, uint i,
                              uint stride, uint c, uint dim, float t, float inv_dx, float surface,
                              float g)
{
    float here = phi[i];
    float below = 0.0f, above = 0.0f;
    uint fb = ML_SOLID, fa = ML_SOLID; /* beyond the grid: a wall */
    if (c > 0u) {
        fb = flag[i - stride];
        below = (here - (fb == ML_FLUID ? phi[i - stride] : 0.0f)) * inv_dx *
                ml_face_weight(fb, surface);
    }
    if (c + 1u < dim) {
        fa = flag[i + stride];
        above = ((fa == ML_FLUID ? phi[i + stride] : 0.0f) - here) * inv_dx *
                ml_face_weight(fa, surface);
    }
    if (g < 0.0f && fb == ML_FLUID && fa == ML_AIR)
        return below;
    if (g > 0.0f && fa == ML_FLUID && fb == ML_AIR)
        return above;
    return mix(below, above, clamp(t, 0.0f, 1.0f));
}

/* The part of the correction's move a particle of density rho0 s takes: all of it where its
 * neighbours fill its kernel's support as a flat free surface's do or more (s >= 0.8: the rest
 * lattice's top layer has 0.81), none where they fill half of it or less (s <= 1/2: a particle
 * standing above the surface, a splash), linear between. grad(phi) is the fluid's flux as a
 * continuum; moved by it whole, a particle lifted above its neighbours kept what the flux lifted
 * it by, the fine iterations (which only push particles apart) never pulled it back, and a
 * resting surface turned rough: a block at rest 8 to 16 layers deep, its column tops 1.2 to 1.8
 * cm apart, 0.24 to 0.82 cm with this part (2r = 2 cm; test_rest_flat). All of the move only at
 * rest density (s >= 1) calmed a tank between box shapes too (21 particles heaped, 4), but
 * the surface's own layer, moved by part of the flux, then left the fluid below compressed and
 * a shape's hydrostatic force read 10 % high (docs/PERFORMANCE.md, "A free surface moves by its
 * fill"). */
static float ml_fill(float s)
{
    return clamp((s - 0.5f) / (0.8f - 0.5f), 0.0f, 1.0f);
}

/* Moves each fluid particle by grad(phi) at its place d (ml_face_gradient), kept in the box. The
 * move is at most max_move (what holds a resting column) plus, against the particle's own move
 * this substep (x* - x, from x in pos), up to reach_dx x its cell's compression (the finest grid's
 * rhs) more: an impact's compression goes at once, but only by stopping particles, never by
 * speeding one up, and only where a cell has volume to lose (a falling column's top has none).
 * Capping the whole move at PBF_MAX_CORRECTION r, as the fine iterations are, left test_physics'
 * fine column at 2.16 % density error at impact (1.69 % without, bound 2). A particle takes the
 * part ml_fill of its density (density: as the last density pass left it) gives of that move.
 * A shape-matched body's particle (pbf_body_of(phase) < matched), which the gather counts as
 * fluid of no strain, moves by the same pressure: the PBF move of a pressure gradient is
 * dt^2 grad(p) V / m, so a particle of the fluid's volume and relative inverse mass
 * w = m_fluid / m (inv_mass) moves w times the fluid's, within delta's limit for a solid
 * (PBF_MAX_CORRECTION r, w times that where w > 1), and shape matching turns the moves into the
 * body's (a body does not splash: the fluid's limits, which keep a surface calm, held a landing
 * ball back less). Left where it was, a body had only the fine iterations' push against a
 * correction that drained the fluid beneath it: with 2 iterations a cube of half the water's
 * density sank to the floor, and a ball landing at cfl 1 crushed the pool's top layer, whose
 * neighbour lists overflowed 15 times as often (docs/PERFORMANCE.md, "Bodies move by the
 * correction's pressure").
 * Static particles stay, and so do a cloth's, rope's or inflatable's: a shell's move would be the
 * fluid's inside it, not the pressure across it. */
__kernel void ml_correct(pbf_params p, uint n, __global float4 *pred, __global const float4 *pos,
                         uint bodies, __global const uint *phase, __global const float *phi,
                         __global const float *rhs, __global const uint *flag, float inv_dx,
                         uint nx, uint ny, uint nz, float max_move, float reach_dx,
                         float surface, float4 gravity, __global const float *density,
                         uint matched, __global const float *inv_mass)
{
    const uint4 dims = ml_dims(nx, ny, nz);
    uint i = get_global_id(0);
    if (i >= n)
        return;
    bool body = bodies && pbf_is_solid(phase[i]);
    if (body && pbf_body_of(phase[i]) >= matched)
        return;
    float4 x = pred[i];
    uint4 c = ml_cell(p, x, inv_dx, dims);
    uint k = ml_index(c, dims);
    float4 lo = (float4)(p->box_min[0], p->box_min[1], p->box_min[2], 0.0f);
    float4 t = (x - lo) * inv_dx - convert_float4(c);
    float4 d = (float4)(
        ml_face_gradient(phi, flag, k, 1u, c.x, dims.x, t.x, inv_dx, surface, gravity.x),
        ml_face_gradient(phi, flag, k, dims.x, c.y, dims.y, t.y, inv_dx, surface, gravity.y),
        ml_face_gradient(phi, flag, k, dims.x * dims.y, c.z, dims.z, t.z, inv_dx, surface,
                         gravity.z),
        0.0f);
    if (body) {
        float w = inv_mass[i]; /* the relative inverse mass */
        d = pbf_limit(w * d, PBF_MAX_CORRECTION * p->radius * fmax(w, 1.0f));
    } else {
        float cap = reach_dx * rhs[k], len = length(d.xyz), extra = 0.0f;
        if (cap > 0.0f && len > 0.0f) /* x is read only where the cell has volume to lose */
            extra = clamp(-dot(d.xyz, (x - pos[i]).xyz) / len, 0.0f, cap);
        d = pbf_limit(d, max_move + extra) * ml_fill(density[i] * p->inv_rest_density);
    }
    pred[i] = (float4)(clamp(x + d, pbf_box_min(p), pbf_box_max(p)).xyz, x.w);
}

/* The finest grid's flags where there are collision shapes (colliders.h), from the gathered
 * particle counts and touch words before ml_setup zeroes them (read only: a cell's flag depends on
 * its neighbours' counts, never on flags being written): fluid where a particle is; an empty cell
 * beside a fluid cell is solid where that cell's fluid touches a shape on its side (ML_TOUCH_BITS:
 * the correction holds the fluid there as at a wall), else air; an empty cell with no fluid beside
 * it is solid where its centre lies inside a primitive (the hulls' planes and the SDFs' nodes),
 * which the coarse grids read, else air. A solid cell is ML_SOLID + the index of the shape that
 * closes it, whose force the pressure on its faces adds to: away from the fluid the first that
 * holds its centre; beside it the primitive nearest its centre within two cells, else the first
 * mesh whose bounds reach that near (a mesh has no distance here: taken first, mesh-container's
 * tank took the ramp's push, 155 N of its 316). What the fluid touches decides beside
 * the fluid, not where a shape lies: an empty cell above a cut wall's column, its centre inside
 * the wall, closed the column's free surface, and the solve drove the column's flux into the
 * fluid beside it, which heaped (25 particles of 800 in a tank of box shapes at 0.30 m); a thin
 * floor's nearer face may be the one below; and a mesh, which has no inside, needed its
 * triangles to cross the segment between the two cells' centres, which missed a floor above the
 * fluid cell's centre (docs/PERFORMANCE.md, "The fluid's touch closes a cell"). A shape's pose is
 * the substep's end, where its contacts hold x*. */
__kernel void ml_solids(pbf_params p, __global const uint *counts, __global const uint *touch,
                        __global uint *flag, uint nx, uint ny, uint nz, float dx,
                        __global const pbfcl_collider_shape *shapes, __global const float4 *planes,
                        uint count)
{
    const uint4 dims = ml_dims(nx, ny, nz);
    uint c = get_global_id(0);
    if (c >= dims.w)
        return;
    flag[c] = counts[c] > 0u ? ML_FLUID : ML_AIR;
    if (counts[c] > 0u)
        return;
    uint x = c % dims.x, y = (c / dims.x) % dims.y, z = c / (dims.x * dims.y);
    uint ix[3] = {x, y, z}, size[3] = {dims.x, dims.y, dims.z};
    uint step[3] = {1u, dims.x, dims.x * dims.y};
    bool beside = false, touched = false; /* beside fluid; touched by it on this side */
    for (uint a = 0u; a < 3u; a++) {
        if (ix[a] > 0u && counts[c - step[a]] > 0u) { /* this cell is on its +a side */
            beside = true;
            touched = touched || ml_touch_side(touch[c - step[a]], 2u * a + 1u) > 0u;
        }
        if (ix[a] + 1u < size[a] && counts[c + step[a]] > 0u) {
            beside = true;
            touched = touched || ml_touch_side(touch[c + step[a]], 2u * a) > 0u;
        }
    }
    if (beside && !touched)
        return;
    float3 lo = (float3)(p->box_min[0], p->box_min[1], p->box_min[2]);
    float3 at = lo + ((float3)((float)x, (float)y, (float)z) + 0.5f) * dx;
    float reach = touched ? 2.0f * dx : 0.0f, nearest = INFINITY;
    uint primitive = ML_AIR, mesh = ML_AIR; /* touched: the nearest primitive, the first mesh */
    for (uint s = 0u; s < count; s++) {
        __global const pbfcl_collider_shape *sh = shapes + s;
        float3 b_lo = col_load4(sh->bounds_min).xyz, b_hi = col_load4(sh->bounds_max).xyz;
        if (any(at < b_lo - reach) || any(at > b_hi + reach))
            continue;
        if (sh->type == PBFCL_COLLIDER_MESH) {
            mesh = touched && mesh == ML_AIR ? ML_SOLID + s : mesh;
            continue;
        }
        float3 n, x_local = col_unrotate(col_load4(sh->rotation), at - col_load4(sh->position).xyz);
        float d = col_primitive_distance(sh, planes, x_local, &n);
        if (!touched && d < 0.0f) {
            flag[c] = ML_SOLID + s;
            return;
        }
        if (touched && d < reach && d < nearest) {
            nearest = d;
            primitive = ML_SOLID + s;
        }
    }
    if (touched) /* none within two cells: the first shape takes the push */
        flag[c] = primitive != ML_AIR ? primitive : (mesh != ML_AIR ? mesh : ML_SOLID);
}

/* The push of the correction's pressure on each collision shape, for its force
 * (colliders_force adds pressure to its contacts' and zeroes it): x* moved by grad(phi) is a
 * pressure -rho0 phi / dt^2 (the PBF position correction of a pressure p is -dt^2 grad(p) /
 * rho0), which the solid cells' faces hold instead of the contacts; as the contacts' sums of
 * m dx it is rho0 phi dx^2 n on each face between a fluid cell and a cell of shape s, n into
 * the shape (phi of the fluid cell: the face carries no flux). Work-group g of shape s =
 * get_global_id(1) sums the cells g, g + G, ... (strided by the work-items) into
 * pressure[s * G + g] (+=: a substep's corrections add); scale: rho0 dx^2; share: a split
 * simulation's share of each cell (its particles here / all; NULL: 1), so that the devices'
 * forces add to the shape's. Work-group size a power of two; sum: one float4 per work-item. */
__kernel void ml_shape_push(__global const float *phi, __global const uint *flag, uint nx,
                            uint ny, uint nz, float scale, __global const float *share,
                            __global float4 *pressure, __local float4 *sum)
{
    const uint4 dims = ml_dims(nx, ny, nz);
    uint l = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    uint solid = ML_SOLID + (uint)get_global_id(1);
    uint step[3] = {1u, dims.x, dims.x * dims.y};
    float3 acc = (float3)(0.0f);
    for (uint c = get_global_id(0); c < dims.w; c += (uint)get_global_size(0)) {
        if (flag[c] != ML_FLUID)
            continue;
        uint at[3] = {c % dims.x, (c / dims.x) % dims.y, c / (dims.x * dims.y)};
        uint size[3] = {dims.x, dims.y, dims.z};
        float w = phi[c] * (share ? share[c] : 1.0f), f[3] = {0.0f, 0.0f, 0.0f};
        for (uint a = 0u; a < 3u; a++) {
            if (at[a] > 0u && flag[c - step[a]] == solid)
                f[a] -= w;
            if (at[a] + 1u < size[a] && flag[c + step[a]] == solid)
                f[a] += w;
        }
        acc += (float3)(f[0], f[1], f[2]);
    }
    sum[l] = (float4)(acc * scale, 0.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint span = get_local_size(0) / 2u; span > 0u; span /= 2u) {
        if (l < span)
            sum[l] += sum[l + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0u)
        pressure[(solid - ML_SOLID) * groups + g] += sum[0];
}

/* ml_compression: the fluid's compression at the last density pass (density, as lambda left
 * it), for the choice of a substep's corrections (host/core/pbf/multilevel.c): work-group g sums
 * over its work-items' particles (i = its global id, then steps of the global size) the fluid's
 * max(rho_i / rho0 - 1, 0) and counts them, into part[2g] and part[2g + 1]. With solids, only
 * the particles of the fluid phase. The local size is a power of two (sum: one float2 each). */
__kernel void ml_compression(uint n, float inv_rest_density, __global const float *density,
                             uint solids, __global const uint *phase, __global float *part,
                             __local float2 *sum)
{
    uint l = get_local_id(0);
    float2 acc = (float2)(0.0f);
    for (uint i = (uint)get_global_id(0); i < n; i += (uint)get_global_size(0)) {
        if (solids != 0u && pbf_is_solid(phase[i]))
            continue;
        acc += (float2)(fmax(density[i] * inv_rest_density - 1.0f, 0.0f), 1.0f);
    }
    sum[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint span = get_local_size(0) / 2u; span > 0u; span /= 2u) {
        if (l < span)
            sum[l] += sum[l + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0u)
        vstore2(sum[0], get_group_id(0), part);
}
