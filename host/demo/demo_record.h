/* Recording the demo: `--record DIR` checked before the window opens, then one PNG per
 * simulated frame (DIR/frame_000000.png, ...), each written whole or not at all; and the
 * screenshot key's file names. No GL here: the tests build this file on its own. */
#ifndef PBFCL_DEMO_RECORD_H
#define PBFCL_DEMO_RECORD_H

#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* The printf pattern of a recorded frame's file name inside the folder. */
#define PBFCL_DEMO_RECORD_PATTERN "frame_%06ld.png"

/* Makes dir ready for a recording: creates it if missing (one level), checks that files can
 * be created in it, and refuses one that already holds frame_*.png files unless force (then
 * removes them, so that no frame of an older recording is left after the new ones). Says what
 * is wrong and how to fix it. */
pbfcl_status pbfcl_demo_record_prepare(const char *dir, bool force);

/* True for a name a recording writes in its folder: frame_ followed by digits and .png. */
bool pbfcl_demo_record_is_frame_name(const char *name);

/* The path of frame `index` of a recording in dir; false if it does not fit in size. */
bool pbfcl_demo_record_path(char *path, size_t size, const char *dir, long index);

/* A screenshot file name in dir ("." for the current folder) that does not exist yet:
 * dir/pbfcl-shot-NNNN.png with the smallest NNNN from 1 up; false if none is free. */
bool pbfcl_demo_shot_path(char *path, size_t size, const char *dir);

#endif
