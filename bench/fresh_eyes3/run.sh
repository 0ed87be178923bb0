#!/usr/bin/env bash
# Score an agentguard on the third fresh-eyes set (a holdout) with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
# The set is only ever reported on, never studied: no option lists misses, and any extra argument
# (--verbose included) is refused (see README.md).
# The scorers come from the shared development set (SHARED_DEVSET, default ../shared/devset next to
# the checkout). Work trees go to $FRESH_EYES3_SRC (default ~/.cache/agentguard-fresh-eyes3), results
# to $FRESH_EYES3_OUT (default $TMPDIR/agentguard-fresh-eyes3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: run.sh MIRROR AGENTGUARD"
if [ $# -gt 2 ]; then
  echo "run.sh: no options are accepted ('${*:3}'): this set is a holdout, only ever reported on, never studied (see README.md). $usage" >&2
  exit 2
fi
mirror=${1:?$usage}
ag=${2:?$usage}
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
src=${FRESH_EYES3_SRC:-$HOME/.cache/agentguard-fresh-eyes3}
out=${FRESH_EYES3_OUT:-${TMPDIR:-/tmp}/agentguard-fresh-eyes3}
mkdir -p "$src" "$out"

# collect.py reads the labels.yaml next to itself: run a copy beside this set's labels.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$shared/github/collect.py" "$work/collect.py"
cp "$here/labels.yaml" "$work/labels.yaml"

"$py" "$work/collect.py" "$mirror" "$src" "$out" "$ag"
"$py" "$shared/score.py" "$work/labels.yaml" "$out/findings.json" --rulemap "$shared/rulemap.yaml" | tee "$out/score.txt"
"$py" "$shared/score_discovery.py" "$work/labels.yaml" "$out/reports.json" | tee "$out/discovery.txt"
