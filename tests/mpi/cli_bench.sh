#!/usr/bin/env bash
# `pbfcl bench` split over ranks by mpirun, from the outside: a small dam break benched on 2 ranks
# against the same bench on one (without mpirun) takes the same substeps in every measured step
# and reports the same density error; the report, printed by rank 0 alone, has bench's tables
# and the exchanges' table with numbers that hold together; --rank-capacity changes nothing but
# the room, and too little of it stops the run saying so; --rebalance plans the slabs anew and
# the report counts the plans; a broken run exits 3 on 2 ranks as on one, and bad input is
# refused once with status 2.
# usage: cli_bench.sh PBFCL MPIRUN [MPIRUN FLAGS...]
set -uo pipefail
pbfcl=$1
shift
mpirun=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
bench=(bench --scene dam-break --particles 3000 --steps 8 --warmup 6)

"$pbfcl" "${bench[@]}" >"$dir/one.out" 2>"$dir/one.err"
rc=$?
[ $rc -eq 77 ] && exit 77
if grep -q "no OpenCL device" "$dir/one.err"; then echo "SKIP: no OpenCL device"; exit 77; fi
[ $rc -eq 0 ] || fail "the single-device bench failed ($rc): $(cat "$dir/one.out" "$dir/one.err")"
"${mpirun[@]}" -np 2 "$pbfcl" "${bench[@]}" >"$dir/two.out" 2>"$dir/two.err" ||
  fail "the 2-rank bench failed: $(cat "$dir/two.out" "$dir/two.err")"

python3 - "$dir/one.out" "$dir/two.out" <<'PY' || exit 1
import re, sys

def parse(path):
    text = open(path).read()
    lines = text.splitlines()
    if sum(l.startswith("# pbfcl bench:") for l in lines) != 1:
        sys.exit(f"FAIL: {path}: the report is not printed once (by rank 0 alone):\n{text}")
    def table(header):
        i = lines.index(header)
        rows = {}
        for l in lines[i + 1:]:
            if l.startswith("#") or "\t" not in l or l.split("\t")[0] in ("kernel", "exchange"):
                break
            f = l.split("\t")
            rows[f[0]] = [float(x) for x in f[1:]]
        return rows
    r = {"stages": table("stage\tmedian_ms\tmin_ms")}
    i = next(k for k, l in enumerate(lines) if l.startswith("# particles\tsteps\tms_per_step"))
    names = lines[i][2:].split("\t")
    r["row"] = dict(zip(names, map(float, lines[i + 1].split("\t"))))
    m = re.search(r"^# density error of the measured steps .*: mean ([0-9.]+), largest step "
                  r"mean ([0-9.]+), largest particle ([0-9.]+); neighbour list overflows (\d+)$",
                  text, re.M)
    if not m:
        sys.exit(f"FAIL: {path}: no density error line:\n{text}")
    r["density"] = [float(x) for x in m.groups()]
    r["mean"] = float(re.search(r"^# step time over the measured steps: mean ([0-9.]+) ms", text,
                                re.M).group(1))
    r["kernels"] = table("kernel\tms_per_step\tlaunches_per_step\tus_per_launch")
    r["exchange"] = table("exchange\tmedian\tmean") if "exchange\tmedian\tmean" in lines else None
    return r

one, two = parse(sys.argv[1]), parse(sys.argv[2])
if one["exchange"] is not None:
    sys.exit("FAIL: the single-device bench reports exchanges")
# the same substeps in every measured step: the bounds are reduced over the ranks
if two["row"]["substeps_per_step"] != one["row"]["substeps_per_step"]:
    sys.exit(f"FAIL: substeps per step {two['row']['substeps_per_step']} on 2 ranks against "
             f"{one['row']['substeps_per_step']} on one")
# The density error is the whole simulation's (reduced over the ranks, weighted by their
# particles). The split differs from one rank by under 1e-4 of the mean density and 3e-4 of
# the largest (tests/mpi/dist_check.c, docs/DISTRIBUTED.md), the printed values have three
# decimals: 0.5 % and 0.002 points leave room for both, while one rank's slab alone (its own
# share of the compression) or ghosts left stale are off by far more.
for what, a, b in zip(("mean", "largest step mean", "largest particle"), one["density"],
                      two["density"]):
    if abs(a - b) > 0.005 * abs(a) + 0.002:
        sys.exit(f"FAIL: density error ({what}) {b} on 2 ranks against {a} on one")
