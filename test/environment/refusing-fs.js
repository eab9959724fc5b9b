#!/usr/bin/env node
// Run inside a private mount namespace (unshare -rm, see refusing-fs.test.ts):
// mounts a small tmpfs, makes a knowledge tree on it, then runs writing
// commands of the built CLI on a full file system (freeing a little more room
// each time, so that every write of the command is the one refused in turn)
// and on a read-only one. Prints one JSON line per run: the command, its exit
// code, its --json answer, and whether the tree's bytes changed.
import {execFileSync, spawnSync} from 'node:child_process';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const [project, mountPoint] = process.argv.slice(2);
const bin = path.join(project, 'bin/run.js');
const example = path.join(project, 'knowledge-example/demo');
const knowledge = path.join(mountPoint, 'k');
const fill = path.join(mountPoint, 'fill');

execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint]);
const cli = (args) => {
  const r = spawnSync(process.execPath, [bin, ...args, '--knowledge', knowledge, '--json'], {
    encoding: 'utf8',
    env: {...process.env, NO_COLOR: '1'},
  });
  let json;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = {unparsed: r.stdout, stderr: r.stderr};
  }
  return {status: r.status, json};
};
const hash = (dir) => {
  const h = createHash('sha256');
  const visit = (d) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      h.update(`${st.isDirectory() ? 'D' : 'F'} ${path.relative(dir, p)} ${st.mode & 0o777}\n`);
      if (st.isDirectory()) visit(p);
      else h.update(fs.readFileSync(p));
    }
  };
  visit(dir);
  return h.digest('hex');
};
const out = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const must = (r) => {
  if (r.status !== 0) throw new Error(JSON.stringify(r));
  return r;
};
must(cli(['init', '--scenario', 'demo', '--from', path.join(example, 'baseline')]));
const worse = must(cli(['propose', '--from', path.join(example, 'candidate-worse'), '--run-id', 'w'])).json
  .bundle_digest;

// Full: fill the file system, then free 4 KiB at a time until the command goes through.
const commands = [
  ['propose', '--from', path.join(example, 'candidate-better'), '--run-id', 'b'],
  ['reject', worse, '--rationale', 'no room for it'],
  ['epoch', 'rollover', '--evaluator-epoch', 'epoch-2'],
];
for (const args of commands) {
  fs.rmSync(fill, {force: true});
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${fill}`, 'bs=4k'], {stdio: 'ignore'});
  } catch {
    // dd stops with "no space left", which is the point
  }
  for (let step = 0; step < 200; step++) {
    const before = hash(knowledge);
    const r = cli(args);
    out({
      mode: 'full',
      command: args.slice(0, 2).join(' '),
      step,
      status: r.status,
      json: r.json,
      changed: hash(knowledge) !== before,
    });
    if (r.status !== 9) break;
    fs.truncateSync(fill, Math.max(0, fs.statSync(fill).size - 4096));
  }
}
fs.rmSync(fill, {force: true});

// Read-only: every writing command is refused, naming the path, and nothing changes.
execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
const readOnly = [
  ['propose', '--from', path.join(example, 'candidate-worse'), '--run-id', 'w2'],
  ['reject', worse, '--rationale', 'x'],
  ['rollback', '--rationale', 'x'],
  ['epoch', 'rollover', '--evaluator-epoch', 'epoch-3'],
  ['repair'],
  ['init', '--scenario', 'other', '--from', path.join(example, 'baseline')],
];
for (const args of readOnly) {
  const before = hash(knowledge);
  const r = cli(args);
  out({
    mode: 'read-only',
    command: args.slice(0, 2).join(' '),
    status: r.status,
    json: r.json,
    changed: hash(knowledge) !== before,
  });
}
const v = cli(['verify']);
out({mode: 'read-only', command: 'verify', status: v.status, json: v.json, changed: false});
