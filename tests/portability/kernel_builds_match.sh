#!/usr/bin/env bash
# Every kernel build a simulation really makes (traced with PBFCL_TRACE_BUILDS) must appear in
# `pbfcl-dev kernel-builds`, the list tools/validate-kernels compiles for every vendor; otherwise
# the portability check would validate options pbfcl does not use. GRID_BITS depends on the
# scene, so it is compared as a placeholder.
set -euo pipefail
pbfcl=${1:?usage: kernel_builds_match.sh PATH/TO/pbfcl PATH/TO/pbfcl-dev}
dev=${2:?usage: kernel_builds_match.sh PATH/TO/pbfcl PATH/TO/pbfcl-dev}
if [ "$("$pbfcl" devices 2>/dev/null | grep -c '^\[')" -eq 0 ]; then
  echo "SKIP: no OpenCL device present (install pocl-opencl-icd)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
norm() { sed -E 's/-DGRID_BITS=[0-9]+/-DGRID_BITS=G/'; }
PBFCL_TRACE_BUILDS=1 "$pbfcl" run --scene dam-break --particles 500 --steps 1 \
  >/dev/null 2>"$tmp/trace" || { cat "$tmp/trace"; exit 1; }
grep -P '^# build\t' "$tmp/trace" | cut -f2,3 | norm | sort -u >"$tmp/used"
"$dev" kernel-builds | grep -v '^#' | cut -f2,3 | norm | sort -u >"$tmp/listed"
[ -s "$tmp/used" ] || { echo "FAIL: the run traced no kernel builds"; exit 1; }
missing=$(comm -23 "$tmp/used" "$tmp/listed")
if [ -n "$missing" ]; then
  echo "FAIL: builds made by pbfcl run but missing from pbfcl-dev kernel-builds:"
  echo "$missing"
  exit 1
fi
echo "ok: all $(wc -l <"$tmp/used") builds of a run are listed by pbfcl-dev kernel-builds"
