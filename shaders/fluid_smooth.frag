// Fluid depth smoothing: one direction of a separable bilateral filter that follows the local
// slope. The kernel covers a fixed world-space radius (so it shrinks with distance); a sample
// weighs by its distance along the line and by how far it lies off the plane through this
// pixel with the local depth slope, so a surface seen at a grazing angle is still smoothed
// while separate sheets of fluid do not blur into each other. Pixels with no fluid (depth 0)
// are left out.
#version 330 core
uniform sampler2D u_depth;    // eye-space distance, m; 0 = no fluid
uniform vec2 u_dir;           // (1, 0) or (0, 1)
uniform float u_world_radius; // filter radius, m
uniform float u_pixel_scale;  // pixels per metre at distance 1 (height / 2 * proj[1][1])
uniform float u_depth_sigma;  // off-plane distance at which a sample's weight is exp(-1/2), m
out float out_depth;

const int TAPS = 12;       // most samples each side of the centre
const float MAX_PX = 24.0; // widest radius in pixels (taps stay at most 2 pixels apart)

// The depth x pixels along u_dir, linearly interpolated so that samples spaced more than a
// pixel apart still see every pixel (a strided filter leaves a pixel-sized checker pattern).
// An interpolation with a pixel of no fluid or of another sheet lies far off the plane and
// gets no weight.
float depth_at(ivec2 c, float x)
{
    return texture(u_depth, (vec2(c) + 0.5 + u_dir * x) / vec2(textureSize(u_depth, 0))).r;
}

// The depth slope along u_dir (m per pixel) from samples h pixels either side; a side that
// jumps to another sheet (or to no fluid) is left out.
float slope(ivec2 c, float d, float h)
{
    float da = depth_at(c, h), db = depth_at(c, -h);
    float jump = 6.0 * u_depth_sigma;
    bool a_ok = da > 0.0 && abs(da - d) < jump, b_ok = db > 0.0 && abs(d - db) < jump;
    if (a_ok && b_ok)
        return (da - db) / (2.0 * h);
    if (a_ok)
        return (da - d) / h;
    return b_ok ? (d - db) / h : 0.0;
}

void main()
{
    ivec2 c = ivec2(gl_FragCoord.xy);
    float d = texelFetch(u_depth, c, 0).r;
    if (d <= 0.0) {
        out_depth = 0.0;
        return;
    }
    float radius = clamp(u_world_radius * u_pixel_scale / d, 1.0, MAX_PX);
    int taps = min(TAPS, int(ceil(radius)));
    float step_px = radius / float(taps);
    // exp2 weights: the spatial sigma is radius / 2
    float k_space = -2.0 * 1.442695 / (radius * radius);
    float g = slope(c, d, 0.5 * radius);
    float k_depth = -0.5 * 1.442695 / (u_depth_sigma * u_depth_sigma);
    float sum = 0.0, weight = 0.0;
    for (int i = -taps; i <= taps; i++) {
        float x = float(i) * step_px;
        float s = depth_at(c, x);
        float off = s - g * x - d;
        float w = s > 0.0 ? exp2(x * x * k_space + off * off * k_depth) : 0.0;
        sum += (s - g * x) * w;
        weight += w;
    }
    // smoothing flattens bumps of about a particle radius; a larger move is a fit gone wrong
    // across a fold, and would show as a streak
    out_depth = clamp(sum / weight, d - u_depth_sigma, d + u_depth_sigma);
}
