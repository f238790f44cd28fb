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
