// One triangle that covers the viewport, for the screen-space passes; v_uv runs 0..1.
#version 330 core
out vec2 v_uv;
void main()
{
    vec2 p = vec2(float((gl_VertexID & 1) << 2), float((gl_VertexID & 2) << 1)) - 1.0;
    v_uv = 0.5 * p + 0.5;
    gl_Position = vec4(p, 0.0, 1.0);
}
