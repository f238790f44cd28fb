/* The GLSL loader: finds shaders/ like clrt.c finds cl/, reads the files, compiles and links
 * them, and reports failures with the file, the stage and the whole info log. */
#include "demo_shader.h"
#include "runtime/data_files.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PBFCL_SOURCE_SHADER_DIR
#define PBFCL_SOURCE_SHADER_DIR ""
#endif

pbfcl_status pbfcl_demo_shader_find_dir(char *dir, size_t size)
{
    const pbfcl_data_dir_spec spec = {"shader",  "PBFCL_SHADER_DIR", getenv("PBFCL_SHADER_DIR"),
                                      "shaders", "particle.vert",    PBFCL_SOURCE_SHADER_DIR};
    return pbfcl_find_data_dir(&spec, dir, size);
}

/* Prints a shader's or program's info log in full. */
static void print_log(GLuint object, bool is_program)
{
    GLint len = 0;
    if (is_program)
        glGetProgramiv(object, GL_INFO_LOG_LENGTH, &len);
    else
        glGetShaderiv(object, GL_INFO_LOG_LENGTH, &len);
    char *log = malloc((size_t)len + 1);
    if (!log)
        return;
    log[0] = '\0';
    if (len > 0 && is_program)
        glGetProgramInfoLog(object, len, NULL, log);
    else if (len > 0)
        glGetShaderInfoLog(object, len, NULL, log);
    fprintf(stderr, "  info log:\n%s\n", len > 0 ? log : "(empty)");
    free(log);
}

static pbfcl_status compile(const char *dir, const char *file, GLenum stage, GLuint *out)
{
    const char *stage_name = stage == GL_VERTEX_SHADER ? "vertex" : "fragment";
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *src = pbfcl_read_text_file(path, NULL);
    if (!src) {
        pbfcl_errorf("cannot read %s shader %s: %s (set PBFCL_SHADER_DIR to use another "
                     "folder)",
                     stage_name, path, strerror(errno));
        return PBFCL_ERR_KERNEL_FILE;
    }
    GLuint shader = glCreateShader(stage);
    const char *srcs[1] = {src};
    glShaderSource(shader, 1, srcs, NULL);
    glCompileShader(shader);
    free(src);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        pbfcl_errorf("GLSL compile failed: %s (%s stage) on %s", path, stage_name,
                     (const char *)glGetString(GL_RENDERER));
        print_log(shader, false);
        glDeleteShader(shader);
        return PBFCL_ERR_BUILD;
    }
    *out = shader;
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_shader_program(const char *dir, const char *vert_file,
                                       const char *frag_file, GLuint *out)
{
    *out = 0;
    GLuint vs = 0, fs = 0;
    PBFCL_TRY(compile(dir, vert_file, GL_VERTEX_SHADER, &vs));
    pbfcl_status s = compile(dir, frag_file, GL_FRAGMENT_SHADER, &fs);
    if (s != PBFCL_OK) {
        glDeleteShader(vs);
        return s;
    }
    GLuint prog = glCreateProgram();
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = GL_FALSE;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        pbfcl_errorf("GLSL link failed: %s/%s + %s/%s (link stage)", dir, vert_file, dir,
                     frag_file);
        print_log(prog, true);
        glDeleteProgram(prog);
        return PBFCL_ERR_BUILD;
    }
    *out = prog;
    return PBFCL_OK;
}
