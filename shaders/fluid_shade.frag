// Fluid shading and composite: normals from the smoothed depth, Fresnel-weighted reflection of
// a procedural sky, refraction of the scene behind (offset by the normal) absorbed by the
// thickness (Beer-Lambert), a specular highlight; writes the surface's depth so the box and
// floor in front of the fluid hide it.
#version 330 core
in vec2 v_uv;
uniform sampler2D u_depth;     // smoothed eye-space distance, m; 0 = no fluid
uniform sampler2D u_thickness; // summed thickness, m (half resolution)
uniform sampler2D u_scene;     // the floor and box without fluid
uniform mat4 u_proj;
uniform mat4 u_view;
uniform vec3 u_absorb;    // absorption per metre of thickness, per channel
uniform float u_refract;  // refraction offset in uv per unit normal and metre of thickness
uniform float u_fold;     // a change of depth step larger than this (m) is a fold or an edge
uniform float u_edge;     // thickness (m) below which the fluid fades into what is behind it
uniform mat4 u_light;     // world to shadow-map coordinates (0..1)
uniform sampler2DShadow u_shadow;
uniform float u_shadow_soft; // radius of the shadow's softening, shadow-map uv
uniform bool u_shadowed;     // false: no shadow map
uniform float u_shadow_bias; // the surface's depth below the sphere tops, shadow-map units
uniform vec3 u_sun;          // towards the sun, world space
out vec4 frag_color;

const vec3 WATER = vec3(0.04, 0.33, 0.72); // colour the fluid scatters back
const vec3 LIGHT_EYE = vec3(0.4, 0.8, 0.5);     // diffuse light, as for the spheres
const vec3 GLINT_EYE = vec3(0.25, 0.8, -0.55);  // specular light: above and behind the fluid

vec3 eye_position(ivec2 px, float d)
{
    vec2 ndc = (vec2(px) + 0.5) / vec2(textureSize(u_depth, 0)) * 2.0 - 1.0;
    return vec3(ndc.x * d / u_proj[0][0], ndc.y * d / u_proj[1][1], -d);
}

// The surface's step per pixel: central where both neighbours lie on this sheet, else towards
// the neighbour whose depth is closer (one-sided at silhouettes and folds).
vec3 slope(ivec2 c, vec3 p, ivec2 step_px)
{
    ivec2 last = textureSize(u_depth, 0) - 1;
    ivec2 a = clamp(c + step_px, ivec2(0), last), b = clamp(c - step_px, ivec2(0), last);
    float da = texelFetch(u_depth, a, 0).r, db = texelFetch(u_depth, b, 0).r;
    vec3 fa = eye_position(a, da) - p, fb = p - eye_position(b, db);
    float bend = max(0.5 * (abs(fa.z) + abs(fb.z)), u_fold);
    if (da > 0.0 && db > 0.0 && abs(fa.z - fb.z) < bend)
        return 0.5 * (fa + fb);
    bool use_a = da > 0.0 && (db <= 0.0 || abs(fa.z) < abs(fb.z));
    return use_a ? fa : (db > 0.0 ? fb : vec3(0.0));
}

vec3 sky(vec3 dir)
{
    vec3 zenith = vec3(0.10, 0.32, 0.75), horizon = vec3(0.55, 0.70, 0.90);
    // the floor's mean tone: a darker ground showed the rims of droplets and of small bumps,
    // whose normals face down, as dark beads and dots
    vec3 ground = vec3(0.36, 0.37, 0.39);
    vec3 sun_dir = u_sun;
    float t = dir.y;
    vec3 c = t > 0.0 ? mix(horizon, zenith, pow(t, 0.5)) : mix(horizon, ground, min(1.0, -6.0 * t));
    return c + vec3(1.0, 0.95, 0.85) * pow(max(dot(dir, sun_dir), 0.0), 600.0) * 4.0;
}

// The fraction of the sun that particles nearer the sun hide at eye position p.
float shadow_at(vec3 p)
{
    if (!u_shadowed)
        return 0.0;
    vec3 world = transpose(mat3(u_view)) * (p - u_view[3].xyz);
    vec4 s = u_light * vec4(world, 1.0);
    // 8 taps on a ring of u_shadow_soft (about a particle across): a lone particle's
    // shadow fades into a faint spot, a body of fluid's stays whole
    float lit = 0.0;
    for (int i = 0; i < 8; i++) {
        float a = float(i) * 0.785398;
        vec2 o = u_shadow_soft * vec2(cos(a), sin(a));
        lit += texture(u_shadow, vec3(s.xy + o, s.z - u_shadow_bias));
    }
    return 1.0 - 0.125 * lit;
}

void main()
{
    ivec2 c = ivec2(gl_FragCoord.xy);
    float d = texelFetch(u_depth, c, 0).r;
    if (d <= 0.0)
        discard;
    vec3 p = eye_position(c, d);
    vec3 dx = slope(c, p, ivec2(1, 0)), dy = slope(c, p, ivec2(0, 1));
    vec3 n = normalize(cross(dx, dy));
    if (dot(dx, dx) == 0.0 || dot(dy, dy) == 0.0 || dot(n, n) != dot(n, n))
        n = vec3(0.0, 0.0, 1.0);
    vec3 v = normalize(-p);
    float nv = dot(n, v); // < 0 only through noise at grazing angles: tilt back to the edge
    if (nv < 0.05)
        n = normalize(n + (0.05 - nv) * v);

    float thickness = texture(u_thickness, v_uv).r;
    vec3 transmit = exp(-u_absorb * thickness);
    vec2 uv = v_uv - n.xy * u_refract * min(thickness, 0.25);
    vec3 behind = texture(u_scene, clamp(uv, vec2(0.0), vec2(1.0))).rgb;
    vec3 light = normalize(LIGHT_EYE);
    float diffuse = 0.45 + 0.55 * max(dot(n, light), 0.0);
    // in the particles' shadow the scattered light and the highlight dim
    float shade = 1.0 - 0.3 * shadow_at(p);
    vec3 body = behind * transmit + WATER * diffuse * shade * (1.0 - transmit);

    vec3 r_world = transpose(mat3(u_view)) * reflect(-v, n);
    float cos_v = max(dot(n, v), 0.0);
    float fresnel = 0.02 + 0.98 * pow(1.0 - cos_v, 5.0);
    vec3 color = mix(body, sky(r_world), fresnel);
    vec3 glint = normalize(normalize(GLINT_EYE) + v);
    color += vec3(0.6) * shade * pow(max(dot(n, glint), 0.0), 60.0);
    // a soft silhouette: the summed thickness falls smoothly to zero at the fluid's edge,
    // where the sphere outlines of the depth are ragged
    frag_color = vec4(color, smoothstep(0.0, u_edge, thickness));

    vec4 clip = u_proj * vec4(p, 1.0);
    gl_FragDepth = 0.5 * (clip.z / clip.w) + 0.5;
}
