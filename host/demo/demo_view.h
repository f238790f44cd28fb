/* What a frame of a scene shows apart from the camera: the viewport, the particles, the box,
 * the colour scale and the shadow map, filled from the solver's scene parameters. Shared by
 * the demo's window and the headless renderer (demo_offscreen.c). */
#ifndef PBFCL_DEMO_VIEW_H
#define PBFCL_DEMO_VIEW_H

#include "demo_renderer.h"
#include "demo_shadow.h"
#include "pbfcl.h"

#include <stddef.h>

/* Fills v (zeroed first; the view and projection matrices are left to the caller) for a
 * width x height frame of count particles of a scene with these parameters: speed coloured
 * from 0 to sqrt(2 g H) m/s (H the box's height), density from 0.9 to 1.1 times the rest
 * density, and the shadow map of shadow where it is enabled. */
void pbfcl_demo_view_scene(pbfcl_demo_view *v, const pbfcl_scene_params *scene,
                           pbfcl_demo_color color, int width, int height, size_t count,
                           const pbfcl_demo_shadow *shadow);

#endif
