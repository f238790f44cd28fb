#!/usr/bin/env bash
# A split bench stopped by a signal stops every rank after the same measured frame and reports
# the frames measured so far, as a split run stops with its checkpoint: SIGTERM sent to rank 1's
# process alone (every rank agrees to stop) and SIGINT sent to mpirun (which sends the ranks
# SIGTERM). Each stop prints the report once, its steps column the count of the "stopped by
# SIGTERM after K of 100000 measured steps" line, every stage and the exchanges' table, and
# exits 128 + 15 where the ranks' status reaches the caller.
# usage: cli_bench_signal.sh PBFCL MPIRUN [MPIRUN FLAGS...]
set -uo pipefail
pbfcl=$1
shift
mpirun=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/signal_stop.sh"
bench=(bench --scene dam-break --particles 3000 --warmup 2)

"$pbfcl" "${bench[@]}" --steps 1 >"$dir/probe.log" 2>&1
rc=$?
[ $rc -eq 77 ] && exit 77
if grep -q "no OpenCL device" "$dir/probe.log"; then echo "SKIP: no OpenCL device"; exit 77; fi
[ $rc -eq 0 ] || fail "a one-device bench failed: $(cat "$dir/probe.log")"

stopped() { # NAME WHO: a 2-rank bench of 100000 measured steps signalled once it measures
  local name=$1 who=$2
  # mpirun's pid and each rank's in files (exec keeps them), to signal mpirun once (not through
  # timeout, which would pass it on twice) or one rank alone; mpirun's SIGTERM comes 3 s after
  # its SIGINT and its SIGKILL 3 s after that (odls_base_sigkill_timeout), time for a step and
  # the checkpoint on a loaded machine
  timeout 300 sh -c 'echo $$ >"$0/mpirun.pid"; exec "$@"' "$dir" "${mpirun[@]}" -np 2 \
    --mca odls_base_sigkill_timeout 3 sh -c 'echo $$ >"$0/pid.$OMPI_COMM_WORLD_RANK"; exec "$@"' \
    "$dir" "$pbfcl" "${bench[@]}" --steps 100000 >"$dir/$name.out" 2>"$dir/$name.err" &
  local m=$! waited=0
  until grep -q "^pbfcl bench: measuring 100000 steps on 2 ranks after 2 warm-up steps" \
    "$dir/$name.err" 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 1200 ] || { kill -TERM $m; fail "$name: not measuring after 120 s"; }
  done
  sleep 1 # a few measured frames
  signal_stop $m "$who" "$name"
}
stopped rank1 rank1
stopped mpirun mpirun
rc=$(cat "$dir/rank1.rc")
[ "$rc" -eq 143 ] || fail "SIGTERM to rank 1: status $rc (want 143): $(cat "$dir/rank1.out" "$dir/rank1.err")"
for name in rank1 mpirun; do
  out="$dir/$name.out"
  # Open MPI 4's mpirun sends the ranks SIGTERM for its SIGINT; another may pass SIGINT on
  k=$(sed -n 's/^pbfcl bench: stopped by SIG\(TERM\|INT\) after \([0-9]*\) of 100000 measured steps; the report above holds those [0-9]*$/\2/p' "$out")
  [ -n "$k" ] && [ "$k" -ge 1 ] || fail "$name: no 'stopped by SIGTERM after K of 100000' line: $(cat "$out" "$dir/$name.err")"
  [ "$(grep -c '^# pbfcl bench:' "$out")" -eq 1 ] || fail "$name: the report is not printed once: $(cat "$out")"
  row=$(grep -A1 '^# particles	steps	ms_per_step' "$out" | tail -n 1)
  [ "$(cut -f1,2 <<<"$row")" = "2925	$k" ] ||
    fail "$name: the report's particles and steps '$row', not 2925 and the $k measured"
  for stage in predict hash sort neighbours solve step; do
    grep -Eq "^$stage	[0-9.]+	[0-9.]+$" "$out" || fail "$name: no '$stage' row: $(cat "$out")"
  done
  grep -Eq '^exchange_ms	[0-9.]+	[0-9.]+$' "$out" || fail "$name: no exchanges' table: $(cat "$out")"
  echo "$k" >"$dir/$name.steps"
done
echo "ok: stopped by SIGTERM to rank 1 after $(cat "$dir/rank1.steps") measured steps (status" \
  "143) and by SIGINT to mpirun after $(cat "$dir/mpirun.steps"), each reporting those steps"
