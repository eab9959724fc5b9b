import {ELEMENT_STATES_FILE, elementStatesFile} from '../kinds/bundle/element-states.js';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {LARGE_STRING, prettyJson, prettyJsonPieces, textPieces} from '../../canonical/index.js';
import {fail, isSystemError, isJsonParseError, rethrowUnless} from '../../errors.js';
import type {ContextBundle} from '../../model/bundle/bundle.js';
import {componentFileName} from '../file-names.js';
import {writeTemp} from './fs.js';
import {ownerGone, ownerRecord, readOwnerFile} from './lock.js';

function existingDigest(dir: string): string | null {
  try {
    return (
      (JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {digest?: string} | null)?.digest ?? null
    );
  } catch (error) {
    rethrowUnless(error, isSystemError, isJsonParseError);
    return null;
  }
}

/** A very large manifest or component: a flushed temp file written piece by piece, then renamed. */
function writeInPieces(file: string, pieces: Iterable<string>): void {
  fs.renameSync(
    writeTemp(file, () => pieces),
    file,
  );
}

/**
 * Write a bundle out as files: manifest.json plus <kind>/<key>.<ext> per
 * component, so that proposing the folder gives the same digest. The folder
 * must be new or empty, or already hold this same bundle. Returns the relative
 * paths written.
 */
/** Refuse a target that holds anything but real folders and regular files: nothing is ever written through a link. */
function refuseLinks(dir: string, shown: string): void {
  for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) refuseLinks(p, path.join(shown, e.name));
    else if (!e.isFile())
      fail(
        'TARGET_UNSAFE',
        `${path.join(shown, e.name)} is ${e.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}: ` +
          `materialize never writes through one; use a new or empty folder`,
        {directory: shown},
      );
  }
}

export function materializeBundle(bundle: ContextBundle, dir: string): string[] {
  const target = path.resolve(dir);
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(target);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    st = undefined;
  }
  if (st) {
    if (st.isSymbolicLink())
      fail('TARGET_UNSAFE', `${dir} is a symbolic link: materialize never writes through one`, {directory: dir});
    if (!st.isDirectory()) fail('TARGET_EXISTS', `${dir} exists and is not a folder`, {directory: dir});
    if (fs.readdirSync(target).length > 0) {
      refuseLinks(target, dir);
      if (existingDigest(target) !== bundle.digest)
        fail('TARGET_EXISTS', `${dir} is not empty; materialize into a new or empty folder`, {directory: dir});
    }
  }
  fs.mkdirSync(target, {recursive: true});
  const files: string[] = [];
  // Each file is a flushed temporary file renamed into place: rename(2) replaces a name, it never writes through it.
  const write = (file: string, text: string) => fs.renameSync(writeTemp(file, text), file);
  for (const c of bundle.components) {
    if (c.state !== undefined) continue; // a non-present component has no file: element_states.json declares it
    const rel = path.join(c.kind, componentFileName(c.key, c.media_type));
    fs.mkdirSync(path.join(target, c.kind), {recursive: true});
    if (c.content.length > LARGE_STRING) writeInPieces(path.join(target, rel), textPieces(c.content));
    else write(path.join(target, rel), c.content);
    files.push(rel);
  }
  const states = elementStatesFile(bundle.components);
  if (states !== null) {
    write(path.join(target, ELEMENT_STATES_FILE), states);
    files.push(ELEMENT_STATES_FILE);
  }
  const manifest = path.join(target, 'manifest.json');
  if (bundle.components.some((c) => c.content.length > LARGE_STRING)) writeInPieces(manifest, prettyJsonPieces(bundle));
  else write(manifest, prettyJson(bundle));
  files.push('manifest.json');
  return files;
}

/** One arm's own copy of a bundle, and the check that the arm left it as it was. */
export interface ArmCopy {
  dir: string;
  /** Null when the copy is byte for byte the bundle still; else the first path that changed. */
  changed(): string | null;
  /** Done with it: a copy found unchanged goes back to the pool for a later arm, any other is removed. */
  remove(): void;
}

/** Bundles materialized for one evaluation run, in a private temporary folder, and how to remove them. */
export interface MaterializedBundles {
  /** A fresh copy of a bundle for one arm (its bundle_dir). */
  armCopy(digest: string): ArmCopy;
  remove(): void;
}

