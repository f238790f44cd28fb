/* The spheres' colour scales (speed: dark to light blue; density: blue below rest, grey at
 * rest, red above) and their legend's labels. */
#include "demo_ramp.h"

#include <stdio.h>

static const float speed_stops[3][3] = {
    {0.05f, 0.30f, 0.85f}, /* at rest */
    {0.15f, 0.65f, 0.95f},
    {0.75f, 0.92f, 1.00f}, /* fastest of the scale */
};
static const float density_stops[3][3] = {
    {0.10f, 0.35f, 0.90f}, /* 10 % below rest */
    {0.85f, 0.88f, 0.92f}, /* rest density */
    {0.90f, 0.30f, 0.12f}, /* 10 % above */
};

const float (*pbfcl_demo_ramp_stops(pbfcl_demo_color c))[3]
{
    return c == PBFCL_DEMO_COLOR_DENSITY ? density_stops : speed_stops;
}

void pbfcl_demo_ramp(pbfcl_demo_color c, float t, float rgb[3])
{
    const float(*s)[3] = pbfcl_demo_ramp_stops(c);
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    int k = t < 0.5f ? 0 : 1;
    float u = t < 0.5f ? 2.0f * t : 2.0f * t - 1.0f;
    for (int i = 0; i < 3; i++)
        rgb[i] = s[k][i] + (s[k + 1][i] - s[k][i]) * u;
}

void pbfcl_demo_ramp_labels(pbfcl_demo_color c, const float range[2], char *caption,
                            size_t caption_size, char ticks[3][16])
{
    bool density = c == PBFCL_DEMO_COLOR_DENSITY;
    snprintf(caption, caption_size, density ? "DENSITY, KG/M3" : "SPEED, M/S");
    const char *format = density ? "%.0f" : "%.1f";
    float values[3] = {range[0], 0.5f * (range[0] + range[1]), range[1]};
    for (int i = 0; i < 3; i++)
        snprintf(ticks[i], sizeof ticks[i], format, (double)values[i]);
}
