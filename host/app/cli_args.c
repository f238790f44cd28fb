/* The "--name value" / "--name=value" convention of every pbfcl command (cli_args.h). */
#include "cli_args.h"
#include "runtime/pbfcl_error.h"
#include "scene_options.h"

#include <string.h>

bool pbfcl_cli_is(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

bool pbfcl_cli_separate_value(const char *name, int name_len, const char *next)
{
    if (strncmp(next, "--", 2) != 0 || next[2] == '\0')
        return true;
    pbfcl_errorf("%.*s needs a value but is followed by the option %s; give %.*s its value "
                 "(one that starts with -- is written %.*s=%s)",
                 name_len, name, next, name_len, name, name_len, name, next);
    return false;
}

bool pbfcl_cli_value(int argc, char **argv, int *i, const char **value)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    int name_len = eq ? (int)(eq - arg) : (int)strlen(arg);
    if (eq)
        *value = eq + 1;
    else
        *value = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!*value || (*value)[0] == '\0') {
        pbfcl_errorf("%.*s needs a value (%.*s VALUE or %.*s=VALUE)", name_len, arg, name_len, arg,
                     name_len, arg);
        return false;
    }
    if (!eq && !pbfcl_cli_separate_value(arg, name_len, *value))
        return false;
    *i += eq ? 1 : 2;
    return true;
}

bool pbfcl_cli_flag(char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq) {
        pbfcl_errorf("%.*s takes no value (got '%s')", (int)(eq - argv[*i]), argv[*i], argv[*i]);
        return false;
    }
    (*i)++;
    return true;
}

bool pbfcl_cli_count(const char *opt, const char *text, long long lo, long long hi, long long *out)
{
    if (pbfcl_parse_llong(text, out) && *out >= lo && *out <= hi)
        return true;
    pbfcl_errorf("%s: '%s' is not valid; expected an integer >= %lld and <= %lld", opt, text, lo,
                 hi);
    return false;
}
