// Spray, foam and bubbles as soft point sprites: a_position.w is the type (0 spray, 1 foam,
// 2 bubble) plus the fraction of the particle's life left; u_types picks the types of this
// draw (bit t for type t), the others are dropped; u_lift moves each sprite that far towards
// the camera (m), so that foam lying in the surface is not hidden by the surface's depth.
#version 330 core
layout(location = 0) in vec4 a_position;
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_radius;      // sprite radius, m
uniform float u_point_scale; // viewport height (pixels) * u_proj[1][1]
uniform int u_types;
uniform float u_lift;
out vec4 v_color;

void main()
{
    int type = int(a_position.w);
    float life = fract(a_position.w);
    if (((u_types >> type) & 1) == 0) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // outside the clip volume: dropped
        gl_PointSize = 1.0;
        v_color = vec4(0.0);
        return;
    }
    vec4 eye = u_view * vec4(a_position.xyz, 1.0);
    eye.xyz += normalize(-eye.xyz) * u_lift;
    gl_Position = u_proj * eye;
    float size = type == 2 ? 0.6 : (type == 1 ? 1.0 : 0.8);
    gl_PointSize = max(2.0, u_point_scale * u_radius * size / max(-eye.z, 1e-4));
    // spray bright white, foam white fading with its life, bubbles faint blue-white
    v_color = type == 0 ? vec4(1.0, 1.0, 1.0, 0.9)
            : type == 1 ? vec4(0.96, 0.98, 1.0, 0.85 * clamp(life * 2.0, 0.0, 1.0))
                        : vec4(0.80, 0.90, 1.0, 0.35);
}
