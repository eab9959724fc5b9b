// The order jest starts test files in: the longest first, so that the two workers of a 2-core machine
// finish together instead of one of them running the exhaustive sweeps alone at the end. A fresh clone
// has no timing cache (jest's own sequencer would order it by file size), so the longest suites are
// named here, measured on a 2-core machine (see docs/performance.md); the rest follow by size.
const fs = require('node:fs');
const path = require('node:path');

const LONGEST = [
  'tamper/tamper-evidence',
  'crash/crash',
  'concurrency/races',
  'install/fresh-clone',
  'cli/flag-without-value',
  'cli/signing',
  'concurrency/concurrency',
  'memory/large-component',
  'git/diverged',
  'evaluators/agent',
];

const rank = (file) => {
  const rel = path.relative(path.join(__dirname, '..'), file).split(path.sep).join('/');
  const i = LONGEST.indexOf(rel.replace(/\.test\.ts$/, ''));
  return i === -1 ? LONGEST.length : i;
};

class LongestFirst {
  sort(tests) {
    const size = (t) => fs.statSync(t.path).size;
    return [...tests].sort((a, b) => rank(a.path) - rank(b.path) || size(b) - size(a) || (a.path < b.path ? -1 : 1));
  }

  cacheResults() {}

  allFailedTests(tests) {
    return tests;
  }

  shard(tests, {shardIndex, shardCount}) {
    return this.sort(tests).filter((_, i) => i % shardCount === shardIndex - 1);
  }
}

module.exports = LongestFirst;
