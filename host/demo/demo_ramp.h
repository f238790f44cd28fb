/* The colour scales of the spheres mode, declared once: the particle shader gets their stops
 * as a uniform and the HUD's legend draws them with the same interpolation. No GL here. */
#ifndef PBFCL_DEMO_RAMP_H
#define PBFCL_DEMO_RAMP_H

#include "demo.h"

#include <stddef.h>

/* The three stops (value at the low end, middle and high end) of colour mode c, RGB 0..1. */
const float (*pbfcl_demo_ramp_stops(pbfcl_demo_color c))[3];

/* The colour at t in 0..1 (clamped) of mode c: linear between the stops, as particle.vert. */
void pbfcl_demo_ramp(pbfcl_demo_color c, float t, float rgb[3]);

/* The legend's caption and its three tick labels for the values range[0] .. range[1]:
 * "SPEED, M/S" with "0.0" "1.6" "3.1", or "DENSITY, KG/M3" with "900" "1000" "1100". */
void pbfcl_demo_ramp_labels(pbfcl_demo_color c, const float range[2], char *caption,
                            size_t caption_size, char ticks[3][16]);

#endif
