#!/usr/bin/env bash
# A split run stopped by a signal writes its checkpoint, as one device's run does: SIGTERM sent
# to rank 1's process alone (every rank agrees to stop after the same step) and SIGINT sent to
# mpirun (which sends the ranks SIGTERM). Each stop prints the step it stopped after, leaves the
# checkpoint of that step and no other file (no half-written one), and exits 128 + 15 where the
# ranks' status reaches the caller; the checkpoint resumes on one device and on 2 ranks, the
# resumed steps within 1 % of an uninterrupted run on one device.
# usage: cli_signal.sh PBFCL MPIRUN [MPIRUN FLAGS...]
set -uo pipefail
pbfcl=$1
shift
mpirun=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/signal_stop.sh"
run=(run --scene dam-break --particles 3000)

"$pbfcl" "${run[@]}" --steps 1 --quiet >"$dir/probe.log" 2>&1
rc=$?
[ $rc -eq 77 ] && exit 77
if grep -q "no OpenCL device" "$dir/probe.log"; then echo "SKIP: no OpenCL device"; exit 77; fi
[ $rc -eq 0 ] || fail "a one-device run failed: $(cat "$dir/probe.log")"

stopped() { # NAME WHO: a 2-rank run of 100000 steps signalled once its statistics hold 3 rows
  local name=$1 who=$2 w="$dir/$1"
  mkdir -p "$w"
  # mpirun's pid and each rank's in files (exec keeps them), to signal mpirun once (not through
  # timeout, which would pass it on twice) or one rank alone; mpirun's SIGTERM comes 3 s after
  # its SIGINT and its SIGKILL 3 s after that (odls_base_sigkill_timeout), time for a step and
  # the checkpoint on a loaded machine
  timeout 300 sh -c 'echo $$ >"$0/mpirun.pid"; exec "$@"' "$dir" "${mpirun[@]}" -np 2 \
    --mca odls_base_sigkill_timeout 3 sh -c 'echo $$ >"$0/pid.$OMPI_COMM_WORLD_RANK"; exec "$@"' \
    "$dir" "$pbfcl" "${run[@]}" --steps 100000 --stats "$w/s.csv" --checkpoint "$w/c.ckpt" \
    >"$dir/$name.log" 2>&1 &
  local m=$! waited=0
  until [ -f "$w/s.csv" ] && [ "$(wc -l <"$w/s.csv")" -ge 4 ]; do
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 1200 ] || { kill -TERM $m; fail "$name: no third step in 120 s"; }
  done
  signal_stop $m "$who" "$name"
}
stopped rank1 rank1
stopped mpirun mpirun
rc=$(cat "$dir/rank1.rc")
[ "$rc" -eq 143 ] || fail "SIGTERM to rank 1: status $rc (want 143, as one device's run): $(cat "$dir/rank1.log")"
for name in rank1 mpirun; do
  log="$dir/$name.log"
  # Open MPI 4's mpirun sends the ranks SIGTERM for its SIGINT; another may pass SIGINT on
  step=$(sed -n 's/^pbfcl run: stopped by SIG\(TERM\|INT\) after step \([0-9]*\) of 100000; checkpoint written to .*/\2/p' "$log")
  [ -n "$step" ] || fail "$name: no 'stopped by SIGTERM after step K' line: $(cat "$log")"
  last=$(tail -n 1 "$dir/$name/s.csv" | cut -d, -f1)
  [ "$step" = "$last" ] || fail "$name: stopped after step $step, the statistics' last row is step $last"
  [ "$(ls "$dir/$name")" = "$(printf 'c.ckpt\ns.csv')" ] ||
    fail "$name: the run left $(ls "$dir/$name" | tr '\n' ' ')(want c.ckpt and s.csv alone)"
  echo "$step" >"$dir/$name.step"
done

# complete: resumed on one device and on 2 ranks for 3 steps, against one device uninterrupted
step=$(cat "$dir/rank1.step")
end=$((step + 3))
"$pbfcl" "${run[@]}" --steps $end --quiet --stats "$dir/one.csv" >"$dir/one.log" 2>&1 ||
  fail "the uninterrupted run: $(cat "$dir/one.log")"
"$pbfcl" run --resume "$dir/rank1/c.ckpt" --steps $end --quiet --stats "$dir/r1.csv" \
  >"$dir/r1.log" 2>&1 || fail "resuming on one device: $(cat "$dir/r1.log")"
timeout 300 "${mpirun[@]}" -np 2 "$pbfcl" run --resume "$dir/rank1/c.ckpt" --steps $end --quiet \
  --stats "$dir/r2.csv" >"$dir/r2.log" 2>&1 || fail "resuming on 2 ranks: $(cat "$dir/r2.log")"
timeout 300 "${mpirun[@]}" -np 2 "$pbfcl" run --resume "$dir/mpirun/c.ckpt" \
  --steps $(($(cat "$dir/mpirun.step") + 1)) --quiet >"$dir/r3.log" 2>&1 ||
  fail "resuming the checkpoint of the run mpirun stopped: $(cat "$dir/r3.log")"
python3 - "$dir" "$step" <<'PY' || exit 1
import csv, sys
d, k = sys.argv[1], int(sys.argv[2])
one = {int(r["step"]): r for r in csv.DictReader(open(f"{d}/one.csv"))}
for name in ("r1", "r2"):
    rows = list(csv.DictReader(open(f"{d}/{name}.csv")))
    if [int(r["step"]) for r in rows] != list(range(k + 1, k + 4)):
        sys.exit(f"FAIL: {name}: steps {[r['step'] for r in rows]}, not {k + 1}..{k + 3}")
    for b in rows:
        a = one[int(b["step"])]
        for c in a:
            x, y = float(a[c]), float(b[c])
            if abs(x - y) > 0.01 * abs(x) + (0.01 if c.startswith("density_error") else 1e-9):
                sys.exit(f"FAIL: {name}: step {b['step']}: {c} {y} against {x} uninterrupted")
PY
echo "ok: stopped by SIGTERM to rank 1 after step $step (status 143) and by SIGINT to mpirun" \
  "after step $(cat "$dir/mpirun.step"); each checkpoint alone, resumed on 1 and 2 ranks"
