#!/usr/bin/env node
// Flips the lowest bit of every byte of the files named on stdin, one at a
// time, runs the built `autoctx verify` (dist/) after each flip, restores the
// byte, and prints a tally of what verify made of each flip as one JSON line.
// After a flip, verify runs again only the steps that can see the flipped file
// (scoped-verify.js); on a sample of flips (the first of each file, and about
// one in SAMPLE_EVERY of the others, drawn from a seed) the whole-tree verify
// runs too, and its findings must be the same.
// Usage: flip-worker.js <knowledge> <unprotected-field,...> [<allowed-signers> [<stride> [<seed>]]] (files: a JSON
// array on stdin)
// With an allowed-signers anchor verify checks against it; with a stride, every stride-th byte is flipped
// (a file given as [file, stride] on stdin has a stride of its own).
// The tamper-evidence test runs two of these in parallel.
import fs from 'node:fs';
import path from 'node:path';
import {isDeepStrictEqual} from 'node:util';
import {fileURLToPath} from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const {verify} = await import(path.join(root, 'dist/core/common/verify.js'));
const {ScopedVerify, seeded} = await import('./scoped-verify.js');
const [knowledge, fields, allowedSigners, strideArg, seedArg] = process.argv.slice(2);
const stride = Number(strideArg || 1);
const seed = seedArg ? Number(seedArg) : Math.floor(Math.random() * 2 ** 32);
const SAMPLE_EVERY = 100;
const draw = seeded(seed);
const at = new Date();
const options = {knowledge, allowedSigners: allowedSigners || undefined, now: () => at};
const scoped = new ScopedVerify(verify, options);
/** The findings of a verify, for comparing two. */
const findings = (r) => ({
  status: r.status,
  errors: r.errors,
  warnings: r.warnings,
  notes: r.notes,
  chain_heads: r.chain_heads,
});
const UNPROTECTED = new Set(fields.split(','));
const files = JSON.parse(fs.readFileSync(0, 'utf8'));

/** Leaf paths at which two JSON values differ. */
function differences(a, b, at = []) {
  if (isDeepStrictEqual(a, b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) => differences(a[k], b[k], [...at, k]));
  }
  return [at];
}

function parse(text) {
  try {
    return {ok: true, value: JSON.parse(text)};
  } catch {
    return {ok: false};
  }
}

/** A flip verify let pass: formatting only, an unprotected field, or a miss. */
function classify(file, original, changed, tally) {
  if (path.basename(file) === '.gitignore') {
    // The first line is autoctx's comment; the rules below it are checked.
    const firstLineEnd = original.indexOf(0x0a);
    return changed.subarray(firstLineEnd).equals(original.subarray(firstLineEnd))
      ? ['unprotected', '.gitignore comment line']
      : ['undetected'];
  }
  if (file.endsWith('.md'))
    return changed.toString('utf8').trimEnd() === original.toString('utf8').trimEnd() ? ['formatting'] : ['undetected'];
  const before = parse(original.toString('utf8'));
  const after = parse(changed.toString('utf8'));
  if (!before.ok || !after.ok) return ['undetected'];
  const diffs = differences(before.value, after.value);
  if (diffs.length === 0) return ['formatting'];
  const names = diffs.map((d) => d.filter((k) => !/^\d+$/.test(k)).at(-1) ?? '');
  if (names.every((n) => UNPROTECTED.has(n))) return ['unprotected', ...names];
  return ['undetected'];
}

const tally = {
  files: 0,
  bytes: 0,
  detected: 0,
  warned: 0,
  formatting: 0,
  unprotected: 0,
  undetected: [],
  unprotectedFields: [],
  seed,
  sampled: 0,
  differed: [],
  steps: 0,
  rerun: 0,
  whole: 0,
};
const seenFields = new Set();
for (const item of files) {
  const [file, step] = Array.isArray(item) ? item : [item, stride];
  const rel = path.relative(knowledge, file);
  const original = fs.readFileSync(file);
  tally.files++;
  for (let i = 0; i < original.length; i += step) {
    const changed = Buffer.from(original);
    changed[i] ^= 0x01;
    fs.writeFileSync(file, changed);
    const r = scoped.after(file);
    tally.bytes++;
    if (i === 0 || draw() < 1 / SAMPLE_EVERY) {
      tally.sampled++;
      const whole = verify(options);
      if (!isDeepStrictEqual(findings(r), findings(whole)))
        tally.differed.push(
          `${rel} byte ${i} (seed ${seed}): scoped ${JSON.stringify(findings(r))}, ` +
            `whole-tree ${JSON.stringify(findings(whole))}`,
        );
    }
    // A signature is named by the document it signs (BAD_SIGNATURE on that document).
    const signs = rel.endsWith('.sig') ? rel.slice(0, -4) : null;
    if (
      r.status === 'failed' &&
      r.errors.some((e) => e.file === rel || (signs !== null && e.file === signs && e.code === 'BAD_SIGNATURE'))
    ) {
      tally.detected++;
      continue;
    }
    // A .gitignore rule of a later generation than the tree's is a warning (GITIGNORE_OUTDATED), not an error:
    // a tree made by an older autoctx lacks it too, and any writing command adds it back.
    if (
      path.basename(file) === '.gitignore' &&
      r.warnings.some((w) => w.file === rel && w.code === 'GITIGNORE_OUTDATED')
    ) {
      tally.warned++;
      continue;
    }
    const [outcome, ...names] = classify(file, original, changed, tally);
    if (outcome === 'undetected') {
      const around = JSON.stringify(original.subarray(Math.max(0, i - 24), i + 8).toString('latin1'));
      tally.undetected.push(
        `${rel} byte ${i} in ${around}: verify ` +
          `${r.status}${r.errors.length ? ` (${r.errors[0].file} ${r.errors[0].code})` : ''}`,
      );
    } else {
      tally[outcome]++;
      for (const n of names) seenFields.add(n);
    }
  }
  fs.writeFileSync(file, original);
}
tally.unprotectedFields = [...seenFields].sort();
Object.assign(tally, scoped.count);
process.stdout.write(`${JSON.stringify(tally)}\n`);
