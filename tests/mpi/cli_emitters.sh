#!/usr/bin/env bash
# Emitters in `pbfcl run` split over 2 ranks against one device: two nozzles, one jetting
# along x across the cut, one jetting down with its disc across the cut (each layer split
# between the ranks), layers of 9 particles at 500 a second each over 24 frames. Every frame
# holds the particles the rate gives (900 + 2 x 9 x floor(500 t / 9)) as one device's does,
# the ids 0..n-1 each once and the same ones as one device's; every particle within 0.1 mm of
# the same id on one device for the first 10 frames (measured 5.0e-6 m; the downward jet then
# lands on the fluid at the cut and the splash magnifies the split's last bits: 9 cm by
# frame 24); the kinetic energy within 1 % up to step 15 (measured 5e-4; 1.0 % at step 16,
# where the jet lands, 1.2 % at step 24).
# A drain across the cut then (below). A split run's --checkpoint and bench refuse them.
# usage: cli_emitters.sh PBFCL MPIRUN [MPIRUN FLAGS...]
set -uo pipefail
pbfcl=$1
shift
mpirun=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$dir/emit.json" <<'JSON'
{
  "name": "emit-split",
  "domain": {"min": [0, 0, 0], "max": [0.6, 0.4, 0.2]},
  "particle_radius": 0.01,
  "fluid": [{"min": [0, 0, 0], "max": [0.6, 0.06, 0.2]}],
  "emitters": [
    {"center": [0.1, 0.3, 0.1], "radius": 0.03, "velocity": [1.2, 0, 0], "rate": 500,
     "count": 300},
    {"center": [0.3, 0.3, 0.1], "radius": 0.03, "velocity": [0, -1.2, 0], "rate": 500,
     "count": 300}
  ]
}
JSON
run=(run --scene "$dir/emit.json" --steps 24 --quiet)

"$pbfcl" "${run[@]}" --stats "$dir/one.csv" --export "$dir/one" >"$dir/one.log" 2>&1
rc=$?
[ $rc -eq 77 ] && exit 77
if grep -q "no OpenCL device" "$dir/one.log"; then echo "SKIP: no OpenCL device"; exit 77; fi
[ $rc -eq 0 ] || fail "the single-device run failed: $(cat "$dir/one.log")"
"${mpirun[@]}" -np 2 "$pbfcl" "${run[@]}" --stats "$dir/two.csv" --export "$dir/two" \
  >"$dir/two.log" 2>&1 || fail "the 2-rank run failed: $(cat "$dir/two.log")"

python3 - "$dir" "$(dirname "$0")" <<'PY' || exit 1
import csv, math, sys
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from ply_frame import read as frame
counts = []
for step in range(25):
    one, _ = frame(f"{d}/one/frame_{step:05d}.ply")
    two, ids = frame(f"{d}/two/frame_{step:05d}.ply")
    if sorted(ids) != list(range(len(ids))):
        sys.exit(f"FAIL: frame {step}: the 2-rank ids are not 0..{len(ids) - 1} each once")
    if len(ids) != len(one) or set(one) != set(two):
        sys.exit(f"FAIL: frame {step}: {len(ids)} particles on 2 ranks, {len(one)} on one device")
    gap = max(math.dist(one[i], two[i]) for i in one)
    if step <= 10 and gap > 1e-4:
        sys.exit(f"FAIL: frame {step}: a particle {gap:.3g} m from the same id on one device")
    # whole layers of 9 at 500 a second from each nozzle: 900 + 2 * 9 floor(500 t / 9)
    want = 900 + 2 * 9 * math.floor(500 * step / 60 / 9 + 1e-9)
    if len(ids) != want:
        sys.exit(f"FAIL: frame {step}: {len(ids)} particles; the nozzles' rate gives {want}")
    counts.append(len(ids))
