# Sourced by cli_signal.sh and cli_bench_signal.sh: signal_stop M WHO NAME sends the stop (WHO
# rank1: SIGTERM to rank 1's process alone, its pid in $dir/pid.1; else one SIGINT to mpirun, its
# pid in $dir/mpirun.pid), waits for M (timeout, mpirun's parent) to end (failing after 60 s) and
# writes its status to $dir/NAME.rc. Open MPI 4's mpirun answers a SIGINT with SIGCONT to the
# ranks, SIGTERM odls_base_sigkill_timeout s later and SIGKILL as long after that; a second SIGINT
# within 5 s makes it exit at once, the ranks never signalled (docs/DISTRIBUTED.md).
signal_stop() {
  local m=$1 who=$2 name=$3 waited=0
  if [ "$who" = rank1 ]; then kill -TERM "$(cat "$dir/pid.1")"; else kill -INT "$(cat "$dir/mpirun.pid")"; fi
  while kill -0 "$m" 2>/dev/null; do # every rank stops after the step it is in, or one waits
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 600 ] || { kill -TERM "$m"; fail "$name: still running 60 s after the signal"; }
  done
  wait "$m"
  echo $? >"$dir/$name.rc"
}
