/* The demo's orbit camera: yaw/pitch/distance around a target point, its view and
 * projection matrices (column-major, as OpenGL takes them) and rays through the cursor. */
#ifndef PBFCL_DEMO_CAMERA_H
#define PBFCL_DEMO_CAMERA_H

/* An orbit camera; angles in radians, lengths in metres. */
typedef struct pbfcl_demo_camera {
    float target[3];
    float yaw, pitch, distance;
    float fovy;       /* vertical field of view (widened in portrait viewports) */
    float scene_size; /* the diagonal of the framed box, for near/far and pan speed */
} pbfcl_demo_camera;

/* Frames the axis-aligned box lo..hi from a slightly raised three-quarter view. */
void pbfcl_demo_camera_fit(pbfcl_demo_camera *c, const float lo[3], const float hi[3]);

/* Orbits by dx, dy pixels of mouse motion. */
void pbfcl_demo_camera_orbit(pbfcl_demo_camera *c, float dx, float dy);

/* Zooms in (steps > 0) or out by wheel steps. */
void pbfcl_demo_camera_zoom(pbfcl_demo_camera *c, float steps);

/* Moves the target by dx, dy pixels in a w x h viewport (the scene follows the cursor). */
void pbfcl_demo_camera_pan(pbfcl_demo_camera *c, float dx, float dy, int w, int h);

/* The eye position. */
void pbfcl_demo_camera_eye(const pbfcl_demo_camera *c, float eye[3]);

/* The camera's right and up vectors (unit length, world space). */
void pbfcl_demo_camera_basis(const pbfcl_demo_camera *c, float right[3], float up[3]);

/* The view and projection matrices for a viewport of the given aspect (width / height). */
void pbfcl_demo_camera_matrices(const pbfcl_demo_camera *c, float aspect, float view[16],
                                float proj[16]);

/* The ray through a viewport point (x, y in pixels from the top-left of a w x h viewport):
 * origin at the eye, dir of unit length. */
void pbfcl_demo_camera_ray(const pbfcl_demo_camera *c, float x, float y, int w, int h,
                           float origin[3], float dir[3]);

/* The view matrix of an eye with the orthonormal basis right, up, back (back: from the target
 * towards the eye). */
void pbfcl_demo_view_matrix(const float eye[3], const float right[3], const float up[3],
                            const float back[3], float view[16]);

/* An OpenGL perspective projection: tan of half the vertical field of view, width / height,
 * and the near and far planes' distances. */
void pbfcl_demo_perspective(float tan_half_fovy, float aspect, float znear, float zfar,
                            float proj[16]);

/* out = a * b for column-major 4x4 matrices (out may not alias a or b). */
void pbfcl_demo_mat4_mul(float out[16], const float a[16], const float b[16]);

#endif
