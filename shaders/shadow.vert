// Shadow map pass: each particle a point sprite of its sphere's size seen from the light,
// through the light's orthographic projection (so the sprite's size does not depend on its
// distance); the fragment shader is fluid_depth.frag's.
#version 330 core
layout(location = 0) in vec4 a_position; // x, y, z (m), w = speed (unused here)
uniform mat4 u_view;                     // the light's view
uniform mat4 u_proj;                     // the light's orthographic projection
uniform float u_point_scale;             // sprite diameter, pixels
out vec3 v_center_eye;
void main()
{
    vec4 eye = u_view * vec4(a_position.xyz, 1.0);
    v_center_eye = eye.xyz;
    gl_Position = u_proj * eye;
    gl_PointSize = max(1.0, u_point_scale);
}
