import type {Hook} from '@oclif/core/hooks';
import {canonicalJson} from '../../canonical/index.js';
import {AutoctxError} from '../../errors.js';
import {errorEnvelope} from '../base-command.js';

/**
 * An unknown command is a usage error: one line on stderr (or the JSON error
 * envelope on stdout under --json) and exit 2. Nothing is suggested-and-run,
 * nothing prompts.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  // oclif joins the words after a topic into the id: the command is the topics, then one word.
  const words = options.id.split(':');
  let n = 1;
  while (n < words.length && this.config.findTopic(words.slice(0, n).join(':'))) n++;
  const spoken = words.slice(0, n).join(' ');
  const error = new AutoctxError('UNKNOWN_COMMAND', `"${spoken}" is not an autoctx command (see autoctx --help)`, {command: spoken});
  process.exitCode = error.exitCode;
  if ((options.argv ?? []).includes('--json')) process.stdout.write(`${canonicalJson(errorEnvelope(error) as never)}\n`);
  else process.stderr.write(`error ${error.code}: ${error.message}\n`);
};

export default hook;
