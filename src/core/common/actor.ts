import {spawnSync} from 'node:child_process';
import os from 'node:os';
import {fail, isSystemError, isAutoctxError, rethrowUnless} from '../../errors.js';

/**
 * Who a recorded change names: --actor, else $AUTOCTX_ACTOR, else the git
 * user of the knowledge root (user.email, else user.name), else the login
 * name. One line of printable text; it is recorded, not authenticated (keys
 * give approvals their teeth; ARCHITECTURE §10.3).
 */
export function resolveActor(given: string | undefined, cwd: string): string {
  const explicit = given ?? process.env.AUTOCTX_ACTOR;
  if (explicit !== undefined) return checkActor(explicit);
  for (const key of ['user.email', 'user.name']) {
    const r = spawnSync('git', ['config', '--get', key], {
      cwd,
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const value = r.status === 0 ? r.stdout.trim() : '';
    if (value !== '') return checkActor(value);
  }
  try {
    return checkActor(os.userInfo().username);
  } catch (error) {
    rethrowUnless(error, isSystemError, isAutoctxError);
    return 'unknown';
  }
}

export function checkActor(actor: string): string {
  const a = actor.trim();
  if (a === '' || a.length > 200 || /[\u0000-\u001f\u007f]/.test(a))
    fail('USAGE', `--actor must be one line of at most 200 characters, not ${JSON.stringify(actor.slice(0, 40))}`);
  return a;
}

/**
 * The one actor of a command, for every change it records, those it makes on
 * its own included (a release it ends): in a signed tree the principal its
 * key signs as (its --actor, checked against the key, else the key's first
 * principal), else its --actor, else resolveActor's default. Resolved once,
 * when first needed.
 */
export function commandActor(
  store: {chainActor: string | null; paths: {dir: string}},
  given: string | undefined,
): () => string {
  let value: string | undefined;
  return () => (value ??= store.chainActor ?? resolveActor(given, store.paths.dir));
}
