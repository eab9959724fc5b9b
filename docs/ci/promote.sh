#!/bin/sh
# Promote a confirmed candidate on the main branch, one job at a time (run by autoctx.yml's promote job).
#   CANDIDATE=<digest or prefix> sh docs/ci/promote.sh
# The promotion runs on a clean checkout of the newest main; when the push loses a race (another job
# pushed first), the checkout is reset to the new main and the promotion runs again through every gate
# (a candidate whose parent no longer serves is then rejected as stale, as it would be by hand).
# Never rebase or merge knowledge/ to win the race: that is how two promotions would both land.
set -eu
AUTOCTX=${AUTOCTX:-npx --no-install autoctx}
KNOWLEDGE=${AUTOCTX_KNOWLEDGE:-knowledge}
BRANCH=${BRANCH:-main}
REMOTE=${REMOTE:-origin}
: "${CANDIDATE:?set CANDIDATE to the candidate digest (or a unique prefix)}"

for attempt in 1 2 3; do
  git fetch --quiet "$REMOTE" "$BRANCH"
  git reset --quiet --hard "$REMOTE/$BRANCH"
  $AUTOCTX verify --knowledge "$KNOWLEDGE"
  status=0
  $AUTOCTX promote "$CANDIDATE" --knowledge "$KNOWLEDGE" || status=$?
  # 6: the gate refused (stale, rejected); the refusal is recorded in the tree and is committed too.
  if [ "$status" -ne 0 ] && [ "$status" -ne 6 ]; then exit "$status"; fi
  $AUTOCTX verify --knowledge "$KNOWLEDGE"
  git add -A -- "$KNOWLEDGE"
  git diff --cached --quiet || git commit --quiet -m "autoctx promote $CANDIDATE (exit $status)"
  if git push --quiet "$REMOTE" "HEAD:$BRANCH"; then exit "$status"; fi
  echo "promote.sh: $REMOTE/$BRANCH moved while promoting; promoting again on the new $BRANCH" >&2
done
echo "promote.sh: $REMOTE/$BRANCH kept moving; gave up after 3 attempts" >&2
exit 7
