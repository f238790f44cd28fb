# Sourced by the tools/bench-*-h200.sh scripts (from the source root):
#   bench_core_setup BUILD_DIR [--device D]
# takes --device D into the array device (empty: the first GPU), builds the core as the GPU
# figures are made (Release, no demo, JSON, PNG or tests) into BUILD_DIR, sets pbfcl to its
# program, and prints the commit, pbfcl's version and the devices. A caller's array
# bench_cmake_extra, if set, adds its words to the configure step (e.g. MPI's hints); the
# configure step's output goes to BUILD_DIR/configure.log; $PBFCL_BUILD_JOBS caps the build's jobs
# (default: the cores).
bench_core_setup() {
  local build=$1
  shift
  device=()
  if [ $# -gt 0 ]; then
    [ "$1" = "--device" ] && [ $# -eq 2 ] || { echo "usage: $0 [--device D]" >&2; exit 2; }
    device=(--device "$2")
  fi
  mkdir -p "$build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPBFCL_WITH_DEMO=OFF -DPBFCL_WITH_JSON=OFF \
    -DPBFCL_WITH_PNG=OFF -DPBFCL_WITH_TESTS=OFF ${bench_cmake_extra[@]+"${bench_cmake_extra[@]}"} \
    >"$build/configure.log" || { cat "$build/configure.log"; exit 1; }
  cmake --build "$build" -j "${PBFCL_BUILD_JOBS:-$(nproc)}" >/dev/null
  pbfcl="$build/pbfcl"
  local commit
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  git diff --quiet HEAD -- 2>/dev/null || commit="$commit with uncommitted changes"
  echo "# commit $commit; $("$pbfcl" --version)"
  "$pbfcl" devices "${device[@]}"
}

# The multilevel figures' dam break (tools/bench-multilevel-h200.sh, and against a baseline
# tools/bench-multilevel-compare-h200.sh):
#   bench_core_dam_break PROGRAM N OUT [OPTIONS...]
# runs `PROGRAM bench --scene dam-break --particles N --steps 20 --warmup 5 OPTIONS` on the
# device of bench_core_setup, its output into OUT, and sets verdict (ok, or BROKEN: bench's exit
# 3, its times are not a speed; another failure prints OUT and exits), row (the line under
# "# particles": particles, steps, ms per frame, particle steps/s, substeps per frame, ms per
# substep, particle substeps/s), density_mean and density_worst (the density error of the
# measured frames, %: their mean and the worst frame's mean) and mean_ms (the mean frame).
bench_core_dam_break() {
  local program=$1 n=$2 out=$3 rc=0
  shift 3
  "$program" bench ${device[@]+"${device[@]}"} --scene "${bench_scene:-dam-break}" --particles "$n" --steps 20 \
    --warmup 5 "$@" >"$out" 2>&1 || rc=$?
  case $rc in
    0) verdict=ok ;;
    3) verdict=BROKEN ;;
    *) cat "$out"; exit 1 ;;
  esac
  row=$(awk '/^# particles/ { getline; print; exit }' "$out")
  density_mean=$(sed -n 's/^# density error.*: mean \([0-9.]*\),.*/\1/p' "$out")
  density_worst=$(sed -n 's/^# density error.*, largest step mean \([0-9.]*\),.*/\1/p' "$out")
  mean_ms=$(sed -n 's/^# step time over the measured steps: mean \([0-9.]*\) ms.*/\1/p' "$out")
}

# The options of the multilevel figures' solver $1 into the array opts: default (4 plain Jacobi
# iterations), ml4 (--multilevel 4), ml2 (--iterations 2 --multilevel 2), ml2-cfl1 (and --cfl 1),
# ml1-cfl1 (--iterations 2 --multilevel 1 --cfl 1: only the first iteration corrected).
bench_core_multilevel_options() {
  case $1 in
    default) opts=() ;;
    ml4) opts=(--multilevel 4) ;;
    ml2) opts=(--iterations 2 --multilevel 2) ;;
    ml2-cfl1) opts=(--iterations 2 --multilevel 2 --cfl 1) ;;
    ml1-cfl1) opts=(--iterations 2 --multilevel 1 --cfl 1) ;;
    ml1-cfl1.5) opts=(--iterations 2 --multilevel 1 --cfl 1.5) ;;
    *) echo "bench_core_multilevel_options: no solver '$1'" >&2; exit 2 ;;
  esac
}
