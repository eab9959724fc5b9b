import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {ERROR_CODES, EXIT, RESULT_EXIT, RESULT_EXIT_BY_COMMAND} from '../../src/errors.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {expectSnapshotFile} from '../helpers/snapshot-file.js';

/**
 * Every command, its arguments, its flags and the exit codes it documents, against the committed
 * snapshot test/architecture/commands.snapshot.json: adding, removing or changing a command, a flag
 * (name, type, default, whether it is required) or an exit code is a visible diff in review.
 * The commands come from oclif.manifest.json, which `npm run build` writes from the compiled commands;
 * exit codes are the tables in src/errors.ts (exit codes, error codes, result statuses and each
 * command's own) and the words of each command's description and flags, which name the rest.
 *
 * To change them deliberately: `npm run build`, then
 *   AUTOCTX_UPDATE_SNAPSHOTS=1 NODE_OPTIONS=--experimental-vm-modules npx jest test/architecture/commands.test.ts
 * and commit the snapshot's diff with the change.
 */
const SNAPSHOT = path.join(PROJECT_ROOT, 'test/architecture/commands.snapshot.json');

type Entry = Record<string, unknown>;

/** An object with its keys sorted and its undefined values left out. */
function sorted(value: Entry): Entry {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

function commandSurface(): Entry {
  const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, Entry>;
  };
  const commands: Entry = {};
  for (const id of Object.keys(manifest.commands).sort()) {
    const c = manifest.commands[id]!;
    const flags = (c.flags ?? {}) as Record<string, Entry>;
    const args = (c.args ?? {}) as Record<string, Entry>;
    commands[id.replaceAll(':', ' ')] = sorted({
      summary: c.summary,
      description: c.description,
      aliases: c.aliases,
      hidden: c.hidden,
      args: sorted(
        Object.fromEntries(Object.entries(args).map(([name, a]) => [name, sorted({...a, name: undefined})])),
      ),
      flags: sorted(
        Object.fromEntries(
          Object.entries(flags).map(([name, f]) => [name, sorted({...f, name: undefined, hasDynamicHelp: undefined})]),
        ),
      ),
      result_exit_codes: RESULT_EXIT_BY_COMMAND[id.replaceAll(':', ' ')] ?? RESULT_EXIT_BY_COMMAND[id],
    });
  }
  return {exit_codes: EXIT, error_codes: sorted(ERROR_CODES), result_exit_codes: sorted(RESULT_EXIT), commands};
}

describe('the command surface', () => {
  it('is exactly the committed snapshot: commands, arguments, flags and exit codes', () => {
    expectSnapshotFile(SNAPSHOT, commandSurface());
  });

  it('reads the commands from the build (a command the manifest lacks would go unseen)', () => {
    const surface = commandSurface() as {commands: Record<string, {flags: Record<string, unknown>}>};
    expect(Object.keys(surface.commands).length).toBeGreaterThan(50);
    expect(Object.keys(surface.commands.promote!.flags)).toEqual(
      expect.arrayContaining(['json', 'knowledge', 'scenario']),
    );
  });
});
