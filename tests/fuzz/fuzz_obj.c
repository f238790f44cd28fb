/* libFuzzer target for the OBJ reader (host/core/scene/obj_mesh.c): the input is an OBJ file's
 * text. It is parsed and, if it parses, checked for being closed and measured, as a mesh in a
 * scene file is before it is sampled. Built and run by tools/fuzz obj (clang,
 * -fsanitize=fuzzer,address,undefined); the seed corpus is tests/fuzz/corpus-obj/. Any
 * crash, sanitizer report, leak or timeout is a bug. */
#include "scene/obj_mesh.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    pbfcl_obj m;
    memset(&m, 0, sizeof m);
    if (pbfcl_obj_parse("fuzz.obj", text, &m) == PBFCL_OK) {
        pbfcl_obj_edge_fault fault;
        if (pbfcl_obj_closed(&m, &fault))
            pbfcl_obj_volume(&m);
    }
    pbfcl_obj_free(&m);
    free(text);
    return 0;
}
