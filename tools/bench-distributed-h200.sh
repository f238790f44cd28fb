#!/usr/bin/env bash
# The figures of a dam break split over several GPUs (issue 31; docs/DISTRIBUTED.md): builds
# the core with MPI (Release, no demo, JSON, PNG or tests) into build-bench-distributed/ and
# prints, on 1, 2, 4, 8 GPUs (as many as `nvidia-smi -L`, else the OpenCL GPU count, gives):
#   1. strong scaling: `pbfcl bench --scene dam-break --particles N` at 16M and 64M, one row per
#      GPU count: ms per frame (median and mean; one GPU: the device time of bench's stages,
#      split: the slowest rank's wall clock), the wall clock per frame (mean, the same measure
#      on one GPU as split: what the speed-up is taken from), substeps per frame, ms per
#      substep, the exchanges per frame (the slowest rank's ms in them and in MPI, their share
#      of the frame, MB sent per substep, ghosts per rank), the density error and bench's
#      verdict (ok; BROKEN: bench exit 3, its times are no speed; TIMEOUT; FAILED);
#   2. weak scaling: 16M particles per GPU, the same columns, efficiency = one GPU's wall
#      clock per frame over the split's;
#   3. accuracy: `pbfcl run --stats` of the dam break (4M particles, 100 frames) on each GPU
#      count against one GPU: the density error (last frame, and the largest difference over
#      the frames), the kinetic energy, and at the middle and last frames the front (the
#      farthest particle along x) and the particles' displacement from one GPU's by id (RMS and
#      largest), read from the frames rank 0 gathers.
# Then bench's whole output (stages, kernels, exchanges) of each split at the first size.
#
# It runs as root (Open MPI's --allow-run-as-root). Open MPI need not be installed: MPI_HOME is a
# folder with bin/ (mpirun, mpirun.openmpi or orterun), lib/ and include/ (or Debian's
# lib/<triplet>/openmpi/{include,lib}), e.g. Debian's .debs unpacked with dpkg -x into /tmp/mpi
# (MPI_HOME=/tmp/mpi/usr; OPAL_PREFIX defaults to it); CMake gets its header, library and
# mpirun, and the runs its bin/ and lib/ folders on PATH and LD_LIBRARY_PATH.
#
# Usage: tools/bench-distributed-h200.sh [--device LIST] (default: rank i takes its machine's
# GPU i; a list A,B,... gives rank i entry i, and one GPU its first entry). Tables go to
# standard output, progress lines (# [time] ...) to standard error. Each case has a time limit
# (PBFCL_CASE_TIMEOUT, default 300 s): one stuck case is reported TIMEOUT and the rest go on.
# Not yet run on GPUs: from one H200's 0.7-0.8 s per 16M frame (docs/PERFORMANCE.md) the cases
# take about 9 minutes on 8 GPUs after the build, so where a command may run 10 minutes
# PBFCL_BENCH_PARTS="strong" then "weak accuracy" splits it in two (the build is kept).
# Knobs (environment), with a dry run on a CPU's OpenCL as example:
#   PBFCL_BENCH_RANKS="1 2"            GPU counts (default: 1 2 4 8 up to the GPUs found; the
#                                      first is the baseline and should be 1)
#   PBFCL_BENCH_SIZES="4000 8000"      strong scaling's particles (default "16000000 64000000")
#   PBFCL_BENCH_PER_GPU=4000           weak scaling's particles per GPU (default 16000000)
#   PBFCL_BENCH_STEPS=3 PBFCL_BENCH_WARMUP=1   measured and warm-up frames (default: 20 and 5
#                                      up to 4M particles, 5 and 2 up to 16M, 3 and 1 above)
#   PBFCL_RUN_PARTICLES=4000 PBFCL_RUN_STEPS=10   the accuracy run (default 4000000, 100)
#   PBFCL_BENCH_PARTS="strong weak accuracy"      which sections (default all three)
#   PBFCL_RANK_ROOM=2                  a split bench's room on each rank, in shares of N/K particles
#                                      (--rank-capacity; default 2; 0: room for all N on every
#                                      rank, 580 bytes each: 74 GB per GPU at 128M)
#   PBFCL_MPIRUN_FLAGS="--bind-to none"           mpirun's flags besides -np and root's
#   PBFCL_BUILD_JOBS=2                 the build's jobs (default: the cores)
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/bench-core.sh
export NCCL_NVLS_ENABLE=0 # kept off on these machines (KINDS.md); OpenCL does not use NCCL
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
die() { echo "bench-distributed: $*" >&2; exit 2; }
progress() { echo "# [$(date -u +%H:%M:%S)] $*" >&2; }

