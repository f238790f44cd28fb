#!/usr/bin/env bash
# The figures of docs/PERFORMANCE.md, "Issue 10 at the end": builds the core (Release, no demo,
# JSON, PNG or tests) into build-bench-pbf/ and prints, for the default solver and the
# accelerated one (--iterations 8 --chebyshev 0.95 --cfl 1 --contact-interval 2),
#   1. `pbfcl bench` on the dam-break scene at 256K, 1M, 4M and 16M particles: one row per run
#      with ms per frame (median), substeps per frame, ms per substep (median), particle-frames
#      per second and the density error of the measured frames; then bench's whole output at
#      1M (stages and kernels) for each solver;
#   2. the 300-frame 1M dam break of `pbfcl run`: wall seconds, substeps per frame and the
#      density error from its stats CSV (mean over the frames of the mean; the worst frame's
#      mean), twice for each solver.
# Usage: tools/bench-pbf-h200.sh [--device D]   (default: the first GPU)
# Everything goes to standard output; paste it into the issue or the document.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-core.sh
bench_core_setup build-bench-pbf "$@" # sets device and pbfcl
accelerated=(--iterations 8 --chebyshev 0.95 --cfl 1 --contact-interval 2)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. per frame at each size
echo
echo "## pbfcl bench --scene dam-break --particles N --steps 20 --warmup 5 (16M: --steps 5 --warmup 2)"
printf 'particles\tsolver\tms_per_frame\tsubsteps_per_frame\tms_per_substep\tparticle_frames_per_s\tdensity_error_mean_pct\tdensity_error_worst_frame_pct\n'
for n in 256000 1000000 4000000 16000000; do
  if [ "$n" = 16000000 ]; then steps=5 warmup=2; else steps=20 warmup=5; fi
  for solver in default accelerated; do
    opts=()
    [ "$solver" = accelerated ] && opts=("${accelerated[@]}")
    out="$tmp/bench-$n-$solver.out"
    "$pbfcl" bench "${device[@]}" --scene dam-break --particles "$n" --steps "$steps" \
      --warmup "$warmup" "${opts[@]}" >"$out" 2>&1 || { cat "$out"; exit 1; }
    # the line after the "# particles" header: n steps ms/frame pf/s substeps ms/substep ps/s
    row=$(awk '/^# particles/ { getline; print; exit }' "$out")
    err=$(sed -n 's/^# density error.*: mean \([0-9.]*\), largest step mean \([0-9.]*\),.*/\1\t\2/p' "$out")
    echo "$row" | awk -v s="$solver" -v e="$err" -F'\t' \
      '{ printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", $1, s, $3, $5, $6, $4, e }'
  done
done
for solver in default accelerated; do
  echo
  echo "## bench at 1M, $solver solver: stages and kernels"
  cat "$tmp/bench-1000000-$solver.out"
done

# 2. the 300-frame run
echo
echo "## pbfcl run --scene dam-break --particles 1000000 --steps 300 --stats FILE"
printf 'solver\twall_s\tsubsteps_per_frame\tdensity_error_mean_pct\tdensity_error_worst_frame_pct\n'
for solver in default accelerated; do
  opts=()
  [ "$solver" = accelerated ] && opts=("${accelerated[@]}")
  for run in 1 2; do
    csv="$tmp/run-$solver-$run.csv"
    "$pbfcl" run "${device[@]}" --scene dam-break --particles 1000000 --steps 300 "${opts[@]}" \
      --stats "$csv" >"$tmp/run.out" 2>&1 || { cat "$tmp/run.out"; exit 1; }
    # the run's summary: "pbfcl run: 300 steps, n particles, T s, ... (S substeps each), ..."
    line=$(grep '^pbfcl run: [0-9]* steps' "$tmp/run.out")
    wall=$(echo "$line" | sed -n 's/.* particles, \([0-9.]*\) s,.*/\1/p')
    substeps=$(echo "$line" | sed -n 's/.*(\([0-9.]*\) substeps each).*/\1/p')
    awk -F, -v s="$solver" -v w="$wall" -v u="$substeps" \
      'NR == 1 { for (c = 1; c <= NF; c++) if ($c == "density_error_avg") col = c; next }
       { sum += $col; if ($col > mx) mx = $col; k++ }
       END { printf "%s\t%s\t%s\t%.3f\t%.3f\n", s, w, u, sum / k, mx }' "$csv"
  done
done
echo "# wall seconds: the run's own time for its steps (after the kernel builds and the setup)"
