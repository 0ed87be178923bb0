#!/usr/bin/env bash
# Score an agentguard on the sixty-first fresh-eyes set (a holdout) with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
# The set is only ever reported on, never studied: no option lists misses, and any extra argument
# (--verbose included) is refused (see README.md).
# The scorers come from the shared development set (SHARED_DEVSET, default ../shared/devset next to
# the checkout). Work trees go to $FRESH_EYES61_SRC (default ~/.cache/agentguard-fresh-eyes61), results
# to $FRESH_EYES61_OUT (default $TMPDIR/agentguard-fresh-eyes61).
set -euo pipefail
exec "$(dirname "$0")/../fresh_eyes_set.sh" python holdout "$(cd "$(dirname "$0")" && pwd)" fresh-eyes61 "$@"
