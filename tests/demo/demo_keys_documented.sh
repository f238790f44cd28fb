#!/usr/bin/env bash
# Every key the demo handles (a `case SDLK_...:` in host/demo/demo_input.c) is listed in the
# key column of its help overlay (pbfcl_demo_help_lines in the same file).
set -euo pipefail
src=${1:?usage: demo_keys_documented.sh PATH/TO/demo_input.c}
# the key column of each help line: the text before the run of spaces that starts the action
help=$(sed -n '/pbfcl_demo_help_lines\[\] = {/,/NULL,/p' "$src" | grep -o '^ *"[^"]*"' |
  sed 's/^ *"//; s/"$//; s/   .*//')
label() {
  case $1 in
  [a-z]) echo "$1" | tr a-z A-Z ;;
  [0-9] | KP_[0-9]) echo "${1#KP_}" ;;
  SPACE) echo space ;;
  ESCAPE) echo Esc ;;
  TAB) echo Tab ;;
  PLUS | EQUALS | KP_PLUS) echo + ;;
  MINUS | KP_MINUS) echo - ;;
  LEFTBRACKET) echo '[' ;;
  RIGHTBRACKET) echo ']' ;;
  UP | DOWN | LEFT | RIGHT) echo arrows ;;
  *) echo "?$1" ;;
  esac
}
# one word per line: the labels a key can be listed under (a line may name several: "+/-")
words=$(tr ' /' '\n\n' <<<"$help")
missing=0 count=0
for key in $(grep -o 'case SDLK_[A-Za-z0-9_]*:' "$src" | sed 's/case SDLK_//; s/://' | sort -u); do
  count=$((count + 1))
  want=$(label "$key")
  # here-strings, not pipes: under pipefail a `printf | grep -q` fails when grep exits
  # before printf has written everything (SIGPIPE), which made this test flaky
  if ! grep -qxF -- "$want" <<<"$words"; then
    echo "FAIL: key SDLK_$key ('$want') is handled but not in the help overlay's key column"
    missing=$((missing + 1))
  fi
done
[ "$count" -gt 0 ] || { echo "FAIL: no key cases found in $src"; exit 1; }
[ "$missing" -eq 0 ] || exit 1
echo "ok: the help overlay lists all $count keys the demo handles"
