import fs from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';
import {notAFolder} from './user-config.js';

/**
 * Files outside the knowledge tree that autoctx edits for people: the agent
 * hosts' hook settings (.claude/settings.local.json, .codex/hooks.json, the
 * user's own) and autoctx's per-user configuration. Read whole, written
 * atomically; the caller keeps everything it did not change byte for byte.
 */
export function readConfigText(file: string): string | null {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') notAFolder(file);
    throw error;
  }
  if (!st.isFile()) fail('CONFIG_INVALID', `${file} is not a regular file (a link is not edited through)`, {file});
  return fs.readFileSync(file, 'utf8');
}

/** Write a file atomically, its folder made first (0700 for autoctx's own configuration). */
export function writeConfigText(file: string, text: string, options: {private?: boolean} = {}): void {
  try {
    fs.mkdirSync(path.dirname(file), {recursive: true, ...(options.private ? {mode: 0o700} : {})});
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      notAFolder(file);
    throw error;
  }
  writeFileAtomic.sync(file, text, {fsync: true, ...(options.private ? {mode: 0o600} : {})});
}

/** Remove a file autoctx created and has emptied again (gone already: nothing to do). */
export function removeConfigFile(file: string): void {
  fs.rmSync(file, {force: true});
}

/** Whether a path is an existing regular file (a hook command's node and entry point). */
export function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
}
