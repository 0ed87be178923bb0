#!/usr/bin/env bash
# Score an agentguard on the sixtieth fresh-eyes set (development material) with the shared development-set scorers.
# Usage: run.sh MIRROR AGENTGUARD [--verbose]
#   MIRROR      folder holding the repositories of fetch.txt as bare git repositories, MIRROR/OWNER+NAME/repo
#   AGENTGUARD  the agentguard executable to measure
#   --verbose   list every miss (this set is a development set: it may be studied, see README.md)
# The scorers come from the shared development set (SHARED_DEVSET, default ../shared/devset next to
# the checkout). Work trees go to $FRESH_EYES60_SRC (default ~/.cache/agentguard-fresh-eyes60), results
# to $FRESH_EYES60_OUT (default $TMPDIR/agentguard-fresh-eyes60).
set -euo pipefail
exec "$(dirname "$0")/../fresh_eyes_set.sh" python dev "$(cd "$(dirname "$0")" && pwd)" fresh-eyes60 "$@"
