import type {Hook} from '@oclif/core/hooks';
import {canonicalJson} from '../../canonical/index.js';
import {AutoctxError} from '../../errors.js';
import {errorEnvelope} from '../base-command.js';
import {nearest, unexpectedArgumentsLine} from '../usage-errors.js';

/** The closest command to what was typed, when it is close enough to be a slip (an edit for every three letters). */
export function nearestCommand(typed: string, commands: readonly string[]): string | null {
  return nearest(typed, commands);
}

/** What the words oclif could not resolve are: a command given words it does not take, or a slip of a name. */
function diagnose(
  words: readonly string[],
  commands: readonly string[],
  topics: readonly string[],
): AutoctxError | null {
  for (let k = words.length; k >= 1; k--) {
    const typed = words.slice(0, k).join(' ');
    if (commands.includes(typed))
      return new AutoctxError('USAGE', unexpectedArgumentsLine(typed, words.slice(k)), {
        command: typed,
        arguments: words.slice(k),
      });
    // Names of as many words as were typed: `releas list` is a slip of `release list`, `releas` of the topic.
    const suggestion = nearest(
      typed,
      [...commands, ...topics].filter((c) => c.split(' ').length === k),
    );
    if (suggestion)
      return new AutoctxError(
        'UNKNOWN_COMMAND',
        `"${typed}" is not an autoctx command; did you mean "${suggestion}"? (see autoctx --help)`,
        {command: typed, suggestion},
      );
  }
  return null;
}

/**
 * An unknown command is a usage error: one line on stderr (or the JSON error
 * envelope on stdout under --json) and exit 2, with the nearest command (or
 * topic) as a suggestion when there is one. Nothing is suggested-and-run,
 * nothing prompts. A command followed by words it takes none of (oclif reads
 * them as part of the name) is told so.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  // oclif joins the words after a topic into the id: the command is the topics, then one word.
  const words = options.id.split(':');
  const commands = this.config.commands.filter((c) => !c.hidden).map((c) => c.id.split(':').join(' '));
  const topics = this.config.topics.filter((t) => !t.hidden).map((t) => t.name.split(':').join(' '));
  let n = 1;
  while (n < words.length && this.config.findTopic(words.slice(0, n).join(':'))) n++;
  const spoken = words.slice(0, n).join(' ');
  const error =
    diagnose(words, commands, topics) ??
    new AutoctxError('UNKNOWN_COMMAND', `"${spoken}" is not an autoctx command (see autoctx --help)`, {
      command: spoken,
    });
  process.exitCode = error.exitCode;
  if ((options.argv ?? []).includes('--json')) process.stdout.write(`${canonicalJson(errorEnvelope(error))}\n`);
  else process.stderr.write(`error ${error.code}: ${error.message}\n`);
};

export default hook;
