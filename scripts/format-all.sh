#!/usr/bin/env bash
# Formats the whole tree once, print width 120 (biome.json), and rewraps comments wider than that.
# Run after merging (`npm run format:all`), then commit the result alone and add `npm run format:check`
# to `npm test`. Only layout changes: every file's tokens stay the same (the formatter only moves code,
# scripts/rewrap-comments.mjs checks its own rewrites), and string contents are never split.
#
# Long strings: a line that is still wider than 120 columns after this is one that a string or template
# literal makes wide; scripts/split-long-lines.js cuts those into `+` chains of the same value (then format
# again). The house test (test/architecture/house.test.ts) allows no line over 120; the count is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
biome=node_modules/.bin/biome

node scripts/rewrap-comments.mjs
"$biome" format --write . > /dev/null
# The formatter re-indents some comments: rewrap those too, and format once more.
node scripts/rewrap-comments.mjs
"$biome" format --write . > /dev/null

# Both must now find nothing to do.
node scripts/rewrap-comments.mjs --check
"$biome" format .

git ls-files '*.ts' '*.tsx' '*.js' '*.mjs' '*.cjs' | grep -v -e '^test/fixtures/' -e '^hosts-e2e/' -e '\.generated\.' \
  | xargs awk 'length($0) > 120 {n++} END {print n + 0 " lines are still wider than 120 columns (cut them: node scripts/split-long-lines.js)"}'
