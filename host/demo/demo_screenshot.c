/* Screenshots of the demo window: glReadPixels of the back buffer, rows flipped to top-down
 * order, written with libpng (when the build has it). */
#include "demo_screenshot.h"
#include "demo.h"
#include "demo_gl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PBFCL_HAVE_PNG
#include <png.h>

bool pbfcl_demo_screenshot_supported(void)
{
    return true;
}

/* Writes rgb (height rows of width * 3 bytes, top row first) to f. */
static pbfcl_status write_png(FILE *f, const char *path, const unsigned char *rgb, int width,
                              int height)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        pbfcl_errorf("libpng could not start writing %s", path);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        pbfcl_errorf("libpng failed while writing %s (disk full?)", path);
        return PBFCL_ERR_IO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < height; y++)
        png_write_row(png, (png_const_bytep)(rgb + (size_t)y * (size_t)width * 3));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_screenshot(const char *path, int width, int height)
{
    size_t row = (size_t)width * 3;
    unsigned char *pixels = malloc(row * (size_t)height);
    unsigned char *flipped = malloc(row * (size_t)height);
    if (!pixels || !flipped) {
        free(pixels);
        free(flipped);
        pbfcl_errorf("no memory for a %dx%d screenshot", width, height);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels);
    for (int y = 0; y < height; y++)
        memcpy(flipped + (size_t)y * row, pixels + (size_t)(height - 1 - y) * row, row);
    free(pixels);
    pbfcl_status s;
    FILE *f = fopen(path, "wb");
    if (!f) {
        pbfcl_errorf("cannot write screenshot %s: %s", path, strerror(errno));
        s = PBFCL_ERR_IO;
    } else {
        s = write_png(f, path, flipped, width, height);
        if (fclose(f) != 0 && s == PBFCL_OK) {
            pbfcl_errorf("cannot write screenshot %s: %s", path, strerror(errno));
            s = PBFCL_ERR_IO;
        }
    }
    free(flipped);
    return s;
}

#else

bool pbfcl_demo_screenshot_supported(void)
{
    return false;
}

pbfcl_status pbfcl_demo_screenshot(const char *path, int width, int height)
{
    (void)width;
    (void)height;
    pbfcl_errorf("cannot write %s: this build has no PNG support; install libpng "
                 "(apt-get install libpng-dev) and rebuild pbfcl",
                 path);
    return PBFCL_ERR_UNSUPPORTED;
}

#endif
