// Fluid thickness pass (additively blended, half resolution): each particle adds a Gaussian
// splat that holds its sphere's volume, (4/3) pi r^3, over a sprite of twice its radius, so
// the sum is a smooth estimate of the fluid's thickness (m) along each line of sight.
#version 330 core
in vec3 v_center_eye;
uniform float u_radius; // the sprite's radius: twice the particle's, m
out float out_thickness;
void main()
{
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p); // (distance / sprite radius)^2
    if (r2 > 1.0)
        discard;
    // sigma = 0.8 particle radii = 0.4 sprite radii; peak 1.04 particle radii
    out_thickness = 0.52 * u_radius * exp(-3.125 * r2);
}
