import * as Flags from '@oclif/core/flags';
import {fail} from '../errors.js';
import type {HookLocation} from '../core/delivery/hook-install.js';

/** --host, and exactly one of --project DIR or --user: where a hook is registered. */
export const hostFlag = Flags.string({summary: 'The agent host.', required: true, options: ['claude-code', 'codex']});
export const locationFlags = {
  project: Flags.string({
    summary: 'The project folder (absolute, or relative to here).',
    helpValue: 'DIR',
    exclusive: ['user'],
  }),
  user: Flags.boolean({
    summary: 'For every project of this user (the user-level settings of the host).',
    exclusive: ['project'],
  }),
};

export function locationOf(
  flags: {project?: string | undefined; user?: boolean | undefined},
  cwd = process.cwd(),
): HookLocation {
  if (flags.project !== undefined) {
    if (flags.project.trim() === '') fail('USAGE', '--project must name a folder');
    return {
      project: flags.project.startsWith('/')
        ? flags.project.replace(/\/+$/, '') || '/'
        : `${cwd.replace(/\/+$/, '')}/${flags.project}`.replace(/\/+$/, ''),
    };
  }
  if (flags.user === true) return {user: true};
  fail('USAGE', 'name where: --project DIR or --user');
}
