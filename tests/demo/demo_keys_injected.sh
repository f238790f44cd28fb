#!/usr/bin/env bash
# The demo's keys end to end: the demo runs under Xvfb and real keystrokes reach its window
# through the X server (xdotool, XTEST), as a user's would. Each key whose action the console
# reports is checked there: I, shift+I, V, shift+V, O (live parameters), D twice (spray, foam
# and bubbles off, then on again), 3 (a scene), + and - (particle counts), R (reset), P (a
# screenshot, which must be a whole PNG in the folder the demo runs in), Esc (quit before
# the frame limit, exit status 0) and ctrl + left drag (a collision shape moved). Skipped (77)
# without xvfb-run or xdotool.
set -euo pipefail
pbfcl=${1:?usage: demo_keys_injected.sh PATH/TO/pbfcl}
for tool in xvfb-run xdotool; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (apt-get install xvfb xdotool); the keys need a virtual display and a way to type into it"
    exit 77
  fi
done
pbfcl=$(cd "$(dirname "$pbfcl")" && pwd)/$(basename "$pbfcl")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Types each key once the one before has been handled: a key's action runs at the next frame,
# and two keys of one frame may count once (two I's), so the driver waits for the console line
# of each key's action before the next, however long a frame takes on this machine (no fixed
# pauses). stdbuf makes the demo's console reach out.txt line by line. A key whose action
# never comes is caught by the time limit around the whole run ($PBFCL_KEYS_TIME_LIMIT seconds,
# a hang guard only).
cat >drive.sh <<'EOF'
stdbuf -oL "$1" demo --particles 2000 --size 640x480 --frames 100000 --render spheres \
  >out.txt 2>&1 &
pid=$!
count() { grep -Ec -- "$1" out.txt; }
# wait_for REGEX N: until out.txt holds N lines matching REGEX; false if the demo ended first
wait_for() {
  until [ "$(count "$1")" -ge "$2" ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.2
  done
}
# the window and its GL context are up once the demo says how positions reach OpenGL
if ! wait_for '^pbfcl demo: positions reach OpenGL by' 1; then
  echo "the demo ended before its window was up" >>out.txt
  exit 1
fi
win=$(xdotool search --sync --onlyvisible --name '^pbfcl$' | head -1)
xdotool mousemove --window "$win" 200 200
for k in i i shift+i v shift+v o w e d d 3 plus minus r p Tab 9 shift+Tab; do
  case $k in
  i | shift+i) line='^pbfcl demo: iterations ' ;;
  v | shift+v) line='^pbfcl demo: viscosity ' ;;
  o) line='^pbfcl demo: vorticity ' ;;
  w | e) line='^pbfcl demo: wind ' ;;
  d) line='^pbfcl demo: spray, foam and bubbles (on|off)$' ;;
  3 | plus | minus | r) line='^pbfcl demo: drop, [0-9]+ particles$' ;;
  p) line='^pbfcl demo: wrote ' ;;
  Tab) line='^pbfcl demo: dam-break-bodies, [0-9]+ particles$' ;;
  9) line='^pbfcl demo: flag, [0-9]+ particles$' ;;
  shift+Tab) line='^pbfcl demo: rope-bridge, [0-9]+ particles$' ;;
  esac
  seen=$(count "$line")
  xdotool key "$k"
  if ! wait_for "$line" $((seen + 1)); then
    echo "the demo ended before it handled the key $k" >>out.txt
    exit 1
  fi
done
xdotool key Escape
wait "$pid"
echo "exit=$?" >>out.txt
EOF
timeout "${PBFCL_KEYS_TIME_LIMIT:-1800}" xvfb-run -a -s "-screen 0 800x600x24" bash drive.sh "$pbfcl" || true
cat out.txt

fail=0
expect() { # expect LINE-REGEX WHAT
  if ! grep -Eq -- "$1" out.txt; then
    echo "FAIL: $2 (no line matching '$1')"
    fail=1
  fi
}
# the three iteration changes in order: up, up, down (shift+I)
# from the default (pbfcl params' table: | `iterations` | `--iterations` | integer | D | ...)
d=$("$pbfcl" params | awk -F'|' '$2 ~ /`iterations`/ { gsub(/ /, "", $5); print $5 }')
want="$((d + 1)) $((d + 2)) $((d + 1)) "
its=$(grep -Eo 'pbfcl demo: iterations [0-9]+' out.txt | awk '{print $4}' | tr '\n' ' ')
if [ -z "$d" ] || [ "$its" != "$want" ]; then
  echo "FAIL: I, I, shift+I gave iterations '$its', expected '$want' (the default: '$d')"
  fail=1
fi
visc=$(grep -Eo 'pbfcl demo: viscosity [0-9.e-]+' out.txt | awk '{print $4}' | tr '\n' ' ')
if [ "$visc" != "0.1 0.05 " ]; then
  echo "FAIL: V, shift+V gave viscosity '$visc', expected '0.1 0.05 '"
  fail=1
