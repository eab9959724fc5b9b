import fs from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';

/**
 * Write a file the user asked for outside the knowledge root (plan export's
 * --out): whole or not at all, through write-file-atomic. Its folder must exist.
 */
/** Refuse an output path whose folder does not exist or is not a folder, before anything is written anywhere. */
export function assertOutputFolder(file: string): void {
  const dir = path.dirname(path.resolve(file));
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    fail('INPUT_NOT_FOUND', `cannot write ${file}: its folder ${dir} does not exist`, {file});
  }
  if (!st.isDirectory()) fail('INVALID_INPUT', `cannot write ${file}: ${dir} is not a folder`, {file});
}

/**
 * A folder the user named for outputs (report --out DIR): created, with its missing parents, when it does not exist
 * yet, as `mkdir -p` would; refused when it, or a parent, is not a folder. Nothing is created on a refusal.
 */
export function ensureOutputFolder(dir: string): void {
  const resolved = path.resolve(dir);
  let existing = resolved;
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  if (!fs.statSync(existing).isDirectory())
    fail('INVALID_INPUT', `cannot write into ${dir}: ${existing} is not a folder`, {file: dir});
  if (existing !== resolved) fs.mkdirSync(resolved, {recursive: true});
}

export function writeOutputFile(file: string, text: string): void {
  assertOutputFolder(file);
  writeFileAtomic.sync(file, text, {encoding: 'utf8'});
}
