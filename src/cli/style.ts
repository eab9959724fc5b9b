/**
 * Colour for people: only on a terminal, never with NO_COLOR (chalk 5 ignores
 * it, so it is checked here as well as in bin/run.js), and never in --json
 * mode. chalk is loaded only when colour will be used.
 */
type Paint = (s: string) => string;
const plain: Paint = (s) => s;

/** Colour for what goes to stdout (results). */
export const paint = {bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain};
/** Colour for what goes to stderr (errors, the evaluator's stderr): decided by stderr's own terminal, not stdout's. */
export const paintErr = {bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain};

/** Colour the paints of one stream when that stream is a terminal (and NO_COLOR is unset). */
export async function enableColour(
  stream: NodeJS.WriteStream,
  target: typeof paint = stream === process.stderr ? paintErr : paint,
): Promise<void> {
  if (process.env.NO_COLOR || !stream.isTTY || process.env.TERM === 'dumb') return;
  const {default: chalk} = await import('chalk');
  if (chalk.level === 0) return;
  Object.assign(target, {
    bold: chalk.bold,
    dim: chalk.dim,
    red: chalk.red,
    green: chalk.green,
    yellow: chalk.yellow,
    cyan: chalk.cyan,
  });
}

/** Digests are long; people read the first 12 characters. */
export function short(digest: string | null | undefined): string {
  return digest ? digest.slice(0, 12) : '-';
}