fi
expect '^pbfcl demo: vorticity ' "O changes the vorticity confinement"
expect '^pbfcl demo: wind 1 m/s at 0 degrees' "W starts a 1 m/s wind along x"
expect '^pbfcl demo: wind 1 m/s at 45 degrees' "E turns the wind 45 degrees"
toggles=$(grep -Eo '^pbfcl demo: spray, foam and bubbles (on|off)$' out.txt | awk '{print $NF}' |
  tr '\n' ' ')
if [ "$toggles" != "off on " ]; then
  echo "FAIL: D, D gave spray, foam and bubbles '$toggles', expected 'off on '"
  fail=1
fi
expect '^pbfcl demo: drop, [0-9]+ particles$' "3 switches to the drop scene"
counts=$(grep -Eo '^pbfcl demo: drop, [0-9]+ particles$' out.txt | awk '{print $4}' | tr '\n' ' ')
read -r -a c <<<"$counts"
if [ "${#c[@]}" -ne 4 ] || [ "${c[1]}" -le "${c[0]}" ] || [ "${c[2]}" -ge "${c[1]}" ] ||
  [ "${c[3]}" -ne "${c[2]}" ]; then
  echo "FAIL: 3, +, -, R gave drop scenes of '$counts' particles (expected: more after +, fewer after -, the same after R)"
  fail=1
fi
# Tab after drop (the third built-in scene) is the fourth, 9 the ninth, shift+Tab the eighth;
order=$(grep -Eo '^pbfcl demo: (dam-break-bodies|flag|rope-bridge), [0-9]+ particles$' out.txt |
  awk '{print $3}' | tr -d ',' | tr '\n' ' ')
if [ "$order" != "dam-break-bodies flag rope-bridge " ]; then
  echo "FAIL: Tab, 9, shift+Tab after drop gave scenes '$order', expected 'dam-break-bodies flag rope-bridge '"
  fail=1
fi
expect '^pbfcl demo: wrote pbfcl-shot-0001.png \(640x480\)$' "P writes a screenshot"
if ! grep -q 'P   N   G' <<<"$(head -c 8 pbfcl-shot-0001.png 2>/dev/null | od -An -c)"; then
  echo "FAIL: pbfcl-shot-0001.png is missing or not a PNG"
  fail=1
fi
frames=$(grep -Eo '^pbfcl demo: [0-9]+ frames' out.txt | awk '{print $3}')
if [ -z "$frames" ] || [ "$frames" -ge 100000 ]; then
  echo "FAIL: Esc did not end the demo before its frame limit (frames '$frames')"
  fail=1
fi
expect '^exit=0$' "the demo exits with status 0 after Esc"
# ctrl + left drag moves the collision shape under the cursor: a sphere collider at the box's
# centre, which the camera looks at (the window's centre), dragged 100 points to the right, is
# let go away from where it was, at the same height (the camera's right vector is level).
cat >drag.json <<'EOF'
{"name": "drag", "domain": {"min": [0, 0, 0], "max": [0.6, 0.6, 0.6]}, "particle_radius": 0.02,
 "fluid": [{"min": [0, 0, 0], "max": [0.6, 0.1, 0.6]}],
 "colliders": [{"type": "sphere", "radius": 0.1, "position": [0.3, 0.3, 0.3]}]}
EOF
cat >drag.sh <<'EOF'
stdbuf -oL "$1" demo --scene drag.json --size 640x480 --frames 100000 --render spheres \
  >drag.txt 2>&1 &
pid=$!
wait_for() { # REGEX: until drag.txt holds a line matching it; false if the demo ended first
  until grep -Eq -- "$1" drag.txt; do
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.2
  done
}
wait_for '^pbfcl demo: positions reach OpenGL by' || exit 1
win=$(xdotool search --sync --onlyvisible --name '^pbfcl$' | head -1)
xdotool mousemove --window "$win" 320 240 keydown ctrl mousedown 1
wait_for '^pbfcl demo: dragging shape 0$' || exit 1
xdotool mousemove_relative 100 0 mouseup 1 keyup ctrl
wait_for '^pbfcl demo: let go of shape 0 at ' || exit 1
xdotool key Escape
wait "$pid"
EOF
timeout "${PBFCL_KEYS_TIME_LIMIT:-1800}" xvfb-run -a -s "-screen 0 800x600x24" bash drag.sh "$pbfcl" || true
cat drag.txt
at=$(grep -Eo '^pbfcl demo: let go of shape 0 at .*' drag.txt | awk '{print $9, $10, $11}')
if [ -z "$at" ] || ! awk -v p="$at" 'BEGIN { split(p, x, " "); dx = x[1] - 0.3; dz = x[3] - 0.3;
    exit !(sqrt(dx * dx + dz * dz) > 0.1 && (x[2] - 0.3) ^ 2 < 1e-4) }'; then
  echo "FAIL: ctrl + left drag left the sphere at '$at', expected more than 0.1 m from (0.3, 0.3, 0.3) at height 0.3"
  fail=1
fi

[ "$fail" -eq 0 ] && echo "ok: every key reached the demo and did what its help says"
exit "$fail"
