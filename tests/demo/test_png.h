/* PNG screenshots read back for the demo tests (test_demo, test_gl_sharing): the image, the
 * fluid colour test and the pixel RMSE between two images. Needs libpng (PBFCL_HAVE_PNG). */
#ifndef PBFCL_TEST_PNG_H
#define PBFCL_TEST_PNG_H

#include <check.h>
#include <math.h>
#include <png.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* An RGB image read from a PNG. */
typedef struct image {
    int w, h;
    unsigned char *rgb;
} image;

static inline image read_png(const char *path)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ck_assert_msg(png_image_begin_read_from_file(&img, path), "cannot read %s: %s", path,
                  img.message);
    img.format = PNG_FORMAT_RGB;
    image out = {(int)img.width, (int)img.height, malloc(PNG_IMAGE_SIZE(img))};
    ck_assert(out.rgb != NULL);
    ck_assert_msg(png_image_finish_read(&img, NULL, out.rgb, 0, NULL), "cannot decode %s: %s", path,
                  img.message);
    return out;
}

/* Fluid is drawn in blues: clearly more blue than red, and not dark. */
static inline bool is_fluid(const unsigned char *p)
{
    return p[2] > p[0] + 40 && p[2] >= p[1] && p[2] > 90;
}

/* Root mean square difference of two same-sized images' channels (0..255), over the rows
 * from y0 down (the demo's HUD, with its timings, is at the top). */
static inline double image_rmse(const image *a, const image *b, int y0)
{
    ck_assert_msg(a->w == b->w && a->h == b->h, "images of %dx%d and %dx%d", a->w, a->h, b->w,
                  b->h);
    double sum = 0.0;
    size_t from = (size_t)y0 * (size_t)a->w * 3, n = (size_t)a->w * (size_t)a->h * 3;
    for (size_t i = from; i < n; i++) {
        double d = (double)a->rgb[i] - (double)b->rgb[i];
        sum += d * d;
    }
    return n > from ? sqrt(sum / (double)(n - from)) : 0.0;
}

#endif
