#!/usr/bin/env bash
# The pbfcl program (host/app) and its demo (host/demo) drive the simulator through the public
# API only: besides their own headers they may include include/pbfcl.h and the core's
# utilities that hold no device state (messages, files, clocks). A program file that includes
# any other core header (sim.h, clrt.h, grid.h, scene.h, api_internal.h, ...) fails here, by
# name. The developer commands on the core's internals live in tools/dev (pbfcl-dev).
set -uo pipefail
src=${1:?usage: programs_use_public_api.sh SOURCE_DIR}
allowed="pbfcl.h pbfcl_error.h clock.h data_files.h"
bad=0
checked=0
for f in "$src"/host/app/*.[ch] "$src"/host/demo/*.[ch]; do
  checked=$((checked + 1))
  dir=$(dirname "$f")
  while read -r inc; do
    name=$(basename "$inc")
    if [ -e "$dir/$inc" ] || [ -e "$src/host/app/$name" ] || [ -e "$src/host/demo/$name" ]; then
      continue # the program's own header
    fi
    if [[ " $allowed " == *" $name "* ]]; then
      continue
    fi
    echo "FAIL: ${f#"$src"/} includes \"$inc\", a core header beyond the public API"
    bad=1
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
[ "$checked" -gt 0 ] || { echo "FAIL: no program sources found under $src/host"; exit 1; }
[ $bad -eq 0 ] && echo "ok: $checked program files include only pbfcl.h, their own headers and the utilities ($allowed)"
exit $bad
