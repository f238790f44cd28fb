#!/usr/bin/env bash
# Every kernel program that `pbfcl-dev kernel-builds` lists (the library's program table,
# host/core/runtime/programs.c, and pbfcl-dev's own split_compress, which test_split_compress
# builds) must have run under Oclgrind in some *_oclgrind test: the programs each of them built are in
# DIR/<test>.builds (tests/portability/oclgrind_run.sh). A program added to the table and built by
# `pbfcl run` is covered by pbfcl_run_oclgrind without anything more; one that no Oclgrind test
# builds fails here, by name.
set -uo pipefail
dev=${1:?usage: oclgrind_covers_programs.sh PATH/TO/pbfcl-dev DIR TEST...}
dir=${2:?usage: oclgrind_covers_programs.sh PATH/TO/pbfcl-dev DIR TEST...}
shift 2
if ! command -v oclgrind >/dev/null 2>&1; then
  echo "SKIP: oclgrind is not installed (apt-get install oclgrind)"
  exit 77
fi
listed=$("$dev" kernel-builds | grep -v '^#' | cut -f1,2 | sort -u) ||
  { echo "FAIL: '$dev kernel-builds' failed"; exit 1; }
[ -n "$listed" ] || { echo "FAIL: pbfcl-dev kernel-builds listed no programs"; exit 1; }
missing=0
while IFS=$'\t' read -r prog files; do
  by=""
  for t in "$@"; do
    if [ ! -f "$dir/$t.builds" ]; then
      echo "FAIL: $dir/$t.builds is missing: did $t run (ctest runs it first, as a fixture)?"
      exit 1
    fi
    grep -qxF "$files" "$dir/$t.builds" && by+="${by:+, }$t"
  done
  if [ -n "$by" ]; then
    echo "ok: $prog ($files) ran under Oclgrind in $by"
  else
    echo "FAIL: program $prog ($files) is built by no Oclgrind test: add its kernel test to" \
      "PBFCL_OCLGRIND_TESTS in tests/CMakeLists.txt, or use it in \`pbfcl run\`"
    missing=$((missing + 1))
  fi
done <<<"$listed"
[ $missing -eq 0 ] || exit 1
echo "ok: all $(wc -l <<<"$listed") programs of pbfcl-dev kernel-builds ran under Oclgrind"