one = list(csv.DictReader(open(f"{d}/one.csv")))
two = list(csv.DictReader(open(f"{d}/two.csv")))
for a, b in zip(one[:15], two[:15]):
    x, y = float(a["kinetic_energy"]), float(b["kinetic_energy"])
    if abs(x - y) > 0.01 * abs(x):
        sys.exit(f"FAIL: step {a['step']}: kinetic energy {y} on 2 ranks against {x} on one")
print(f"ok: emitters on 2 ranks: {counts[0]} -> {counts[-1]} particles as on one device, ids "
      "0..n-1 once in every frame")
PY

# A drain across the cut under the fluid, with a nozzle: 12 frames on 2 ranks against one
# device, each frame holding the same particles (the frames' ids kept across drains as one
# device's run keeps them, the emitted ones numbered on from the fill) within 0.1 mm
# (measured 3.4e-5 m at frame 12; the rounding's difference about doubles a frame: 1.1e-4 m at
# frame 14, and later the splash makes a particle on the drain's edge go on one run and not the
# other).
cat >"$dir/drain.json" <<'JSON'
{
  "name": "drain-split",
  "domain": {"min": [0, 0, 0], "max": [0.6, 0.4, 0.2]},
  "particle_radius": 0.01,
  "fluid": [{"min": [0, 0, 0], "max": [0.6, 0.06, 0.2]}],
  "emitters": [
    {"center": [0.1, 0.3, 0.1], "radius": 0.03, "velocity": [1.2, 0, 0], "rate": 500,
     "count": 300}
  ],
  "drains": [{"box": {"min": [0.25, 0, 0], "max": [0.35, 0.025, 0.2]}}]
}
JSON
run=(run --scene "$dir/drain.json" --steps 12 --quiet)
"$pbfcl" "${run[@]}" --export "$dir/drain1" >"$dir/d1.log" 2>&1 ||
  fail "the single-device run with a drain failed: $(cat "$dir/d1.log")"
"${mpirun[@]}" -np 2 "$pbfcl" "${run[@]}" --export "$dir/drain2" >"$dir/d2.log" 2>&1 ||
  fail "the 2-rank run with a drain failed: $(cat "$dir/d2.log")"
python3 - "$dir" "$(dirname "$0")" <<'PY' || exit 1
import math, sys
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from ply_frame import read as frame
for step in range(13):
    one, ids1 = frame(f"{d}/drain1/frame_{step:05d}.ply")
    two, ids2 = frame(f"{d}/drain2/frame_{step:05d}.ply")
    n1, n2 = len(ids1), len(ids2)
    if n2 != len(two) or n1 != n2 or set(one) != set(two):
        sys.exit(f"FAIL: frame {step}: {n2} particles ({len(two)} ids) on 2 ranks, {n1} on one "
                 "device, or other ids")
    gap = max(math.dist(one[i], two[i]) for i in one)
    if gap > 1e-4:
        sys.exit(f"FAIL: frame {step}: a particle {gap:.3g} m from the same id on one device")
if n2 >= 900:
    sys.exit(f"FAIL: the drain took nothing ({n2} particles at frame 12)")
print(f"ok: a drain and a nozzle on 2 ranks: 900 -> {n2} particles, the same ids as one device's")
PY

expect_refusal() { # PATTERN ARGS...
  local pattern=$1 out rc
  shift
  out=$("${mpirun[@]}" -np 2 "$pbfcl" "$@" 2>&1)
  rc=$?
  [ $rc -eq 2 ] && [ "$(grep -Ec -- "$pattern" <<<"$out")" -eq 1 ] ||
    fail "$* on 2 ranks: status $rc (want 2), '$pattern' not said once: $out"
}
expect_refusal "--checkpoint: a run split over ranks does not save emitters. or drains. progress yet" \
  run --scene "$dir/emit.json" --steps 2 --checkpoint "$dir/c.ckpt"
expect_refusal "bench: scene .emit-split. has emitters or drains, which bench does not run split" \
  bench --scene "$dir/emit.json" --steps 2 --warmup 1
echo "ok: a split run's checkpoint and bench refuse emitters"
