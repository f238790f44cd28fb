# Sourced by cli_signal.sh and cli_bench_signal.sh: signal_stop M WHO NAME sends the stop (WHO
# rank1: SIGTERM to rank 1's process alone, its pid in $dir/pid.1; else SIGINT to mpirun, pid
# M), waits for mpirun to end (failing after 60 s) and writes its status to $dir/NAME.rc.
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
