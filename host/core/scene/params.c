/* The solver parameters' table, made from PBFCL_SOLVER_PARAM_LIST (include/pbfcl.h): defaults,
 * descriptions and the one validator. */
#include "scene/params.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const method_names[PBFCL_METHOD_COUNT] = {
#define PBFCL_METHOD_NAME_(id, name, what) [id] = name,
    PBFCL_METHOD_LIST(PBFCL_METHOD_NAME_)
#undef PBFCL_METHOD_NAME_
};

const char *pbfcl_method_name(int m)
{
    return m >= 0 && m < PBFCL_METHOD_COUNT ? method_names[m] : NULL;
}

int pbfcl_method_from_name(const char *name)
{
    for (int m = 0; name && m < PBFCL_METHOD_COUNT; m++)
        if (!strcmp(name, method_names[m]))
            return m;
    return -1;
}

int pbfcl_param_names_text(char *buf, size_t size)
{
    int len = 0;
    for (int m = 0; m < PBFCL_METHOD_COUNT; m++) {
        int k =
            snprintf(buf + len, len < (int)size ? size - (size_t)len : 0, "%s%s",
                     m == 0 ? "" : (m + 1 == PBFCL_METHOD_COUNT ? " or " : ", "), method_names[m]);
        len += k > 0 ? k : 0;
    }
    return len;
}

static const pbfcl_param_info params[] = {
#define PBFCL_PARAM_ROW_(type, name, flag, def, lo, hi, flags, unit, help)                         \
    {#name, flag,  (type)0.5 == 0, def,  lo,                                                       \
     hi,    flags, unit,           help, offsetof(pbfcl_solver_params, name)},
    PBFCL_SOLVER_PARAM_LIST(PBFCL_PARAM_ROW_)
#undef PBFCL_PARAM_ROW_
};

#define PARAM_COUNT ((int)(sizeof params / sizeof params[0]))

int pbfcl_solver_param_count(void)
{
    return PARAM_COUNT;
}

const pbfcl_param_info *pbfcl_solver_param(int i)
{
    return i >= 0 && i < PARAM_COUNT ? &params[i] : NULL;
}

/* Logs a NULL argument of a value helper; false if any is NULL. */
static bool args_given(const char *func, const void *a, const char *a_name, const void *b,
                       const char *b_name)
{
    if (a && b)
        return true;
    pbfcl_errorf("%s: %s is NULL", func, a ? b_name : a_name);
    return false;
}

double pbfcl_param_get(const pbfcl_solver_params *p, const pbfcl_param_info *info)
{
    if (!args_given("pbfcl_param_get", p, "p", info, "info"))
        return 0.0;
    const char *field = (const char *)p + info->offset;
    return info->is_int ? (double)*(const int *)field : (double)*(const float *)field;
}

void pbfcl_param_set(pbfcl_solver_params *p, const pbfcl_param_info *info, double v)
{
    if (!args_given("pbfcl_param_set", p, "p", info, "info"))
        return;
    char *field = (char *)p + info->offset;
    if (info->is_int)
        *(int *)field = (int)lround(v);
    else
        *(float *)field = (float)v;
}

void pbfcl_solver_params_defaults(pbfcl_solver_params *p)
{
    if (!p)
        return;
    for (int i = 0; i < PARAM_COUNT; i++)
        pbfcl_param_set(p, &params[i], params[i].def);
}

int pbfcl_param_in_range(const pbfcl_param_info *info, double v)
{
    if (!args_given("pbfcl_param_in_range", info, "info", "", ""))
        return 0;
    bool lo = (info->flags & PBFCL_PARAM_LO_OPEN) ? v > info->lo : v >= info->lo;
    bool hi = (info->flags & PBFCL_PARAM_HI_OPEN) ? v < info->hi : v <= info->hi;
    bool whole = !(info->flags & PBFCL_PARAM_WHOLE) || v == floor(v);
    return isfinite(v) && lo && hi && whole;
}

int pbfcl_param_range_text(const pbfcl_param_info *info, char *buf, size_t size)
{
    if (!args_given("pbfcl_param_range_text", info, "info", buf || !size ? "" : NULL, "buf"))
        return -1;
    if (info->flags & PBFCL_PARAM_NAMED)
        return pbfcl_param_names_text(buf, size);
    const char *what = info->is_int                        ? "an integer"
                       : (info->flags & PBFCL_PARAM_WHOLE) ? "a whole number"
                                                           : "a number";
    return snprintf(buf, size, "%s %s %.12g and %s %.12g", what,
                    (info->flags & PBFCL_PARAM_LO_OPEN) ? ">" : ">=", info->lo,
                    (info->flags & PBFCL_PARAM_HI_OPEN) ? "<" : "<=", info->hi);
}

pbfcl_status pbfcl_solver_params_check_in(const pbfcl_solver_params *p, const char *where)
{
    if (!p) {
        pbfcl_errorf("pbfcl_solver_params_check: p is NULL");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int i = 0; i < PARAM_COUNT; i++) {
        double v = pbfcl_param_get(p, &params[i]);
        if (pbfcl_param_in_range(&params[i], v))
            continue;
        char range[128];
        pbfcl_param_range_text(&params[i], range, sizeof range);
        pbfcl_errorf("%s%ssolver.%s must be %s (got %g)", where ? where : "", where ? ": " : "",
                     params[i].name, range, v);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_solver_params_check(const pbfcl_solver_params *p)
{
    return pbfcl_solver_params_check_in(p, NULL);
}
