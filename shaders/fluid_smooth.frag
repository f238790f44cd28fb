// Fluid depth smoothing: one pass of a two-dimensional bilateral filter that follows the local
// slope. The kernel covers a fixed world-space radius (so it shrinks with distance); its taps
// lie on a Vogel spiral (golden-angle steps, uniform density over the disc), so it favours no
// direction: a separable filter's last pass smooths along its axis only and leaves streaks
// along it. A sample weighs by its distance from the pixel and by how far it lies off the
// plane through this pixel with the local depth slope, so a surface seen at a grazing angle is
// still smoothed while separate sheets of fluid do not blur into each other. Pixels with no
// fluid (depth 0) are left out; with u_fill_gap > 0, gaps between spheres are filled first.
#version 330 core
uniform sampler2D u_depth;    // eye-space distance, m; 0 = no fluid
uniform sampler2D u_thickness; // summed thickness, m (half resolution): 0 far from any sphere
uniform float u_rotation;     // rotation of the tap pattern, radians (differs between passes)
uniform float u_world_radius; // filter radius, m
uniform float u_pixel_scale;  // pixels per metre at distance 1 (height / 2 * proj[1][1])
uniform float u_depth_sigma;  // off-plane distance at which a sample's weight is exp(-1/2), m
uniform float u_fill_gap;     // widest gap between spheres to fill, m (0: no filling)
out float out_depth;

const int TAPS = 32;             // samples besides the centre
const float MAX_PX = 24.0;       // widest radius in pixels
const float GOLDEN = 2.39996323; // golden angle, radians

// The depth at a pixel offset, linearly interpolated; an interpolation with a pixel of no
// fluid or of another sheet lies far off the plane and gets no weight.
float depth_at(ivec2 c, vec2 o)
{
    return texture(u_depth, (vec2(c) + 0.5 + o) / vec2(textureSize(u_depth, 0))).r;
}

// The depth slope along dir (m per pixel) from samples h pixels either side; a side that
// jumps to another sheet (or to no fluid) is left out.
float slope(ivec2 c, float d, vec2 dir, float h)
{
    float da = depth_at(c, dir * h), db = depth_at(c, -dir * h);
    float jump = 6.0 * u_depth_sigma;
    bool a_ok = da > 0.0 && abs(da - d) < jump, b_ok = db > 0.0 && abs(d - db) < jump;
    if (a_ok && b_ok)
        return (da - db) / (2.0 * h);
    if (a_ok)
        return (da - d) / h;
    return b_ok ? (d - db) / h : 0.0;
}

// A pixel with no fluid, or one that sees a deeper sphere, between two pixels of a nearer
// sheet at most u_fill_gap apart along dir lies in a gap between neighbouring spheres (a layer
// of touching spheres leaves one at each corner, through which the layer below shows as a
// pit): it gets the depth interpolated across the gap; else its own depth d.
float fill_gap(ivec2 c, float d, ivec2 dir)
{
    // the widest gap in pixels at this pixel's depth (the sheet across the gap is nearer, by
    // little against the distance); for a pixel with no fluid, the search's limit
    int most = min(12, int(u_fill_gap * u_pixel_scale / max(d, 1e-3) / length(vec2(dir))));
    float nearer = d > 0.0 ? d - 0.25 * u_depth_sigma : 1e30;
    float da = 0.0, db = 0.0;
    int ia = 0, ib = 0;
    for (int i = 1; i <= most && (ia == 0 || ib == 0); i++) {
        float a = texelFetch(u_depth, c + i * dir, 0).r, b = texelFetch(u_depth, c - i * dir, 0).r;
        if (ia == 0 && a > 0.0 && a < nearer)
            da = a, ia = i;
        if (ib == 0 && b > 0.0 && b < nearer)
            db = b, ib = i;
    }
    if (ia == 0 || ib == 0 || abs(da - db) > 2.0 * u_depth_sigma)
        return d;
    float m = mix(db, da, float(ib) / float(ia + ib));
    return float(ia + ib - 1) * length(vec2(dir)) <= u_fill_gap * u_pixel_scale / m ? m : d;
}

void main()
{
    ivec2 c = ivec2(gl_FragCoord.xy);
    float d = texelFetch(u_depth, c, 0).r;
    const ivec2 DIRS[4] = ivec2[4](ivec2(1, 0), ivec2(0, 1), ivec2(1, 1), ivec2(1, -1));
    bool near_fluid = textureLod(u_thickness, (vec2(c) + 0.5) / vec2(textureSize(u_depth, 0)), 0.0).r > 0.0;
    for (int k = 0; k < 4 && u_fill_gap > 0.0 && near_fluid; k++) {
        float filled = fill_gap(c, d, DIRS[k]);
        if (filled != d) {
            d = filled;
            break;
        }
    }
    if (d <= 0.0) {
        out_depth = 0.0;
        return;
    }
    float radius = clamp(u_world_radius * u_pixel_scale / d, 1.0, MAX_PX);
    // exp2 weights: the spatial sigma is radius / 2
    float k_space = -2.0 * 1.442695 / (radius * radius);
    float k_depth = -0.5 * 1.442695 / (u_depth_sigma * u_depth_sigma);
    vec2 g = vec2(slope(c, d, vec2(1.0, 0.0), 0.5 * radius), slope(c, d, vec2(0.0, 1.0), 0.5 * radius));
    float sum = d, weight = 1.0;
    vec2 dir = vec2(cos(u_rotation), sin(u_rotation));
    mat2 turn = mat2(cos(GOLDEN), sin(GOLDEN), -sin(GOLDEN), cos(GOLDEN));
    for (int i = 0; i < TAPS; i++) {
        vec2 o = dir * (radius * sqrt((float(i) + 0.5) / float(TAPS)));
        dir = turn * dir;
        float s = depth_at(c, o);
        float along = dot(g, o);
        float off = s - along - d;
        float w = s > 0.0 ? exp2(dot(o, o) * k_space + off * off * k_depth) : 0.0;
        sum += (s - along) * w;
        weight += w;
    }
    // smoothing flattens bumps of about a particle radius; a larger move is a fit gone wrong
    // across a fold
    out_depth = clamp(sum / weight, d - u_depth_sigma, d + u_depth_sigma);
}
