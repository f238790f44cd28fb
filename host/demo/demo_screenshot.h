/* Screenshots: the back buffer read with glReadPixels and written as a PNG (libpng). */
#ifndef PBFCL_DEMO_SCREENSHOT_H
#define PBFCL_DEMO_SCREENSHOT_H

#include "runtime/pbfcl_error.h"

/* Writes the current back buffer (width x height pixels) to path as an 8-bit RGB PNG.
 * Without libpng in the build, fails with PBFCL_ERR_UNSUPPORTED and says what to install. */
pbfcl_status pbfcl_demo_screenshot(const char *path, int width, int height);

/* Writes rgb (height rows of width * 3 bytes, top row first) to path as an 8-bit RGB PNG,
 * whole or not at all (a temporary file renamed into place: a full disk leaves the earlier
 * file, not a cut PNG). demo_png.c; needs libpng. */
pbfcl_status pbfcl_demo_write_png(const char *path, const unsigned char *rgb, int width,
                                  int height);

#endif
