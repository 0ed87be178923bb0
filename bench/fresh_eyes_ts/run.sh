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
shared_ts=${SHARED_DEVSET_TS:-$shared/../devset-ts}
for f in "$shared/score.py" "$shared/score_discovery.py" "$shared/rulemap.yaml" "$shared_ts/collect.py"; do
  if [ ! -f "$f" ]; then
    echo "run.sh: the shared development sets are missing ($f not found)." >&2
    echo "run.sh: put them at ../shared/devset and ../shared/devset-ts next to the checkout, or set SHARED_DEVSET (and SHARED_DEVSET_TS)." >&2
    exit 2
  fi
done

agbin=$(dirname "$(command -v "$ag")")
[ -x "$agbin/python" ] && dflt="$agbin/python" || dflt=python3   # agentguard's own Python has PyYAML
py=${PYTHON:-$dflt}
src=${FRESH_EYES_TS_SRC:-$HOME/.cache/agentguard-fresh-eyes-ts}
out=${FRESH_EYES_TS_OUT:-${TMPDIR:-/tmp}/agentguard-fresh-eyes-ts-$half}
labels="$here/labels-$half.yaml"
mkdir -p "$src" "$out"

# Extract only the repositories this half labels, each at its pinned commit.
wanted=$("$py" -c 'import sys, yaml; print("\n".join(r["repo"] for r in yaml.safe_load(open(sys.argv[1]))["repos"]))' "$labels")
while read -r spec commit subdir; do
  case "$spec" in ''|'#'*) continue ;; esac
  name=${spec#github:}
  grep -qxF "$name" <<<"$wanted" || continue
  key=${name/\//+}
  dest="$src/$key"
  [ -d "$dest" ] && [ -n "$(ls -A "$dest")" ] && continue          # already extracted
  g="$mirror/$key/repo"
  if ! git --git-dir="$g" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "run.sh: $name@$commit is not in $g; fetch $spec and try again" >&2
    exit 1
  fi
  rm -rf "$dest" "$dest.part" && mkdir -p "$dest.part"
  if [ -n "$subdir" ]; then   # archive only that tree, keeping its repository-relative paths
    git --git-dir="$g" archive --prefix="$subdir/" "$commit:$subdir" | tar -x -C "$dest.part"
  else
    git --git-dir="$g" archive "$commit" | tar -x -C "$dest.part"
  fi
  mv "$dest.part" "$dest"
done < "$here/fetch.txt"

# collect.py reads the labels.yaml next to itself: run a copy beside the chosen half's labels.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$shared_ts/collect.py" "$work/collect.py"
cp "$labels" "$work/labels.yaml"

"$py" "$work/collect.py" "$src" "$out" "$ag"
"$py" "$shared/score.py" "$work/labels.yaml" "$out/findings.json" --rulemap "$shared/rulemap.yaml" ${verbose:+--verbose} | tee "$out/score.txt"
"$py" "$shared/score_discovery.py" "$work/labels.yaml" "$out/reports.json" ${verbose:+--verbose} | tee "$out/discovery.txt"
