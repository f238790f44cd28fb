#!/usr/bin/env bash
# The figures of docs/PERFORMANCE.md, "Weakly compressible SPH against PBF": builds the core
# (Release, no demo, JSON, PNG or tests) into build-bench-sph/ and prints, for the sph and the
# pbf method on the dam-break scene,
#   1. `pbfcl bench` at 256K, 1M and 4M particles: ms per frame (step) and per stage, substeps
#      per frame, the per-kernel times and the density error of the measured frames;
#   2. the same 1M dam break run headless for 1 simulated second (60 frames of 1/60 s) with
#      each method: wall seconds per simulated second, substeps per frame and the density
#      error (mean over the frames of the mean, and the largest particle's) from its stats CSV.
# Usage: tools/bench-sph-h200.sh [--device D]   (default: the first GPU)
# Everything goes to standard output; paste it into the issue or the document.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-core.sh
bench_core_setup build-bench-sph "$@" # sets device and pbfcl

# 1. per frame and per stage. sph takes hundreds of substeps per frame (its time step is the
# CFL condition of the speed of sound), so it measures fewer frames.
for n in 256000 1000000 4000000; do
  for method in sph pbf; do
    if [ "$method" = sph ]; then steps=5 warmup=1; else steps=20 warmup=5; fi
    [ "$n" = 4000000 ] && [ "$method" = sph ] && steps=3
    echo
    echo "## bench --solver $method --particles $n --steps $steps --warmup $warmup"
    "$pbfcl" bench "${device[@]}" --scene dam-break --solver "$method" --particles "$n" \
      --steps "$steps" --warmup "$warmup"
  done
done

# 2. one simulated second of the 1M dam break with each method, as a user runs it.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo
echo "## 1M dam break, 60 frames (1 simulated second), pbfcl run"
printf 'method\twall_s_per_simulated_s\tsubsteps_per_frame\tdensity_error_mean_pct\tdensity_error_max_pct\n'
for method in sph pbf; do
  csv="$tmp/$method.csv"
  "$pbfcl" run "${device[@]}" --scene dam-break --solver "$method" --particles 1000000 \
    --steps 60 --stats "$csv" >"$tmp/$method.out" 2>&1 || { cat "$tmp/$method.out"; exit 1; }
  # the run's summary: "pbfcl run: 60 steps, n particles, T s, ... (S substeps each), ..."
  line=$(grep '^pbfcl run: [0-9]* steps' "$tmp/$method.out")
  wall=$(echo "$line" | sed -n 's/.* particles, \([0-9.]*\) s,.*/\1/p')
  substeps=$(echo "$line" | sed -n 's/.*(\([0-9.]*\) substeps each).*/\1/p')
  awk -F, -v m="$method" -v w="$wall" -v s="$substeps" \
    'NR > 1 { sum += $4; if ($5 > mx) mx = $5; k++; t = $2 }
     END { printf "%s\t%.2f\t%s\t%.4f\t%.4f\n", m, w / t, s, sum / k, mx }' "$csv"
  echo "# $line"
done
echo "# wall seconds: the run's own time for its steps (after the kernel builds and the setup)"
