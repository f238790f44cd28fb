#!/usr/bin/env bash
# cl/ has a folder per part of the core, as host/core has (cl/grid/ for host/core/grid/, ...),
# plus cl/common/ for the headers every program shares and cl/dev/ for pbfcl-dev's kernels.
# Every .cl and .h sits in one of those folders, and basenames are unique over cl/: the program
# table (host/core/runtime/programs.c) and the embedding (cmake/embed_kernels.cmake) name files
# by basename. A file breaking a rule fails here, by name, with where to put it.
set -uo pipefail
src=${1:?usage: cl_layout.sh SOURCE_DIR}
cl=$src/cl
[ -d "$cl" ] || { echo "FAIL: no cl/ under $src"; exit 1; }
folders="common dev"
for d in "$src"/host/core/*/; do folders+=" $(basename "$d")"; done
bad=0
checked=0
declare -A seen=()
while IFS= read -r -d '' f; do
  rel=${f#"$cl"/}
  name=$(basename "$rel")
  checked=$((checked + 1))
  if [ "$rel" = "$name" ]; then
    echo "FAIL: cl/$rel lies in cl/ itself: move it (git mv) into the folder of the part whose" \
      "host code builds it, as host/core has them (cl/<folder>/ for host/core/<folder>/:" \
      "$folders; common/ for headers every program shares, dev/ for pbfcl-dev's own)"
    bad=1
    continue
  fi
  top=${rel%%/*}
  if [ "$top/$name" != "$rel" ]; then
    echo "FAIL: cl/$rel is nested deeper than one folder: move it to cl/$top/$name"
    bad=1
  fi
  if [[ " $folders " != *" $top "* ]]; then
    echo "FAIL: cl/$rel is in cl/$top/, which is no folder of host/core ($folders): move it" \
      "into the folder of the part whose host code builds it"
    bad=1
  fi
  if [ -n "${seen[$name]:-}" ]; then
    echo "FAIL: cl/$rel and cl/${seen[$name]} share the basename $name: the program table and" \
      "the embedding name files by basename; rename one"
    bad=1
  else
    seen[$name]=$rel
  fi
done < <(find "$cl" \( -name '*.cl' -o -name '*.h' \) -type f -print0 | sort -z)
[ "$checked" -gt 0 ] || { echo "FAIL: no .cl or .h files under $cl"; exit 1; }
[ $bad -eq 0 ] && echo "ok: the $checked files of cl/ each sit in a folder of the core's ($folders) with unique basenames"
exit $bad
