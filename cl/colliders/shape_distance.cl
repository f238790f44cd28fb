/* The signed distance of a point from a collision shape of colliders.h (its local frame): the
 * contacts' narrow phase (colliders.cl) and the multilevel grid's solid cells (multilevel.cl)
 * read the shapes through it. Needs colliders.h before it in the program. */

/* v rotated by the unit quaternion q (x, y, z, w). */
static float3 col_rotate(float4 q, float3 v)
{
    float3 u = q.xyz;
    return v + 2.0f * cross(u, cross(u, v) + q.w * v);
}

/* v rotated by q's inverse. */
static float3 col_unrotate(float4 q, float3 v)
{
    return col_rotate((float4)(-q.xyz, q.w), v);
}

static float4 col_load4(__global const float *f)
{
    return vload4(0, f);
}

/* The signed distance field of shape s at local point x: the trilinear sample of its nodes'
 * (gradient, distance) in the cell holding x, so the distance and the normal *n (the sampled
 * gradient, normalised) are continuous. Outside the grid the sample at the nearest point xc of
 * the grid continues along the vector from its surface point: x - xc + d(xc) g(xc). */
static float col_sdf_distance(__global const pbfcl_collider_shape *s, __global const float4 *nodes,
                              float3 x, float3 *n)
{
    float4 go = col_load4(s->grid_origin);
    int3 dims = (int3)((int)s->grid_dims[0], (int)s->grid_dims[1], (int)s->grid_dims[2]);
    float3 u = (x - go.xyz) / go.w, uc = clamp(u, (float3)(0.0f), convert_float3(dims - 1));
    int3 c = min(convert_int3(floor(uc)), dims - 2);
    float3 t = uc - convert_float3(c);
    __global const float4 *p = nodes + s->first + (c.z * dims.y + c.y) * dims.x + c.x;
    int sy = dims.x, sz = dims.x * dims.y;
    float4 v = mix(mix(mix(p[0], p[1], t.x), mix(p[sy], p[sy + 1], t.x), t.y),
                   mix(mix(p[sz], p[sz + 1], t.x), mix(p[sz + sy], p[sz + sy + 1], t.x), t.y), t.z);
    float3 out = (u - uc) * go.w, g = v.xyz;
    float gl = length(g);
    g = gl > 0.0f ? g / gl : (float3)(0.0f, 1.0f, 0.0f);
    if (all(out == 0.0f)) {
        *n = g;
        return v.w;
    }
    float3 from = out + fmax(v.w, 0.0f) * g;
    float len = length(from);
    *n = len > 0.0f ? from / len : g;
    return len;
}

/* The signed distance of local point x from a primitive shape (sphere, capsule, box, convex
 * hull, signed distance field) and its outward normal n (the distance's gradient; for a hull
 * the plane of the largest distance, exact on its faces and inside). planes: a hull's planes
 * and an SDF's nodes. */
static float col_primitive_distance(__global const pbfcl_collider_shape *s,
                                    __global const float4 *planes, float3 x, float3 *n)
{
    if (s->type == PBFCL_COLLIDER_SDF)
        return col_sdf_distance(s, planes, x, n);
    float4 size = col_load4(s->size);
    if (s->type == PBFCL_COLLIDER_SPHERE || s->type == PBFCL_COLLIDER_CAPSULE) {
        float3 axis = x;
        if (s->type == PBFCL_COLLIDER_CAPSULE)
            axis.x -= clamp(x.x, -size.y, size.y);
        float len = length(axis);
        *n = len > 0.0f ? axis / len : (float3)(0.0f, 1.0f, 0.0f);
        return len - size.x;
    }
    if (s->type == PBFCL_COLLIDER_BOX) {
        float3 d = fabs(x) - size.xyz, sgn = copysign((float3)(1.0f), x);
        float3 out = fmax(d, (float3)(0.0f));
        float len = length(out);
        if (len > 0.0f) { /* outside: towards the nearest point */
            *n = sgn * out / len;
            return len;
        }
        float m = fmax(d.x, fmax(d.y, d.z)); /* inside: out through the nearest face */
        *n = d.x == m ? (float3)(sgn.x, 0.0f, 0.0f)
                      : (d.y == m ? (float3)(0.0f, sgn.y, 0.0f) : (float3)(0.0f, 0.0f, sgn.z));
        return m;
    }
    float best = -INFINITY; /* convex hull: the largest plane distance */
    *n = (float3)(0.0f, 1.0f, 0.0f);
    for (uint k = 0; k < s->count; k++) {
        float4 pl = planes[s->first + k];
        float d = dot(pl.xyz, x) + pl.w;
        if (d > best) {
            best = d;
            *n = pl.xyz;
        }
    }
    return best;
}
