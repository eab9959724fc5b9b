/**
 * Colour for people: only on a terminal, never with NO_COLOR (chalk 5 ignores
 * it, so it is checked here as well as in bin/run.js), and never in --json
 * mode. chalk is loaded only when colour will be used.
 */
type Paint = (s: string) => string;
const plain: Paint = (s) => s;

export const paint = {bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain};

export async function enableColour(stream: NodeJS.WriteStream): Promise<void> {
  if (process.env.NO_COLOR || !stream.isTTY || process.env.TERM === 'dumb') return;
  const {default: chalk} = await import('chalk');
  if (chalk.level === 0) return;
  Object.assign(paint, {bold: chalk.bold, dim: chalk.dim, red: chalk.red, green: chalk.green, yellow: chalk.yellow, cyan: chalk.cyan});
}

/** Digests are long; people read the first 12 characters. */
export function short(digest: string | null | undefined): string {
  return digest ? digest.slice(0, 12) : '-';
}
