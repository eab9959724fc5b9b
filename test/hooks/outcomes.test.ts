import {describe, expect, it} from '@jest/globals';
import {AutoctxError} from '../../src/errors.js';
import {HookInputError} from '../../src/hooks/host-io.js';
import {outcomeOfError} from '../../src/hooks/run.js';

/** A system error as Node raises it. */
function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: refused, open '/k/.state/x'`), {code, path: '/k/.state/x', syscall: 'open'});
}

describe('the outcome a failed hook run reports on stderr', () => {
  it('names what the machine refused (a person can fix it), never "internal"', () => {
    expect(
      ['EACCES', 'EPERM', 'ENOSPC', 'EDQUOT', 'EROFS', 'EMFILE', 'ENFILE'].map((c) => [c, outcomeOfError(errno(c))]),
    ).toEqual([
      ['EACCES', 'permission_denied'],
      ['EPERM', 'permission_denied'],
      ['ENOSPC', 'no_space'],
      ['EDQUOT', 'no_space'],
      ['EROFS', 'read_only_fs'],
      ['EMFILE', 'too_many_open_files'],
      ['ENFILE', 'too_many_open_files'],
    ]);
    expect(outcomeOfError(new AutoctxError('PERMISSION_DENIED', 'x'))).toBe('permission_denied');
  });

  it('bad host input is invalid_input; typed errors keep their groups; only the unexpected is internal', () => {
    expect(outcomeOfError(new HookInputError('session_id holds a control character'))).toBe('invalid_input');
    expect(outcomeOfError(new AutoctxError('LOCKED', 'x'))).toBe('locked');
    expect(outcomeOfError(new AutoctxError('CONFIG_INVALID', 'x'))).toBe('invalid_config');
    expect(outcomeOfError(new AutoctxError('INTEGRITY', 'x'))).toBe('tree_broken');
    expect(outcomeOfError(errno('ENOTEMPTY'))).toBe('internal');
    expect(outcomeOfError(new TypeError('x is undefined'))).toBe('internal');
  });
});
