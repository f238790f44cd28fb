/* libFuzzer target for the checkpoint loader: the input is a checkpoint file whose last 8
 * bytes are replaced by the checksum of the rest, so mutations reach the content instead of
 * failing the checksum. It goes through what `pbfcl run --resume FILE` does before a device
 * is opened and what pbfcl_solver_load_state and pbfcl_scene_setup_load_state check before
 * they use a state: the header, the sections, the solver state's fields (state_check.c), the
 * scene's bytes and its validation, and the frames' ids. Built and run by tools/fuzz
 * checkpoint (clang, -fsanitize=fuzzer,address,undefined); the seed corpus is
 * tests/fuzz/corpus-checkpoint/. Any crash, sanitizer report, leak or timeout is a bug. */
#include "checkpoint.h"
#include "scene/scene.h"
#include "sim/state_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The library's version (host/lib/api.c), which the reader's messages name. */
const char *pbfcl_version_string(void)
{
    return "fuzz";
}

/* The scene section: its bytes checked, then validated as a loaded scene. */
static void load_scene(pbfcl_checkpoint *c)
{
    pbfcl_scene *s = malloc(sizeof *s);
    if (s && pbfcl_checkpoint_section(c, "scene", s, sizeof *s) == PBFCL_OK &&
        pbfcl_state_check_scene(s, sizeof *s) == PBFCL_OK)
        pbfcl_scene_validate(s);
    free(s);
}

/* The solver's sections against the header's parameters, as pbfcl_solver_load_state checks
 * them after pbfcl_solver_set_params has validated the parameters. */
static void load_state(pbfcl_checkpoint *c, const pbfcl_checkpoint_info *info)
{
    pbfcl_scene s;
    pbfcl_scene_defaults(&s);
    memcpy(s.domain_min, info->scene.domain_min, sizeof s.domain_min);
    memcpy(s.domain_max, info->scene.domain_max, sizeof s.domain_max);
    memcpy(s.gravity, info->scene.gravity, sizeof s.gravity);
    s.particle_radius = info->scene.particle_radius;
    s.rest_density = info->scene.rest_density;
    s.solver = info->solver;
    if (pbfcl_scene_validate_settings(&s) != PBFCL_OK)
        return;
    pbfcl_state_limits lim = {
        info->n, s.solver.method, {0}, {0}, NULL, pbfcl_checkpoint_size(c), "the whole checkpoint"};
    memcpy(lim.box_min, s.domain_min, sizeof lim.box_min);
    memcpy(lim.box_max, s.domain_max, sizeof lim.box_max);
    pbfcl_state_check(pbfcl_checkpoint_section, c, &lim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16 || size > (8u << 20))
        return 0;
    unsigned char *file = malloc(size);
    if (!file)
        return 0;
    memcpy(file, data, size);
    uint64_t h = PBFCL_CHECKPOINT_HASH_START;
    pbfcl_checkpoint_hash(&h, file, size - 8);
    for (int k = 0; k < 8; k++)
        file[size - 8 + k] = (unsigned char)(h >> (8 * k));
    pbfcl_checkpoint *c = NULL;
    pbfcl_checkpoint_info info;
    if (pbfcl_checkpoint_parse("fuzz.ckp", file, size, &c, &info) == PBFCL_OK) {
        load_scene(c);
        load_state(c, &info);
        unsigned *ids = malloc(info.n * sizeof *ids), next = 0;
        if (ids)
            pbfcl_checkpoint_restore_ids(c, ids, info.n, UINT32_MAX, &next);
        free(ids);
    }
    pbfcl_checkpoint_free(c);
    free(file);
    return 0;
}
