import {createHash} from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {STATE_DIR_NAME} from '../layout/root-paths.js';
import {atomicWrite, removeFile} from '../files/fs.js';
import type {RootGuard} from '../files/root-guard.js';

/**
 * The folders `autoctx reconcile` works in, outside the knowledge root: the three commits' knowledge trees as git
 * holds them (base, kept side, other side) and the stage, a knowledge root of its own where the other side's state
 * changes are made again through the commands. Nothing reaches the knowledge root until the stage verifies.
 */
export interface StageDirs {
  /** Where inputs the replayed commands read are written (a handoff's content). */
  readonly inputs: string;
  readonly base: string;
  readonly kept: string;
  readonly other: string;
  readonly stage: string;
  dispose(): void;
}

export function makeStageDirs(): StageDirs {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-reconcile-'));
  const at = (name: string) => path.join(dir, name);
  fs.mkdirSync(at('inputs'));
  return {
    inputs: at('inputs'),
    base: at('base'),
    kept: at('kept'),
    other: at('other'),
    stage: at('stage'),
    dispose: () => fs.rmSync(dir, {recursive: true, force: true}),
  };
}

/** Write a JSON input for a replayed command (outside every knowledge root); returns its path. */
export function writeStageInput(inputs: string, name: string, value: unknown): string {
  const file = path.join(inputs, name);
  fs.writeFileSync(file, `${JSON.stringify(value)}\n`);
  return file;
}

/**
 * Files of a tree (relative, `/`-separated), the state area and lock files left out, with their SHA-256. A writer's
 * temporary file is listed: applying a stage removes what an interrupted run left (every scenario lock is held).
 */
export function treeFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!fs.existsSync(root)) return out;
  const walk = (dir: string, rel: string) => {
    for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (rel === '' && e.name === STATE_DIR_NAME) continue;
      if (e.name === '.git') continue; // a repository's own folder is never a file of the tree
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full, r);
      else if (e.isFile() && !e.name.endsWith('.lock'))
        out.set(r, createHash('sha256').update(fs.readFileSync(full)).digest('hex'));
    }
  };
  walk(root, '');
  return out;
}

/** Copy one file of a tree into another (relative, `/`-separated), making its folders. */
export function copyTreeFile(fromRoot: string, toRoot: string, rel: string, o: {ifAbsent?: boolean} = {}): void {
  const target = path.join(toRoot, ...rel.split('/'));
  if (o.ifAbsent && fs.existsSync(target)) return;
  fs.mkdirSync(path.dirname(target), {recursive: true});
  fs.copyFileSync(path.join(fromRoot, ...rel.split('/')), target);
}

/** The bytes of one file of a tree (relative, `/`-separated). */
export function readTreeFile(root: string, rel: string): Buffer {
  return fs.readFileSync(path.join(root, ...rel.split('/')));
}

/** Copy a whole tree into a fresh folder. */
export function copyTree(fromRoot: string, toRoot: string): void {
  fs.cpSync(fromRoot, toRoot, {recursive: true});
}

/** Remove one file of a tree (a staged tree only). */
export function removeTreeFile(root: string, rel: string): void {
  fs.rmSync(path.join(root, ...rel.split('/')), {force: true});
}

export interface AppliedStage {
  written: string[];
  removed: string[];
}

/**
 * Make the knowledge root's files (its state area aside) those of the stage: each file that differs is replaced
 * whole (write, fsync, rename), each the stage lacks removed when git tracks it (under `prefix` alone, when given).
 * A crash part way
 * leaves some files of each; running reconcile again, from the same commits, finishes it.
 */
export function applyStage(
  stage: string,
  guard: RootGuard,
  prefix: string,
  tracked: ReadonlySet<string>,
): AppliedStage {
  const under = (files: Map<string, string>) => new Map([...files].filter(([rel]) => rel.startsWith(prefix)));
  const want = under(treeFiles(stage));
  // What an interrupted apply wrote is in its journal: a rerun removes what it does not write again.
  const journal = path.join(guard.root, STATE_DIR_NAME, JOURNAL);
  const earlier = readJournal(journal);
  // Only what git knows, an interrupted apply wrote, or a writer left (.tmp) is removed: a file of the user's own
  // that git does not track stays.
  const removable = (rel: string) => tracked.has(rel) || earlier.has(rel) || rel.endsWith('.tmp');
  const have = new Map([...under(treeFiles(guard.root))].filter(([rel]) => removable(rel)));
  // Every target is checked before the first write (a link out of the tree refuses the whole apply, not half of it).
  for (const rel of [...want.keys(), ...have.keys()]) guard.check(path.join(guard.root, ...rel.split('/')));
  atomicWrite(guard, journal, `${JSON.stringify([...new Set([...earlier, ...want.keys()])].sort())}\n`, {
    mode: 0o600,
    dirMode: 0o700,
  });
  const written: string[] = [];
  const removed: string[] = [];
  for (const [rel, sha] of want) {
    if (have.get(rel) === sha) continue;
    const target = path.join(guard.root, ...rel.split('/'));
    atomicWrite(guard, target, fs.readFileSync(path.join(stage, ...rel.split('/'))));
    written.push(rel);
  }
  for (const rel of have.keys()) {
    if (want.has(rel)) continue;
    removeFile(guard, path.join(guard.root, ...rel.split('/')));
    removed.push(rel);
    // A folder the removal emptied goes too (git keeps no empty folder; a reader would see a kind's folder empty).
    for (
      let dir = path.dirname(path.join(guard.root, ...rel.split('/')));
      dir !== guard.root;
      dir = path.dirname(dir)
    ) {
      if (fs.readdirSync(dir).length > 0) break;
      fs.rmdirSync(dir);
    }
  }
  // The journal stays: a reconcile run again before its result is committed (the same merge) replaces this one's files.
  return {written: written.sort(), removed: removed.sort()};
}

/** The state area's record of the files the last apply wrote (never committed: the state area is ignored). */
const JOURNAL = 'reconcile-apply.json';

function readJournal(file: string): Set<string> {
  try {
    const list: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    // Only autoctx's own folders are taken from it: an edited journal cannot name a file of the user's for removal.
    const own = (x: unknown): x is string =>
      typeof x === 'string' && /^[^/]+\/(context_bundles|negative_result_ledgers)\//.test(x) && !x.includes('..');
    return new Set(Array.isArray(list) ? list.filter(own) : []);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return new Set();
    throw error;
  }
}
