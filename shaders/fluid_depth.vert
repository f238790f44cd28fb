// Fluid depth and thickness passes: each particle a point sprite that covers its sphere of
// radius u_radius (u_point_scale = target height in pixels * u_proj[1][1]). Body particles
// (phase > 0), obstacles' (phase -1) and those of a cloth's mesh or a rope's tube (-2) are no
// part of the fluid: they are dropped here and drawn as spheres or meshes.
#version 330 core
layout(location = 0) in vec4 a_position; // x, y, z (m), w = speed (unused here)
layout(location = 2) in float a_phase;   // 0 = fluid, b + 1 = body b, -1 = an obstacle's
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_radius;      // m
uniform float u_point_scale; // pixels
out vec3 v_center_eye;
void main()
{
    if (abs(a_phase) > 0.5) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // outside the clip volume: the point is dropped
        gl_PointSize = 1.0;
        v_center_eye = vec3(0.0);
        return;
    }
    vec4 eye = u_view * vec4(a_position.xyz, 1.0);
    v_center_eye = eye.xyz;
    gl_Position = u_proj * eye;
    gl_PointSize = max(1.0, u_point_scale * u_radius / max(-eye.z, 1e-4));
}
