import {spawnSync} from 'node:child_process';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

interface Run {
  mode: 'full' | 'read-only';
  command: string;
  step?: number;
  status: number;
  changed: boolean;
  json: {
    status: string;
    error?: {code: string; exit_code: number; message: string; data?: {file?: string; errno?: string}};
  };
}

/**
 * A full file system and a read-only one, each a real mount (a small tmpfs)
 * in a private mount namespace that `unshare --user --map-root-user --mount`
 * makes, so the test needs no privileges of its own and leaves no mount behind.
 */
function runDriver(): Run[] {
  const mountPoint = tempDir('autoctx-mnt-');
  const r = spawnSync(
    'unshare',
    [
      '--user',
      '--map-root-user',
      '--mount',
      process.execPath,
      path.join(PROJECT_ROOT, 'test/environment/refusing-fs.js'),
      PROJECT_ROOT,
      mountPoint,
    ],
    {encoding: 'utf8', timeout: 240_000},
  );
  if (r.status !== 0)
    throw new Error(`the mount-namespace driver failed (exit ${r.status}): ${r.error?.message ?? ''}${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Run);
}

describe('the environment refuses: exit 9, the path named, nothing changed', () => {
  const runs = runDriver();

  it(
    'on a full file system every refused write of propose, reject and epoch rollover ' +
      'is exit 9 and leaves the tree as it was; with room, the command goes through',
    () => {
      for (const command of ['propose', 'reject', 'epoch rollover']) {
        const mine = runs.filter((r) => r.mode === 'full' && r.command.startsWith(command));
        const refused = mine.filter((r) => r.status === 9);
        expect([command, refused.length]).toEqual([command, expect.any(Number)]);
        expect([command, refused.length > 0]).toEqual([command, true]);
        for (const r of refused) {
          expect([command, r.step, r.json.error?.code, r.json.error?.exit_code, r.changed]).toEqual([
            command,
            r.step,
            'NO_SPACE',
            9,
            false,
          ]);
          expect(r.json.error?.data?.file).toEqual(expect.any(String));
          expect(r.json.error?.message).toContain(r.json.error!.data!.file!);
        }
        expect([command, mine.at(-1)!.status]).toEqual([command, 0]);
      }
      // Several different writes were the refused one.
      const where = new Set(
        runs.filter((r) => r.status === 9 && r.mode === 'full').map((r) => r.json.error?.data?.file),
      );
      expect(where.size).toBeGreaterThanOrEqual(3);
    },
  );

  it(
    'on a read-only file system every writing command is exit 9 naming ' +
      'the path, nothing changes, and verify still reads the tree',
    () => {
      const mine = runs.filter((r) => r.mode === 'read-only' && r.command !== 'verify');
      expect(mine.map((r) => r.command)).toEqual([
        'propose --from',
        expect.stringMatching(/^reject /),
        'rollback --rationale',
        'epoch rollover',
        'repair',
        'init --scenario',
      ]);
      for (const r of mine) {
        expect([r.command, r.status, r.json.error?.code, r.changed]).toEqual([r.command, 9, 'READ_ONLY_FS', false]);
        expect(r.json.error?.message).toContain(r.json.error!.data!.file!);
      }
      const verify = runs.find((r) => r.command === 'verify')!;
      expect(verify.status).toBe(0);
    },
  );
});
