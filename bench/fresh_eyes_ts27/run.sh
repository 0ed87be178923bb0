#!/usr/bin/env bash
# Score an agentguard on the twenty-seventh TypeScript fresh-eyes set (a holdout) with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
# The set is only ever reported on, never studied: per-tool misses are not listed and --verbose is refused.
# The scorers come from the shared development sets (SHARED_DEVSET, default ../shared/devset next to the
# checkout, for score.py, score_discovery.py and rulemap.yaml; its sibling devset-ts for collect.py, or
# SHARED_DEVSET_TS). Each repository is extracted once, at its pinned commit (only its subdir when fetch.txt
# names one), into $FRESH_EYES_TS27_SRC (default ~/.cache/agentguard-fresh-eyes-ts27)/owner+name/;
# results go to $FRESH_EYES_TS27_OUT (default $TMPDIR/agentguard-fresh-eyes-ts27).
set -euo pipefail
exec "$(dirname "$0")/../fresh_eyes_set.sh" typescript holdout "$(cd "$(dirname "$0")" && pwd)" fresh-eyes-ts27 "$@"
