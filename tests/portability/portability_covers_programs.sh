#!/usr/bin/env bash
# docs/PORTABILITY.md (written by tools/validate-kernels) must cover every kernel program
# pbfcl builds: each program of `pbfcl-dev kernel-builds` (the library's program table,
# host/core/runtime/programs.c, and pbfcl-dev's own split_compress) with the same files under
# "### Programs" and at least one row in the compile matrix, and every file under cl/ (kernels
# and headers, in cl/'s folders) in some program. A program added without running
# tools/validate-kernels again fails here, by name; so does a report with failures in it.
set -uo pipefail
usage="usage: portability_covers_programs.sh PATH/TO/pbfcl-dev PATH/TO/PORTABILITY.md PATH/TO/cl"
dev=${1:?$usage}
doc=${2:?$usage}
cldir=${3:?$usage}
fix="run tools/validate-kernels (see its --help) and commit docs/PORTABILITY.md"
[ -r "$doc" ] || { echo "FAIL: cannot read $doc: $fix"; exit 1; }
listed=$("$dev" kernel-builds --no-devices | grep -v '^#' | cut -f1,2 | sort -u) ||
  { echo "FAIL: '$dev kernel-builds --no-devices' failed"; exit 1; }
[ -n "$listed" ] || { echo "FAIL: pbfcl-dev kernel-builds listed no programs"; exit 1; }
# The "- name: a, b, c" lines of the "### Programs" section, as "name<TAB>a,b,c".
documented=$(sed -n '/^### Programs$/,/^## /p' "$doc" | sed -n 's/^- \([A-Za-z0-9_]*\): \(.*\)$/\1\t\2/p' |
  sed 's/, /,/g')
missing=0
while IFS=$'\t' read -r prog files; do
  if ! grep -qxF "$prog"$'\t'"$files" <<<"$documented"; then
    echo "FAIL: program $prog ($files) is not in the program list of $doc: $fix"
    missing=$((missing + 1))
  elif ! grep -q "^| $prog (options " "$doc"; then
    echo "FAIL: program $prog has no row in the compile matrix of $doc: $fix"
    missing=$((missing + 1))
  else
    echo "ok: $prog ($files) is in $doc"
  fi
done <<<"$listed"
while IFS= read -r -d '' f; do
  name=$(basename "$f")
  if ! grep -qxF "$name" <<<"$(cut -f2 <<<"$documented" | tr ',' '\n')"; then
    echo "FAIL: cl/${f#"$cldir"/} is in no program of $doc (is it in the program table, host/core/runtime/programs.c?): $fix"
    missing=$((missing + 1))
  fi
done < <(find "$cldir" \( -name '*.cl' -o -name '*.h' \) -type f -print0)
result=$(grep -m1 '^- Result: ' "$doc") || { echo "FAIL: $doc has no '- Result:' line: $fix"; exit 1; }
if ! grep -q ' 0 failed' <<<"$result"; then
  echo "FAIL: $doc reports failures ($result): fix them and $fix"
  missing=$((missing + 1))
fi
[ $missing -eq 0 ] || exit 1
echo "ok: all $(wc -l <<<"$listed") programs of pbfcl-dev kernel-builds and every file under cl/ are in $doc"
