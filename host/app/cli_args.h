/* Command-line helpers shared by the commands: every valued option is accepted as both
 * "--name value" and "--name=value". */
#ifndef PBFCL_CLI_ARGS_H
#define PBFCL_CLI_ARGS_H

#include <stdbool.h>

/* True if arg is the option name, alone or as name=value. */
bool pbfcl_cli_is(const char *arg, const char *name);

/* Takes the value of the valued option at argv[*i] ("--name=value" or "--name value") into
 * *value and advances *i past it; false (with a message naming the option and how to give
 * it) when the value is missing or empty. */
bool pbfcl_cli_value(int argc, char **argv, int *i, const char **value);

/* True if next, the word after the valued option name (its first name_len bytes), can be its
 * value; false with a message naming both when next is itself an option ("--stats --force"
 * would take --force as the file name; "--stats=--force" gives such a value on purpose). */
bool pbfcl_cli_separate_value(const char *name, int name_len, const char *next);

/* Takes the flag at argv[*i] (which must not carry "=value") and advances *i; false with a
 * message if it has a value. */
bool pbfcl_cli_flag(char **argv, int *i);

/* Parses a whole decimal integer in [lo, hi] for option opt; false with a message naming the
 * option and the range. */
bool pbfcl_cli_count(const char *opt, const char *text, long long lo, long long hi, long long *out);

#endif
