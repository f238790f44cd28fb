// Fluid depth pass: the eye-space distance (-z, m) of the nearest sphere surface; the depth
// test keeps the nearest, the clear value 0 marks pixels with no fluid.
#version 330 core
in vec3 v_center_eye;
uniform mat4 u_proj;
uniform float u_radius;
out float out_depth;
void main()
{
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p);
    if (r2 > 1.0)
        discard;
    vec3 pos = v_center_eye + vec3(p.x, -p.y, sqrt(1.0 - r2)) * u_radius;
    vec4 clip = u_proj * vec4(pos, 1.0);
    gl_FragDepth = 0.5 * (clip.z / clip.w) + 0.5;
    out_depth = -pos.z;
}
