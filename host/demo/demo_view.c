/* The scene's part of a frame's view (demo_view.h): viewport, particles, box, colour scale
 * and shadow map. */
#include "demo_view.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

void pbfcl_demo_view_scene(pbfcl_demo_view *v, const pbfcl_scene_params *scene,
                           pbfcl_demo_color color, int width, int height, size_t count,
                           const pbfcl_demo_shadow *shadow)
{
    memset(v, 0, sizeof *v);
    v->width = width;
    v->height = height;
    v->particle_radius = scene->particle_radius;
    v->count = count;
    memcpy(v->box_min, scene->domain_min, sizeof v->box_min);
    memcpy(v->box_max, scene->domain_max, sizeof v->box_max);
    v->color = color;
    float box_height = scene->domain_max[1] - scene->domain_min[1];
    float g = fabsf(scene->gravity[1]) > 0.0f ? fabsf(scene->gravity[1]) : 9.81f;
    bool speed = color == PBFCL_DEMO_COLOR_SPEED;
    v->range[0] = speed ? 0.0f : 0.9f * scene->rest_density;
    v->range[1] = speed ? sqrtf(2.0f * g * box_height) : 1.1f * scene->rest_density;
    v->shadow_tex = shadow->enabled ? shadow->depth_tex : 0;
    float light_view[16], light_proj[16];
    pbfcl_demo_shadow_matrices(v->box_min, v->box_max, light_view, light_proj, v->light);
    v->shadow_soft = 1.5f * v->particle_radius * 0.5f * light_proj[0]; /* 1.5 r in map uv */
}
