#!/usr/bin/env node
// Flips the lowest bit of every byte of the files named on stdin, one at a
// time, runs the built `autoctx verify` (dist/) after each flip, restores the
// byte, and prints a tally of what verify made of each flip as one JSON line.
// Usage: flip-worker.js <knowledge> <unprotected-field,...> [<allowed-signers> [<stride>]]  (files: a JSON array on stdin)
// With an allowed-signers anchor verify checks against it; with a stride, every stride-th byte is flipped
// (a file given as [file, stride] on stdin has a stride of its own).
// The tamper-evidence test runs two of these in parallel.
import fs from 'node:fs';
import path from 'node:path';
import {isDeepStrictEqual} from 'node:util';
import {fileURLToPath} from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const {verify} = await import(path.join(root, 'dist/core/common/verify.js'));
const [knowledge, fields, allowedSigners, strideArg] = process.argv.slice(2);
const stride = Number(strideArg ?? 1);
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
    return changed.subarray(firstLineEnd).equals(original.subarray(firstLineEnd)) ? ['unprotected', '.gitignore comment line'] : ['undetected'];
  }
  if (file.endsWith('.md')) return changed.toString('utf8').trimEnd() === original.toString('utf8').trimEnd() ? ['formatting'] : ['undetected'];
  const before = parse(original.toString('utf8'));
  const after = parse(changed.toString('utf8'));
  if (!before.ok || !after.ok) return ['undetected'];
  const diffs = differences(before.value, after.value);
  if (diffs.length === 0) return ['formatting'];
  const names = diffs.map((d) => d.filter((k) => !/^\d+$/.test(k)).at(-1) ?? '');
  if (names.every((n) => UNPROTECTED.has(n))) return ['unprotected', ...names];
  return ['undetected'];
}

const tally = {files: 0, bytes: 0, detected: 0, warned: 0, formatting: 0, unprotected: 0, undetected: [], unprotectedFields: []};
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
    const r = verify({knowledge, allowedSigners: allowedSigners || undefined});
    tally.bytes++;
    // A signature is named by the document it signs (BAD_SIGNATURE on that document).
    const signs = rel.endsWith('.sig') ? rel.slice(0, -4) : null;
    if (r.status === 'failed' && r.errors.some((e) => e.file === rel || (signs !== null && e.file === signs && e.code === 'BAD_SIGNATURE'))) {
      tally.detected++;
      continue;
    }
    // A .gitignore rule of a later generation than the tree's is a warning (GITIGNORE_OUTDATED), not an error:
    // a tree made by an older autoctx lacks it too, and any writing command adds it back.
    if (path.basename(file) === '.gitignore' && r.warnings.some((w) => w.file === rel && w.code === 'GITIGNORE_OUTDATED')) {
      tally.warned++;
      continue;
    }
    const [outcome, ...names] = classify(file, original, changed, tally);
    if (outcome === 'undetected') {
      const around = JSON.stringify(original.subarray(Math.max(0, i - 24), i + 8).toString('latin1'));
      tally.undetected.push(`${rel} byte ${i} in ${around}: verify ${r.status}${r.errors.length ? ` (${r.errors[0].file} ${r.errors[0].code})` : ''}`);
    } else {
      tally[outcome]++;
      for (const n of names) seenFields.add(n);
    }
  }
  fs.writeFileSync(file, original);
}
tally.unprotectedFields = [...seenFields].sort();
process.stdout.write(`${JSON.stringify(tally)}\n`);
