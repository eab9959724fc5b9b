import {paint} from './style.js';

/** A unified diff for people, coloured as git colours it (on a terminal); "nothing to change" when it is empty. */
export function dryRunLines(patch: string): string[] {
  if (patch === '') return ['nothing to change'];
  return patch
    .trimEnd()
    .split('\n')
    .map((line) =>
      line.startsWith('+') && !line.startsWith('+++')
        ? paint.green(line)
        : line.startsWith('-') && !line.startsWith('---')
          ? paint.red(line)
          : line.startsWith('@@')
            ? paint.cyan(line)
            : line,
    );
}
