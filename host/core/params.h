/* The solver parameters' table (PBFCL_SOLVER_PARAM_LIST in include/pbfcl.h): what the scene
 * loader, the command line and the documentation check use beside the public queries. */
#ifndef PBFCL_PARAMS_H
#define PBFCL_PARAMS_H

#include "pbfcl_error.h"

#include <stdbool.h>
#include <stddef.h>

/* True if v is in the accepted range of a solver parameter. */
bool pbfcl_param_in_range(const pbfcl_param_info *info, double v);

/* Writes a parameter's range, e.g. "a number > 0 and <= 1"; returns snprintf's count. */
int pbfcl_param_range_text(const pbfcl_param_info *info, char *buf, size_t size);

/* The validator of pbfcl_solver_params_check, its messages prefixed with where ("scene
 * 'NAME'"; NULL: none). */
pbfcl_status pbfcl_solver_params_check_in(const pbfcl_solver_params *p, const char *where);

/* The value of a parameter in p, as a double. */
double pbfcl_param_get(const pbfcl_solver_params *p, const pbfcl_param_info *info);

/* Sets a parameter in p (rounded to int for the integer ones). */
void pbfcl_param_set(pbfcl_solver_params *p, const pbfcl_param_info *info, double v);

#endif
