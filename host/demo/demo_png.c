/* PNG files of the demo's screenshots, written with libpng through a temporary file and a
 * rename (atomic_file.h), so that a failed write leaves no cut PNG. No GL here: the tests
 * build this file on its own. */
#include "atomic_file.h"
#include "demo_screenshot.h"

#ifdef PBFCL_HAVE_PNG
#include <png.h>

/* Writes the image to an open file; PBFCL_ERR_IO if libpng reports a failure. */
static pbfcl_status png_stream(FILE *f, const char *path, const unsigned char *rgb, int width,
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
        pbfcl_errorf("libpng failed while writing screenshot %s (disk full?)", path);
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

pbfcl_status pbfcl_demo_write_png(const char *path, const unsigned char *rgb, int width, int height)
{
    pbfcl_atomic_file a;
    PBFCL_TRY(pbfcl_atomic_open(&a, path, "screenshot"));
    pbfcl_status s = png_stream(a.file, path, rgb, width, height);
    if (s != PBFCL_OK) {
        pbfcl_atomic_abort(&a);
        return s;
    }
    return pbfcl_atomic_commit(&a);
}

#else

pbfcl_status pbfcl_demo_write_png(const char *path, const unsigned char *rgb, int width, int height)
{
    (void)rgb;
    (void)width;
    (void)height;
    pbfcl_errorf("cannot write %s: this build has no PNG support; install libpng "
                 "(apt-get install libpng-dev) and rebuild pbfcl",
                 path);
    return PBFCL_ERR_UNSUPPORTED;
}

#endif
