// HUD text and panels: the font atlas's red channel is the coverage.
#version 330 core
in vec2 v_uv;
in vec4 v_color;
uniform sampler2D u_atlas;
out vec4 frag_color;
void main()
{
    float ink = texture(u_atlas, v_uv).r;
    if (ink < 0.5)
        discard;
    frag_color = v_color;
}
