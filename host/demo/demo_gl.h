/* The one place the demo includes OpenGL (through GLEW) and SDL2, so that every file sees
 * them in the same order. */
#ifndef PBFCL_DEMO_GL_H
#define PBFCL_DEMO_GL_H

#include <GL/glew.h>
#include <SDL.h>

#endif
