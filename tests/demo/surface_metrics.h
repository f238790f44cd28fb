/* Artefact measures of a rendered fluid surface (test_demo): pinhole pixels much darker than
 * their neighbourhood inside the fluid, and the balance of row- against column-aligned fine
 * structure in the specular highlight. Plain C on an RGB image; no GL. */
#ifndef PBFCL_SURFACE_METRICS_H
#define PBFCL_SURFACE_METRICS_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Luminance 0..255 of an RGB pixel (Rec. 601 weights). */
static inline int surface_luma(const unsigned char *p)
{
    return (77 * p[0] + 150 * p[1] + 29 * p[2]) >> 8;
}

/* What surface_measure found. */
typedef struct surface_stats {
    long mask;         /* pixels inside the fluid mask */
    long dark;         /* of those, pixels much darker than their 5x5 median */
    long highlight;    /* pixels of the highlight (mask, luminance >= SURFACE_HIGHLIGHT) */
    double row_energy; /* highlight energy of structure along rows (second difference in y) */
    double col_energy; /* ... along columns (second difference in x) */
} surface_stats;

#define SURFACE_DARK_RATIO 0.6 /* "much darker": luminance below 0.6 of the 5x5 median */
#define SURFACE_HIGHLIGHT 150  /* luminance from which a fluid pixel counts as highlight */

/* Dark pixels per 10 000 pixels of the fluid mask. */
static inline double surface_dark_per_10k(const surface_stats *s)
{
    return s->mask ? 1e4 * (double)s->dark / (double)s->mask : 0.0;
}

/* Mean energy per highlight pixel of row-aligned fine structure (luminance^2). */
static inline double surface_row_energy(const surface_stats *s)
{
    return s->highlight ? s->row_energy / (double)s->highlight : 0.0;
}

/* Mean energy per highlight pixel of column-aligned fine structure (luminance^2). */
static inline double surface_col_energy(const surface_stats *s)
{
    return s->highlight ? s->col_energy / (double)s->highlight : 0.0;
}

static inline int surface_cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Measures an w x h RGB image whose fluid pixels satisfy is_fluid. A pixel is inside the
 * fluid mask when at least 20 of the 25 pixels of its 5x5 neighbourhood are fluid, so a
 * pinhole of a few pixels inside the fluid counts as inside although its own colour is not
 * fluid's. Rows y < y0 (the HUD) are left out. */
static inline surface_stats surface_measure(const unsigned char *rgb, int w, int h, int y0,
                                            bool (*is_fluid)(const unsigned char *))
{
    surface_stats s;
    memset(&s, 0, sizeof s);
    int *luma = malloc((size_t)w * (size_t)h * sizeof *luma);
    unsigned char *fluid = malloc((size_t)w * (size_t)h);
    if (!luma || !fluid) {
        free(luma);
        free(fluid);
        return s;
    }
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
        luma[i] = surface_luma(rgb + 3 * i);
        fluid[i] = is_fluid(rgb + 3 * i);
    }
    int y_from = y0 > 2 ? y0 : 2;
    for (int y = y_from; y < h - 2; y++) {
        for (int x = 2; x < w - 2; x++) {
            int n = 0, window[25];
            for (int j = -2; j <= 2; j++)
                for (int i = -2; i <= 2; i++) {
                    size_t k = (size_t)(y + j) * (size_t)w + (size_t)(x + i);
                    n += fluid[k];
                    window[(j + 2) * 5 + i + 2] = luma[k];
                }
            if (n < 20)
                continue;
            s.mask++;
            size_t c = (size_t)y * (size_t)w + (size_t)x;
            qsort(window, 25, sizeof window[0], surface_cmp_int);
            s.dark += luma[c] < SURFACE_DARK_RATIO * window[12];
            if (luma[c] < SURFACE_HIGHLIGHT)
                continue;
            s.highlight++;
            double dy = 2.0 * luma[c] - luma[c - (size_t)w] - luma[c + (size_t)w];
            double dx = 2.0 * luma[c] - luma[c - 1] - luma[c + 1];
            s.row_energy += dy * dy;
            s.col_energy += dx * dx;
        }
    }
    free(luma);
    free(fluid);
    return s;
}

#endif
