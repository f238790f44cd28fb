// A soft round sprite: alpha falls from the centre to the rim.
#version 330 core
in vec4 v_color;
out vec4 frag_color;

void main()
{
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p);
    if (r2 > 1.0)
        discard;
    frag_color = vec4(v_color.rgb, v_color.a * (1.0 - r2) * (1.0 - r2));
}
