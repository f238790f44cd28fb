/* The demo's embedded 5x7 bitmap font (no font library needed). */
#ifndef PBFCL_DEMO_FONT_H
#define PBFCL_DEMO_FONT_H

#include <stdbool.h>

#define PBFCL_FONT_W 5       /* glyph width, pixels */
#define PBFCL_FONT_H 7       /* glyph height, pixels */
#define PBFCL_FONT_GLYPHS 64 /* ASCII 32..95 */
#define PBFCL_FONT_CELL_W 6  /* a character's advance: the glyph plus one column of spacing */
#define PBFCL_FONT_CELL_H 9  /* a line's height: the glyph plus two rows of spacing */

/* The glyph drawn for character c (lower case maps to capitals, unknown bytes to '?'). */
int pbfcl_font_glyph_index(char c);

/* True if pixel (x, y) of a glyph is ink; (0, 0) is the top-left. */
bool pbfcl_font_pixel(int glyph, int x, int y);

#endif
