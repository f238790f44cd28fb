/* Picking and dragging (demo_pick.h). */
#include "demo_pick.h"

#include <math.h>

int pbfcl_demo_pick_sphere(const float *centres, const float *radii, int n, const float origin[3],
                           const float dir[3], float *t)
{
    int best = -1;
    float best_t = INFINITY;
    for (int i = 0; i < n; i++) {
        const float *c = centres + 3 * i;
        float oc[3] = {c[0] - origin[0], c[1] - origin[1], c[2] - origin[2]};
        float along = oc[0] * dir[0] + oc[1] * dir[1] + oc[2] * dir[2];
        float d2 = oc[0] * oc[0] + oc[1] * oc[1] + oc[2] * oc[2] - along * along;
        float r2 = radii[i] * radii[i];
        if (d2 > r2)
            continue;
        float enter = along - sqrtf(r2 - d2), leave = along + sqrtf(r2 - d2);
        if (leave < 0.0f)
            continue; /* behind the camera */
        enter = enter > 0.0f ? enter : 0.0f;
        if (enter < best_t) {
            best = i;
            best_t = enter;
        }
    }
    if (best >= 0)
        *t = best_t;
    return best;
}

void pbfcl_demo_drag_offset(const float right[3], const float up[3], float tan_half_fovy, int h,
                            float depth, float dx, float dy, float out[3])
{
    float per_point = 2.0f * depth * tan_half_fovy / (float)(h > 0 ? h : 1);
    for (int k = 0; k < 3; k++)
        out[k] = (right[k] * dx - up[k] * dy) * per_point;
}
