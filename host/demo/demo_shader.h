/* GLSL programs loaded at run time from the shaders/ folder; a failed compile or link prints
 * the file, the stage and the full info log. */
#ifndef PBFCL_DEMO_SHADER_H
#define PBFCL_DEMO_SHADER_H

#include "demo_gl.h"
#include "runtime/pbfcl_error.h"

#include <stddef.h>

/* Finds the shader folder: $PBFCL_SHADER_DIR, shaders/ beside the executable, ./shaders, or
 * the source tree. On failure names every path tried. */
pbfcl_status pbfcl_demo_shader_find_dir(char *dir, size_t size);

/* Compiles dir/vert_file and dir/frag_file and links them into *out. */
pbfcl_status pbfcl_demo_shader_program(const char *dir, const char *vert_file,
                                       const char *frag_file, GLuint *out);

#endif
