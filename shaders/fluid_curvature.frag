// Fluid depth smoothing by screen-space curvature flow (van der Laan, Green & Sainz 2009):
// one explicit step of d -= dt * H (d is a positive distance, so the paper's z += dt * H),
// where H is the mean curvature of the surface that the depth map describes. dt is chosen per
// pixel so that the step's diffusion number stays below the explicit scheme's limit. Pixels with no fluid (depth 0) stay empty; at silhouettes the derivatives
// across the edge are taken as 0, so the outline does not shrink.
#version 330 core
uniform sampler2D u_depth; // eye-space distance, m; 0 = no fluid
uniform vec2 u_c;          // (2 / (width * proj[0][0]), 2 / (height * proj[1][1]))
uniform float u_dt_scale;  // dt = u_dt_scale * u_c.x * d (0.4: diffusion number 0.2)
uniform float u_max_step;  // the most one step may move the depth, m
out float out_depth;

float at(ivec2 p)
{
    return texelFetch(u_depth, clamp(p, ivec2(0), textureSize(u_depth, 0) - 1), 0).r;
}

void main()
{
    ivec2 c = ivec2(gl_FragCoord.xy);
    float z = at(c);
    if (z <= 0.0) {
        out_depth = 0.0;
        return;
    }
    float zr = at(c + ivec2(1, 0)), zl = at(c - ivec2(1, 0));
    float zt = at(c + ivec2(0, 1)), zb = at(c - ivec2(0, 1));
    zr = zr > 0.0 ? zr : z, zl = zl > 0.0 ? zl : z; // no slope across an edge
    zt = zt > 0.0 ? zt : z, zb = zb > 0.0 ? zb : z;
    float ztr = at(c + ivec2(1, 1)), ztl = at(c + ivec2(-1, 1));
    float zbr = at(c + ivec2(1, -1)), zbl = at(c + ivec2(-1, -1));
    ztr = ztr > 0.0 ? ztr : z, ztl = ztl > 0.0 ? ztl : z;
    zbr = zbr > 0.0 ? zbr : z, zbl = zbl > 0.0 ? zbl : z;

    float zx = 0.5 * (zr - zl), zy = 0.5 * (zt - zb);
    float zxx = zr - 2.0 * z + zl, zyy = zt - 2.0 * z + zb;
    float zxy = 0.25 * (ztr - ztl - zbr + zbl);
    float cx = u_c.x, cy = u_c.y;
    float d = cy * cy * zx * zx + cx * cx * zy * zy + cx * cx * cy * cy * z * z;
    float ddx = 2.0 * (cy * cy * zx * zxx + cx * cx * zy * zxy + cx * cx * cy * cy * z * zx);
    float ddy = 2.0 * (cy * cy * zx * zxy + cx * cx * zy * zyy + cx * cx * cy * cy * z * zy);
    float ex = 0.5 * zx * ddx - zxx * d;
    float ey = 0.5 * zy * ddy - zyy * d;
    float h = (cy * ex + cx * ey) / (2.0 * pow(d, 1.5));
    float dt = u_dt_scale * cx * z;
    out_depth = z - clamp(dt * h, -u_max_step, u_max_step);
}
