/* The HUD's text renderer: the 5x7 font rasterised into a one-row texture atlas (plus one
 * solid cell for panels) and screen-space quads batched into one draw call. */
#include "demo_text.h"
#include "demo_font.h"
#include "demo_shader.h"

#include <stdlib.h>
#include <string.h>

#define CELL_W PBFCL_FONT_CELL_W
#define CELL_H PBFCL_FONT_CELL_H
#define SOLID_CELL PBFCL_FONT_GLYPHS
#define ATLAS_W (CELL_W * (PBFCL_FONT_GLYPHS + 1))
#define FLOATS_PER_VERTEX 8

static void build_atlas(GLuint texture)
{
    static unsigned char pixels[CELL_H * ATLAS_W];
    memset(pixels, 0, sizeof pixels);
    for (int g = 0; g < PBFCL_FONT_GLYPHS; g++)
        for (int y = 0; y < PBFCL_FONT_H; y++)
            for (int x = 0; x < PBFCL_FONT_W; x++)
                if (pbfcl_font_pixel(g, x, y))
                    pixels[y * ATLAS_W + g * CELL_W + x] = 255;
    for (int y = 0; y < CELL_H; y++)
        for (int x = 0; x < CELL_W; x++)
            pixels[y * ATLAS_W + SOLID_CELL * CELL_W + x] = 255;
    glBindTexture(GL_TEXTURE_2D, texture);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, ATLAS_W, CELL_H, 0, GL_RED, GL_UNSIGNED_BYTE, pixels);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

pbfcl_status pbfcl_demo_text_create(pbfcl_demo_text *t, const char *shader_dir)
{
    memset(t, 0, sizeof *t);
    PBFCL_TRY(pbfcl_demo_shader_program(shader_dir, "text.vert", "text.frag", &t->program));
    t->u_viewport = glGetUniformLocation(t->program, "u_viewport");
    t->u_atlas = glGetUniformLocation(t->program, "u_atlas");
    glGenTextures(1, &t->texture);
    build_atlas(t->texture);
    glGenVertexArrays(1, &t->vao);
    glGenBuffers(1, &t->vbo);
    glBindVertexArray(t->vao);
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo);
    GLsizei stride = FLOATS_PER_VERTEX * sizeof(float);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, stride, (void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, stride, (void *)(4 * sizeof(float)));
    glBindVertexArray(0);
    return PBFCL_OK;
}

void pbfcl_demo_text_destroy(pbfcl_demo_text *t)
{
    if (!t)
        return;
    if (t->vbo)
        glDeleteBuffers(1, &t->vbo);
    if (t->vao)
        glDeleteVertexArrays(1, &t->vao);
    if (t->texture)
        glDeleteTextures(1, &t->texture);
    if (t->program)
        glDeleteProgram(t->program);
    free(t->verts);
    memset(t, 0, sizeof *t);
}

float pbfcl_demo_text_advance(float scale)
{
    return CELL_W * scale;
}

float pbfcl_demo_text_line_height(float scale)
{
    return CELL_H * scale;
}

/* Queues a quad covering (x, y, w, h) pixels that samples atlas cell `cell`. */
static void quad(pbfcl_demo_text *t, float x, float y, float w, float h, int cell,
                 const float rgba[4])
{
    if (t->count + 6 > t->capacity) {
        size_t cap = t->capacity ? 2 * t->capacity : 6 * 1024;
        float *grown = realloc(t->verts, cap * FLOATS_PER_VERTEX * sizeof(float));
        if (!grown)
            return; /* out of memory: the HUD loses a glyph, nothing else */
        t->verts = grown;
        t->capacity = cap;
    }
    float u0 = (float)(cell * CELL_W) / ATLAS_W, u1 = u0 + (float)PBFCL_FONT_W / ATLAS_W;
    float v0 = 0.0f, v1 = (float)PBFCL_FONT_H / CELL_H;
    if (cell == SOLID_CELL)
        u1 = u0 + 0.5f * CELL_W / ATLAS_W, u0 += 0.5f / ATLAS_W, v1 = 0.5f;
    const float corners[6][4] = {{x, y, u0, v0}, {x + w, y, u1, v0},     {x + w, y + h, u1, v1},
                                 {x, y, u0, v0}, {x + w, y + h, u1, v1}, {x, y + h, u0, v1}};
    for (int i = 0; i < 6; i++) {
        float *v = t->verts + (t->count + i) * FLOATS_PER_VERTEX;
        memcpy(v, corners[i], 4 * sizeof(float));
        memcpy(v + 4, rgba, 4 * sizeof(float));
    }
    t->count += 6;
}

void pbfcl_demo_text_rect(pbfcl_demo_text *t, float x, float y, float w, float h,
                          const float rgba[4])
{
    quad(t, x, y, w, h, SOLID_CELL, rgba);
}

float pbfcl_demo_text_string(pbfcl_demo_text *t, float x, float y, float scale, const char *s,
                             const float rgba[4])
{
    float x0 = x;
    for (; *s; s++, x += CELL_W * scale)
        if (*s != ' ')
            quad(t, x, y, PBFCL_FONT_W * scale, PBFCL_FONT_H * scale, pbfcl_font_glyph_index(*s),
                 rgba);
    return x - x0;
}

void pbfcl_demo_text_flush(pbfcl_demo_text *t, int w, int h)
{
    if (t->count == 0)
        return;
    glBindVertexArray(t->vao);
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo);
    size_t bytes = t->count * FLOATS_PER_VERTEX * sizeof(float);
    if (t->count > t->vbo_capacity) {
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(t->capacity * FLOATS_PER_VERTEX * sizeof(float)),
                     NULL, GL_STREAM_DRAW);
        t->vbo_capacity = t->capacity;
    }
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, t->verts);
    glUseProgram(t->program);
    glUniform2f(t->u_viewport, (float)w, (float)h);
    glUniform1i(t->u_atlas, 0);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, t->texture);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDrawArrays(GL_TRIANGLES, 0, (GLsizei)t->count);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
    glBindVertexArray(0);
    t->count = 0;
}
