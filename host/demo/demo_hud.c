/* The HUD: a translucent panel of status lines in the top-left corner (their text and width:
 * demo_hud_layout.c) and, on H, a centred panel listing the controls. */
#include "demo_hud.h"
#include "demo_input.h"
#include "demo_ramp.h"

#include <string.h>

static const float panel_rgba[4] = {0.0f, 0.0f, 0.0f, 0.55f};
static const float text_rgba[4] = {0.92f, 0.92f, 0.92f, 1.0f};
static const float accent_rgba[4] = {1.0f, 0.80f, 0.35f, 1.0f};

static size_t longest_line(const char *const *lines, int n)
{
    size_t longest = 0;
    for (int i = 0; i < n; i++)
        if (lines[i] && strlen(lines[i]) > longest)
            longest = strlen(lines[i]);
    return longest;
}

/* Draws lines (NULL entries are left blank) in a panel with its top-left at (x, y). */
static void panel(pbfcl_demo_text *t, float x, float y, float scale, const char *const *lines,
                  int n, const float *const *colors)
{
    size_t longest = longest_line(lines, n);
    float pad = pbfcl_demo_hud_padding(scale), lh = pbfcl_demo_text_line_height(scale);
    float w = (float)longest * pbfcl_demo_text_advance(scale) + 2.0f * pad;
    pbfcl_demo_text_rect(t, x, y, w, (float)n * lh + 2.0f * pad, panel_rgba);
    for (int i = 0; i < n; i++)
        if (lines[i])
            pbfcl_demo_text_string(t, x + pad, y + pad + (float)i * lh, scale, lines[i], colors[i]);
}

static void draw_help(pbfcl_demo_text *t, int w, int h, float scale)
{
    const char *lines[32];
    const float *colors[32];
    int n = 0;
    lines[n] = "CONTROLS", colors[n++] = accent_rgba;
    for (int i = 0; pbfcl_demo_help_lines[i] && n < 32; i++)
        lines[n] = pbfcl_demo_help_lines[i], colors[n++] = text_rgba;
    float width = (float)longest_line(lines, n) * pbfcl_demo_text_advance(scale);
    float height = (float)n * pbfcl_demo_text_line_height(scale);
    float x = 0.5f * ((float)w - width), y = 0.5f * ((float)h - height);
    panel(t, x > 0 ? x : 0, y > 0 ? y : 0, scale, lines, n, colors);
}

/* The colour scale in the bottom-left corner: a bar of the ramp, its caption with the unit
 * above and the values at its ends and middle below. */
static void draw_legend(pbfcl_demo_text *t, const pbfcl_demo_hud *h, int height, float s)
{
    enum { STEPS = 32 };
    char caption[32], ticks[3][16];
    pbfcl_demo_ramp_labels(h->color_mode, h->range, caption, sizeof caption, ticks);
    float adv = pbfcl_demo_text_advance(s), lh = pbfcl_demo_text_line_height(s);
    float bar_w = 20.0f * adv, bar_h = 0.8f * lh, pad = 2.0f * s;
    float x = 4.0f * s, y = (float)height - 3.0f * lh - 4.0f * pad - 4.0f * s;
    pbfcl_demo_text_rect(t, x, y, bar_w + 4.0f * adv + 2.0f * pad, 3.0f * lh + 2.0f * pad,
                         panel_rgba);
    x += pad + 2.0f * adv, y += pad;
    pbfcl_demo_text_string(t, x - 2.0f * adv, y, s, caption, text_rgba);
    for (int i = 0; i < STEPS; i++) {
        float rgba[4] = {0, 0, 0, 1};
        pbfcl_demo_ramp(h->color_mode, ((float)i + 0.5f) / STEPS, rgba);
        pbfcl_demo_text_rect(t, x + bar_w * (float)i / STEPS, y + lh, bar_w / STEPS + 0.5f, bar_h,
                             rgba);
    }
    for (int i = 0; i < 3; i++) {
        float w = (float)strlen(ticks[i]) * adv;
        pbfcl_demo_text_string(t, x + 0.5f * bar_w * (float)i - 0.5f * w, y + 2.0f * lh, s,
                               ticks[i], text_rgba);
    }
}

void pbfcl_demo_hud_draw(pbfcl_demo_text *t, const pbfcl_demo_hud *h, int w, int height,
                         float scale)
{
    pbfcl_demo_hud_text text;
    pbfcl_demo_hud_layout(h, &text);
    const char *lines[PBFCL_DEMO_HUD_LINES];
    const float *colors[PBFCL_DEMO_HUD_LINES];
    for (int i = 0; i < text.count; i++) {
        lines[i] = text.line[i];
        colors[i] = text.accent[i] ? accent_rgba : text_rgba;
    }
    float s = pbfcl_demo_hud_font_scale(&text, w, scale);
    float corner = pbfcl_demo_hud_margin(scale);
    panel(t, corner, corner, s, lines, text.count, colors);
    if (h->legend)
        draw_legend(t, h, height, s);
    if (h->help)
        draw_help(t, w, height, s);
    pbfcl_demo_text_flush(t, w, height);
}
