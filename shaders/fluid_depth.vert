// Fluid depth and thickness passes: each particle a point sprite that covers its sphere of
// radius u_radius (u_point_scale = target height in pixels * u_proj[1][1]).
#version 330 core
layout(location = 0) in vec4 a_position; // x, y, z (m), w = speed (unused here)
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_radius;      // m
uniform float u_point_scale; // pixels
out vec3 v_center_eye;
void main()
{
    vec4 eye = u_view * vec4(a_position.xyz, 1.0);
    v_center_eye = eye.xyz;
    gl_Position = u_proj * eye;
    gl_PointSize = max(1.0, u_point_scale * u_radius / max(-eye.z, 1e-4));
}
