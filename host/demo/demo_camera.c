/* The orbit camera: spherical coordinates around a target, look-at and perspective
 * matrices, and the cursor ray used to push the fluid. */
#include "demo_camera.h"

#include <math.h>
#include <string.h>

#define PI_F 3.14159265f

static void cross(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(float v[3])
{
    float len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (len > 0.0f)
        for (int k = 0; k < 3; k++)
            v[k] /= len;
}

/* Unit vector from the target to the eye. */
static void back_dir(const pbfcl_demo_camera *c, float d[3])
{
    d[0] = cosf(c->pitch) * sinf(c->yaw);
    d[1] = sinf(c->pitch);
    d[2] = cosf(c->pitch) * cosf(c->yaw);
}

/* tan of half the vertical field of view for a viewport of this aspect: fovy, widened in
 * portrait viewports so that the horizontal view is never narrower than fovy. */
static float half_tan(const pbfcl_demo_camera *c, float aspect)
{
    float t = tanf(0.5f * c->fovy);
    return aspect > 0.0f && aspect < 1.0f ? t / aspect : t;
}

void pbfcl_demo_camera_fit(pbfcl_demo_camera *c, const float lo[3], const float hi[3])
{
    float diag2 = 0.0f;
    for (int k = 0; k < 3; k++) {
        c->target[k] = 0.5f * (lo[k] + hi[k]);
        diag2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    }
    c->scene_size = sqrtf(diag2) > 0.0f ? sqrtf(diag2) : 1.0f;
    c->target[1] = lo[1] + 0.4f * (hi[1] - lo[1]);
    c->yaw = 0.45f;
    c->pitch = 0.38f;
    c->fovy = 45.0f * PI_F / 180.0f;
    c->distance = 0.5f * c->scene_size / sinf(0.5f * c->fovy) * 0.95f;
}

void pbfcl_demo_camera_orbit(pbfcl_demo_camera *c, float dx, float dy)
{
    c->yaw -= dx * 0.008f;
    c->pitch += dy * 0.008f;
    const float limit = 0.49f * PI_F;
    c->pitch = c->pitch > limit ? limit : c->pitch < -limit ? -limit : c->pitch;
}

void pbfcl_demo_camera_zoom(pbfcl_demo_camera *c, float steps)
{
    c->distance *= powf(0.9f, steps);
    float lo = 0.05f * c->scene_size, hi = 20.0f * c->scene_size;
    c->distance = c->distance < lo ? lo : c->distance > hi ? hi : c->distance;
}

void pbfcl_demo_camera_basis(const pbfcl_demo_camera *c, float right[3], float up[3])
{
    float back[3], world_up[3] = {0.0f, 1.0f, 0.0f};
    back_dir(c, back);
    cross(world_up, back, right);
    normalize(right);
    cross(back, right, up);
    normalize(up);
}

void pbfcl_demo_camera_pan(pbfcl_demo_camera *c, float dx, float dy, int w, int h)
{
    float right[3], up[3];
    pbfcl_demo_camera_basis(c, right, up);
    float aspect = h > 0 ? (float)w / (float)h : 1.0f;
    float per_pixel = 2.0f * c->distance * half_tan(c, aspect) / (float)(h > 0 ? h : 1);
    for (int k = 0; k < 3; k++)
        c->target[k] += (-dx * right[k] + dy * up[k]) * per_pixel;
}

void pbfcl_demo_camera_eye(const pbfcl_demo_camera *c, float eye[3])
{
    float back[3];
    back_dir(c, back);
    for (int k = 0; k < 3; k++)
        eye[k] = c->target[k] + c->distance * back[k];
}

void pbfcl_demo_view_matrix(const float eye[3], const float right[3], const float up[3],
                            const float back[3], float view[16])
{
    memset(view, 0, 16 * sizeof *view);
    for (int k = 0; k < 3; k++) {
        view[4 * k + 0] = right[k];
        view[4 * k + 1] = up[k];
        view[4 * k + 2] = back[k];
    }
    view[12] = -(right[0] * eye[0] + right[1] * eye[1] + right[2] * eye[2]);
    view[13] = -(up[0] * eye[0] + up[1] * eye[1] + up[2] * eye[2]);
    view[14] = -(back[0] * eye[0] + back[1] * eye[1] + back[2] * eye[2]);
    view[15] = 1.0f;
}

void pbfcl_demo_perspective(float tan_half_fovy, float aspect, float znear, float zfar,
                            float proj[16])
{
    float f = 1.0f / tan_half_fovy;
    memset(proj, 0, 16 * sizeof *proj);
    proj[0] = f / (aspect > 0.0f ? aspect : 1.0f);
    proj[5] = f;
    proj[10] = (zfar + znear) / (znear - zfar);
    proj[11] = -1.0f;
    proj[14] = 2.0f * zfar * znear / (znear - zfar);
}

void pbfcl_demo_camera_matrices(const pbfcl_demo_camera *c, float aspect, float view[16],
                                float proj[16])
{
    float back[3], right[3], up[3], eye[3];
    back_dir(c, back);
    pbfcl_demo_camera_basis(c, right, up);
    pbfcl_demo_camera_eye(c, eye);
    pbfcl_demo_view_matrix(eye, right, up, back, view);
    float znear = 0.01f * c->scene_size, zfar = c->distance + 4.0f * c->scene_size;
    pbfcl_demo_perspective(half_tan(c, aspect), aspect, znear, zfar, proj);
}

void pbfcl_demo_camera_ray(const pbfcl_demo_camera *c, float x, float y, int w, int h,
                           float origin[3], float dir[3])
{
    float back[3], right[3], up[3];
    back_dir(c, back);
    pbfcl_demo_camera_basis(c, right, up);
    pbfcl_demo_camera_eye(c, origin);
    float aspect = h > 0 ? (float)w / (float)h : 1.0f;
    float t = half_tan(c, aspect);
    float nx = (2.0f * x / (float)(w > 0 ? w : 1) - 1.0f) * t * aspect;
    float ny = (1.0f - 2.0f * y / (float)(h > 0 ? h : 1)) * t;
    for (int k = 0; k < 3; k++)
        dir[k] = -back[k] + nx * right[k] + ny * up[k];
    normalize(dir);
}

void pbfcl_demo_mat4_mul(float out[16], const float a[16], const float b[16])
{
    for (int col = 0; col < 4; col++)
        for (int row = 0; row < 4; row++) {
            float s = 0.0f;
            for (int k = 0; k < 4; k++)
                s += a[4 * k + row] * b[4 * col + k];
            out[4 * col + row] = s;
        }
}
