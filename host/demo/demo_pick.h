/* Picking and dragging in the demo's view, plain geometry with no GL: the shape whose bounding
 * sphere a ray through the cursor meets first, and the world offset of a drag on the screen at
 * a depth, so that the dragged shape follows the cursor. */
#ifndef PBFCL_DEMO_PICK_H
#define PBFCL_DEMO_PICK_H

/* The index of the first of n spheres (centres: xyz triples; radii) that the ray origin +
 * t dir (dir of unit length, t >= 0) meets, or -1 for none; *t the distance to where it enters
 * (0 from inside). */
int pbfcl_demo_pick_sphere(const float *centres, const float *radii, int n, const float origin[3],
                           const float dir[3], float *t);

/* The world offset of a drag of dx, dy screen points (right, down) seen at depth (m in front
 * of the camera) through a view of vertical field of view 2 atan(tan_half_fovy) and height h
 * points, with the camera's right and up vectors. */
void pbfcl_demo_drag_offset(const float right[3], const float up[3], float tan_half_fovy, int h,
                            float depth, float dx, float dy, float out[3]);

#endif
