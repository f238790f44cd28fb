/* diffuse: spray, foam and bubbles after Ihmsen, Akinci, Akinci and Teschner, "Unified Spray,
 * Foam and Bubbles for Particle-Based Fluids" (CGI 2012), one update per frame on the fluid's
 * state after its step. diffuse_normals and diffuse_potentials read the fluid's neighbour
 * lists; diffuse_advect finds a diffuse particle's fluid neighbours through the step's cell
 * ranges; diffuse_compact keeps the survivors and emits the new particles at the places an
 * exclusive scan of their flags gives. The diffuse particles never act on the fluid.
 * Weights: W(d) = 1 - d / h (Ihmsen's, for the potentials), K(d) = (1 - d^2 / h^2)^3 (the
 * fluid velocity at a diffuse particle). */

#ifndef WG_SIZE
#error "WG_SIZE (work-group size of the diffuse kernels) must be defined with -DWG_SIZE=..."
#endif

/* The fluid normal n_i = sum_j x_ij / |x_ij| W(|x_ij|) over the listed neighbours within h
 * (x_ij = x_i - x_j: it points out of the fluid), written normalised with w = |n_i| / sum W,
 * the share that says whether i is at the surface (0 with no neighbours). */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
diffuse_normals(__constant pbfcl_diffuse_params *dp,    /* in: constants */
                __global const float4 *restrict pos,    /* in: fluid positions */
                __global const uint *restrict nb_count, /* in: neighbours listed */
                __global const uint *restrict nb,       /* in: list [k * n + i] */
                __global float4 *restrict normal,       /* out: n / |n|, w = surface share */
                const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float3 xi = pos[i].xyz;
    const float h = dp->h;
    float3 sum = (float3)(0.0f);
    float weight = 0.0f;
    const uint c = nb_count[i];
    for (uint k = 0; k < c; k++) {
        const float3 xij = xi - pos[nb[k * n + i]].xyz;
        const float d = length(xij);
        if (d <= 0.0f || d >= h)
            continue;
        const float w = 1.0f - d / h;
        sum += xij * (w / d);
        weight += w;
    }
    const float len = length(sum);
    normal[i] = len > 0.0f ? (float4)(sum / len, len / weight) : (float4)(0.0f);
}

/* Ihmsen's potentials of fluid particle i and the number of diffuse particles it emits:
 * trapped air v_diff = sum_j |v_ij| (1 - v_ij/|v_ij| . x_ij/|x_ij|) W; wave crest (at the
 * surface, moving along the normal) kappa = sum_j (1 - n_i . n_j) W over the neighbours behind
 * i (x_ji . n_i < 0); kinetic energy E = |v_i|^2 / 2 per unit mass. n_d = Phi(E) (k_ta
 * Phi(v_diff) + k_wc Phi(kappa)) dt, emitted as floor(n_d + xi) with xi the hash's number 0
 * (the expected count is n_d), at most PBFCL_DIFFUSE_MAX_EMIT. potential = (v_diff, kappa, E, n_d);
 * flags[offset + i] = the count. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
diffuse_potentials(__constant pbfcl_diffuse_params *dp,    /* in: constants */
                   __global const float4 *restrict pos,    /* in: fluid positions */
                   __global const float4 *restrict vel,    /* in: fluid velocities */
                   __global const uint *restrict nb_count, /* in: neighbours listed */
                   __global const uint *restrict nb,       /* in: list [k * n + i] */
                   __global const float4 *restrict normal, /* in: diffuse_normals' */
                   __global float4 *restrict potential,    /* out: v_diff, kappa, E, n_d */
                   __global uint *restrict flags,          /* out: [offset + i] = count */
                   const uint n, const uint offset)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float3 xi = pos[i].xyz, vi = vel[i].xyz;
    const float4 ni = normal[i];
    const float h = dp->h;
    const float speed = length(vi);
    const bool crest = ni.w >= PBFCL_DIFFUSE_SURFACE && speed > 0.0f &&
                       dot(vi / speed, ni.xyz) >= PBFCL_DIFFUSE_CREST_ALIGN;
    float v_diff = 0.0f, kappa = 0.0f;
    const uint c = nb_count[i];
    for (uint k = 0; k < c; k++) {
        const uint j = nb[k * n + i];
        const float3 xij = xi - pos[j].xyz;
        const float d = length(xij);
        if (d <= 0.0f || d >= h)
            continue;
        const float w = 1.0f - d / h;
        const float3 vij = vi - vel[j].xyz;
        const float vl = length(vij);
        if (vl > 0.0f)
            v_diff += vl * (1.0f - dot(vij / vl, xij / d)) * w;
        if (crest && dot(-xij, ni.xyz) < 0.0f)
            kappa += (1.0f - dot(ni.xyz, normal[j].xyz)) * w;
    }
    const float e = 0.5f * speed * speed;
    const float nd = pbfcl_diffuse_phi(e, dp->ke_min, dp->ke_max) *
                     (dp->k_ta * pbfcl_diffuse_phi(v_diff, dp->ta_min, dp->ta_max) +
                      dp->k_wc * pbfcl_diffuse_phi(kappa, dp->wc_min, dp->wc_max)) *
                     dp->dt;
    vstore4((float4)(v_diff, kappa, e, nd), i, (__global float *)potential);
    const float count = floor(nd + pbfcl_diffuse_random(dp->frame, i, 0u));
    flags[offset + i] = count > 0.0f ? (uint)fmin(count, (float)PBFCL_DIFFUSE_MAX_EMIT) : 0u;
}

