import type {Hook} from '@oclif/core/hooks';
import {distance} from 'fastest-levenshtein';
import {canonicalJson} from '../../canonical/index.js';
import {AutoctxError} from '../../errors.js';
import {errorEnvelope} from '../base-command.js';

/** The closest command to what was typed, when it is close enough to be a slip (an edit for every three letters). */
export function nearestCommand(typed: string, commands: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of commands) {
    const d = distance(typed, c);
    if (d < bestDistance || (d === bestDistance && best !== null && c < best)) [best, bestDistance] = [c, d];
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(typed.length / 3)) ? best : null;
}

/**
 * An unknown command is a usage error: one line on stderr (or the JSON error
 * envelope on stdout under --json) and exit 2, with the nearest command as a
 * suggestion when there is one. Nothing is suggested-and-run, nothing prompts.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  // oclif joins the words after a topic into the id: the command is the topics, then one word.
  const words = options.id.split(':');
  let n = 1;
  while (n < words.length && this.config.findTopic(words.slice(0, n).join(':'))) n++;
  const spoken = words.slice(0, n).join(' ');
  const known = this.config.commands.filter((c) => !c.hidden).map((c) => c.id.split(':').join(' '));
  const suggestion = nearestCommand(spoken, known);
  const hint = suggestion ? `; did you mean "${suggestion}"?` : '';
  const error = new AutoctxError(
    'UNKNOWN_COMMAND',
    `"${spoken}" is not an autoctx command${hint} (see autoctx --help)`,
    {command: spoken, ...(suggestion ? {suggestion} : {})},
  );
  process.exitCode = error.exitCode;
  if ((options.argv ?? []).includes('--json')) process.stdout.write(`${canonicalJson(errorEnvelope(error))}\n`);
  else process.stderr.write(`error ${error.code}: ${error.message}\n`);
};

export default hook;
