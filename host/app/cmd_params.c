/* `pbfcl params`: the solver parameters as the list in include/pbfcl.h declares them, as the
 * Markdown table of docs/SCENES.md (a test checks that the document holds exactly this). */
#include "commands.h"
#include "pbfcl.h"

#include <stdio.h>
#include <string.h>

/* "> 0 and <= 1" for a parameter's accepted range. */
static void range_cell(const pbfcl_param_info *p, char *buf, size_t size)
{
    if (p->flags & PBFCL_PARAM_NAMED) { /* the names, e.g. "pbf or sph" */
        pbfcl_param_range_text(p, buf, size);
        return;
    }
    snprintf(buf, size, "%s %g and %s %g%s", (p->flags & PBFCL_PARAM_LO_OPEN) ? ">" : "≥", p->lo,
             (p->flags & PBFCL_PARAM_HI_OPEN) ? "<" : "≤", p->hi,
             (p->flags & PBFCL_PARAM_WHOLE) ? ", whole" : "");
}

int cmd_params(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: pbfcl params\n\nPrints the solver parameters (the keys of a scene "
               "file's \"solver\" object and their command-line flags) as a Markdown table.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "pbfcl: error: params: unknown option '%s'\n", argv[1]);
        return 2;
    }
    printf("| key | flag | type | default | unit | meaning | accepted |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < pbfcl_solver_param_count(); k++) {
        const pbfcl_param_info *p = pbfcl_solver_param(k);
        char range[96], def[32];
        range_cell(p, range, sizeof range);
        if (p->flags & PBFCL_PARAM_NAMED)
            snprintf(def, sizeof def, "%s", pbfcl_method_name((int)p->def));
        else
            snprintf(def, sizeof def, "%g", p->def);
        printf("| `%s` | `%s` | %s | %s | %s | %s | %s |\n", p->name, p->flag,
               (p->flags & PBFCL_PARAM_NAMED) ? "name"
               : p->is_int                    ? "integer"
                                              : "number",
               def, p->unit[0] ? p->unit : "–", p->help, range);
    }
    return 0;
}
