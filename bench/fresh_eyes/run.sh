#!/usr/bin/env bash
# Score an agentguard on one half of the fresh-eyes set with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD dev|holdout [--verbose]
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
#   --verbose   list every miss (both halves are development material now: see README.md)
# The scorers come from the shared development set (SHARED_DEVSET, default ../shared/devset next to
# the checkout). Work trees go to $FRESH_EYES_SRC (default ~/.cache/agentguard-fresh-eyes), results
# to $FRESH_EYES_OUT (default $TMPDIR/agentguard-fresh-eyes-HALF).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: run.sh MIRROR AGENTGUARD dev|holdout [--verbose]"
[ $# -ge 3 ] && [ $# -le 4 ] || { echo "run.sh: $usage" >&2; exit 2; }
half=$3
case "$half" in
  dev|holdout) ;;
  *) echo "run.sh: the half must be 'dev' or 'holdout', not '$half'. $usage" >&2; exit 2 ;;
esac
if [ $# -eq 4 ] && [ "$4" != "--verbose" ]; then
  echo "run.sh: unknown option '$4'. $usage" >&2; exit 2
fi
exec "$here/../score_fresh_eyes.sh" python "$here" "$here/labels-$half.yaml" \
  "${FRESH_EYES_SRC:-$HOME/.cache/agentguard-fresh-eyes}" "${FRESH_EYES_OUT:-${TMPDIR:-/tmp}/agentguard-fresh-eyes-$half}" "$1" "$2" ${4:+--verbose}
