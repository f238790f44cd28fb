#!/usr/bin/env bash
# docs/SCENES.md's table of solver parameters must be what `pbfcl params` prints from the one
# list that declares them (PBFCL_SOLVER_PARAM_LIST in include/pbfcl.h).
set -euo pipefail
pbfcl=${1:?usage: docs_params_match.sh PATH/TO/pbfcl PATH/TO/SCENES.md}
doc=${2:?usage: docs_params_match.sh PATH/TO/pbfcl PATH/TO/SCENES.md}
want=$("$pbfcl" params)
have=$(sed -n '/<!-- pbfcl params: begin -->/,/<!-- pbfcl params: end -->/p' "$doc" | sed '1d;$d')
if [ "$want" != "$have" ]; then
  echo "FAIL: the solver table of $doc differs from \`pbfcl params\` (update the doc with it):"
  diff <(echo "$have") <(echo "$want") || true
  exit 1
fi
echo "ok: $doc lists the $(($(echo "$want" | wc -l) - 2)) solver parameters as declared"
