/* The solver parameters' table (PBFCL_SOLVER_PARAM_LIST in include/pbfcl.h): what the scene
 * loader, the command line and the documentation check use beside the public queries. */
#ifndef PBFCL_PARAMS_H
#define PBFCL_PARAMS_H

#include "runtime/pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* The validator of pbfcl_solver_params_check, its messages prefixed with where ("scene
 * 'NAME'"; NULL: none). */
pbfcl_status pbfcl_solver_params_check_in(const pbfcl_solver_params *p, const char *where);

/* The names of the methods a PBFCL_PARAM_NAMED parameter takes, "pbf or sph", into buf;
 * returns the length snprintf would write. */
int pbfcl_param_names_text(char *buf, size_t size);

#endif
