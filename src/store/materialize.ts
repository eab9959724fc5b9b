import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {LARGE_STRING, prettyJson, prettyJsonPieces, textPieces} from '../canonical/index.js';
import {fail} from '../errors.js';
import type {ContextBundle} from '../model/bundle.js';
import {componentFileName} from './file-names.js';
import {writeTemp} from './fs.js';

function existingDigest(dir: string): string | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {digest?: string}).digest ?? null;
  } catch {
    return null;
  }
}

/** A very large manifest or component: a flushed temp file written piece by piece, then renamed. */
function writeInPieces(file: string, pieces: Iterable<string>): void {
  fs.renameSync(writeTemp(file, () => pieces), file);
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
    else if (!e.isFile()) fail('TARGET_UNSAFE', `${path.join(shown, e.name)} is ${e.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}: materialize never writes through one; use a new or empty folder`, {directory: shown});
  }
}

export function materializeBundle(bundle: ContextBundle, dir: string): string[] {
  const target = path.resolve(dir);
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(target);
  } catch {
    st = undefined;
  }
  if (st) {
    if (st.isSymbolicLink()) fail('TARGET_UNSAFE', `${dir} is a symbolic link: materialize never writes through one`, {directory: dir});
    if (!st.isDirectory()) fail('TARGET_EXISTS', `${dir} exists and is not a folder`, {directory: dir});
    if (fs.readdirSync(target).length > 0) {
      refuseLinks(target, dir);
      if (existingDigest(target) !== bundle.digest) fail('TARGET_EXISTS', `${dir} is not empty; materialize into a new or empty folder`, {directory: dir});
    }
  }
  fs.mkdirSync(target, {recursive: true});
  const files: string[] = [];
  // Each file is a flushed temporary file renamed into place: rename(2) replaces a name, it never writes through it.
  const write = (file: string, text: string) => fs.renameSync(writeTemp(file, text), file);
  for (const c of bundle.components) {
    const rel = path.join(c.kind, componentFileName(c.key, c.media_type));
    fs.mkdirSync(path.join(target, c.kind), {recursive: true});
    if (c.content.length > LARGE_STRING) writeInPieces(path.join(target, rel), textPieces(c.content));
    else write(path.join(target, rel), c.content);
    files.push(rel);
  }
  const manifest = path.join(target, 'manifest.json');
  if (bundle.components.some((c) => c.content.length > LARGE_STRING)) writeInPieces(manifest, prettyJsonPieces(bundle));
  else write(manifest, prettyJson(bundle));
  files.push('manifest.json');
  return files;
}

/** Bundles materialized for one evaluation run, in a private temporary folder, and how to remove them. */
export interface MaterializedBundles {
  /** The folder of each bundle, by digest. */
  dirs: Record<string, string>;
  remove(): void;
}

/**
 * Materialize the bundles an evaluator reads (bundle_dir) into a fresh
 * temporary folder. The caller removes it when the run ends, whatever its
 * outcome; a folder is removed also when materializing fails half way.
 */
export function materializeForEvaluation(bundles: readonly ContextBundle[]): MaterializedBundles {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-bundles-'));
  const remove = () => fs.rmSync(root, {recursive: true, force: true});
  try {
    const dirs: Record<string, string> = {};
    for (const b of bundles) {
      dirs[b.digest] = path.join(root, b.digest);
      materializeBundle(b, dirs[b.digest]!);
    }
    return {dirs, remove};
  } catch (error) {
    remove();
    throw error;
  }
}
