// Sphere impostor: each point sprite pixel finds its point on the sphere, is lit there,
// and writes that point's depth so that spheres intersect correctly.
#version 330 core
in vec3 v_center_eye;
in vec3 v_color;
uniform mat4 u_proj;
uniform float u_radius;
out vec4 frag_color;

void main()
{
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    p.y = -p.y;
    float r2 = dot(p, p);
    if (r2 > 1.0)
        discard;
    vec3 n = vec3(p, sqrt(1.0 - r2));
    vec3 pos = v_center_eye + n * u_radius;
    vec4 clip = u_proj * vec4(pos, 1.0);
    float ndc_z = clip.z / clip.w;
    gl_FragDepth = 0.5 * (gl_DepthRange.diff * ndc_z + gl_DepthRange.near + gl_DepthRange.far);

    vec3 light = normalize(vec3(0.4, 0.8, 0.5));
    vec3 view_dir = normalize(-pos);
    vec3 half_dir = normalize(light + view_dir);
    float diffuse = max(dot(n, light), 0.0);
    float specular = pow(max(dot(n, half_dir), 0.0), 48.0);
    vec3 color = v_color * (0.35 + 0.65 * diffuse) + vec3(0.35) * specular;
    frag_color = vec4(color, 1.0);
}
