// Particles as point sprites sized to cover a sphere of radius u_radius; the colour is
// picked here from speed (position.w) or density on the scale u_ramp, a body particle's
// (phase > 0) from its body's colour, and an obstacle's (phase -1, static) is green; a
// particle drawn in a cloth's mesh or a rope's tube (phase -2, host/demo/demo_mesh.h) is not
// drawn here.
#version 330 core
layout(location = 0) in vec4 a_position; // x, y, z (m), w = speed (m/s)
layout(location = 1) in float a_density; // kg/m^3 (used in density mode only)
layout(location = 2) in float a_phase;   // 0 = fluid, b + 1 = body b, -1 = an obstacle's,
                                         // -2 = part of a mesh
                                         // (constant 0 without bodies and obstacles)
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_radius;      // m
uniform float u_point_scale; // viewport height (pixels) * u_proj[1][1]
uniform int u_color_mode;    // 0 = speed, 1 = density
uniform vec2 u_range;        // values at the two ends of the colour scale
uniform vec3 u_ramp[3];      // the colour scale's stops: low end, middle, high end
uniform int u_only_bodies;   // 1: draw the body and obstacle particles only (fluid mode's)
out vec3 v_center_eye;
out vec3 v_color;

// The colour at t in 0..1: linear between the scale's three stops (host/demo/demo_ramp.c)
vec3 ramp_color(float t)
{
    return t < 0.5 ? mix(u_ramp[0], u_ramp[1], t * 2.0) : mix(u_ramp[1], u_ramp[2], t * 2.0 - 1.0);
}

// Body colours, warm so that none is mistaken for water or a speed or density colour.
const vec3 body_colors[4] = vec3[4](vec3(0.95, 0.55, 0.10), vec3(0.90, 0.20, 0.15),
                                    vec3(0.95, 0.85, 0.20), vec3(0.75, 0.35, 0.85));
// The obstacles' colour: a moss green, far from water, the scales and the bodies' colours.
const vec3 obstacle_color = vec3(0.35, 0.75, 0.30);

void main()
{
    int body = int(a_phase + 0.5) - 1;
    bool obstacle = a_phase < -0.5;
    if ((u_only_bodies != 0 && body < 0 && !obstacle) || a_phase < -1.5) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // outside the clip volume: the point is dropped
        gl_PointSize = 1.0;
        v_center_eye = vec3(0.0);
        v_color = vec3(0.0);
        return;
    }
    vec4 eye = u_view * vec4(a_position.xyz, 1.0);
    v_center_eye = eye.xyz;
    gl_Position = u_proj * eye;
    gl_PointSize = max(1.0, u_point_scale * u_radius / max(-eye.z, 1e-4));
    float value = u_color_mode == 0 ? a_position.w : a_density;
    float t = clamp((value - u_range.x) / max(u_range.y - u_range.x, 1e-6), 0.0, 1.0);
    v_color = obstacle ? obstacle_color : body >= 0 ? body_colors[body % 4] : ramp_color(t);
}
