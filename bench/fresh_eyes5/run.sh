#!/usr/bin/env bash
# Score an agentguard on the fifth fresh-eyes set (development material) with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD [--verbose]
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
#   --verbose   list every miss (this set is a development set: it may be studied, see README.md)
# The scorers come from the shared development set (SHARED_DEVSET, default ../shared/devset next to
# the checkout). Work trees go to $FRESH_EYES5_SRC (default ~/.cache/agentguard-fresh-eyes5), results
# to $FRESH_EYES5_OUT (default $TMPDIR/agentguard-fresh-eyes5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: run.sh MIRROR AGENTGUARD [--verbose]"
if [ $# -gt 3 ]; then
  echo "run.sh: too many arguments. $usage" >&2; exit 2
fi
mirror=${1:?$usage}
ag=${2:?$usage}
verbose=${3:-}
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
src=${FRESH_EYES5_SRC:-$HOME/.cache/agentguard-fresh-eyes5}
out=${FRESH_EYES5_OUT:-${TMPDIR:-/tmp}/agentguard-fresh-eyes5}
mkdir -p "$src" "$out"

# collect.py reads the labels.yaml next to itself: run a copy beside this set's labels.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$shared/github/collect.py" "$work/collect.py"
cp "$here/labels.yaml" "$work/labels.yaml"

"$py" "$work/collect.py" "$mirror" "$src" "$out" "$ag"
"$py" "$shared/score.py" "$work/labels.yaml" "$out/findings.json" --rulemap "$shared/rulemap.yaml" ${verbose:+--verbose} | tee "$out/score.txt"
"$py" "$shared/score_discovery.py" "$work/labels.yaml" "$out/reports.json" ${verbose:+--verbose} | tee "$out/discovery.txt"
