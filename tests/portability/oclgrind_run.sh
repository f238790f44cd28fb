#!/usr/bin/env bash
# Runs one Oclgrind test (the command after NAME and DIR) with PBFCL_TRACE_BUILDS=1, passes its
# output on, and keeps the kernel programs it built in DIR/NAME.builds, for
# oclgrind_covers_programs.sh. Exits with the command's status.
set -uo pipefail
name=${1:?usage: oclgrind_run.sh NAME DIR COMMAND...}
dir=${2:?usage: oclgrind_run.sh NAME DIR COMMAND...}
shift 2
mkdir -p "$dir" || exit 1
rm -f "$dir/$name.builds"
rc=0
PBFCL_TRACE_BUILDS=1 "$@" >"$dir/$name.log" 2>&1 || rc=$?
grep -v -P '^# (build|reuse)\t' "$dir/$name.log"
grep -P '^# build\t' "$dir/$name.log" | cut -f2 | sort -u >"$dir/$name.builds"
exit $rc
