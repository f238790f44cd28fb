#!/usr/bin/env bash
# The multilevel correction's launches against a baseline commit (docs/PERFORMANCE.md, "The
# scaling law of the density solve", issue 29): builds this tree and a baseline source tree the
# way the GPU figures are made (tools/bench-core.sh: Release, no demo, JSON, PNG or tests), then
# runs `pbfcl bench --scene SCENE --particles N --steps 20 --warmup 5` with each of SOLVERS (tools/
# bench-core.sh's names), the two trees interleaved, ROUNDS times, and
# prints one row per run (ms per frame, median and mean; substeps; ms per substep; launches per
# frame, all and the correction's ml_*; density error; bench's verdict), then the last round's
# per-kernel table of each tree and solver.
# Usage: tools/bench-multilevel-compare-h200.sh --base SRC [--device D]
#   SRC: the baseline's source: a directory, a .tar or .tar.gz of it (e.g. made where the history
#   is with `git archive --format=tar.gz -o pbfcl-base.tar.gz 00f5d8e`), or a commit of this
#   repository's history (git archive). Environment: PBFCL_BENCH_PARTICLES (default 1000000),
#   PBFCL_BENCH_ROUNDS (default 2), PBFCL_BENCH_SCENE (default dam-break), PBFCL_BENCH_SOLVERS
#   (default "default ml1-cfl1": the default solver and the fast one), PBFCL_BUILD_JOBS. About 4
#   minutes on an H200 with its builds.
# A dry run on a CPU: PBFCL_BENCH_PARTICLES=20000 PBFCL_BENCH_ROUNDS=1 ... --device Portable
set -euo pipefail
cd "$(dirname "$0")/.."
base=
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --base) base=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -n "$base" ] || { echo "usage: $0 --base SRC [--device D]" >&2; exit 2; }
n=${PBFCL_BENCH_PARTICLES:-1000000}
rounds=${PBFCL_BENCH_ROUNDS:-2}
bench_scene=${PBFCL_BENCH_SCENE:-dam-break}
solvers=${PBFCL_BENCH_SOLVERS:-default ml1-cfl1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the baseline's source into base_src
if [ -d "$base" ]; then
  base_src=$(cd "$base" && pwd)
elif [ -f "$base" ]; then
  base_src="$PWD/build-bench-ml-base-src"
  rm -rf "$base_src"
  mkdir -p "$base_src"
  tar -xf "$base" -C "$base_src"
  # a tarball with one top folder (git archive --prefix) or none
  top=$(ls "$base_src")
  [ "$(echo "$top" | wc -l)" = 1 ] && [ -f "$base_src/$top/CMakeLists.txt" ] && base_src="$base_src/$top"
else
  base_src="$PWD/build-bench-ml-base-src"
  rm -rf "$base_src"
  mkdir -p "$base_src"
  git archive "$base" | tar -x -C "$base_src"
fi
[ -f "$base_src/CMakeLists.txt" ] || { echo "$0: no CMakeLists.txt in the baseline $base" >&2; exit 2; }

. tools/bench-core.sh
bench_core_setup build-bench-ml-compare ${args[@]+"${args[@]}"} # this tree: sets device, pbfcl
new=$pbfcl
base_build="$PWD/build-bench-ml-base"
rm -f "$base_build/CMakeCache.txt" # made from another source folder, cmake would refuse it
cmake -S "$base_src" -B "$base_build" -DCMAKE_BUILD_TYPE=Release -DPBFCL_WITH_DEMO=OFF \
  -DPBFCL_WITH_JSON=OFF -DPBFCL_WITH_PNG=OFF -DPBFCL_WITH_TESTS=OFF >"$tmp/base-configure.log" ||
  { cat "$tmp/base-configure.log"; exit 1; }
cmake --build "$base_build" -j "${PBFCL_BUILD_JOBS:-$(nproc)}" >/dev/null
echo "# baseline: $base ($("$base_build/pbfcl" --version))"

echo
echo "## pbfcl bench --scene $bench_scene --particles $n --steps 20 --warmup 5"
printf 'round\ttree\tsolver\tms_per_frame\tmean_ms_per_frame\tsubsteps_per_frame\tms_per_substep\tlaunches_per_frame\tml_launches_per_frame\tdensity_error_mean_pct\tverdict\n'
for round in $(seq "$rounds"); do
  for solver in $solvers; do
    for tree in base new; do
      bench_core_multilevel_options "$solver"
      bin=$new
      [ "$tree" = base ] && bin="$base_build/pbfcl"
      out="$tmp/$tree-$solver.out"
      bench_core_dam_break "$bin" "$n" "$out" "${opts[@]}"
      # the kernel table: kernel ms_per_step launches_per_step us_per_launch
      launches=$(awk -F'\t' '/^kernel\tms_per_step/ { t = 1; next } t && NF == 4 { a += $3;
        if ($1 ~ /^ml_/) m += $3 } t && NF != 4 { t = 0 } END { printf "%.1f\t%.1f", a, m }' "$out")
      echo "$row" | awk -v r="$round" -v t="$tree" -v s="$solver" -v m="$mean_ms" -v l="$launches" \
        -v e="$density_mean" -v v="$verdict" -F'\t' \
        '{ printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, t, s, $3, m, $5, $6, l, e, v }'
    done
  done
done
for solver in $solvers; do
  for tree in base new; do
    echo
    echo "## bench at $n particles, $solver, $tree (last round): stages and kernels"
    cat "$tmp/$tree-$solver.out"
  done
done
