#!/usr/bin/env bash
# Score an agentguard on one half of the TypeScript fresh-eyes set with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD dev|holdout [--verbose]
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
#   --verbose   list every miss (both halves are development material now: see README.md)
# The scorers come from the shared development sets (SHARED_DEVSET, default ../shared/devset next to the
# checkout, for score.py, score_discovery.py and rulemap.yaml; its sibling devset-ts for collect.py, or
# SHARED_DEVSET_TS). Each repository of the chosen half is extracted once, at its pinned commit (only its
# subdir when fetch.txt names one), into $FRESH_EYES_TS_SRC (default ~/.cache/agentguard-fresh-eyes-ts)/owner+name/;
# results go to $FRESH_EYES_TS_OUT (default $TMPDIR/agentguard-fresh-eyes-ts-HALF).
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
exec "$here/../score_fresh_eyes.sh" typescript "$here" "$here/labels-$half.yaml" \
  "${FRESH_EYES_TS_SRC:-$HOME/.cache/agentguard-fresh-eyes-ts}" "${FRESH_EYES_TS_OUT:-${TMPDIR:-/tmp}/agentguard-fresh-eyes-ts-$half}" "$1" "$2" ${4:+--verbose}
