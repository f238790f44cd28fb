// Particles as point sprites sized to cover a sphere of radius u_radius; the colour is
// picked here from speed (position.w) or density.
#version 330 core
layout(location = 0) in vec4 a_position; // x, y, z (m), w = speed (m/s)
layout(location = 1) in float a_density; // kg/m^3 (used in density mode only)
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_radius;      // m
uniform float u_point_scale; // viewport height (pixels) * u_proj[1][1]
uniform int u_color_mode;    // 0 = speed, 1 = density
uniform vec2 u_range;        // values at the two ends of the colour scale
out vec3 v_center_eye;
out vec3 v_color;

vec3 speed_color(float t)
{
    vec3 slow = vec3(0.05, 0.30, 0.85);
    vec3 mid = vec3(0.15, 0.65, 0.95);
    vec3 fast = vec3(0.75, 0.92, 1.00);
    return t < 0.5 ? mix(slow, mid, t * 2.0) : mix(mid, fast, t * 2.0 - 1.0);
}

vec3 density_color(float t)
{
    vec3 low = vec3(0.10, 0.35, 0.90);
    vec3 rest = vec3(0.85, 0.88, 0.92);
    vec3 high = vec3(0.90, 0.30, 0.12);
    return t < 0.5 ? mix(low, rest, t * 2.0) : mix(rest, high, t * 2.0 - 1.0);
}

void main()
{
    vec4 eye = u_view * vec4(a_position.xyz, 1.0);
    v_center_eye = eye.xyz;
    gl_Position = u_proj * eye;
    gl_PointSize = max(1.0, u_point_scale * u_radius / max(-eye.z, 1e-4));
    float value = u_color_mode == 0 ? a_position.w : a_density;
    float t = clamp((value - u_range.x) / max(u_range.y - u_range.x, 1e-6), 0.0, 1.0);
    v_color = u_color_mode == 0 ? speed_color(t) : density_color(t);
}
