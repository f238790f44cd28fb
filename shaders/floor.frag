// The floor: a grey checkerboard that fades into the background towards its edges, darkened
// and tinted where the particles' shadow map says the sun's light passed through the fluid.
#version 330 core
in vec3 v_world;
uniform float u_cell;   // checker size, m
uniform vec3 u_center;  // floor centre
uniform float u_extent; // half-size of the floor, m
uniform mat4 u_light;   // world to shadow-map coordinates (0..1)
uniform sampler2DShadow u_shadow;
uniform float u_shadow_soft; // radius of the shadow's softening, shadow-map uv
uniform bool u_shadowed; // false: no shadow map
out vec4 frag_color;

// The fraction of the sun the particles hide at a world position: 4 taps of the hardware's
// 2x2 comparison filter, 1.5 texels apart, soften the edge.
float shadow_at(vec3 world)
{
    vec4 s = u_light * vec4(world, 1.0);
    if (!u_shadowed || any(lessThan(s.xy, vec2(0.0))) || any(greaterThan(s.xy, vec2(1.0))))
        return 0.0;
    // 8 taps on a ring of u_shadow_soft (about a particle across): a lone particle's
    // shadow fades into a faint spot, a body of fluid's stays whole
    float lit = 0.0;
    for (int i = 0; i < 8; i++) {
        float a = float(i) * 0.785398;
        vec2 o = u_shadow_soft * vec2(cos(a), sin(a));
        lit += texture(u_shadow, vec3(s.xy + o, s.z - 0.002));
    }
    return 1.0 - 0.125 * lit;
}

void main()
{
    vec2 c = floor(v_world.xz / u_cell);
    float checker = mod(c.x + c.y, 2.0);
    vec3 color = mix(vec3(0.30), vec3(0.36), checker);
    // light that passed through water lost more red than blue (Beer-Lambert, as the fluid's
    // absorption): the shadow is tinted, not grey
    color *= vec3(1.0) - shadow_at(v_world) * vec3(0.45, 0.3, 0.15);
    float d = length(v_world.xz - u_center.xz) / u_extent;
    float fade = clamp((1.0 - d) * 2.5, 0.0, 1.0);
    frag_color = vec4(mix(vec3(0.17, 0.17, 0.18), color, fade), 1.0);
}
