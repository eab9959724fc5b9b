import {createHash} from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';
import {MAX_ARTIFACT_BYTES} from '../../model/evaluation/observations.js';
import {STATE_DIR_NAME} from '../layout/root-paths.js';
import {StateArea} from '../state-area.js';
import type {RootGuard} from './fs.js';

/**
 * The artifact store: what evaluators kept of each arm (final answers,
 * transcripts, diffs), each file named by the SHA-256 of its bytes. It lives
 * in the state area (<knowledge>/.state/artifacts, never committed: it may
 * hold personal data and code) or in a folder the user names with
 * `--artifacts`. Nothing in it is evidence: a tree without it verifies and
 * replays, and the report says "not kept" for a file that is gone.
 */
export const ARTIFACT_FOLDER = 'artifacts';

/** The environment every evaluator command gets: where to put artifacts, and the state area for its caches. */
export interface EvaluatorEnvironment {
  AUTOCTX_ARTIFACT_DIR: string;
  AUTOCTX_STATE_DIR: string;
}

function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return null;
  }
}

function inside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The folder `--artifacts` names, absolute, checked before anything is
 * written or locked: a folder (or a name whose parent is one, made on
 * demand), and not inside the knowledge tree unless inside its state area
 * (git would commit what it holds).
 */
export function chosenArtifactDir(root: string, flag: string): string {
  if (flag.trim() === '') fail('USAGE', '--artifacts needs a folder');
  const dir = path.resolve(flag);
  const st = lstatOrNull(dir);
  if (st && !st.isDirectory()) fail('USAGE', `--artifacts ${flag}: not a folder`);
  if (!st && !lstatOrNull(path.dirname(dir))?.isDirectory())
    fail('USAGE', `--artifacts ${flag}: its parent folder does not exist`);
  const knowledge = path.resolve(root);
  if (inside(dir, knowledge) && !inside(dir, path.join(knowledge, STATE_DIR_NAME)))
    fail(
      'USAGE',
      `--artifacts ${flag} is inside the knowledge tree, where git would commit what it holds; name a folder ` +
        `outside it`,
    );
  return dir;
}

/** Where artifacts are read from: the folder named (as --artifacts names it), else the state area's. Made by no one. */
export function artifactDirFor(root: string, flag: string | undefined): string {
  return flag === undefined ? path.join(path.resolve(root), STATE_DIR_NAME, ARTIFACT_FOLDER) : path.resolve(flag);
}

/**
 * Make the artifact folder (the state area's by default) and return the
 * environment an evaluator command gets. The state area's folder is made
 * under its lock, with the area's own .gitignore.
 */
export async function prepareArtifactStore(
  guard: RootGuard,
  timeoutSeconds: number,
  chosen: string | null,
): Promise<EvaluatorEnvironment> {
  const area = new StateArea(guard);
  let dir: string;
  if (chosen === null) dir = await area.folder(timeoutSeconds, ARTIFACT_FOLDER);
  else {
    fs.mkdirSync(chosen, {recursive: true, mode: 0o700});
    dir = chosen;
  }
  return {AUTOCTX_ARTIFACT_DIR: dir, AUTOCTX_STATE_DIR: area.dir};
}

/** A scratch artifact folder (for a check that writes nothing to the tree) and its removal. */
export function scratchArtifactStore(root: string): {env: EvaluatorEnvironment; remove: () => void} {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-artifacts-'));
  return {
    env: {AUTOCTX_ARTIFACT_DIR: dir, AUTOCTX_STATE_DIR: path.join(path.resolve(root), STATE_DIR_NAME)},
    remove: () => fs.rmSync(dir, {recursive: true, force: true}),
  };
}

/** An artifact's bytes, or why they cannot be had: absent, not a regular file, too large, or not its digest. */
function readChecked(dir: string, digest: string): {bytes: Buffer} | {problem: 'absent' | string} {
  const file = path.join(dir, digest);
  const st = lstatOrNull(file);
  if (!st) return {problem: 'absent'};
  if (!st.isFile()) return {problem: 'is not a regular file'};
  if (st.size > MAX_ARTIFACT_BYTES) return {problem: `holds ${st.size} bytes (at most ${MAX_ARTIFACT_BYTES})`};
  let bytes: Buffer;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      bytes = fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return {problem: `cannot be read (${(error as NodeJS.ErrnoException).code})`};
  }
  if (bytes.length > MAX_ARTIFACT_BYTES) return {problem: `holds more than ${MAX_ARTIFACT_BYTES} bytes`};
  if (createHash('sha256').update(bytes).digest('hex') !== digest) return {problem: 'does not hash to its name'};
  return {bytes};
}

/**
 * Why the artifacts an answer names are not what it says (null: each exists
 * in `dir` as a regular file of at most 1 MiB that hashes to its name).
 */
export function artifactsProblem(dir: string, artifacts: Readonly<Record<string, string>>): string | null {
  for (const [name, digest] of Object.entries(artifacts)) {
    const r = readChecked(dir, digest);
    if ('problem' in r)
      return r.problem === 'absent'
        ? `names artifact ${name} (${digest}), which is not in ${dir}`
        : `names artifact ${name}, whose file ${path.join(dir, digest)} ${r.problem}`;
  }
  return null;
}

/** What the report shows of one artifact: its text, or that it is not kept (gone, or no longer its bytes). */
export type KeptArtifact = {kept: true; text: string} | {kept: false; why: string};

export function readArtifact(dir: string, digest: string): KeptArtifact {
  const r = readChecked(dir, digest);
  if ('bytes' in r) return {kept: true, text: r.bytes.toString('utf8')};
  return {kept: false, why: r.problem === 'absent' ? 'not kept' : `not kept: the file ${r.problem}`};
}
