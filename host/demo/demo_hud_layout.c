/* The HUD's status panel as text: its lines, built from what the HUD shows and elided to a
 * fixed width, and the panel's scale and extent in pixels. No GL here. */
#include "demo_hud_layout.h"
#include "demo_font.h"

#include <stdio.h>
#include <string.h>

void pbfcl_demo_hud_elide(char *out, size_t size, const char *text, size_t columns)
{
    if (size == 0)
        return;
    size_t len = strlen(text), room = size - 1;
    if (columns > room)
        columns = room;
    if (len <= columns || columns <= 3) {
        size_t n = len < columns ? len : columns;
        memcpy(out, text, n);
        out[n] = '\0';
        return;
    }
    size_t head = (columns - 3 + 1) / 2, tail = columns - 3 - head;
    memcpy(out, text, head);
    memcpy(out + head, "...", 3);
    memcpy(out + head + 3, text + len - tail, tail);
    out[columns] = '\0';
}

/* Appends text as the panel's next line, elided to the panel's width. */
static void add_line(pbfcl_demo_hud_text *t, const char *text, bool accent)
{
    if (!text || t->count >= PBFCL_DEMO_HUD_LINES)
        return;
    pbfcl_demo_hud_elide(t->line[t->count], sizeof t->line[t->count], text, PBFCL_DEMO_HUD_COLUMNS);
    t->accent[t->count++] = accent;
}

/* The first lines: the scene with its states, the frame and step times. */
static void add_title_and_times(pbfcl_demo_hud_text *t, const pbfcl_demo_hud *h)
{
    char line[512], rec[32] = "", fps[32];
    if (h->recording >= 0)
        snprintf(rec, sizeof rec, "  [REC %ld]", h->recording);
    snprintf(line, sizeof line, "PBFCL  %s%s%s%s", h->scene ? h->scene : "",
             h->paused ? "  [PAUSED]" : "", h->tilted ? "  [TILTED]" : "", rec);
    add_line(t, line, true);
    snprintf(fps, sizeof fps, h->fps > 0.0 ? "%.1f" : "--", h->fps);
    snprintf(line, sizeof line, "FPS %s   SIM %.2f MS/STEP   RENDER %.2f MS", fps, h->sim_ms,
             h->render_ms);
    add_line(t, line, false);
}

void pbfcl_demo_hud_layout(const pbfcl_demo_hud *h, pbfcl_demo_hud_text *t)
{
    char line[512];
    memset(t, 0, sizeof *t);
    add_title_and_times(t, h);
    add_line(t, h->passes, false);
    add_line(t, h->passes2, false);
    snprintf(line, sizeof line, "PARTICLES %zu   SUBSTEPS %d   %s", h->particles, h->substeps,
             h->diffuse ? h->diffuse : "");
    add_line(t, line, false);
    snprintf(line, sizeof line, "SOLVER %s  %s", h->method ? h->method : "",
             h->settings ? h->settings : "");
    add_line(t, line, false);
    add_line(t, h->gravity, false);
    snprintf(line, sizeof line, "DEVICE %s", h->device ? h->device : "");
    add_line(t, line, false);
    if (h->passes) /* the colour applies to the spheres only */
        snprintf(line, sizeof line, "POSITIONS %s   DRAW %s, %s", h->path, h->render, h->smoothing);
    else
        snprintf(line, sizeof line, "POSITIONS %s   DRAW %s   COLOUR %s", h->path, h->render,
                 h->color);
    add_line(t, line, false);
    add_line(t, "H: HELP", false);
    t->status_count = t->count;
    add_line(t, h->message, true);
}

/* The panels' font scale: font pixels twice the size of screen points. */
static float largest_font_scale(float scale)
{
    return 2.0f * scale;
}

float pbfcl_demo_hud_font_scale(const pbfcl_demo_hud_text *t, int w, float scale)
{
    size_t longest = 0;
    for (int i = 0; i < t->status_count; i++)
        if (strlen(t->line[i]) > longest)
            longest = strlen(t->line[i]);
    float s = largest_font_scale(scale);
    float needed = (float)(longest + 4) * PBFCL_FONT_CELL_W * s;
    return needed > (float)w && scale >= 1.0f ? scale : s; /* a window too narrow: smaller */
}

float pbfcl_demo_hud_margin(float scale)
{
    return 8.0f * scale;
}

float pbfcl_demo_hud_padding(float font_scale)
{
    return 4.0f * font_scale;
}

float pbfcl_demo_hud_right_bound(float scale)
{
    float s = largest_font_scale(scale);
    return pbfcl_demo_hud_margin(scale) + PBFCL_DEMO_HUD_COLUMNS * PBFCL_FONT_CELL_W * s +
           2.0f * pbfcl_demo_hud_padding(s);
}
