#!/usr/bin/env bash
# usage: expect_failure.sh EXIT PATTERN COMMAND...: passes when COMMAND exits with status EXIT
# (any non-zero status for "nonzero") and its output (stdout and stderr) matches the
# extended regular expression PATTERN; says what it got otherwise.
set -uo pipefail
want=$1 pattern=$2
shift 2
out=$("$@" 2>&1)
rc=$?
if [ "$rc" -eq 77 ]; then echo "$out"; exit 77; fi
if { [ "$want" = nonzero ] && [ "$rc" -eq 0 ]; } || { [ "$want" != nonzero ] && [ "$rc" -ne "$want" ]; }; then
  echo "FAIL: exit status $rc, expected $want; output:"; echo "$out"; exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$out"; then
  echo "FAIL: the output does not match '$pattern':"; echo "$out"; exit 1
fi
echo "ok: exit status $rc and the output matches '$pattern'"
