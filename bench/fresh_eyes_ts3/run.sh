#!/usr/bin/env bash
# Score an agentguard on the third TypeScript fresh-eyes set (a holdout) with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
# The set is only ever reported on, never studied: per-tool misses are not listed and --verbose is refused.
# The scorers come from the shared development sets (SHARED_DEVSET, default ../shared/devset next to the
# checkout, for score.py, score_discovery.py and rulemap.yaml; its sibling devset-ts for collect.py, or
# SHARED_DEVSET_TS). Each repository is extracted once, at its pinned commit (only its subdir when fetch.txt
# names one), into $FRESH_EYES_TS3_SRC (default ~/.cache/agentguard-fresh-eyes-ts3)/owner+name/;
# results go to $FRESH_EYES_TS3_OUT (default $TMPDIR/agentguard-fresh-eyes-ts3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: run.sh MIRROR AGENTGUARD"
for arg in "$@"; do
  if [ "$arg" = "--verbose" ] || [ "$arg" = "verbose" ]; then
    echo "run.sh: --verbose is refused: this set is a holdout, only ever reported on, never studied (see README.md)." >&2
    exit 2
  fi
done
mirror=${1:?$usage}
ag=${2:?$usage}
if [ $# -gt 2 ]; then
  echo "run.sh: unexpected argument '$3'. $usage" >&2; exit 2
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
src=${FRESH_EYES_TS3_SRC:-$HOME/.cache/agentguard-fresh-eyes-ts3}
out=${FRESH_EYES_TS3_OUT:-${TMPDIR:-/tmp}/agentguard-fresh-eyes-ts3}
labels="$here/labels.yaml"
mkdir -p "$src" "$out"

# Extract every repository once, at its pinned commit.
while read -r spec commit subdir; do
  case "$spec" in ''|'#'*) continue ;; esac
  name=${spec#github:}
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

# collect.py reads the labels.yaml next to itself: run a copy beside this set's labels.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$shared_ts/collect.py" "$work/collect.py"
cp "$labels" "$work/labels.yaml"

"$py" "$work/collect.py" "$src" "$out" "$ag"
"$py" "$shared/score.py" "$work/labels.yaml" "$out/findings.json" --rulemap "$shared/rulemap.yaml" | tee "$out/score.txt"
"$py" "$shared/score_discovery.py" "$work/labels.yaml" "$out/reports.json" | tee "$out/discovery.txt"