devlist=""
if [ $# -gt 0 ]; then
  [ "$1" = "--device" ] && [ $# -eq 2 ] || die "usage: $0 [--device LIST]"
  devlist=$2
fi

# --- Open MPI: installed, or unpacked under MPI_HOME -----------------------------------------
first_file() { # the first of the paths given that is a file
  local f
  for f in "$@"; do [ -f "$f" ] && { echo "$f"; return 0; }; done
  return 1
}
bench_cmake_extra=(-DPBFCL_WITH_MPI=ON)
if [ -n "${MPI_HOME:-}" ]; then
  [ -d "$MPI_HOME" ] || die "MPI_HOME '$MPI_HOME' is no folder; give the folder holding Open MPI's bin/, lib/ and include/ (e.g. /tmp/mpi/usr after dpkg -x of Debian's openmpi .debs)"
  MPI_HOME=$(cd "$MPI_HOME" && pwd)
  export MPI_HOME OPAL_PREFIX=${OPAL_PREFIX:-$MPI_HOME}
  mpirun=$(first_file "$MPI_HOME"/bin/mpirun "$MPI_HOME"/bin/mpirun.openmpi "$MPI_HOME"/bin/orterun \
    "$MPI_HOME"/bin/prterun "$MPI_HOME"/bin/mpiexec) ||
    die "no mpirun, mpirun.openmpi or orterun in $MPI_HOME/bin (is MPI_HOME the folder above bin/? openmpi-bin unpacked?)"
  header=$(first_file "$MPI_HOME"/include/mpi.h "$MPI_HOME"/include/openmpi/mpi.h \
    "$MPI_HOME"/lib/*/openmpi/include/mpi.h "$MPI_HOME"/lib*/openmpi/include/mpi.h) ||
    die "no mpi.h under $MPI_HOME/include or $MPI_HOME/lib/*/openmpi/include (libopenmpi-dev unpacked?)"
  library=$(first_file "$MPI_HOME"/lib/libmpi.so "$MPI_HOME"/lib64/libmpi.so "$MPI_HOME"/lib/*/libmpi.so \
    "$MPI_HOME"/lib/*/openmpi/lib/libmpi.so "$MPI_HOME"/lib/libmpi.so.* "$MPI_HOME"/lib/*/libmpi.so.*) ||
    die "no libmpi.so under $MPI_HOME/lib (libopenmpi3 and libopenmpi-dev unpacked?)"
  bench_cmake_extra+=(-DMPI_SKIP_COMPILER_WRAPPER=ON -DMPI_C_HEADER_DIR="$(dirname "$header")"
    -DMPI_C_LIB_NAMES=mpi -DMPI_mpi_LIBRARY="$library" -DMPIEXEC_EXECUTABLE="$mpirun")
  export PATH="$MPI_HOME/bin:$PATH"
  libdirs="$(dirname "$(readlink -f "$library")"):$(dirname "$library")"
  for d in "$MPI_HOME"/lib "$MPI_HOME"/lib/*-linux-gnu "$MPI_HOME"/lib/*-linux-gnu/openmpi/lib; do
    [ -d "$d" ] && libdirs="$libdirs:$d"
  done
  export LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  mpirun=$(command -v mpirun) ||
    die "no mpirun on PATH: install Open MPI (tools/install-deps --mpi) or set MPI_HOME to an unpacked one"
fi
read -r -a mpirun_flags <<<"${PBFCL_MPIRUN_FLAGS:---bind-to none}"
mpirun_cmd=("$mpirun" --allow-run-as-root --oversubscribe "${mpirun_flags[@]}")

bench_core_setup build-bench-distributed # sets pbfcl; prints the commit, version and devices
if ! grep -q "MPI: yes" build-bench-distributed/configure.log; then
  grep "MPI" build-bench-distributed/configure.log >&2 || true
  die "CMake found no MPI (see above); set MPI_HOME to Open MPI's folder"
fi
version=$("$mpirun" --version 2>&1 | head -1) || die "'$mpirun --version' failed: $version (its libraries on LD_LIBRARY_PATH? OPAL_PREFIX=${OPAL_PREFIX:-unset})"
echo "# mpirun: $mpirun ($version); pbfcl links $(ldd "$pbfcl" | awk '/libmpi/ { print $3 }')"

# --- GPUs and cases ----------------------------------------------------------------------------
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
[ "$gpus" -gt 0 ] || gpus=$("$pbfcl" devices 2>/dev/null | grep -c 'type *GPU' || true)
if [ -n "${PBFCL_BENCH_RANKS:-}" ]; then
  read -r -a ranks <<<"$PBFCL_BENCH_RANKS"
else
  ranks=(1)
  for k in 2 4 8; do [ "$k" -le "$gpus" ] && ranks+=("$k"); done
fi
[ "${ranks[0]}" = 1 ] || die "PBFCL_BENCH_RANKS must start with 1 (the baseline): '${ranks[*]}'"
read -r -a sizes <<<"${PBFCL_BENCH_SIZES:-16000000 64000000}"
per_gpu=${PBFCL_BENCH_PER_GPU:-16000000}
run_n=${PBFCL_RUN_PARTICLES:-4000000}
run_steps=${PBFCL_RUN_STEPS:-100}
parts=" ${PBFCL_BENCH_PARTS:-strong weak accuracy} "
limit=${PBFCL_CASE_TIMEOUT:-300}
echo "# GPUs found: $gpus; GPU counts benched: ${ranks[*]}; a case's time limit: $limit s"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start_all=$(date +%s)

# the command of K ranks (one GPU: pbfcl alone), with the --device list or its first entry
launch() { # K: into the array cmd
  if [ "$1" -eq 1 ]; then
    cmd=("$pbfcl")
    [ -z "$devlist" ] || cmd+=(--device "${devlist%%,*}")
  else
    cmd=("${mpirun_cmd[@]}" -np "$1" "$pbfcl")
    [ -z "$devlist" ] || cmd+=(--device "$devlist")
  fi
}
frames() { # N: measured and warm-up frames into steps, warmup
  if [ "$1" -le 4000000 ]; then steps=20 warmup=5; elif [ "$1" -le 16000000 ]; then steps=5 warmup=2
  else steps=3 warmup=1; fi
  steps=${PBFCL_BENCH_STEPS:-$steps} warmup=${PBFCL_BENCH_WARMUP:-$warmup}
}

# One bench of N particles on K GPUs: its output in $tmp/bench-N-K.out, its row in
# $tmp/bench-N-K.row (the table's columns before speedup): verdict last.
bench_case() { # N K
  local n=$1 k=$2 out="$tmp/bench-$1-$2.out" rc=0 t0
  frames "$n"
  launch "$k"
  local room=${PBFCL_RANK_ROOM:-2} capacity=()
  if [ "$k" -gt 1 ] && [ "$room" != 0 ]; then
    local c
    c=$(awk -v r="$room" -v n="$n" -v k="$k" 'BEGIN { printf "%.0f", r * n / k + 0.5 }')
    [ "$c" -lt "$n" ] && capacity=(--rank-capacity "$c")
  fi
  progress "bench: $n particles on $k GPU(s), $steps frames after $warmup ${capacity[*]}"
  t0=$(date +%s)
  timeout -k 20 "$limit" "${cmd[@]}" bench --scene dam-break --particles "$n" --steps "$steps" \
    --warmup "$warmup" ${capacity[@]+"${capacity[@]}"} >"$out" 2>&1 || rc=$?
  local verdict
  case $rc in
    0) verdict=ok ;;
    3) verdict=BROKEN ;;
    124 | 137) verdict=TIMEOUT ;;
    *) verdict=FAILED ;;
  esac
  progress "  $verdict (status $rc) after $(($(date +%s) - t0)) s"
  if [ "$verdict" = TIMEOUT ] || [ "$verdict" = FAILED ]; then
    printf '%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$n" "$k" "$verdict" >"$tmp/bench-$n-$k.row"
    echo "# $n particles on $k GPU(s): $verdict (status $rc); the output's end:" >>"$tmp/failures"
    tail -5 "$out" | sed 's/^/#   /' >>"$tmp/failures"
    return 0
  fi
  # bench's row: particles steps ms/frame pf/s substeps ms/substep ps/s
  local row err mean wall ex
  row=$(awk '/^# particles/ { getline; print; exit }' "$out")
  err=$(sed -n 's/^# density error.*: mean \([0-9.]*\), largest step mean \([0-9.]*\),.*/\1\t\2/p' "$out")
  mean=$(sed -n 's/^# step time over the measured steps: mean \([0-9.]*\) ms.*/\1/p' "$out")
  wall=$(sed -n 's/^# wall clock: \([0-9.]*\) ms per step.*/\1/p' "$out")
  # the exchanges' medians (none on one GPU)
  ex=$(awk -F'\t' '$1 == "exchange_ms" { e = $2 } $1 == "mpi_ms" { m = $2 }
                   $1 == "exchange_share_pct" { s = $2 } $1 == "mb_sent_per_substep" { b = $2 }
                   $1 == "ghosts_per_rank" { g = $2 }
                   END { if (e == "") print "0\t0\t0\t0\t0"; else printf "%s\t%s\t%s\t%s\t%.0f\n", e, m, s, b, g }' "$out")
  echo "$row" | awk -F'\t' -v k="$k" -v mean="$mean" -v wall="$wall" -v ex="$ex" -v e="$err" -v v="$verdict" \
    '{ printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", $1, k, $3, mean, wall, $5, $6, ex, e, v }' \
    >"$tmp/bench-$n-$k.row"
}
header='particles\tgpus\tms_per_frame\tmean_ms_per_frame\twall_ms_per_frame\tsubsteps_per_frame\tms_per_substep\texchange_ms\tmpi_ms\texchange_share_pct\tmb_sent_per_substep\tghosts_per_rank\tdensity_error_mean_pct\tdensity_error_worst_frame_pct\tverdict\t%s\n'
# the row of N on K with the ratio of base's wall clock per frame to its own
print_row() { # N K BASE_ROW_FILE
  awk -F'\t' -v base="$(cut -f5 "$3" 2>/dev/null)" 'BEGIN { OFS = "\t" }
    { r = ($5 > 0 && base > 0) ? sprintf("%.2f", base / $5) : "-"; print $0, r }' "$tmp/bench-$1-$2.row"
}

if [[ $parts == *" strong "* ]]; then
  echo
  echo "## strong scaling: pbfcl bench --scene dam-break --particles N on 1..K GPUs"
  # shellcheck disable=SC2059
  printf "$header" speedup
  for n in "${sizes[@]}"; do
    for k in "${ranks[@]}"; do
      bench_case "$n" "$k"
      print_row "$n" "$k" "$tmp/bench-$n-1.row"
    done
  done
  echo "# ms_per_frame, mean_ms_per_frame: one GPU: bench's device time (the stages' sum), split:"
  echo "# the slowest rank's wall clock per frame; wall_ms_per_frame is the wall clock on both, the"
  echo "# speed-up one GPU's over it; the exchanges' columns are medians over the measured frames"
fi

if [[ $parts == *" weak "* ]]; then
  echo
  echo "## weak scaling: pbfcl bench --scene dam-break --particles $per_gpu*K on K GPUs"
  # shellcheck disable=SC2059
  printf "$header" efficiency
  for k in "${ranks[@]}"; do
    n=$((per_gpu * k))
    [ -f "$tmp/bench-$n-$k.row" ] || bench_case "$n" "$k"
    print_row "$n" "$k" "$tmp/bench-$per_gpu-1.row"
  done
  echo "# efficiency: one GPU's wall clock per frame at $per_gpu particles over the split's"
fi

if [[ $parts == *" accuracy "* ]]; then
  echo
  echo "## accuracy: pbfcl run --scene dam-break --particles $run_n --steps $run_steps --stats, split against one GPU"
  mid=$((run_steps / 2))
  [ "$mid" -ge 1 ] || mid=1
  for k in "${ranks[@]}"; do
    launch "$k"
    progress "run: $run_n particles, $run_steps frames on $k GPU(s)"
    t0=$(date +%s)
    rc=0
    timeout -k 20 "$limit" "${cmd[@]}" run --scene dam-break --particles "$run_n" --steps "$run_steps" \
      --stats "$tmp/run-$k.csv" --export "$tmp/frames-$k" --every "$mid" >"$tmp/run-$k.out" 2>&1 || rc=$?
    progress "  status $rc after $(($(date +%s) - t0)) s"
    if [ $rc -ne 0 ]; then
      echo "# $k GPU(s): the run stopped (status $rc$([ $rc -eq 124 ] && echo ", TIMEOUT")):" >>"$tmp/failures"
      tail -5 "$tmp/run-$k.out" | sed 's/^/#   /' >>"$tmp/failures"
      rm -f "$tmp/run-$k.csv"
    fi
    grep -h '^pbfcl run: [0-9]* steps\|^pbfcl run: exchanges' "$tmp/run-$k.out" | sed "s/^/# $k GPU(s): /" || true
  done
  python3 - "$tmp" "$mid" "$run_steps" "${ranks[@]}" <<'PY'
import csv, os, struct, sys
tmp, mid, last, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
try:
    import numpy as np
except ImportError:
    np = None

def frame(k, step):
    """Positions by id of frame step of the run on k GPUs (PLY, binary little-endian)."""
    path = f"{tmp}/frames-{k}/frame_{step:05d}.ply"
    raw = open(path, "rb").read()
    head, body = raw.split(b"end_header\n", 1)
    lines = head.decode().splitlines()
    n = int(next(l.split()[2] for l in lines if l.startswith("element vertex")))
    props = [l.split() for l in lines if l.startswith("property")]
    code = {"float": "f", "uint": "u", "int": "i"}  # NumPy's kinds ("<u4"; "<I4" is refused)
    names = [p[2] for p in props]
    if np is not None:
        dt = np.dtype([(p[2], "<" + code[p[1]] + "4") for p in props])
        a = np.frombuffer(body, dtype=dt, count=n)
        order = np.argsort(a["id"]) if "id" in names else np.arange(n)
        return np.stack([a["x"], a["y"], a["z"]], axis=1)[order].astype(np.float64)
    fmt = "<" + "".join({"float": "f", "uint": "I", "int": "i"}[p[1]] for p in props)
    rows = list(struct.iter_unpack(fmt, body[: n * struct.calcsize(fmt)]))
    ix, iy, iz = names.index("x"), names.index("y"), names.index("z")
    if "id" in names:
        rows.sort(key=lambda r: r[names.index("id")])
    return [(r[ix], r[iy], r[iz]) for r in rows]

def compare(a, b):
    """Front (largest x) of each, RMS and largest displacement between them by id."""
    if np is not None:
        d = np.linalg.norm(a - b, axis=1)
        return a[:, 0].max(), b[:, 0].max(), float(np.sqrt((d * d).mean())), float(d.max())
    s = m = 0.0
    for p, q in zip(a, b):
        e = ((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2) ** 0.5
        s, m = s + e * e, max(m, e)
    return max(p[0] for p in a), max(q[0] for q in b), (s / len(a)) ** 0.5, m

def stats(k):
    path = f"{tmp}/run-{k}.csv"
    return list(csv.DictReader(open(path))) if os.path.exists(path) else None

one = stats(ranks[0])
print("gpus\tframes\tdensity_error_avg_last_pct\tdensity_error_max_last_pct\tmax_diff_density_error_avg\t"
      "max_diff_density_error_max\tmax_rel_diff_kinetic_energy\tfront_mid_m\tfront_mid_one_gpu_m\t"
      "front_last_m\tfront_last_one_gpu_m\trms_displacement_last_m\tmax_displacement_last_m")
for k in ranks:
    rows = stats(k)
    if rows is None or one is None:
        print(f"{k}\t-\t(the run stopped, see the lines at the end)")
        continue
    da = max(abs(float(a["density_error_avg"]) - float(b["density_error_avg"])) for a, b in zip(one, rows))
    dm = max(abs(float(a["density_error_max"]) - float(b["density_error_max"])) for a, b in zip(one, rows))
    ke = max(abs(float(a["kinetic_energy"]) - float(b["kinetic_energy"])) /
             max(abs(float(a["kinetic_energy"])), 1e-30) for a, b in zip(one, rows))
    try:
        f1m, fkm, _, _ = compare(frame(ranks[0], mid), frame(k, mid))
        f1, fk, rms, most = compare(frame(ranks[0], last), frame(k, last))
        fronts = f"{fkm:.5f}\t{f1m:.5f}\t{fk:.5f}\t{f1:.5f}\t{rms:.3g}\t{most:.3g}"
    except (OSError, ValueError, StopIteration) as e:
        fronts = f"-\t-\t-\t-\t-\t- ({e})"
    last_row = rows[-1]
    print(f"{k}\t{len(rows)}\t{float(last_row['density_error_avg']):.4f}\t"
          f"{float(last_row['density_error_max']):.4f}\t{da:.3g}\t{dm:.3g}\t{ke:.3g}\t{fronts}")
PY
  echo "# differences: the largest over the frames of the split's value less one GPU's (density error in"
  echo "# points of %, kinetic energy relative); displacement: |x_split - x_one| by particle id"
fi

if [[ $parts == *" strong "* ]]; then
  for k in "${ranks[@]:1}"; do
    echo
    echo "## bench at ${sizes[0]} particles on $k GPUs: stages, kernels, exchanges"
    cat "$tmp/bench-${sizes[0]}-$k.out"
  done
fi
if [ -f "$tmp/failures" ]; then
  echo
  echo "## cases that did not finish"
  cat "$tmp/failures"
fi
echo "# $(($(date +%s) - start_all)) s for the cases (after the build)"
