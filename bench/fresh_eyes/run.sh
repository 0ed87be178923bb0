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
mirror=${1:?$usage}
ag=${2:?$usage}
half=${3:?$usage}
verbose=${4:-}
case "$half" in
  dev|holdout) ;;
  *) echo "run.sh: the half must be 'dev' or 'holdout', not '$half'. $usage" >&2; exit 2 ;;
esac
if [ -n "$verbose" ] && [ "$verbose" != "--verbose" ]; then
  echo "run.sh: unknown option '$verbose'. $usage" >&2; exit 2
fi
[ -d "$mirror" ] || { echo "run.sh: MIRROR '$mirror' is not a folder. $usage" >&2; exit 2; }
command -v "$ag" >/dev/null 2>&1 || { echo "run.sh: agentguard '$ag' not found or not executable." >&2; exit 2; }

shared=${SHARED_DEVSET:-$here/../../../shared/devset}
for f in score.py score_discovery.py rulemap.yaml github/collect.py; do
  if [ ! -f "$shared/$f" ]; then
    echo "run.sh: the shared development set is missing ($shared/$f not found)." >&2
    echo "run.sh: put it at ../shared/devset next to the checkout, or set SHARED_DEVSET to its folder." >&2
    exit 2
  fi
done

agbin=$(dirname "$(command -v "$ag")")
[ -x "$agbin/python" ] && dflt="$agbin/python" || dflt=python3   # agentguard's own Python has PyYAML
py=${PYTHON:-$dflt}
src=${FRESH_EYES_SRC:-$HOME/.cache/agentguard-fresh-eyes}
out=${FRESH_EYES_OUT:-${TMPDIR:-/tmp}/agentguard-fresh-eyes-$half}
mkdir -p "$src" "$out"

# collect.py reads the labels.yaml next to itself: run a copy beside the chosen half's labels.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$shared/github/collect.py" "$work/collect.py"
cp "$here/labels-$half.yaml" "$work/labels.yaml"

"$py" "$work/collect.py" "$mirror" "$src" "$out" "$ag"
"$py" "$shared/score.py" "$work/labels.yaml" "$out/findings.json" --rulemap "$shared/rulemap.yaml" ${verbose:+--verbose} | tee "$out/score.txt"
"$py" "$shared/score_discovery.py" "$work/labels.yaml" "$out/reports.json" ${verbose:+--verbose} | tee "$out/discovery.txt"
