#!/usr/bin/env bash
# The core's folders are layers (host/core, the include root: #include "grid/grid.h"). A file
# may include its own folder's headers and those of the folders below it in LAYERS, the public
# header pbfcl.h (its types and status codes) and the kernels' shared headers in cl/; never a
# folder above its own (so no two folders include each other), nor the library (host/lib) or
# the program (host/app). Given the core's and the library's object files (as built), the core
# must also call nothing the library defines. A file breaking a rule fails here, by name.
set -uo pipefail
src=${1:?usage: core_layers.sh SOURCE_DIR [OBJECT_FILES...]}
shift
# lowest first: a folder may include only those before it (and itself)
layers="runtime grid scene colliders bodies diffuse sim pbf sph"
cl_headers="pbfcl_shared.h morton.h ../../../cl/diffuse/diffuse.h ../../../cl/colliders/colliders.h"
rank() {
  local i=0 l
  for l in $layers; do
    [ "$l" = "$1" ] && { echo $i; return; }
    i=$((i + 1))
  done
  echo -1
}
bad=0
checked=0
for dir in "$src"/host/core/*/; do
  folder=$(basename "$dir")
  own=$(rank "$folder")
  if [ "$own" -lt 0 ]; then
    echo "FAIL: host/core/$folder is in no layer; add it to layers in tests/core_layers.sh"
    bad=1
    continue
  fi
  for f in "$dir"*.[ch]; do
    checked=$((checked + 1))
    while read -r inc; do
      [ "$inc" = pbfcl.h ] && continue
      [[ " $cl_headers " == *" $inc "* ]] && continue
      top=${inc%%/*}
      if [ "$top" = "$inc" ]; then
        echo "FAIL: ${f#"$src"/} includes \"$inc\": include core headers by folder (\"$folder/$inc\"); the core includes nothing of host/lib or host/app"
        bad=1
        continue
      fi
      r=$(rank "$top")
      if [ "$r" -lt 0 ] || [ ! -e "$src/host/core/$inc" ]; then
        echo "FAIL: ${f#"$src"/} includes \"$inc\", which is no header of the core"
        bad=1
      elif [ "$r" -gt "$own" ]; then
        echo "FAIL: ${f#"$src"/} includes \"$inc\": $folder/ is below $top/ ($layers, lowest first); move the shared part down or hand it in from above"
        bad=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  done
done
[ "$checked" -gt 0 ] || { echo "FAIL: no core sources found under $src/host/core"; exit 1; }
if [ $# -gt 0 ]; then # the objects: the core calls nothing the library defines
  core=() lib=()
  for o in "$@"; do
    case "$o" in
    */core/*) core+=("$o") ;;
    */lib/*) lib+=("$o") ;;
    esac
  done
  if [ ${#core[@]} -eq 0 ] || [ ${#lib[@]} -eq 0 ]; then
    echo "FAIL: no core or no library objects among the $# given"
    exit 1
  fi
  calls=$(comm -12 <(nm --defined-only -g "${lib[@]}" | awk 'NF == 3 {print $3}' | sort -u) \
    <(nm -u "${core[@]}" | awk 'NF == 2 {print $2}' | sort -u))
  for sym in $calls; do
    for o in "${core[@]}"; do
      nm -u "$o" | awk '{print $2}' | grep -qx "$sym" &&
        echo "FAIL: ${o##*/core/} calls $sym, which the library (host/lib) defines: the core must not depend on the library"
    done
    bad=1
  done
fi
[ $bad -eq 0 ] && echo "ok: $checked core files include only their folder, the folders below it ($layers), pbfcl.h and cl/'s shared headers${1:+; the core calls nothing of the library}"
exit $bad
