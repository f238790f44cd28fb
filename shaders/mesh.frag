// Two-sided Blinn-Phong shading of a mesh: the back of a triangle (a cloth seen from below) is
// lit with its normal turned towards the viewer and takes u_back_color; the light is the
// particle spheres' (particle.frag).
#version 330 core
in vec3 v_eye;
in vec3 v_normal_eye;
uniform vec3 u_color;      // front faces (counter-clockwise on screen)
uniform vec3 u_back_color; // back faces
uniform float u_shine;     // specular strength
out vec4 frag_color;

void main()
{
    vec3 n = v_normal_eye;
    float len = length(n);
    // a vertex with no normal (a degenerate triangle): the face's own, from the derivatives
    n = len > 1e-6 ? n / len : normalize(cross(dFdx(v_eye), dFdy(v_eye)));
    if (!gl_FrontFacing)
        n = -n;
    vec3 view_dir = normalize(-v_eye);
    if (dot(n, view_dir) < 0.0) // interpolated normals of a fold may face away: light the side seen
        n = normalize(n - 1.01 * dot(n, view_dir) * view_dir);
    vec3 light = normalize(vec3(0.4, 0.8, 0.5));
    vec3 half_dir = normalize(light + view_dir);
    float diffuse = max(dot(n, light), 0.0);
    float specular = pow(max(dot(n, half_dir), 0.0), 48.0) * u_shine;
    vec3 base = gl_FrontFacing ? u_color : u_back_color;
    frag_color = vec4(base * (0.35 + 0.65 * diffuse) + vec3(0.35) * specular, 1.0);
}
