# Sourced by cli_signal.sh and cli_bench_signal.sh: signal_stop M WHO NAME sends the stop (WHO
# rank1: SIGTERM to rank 1's process alone, its pid in $dir/pid.1; else one SIGINT to pid M, mpirun
# or a `timeout --foreground` in front of it, which passes it on once), waits for mpirun to end
# (failing after 60 s) and writes its status to $dir/NAME.rc. Open MPI 4's mpirun answers a SIGINT
# with SIGCONT to the ranks, SIGTERM odls_base_sigkill_timeout (1) s later and SIGKILL as long after
# that; a second SIGINT within 5 s makes it exit at once, the ranks never signalled (DISTRIBUTED.md).
signal_stop() {
  local m=$1 who=$2 name=$3 waited=0
  if [ "$who" = rank1 ]; then kill -TERM "$(cat "$dir/pid.1")"; else kill -INT "$m"; fi
  while kill -0 "$m" 2>/dev/null; do # every rank stops after the step it is in, or one waits
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 600 ] || { kill -TERM "$m"; fail "$name: still running 60 s after the signal"; }
  done
  wait "$m"
  echo $? >"$dir/$name.rc"
}
