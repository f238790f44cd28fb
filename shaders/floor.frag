// The floor: a grey checkerboard that fades into the background towards its edges.
#version 330 core
in vec3 v_world;
uniform float u_cell;   // checker size, m
uniform vec3 u_center;  // floor centre
uniform float u_extent; // half-size of the floor, m
out vec4 frag_color;
void main()
{
    vec2 c = floor(v_world.xz / u_cell);
    float checker = mod(c.x + c.y, 2.0);
    vec3 color = mix(vec3(0.30), vec3(0.36), checker);
    float d = length(v_world.xz - u_center.xz) / u_extent;
    float fade = clamp((1.0 - d) * 2.5, 0.0, 1.0);
    frag_color = vec4(mix(vec3(0.17, 0.17, 0.18), color, fade), 1.0);
}