if one["density"][3] or two["density"][3]:
    sys.exit("FAIL: neighbour lists cut short in a sound dam break")
for r, name in ((one, "one device"), (two, "2 ranks")):
    st = r["stages"]
    for stage in ("predict", "hash", "sort", "reorder", "cells", "neighbours", "solve",
                  "vorticity_viscosity", "other", "step"):
        if stage not in st or not (st[stage][0] > 0 and st[stage][1] > 0):
            sys.exit(f"FAIL: {name}: stage row '{stage}' missing or not positive: {st}")
    if r["row"]["particles"] != 2925 or r["row"]["steps"] != 8:
        sys.exit(f"FAIL: {name}: particles and steps {r['row']}")
    if abs(r["row"]["ms_per_step"] - st["step"][0]) > 1e-3 or r["mean"] <= 0:
        sys.exit(f"FAIL: {name}: ms_per_step {r['row']['ms_per_step']} is not the step's median")
    # 4 lambdas a substep; split over ranks with the overlap, each of the 3 after an exchange
    # runs as two launches (the interior's, the boundary's), one where a list is empty
    sub = r["row"]["substeps_per_step"]
    launches = r["kernels"].get("pbf_lambda", [0, 0])[1]
    if not (launches == 4 * sub if r is one else 4 * sub < launches <= 7 * sub):
        sys.exit(f"FAIL: {name}: pbf_lambda is not launched 4 lambdas a substep: {r['kernels']}")
st, ex = two["stages"], two["exchange"]
# the step's time is the slowest rank's wall clock, which holds every stage of that rank: each
# step's is at least each stage's largest device time, so their medians are ordered too
for stage, (med, low) in st.items():
    if stage != "step" and med > st["step"][0] + 1e-3:
        sys.exit(f"FAIL: 2 ranks: stage {stage} ({med} ms) longer than the step ({st['step'][0]})")
want = ("exchange_ms", "mpi_ms", "exchange_share_pct", "mb_sent_per_substep", "ghosts_per_rank")
if ex is None or tuple(ex) != want:
    sys.exit(f"FAIL: 2 ranks: the exchanges' table is not {want}: {ex}")
if not (0 < ex["mpi_ms"][1] <= ex["exchange_ms"][1] + 1e-3 and 0 < ex["exchange_share_pct"][0] < 100
        and ex["exchange_ms"][0] < st["step"][0]):
    sys.exit(f"FAIL: 2 ranks: the exchanges' times do not hold together: {ex}, step {st['step']}")
# ghosts: the particles within h of the cut, on each side (a 2925-particle dam break: hundreds);
# sent: their records (128 bytes) and the values of every exchange of a substep
if not (50 < ex["ghosts_per_rank"][0] < 1500 and ex["mb_sent_per_substep"][0] > 128e-6 * 2 * 50):
    sys.exit(f"FAIL: 2 ranks: ghosts or bytes out of range: {ex}")
print(f"2 ranks: substeps {two['row']['substeps_per_step']} as on one; density error "
      f"{two['density'][:3]} against {one['density'][:3]}; exchanges {ex}")
PY

# --rank-capacity: room for 2200 of the 2925 particles on each rank (its own, about 1500, and its
# ghosts, about 450) gives the same density error; room for fewer stops every rank saying what to
# give, at the first ghosts (1800) or before the first step (100)
"${mpirun[@]}" -np 2 "$pbfcl" "${bench[@]}" --rank-capacity 2200 >"$dir/cap.out" 2>"$dir/cap.err" ||
  fail "the 2-rank bench with --rank-capacity 2200 failed: $(cat "$dir/cap.out" "$dir/cap.err")"
[ "$(grep '^# density error' "$dir/cap.out")" = "$(grep '^# density error' "$dir/two.out")" ] ||
  fail "--rank-capacity changed the density error: $(grep '^# density error' "$dir/cap.out" "$dir/two.out")"
# --overlap off: the split without the overlap gives the same density error (the frames are the
# same to the byte: test_mpi_dam_break)
"${mpirun[@]}" -np 2 "$pbfcl" "${bench[@]}" --overlap off >"$dir/plain.out" 2>"$dir/plain.err" ||
  fail "the 2-rank bench with --overlap off failed: $(cat "$dir/plain.out" "$dir/plain.err")"
