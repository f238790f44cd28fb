// Particles as point sprites sized to cover a sphere of radius u_radius; the colour is
// picked here from speed (position.w) or density on the scale u_ramp.
#version 330 core
layout(location = 0) in vec4 a_position; // x, y, z (m), w = speed (m/s)
layout(location = 1) in float a_density; // kg/m^3 (used in density mode only)
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_radius;      // m
uniform float u_point_scale; // viewport height (pixels) * u_proj[1][1]
uniform int u_color_mode;    // 0 = speed, 1 = density
uniform vec2 u_range;        // values at the two ends of the colour scale
uniform vec3 u_ramp[3];      // the colour scale's stops: low end, middle, high end
out vec3 v_center_eye;
out vec3 v_color;

// The colour at t in 0..1: linear between the scale's three stops (host/demo/demo_ramp.c)
vec3 ramp_color(float t)
{
    return t < 0.5 ? mix(u_ramp[0], u_ramp[1], t * 2.0) : mix(u_ramp[1], u_ramp[2], t * 2.0 - 1.0);
}

void main()
{
    vec4 eye = u_view * vec4(a_position.xyz, 1.0);
    v_center_eye = eye.xyz;
    gl_Position = u_proj * eye;
    gl_PointSize = max(1.0, u_point_scale * u_radius / max(-eye.z, 1e-4));
    float value = u_color_mode == 0 ? a_position.w : a_density;
    float t = clamp((value - u_range.x) / max(u_range.y - u_range.x, 1e-6), 0.0, 1.0);
    v_color = ramp_color(t);
}
