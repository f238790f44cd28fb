#!/usr/bin/env bash
# The figures of docs/PERFORMANCE.md, "The scaling law of the density solve" (issue 29): builds
# the core (Release, no demo, JSON, PNG or tests) into build-bench-multilevel/ and prints, for
# the default solver and the multilevel coarse correction (solver.multilevel):
#   default      the default solver (4 plain Jacobi iterations, no coarse correction)
#   ml4          --multilevel 4: each of the 4 iterations ends with a coarse correction
#   ml2          --iterations 2 --multilevel 2: half the iterations, both corrected
#   ml2-cfl1     --iterations 2 --multilevel 2 --cfl 1: and substeps that let a particle move h
#   ml1-cfl1     --iterations 2 --multilevel 1 --cfl 1: the first iteration corrected, not both
#   ml1-cfl1.5   the same at --cfl 1.5 (above the contacts' safe 1: the solver warns; with the
#                surface on the face a 1M and a 16M frame cut lists short and bench marks them
#                BROKEN, docs/PERFORMANCE.md, "The free surface on the face")
#   1. `pbfcl bench --scene dam-break --particles N --steps 20 --warmup 5` at 256K, 1M and 4M:
#      one row per run with ms per frame (median and mean), substeps per frame, ms per substep,
#      the density error of the measured frames and bench's verdict (ok, or BROKEN: bench
#      exit 3, its times are not a speed); then bench's whole output at 1M for each solver;
#   2. the 300-frame 1M dam break of `pbfcl run`: wall seconds, substeps per frame, the density
#      error from its stats CSV (mean over the frames; the worst frame) and the fastest
#      particle, once for each solver.
# About 6 minutes on an H200. Usage: tools/bench-multilevel-h200.sh [--device D] (default: the
# first GPU). Everything goes to standard output. For a dry run on a CPU, smaller sizes:
#   PBFCL_BENCH_SIZES="5000 20000" PBFCL_RUN_PARTICLES=5000 PBFCL_RUN_STEPS=10 tools/bench-...
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-core.sh
bench_core_setup build-bench-multilevel "$@" # sets device and pbfcl
solvers=(default ml4 ml2 ml2-cfl1 ml1-cfl1 ml1-cfl1.5)
read -r -a sizes <<<"${PBFCL_BENCH_SIZES:-256000 1000000 4000000}"
run_n=${PBFCL_RUN_PARTICLES:-1000000}
run_steps=${PBFCL_RUN_STEPS:-300}
shown=${sizes[1]:-${sizes[0]}} # the size whose whole bench output is printed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. per frame at each size
echo
echo "## pbfcl bench --scene dam-break --particles N --steps 20 --warmup 5"
printf 'particles\tsolver\tms_per_frame\tmean_ms_per_frame\tsubsteps_per_frame\tms_per_substep\tdensity_error_mean_pct\tdensity_error_worst_frame_pct\tverdict\n'
for n in "${sizes[@]}"; do
  for solver in "${solvers[@]}"; do
    bench_core_multilevel_options "$solver"
    bench_core_dam_break "$pbfcl" "$n" "$tmp/bench-$n-$solver.out" "${opts[@]}"
    echo "$row" | awk -v s="$solver" -v e="$density_mean"$'\t'"$density_worst" -v m="$mean_ms" \
      -v v="$verdict" -F'\t' \
      '{ printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", $1, s, $3, m, $5, $6, e, v }'
  done
done
for solver in "${solvers[@]}"; do
  echo
  echo "## bench at $shown particles, $solver: stages and kernels"
  cat "$tmp/bench-$shown-$solver.out"
done

# 2. the 300-frame run
echo
echo "## pbfcl run --scene dam-break --particles $run_n --steps $run_steps --stats FILE"
printf 'solver\twall_s\tsubsteps_per_frame\tdensity_error_mean_pct\tdensity_error_worst_frame_pct\tmax_speed_m_s\n'
for solver in "${solvers[@]}"; do
  bench_core_multilevel_options "$solver"
  csv="$tmp/run-$solver.csv"
  if ! "$pbfcl" run "${device[@]}" --scene dam-break --particles "$run_n" --steps "$run_steps" \
    "${opts[@]}" --stats "$csv" >"$tmp/run.out" 2>&1; then
    echo "# $solver: the run stopped:"
    tail -5 "$tmp/run.out"
    continue
  fi
  # the run's summary: "pbfcl run: 300 steps, n particles, T s, ... (S substeps each), ..."
  line=$(grep '^pbfcl run: [0-9]* steps' "$tmp/run.out")
  wall=$(echo "$line" | sed -n 's/.* particles, \([0-9.]*\) s,.*/\1/p')
  substeps=$(echo "$line" | sed -n 's/.*(\([0-9.]*\) substeps each).*/\1/p')
  awk -F, -v s="$solver" -v w="$wall" -v u="$substeps" \
    'NR == 1 { for (c = 1; c <= NF; c++) { if ($c == "density_error_avg") col = c;
                                           if ($c == "max_speed") sp = c }; next }
     { sum += $col; if ($col > mx) mx = $col; if ($sp > v) v = $sp; k++ }
     END { printf "%s\t%s\t%s\t%.3f\t%.3f\t%.2f\n", s, w, u, sum / k, mx, v }' "$csv"
done
echo "# wall seconds: the run's own time for its steps (after the kernel builds and the setup)"