[ "$(grep '^# density error' "$dir/plain.out")" = "$(grep '^# density error' "$dir/two.out")" ] ||
  fail "--overlap off changed the density error: $(grep '^# density error' "$dir/plain.out" "$dir/two.out")"
for cap in 1800 100; do
  want="give a larger --rank-capacity"
  [ $cap -eq 100 ] && want="more than its room for 100 \(--rank-capacity\); give more"
  out=$("${mpirun[@]}" -np 2 "$pbfcl" "${bench[@]}" --rank-capacity $cap 2>&1)
  rc=$?
  [ $rc -ne 0 ] && grep -Eq "$want" <<<"$out" || fail "--rank-capacity $cap: status $rc, $out"
done

# --rebalance: the dam break drifts past 1.2 times the mean on 2 ranks by frame 18
# (tests/mpi/dist_check.c), so 16 frames after 6 plan the slabs anew at least once, and the
# report says so; without --rebalance (off by default in a bench) it says nothing of it
"${mpirun[@]}" -np 2 "$pbfcl" bench --scene dam-break --particles 3000 --steps 16 --warmup 6 \
  --rebalance 1.2 >"$dir/rebalance.out" 2>"$dir/rebalance.err" ||
  fail "the 2-rank bench with --rebalance 1.2 failed: $(cat "$dir/rebalance.out" "$dir/rebalance.err")"
plans=$(sed -n 's/^# slabs planned anew \([0-9]*\) times (a rank above 1.2 times the mean of 1462; 0 refused for want of room)$/\1/p' "$dir/rebalance.out")
[ -n "$plans" ] && [ "$plans" -ge 1 ] ||
  fail "--rebalance 1.2: no plan reported in 16 frames: $(cat "$dir/rebalance.out")"
! grep -q "slabs planned anew" "$dir/two.out" || fail "a bench without --rebalance rebalanced"

# broken: without iterations the fluid collapses, on 2 ranks as on one: status 3, each measured
# step marked, the warning once
"${mpirun[@]}" -np 2 "$pbfcl" bench --particles 2000 --steps 2 --warmup 20 --iterations 0 \
  >"$dir/broken.out" 2>"$dir/broken.err"
rc=$?
[ $rc -eq 3 ] || fail "a broken bench on 2 ranks exits $rc, not 3: $(cat "$dir/broken.out" "$dir/broken.err")"
[ "$(grep -c '^# BROKEN measured step ' "$dir/broken.out")" -eq 2 ] ||
  fail "the 2 broken steps are not marked: $(cat "$dir/broken.out")"
[ "$(grep -c 'WARNING: 2 of the 2 measured steps are broken' "$dir/broken.err")" -eq 1 ] ||
  fail "the warning is not said once on stderr: $(cat "$dir/broken.err")"

# bad input: refused by rank 0 alone with status 2, saying what to do
expect_refusal() { # PATTERN ARGS...
  local pattern=$1 out rc
  shift
  out=$("${mpirun[@]}" -np 2 "$pbfcl" bench "$@" 2>&1)
  rc=$?
  [ $rc -eq 2 ] && [ "$(grep -Ec -- "$pattern" <<<"$out")" -eq 1 ] ||
    fail "bench $* on 2 ranks: status $rc (want 2), '$pattern' not said once: $out"
}
expect_refusal "--steps.*0" --particles 2000 --steps 0
expect_refusal "--rebalance: '0.5' is not valid; expected 0 \(off\) or a threshold from 1.05 to 16" \
  --particles 2000 --rebalance 0.5
expect_refusal "bench --diffuse: spray, foam and bubbles are not split over ranks" --diffuse 100
expect_refusal "this scene has (obstacles|emitters): run it on one rank" --scene fountain
expect_refusal "this scene has cloth, ropes or inflatables: run it on one rank" --scene flag
out=$("${mpirun[@]}" -np 2 "$pbfcl" bench --help 2>&1) && grep -q "^usage: pbfcl bench" <<<"$out" &&
  [ "$(grep -c "^usage:" <<<"$out")" -eq 1 ] || fail "bench --help on 2 ranks: $out"
echo "ok: --rebalance 1.2 planned the slabs $plans times in 16 frames; broken bench exits 3 on 2" \
  "ranks with each step marked; bad input refused once with status 2"
