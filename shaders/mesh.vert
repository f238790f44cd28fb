// Triangle meshes with a normal per vertex: cloth and ropes (world positions, u_model the
// identity) and collision shapes (their own frame, u_model their pose). Lit in eye space as the
// particle spheres are (particle.frag), so a mesh and a sphere beside it look alike.
#version 330 core
layout(location = 0) in vec3 a_position; // m
layout(location = 1) in vec3 a_normal;   // unit length, or zero where none is known
uniform mat4 u_model;
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_offset; // m along the normal: a cloth is drawn as two sheets a particle apart
out vec3 v_eye;
out vec3 v_normal_eye;
void main()
{
    vec4 eye = u_view * (u_model * vec4(a_position + u_offset * a_normal, 1.0));
    v_eye = eye.xyz;
    v_normal_eye = mat3(u_view) * (mat3(u_model) * a_normal); // rotations only: no inverse needed
    gl_Position = u_proj * eye;
}
