/* libFuzzer target for the scene parser: the input is a scene file's text. It is parsed,
 * validated and, if valid, sized for 100 particles (the lattice walks behind --particles; the
 * phases of its bodies), as
 * `pbfcl run --scene FILE --particles 100` would. Built and run by tools/fuzz scene (clang,
 * -fsanitize=fuzzer,address,undefined); the seed corpus is tests/fuzz/corpus-scene/. Any crash,
 * sanitizer report, leak or timeout is a bug. */
#include "scene/scene.h"

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
    pbfcl_scene s;
    if (pbfcl_scene_parse_json_text("fuzz.json", text, &s) == PBFCL_OK &&
        pbfcl_scene_validate_layout(&s) == PBFCL_OK) {
        pbfcl_scene sized = s;
        if (pbfcl_scene_set_particle_count(&sized, 100) == PBFCL_OK &&
            pbfcl_scene_validate(&sized) == PBFCL_OK) {
            size_t n = pbfcl_scene_count(&sized);
            int *phases = n <= 1000 ? malloc((n + 1) * sizeof *phases) : NULL;
            if (phases)
                pbfcl_scene_phases(&sized, phases, n);
            free(phases);
        }
        if (pbfcl_scene_validate(&s) == PBFCL_OK)
            pbfcl_scene_max_speed(&s);
    }
    free(text);
    return 0;
}
