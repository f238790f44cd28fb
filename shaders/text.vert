// HUD text and panels: screen-space quads in pixels from the top-left corner.
#version 330 core
layout(location = 0) in vec4 a_pos_uv; // x, y (pixels), u, v (atlas)
layout(location = 1) in vec4 a_color;
uniform vec2 u_viewport; // viewport size in pixels
out vec2 v_uv;
out vec4 v_color;
void main()
{
    vec2 ndc = a_pos_uv.xy / u_viewport * 2.0 - 1.0;
    gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
    v_uv = a_pos_uv.zw;
    v_color = a_color;
}
