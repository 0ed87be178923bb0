#!/usr/bin/env bash
# What every fresh-eyes set's run.sh does once it has read its own arguments: score an agentguard
# on one labels file with the shared development-set scorers.
# Usage: score_fresh_eyes.sh python|typescript SETDIR LABELS SRC OUT MIRROR AGENTGUARD [--verbose]
#   SETDIR   the set's folder (its fetch.txt: `github:owner/name COMMIT [SUBDIR]` a line)
#   LABELS   the labels file scored (a set's labels.yaml, or one half's)
#   SRC OUT  where repositories are extracted, and where results go
# The scorers come from the shared development set (SHARED_DEVSET, default ../shared/devset next to
# the checkout); TypeScript sets also need its sibling devset-ts (or SHARED_DEVSET_TS).
set -euo pipefail
usage="usage: score_fresh_eyes.sh python|typescript SETDIR LABELS SRC OUT MIRROR AGENTGUARD [--verbose]"
language=${1:?$usage}
setdir=${2:?$usage}
labels=${3:?$usage}
src=${4:?$usage}
out=${5:?$usage}
mirror=${6:?$usage}
ag=${7:?$usage}
verbose=${8:-}
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$mirror" ] || { echo "run.sh: MIRROR '$mirror' is not a folder." >&2; exit 2; }
command -v "$ag" >/dev/null 2>&1 || { echo "run.sh: agentguard '$ag' not found or not executable." >&2; exit 2; }

shared=${SHARED_DEVSET:-$here/../../shared/devset}
needed=("$shared/score.py" "$shared/score_discovery.py" "$shared/rulemap.yaml")
case "$language" in
  python) collect="$shared/github/collect.py" ;;
  typescript) collect="${SHARED_DEVSET_TS:-$shared/../devset-ts}/collect.py" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
for f in "${needed[@]}" "$collect"; do
  if [ ! -f "$f" ]; then
    echo "run.sh: the shared development sets are missing ($f not found)." >&2
    echo "run.sh: put them at ../shared next to the checkout, or set SHARED_DEVSET (and SHARED_DEVSET_TS)." >&2
    exit 2
  fi
done

agbin=$(dirname "$(command -v "$ag")")
[ -x "$agbin/python" ] && dflt="$agbin/python" || dflt=python3   # agentguard's own Python has PyYAML
py=${PYTHON:-$dflt}
mkdir -p "$src" "$out"

if [ "$language" = typescript ]; then
  # Extract the repositories these labels name, each once, at its pinned commit (only its SUBDIR
  # when fetch.txt names one). The Python collect.py extracts its own.
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
      tree="$commit:$subdir" prefix="$subdir/"
    else
      tree="$commit" prefix=""
    fi
    if ! git --git-dir="$g" archive --prefix="$prefix" "$tree" 2>/dev/null | tar -x -C "$dest.part" 2>/dev/null; then
      # A snapshot may list its largest files without holding them: write the files it holds, one
      # by one, and name the ones left out.
      rm -rf "$dest.part" && mkdir -p "$dest.part"
      while IFS=$'\t' read -r meta path; do
        read -r _ type oid <<<"$meta"
        [ "$type" = blob ] || continue
        if ! git --git-dir="$g" cat-file -e "$oid" 2>/dev/null; then
          echo "run.sh: $name: $prefix$path is not in the snapshot; left out" >&2
          continue
        fi
        mkdir -p "$(dirname "$dest.part/$prefix$path")"
        git --git-dir="$g" cat-file blob "$oid" >"$dest.part/$prefix$path"
      done < <(git --git-dir="$g" ls-tree -r "$tree")
    fi
    mv "$dest.part" "$dest"
  done < "$setdir/fetch.txt"
fi

# collect.py reads the labels.yaml next to itself: run a copy beside these labels.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$collect" "$work/collect.py"
cp "$labels" "$work/labels.yaml"

if [ "$language" = python ]; then
  "$py" "$work/collect.py" "$mirror" "$src" "$out" "$ag"
else
  "$py" "$work/collect.py" "$src" "$out" "$ag"
fi
"$py" "$shared/score.py" "$work/labels.yaml" "$out/findings.json" --rulemap "$shared/rulemap.yaml" ${verbose:+--verbose} | tee "$out/score.txt"
"$py" "$shared/score_discovery.py" "$work/labels.yaml" "$out/reports.json" ${verbose:+--verbose} | tee "$out/discovery.txt"
