/* The heads-up display: frame rate, step and render times, particle count, device, how
 * positions reach OpenGL, render mode and the fluid passes' times, state lines, and the help
 * overlay. What it shows and its status panel's layout: demo_hud_layout.h. */
#ifndef PBFCL_DEMO_HUD_H
#define PBFCL_DEMO_HUD_H

#include "demo_hud_layout.h"
#include "demo_text.h"

/* Queues and draws the HUD over a w x h pixel viewport; scale is pixels per screen point. */
void pbfcl_demo_hud_draw(pbfcl_demo_text *t, const pbfcl_demo_hud *h, int w, int height,
                         float scale);

#endif
