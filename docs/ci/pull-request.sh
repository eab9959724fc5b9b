#!/bin/sh
# The pull-request check for a knowledge tree kept in git (run by autoctx.yml; runnable by hand).
#   BASE=origin/main sh docs/ci/pull-request.sh
# 1. verify: every file of the tree, against the trust anchor when signing is on ($AUTOCTX_ALLOWED_SIGNERS).
# 2. The tree extends the base branch's: no history entry the base holds was deleted or rewritten
#    (signatures prove who made each change; only git's history proves that nothing was removed).
# 3. A report of every candidate the branch adds, for the job summary or a pull-request comment
#    ($GITHUB_STEP_SUMMARY when set, else stdout).
# Exit: the first failing command's exit code (8: the tree or its history is refused).
set -eu
AUTOCTX=${AUTOCTX:-npx --no-install autoctx}
KNOWLEDGE=${AUTOCTX_KNOWLEDGE:-knowledge}
BASE=${BASE:-origin/main}
OUT=${GITHUB_STEP_SUMMARY:-/dev/stdout}

$AUTOCTX verify --knowledge "$KNOWLEDGE"
$AUTOCTX verify --knowledge "$KNOWLEDGE" --extends "$BASE"

# Candidates this branch adds: knowledge/<scenario>/context_bundles/candidates/<digest>/record.json
git diff --name-only --diff-filter=A "$BASE"...HEAD -- "$KNOWLEDGE" |
  sed -n 's#^.*/\([^/]*\)/context_bundles/candidates/\([0-9a-f]\{64\}\)/record\.json$#\1 \2#p' |
  sort -u |
  while read -r scenario digest; do
    $AUTOCTX report "$digest" --knowledge "$KNOWLEDGE" --scenario "$scenario" --format md >>"$OUT" ||
      echo "autoctx report $digest: no report yet (it has no evidence)" >>"$OUT"
  done