const BUNDLES_PREFIX = 'autoctx-bundles-';
const OWNER_FILE = '.owner.json';

/** Every file and folder under dir, with the SHA-256 of each file: what an arm must leave as it found it. */
function treeFingerprint(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    for (const e of fs.readdirSync(d, {withFileTypes: true})) {
      const p = path.join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        out.set(`${r}/`, 'folder');
        walk(p, r);
      } else if (e.isFile()) out.set(r, createHash('sha256').update(fs.readFileSync(p)).digest('hex'));
      else out.set(r, 'not a regular file');
    }
  };
  walk(dir, '');
  return out;
}

function firstDifference(a: Map<string, string>, b: Map<string, string>): string | null {
  for (const [k, v] of a) if (b.get(k) !== v) return k;
  for (const k of b.keys()) if (!a.has(k)) return k;
  return null;
}

/**
 * Remove the evaluation folders of runs whose process is provably gone (a run
 * killed with SIGKILL leaves its folder behind): done when a run starts, and
 * by repair. Returns the folders removed.
 */
export function sweepAbandonedEvaluationFolders(): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(BUNDLES_PREFIX));
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return removed;
  }
  for (const name of names) {
    const dir = path.join(os.tmpdir(), name);
    const owner = readOwnerFile(path.join(dir, OWNER_FILE));
    let gone = owner !== null && ownerGone(owner);
    if (owner === null) {
      // A folder from before folders recorded their owner: gone once a day old.
      try {
        gone = Date.now() - fs.lstatSync(dir).mtimeMs > 86_400_000;
      } catch (error) {
        rethrowUnless(error, isSystemError);
        gone = false;
      }
    }
    if (!gone) continue;
    fs.rmSync(dir, {recursive: true, force: true});
    removed.push(dir);
  }
  return removed;
}

/**
 * Materialize the bundles an evaluator reads into a fresh temporary folder,
 * once per run; each arm then gets its own copy (bundle_dir), checked byte
 * for byte after the arm, so what one arm writes there is never seen by
 * another and is found. No two arms hold one copy at once; a copy an arm
 * left exactly as the bundle is handed to a later arm. The folder is removed when the run ends, whatever its
 * outcome, on Ctrl-C, and otherwise by the next run or repair.
 */
export function materializeForEvaluation(
  bundles: readonly ContextBundle[],
  onInterrupt: (cleanup: () => void) => () => void = () => () => undefined,
): MaterializedBundles {
  sweepAbandonedEvaluationFolders();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), BUNDLES_PREFIX));
  const forget = onInterrupt(() => fs.rmSync(root, {recursive: true, force: true}));
  const remove = () => {
    forget();
    fs.rmSync(root, {recursive: true, force: true});
  };
  try {
    fs.writeFileSync(path.join(root, OWNER_FILE), JSON.stringify(ownerRecord()));
    const masters = new Map<string, {dir: string; fingerprint: Map<string, string>}>();
    for (const b of bundles) {
      const dir = path.join(root, 'bundles', b.digest);
      materializeBundle(b, dir);
      masters.set(b.digest, {dir, fingerprint: treeFingerprint(dir)});
    }
    // Copies are pooled per bundle: one an arm left byte for byte as it found it is as good as fresh, and
    // is handed to the next arm (copying and removing a folder per arm would cost more than the arm's own work).
    let n = 0;
    const pools = new Map<string, string[]>();
    const armCopy = (digest: string): ArmCopy => {
      const master = masters.get(digest)!;
      const pool = pools.get(digest) ?? [];
      pools.set(digest, pool);
      let dir = pool.pop();
      if (dir === undefined) {
        dir = path.join(root, 'arms', String(n++), digest);
        fs.mkdirSync(path.dirname(dir), {recursive: true});
        fs.cpSync(master.dir, dir, {recursive: true, mode: fs.constants.COPYFILE_FICLONE});
      }
      const own = dir;
      let clean = false;
      return {
        dir: own,
        changed: () => {
          const difference = firstDifference(master.fingerprint, fs.existsSync(own) ? treeFingerprint(own) : new Map());
          clean = difference === null;
          return difference;
        },
        remove: () => {
          if (clean) pool.push(own);
          else fs.rmSync(path.dirname(own), {recursive: true, force: true});
        },
      };
    };
    return {armCopy, remove};
  } catch (error) {
    remove();
    throw error;
  }
}