/* The type of a diffuse particle with fluid_neighbours fluid particles within h. */
static inline uint diffuse_type(__constant pbfcl_diffuse_params *dp, uint fluid_neighbours)
{
    if (fluid_neighbours < dp->spray_below)
        return PBFCL_DIFFUSE_SPRAY;
    return fluid_neighbours > dp->bubble_above ? PBFCL_DIFFUSE_BUBBLE : PBFCL_DIFFUSE_FOAM;
}

/* One diffuse particle over the frame: its fluid neighbours within h (the 27 cells around its
 * cell, through the step's cell ranges) give its type and the fluid velocity
 * v_f = sum_j v_j K / sum_j K; spray falls (v += g dt), foam moves with v_f and loses dt of its
 * life, a bubble rises and is dragged towards v_f (v = (v + dt (-k_b g + k_d v_f)) /
 * (1 + k_d dt), implicit in the drag: stable for any k_d dt, and its terminal speed is
 * k_b |g| / k_d). Then x += v dt. It survives (keep = 1) while its life is above 0 and it is
 * inside the box. Written in place: pos.w = type + life / lifetime (below 1), vel.w = life. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
diffuse_advect(__constant pbfcl_diffuse_params *dp,      /* in: constants */
               __constant pbfcl_grid_params *gp,         /* in: the fluid's grid */
               __global const uint *restrict cell_start, /* in: first fluid index per cell */
               __global const uint *restrict cell_end,   /* in: one past the last */
               __global const float4 *restrict fpos,     /* in: fluid positions (sorted) */
               __global const float4 *restrict fvel,     /* in: fluid velocities */
               __global float4 *restrict dpos,           /* in/out: x, type + life share */
               __global float4 *restrict dvel,           /* in/out: v, life */
               __global uint *restrict keep,             /* out: 1 if it survives */
               const uint count)
{
    const uint i = get_global_id(0);
    if (i >= count)
        return;
    float4 p = dpos[i], v = dvel[i];
    const float h = dp->h, h2 = h * h;
    const int top = (1 << gp->grid_bits) - 1;
    /* its cell, clamped into the grid (as the hash clamps the fluid's), axis by axis */
    int cell[3];
    for (int a = 0; a < 3; a++) {
        const float x = a == 0 ? p.x : (a == 1 ? p.y : p.z);
        const int c = (int)floor((x - gp->origin[a]) * gp->inv_cell_size);
        cell[a] = c < 0 ? 0 : (c > top ? top : c);
    }
    uint neighbours = 0;
    float3 vsum = (float3)(0.0f);
    float ksum = 0.0f;
    for (int z = cell[2] - 1; z <= cell[2] + 1; z++)
        for (int y = cell[1] - 1; y <= cell[1] + 1; y++)
            for (int x = cell[0] - 1; x <= cell[0] + 1; x++) {
                if (x < 0 || y < 0 || z < 0 || x > top || y > top || z > top)
                    continue;
                const uint code = pbfcl_morton_code((uint)x, (uint)y, (uint)z);
                const uint end = cell_end[code];
                for (uint j = cell_start[code]; j < end; j++) {
                    const float3 e = fpos[j].xyz - p.xyz;
                    const float d2 = dot(e, e);
                    if (d2 >= h2)
                        continue;
                    const float q = 1.0f - d2 / h2;
                    neighbours++;
                    vsum += fvel[j].xyz * (q * q * q);
                    ksum += q * q * q;
                }
            }
    const float3 vf = ksum > 0.0f ? vsum / ksum : (float3)(0.0f);
    const float3 g = (float3)(dp->gravity[0], dp->gravity[1], dp->gravity[2]);
    const float dt = dp->dt;
    const uint type = diffuse_type(dp, neighbours);
    float life = v.w;
    float3 u = v.xyz;
    if (type == PBFCL_DIFFUSE_SPRAY) {
        u += g * dt;
    } else if (type == PBFCL_DIFFUSE_FOAM) {
        u = vf;
        life -= dt;
    } else {
        u = (u + dt * (-dp->buoyancy * g + dp->drag * vf)) / (1.0f + dp->drag * dt);
    }
    const float3 x = p.xyz + u * dt;
    const float3 lo = (float3)(dp->box_min[0], dp->box_min[1], dp->box_min[2]);
    const float3 hi = (float3)(dp->box_max[0], dp->box_max[1], dp->box_max[2]);
    const bool inside = all(x >= lo) && all(x <= hi);
    const float share = clamp(life / dp->lifetime, 0.0f, 0.999f);
    dpos[i] = (float4)(x, (float)type + share);
    dvel[i] = (float4)(u, life);
    keep[i] = (life > 0.0f && inside) ? 1u : 0u;
}

