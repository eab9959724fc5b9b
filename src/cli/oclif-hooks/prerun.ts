import path from 'node:path';
import type {Hook} from '@oclif/core/hooks';
import {isFile} from '../../store/io/config-files.js';

/** The shells whose completion script sources a setup file from the completion cache. */
const SETUP_SHELLS = new Set(['bash', 'zsh']);

/**
 * `autocomplete script SHELL` prints a line that sources the completion cache's setup file, and does nothing when the
 * file is missing: the cache is built first when it is (as `autocomplete` alone builds it), so that the printed line
 * completes on its own. The build writes only into oclif's cache folder and prints nothing.
 */
const hook: Hook.Prerun = async (options) => {
  if (options.Command.id !== 'autocomplete:script') return;
  const shell = options.argv.find((a) => !a.startsWith('-')) ?? path.basename(options.config.shell);
  if (!SETUP_SHELLS.has(shell)) return;
  if (isFile(path.join(options.config.cacheDir, 'autocomplete', `${shell}_setup`))) return;
  // As `autocomplete` runs it (config.runCommand would warn that the command parses no arguments).
  const create = await options.config.findCommand('autocomplete:create')?.load();
  if (create) await create.run([], options.config);
};

export default hook;
