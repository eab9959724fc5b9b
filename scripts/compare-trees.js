#!/usr/bin/env node
// Compare two knowledge trees written by the same steps (for example `npm run example` on two
// commits) byte for byte, apart from what differs from run to run: times, random ids, and what
// is derived from them (digests of records that hold a time, signatures, generated keys).
//
//   node scripts/compare-trees.js A B
//
// A token (an ISO time, a rollback id, a UUID, a hex string of 16 or more digits, an SSH signature or
// public key; in key files also base64 runs) that occurs in both trees is kept as it is: a bundle's digest, a
// component's, a policy's are the same on both sides and must stay so. A token that occurs in one
// tree only is replaced, in file names and in contents, by a placeholder naming its class
// (<time>, <id>, <hex>, <b64>). Then the two trees must hold the same files (as a multiset of
// normalized name and normalized bytes per folder, since a name made of a digest sorts anywhere).
// Exit 0 when they do; otherwise the first differences, and exit 1.
import fs from 'node:fs';
import path from 'node:path';

const CLASSES = [
  ['sig', String.raw`-----BEGIN SSH SIGNATURE-----[\s\S]*?-----END SSH SIGNATURE-----`],
  ['key', 'ssh-(?:ed25519|rsa) [A-Za-z0-9+/]+=*'],
  ['time', String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)`],
  ['id', String.raw`RBX-\d{14}-[0-9a-f]{8}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`],
  ['hex', '[0-9a-fA-F]{16,}'],
];
const B64 = ['b64', '[A-Za-z0-9+/]{40,}={0,2}'];
const keyMaterial = (file) => /\.sig$|allowed_signers|\.pub$|(^|\/)id_[a-z0-9]+$/.test(file);
const tokenRe = (file) =>
  new RegExp((keyMaterial(file) ? [B64, ...CLASSES] : CLASSES).map(([n, r]) => `(?<${n}>${r})`).join('|'), 'g');

function listFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, {withFileTypes: true}).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(root, p).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out;
}

function tokensOf(root, files) {
  const seen = new Set();
  for (const f of files) {
    for (const m of f.match(tokenRe('')) ?? []) seen.add(m);
    for (const m of fs.readFileSync(path.join(root, f), 'latin1').match(tokenRe(f)) ?? []) seen.add(m);
  }
  return seen;
}

function normalized(root, files, shared) {
  const sub = (text, re) =>
    text.replace(re, (t, ...rest) => {
      if (shared.has(t)) return t;
      const groups = rest.at(-1);
      return `<${Object.keys(groups).find((k) => groups[k] !== undefined)}>`;
    });
  // folder -> sorted list of "name\0bytes"
  const out = new Map();
  for (const f of files) {
    const name = sub(f, tokenRe(''));
    const dir = path.posix.dirname(name);
    if (!out.has(dir)) out.set(dir, []);
    out
      .get(dir)
      .push(`${path.posix.basename(name)}\0${sub(fs.readFileSync(path.join(root, f), 'latin1'), tokenRe(f))}`);
  }
  for (const list of out.values()) list.sort();
  return out;
}

const [a, b] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: node scripts/compare-trees.js TREE_A TREE_B');
  process.exit(2);
}
const filesA = listFiles(a);
const filesB = listFiles(b);
const tokA = tokensOf(a, filesA);
const tokB = tokensOf(b, filesB);
const shared = new Set([...tokA].filter((t) => tokB.has(t)));
const na = normalized(a, filesA, shared);
const nb = normalized(b, filesB, shared);
const problems = [];
for (const dir of [...new Set([...na.keys(), ...nb.keys()])].sort()) {
  const la = na.get(dir) ?? [];
  const lb = nb.get(dir) ?? [];
  const onlyA = la.filter((x) => !lb.includes(x));
  const onlyB = lb.filter((x) => !la.includes(x));
  for (const x of onlyA) {
    const [name, body] = x.split('\0');
    // Of the files with the same normalized name, the one that differs in the fewest lines.
    const lines = (text) => text.split('\n');
    const distance = (y) => {
      const [l1, l2] = [lines(body), lines(y.split('\0')[1])];
      return l1.filter((l, k) => l !== l2[k]).length + Math.abs(l1.length - l2.length);
    };
    const twin = onlyB.filter((y) => y.split('\0')[0] === name).sort((p, q) => distance(p) - distance(q))[0];
    if (!twin) {
      problems.push(`only in ${a}: ${dir}/${name}`);
      continue;
    }
    const l1 = body.split('\n');
    const l2 = twin.split('\0')[1].split('\n');
    const i = l1.findIndex((l, k) => l !== l2[k]);
    problems.push(`differs: ${dir}/${name} (line ${i + 1})\n  - ${l1[i]?.slice(0, 200)}\n  + ${l2[i]?.slice(0, 200)}`);
  }
  for (const y of onlyB)
    if (!onlyA.some((x) => x.split('\0')[0] === y.split('\0')[0]))
      problems.push(`only in ${b}: ${dir}/${y.split('\0')[0]}`);
}
console.log(`${filesA.length} files in ${a}, ${filesB.length} in ${b}; ${shared.size} stable tokens shared`);
if (problems.length === 0) {
  console.log('same bytes, apart from times and random ids');
  process.exit(0);
}
console.log(problems.slice(0, 20).join('\n'));
console.log(`${problems.length} difference(s)`);
process.exit(1);