/* Diffuse particle k of fluid particle j (sorted index j, update frame), emitted as Ihmsen
 * places it: in the cylinder of radius r around the segment from x_j along its velocity v_j
 * over dt, at radius r sqrt(X_r) and angle 2 pi X_theta about the axis and X_h of its length,
 * with the velocity v_j plus the radial offset per second (Ihmsen's eq. for v_d); its type from
 * the fluid particle's neighbours and itself, a full life. The X are the hash's numbers 1 + 3k, 2 +
 * 3k, 3 + 3k. */
static inline void diffuse_emit_one(__constant pbfcl_diffuse_params *dp, float3 xj, float3 vj,
                                    uint neighbours, uint j, uint k, float4 *p, float4 *v)
{
    const float xr = pbfcl_diffuse_random(dp->frame, j, 1u + 3u * k);
    const float xt = pbfcl_diffuse_random(dp->frame, j, 2u + 3u * k);
    const float xh = pbfcl_diffuse_random(dp->frame, j, 3u + 3u * k);
    const float speed = length(vj);
    const float3 axis = speed > 0.0f ? vj / speed : (float3)(0.0f, 1.0f, 0.0f);
    /* e1: perpendicular to the axis, from the coordinate axis least aligned with it */
    const float3 a =
        fabs(axis.x) < 0.57735f
            ? (float3)(1.0f, 0.0f, 0.0f)
            : (fabs(axis.y) < 0.57735f ? (float3)(0.0f, 1.0f, 0.0f) : (float3)(0.0f, 0.0f, 1.0f));
    const float3 e1 = normalize(cross(axis, a));
    const float3 e2 = cross(axis, e1);
    const float r = dp->radius * sqrt(xr), theta = 2.0f * M_PI_F * xt;
    const float3 radial = r * cos(theta) * e1 + r * sin(theta) * e2;
    const float3 x = xj + radial + xh * speed * dp->dt * axis;
    const uint type = diffuse_type(dp, neighbours);
    *p = (float4)(x, (float)type + 0.999f);
    *v = (float4)(radial + vj, dp->lifetime);
}

/* Work-item i < count moves survivor i to offset[i] (below count, so within the capacity);
 * work-item count + j emits fluid particle j's flags[count + j] particles at offset[count +
 * j] on, those that fit below the capacity (the rest are dropped: the host counts them from the
 * total). The last work-item writes the total of the flags into total[0]. */
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
diffuse_compact(__constant pbfcl_diffuse_params *dp,    /* in: constants */
                __global const float4 *restrict dpos,   /* in: advected diffuse particles */
                __global const float4 *restrict dvel,   /* in */
                __global const uint *restrict flags,    /* in: keep, then emit counts */
                __global const uint *restrict offset,   /* in: exclusive scan of flags */
                __global const float4 *restrict fpos,   /* in: fluid positions */
                __global const float4 *restrict fvel,   /* in: fluid velocities */
                __global const uint *restrict nb_count, /* in: fluid neighbours listed */
                __global float4 *restrict out_pos,      /* out: the next diffuse set */
                __global float4 *restrict out_vel,      /* out */
                __global uint *restrict total,          /* out: [0] sum of the flags */
                const uint count, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= count + n)
        return;
    const uint f = flags[i], at = offset[i];
    if (i == count + n - 1)
        total[0] = at + f;
    if (i < count) {
        if (f) {
            out_pos[at] = dpos[i];
            out_vel[at] = dvel[i];
        }
        return;
    }
    const uint j = i - count;
    const float3 xj = fpos[j].xyz, vj = fvel[j].xyz;
    /* (a loop bound, not capacity - at: a saturating subtraction Oclgrind does not know) */
    for (uint k = 0; k < f && at + k < dp->capacity; k++) {
        float4 p, v;
        diffuse_emit_one(dp, xj, vj, nb_count[j] + 1u, j, k, &p, &v);
        out_pos[at + k] = p;
        out_vel[at + k] = v;
    }
}
