#!/usr/bin/env bash
# The figures of docs/PERFORMANCE.md, "Spray, foam and bubbles": builds the core (Release, no
# demo, JSON, PNG or tests) into build-bench-diffuse/ and prints `pbfcl bench` of the dam break
# at 256K, 1M and 4M particles, each twice, alternating: without diffuse particles (the solver
# alone: its rows must not change) and with --diffuse at the particle count (the `diffuse` row,
# its kernels, and how many diffuse particles the last frame held and how many were dropped).
# The warm-up is 60 frames so that the wave has broken and the measured frames make spray.
# Usage: tools/bench-diffuse-h200.sh [--device D]   (default: the first GPU)
# Everything goes to standard output; paste it into the issue or the document.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-core.sh
bench_core_setup build-bench-diffuse "$@" # sets device and pbfcl
for n in 256000 1000000 4000000; do
  for run in 1 2; do
    for diffuse in off on; do
      extra=()
      [ "$diffuse" = on ] && extra=(--diffuse "$n")
      echo
      echo "## bench --particles $n --steps 20 --warmup 60 ${extra[*]} (run $run)"
      "$pbfcl" bench "${device[@]}" --scene dam-break --particles "$n" --steps 20 --warmup 60 \
        "${extra[@]}"
    done
  done
done
