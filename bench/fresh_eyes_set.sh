#!/usr/bin/env bash
# What a whole fresh-eyes set's run.sh does: read the user's arguments as the set allows them,
# then score the set's labels.yaml (score_fresh_eyes.sh).
# Usage: fresh_eyes_set.sh python|typescript dev|holdout SETDIR NAME MIRROR AGENTGUARD [--verbose]
#   dev      a development set: --verbose lists every miss
#   holdout  only ever reported on, never studied: no option is accepted
#   NAME     the set's name in paths and variables (fresh-eyes6: work trees go to
#            $FRESH_EYES6_SRC, default ~/.cache/agentguard-fresh-eyes6; results to
#            $FRESH_EYES6_OUT, default $TMPDIR/agentguard-fresh-eyes6)
set -euo pipefail
language=$1 kind=$2 setdir=$3 name=$4
shift 4
if [ "$kind" = holdout ]; then
  usage="usage: run.sh MIRROR AGENTGUARD"
  if [ $# -gt 2 ]; then
    echo "run.sh: no options are accepted ('${*:3}'): this set is a holdout, only ever reported on, never studied (see README.md). $usage" >&2
    exit 2
  fi
  [ $# -eq 2 ] || { echo "run.sh: $usage" >&2; exit 2; }
else
  usage="usage: run.sh MIRROR AGENTGUARD [--verbose]"
  if [ $# -lt 2 ] || [ $# -gt 3 ] || { [ $# -eq 3 ] && [ "$3" != "--verbose" ]; }; then
    echo "run.sh: $usage" >&2; exit 2
  fi
fi
variable=$(printf '%s' "$name" | tr 'a-z-' 'A-Z_')
src_var="${variable}_SRC" out_var="${variable}_OUT"
src=${!src_var:-$HOME/.cache/agentguard-$name}
out=${!out_var:-${TMPDIR:-/tmp}/agentguard-$name}
exec "$(dirname "$0")/score_fresh_eyes.sh" "$language" "$setdir" "$setdir/labels.yaml" "$src" "$out" "$@"
