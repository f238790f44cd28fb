/* Screenshots of the demo window: glReadPixels of the back buffer, rows flipped to top-down
 * order, written with libpng (when the build has it). */
#include "demo_screenshot.h"
#include "demo.h"
#include "demo_gl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PBFCL_HAVE_PNG

bool pbfcl_demo_screenshot_supported(void)
{
    return true;
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
    pbfcl_status s = pbfcl_demo_write_png(path, flipped, width, height);
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
    return pbfcl_demo_write_png(path, NULL, width, height); /* says what to install */
}

#endif
